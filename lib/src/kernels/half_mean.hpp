// Internal to the 16-bit AvgPool kernels (avg_pool.cpp's reference, avg_pool_half_f32.cpp): a
// window's exact average rounded once to f16 or bf16, where its double (mean_of) could round it
// twice.
#pragma once

#include <cmath>
#include <cstdint>

#include "exact_sum.hpp"
#include "half_formats.hpp"

namespace irrun::kernels::detail {

// The exact sign of (the sum of the values) - b * n, for a finite b: the values replayed into a
// superaccumulator with b * n taken off as exact products (each product's rest by fma).
template <class ForEach>
int sign_of_excess(const ForEach& for_each_value, double b, Divisor n) {
  Superaccumulator sum;
  for_each_value([&](double x) { sum.add(x); });
  for (const double part : {n.hi, n.lo}) {
    const double p = b * part;
    sum.add(-p);
    sum.add(-std::fma(b, part, -p));
  }
  const double s = sum.split().hi;  // the sum rounded: 0 only when it is 0
  return (s > 0) - (s < 0);
}

// The 16-bit value of a = (the sum of the values) / n rounded once (to nearest, ties to even),
// from m, the double mean_of gives for it (within an ulp of a). That is F's rounding of m unless
// one of F's rounding boundaries (a midpoint, or where values round to infinity) lies within two
// of m's ulps; then the values are replayed to tell on which side of it a lies. Without that, an a
// a little above a midpoint whose double is that midpoint rounded to even, the wrong way: bf16
// windows whose values span more exponents than a double holds (2.015625, 0.99609375, 2^-100),
// and f16 ones past 2^13 values. `nearest`: m is the double nearest a, from a sum that is one
// double and a divisor below 2^40, which makes m a boundary only when a is (half_endings.hpp):
// no replay.
template <class F, class ForEach>
std::uint16_t round_mean(double m, bool nearest, const ForEach& for_each_value, Divisor n) {
  const std::uint16_t h = F::from_double(m);
  if (nearest || !std::isfinite(m)) return h;
  const double down = std::nextafter(std::nextafter(m, -INFINITY), -INFINITY);
  const double up = std::nextafter(std::nextafter(m, INFINITY), INFINITY);
  const std::uint16_t h_down = F::from_double(down), h_up = F::from_double(up);
  const double v_down = F::to_double(h_down), v_up = F::to_double(h_up);
  if (v_down == v_up) return h;  // no boundary in between (+0 and -0 included)
  // The boundary past the largest finite value f: half f's step beyond it.
  const auto past = [](std::uint16_t f) {
    const double v = F::to_double(f);
    return v + (v - F::to_double(static_cast<std::uint16_t>(f - 1))) / 2;
  };
  const double b = std::isinf(v_up)     ? past(h_down)
                   : std::isinf(v_down) ? past(h_up)
                                        : (v_down + v_up) / 2;
  const int side = sign_of_excess(for_each_value, b, n);
  return side > 0 ? h_up : side < 0 ? h_down : F::from_double(b);
}

// exact_mean's average of the values, rounded once to F.
template <class F, class ForEach>
std::uint16_t exact_mean_as(const ForEach& for_each_value, Divisor n) {
  double hi, lo;
  if (exact_sum(for_each_value, hi, lo)) [[likely]]
    return round_mean<F>(mean_of(hi, lo, n), lo == 0 && n.lo == 0 && n.hi < 0x1p40, for_each_value,
                         n);
  return round_mean<F>(exact_mean_replayed(for_each_value, n), false, for_each_value, n);
}

}  // namespace irrun::kernels::detail
