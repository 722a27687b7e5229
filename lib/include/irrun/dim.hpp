// Dimensions as OpenVINO sees them: intervals [min, max] with an unbounded max, and shapes whose
// rank may be unknown. Only integer arithmetic; bounds saturate instead of overflowing.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace irrun {

inline constexpr std::int64_t kInf = std::numeric_limits<std::int64_t>::max();

struct Dim {
  std::int64_t min = 0;
  std::int64_t max = kInf;  // kInf: no upper bound

  static constexpr Dim dynamic() { return {}; }
  static constexpr Dim fixed(std::int64_t v) { return {v, v}; }
  static constexpr Dim interval(std::int64_t lo, std::int64_t hi) { return {lo, hi}; }

  constexpr bool is_static() const { return min == max; }
  constexpr bool is_dynamic() const { return !is_static(); }
  constexpr bool is_fully_dynamic() const { return min == 0 && max == kInf; }
  constexpr bool contains(std::int64_t v) const { return v >= min && v <= max; }
  friend constexpr bool operator==(const Dim&, const Dim&) = default;
};

// "3", "?" (fully dynamic), "1..10", "2.." (no upper bound).
std::string to_string(const Dim& d);

// Interval arithmetic as in OpenVINO's Interval: results are clipped at 0 and an unbounded max
// stays unbounded.
Dim operator+(const Dim& d, std::int64_t v);
Dim operator-(const Dim& d, std::int64_t v);
Dim floor_div(const Dim& d, std::int64_t divisor);
Dim ceil_div(const Dim& d, std::int64_t divisor);

// A shape whose rank may be dynamic (nullopt dims).
struct PartialShape {
  std::optional<std::vector<Dim>> dims;

  PartialShape() = default;
  PartialShape(std::vector<Dim> d) : dims(std::move(d)) {}
  static PartialShape dynamic_rank() { return {}; }
  static PartialShape from_static(const std::vector<std::int64_t>& values);
  // IR <dim> values: -1 is a fully dynamic dim.
  static PartialShape from_ir_dims(const std::vector<std::int64_t>& values);

  bool rank_is_static() const { return dims.has_value(); }
  std::size_t rank() const { return dims ? dims->size() : 0; }
  bool is_static() const;
  // Static values; only valid when is_static().
  std::vector<std::int64_t> to_static() const;
  const Dim& operator[](std::size_t i) const { return (*dims)[i]; }
  friend bool operator==(const PartialShape&, const PartialShape&) = default;
};

// "[1,3,?,1..10]"; "[...]" for a dynamic rank.
std::string to_string(const PartialShape& s);
std::string to_string(const std::vector<std::int64_t>& static_shape);

// Parameter `shape` attribute: "1,3,?,1..10", "[1,3,-1,..5]", "..." (dynamic rank), "" (scalar).
// Throws std::invalid_argument with OpenVINO's message on malformed text.
Dim parse_dim(std::string_view text);
PartialShape parse_partial_shape(std::string_view text);

// irrun's declared-vs-inferred rule: a declared dynamic dim matches anything; a declared static
// dim must equal a static inferred dim or lie within an inferred interval.
bool declared_matches(const Dim& declared, const Dim& inferred);
bool declared_matches(const PartialShape& declared, const PartialShape& inferred);

// Two declared shapes of one edge are consistent: same rank and no two different static dims.
bool compatible(const PartialShape& a, const PartialShape& b);

}  // namespace irrun
