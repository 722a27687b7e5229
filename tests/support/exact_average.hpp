// Test-only exact check of an average: whether y lies within one ulp (of its own type) of the
// exact mean of some doubles, decided in plain big-integer arithmetic (no floating point beyond
// taking values apart), independently of the kernels' accumulators.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace irrun::testing {

__extension__ typedef unsigned __int128 u128;

// A non-negative integer in 32-bit digits, little-endian; 90 digits hold 2^2880, above any
// |double| * n (n < 2^64) in units of 2^-1074.
class BigNatural {
 public:
  // += m * 2^pos.
  void add(u128 m, int pos) {
    std::size_t i = static_cast<std::size_t>(pos / 32);
    m <<= pos % 32;  // m < 2^96 here (mantissa < 2^53 times n < 2^40 in the tests)
    std::uint64_t carry = 0;
    for (; m != 0 || carry != 0; ++i, m >>= 32) {
      const std::uint64_t s = std::uint64_t{d_[i]} + static_cast<std::uint32_t>(m) + carry;
      d_[i] = static_cast<std::uint32_t>(s);
      carry = s >> 32;
    }
  }
  friend int compare(const BigNatural& a, const BigNatural& b) {
    for (std::size_t i = kDigits; i-- > 0;)
      if (a.d_[i] != b.d_[i]) return a.d_[i] < b.d_[i] ? -1 : 1;
    return 0;
  }

 private:
  static constexpr std::size_t kDigits = 90;
  std::uint32_t d_[kDigits] = {};
};

// x * n = +-m * 2^pos units of 2^-1074 (x finite, n a non-negative integer below 2^40).
struct Scaled {
  bool negative;
  u128 m;
  int pos;
};
inline Scaled scaled(double x, std::uint64_t n) {
  int e = 0;
  const double f = std::frexp(std::fabs(x), &e);  // |x| = f * 2^e, f in [0.5, 1)
  auto m = static_cast<std::uint64_t>(std::ldexp(f, 53));
  int pos = e - 53 + 1074;
  for (; pos < 0; ++pos) m >>= 1;  // subnormals: the bits shifted out are zeros
  return {std::signbit(x), static_cast<u128>(m) * n, pos};
}

// Sign of sum(values) - y * n, exactly.
inline int compare_sum(const std::vector<double>& values, double y, std::uint64_t n) {
  BigNatural lhs, rhs;  // sum's positive part + y*n's negative part, and the other two
  for (double v : values) {
    if (v == 0) continue;
    const Scaled s = scaled(v, 1);
    (s.negative ? rhs : lhs).add(s.m, s.pos);
  }
  if (y != 0) {
    const Scaled s = scaled(y, n);
    (s.negative ? lhs : rhs).add(s.m, s.pos);
  }
  return compare(lhs, rhs);
}

// Whether |y - sum(values) / n| is at most one ulp of T (float or double) at y, i.e. the exact
// average lies between y's two neighbours in T (an infinite neighbour bounds nothing).
template <class T>
bool within_one_ulp_of_average(const std::vector<double>& values, std::uint64_t n, T y) {
  if (!std::isfinite(y)) return false;
  const T below = std::nextafter(y, -INFINITY), above = std::nextafter(y, INFINITY);
  const bool above_below = std::isinf(below) || compare_sum(values, below, n) >= 0;
  const bool below_above = std::isinf(above) || compare_sum(values, above, n) <= 0;
  return above_below && below_above;
}

}  // namespace irrun::testing
