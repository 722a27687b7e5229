// The f16 and bf16 kernel against the reference kernel: the same bits on every geometry it
// covers, on both of its paths and for any thread count, and nothing touched where it declines
// (bf16 values whose exponents span too far for exact sums among them).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "irrun/float16.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "support/pool_geometries.hpp"
#include "support/pool_shape.hpp"
#include "support/split_mix.hpp"
#include "support/tensor_bits.hpp"

namespace {

using irrun::ElementType;
using irrun::Parallel;
using irrun::PoolGeometry;
using irrun::Tensor;
using irrun::kernels::Isa;
using irrun::testing::adaptive;
using irrun::testing::describe;
using irrun::testing::random_geometry;
using irrun::testing::same_bits;
using irrun::testing::shape_of;
using irrun::testing::SplitMix64;
using irrun::testing::window;

// Finite f16 patterns. Mode 0: any (subnormals, +-0, up to +-65504); mode 1: a few magnitudes
// far apart with both signs, so that windows cancel down to their smallest terms (a sum kept
// in float or in a narrower order would lose them); mode 2: zeros of both signs and a few
// subnormals (an all -0 window must give +0, as the reference's sum from +0 does).
std::uint16_t random_f16(SplitMix64& rng, int mode) {
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
std::uint16_t random_bf16(SplitMix64& rng, int mode, std::int64_t low) {
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

Tensor random_input(SplitMix64& rng, const PoolGeometry& g, int mode, ElementType type) {
  Tensor t = Tensor::zeros(type, shape_of(g, g.in));
  auto* x = t.mutable_data<std::uint16_t>();
  const std::int64_t low = rng.coin() ? 0 : rng.range(1, 222);
  for (std::size_t i = 0; i < t.element_count(); ++i)
    x[i] = type == ElementType::f16 ? random_f16(rng, mode) : random_bf16(rng, mode, low);
  return t;
}

// An output filled with a signalling-NaN pattern, so that outputs left unwritten show.
Tensor poisoned_output(const PoolGeometry& g, ElementType type) {
  Tensor t = Tensor::zeros(type, shape_of(g, g.out));
  auto* y = t.mutable_data<std::uint16_t>();
  for (std::size_t i = 0; i < t.element_count(); ++i)
    y[i] = type == ElementType::f16 ? 0x7D55 : 0x7F95;
  return t;
}

// +inf, -inf, a quiet and a signalling NaN.
std::array<std::uint16_t, 4> specials(ElementType type) {
  if (type == ElementType::f16) return {0x7C00, 0xFC00, 0x7E00, 0x7C01};
  return {0x7F80, 0xFF80, 0x7FC0, 0x7F81};
}

// Outputs that differ from the reference's, the first few reported.
int mismatches(const PoolGeometry& g, const Tensor& got, const Tensor& want) {
  int bad = 0;
  for (std::size_t i = 0; i < want.element_count(); ++i) {
    const std::uint16_t a = got.data<std::uint16_t>()[i], b = want.data<std::uint16_t>()[i];
    if (a != b && ++bad <= 3)
      FAIL_CHECK(describe(g) << " output " << i << ": 16-bit kernel 0x" << std::hex << a
                             << ", reference 0x" << b);
  }
  return bad;
}

Tensor run_reference(const PoolGeometry& g, const Tensor& in, const Parallel& par) {
  Tensor out = poisoned_output(g, in.type);
  irrun::kernels::avg_pool_reference(in, out, g, par);
  return out;
}

// The kernel on both paths and each of `pools` (bands of `band_rows` when not 0) against `want`.
void check_paths(const PoolGeometry& g, const Tensor& in, const Tensor& want,
                 std::span<const Parallel> pools, std::int64_t band_rows = 0) {
  for (const Parallel& par : pools) {
    for (Isa isa : {Isa::best, Isa::portable}) {
      Tensor got = poisoned_output(g, in.type);
      REQUIRE(irrun::kernels::avg_pool_half(in, got, g, par, isa, band_rows));
      CHECK(mismatches(g, got, want) == 0);
    }
  }
}

}  // namespace

TEST_CASE("f16 and bf16 avg_pool gives the reference's bits on random geometries",
          "[kernels][avg_pool_half]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  SplitMix64 rng(0xF16F16ull);
  const Parallel par(2);
  std::int64_t outputs = 0;
  for (int iter = 0; iter < 1200; ++iter) {
    const PoolGeometry g = random_geometry(rng);
    const int mode = iter % 3;
    INFO(describe(g) << " mode " << mode);
    const Tensor in = random_input(rng, g, mode, type);
    const Tensor want = run_reference(g, in, par);
    check_paths(g, in, want, std::span(&par, 1));
    outputs += static_cast<std::int64_t>(want.element_count());
  }
  CHECK(outputs > 300000);  // enough outputs that one double rounding in 2^13 shows
}

TEST_CASE("f16 and bf16 avg_pool on large windows and the benchmark patterns",
          "[kernels][avg_pool_half]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  SplitMix64 rng(0x5EED16ull);
  const Parallel par(2);
  const PoolGeometry geometries[] = {
      window({1, 8}, {30, 30}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, false),  // S3, include-pad
      window({1, 4}, {56, 56}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true),   // S1
      window({1, 3}, {10, 7, 7}, {2, 7, 7}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, false, true),
      adaptive({1, 3}, {90, 91}, {1, 1}),    // 8190 taps: the largest exact window here
      adaptive({2, 5}, {45, 37}, {17, 13}),  // uneven bins
      adaptive({1, 70}, {7, 7}, {1, 1}),     // global, one output per plane
      // Pads in the divisor: 3721 for every window, of up to 900 taps.
      window({1, 2}, {30, 30}, {61, 61}, {1, 1}, {30, 30}, {30, 30}, false, false),
  };
  for (const PoolGeometry& g : geometries) {
    for (int mode = 0; mode < 3; ++mode) {
      INFO(describe(g) << " mode " << mode);
      const Tensor in = random_input(rng, g, mode, type);
      Tensor got = poisoned_output(g, type);
      REQUIRE(irrun::kernels::avg_pool_half(in, got, g, par));
      CHECK(mismatches(g, got, run_reference(g, in, par)) == 0);
    }
  }
}

namespace {

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
int near_midpoint(SplitMix64& rng, const Quanta& q, std::int64_t taps, std::int64_t n,
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

}  // namespace

TEST_CASE("f16 and bf16 avg_pool rounds averages at and beside 16-bit midpoints as the reference",
          "[kernels][avg_pool_half]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  // Rows of 37 windows (eight, four and one ended at a time) of 2 to 25 taps, 1 or 3 rows high,
  // and whole-plane windows of 37 planes with pads in divisors up to 2^39 + 1; on both paths, 1
  // and 2 threads. The averages' rounding is known from how they were made, so the reference is
  // checked too. 3x15 windows divide by a product of two inverses, 1/3 and 1/15, whose error
  // took averages at midpoints below them (an unbiased product was a unit too low).
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
  const Parallel pools[] = {Parallel(1), Parallel(2)};
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
    CHECK(mismatches(g, run_reference(g, in, pools[0]), want) == 0);
    check_paths(g, in, want, pools);
  }
}

TEST_CASE("f16 and bf16 avg_pool on whole-plane windows (global pools) gives the reference's bits",
          "[kernels][avg_pool_half]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  // Plane sizes around the sum's 8 and 16 lanes, plane counts off four (the planes end four at
  // a time) split over 1-3 threads, pads in or out of the divisor; then single windows that do
  // not cover the plane (a column left out, dilated taps), which take the bands.
  SplitMix64 rng(0x610BA1ull);
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(3)};
  const PoolGeometry geometries[] = {
      adaptive({2, 35}, {7, 7}, {1, 1}),  // S4's and S7's planes
      adaptive({1, 5}, {1, 1}, {1, 1}),
      adaptive({3, 2}, {3, 5}, {1, 1}),
      adaptive({1, 9}, {4, 4}, {1, 1}),
      adaptive({1, 7}, {1, 17}, {1, 1}),
      adaptive({1, 3}, {4, 4, 4}, {1, 1, 1}),
      adaptive({1, 2}, {90, 91}, {1, 1}),  // 8190 taps: the largest exact window
      window({1, 9}, {7, 7}, {9, 9}, {1, 1}, {1, 1}, {1, 1}, false, false),  // 81 a divisor
      window({1, 8}, {7, 7}, {1001, 1001}, {1, 1}, {497, 497}, {497, 497}, false, false),
      window({1, 9}, {7, 7}, {9, 9}, {1, 1}, {1, 1}, {1, 1}, false, true),
      window({2, 3}, {7, 7}, {7, 7}, {2, 2}, {0, 0}, {0, 0}, true, true),
      window({1, 4}, {7, 8}, {7, 7}, {1, 2}, {0, 0}, {0, 0}, false, true),  // column 7 unread
      window({1, 4}, {7, 7}, {4, 4}, {1, 1}, {0, 0}, {0, 0}, false, true, {2, 2}),
  };
  for (const PoolGeometry& g : geometries) {
    for (int mode = 0; mode < 3; ++mode) {
      INFO(describe(g) << " mode " << mode);
      const Tensor in = random_input(rng, g, mode, type);
      const Tensor want = run_reference(g, in, pools[1]);
      check_paths(g, in, want, pools);
    }
  }
}

TEST_CASE("f16 and bf16 avg_pool in bands of output rows gives the reference's bits",
          "[kernels][avg_pool_half]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  // Bands forced down to 1-3 output rows on random geometries (D and H windows overlapping,
  // dilated, in padding, adaptive), then planes whose W sums do not fit the buffers at once.
  SplitMix64 rng(0xBA2D5ull);
  const Parallel par(2);
  for (int iter = 0; iter < 300; ++iter) {
    const PoolGeometry g = random_geometry(rng);
    const std::int64_t band_rows = rng.range(1, 3);
    INFO(describe(g) << " band_rows " << band_rows);
    const Tensor in = random_input(rng, g, iter % 3, type);
    const Tensor want = run_reference(g, in, par);
    check_paths(g, in, want, std::span(&par, 1), band_rows);
  }
  const PoolGeometry large[] = {
      window({1, 1}, {1200, 1200}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, false, true),
      window({1, 1}, {600, 900}, {5, 5}, {1, 1}, {2, 2}, {2, 2}, true, true),  // S9's, ceil
      window({1, 1}, {3, 200, 1000}, {2, 3, 3}, {1, 2, 1}, {0, 1, 1}, {1, 1, 1}, false, false),
      // Bands of ~130000 output rows, each grown a row at a time by its new row's window. (Tests
      // do not time things: a band recomputed from all its rows at each step made this ~10 s.)
      window({1, 1}, {200000, 4}, {3, 1}, {1, 1}, {1, 0}, {1, 0}, false, true),
      // Strides past the kernel: the rows between windows are skipped.
      window({1, 1}, {4000, 2000}, {1, 1}, {8, 8}, {0, 0}, {0, 0}, false, true),
      window({1, 2}, {5, 600, 700}, {1, 2, 2}, {3, 5, 5}, {0, 1, 0}, {0, 1, 0}, true, false),
  };
  for (const PoolGeometry& g : large) {
    INFO(describe(g));
    const Tensor in = random_input(rng, g, 0, type);
    Tensor got = poisoned_output(g, type);
    REQUIRE(irrun::kernels::avg_pool_half(in, got, g, par));
    CHECK(mismatches(g, got, run_reference(g, in, par)) == 0);
  }
}

TEST_CASE("f16 and bf16 avg_pool on windows in padding costs no more than the reference",
          "[kernels][avg_pool_half]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  // Tests do not time things, but these took seconds where the reference takes milliseconds:
  // with no window tapping D (or W), the H rows read were marked tap by tap for all 50001 H
  // windows (or those taps summed for every output); and the 99 windows all in the W padding
  // summed their 4000 H taps as the one window with W taps does.
  SplitMix64 rng(0x9ADD1Full);
  const Parallel pools[] = {Parallel(1), Parallel(2)};
  const PoolGeometry geometries[] = {
      window({1, 2}, {1, 100000, 1}, {1, 50000, 1}, {2, 1, 1}, {1, 0, 0}, {1, 0, 0}, false, true),
      window({1, 2}, {100000, 1}, {50000, 1}, {1, 2}, {0, 1}, {0, 1}, false, false),
      window({1, 1}, {8000, 1}, {4000, 1}, {1, 1}, {0, 0}, {0, 99}, false, true),
  };
  for (const PoolGeometry& g : geometries) {
    INFO(describe(g));
    Tensor in = random_input(rng, g, 0, type);
    const Tensor want = run_reference(g, in, pools[0]);
    check_paths(g, in, want, pools);
  }
}

TEST_CASE("f16 and bf16 avg_pool is bit-identical for any thread count",
          "[kernels][avg_pool_half]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  SplitMix64 rng(0x7D16ull);
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(7)};
  for (int iter = 0; iter < 60; ++iter) {
    const PoolGeometry g = random_geometry(rng);
    const std::int64_t band_rows = iter % 3;  // the threads share a plane's bands too
    INFO(describe(g) << " band_rows " << band_rows);
    const Tensor in = random_input(rng, g, iter % 3, type);
    Tensor first = poisoned_output(g, type);
    REQUIRE(irrun::kernels::avg_pool_half(in, first, g, pools[0], Isa::best, band_rows));
    for (std::size_t k = 1; k < std::size(pools); ++k) {
      Tensor got = poisoned_output(g, type);
      REQUIRE(irrun::kernels::avg_pool_half(in, got, g, pools[k], Isa::best, band_rows));
      CHECK(same_bits(got, first));
    }
  }
}

TEST_CASE("f16 and bf16 avg_pool declines what it cannot prove and touches nothing",
          "[kernels][avg_pool_half]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  SplitMix64 rng(0xDEC1Dull);
  const Parallel par(2);
  const PoolGeometry g = window({1, 3}, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, true);
  const Tensor untouched = poisoned_output(g, type);
  SECTION("an inf or NaN anywhere in the rows windows read") {
    for (const std::uint16_t special : specials(type)) {
      Tensor in = random_input(rng, g, 0, type);
      in.mutable_data<std::uint16_t>()[static_cast<std::size_t>(
          rng.range(0, static_cast<std::int64_t>(in.element_count()) - 1))] = special;
      Tensor out = poisoned_output(g, type);
      CHECK_FALSE(irrun::kernels::avg_pool_half(in, out, g, par));
      CHECK(same_bits(out, untouched));
      // avg_pool then runs the reference kernel: its bits, NaN payloads included.
      irrun::kernels::avg_pool(in, out, g, par);
      CHECK(same_bits(out, run_reference(g, in, par)));
    }
  }
  SECTION("but not for an inf or NaN in a row no window reads") {
    // k1 s3 along H, then along D: rows 1, 2, 4, 5, ... of that axis lie between windows, and
    // the reference never reads them.
    const PoolGeometry gaps[] = {
        window({1, 3}, {9, 11}, {1, 2}, {3, 1}, {0, 0}, {0, 0}, false, true),
        window({2, 1}, {8, 4, 5}, {1, 2, 2}, {3, 1, 1}, {0, 1, 0}, {0, 0, 0}, false, true),
    };
    for (const PoolGeometry& gg : gaps) {
      const std::int64_t axis = gg.spatial_rank == 2 ? 1 : 0;  // the axis of k1 s3
      std::int64_t inner = 1;                                  // elements a row of that axis spans
      for (std::int64_t a = axis + 1; a < 3; ++a) inner *= gg.in[static_cast<std::size_t>(a)];
      for (const std::uint16_t special : specials(type)) {
        INFO(describe(gg) << " special 0x" << std::hex << special);
        Tensor in = random_input(rng, gg, 0, type);
        std::int64_t at = 0;
        do at = rng.range(0, static_cast<std::int64_t>(in.element_count()) - 1);
        while ((at / inner) % gg.in[static_cast<std::size_t>(axis)] % 3 == 0);
        in.mutable_data<std::uint16_t>()[static_cast<std::size_t>(at)] = special;
        Tensor out = poisoned_output(gg, type);
        REQUIRE(irrun::kernels::avg_pool_half(in, out, gg, par));
        CHECK(mismatches(gg, out, run_reference(gg, in, par)) == 0);
      }
    }
  }
  SECTION("bf16 exponents spanning too far for exact sums") {
    // One window of 9 taps: sums are exact up to a span of 53 - 4 - 1 - 7 = 41 binades. At 41,
    // eight of the largest mantissa at the top and the smallest at the bottom need all 53 bits
    // (a bound one too loose would round them); at 42 the kernel declines, and avg_pool gives
    // the reference's bits.
    const PoolGeometry one = adaptive({1, 2}, {3, 3}, {1, 1});
    for (const std::int64_t top : {60, 200}) {
      if (type != ElementType::bf16) break;
      for (const std::int64_t span : {41, 42}) {
        INFO("top exponent " << top << " span " << span);
        Tensor in = Tensor::zeros(type, shape_of(one, one.in));
        auto* x = in.mutable_data<std::uint16_t>();
        for (std::size_t i = 0; i < in.element_count(); ++i)
          x[i] =
              static_cast<std::uint16_t>(i % 9 == 4 ? ((top - span) << 7) | 1 : (top << 7) | 127);
        x[9] |= 0x8000;  // the second plane: one large value negative, cancelling
        Tensor out = poisoned_output(one, type);
        const bool ran = irrun::kernels::avg_pool_half(in, out, one, par);
        CHECK(ran == (span == 41));
        if (ran) {
          CHECK(mismatches(one, out, run_reference(one, in, par)) == 0);
        } else {
          CHECK(same_bits(out, poisoned_output(one, type)));
          irrun::kernels::avg_pool(in, out, one, par);
          CHECK(same_bits(out, run_reference(one, in, par)));
        }
      }
    }
  }
  SECTION("bf16 zeros count for no exponent") {
    const PoolGeometry one = adaptive({1, 2}, {3, 3}, {1, 1});
    Tensor in = Tensor::zeros(type, shape_of(one, one.in));
    auto* x = in.mutable_data<std::uint16_t>();
    for (std::size_t i = 0; i < in.element_count(); ++i)
      x[i] = static_cast<std::uint16_t>(i % 3 ? (200 << 7) | 5 : i % 2 ? 0x8000 : 0);
    Tensor out = poisoned_output(one, type);
    REQUIRE(irrun::kernels::avg_pool_half(in, out, one, par));
    CHECK(mismatches(one, out, run_reference(one, in, par)) == 0);
  }
  SECTION("windows reading a few columns of long rows") {
    // 32 rows of 65536 for 64 taps: the reference's taps, not 2M values widened (300x slower).
    const PoolGeometry sparse =
        window({1, 32}, {1, 65536}, {1, 2}, {1, 65534}, {0, 0}, {0, 0}, false, true);
    REQUIRE(sparse.out[2] == 2);
    const Tensor in = random_input(rng, sparse, 0, type);
    Tensor out = poisoned_output(sparse, type);
    CHECK_FALSE(irrun::kernels::avg_pool_half(in, out, sparse, par));
    CHECK(same_bits(out, poisoned_output(sparse, type)));
    irrun::kernels::avg_pool(in, out, sparse, par);
    CHECK(same_bits(out, run_reference(sparse, in, par)));
  }
  SECTION("windows past 2^13 taps") {
    const PoolGeometry big = adaptive({1, 1}, {91, 91}, {1, 1});  // 8281 taps
    const Tensor in = random_input(rng, big, 0, type);
    Tensor out = poisoned_output(big, type);
    CHECK_FALSE(irrun::kernels::avg_pool_half(in, out, big, par));
    CHECK(same_bits(out, poisoned_output(big, type)));
  }
  SECTION("input rows past its buffers") {
    const PoolGeometry wide =
        window({1, 1}, {2, 131072}, {1, 2}, {1, 2}, {0, 0}, {0, 0}, false, true);
    const Tensor in = random_input(rng, wide, 0, type);
    Tensor out = poisoned_output(wide, type);
    CHECK_FALSE(irrun::kernels::avg_pool_half(in, out, wide, par));
    CHECK(same_bits(out, poisoned_output(wide, type)));
  }
  SECTION("an empty input axis with input rows past 2^62 along the others") {
    // No window has a tap, but the D and H spans' product times OW passes 2^63: it wrapped
    // below the buffer's budget and the W sums of 2^62 rows went into an empty buffer.
    const std::int64_t n = (std::int64_t{1} << 31) + 1;
    const PoolGeometry empty = window({1, 1}, {n, n, 0}, {2, 2, 1}, {1, 1, 1}, {0, 0, 1}, {0, 0, 1},
                                      false, true, {n - 1, n - 1, 1});
    REQUIRE(empty.out_plane_size() == 2);
    const Tensor in = random_input(rng, empty, 0, type);
    Tensor out = poisoned_output(empty, type);
    CHECK_FALSE(irrun::kernels::avg_pool_half(in, out, empty, par));
    CHECK(same_bits(out, poisoned_output(empty, type)));
    irrun::kernels::avg_pool(in, out, empty, par);
    CHECK(same_bits(out, run_reference(empty, in, par)));
  }
  SECTION("other element types") {
    const Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
    Tensor out = Tensor::zeros(ElementType::f32, shape_of(g, g.out));
    CHECK_FALSE(irrun::kernels::avg_pool_half(in, out, g, par));
  }
}
