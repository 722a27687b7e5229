// Exact conversions between double and the bit patterns of IEEE binary16 (f16) and bfloat16.
//
// Rounding goes straight from double to the 16-bit format (nearest, ties to even), so a value
// is rounded once: converting through float first can round twice and land one ulp off (e.g.
// 1 + 2^-11 + 2^-40 is f16 0x3C01, but via float it becomes the tie 1 + 2^-11 and then 0x3C00).
// Overflow gives infinity, values below half the smallest subnormal give a signed zero. NaNs
// keep their sign and the top payload bits (set to a quiet NaN when those bits are all zero), so
// every 16-bit pattern survives a round trip through double.
#pragma once

#include <bit>
#include <cstdint>

namespace irrun {
namespace detail {

// A binary floating-point format with 1 sign bit, ExpBits exponent bits and MantBits stored
// mantissa bits, narrower than double.
template <int ExpBits, int MantBits>
struct Narrow {
  static constexpr int bias = (1 << (ExpBits - 1)) - 1;
  static constexpr int emin = 1 - bias;  // exponent of the smallest normal
  static constexpr int emax = bias;      // exponent of the largest finite
  static constexpr std::uint16_t exp_mask = ((1u << ExpBits) - 1) << MantBits;
  static constexpr std::uint16_t mant_mask = (1u << MantBits) - 1;
  static constexpr std::uint16_t sign_bit = 0x8000;
  static constexpr int payload_shift = 52 - MantBits;  // double mantissa bits dropped for NaNs

  static constexpr std::uint16_t from_double(double x) {
    const auto bits = std::bit_cast<std::uint64_t>(x);
    const auto sign = static_cast<std::uint16_t>((bits >> 48) & sign_bit);
    const int dexp = static_cast<int>((bits >> 52) & 0x7FF);
    const std::uint64_t dmant = bits & ((std::uint64_t{1} << 52) - 1);

    if (dexp == 0x7FF) {  // inf or NaN
      if (dmant == 0) return sign | exp_mask;
      auto payload = static_cast<std::uint16_t>(dmant >> payload_shift);
      if (payload == 0) payload = 1u << (MantBits - 1);  // the quiet bit
      return sign | exp_mask | payload;
    }
    // Double subnormals (< 2^-1022) are far below half the smallest subnormal of both formats.
    if (dexp == 0) return sign;

    const int e = dexp - 1023;  // |x| = 1.m * 2^e
    if (e > emax) return sign | exp_mask;
    // |x| = M * 2^(e-52) with a 53-bit M. Express it in units of the target ulp at this
    // magnitude, 2^(max(e, emin) - MantBits), rounding the dropped bits to nearest even.
    const std::uint64_t m = dmant | (std::uint64_t{1} << 52);
    const int shift = 52 - MantBits + (e < emin ? emin - e : 0);  // always > 0
    std::uint64_t r = 0;
    if (shift < 64) {
      r = m >> shift;
      const std::uint64_t rest = m & ((std::uint64_t{1} << shift) - 1);
      const std::uint64_t half = std::uint64_t{1} << (shift - 1);
      if (rest > half || (rest == half && (r & 1))) ++r;
    }  // else: |x| < 2^-11 ulp, rounds to zero
    // Subnormal range: r is the encoding itself. Normal range: r in [2^MantBits, 2^(MantBits+1)]
    // carries the implicit bit. In both, a carry out of the mantissa bumps the exponent field,
    // which is exactly the next binade (or infinity past the largest finite).
    const std::uint64_t enc =
        e < emin ? r : (static_cast<std::uint64_t>(e + bias) << MantBits) + (r - (1u << MantBits));
    return sign | static_cast<std::uint16_t>(enc);
  }

  static constexpr double to_double(std::uint16_t h) {
    const std::uint64_t sign = static_cast<std::uint64_t>(h & sign_bit) << 48;
    const int exp = (h & exp_mask) >> MantBits;
    const std::uint64_t mant = h & mant_mask;
    if (exp == (exp_mask >> MantBits)) {  // inf or NaN: keep the payload
      return std::bit_cast<double>(sign | (std::uint64_t{0x7FF} << 52) | (mant << payload_shift));
    }
    // Exact: at most MantBits+1 significant bits, scaled by a power of two within double range.
    const double magnitude =
        exp == 0 ? static_cast<double>(mant) * pow2(emin - MantBits)
                 : static_cast<double>(mant | (1u << MantBits)) * pow2(exp - bias - MantBits);
    return sign ? -magnitude : magnitude;
  }

  static constexpr double pow2(int e) {  // 2^e for a normal double exponent
    return std::bit_cast<double>(static_cast<std::uint64_t>(e + 1023) << 52);
  }
};

using F16Format = Narrow<5, 10>;
using BF16Format = Narrow<8, 7>;

}  // namespace detail

constexpr std::uint16_t f16_bits_from_double(double x) {
  return detail::F16Format::from_double(x);
}
constexpr std::uint16_t bf16_bits_from_double(double x) {
  return detail::BF16Format::from_double(x);
}
constexpr double f16_bits_to_double(std::uint16_t h) {
  return detail::F16Format::to_double(h);
}
constexpr double bf16_bits_to_double(std::uint16_t h) {
  return detail::BF16Format::to_double(h);
}

}  // namespace irrun
