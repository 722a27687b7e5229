// Problems and warnings found in a model, with enough structure for text, JSON and JUnit reports.
// Part of the public API (see irrun/irrun.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

// Public API: exported from a shared libirrun, whose other symbols are hidden.
#pragma GCC visibility push(default)
namespace irrun {

enum class Severity { warning, error };

struct Diagnostic {
  Severity severity = Severity::error;
  std::string rule;  // stable id: "dim-mismatch", "validation", "unknown-attribute"...
  std::optional<std::size_t> layer;  // index into IrModel::layers (the n-th <layer> in the file)
  std::string port;                  // "output port 3", "edge 3:2 -> 5:0", or empty
  std::string declared;              // for mismatches: what the file says
  std::string inferred;              // for mismatches: what shape inference says
  std::string producer_declared;     // edge-mismatch: what the producer's output port says
  std::string message;               // the rule broken, in words
  std::size_t line = 0;              // line in the XML file, 0 when unknown
};

using Diagnostics = std::vector<Diagnostic>;

}  // namespace irrun
#pragma GCC visibility pop
