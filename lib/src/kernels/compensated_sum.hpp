// Internal to the kernels: the compensated (TwoSum) double accumulator shared by the reference
// kernel and the fast kernel's fallback, so both produce the same bits for the same taps.
#pragma once

#include <cmath>

// The compensated sum relies on strict IEEE evaluation order.
#if defined(__FAST_MATH__)
#error "the pooling kernels must not be compiled with -ffast-math"
#endif

namespace irrun::kernels::detail {

// Sum of doubles carried as an unevaluated pair sum + err (TwoSum), so cancellation between
// large values cannot lose the small ones (e.g. 2^60 + 1 - 2^60).
class CompensatedSum {
 public:
  void add(double x) {
    const double t = sum_ + x;
    const double x_part = t - sum_;
    err_ += (sum_ - (t - x_part)) + (x - x_part);
    sum_ = t;
  }

  // (sum + err) / n with a single final rounding: the remainder of the first quotient is exact
  // via fma, so rounding sum + err to a double first does not stack a second rounding error.
  double mean(double n) const { return mean_of(sum_, err_, n); }

  // The same for a pair known otherwise (the f16 kernel's exact sums: err 0).
  static double mean_of(double sum, double err, double n) {
    // inf/NaN make err NaN; they propagate like an ordinary sum would.
    if (!std::isfinite(sum)) return sum / n;
    const double q = sum / n;
    const double rem = std::fma(-q, n, sum);
    return q + (rem + err) / n;
  }

 private:
  double sum_ = 0.0;
  double err_ = 0.0;
};

}  // namespace irrun::kernels::detail
