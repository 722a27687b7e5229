#include "irrun/dim.hpp"

#include <algorithm>
#include <charconv>
#include <stdexcept>

namespace irrun {
namespace {

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  const auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

// Digits only, fitting an int64.
std::optional<std::int64_t> parse_digits(std::string_view s) {
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  std::int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

std::int64_t clip_add(std::int64_t a, std::int64_t b) {
  if (a == kInf || b == kInf) return kInf;
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r) || r == kInf) return kInf;
  return std::max<std::int64_t>(r, 0);
}

std::int64_t clip_sub(std::int64_t a, std::int64_t b) {
  if (a <= b) return 0;
  if (a == kInf) return kInf;
  return a - b;
}

}  // namespace

std::string to_string(const Dim& d) {
  if (d.is_static()) return std::to_string(d.min);
  if (d.min > 0) return std::to_string(d.min) + ".." + (d.max == kInf ? "" : std::to_string(d.max));
  if (d.max != kInf) return ".." + std::to_string(d.max);
  return "?";
}

Dim operator+(const Dim& d, std::int64_t v) {
  return {clip_add(d.min, v), clip_add(d.max, v)};
}
Dim operator-(const Dim& d, std::int64_t v) {
  return {clip_sub(d.min, v), clip_sub(d.max, v)};
}

Dim floor_div(const Dim& d, std::int64_t divisor) {
  return {d.min / divisor, d.max == kInf ? kInf : d.max / divisor};
}

Dim ceil_div(const Dim& d, std::int64_t divisor) {
  auto up = [divisor](std::int64_t v) { return v / divisor + (v % divisor != 0 ? 1 : 0); };
  return {up(d.min), d.max == kInf ? kInf : up(d.max)};
}

PartialShape PartialShape::from_static(const std::vector<std::int64_t>& values) {
  std::vector<Dim> dims;
  dims.reserve(values.size());
  for (auto v : values) dims.push_back(Dim::fixed(v));
  return PartialShape(std::move(dims));
}

PartialShape PartialShape::from_ir_dims(const std::vector<std::int64_t>& values) {
  std::vector<Dim> dims;
  dims.reserve(values.size());
  for (auto v : values) dims.push_back(v < 0 ? Dim::dynamic() : Dim::fixed(v));
  return PartialShape(std::move(dims));
}

bool PartialShape::is_static() const {
  return dims &&
         std::all_of(dims->begin(), dims->end(), [](const Dim& d) { return d.is_static(); });
}

std::vector<std::int64_t> PartialShape::to_static() const {
  std::vector<std::int64_t> out;
  if (dims) {
    for (const auto& d : *dims) out.push_back(d.min);
  }
  return out;
}

std::string to_string(const PartialShape& s) {
  if (!s.dims) return "[...]";
  std::string out = "[";
  for (std::size_t i = 0; i < s.dims->size(); ++i) {
    if (i) out += ',';
    out += to_string((*s.dims)[i]);
  }
  return out + "]";
}

std::string to_string(const std::vector<std::int64_t>& static_shape) {
  return to_string(PartialShape::from_static(static_shape));
}

Dim parse_dim(std::string_view text) {
  const auto val = trim(text);
  if (val == "?" || val == "-1") return Dim::dynamic();
  const auto dots = val.find("..");
  if (dots == std::string_view::npos) {
    auto v = parse_digits(val);
    if (!v) throw std::invalid_argument("Cannot parse dimension: \"" + std::string(val) + "\"");
    return Dim::fixed(*v);
  }
  const auto lo_text = trim(val.substr(0, dots));
  const auto hi_text = trim(val.substr(dots + 2));
  std::int64_t lo = 0, hi = kInf;
  if (!lo_text.empty()) {
    auto v = parse_digits(lo_text);
    if (!v) throw std::invalid_argument("Cannot parse min bound: \"" + std::string(lo_text) + "\"");
    lo = *v;
  }
  if (!hi_text.empty()) {
    auto v = parse_digits(hi_text);
    if (!v) throw std::invalid_argument("Cannot parse max bound: \"" + std::string(hi_text) + "\"");
    hi = *v;
  }
  // OpenVINO turns an inverted interval into an empty one; nothing good comes of that.
  if (lo > hi)
    throw std::invalid_argument("Cannot parse dimension: \"" + std::string(val) +
                                "\" (min bound greater than max bound)");
  return Dim::interval(lo, hi);
}

PartialShape parse_partial_shape(std::string_view text) {
  auto val = trim(text);
  if (val.size() >= 2 && val.front() == '[' && val.back() == ']')
    val = trim(val.substr(1, val.size() - 2));
  if (val == "...") return PartialShape::dynamic_rank();
  std::vector<Dim> dims;
  if (val.empty()) return PartialShape(std::move(dims));
  std::size_t pos = 0;
  while (true) {
    const auto comma = val.find(',', pos);
    const auto field = val.substr(pos, comma == std::string_view::npos ? val.npos : comma - pos);
    // A trailing comma ends the list (OpenVINO splits with getline); other empty fields fail.
    if (comma == std::string_view::npos && field.empty() && !dims.empty()) break;
    if (trim(field).empty())
      throw std::invalid_argument("Cannot get vector of dimensions! \"" + std::string(text) +
                                  "\" is incorrect");
    dims.push_back(parse_dim(field));
    if (comma == std::string_view::npos) break;
    pos = comma + 1;
  }
  return PartialShape(std::move(dims));
}

bool declared_matches(const Dim& declared, const Dim& inferred) {
  if (declared.is_fully_dynamic()) return true;
  if (declared.is_static()) return inferred.contains(declared.min);
  return declared.min <= inferred.min && inferred.max <= declared.max;
}

bool declared_matches(const PartialShape& declared, const PartialShape& inferred) {
  if (!declared.dims || !inferred.dims) return true;
  if (declared.rank() != inferred.rank()) return false;
  for (std::size_t i = 0; i < declared.rank(); ++i) {
    if (!declared_matches(declared[i], inferred[i])) return false;
  }
  return true;
}

bool compatible(const PartialShape& a, const PartialShape& b) {
  if (!a.dims || !b.dims) return true;
  if (a.rank() != b.rank()) return false;
  for (std::size_t i = 0; i < a.rank(); ++i) {
    if (std::max(a[i].min, b[i].min) > std::min(a[i].max, b[i].max)) return false;
  }
  return true;
}

}  // namespace irrun
