// The f32 one-ulp check shared by the fast kernel's tests and fuzz_avg_pool: a result against the
// exact average rounded once to f32.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>

namespace irrun::testing {

// Position on the ordered line of f32 values (+0 and -0 coincide): differences count ulps.
inline std::int64_t f32_ordinal(float v) {
  const auto b = std::bit_cast<std::uint32_t>(v);
  const auto mag = static_cast<std::int64_t>(b & 0x7FFFFFFFu);
  return (b >> 31) ? -mag : mag;
}

// NaN exactly where want is NaN, infinities equal, else within one ulp; where want or got is a
// zero, with want's sign (an exact 0 is +0, as the reference's sums from +0 give it; a tiny
// average keeps its sign, which the one ulp around a zero would not check, and avg_pool_half_f32
// rounds a zero to 16 bits as it is).
inline bool within_one_f32_ulp(float got, float want) {
  if (std::isnan(want) || std::isnan(got)) return std::isnan(want) && std::isnan(got);
  if (std::isinf(want) || std::isinf(got)) return got == want;
  if ((want == 0 || got == 0) && std::signbit(got) != std::signbit(want)) return false;
  return std::abs(f32_ordinal(got) - f32_ordinal(want)) <= 1;
}

}  // namespace irrun::testing
