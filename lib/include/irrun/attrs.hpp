// Typed reading of a layer's <data> attributes with OpenVINO's AttributeVisitor leniency, and
// warnings wherever OpenVINO silently ignores or rewrites something.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "irrun/ir.hpp"

namespace irrun {

// A problem confined to one layer: `check` reports it and goes on with the other layers.
class LayerError : public std::runtime_error {
 public:
  LayerError(std::string rule, const std::string& message)
      : std::runtime_error(message), rule_(std::move(rule)) {}
  const std::string& rule() const { return rule_; }

 private:
  std::string rule_;
};

class AttrReader {
 public:
  // `op_label` names the op in warnings, e.g. "AvgPool-1".
  AttrReader(const Layer& layer, std::size_t layer_index, std::string op_label,
             Diagnostics& diagnostics);

  bool has(std::string_view key) const;
  // Comma-separated unsigned list (`getParameters`, each field read with `>>`): a trailing comma
  // is ignored, an empty field is an error, "" is an empty list; "+2" is 2 and "-0" is 0, any
  // other negative value (which OpenVINO wraps) an error. Non-numeric or fractional fields are
  // warned about.
  std::vector<std::uint64_t> uint_list(std::string_view key);
  // true/1/false/0, case-insensitive; anything else keeps `fallback` with a warning.
  bool boolean(std::string_view key, bool fallback);
  // Case-insensitive match against `names`; returns the index, or `fallback` when absent.
  // An unknown value throws LayerError naming the enum, as OpenVINO does.
  std::size_t enumeration(std::string_view key, std::span<const std::string_view> names,
                          std::string_view enum_name, std::size_t fallback);
  // Signed integer read like OpenVINO's `>>` (a '+' allowed): a non-numeric value is read as 0 and
  // a trailing non-digit part is dropped, both with a warning; `fallback` when absent.
  std::int64_t int64(std::string_view key, std::int64_t fallback);
  std::optional<std::string> text(std::string_view key);
  // Const offset/size: uint64_attr (ir_reader.hpp), as OpenVINO's get_uint64_attr.
  std::uint64_t mandatory_u64(std::string_view key);

  // Warns about every attribute that was never read: OpenVINO ignores those silently. `known`
  // (the op's attribute names) is used to suggest the intended spelling.
  void finish(std::span<const std::string_view> known);
  // A warning on this layer's <data> (something OpenVINO accepts silently).
  void warn(std::string rule, std::string message);

 private:
  const std::string* take(std::string_view key);

  const Layer& layer_;
  std::size_t index_;
  std::string op_label_;
  Diagnostics& diagnostics_;
  std::set<std::string, std::less<>> used_;
};

}  // namespace irrun
