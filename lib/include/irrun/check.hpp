// `irrun check`: infer every supported layer and compare with the dims the file declares, and
// compare the declared dims at both ends of every edge.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "irrun/analysis.hpp"
#include "irrun/model.hpp"

namespace irrun {

struct CheckOptions {
  bool strict = false;                 // OpenVINO's silent leniencies become errors
  std::optional<std::string> weights;  // --weights
};

struct CheckReport {
  std::string path;
  std::optional<Model> model;        // absent when the file could not be read
  std::vector<std::size_t> checked;  // layers whose outputs were inferred and compared
  Diagnostics diagnostics;           // in file order; warnings already promoted under strict

  std::size_t errors() const;
  std::size_t warnings() const;
  bool passed() const { return errors() == 0; }
};

CheckReport check_file(const std::string& xml_path, const CheckOptions& options);

// check_file's checks on a model already loaded: the diagnostics (reader warnings included) in
// file order; `checked`, when given, receives the layers whose outputs were inferred and compared.
Diagnostics check_model(const Model& model, bool strict,
                        std::vector<std::size_t>* checked = nullptr);

// One line: "<path>:<line>: error: layer 3 'pool' (AvgPool opset1) output port 2: <what> [rule]".
std::string format(const CheckReport& report, const Diagnostic& d);

}  // namespace irrun
