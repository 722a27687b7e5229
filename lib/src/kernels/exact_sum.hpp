// Internal to the kernels: the exact window sum of the floating-point kernels (the reference
// kernel, the fast kernel's fallback) and the average they round from it.
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>

#include "superaccumulator.hpp"

// The two-double sum relies on strict IEEE evaluation order.
#if defined(__FAST_MATH__)
#error "the pooling kernels must not be compiled with -ffast-math"
#endif

namespace irrun::kernels::detail {

// a + b - t for t = fl(a + b), exactly (Knuth's TwoSum).
inline double two_sum_error(double a, double b, double t) {
  const double b_part = t - a;
  return (a - (t - b_part)) + (b - b_part);
}

// A divisor: a count of taps or a kernel volume, n = hi + lo with hi = n rounded to nearest and
// lo the rest (rounded only past 2^106). A kernel volume (pads_in_avg: prod(kernel), up to
// 2^120) above 2^53 is not a double, and dividing by hi alone left f64 averages ~1.5 ulp off.
// Built from integers only: a double has already lost the rest.
struct Divisor {
  __extension__ typedef __int128 Count;
  double hi = 1, lo = 0;
  Divisor() = default;
  // Implicit: counts convert where divisors are expected (a double does not: no constructor).
  Divisor(Count n) : hi(static_cast<double>(n)), lo(static_cast<double>(n - Count(hi))) {}
  template <std::integral I>
  Divisor(I n) : Divisor(static_cast<Count>(n)) {}
};

// prod(kernel[0..2]) as a divisor: exact up to 2^120 (shape inference bounds each kernel dim by
// 2^40), past that (hand-made geometries only) the product of the doubles.
Divisor volume_divisor(const std::int64_t* kernel);

// (hi + lo) / n with one final rounding, for hi the exact sum rounded to nearest and lo the
// rest: the remainder of the first quotient is exact via fma, so rounding the sum to a double
// first does not stack a second rounding error. The result is within one ulp of the exact
// average. Also the f16 kernel's mean of its exact sums (lo = 0), which so has exact_mean's bits.
// With n.lo != 0 (n > 2^53) the remainder also takes q * n.lo off (rounded, but the correction
// it enters is at most ~1.5 ulp of q, so its error stays far below one ulp).
inline double mean_of(double hi, double lo, Divisor n) {
  if (!std::isfinite(hi)) return hi / n.hi;
  const double q = hi / n.hi;
  const double rem = std::fma(-q, n.hi, hi);
  double r = rem + lo;
  if (n.lo != 0) r = std::fma(-q, n.lo, r);
  return q + r / n.hi;
}

// The same for a sum held by a superaccumulator: its nearest double and rest, scaled down first
// when the sum overflows a double (its average need not).
double mean_of(const Superaccumulator& sum, Divisor n);

// The average of a fixed-order stream of NaN or infinite values: the first NaN, else NaN for
// both infinities, else the infinity.
class Specials {
 public:
  void add(double x);
  bool any() const { return nan_ || pos_inf_ || neg_inf_; }
  double value() const;

 private:
  double first_nan_ = 0.0;
  bool nan_ = false, pos_inf_ = false, neg_inf_ = false;
};

// Replays the stream exactly: infinities and NaNs apart, the finite values in a superaccumulator.
template <class ForEach>
[[gnu::noinline]] double exact_mean_replayed(const ForEach& for_each_value, Divisor n) {
  Specials specials;
  Superaccumulator sum;
  for_each_value([&](double x) {
    if (std::isfinite(x)) {
      sum.add(x);
    } else {
      specials.add(x);
    }
  });
  return specials.any() ? specials.value() / n.hi : mean_of(sum, n);
}

// The exact sum of the values for_each_value(f) passes to f, as hi (rounded to nearest) + lo
// (the rest, exact), where a pair of TwoSums carries it: the sum is carried as sum + err, each
// add a TwoSum (exact) whose error joins err through a second TwoSum, checked to be exact too.
// False when one is not (magnitudes spanning more than ~2^106 with cancellation, e.g. 2^60, 1,
// 2^-60, -1, -2^60), or on an overflow, inf or NaN.
template <class ForEach>
bool exact_sum(const ForEach& for_each_value, double& hi, double& lo) {
  double sum = 0.0, err = 0.0;
  bool exact = true;
  for_each_value([&](double x) {
    const double t = sum + x;
    const double e = two_sum_error(sum, x, t);
    const double u = err + e;
    exact &= two_sum_error(err, e, u) == 0;  // NaN after an overflow, inf or NaN: false
    sum = t;
    err = u;
  });
  hi = sum + err;  // the exact sum rounded to nearest, the rest exact below
  lo = two_sum_error(sum, err, hi);
  return exact && std::isfinite(hi);
}

// The average of the values for_each_value(f) passes to f (the same values each time it is
// called): the exact sum / n, via mean_of. Its bits depend on the exact sum alone, never on the
// order of the values. The sum is exact_sum's, or where that fails, the stream is replayed into
// a superaccumulator (exact_mean_replayed).
template <class ForEach>
double exact_mean(const ForEach& for_each_value, Divisor n) {
  double hi, lo;
  if (exact_sum(for_each_value, hi, lo)) [[likely]]
    return mean_of(hi, lo, n);
  return exact_mean_replayed(for_each_value, n);
}

}  // namespace irrun::kernels::detail
