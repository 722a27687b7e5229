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
  double mean(double n) const {
    // inf/NaN make err_ NaN; they propagate like an ordinary sum would.
    if (!std::isfinite(sum_)) return sum_ / n;
    const double q = sum_ / n;
    const double rem = std::fma(-q, n, sum_);
    return q + (rem + err_) / n;
  }

 private:
  double sum_ = 0.0;
  double err_ = 0.0;
};

}  // namespace irrun::kernels::detail
