// f16 and bf16 inputs for the 16-bit AvgPool kernels' tests (avg_pool_half_test.cpp,
// avg_pool_half_f32_test.cpp): random patterns, outputs poisoned and compared with the reference
// kernel's, and windows whose averages sit at or beside 16-bit midpoints.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <optional>
#include <vector>

#include <catch2/catch.hpp>

#include "irrun/float16.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "support/pool_geometries.hpp"
#include "support/pool_shape.hpp"
#include "support/split_mix.hpp"

namespace irrun::testing {

// Finite f16 patterns. Mode 0: any (subnormals, +-0, up to +-65504); mode 1: a few magnitudes
// far apart with both signs, so that windows cancel down to their smallest terms (a sum kept
// in float or in a narrower order would lose them); mode 2: zeros of both signs and a few
// subnormals (an all -0 window must give +0, as the reference's sum from +0 does).
inline std::uint16_t random_f16(SplitMix64& rng, int mode) {
  static const std::uint16_t kFar[] = {0x7BFF, 0x7800, 0x6400, 0x3C00, 0x1400, 0x0001, 0x03FF};
  std::uint16_t h = 0;
  switch (mode) {
    case 0:
      do h = static_cast<std::uint16_t>(rng.next());
      while ((h & 0x7C00) == 0x7C00);
      return h;
    case 1:
      h = kFar[rng.range(0, 6)];
      h = static_cast<std::uint16_t>(h ^ rng.range(0, 3));  // stays finite
      break;
    default:
      h = rng.range(0, 3) == 0 ? static_cast<std::uint16_t>(rng.range(1, 3)) : 0;
  }
  return static_cast<std::uint16_t>(h | (rng.coin() ? 0x8000 : 0));
}

// The bf16 modes alike, within 32 binades above `low` (an exponent field from 0, the
// subnormals, to 222), which sums of up to 2^13 taps hold exactly: mode 0 any pattern there;
// mode 1 its two ends and between, with cancelling signs; mode 2 zeros and a few subnormals.
inline std::uint16_t random_bf16(SplitMix64& rng, int mode, std::int64_t low) {
  std::int64_t e = 0, m = 0;
  switch (mode) {
    case 0:
      e = rng.range(low, low + 32);
      m = rng.range(0, 127);
      break;
    case 1: {
      static const std::int64_t kFar[] = {32, 31, 20, 9, 1, 0};
      e = low + kFar[rng.range(0, 5)];
      m = rng.coin() ? rng.range(0, 3) : 127 - rng.range(0, 3);
      break;
    }
    default:
      m = rng.range(0, 3) == 0 ? rng.range(1, 3) : 0;
  }
  if (e == 0 && m == 0 && mode != 2) m = 1;  // a subnormal, not a zero, at the span's bottom
  return static_cast<std::uint16_t>((e << 7) | m | (rng.coin() ? 0x8000 : 0));
}

// A random input of `type` in `mode` (random_f16, random_bf16); bf16's lowest exponent field,
// `low`, is drawn when not given.
inline Tensor random_input(SplitMix64& rng, const PoolGeometry& g, int mode, ElementType type,
                           std::optional<std::int64_t> bf16_low = std::nullopt) {
  Tensor t = Tensor::zeros(type, shape_of(g, g.in));
  auto* x = t.mutable_data<std::uint16_t>();
  const std::int64_t low = bf16_low ? *bf16_low : rng.coin() ? 0 : rng.range(1, 222);
  for (std::size_t i = 0; i < t.element_count(); ++i)
    x[i] = type == ElementType::f16 ? random_f16(rng, mode) : random_bf16(rng, mode, low);
  return t;
}

// An output filled with a signalling-NaN pattern, so that outputs left unwritten show.
inline Tensor poisoned_output(const PoolGeometry& g, ElementType type) {
  Tensor t = Tensor::zeros(type, shape_of(g, g.out));
  auto* y = t.mutable_data<std::uint16_t>();
  for (std::size_t i = 0; i < t.element_count(); ++i)
    y[i] = type == ElementType::f16 ? 0x7D55 : 0x7F95;
  return t;
}

// +inf, -inf, a quiet and a signalling NaN.
inline std::array<std::uint16_t, 4> specials(ElementType type) {
  if (type == ElementType::f16) return {0x7C00, 0xFC00, 0x7E00, 0x7C01};
  return {0x7F80, 0xFF80, 0x7FC0, 0x7F81};
}

// Outputs that differ from the reference's, the first few reported.
inline int mismatches(const PoolGeometry& g, const Tensor& got, const Tensor& want) {
  int bad = 0;
  for (std::size_t i = 0; i < want.element_count(); ++i) {
    const std::uint16_t a = got.data<std::uint16_t>()[i], b = want.data<std::uint16_t>()[i];
    if (a != b && ++bad <= 3)
      FAIL_CHECK(describe(g) << " output " << i << ": 16-bit kernel 0x" << std::hex << a
                             << ", reference 0x" << b);
  }
  return bad;
}

inline Tensor run_reference(const PoolGeometry& g, const Tensor& in, const Parallel& par) {
  Tensor out = poisoned_output(g, in.type);
  irrun::kernels::avg_pool_reference(in, out, g, par);
  return out;
}

// 16-bit values as whole numbers of the quantum of exponent field `low` (1 or more; subnormals
// too when 1), so that window sums are exact; midpoints from fields `bottom` to `top`.
struct Quanta {
  ElementType type;
  std::int64_t low, bottom, top;
  int mantissa() const { return type == ElementType::f16 ? 10 : 7; }
  double value(std::uint16_t h) const {
    return type == ElementType::f16 ? irrun::f16_bits_to_double(h) : irrun::bf16_bits_to_double(h);
  }
  double quantum() const {
    const int bias = type == ElementType::f16 ? 15 : 127;
    return std::ldexp(1.0, static_cast<int>(low) - bias - mantissa());
  }
  // The 16-bit value nearest q quanta (|q| below 2^53).
  std::uint16_t nearest(std::int64_t q) const {
    const double x = static_cast<double>(q) * quantum();
    return type == ElementType::f16 ? irrun::f16_bits_from_double(x)
                                    : irrun::bf16_bits_from_double(x);
  }
  // h in quanta, when h is a whole number of them.
  std::optional<std::int64_t> of(std::uint16_t h) const {
    const double q = value(h) / quantum();
    if (!std::isfinite(q) || q != std::trunc(q)) return std::nullopt;
    return static_cast<std::int64_t>(q);
  }
  // Whether the kernel sums windows of `taps` such values exactly (it declines bf16 values
  // whose exponents span too far: 53 bits for the sum of the largest and the smallest, at
  // least a quantum, which is the least exponent field low - 7, or 1).
  bool summable(std::uint16_t h, std::int64_t taps) const {
    const std::int64_t least = std::max<std::int64_t>(1, low - mantissa()),
                       field = (h & 0x7FFF) >> mantissa();
    return type == ElementType::f16 ||
           field <=
               least + 52 - mantissa() -
                   static_cast<std::int64_t>(std::bit_width(static_cast<std::uint64_t>(taps - 1)));
  }
};

// A window of `taps` values with divisor n whose sum is n * h + delta: h halfway between a
// (positive) and b = a + 1 (its bits), delta 0 or up to one and a half quanta either way. The
// average must round to a when delta < 0, to b when delta > 0, and to the even one when 0,
// however near the midpoint: an ending that rounds twice, or trusts an inexact quotient, misses
// some (with 49 taps and exponents 30 or more binades apart, s / n is within 2^-45 of h: s * r
// may pass it).
// Returns that side, or -2 when this draw does not work out.
inline int near_midpoint(SplitMix64& rng, const Quanta& q, std::int64_t taps, std::int64_t n,
                         std::uint16_t* values, std::uint16_t& want) {
  const std::int64_t field = rng.range(q.bottom, q.top);
  const auto a =
      static_cast<std::uint16_t>((field << q.mantissa()) | rng.range(0, (1 << q.mantissa()) - 1));
  const auto b = static_cast<std::uint16_t>(a + 1);
  const auto A = q.of(a), B = q.of(b);
  const std::int64_t twice_delta = rng.range(-3, 3);
  std::int64_t twice_s = 0;  // in half quanta
  if (!A || !B || __builtin_mul_overflow(n, *A + *B, &twice_s) || twice_s > (std::int64_t{1} << 53))
    return -2;
  twice_s += twice_delta;
  // s a whole number of quanta, and delta / n within half the gap.
  if (twice_s % 2 != 0 || std::abs(twice_delta) >= n * (*B - *A)) return -2;
  std::int64_t rest = twice_s / 2;
  const auto take = [&](std::int64_t i, std::uint16_t v) {
    const auto quanta = q.of(v);
    if (!quanta || !q.summable(v, taps)) return false;
    values[i] = v;
    rest -= *quanta;
    return true;
  };
  // Values near the mean, then the rest as the 16-bit value nearest it, and so on: up to four
  // (a quantum at the bottom of 30 binades takes three).
  const std::int64_t near = std::max<std::int64_t>(0, taps - 4);
  for (std::int64_t i = 0; i < near; ++i)
    if (!take(i, static_cast<std::uint16_t>(q.nearest(twice_s / 2 / taps) + rng.range(-2, 2))))
      return -2;
  for (std::int64_t i = near; i < taps; ++i)
    if (!take(i, q.nearest(rest))) return -2;
  if (rest != 0) return -2;
  const int side = twice_delta < 0 ? -1 : twice_delta > 0 ? 1 : 0;
  want = side < 0 ? a : side > 0 ? b : (a & 1) ? b : a;
  return side;
}

// Windows whose averages sit at or beside 16-bit midpoints (near_midpoint), on rows of 37 windows
// (eight, four and one ended at a time) of 2 to 400 taps, 1 to 7 rows high, and on whole-plane
// windows of 37 planes with pads in divisors up to 3 * 2^38. The averages' rounding is known from
// how they were made: the reference kernel is checked against it, then kernel(g, in, want). 3x15
// windows divide by a product of two inverses, 1/3 and 1/15, whose error took averages at
// midpoints below them in avg_pool_half (an unbiased product was a unit too low).
template <class Kernel>
void check_midpoints(ElementType type, Kernel&& kernel) {
  struct Case {
    std::int64_t rows, taps, divisor;  // taps a row
    bool far = false;  // midpoints as far above the least quantum as exact sums allow
  };
  const Case cases[] = {{1, 2, 2},
                        {1, 3, 3},
                        {1, 5, 5},
                        {1, 7, 7},
                        {1, 9, 9},
                        {1, 25, 25},
                        {1, 49, 49},
                        {7, 7, 49},
                        {3, 15, 45},
                        {3, 7, 21},
                        {1, 49, 49, true},
                        {7, 7, 49, true},
                        {1, 400, 400, true},
                        {1, 3, 9},
                        {1, 3, 17},
                        {1, 49, 1002001},
                        {1, 49, std::int64_t{3} << 38}};
  SplitMix64 rng(0x3DB0111Dull);
  for (const Case& c : cases) {
    const std::int64_t count = 37, taps = c.rows * c.taps;
    const PoolGeometry g = taps == c.divisor
                               ? window({1, 1}, {c.rows, c.taps * count}, {c.rows, c.taps},
                                        {c.rows, c.taps}, {0, 0}, {0, 0}, false, true)
                               : window({1, count}, {1, c.taps}, {1, c.divisor}, {1, 1}, {0, 1},
                                        {0, c.divisor - c.taps - 1}, false, false);
    INFO(describe(g));
    REQUIRE(static_cast<std::int64_t>(g.planes() * g.out_plane_size()) == count);
    Tensor in = Tensor::zeros(type, shape_of(g, g.in));
    Tensor want = Tensor::zeros(type, shape_of(g, g.out));
    int sides[3] = {0, 0, 0};
    // f16: any exponent. bf16: one range for the tensor, up to 40 binades (the kernel declines
    // spans too far for exact sums). Divisors near 2^40 need averages of a few quanta.
    Quanta q{type, 1, 0, 30};
    if (type == ElementType::bf16) {
      q.low = c.divisor > 1000000 ? 1 : rng.range(8, 150);
      q.bottom = q.low == 1 ? 0 : q.low;
      // The largest field exact sums of these taps allow (see Quanta::summable), less one for
      // the values near the mean.
      const std::int64_t limit =
          q.low - q.mantissa() + 52 - q.mantissa() -
          static_cast<std::int64_t>(std::bit_width(static_cast<std::uint64_t>(taps - 1))) - 1;
      q.top = c.divisor > 1000000 ? 20 : c.far ? limit : q.low + rng.range(20, 30);
    }
    if (c.far) q.bottom = q.top - 2;
    std::vector<std::uint16_t> values(static_cast<std::size_t>(taps));
    for (std::int64_t o = 0; o < count; ++o) {
      auto& w = want.mutable_data<std::uint16_t>()[o];
      int side = -2;
      for (int tries = 0; side == -2 && tries < 1000000; ++tries)
        side = near_midpoint(rng, q, taps, c.divisor, values.data(), w);
      REQUIRE(side != -2);
      ++sides[side + 1];
      const std::uint16_t sign = rng.coin() ? 0x8000 : 0;  // all negative: the midpoint -h
      w ^= sign;
      // Window o: columns [o * taps, (o + 1) * taps) of each row (one plane), or plane o.
      for (std::int64_t r = 0; r < c.rows; ++r)
        for (std::int64_t t = 0; t < c.taps; ++t)
          in.mutable_data<std::uint16_t>()[(r * count + o) * c.taps + t] =
              values[static_cast<std::size_t>(r * c.taps + t)] ^ sign;
    }
    CHECK(sides[0] > 0);
    CHECK(sides[1] > 0);
    CHECK(sides[2] > 0);
    CHECK(mismatches(g, run_reference(g, in, Parallel(1)), want) == 0);
    kernel(g, in, want);
  }
}

}  // namespace irrun::testing
