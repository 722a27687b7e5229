#include "superaccumulator.hpp"

#include <bit>
#include <cmath>
#include <cstring>

namespace irrun::kernels::detail {
namespace {

__extension__ typedef unsigned __int128 u128;
constexpr std::int64_t kDigitMask = 0xffffffff;

}  // namespace

void Superaccumulator::add(double x, int shift) {
  const auto bits = std::bit_cast<std::uint64_t>(x);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  std::uint64_t m = bits & ((std::uint64_t{1} << 52) - 1);
  if (biased != 0) m |= std::uint64_t{1} << 52;  // normal: the implicit bit
  if (m == 0) return;
  // x = m * 2^(max(biased, 1) - 1075): in units of 2^-1074 its lowest bit is at position pos.
  const int pos = (biased == 0 ? 0 : biased - 1) + shift;
  const u128 v = static_cast<u128>(m) << (pos % kDigitBits);  // below 2^85: three digits
  const auto i = static_cast<std::size_t>(pos / kDigitBits);
  const std::int64_t d0 = static_cast<std::int64_t>(v) & kDigitMask;
  const std::int64_t d1 = static_cast<std::int64_t>(v >> 32) & kDigitMask;
  const auto d2 = static_cast<std::int64_t>(v >> 64);
  if (bits >> 63) {
    limbs_[i] -= d0, limbs_[i + 1] -= d1, limbs_[i + 2] -= d2;
  } else {
    limbs_[i] += d0, limbs_[i + 1] += d1, limbs_[i + 2] += d2;
  }
  if (++adds_since_carry_ == (1u << 30)) {
    carry(limbs_);
    adds_since_carry_ = 0;
  }
}

// Every digit but the last into [0, 2^32); the last keeps the sign of the whole.
void Superaccumulator::carry(Limbs& limbs) {
  for (int i = 0; i + 1 < kLimbs; ++i) {
    const std::int64_t c = limbs[i] >> kDigitBits;  // floor division: also for negative limbs
    limbs[i] &= kDigitMask;
    limbs[i + 1] += c;
  }
}

// digits (carried, non-negative) times 2^-scale, rounded to nearest double.
double Superaccumulator::round_magnitude(const Limbs& digits, int scale) {
  int t = kLimbs - 1;
  while (t >= 0 && digits[t] == 0) --t;
  if (t < 0) return 0.0;
  const auto digit = [&](int k) { return k >= 0 ? static_cast<u128>(digits[k]) : u128{0}; };
  // The top three digits (value v * 2^(32 (t - 2)) units) and whether anything lies below.
  const u128 v = digit(t) << 64 | digit(t - 1) << 32 | digit(t - 2);
  bool sticky = false;
  for (int k = 0; k < t - 2; ++k) sticky |= digits[k] != 0;
  // 64 bits with the leading one at bit 63, the bits shifted out and below folded into bit 0:
  // converting that to double rounds exactly as the whole would (53 bits kept, bit 0 only sticky).
  const int top_bits = std::bit_width(static_cast<std::uint64_t>(digits[t]));
  auto m = static_cast<std::uint64_t>(v >> top_bits);
  sticky |= (v & ((u128{1} << top_bits) - 1)) != 0;
  if (sticky) m |= 1;
  // Exact unless it overflows (inf) or, scaled, falls below 2^-1022: unscaled, a value under
  // 2^53 units has m < 2^53 and converts exactly.
  return std::ldexp(static_cast<double>(m), kDigitBits * (t - 2) + top_bits - 1074 - scale);
}

double Superaccumulator::round_signed(Limbs limbs, int scale) {
  carry(limbs);
  if (limbs[kLimbs - 1] >= 0) return round_magnitude(limbs, scale);
  for (auto& l : limbs) l = -l;
  carry(limbs);
  return -round_magnitude(limbs, scale);
}

Superaccumulator::Split Superaccumulator::split(int scale) const {
  const double hi = round_signed(limbs_, scale);
  if (!std::isfinite(hi)) return {hi, 0.0};
  Superaccumulator rest = *this;
  rest.add(-hi, scale);
  return {hi, round_signed(rest.limbs_, scale)};
}

}  // namespace irrun::kernels::detail
