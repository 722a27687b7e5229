#include "exact_sum.hpp"

#include <limits>

namespace irrun::kernels::detail {

double mean_of(const Superaccumulator& sum, double n) {
  const auto [hi, lo] = sum.split();
  if (std::isfinite(hi)) return mean_of(hi, lo, n);
  constexpr int kScale = Superaccumulator::kMaxShift;
  const auto scaled = sum.split(kScale);
  return std::ldexp(mean_of(scaled.hi, scaled.lo, n), kScale);
}

void Specials::add(double x) {
  if (!std::isnan(x)) {
    (x > 0 ? pos_inf_ : neg_inf_) = true;
  } else if (!nan_) {
    nan_ = true;
    first_nan_ = x;
  }
}

double Specials::value() const {
  if (nan_) return first_nan_;
  if (pos_inf_ && neg_inf_) return std::numeric_limits<double>::quiet_NaN();
  return pos_inf_ ? std::numeric_limits<double>::infinity()
                  : -std::numeric_limits<double>::infinity();
}

}  // namespace irrun::kernels::detail
