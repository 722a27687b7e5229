#include "exact_sum.hpp"

#include <limits>

namespace irrun::kernels::detail {

Divisor volume_divisor(const std::int64_t* kernel) {
  using i128 = Divisor::Count;
  i128 volume = 1;
  bool exact = true;
  for (int a = 0; a < 3; ++a)
    exact = exact && !__builtin_mul_overflow(volume, static_cast<i128>(kernel[a]), &volume) &&
            volume <= (i128{1} << 120);
  if (exact) return Divisor(volume);
  Divisor d;
  d.hi = static_cast<double>(kernel[0]) * static_cast<double>(kernel[1]) *
         static_cast<double>(kernel[2]);
  return d;
}

double mean_of(const Superaccumulator& sum, Divisor n) {
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
