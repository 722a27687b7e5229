#include "irrun/attrs.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <span>

#include "irrun/ir_reader.hpp"

namespace irrun {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// Spelling used to suggest the intended attribute: `exclude_pad` -> `exclude-pad`.
std::string loose(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != '_' && c != '-') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

}  // namespace

AttrReader::AttrReader(const Layer& layer, std::size_t layer_index, std::string op_label,
                       Diagnostics& diagnostics)
    : layer_(layer),
      index_(layer_index),
      op_label_(std::move(op_label)),
      diagnostics_(diagnostics) {}

bool AttrReader::has(std::string_view key) const {
  return layer_.attribute(key) != nullptr;
}

const std::string* AttrReader::take(std::string_view key) {
  const auto* value = layer_.attribute(key);
  if (value) used_.emplace(key);
  return value;
}

void AttrReader::warn(std::string rule, std::string message) {
  Diagnostic d;
  d.severity = Severity::warning;
  d.rule = std::move(rule);
  d.layer = index_;
  d.message = std::move(message);
  d.line = layer_.data_line ? layer_.data_line : layer_.line;
  diagnostics_.push_back(std::move(d));
}

std::vector<std::uint64_t> AttrReader::uint_list(std::string_view key) {
  std::vector<std::uint64_t> values;
  const auto* value = take(key);
  if (!value || value->empty()) return values;
  std::string_view rest = *value;
  while (true) {
    const auto comma = rest.find(',');
    const auto raw = rest.substr(0, comma);
    const auto field = trim(raw);
    const bool last = comma == std::string_view::npos;
    if (field.empty()) {
      if (last && !values.empty()) break;  // trailing comma
      throw LayerError("bad-attribute", "attribute '" + std::string(key) +
                                            "': Cannot get vector "
                                            "of parameters! \"" +
                                            *value + "\" is incorrect");
    }
    // `>>` takes one sign: "+2" is 2, "-0" is 0, and any other negative value wraps.
    const bool negative = field.front() == '-';
    const auto digits = field.substr(field.front() == '+' || negative ? 1 : 0);
    std::uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), v);
    if (ec == std::errc::result_out_of_range)
      throw LayerError("bad-attribute", "attribute '" + std::string(key) + "' = \"" + *value +
                                            "\": value " + std::string(field) + " is too large");
    if (negative && ec == std::errc() && v != 0)
      throw LayerError("bad-attribute", "attribute '" + std::string(key) + "' = \"" + *value +
                                            "\": negative value " +
                                            std::string(field.substr(0, ptr - field.data())) +
                                            " in an unsigned list (OpenVINO wraps it to " +
                                            std::to_string(0 - v) + ")");
    if (ec != std::errc() || ptr != digits.data() + digits.size()) {
      if (ec != std::errc()) v = 0;
      warn("bad-number", "attribute '" + std::string(key) + "' = \"" + *value + "\": field '" +
                             std::string(field) + "' is read by OpenVINO as " + std::to_string(v));
    }
    values.push_back(v);
    if (last) break;
    rest = rest.substr(comma + 1);
  }
  return values;
}

bool AttrReader::boolean(std::string_view key, bool fallback) {
  const auto* value = take(key);
  if (!value) return fallback;
  const auto v = lower(*value);
  if (v == "true" || v == "1") return true;
  if (v == "false" || v == "0") return false;
  warn("bad-bool", "attribute '" + std::string(key) + "' = \"" + *value +
                       "\" is not a boolean; OpenVINO ignores it and keeps the default " +
                       (fallback ? "true" : "false"));
  return fallback;
}

std::size_t AttrReader::enumeration(std::string_view key, std::span<const std::string_view> names,
                                    std::string_view enum_name, std::size_t fallback) {
  const auto* value = take(key);
  if (!value) return fallback;
  const auto v = lower(*value);
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (v == names[i]) return i;
  }
  std::string expected;
  for (auto n : names) expected += (expected.empty() ? "" : ", ") + std::string(n);
  throw LayerError("bad-attribute", "attribute '" + std::string(key) + "': \"" + *value +
                                        "\" is not a member of enum " + std::string(enum_name) +
                                        " (expected one of: " + expected + ")");
}

std::int64_t AttrReader::int64(std::string_view key, std::int64_t fallback) {
  const auto* value = take(key);
  if (!value) return fallback;
  auto t = trim(*value);
  // `>>` takes a '+' too; from_chars only a '-'.
  if (t.size() > 1 && t[0] == '+' && t[1] != '-') t.remove_prefix(1);
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec == std::errc::result_out_of_range)
    throw LayerError("bad-attribute", "attribute '" + std::string(key) + "' = \"" + *value +
                                          "\" is out of the 64-bit range");
  if (ec != std::errc() || ptr != t.data() + t.size()) {
    if (ec != std::errc()) v = 0;
    warn("bad-number", "attribute '" + std::string(key) + "' = \"" + *value +
                           "\" is read by OpenVINO as " + std::to_string(v));
  }
  return v;
}

std::optional<std::string> AttrReader::text(std::string_view key) {
  const auto* value = take(key);
  if (!value) return std::nullopt;
  return *value;
}

std::uint64_t AttrReader::mandatory_u64(std::string_view key) {
  const auto* value = take(key);
  if (!value)
    throw LayerError("bad-attribute", "missing mandatory attribute '" + std::string(key) + "'");
  const auto v = uint64_attr(*value);
  if (!v)
    throw LayerError("bad-attribute", "attribute '" + std::string(key) + "' = \"" + *value +
                                          "\" is not a non-negative integer");
  return *v;
}

void AttrReader::finish(std::span<const std::string_view> known) {
  for (const auto& [key, value] : layer_.data) {
    if (used_.count(key)) continue;
    std::string hint;
    for (auto name : known) {
      if (loose(name) == loose(key)) hint = " (did you mean '" + std::string(name) + "'?)";
    }
    warn("unknown-attribute", "attribute '" + key + "' is not an attribute of " + op_label_ +
                                  "; OpenVINO ignores it" + hint);
  }
}

}  // namespace irrun
