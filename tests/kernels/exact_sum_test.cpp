// Tests of the floating-point kernels' exact window sum (lib/src/kernels/exact_sum.hpp and
// superaccumulator.*), through one-window pools: the reference kernel, and for f32 avg_pool,
// whose fast kernel falls back to the same sum when its own check fails. Held to an exact
// big-integer oracle (support/exact_average.hpp).
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "irrun/kernels/avg_pool.hpp"
#include "support/exact_average.hpp"
#include "support/pool_geometries.hpp"
#include "support/split_mix.hpp"

namespace {

using irrun::ElementType;
using irrun::Parallel;
using irrun::PoolGeometry;
using irrun::Tensor;
using irrun::testing::SplitMix64;
using irrun::testing::within_one_ulp_of_average;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMax = std::numeric_limits<double>::max();
constexpr double kMin = std::numeric_limits<double>::denorm_min();

// The average of all the values, as one window of a 1-D pool in T (float or double).
template <class T>
T average(const std::vector<double>& values, bool reference) {
  const auto w = static_cast<std::int64_t>(values.size());
  const PoolGeometry g = irrun::testing::window({1, 1}, {w}, {w}, {1}, {0}, {0}, false, true);
  constexpr ElementType type = sizeof(T) == 4 ? ElementType::f32 : ElementType::f64;
  Tensor in = Tensor::zeros(type, {1, 1, w});
  std::transform(values.begin(), values.end(), in.mutable_data<T>(),
                 [](double v) { return static_cast<T>(v); });
  Tensor out = Tensor::zeros(type, {1, 1, 1});
  Parallel par(1);
  if (reference) {
    irrun::kernels::avg_pool_reference(in, out, g, par);
  } else {
    irrun::kernels::avg_pool(in, out, g, par);
  }
  return out.data<T>()[0];
}

template <class T>
auto bits(T v) {
  return std::bit_cast<std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>(v);
}

struct Case {
  std::string name;
  std::vector<double> values;
  double expected;  // the exact average rounded to double (then to float for f32)
  bool f64_only = false;
};

const std::vector<Case>& hand_cases() {
  static const std::vector<Case> cases = {
      // Found by fuzz_avg_pool: one double of error term drops the 2^-60, and the sum was 0.
      {"nested cancellation", {0x1p60, 1, 0x1p-60, -1, -0x1p60}, 0x1p-60 / 5},
      {"deeper nesting", {0x1p100, 0x1p50, 1, 0x1p-50, -0x1p50, -0x1p100, -1}, 0x1p-50 / 7},
      {"f32's extremes cancel", {0x1.fffffep127, 0x1p-149, -0x1.fffffep127}, 0x1p-149 / 3},
      {"below the smallest f32", {1, 0x1p-149, -1}, 0x1p-149 / 3},
      {"2^1000 apart", {0x1p1000, 0x1p-1000, -0x1p1000}, 0x1p-1000 / 3, true},
      {"the sum overflows, the average does not", {kMax, kMax}, kMax, true},
      {"overflow, then back", {kMax, kMax, kMax, -kMax}, kMax / 2, true},
      {"negative overflow and a subnormal", {-kMax, -kMax, kMin}, -(kMax / 3) * 2, true},
      {"subnormals", {kMin, kMin, kMin}, kMin, true},
      {"a third of the smallest subnormal rounds to 0", {1, kMin, -1}, 0, true},
      {"half the smallest subnormal: the tie to even 0", {1, kMin, kMin, -1}, 0, true},
      {"the smallest subnormal beside the largest double",
       {kMax, kMin, -kMax, kMin},
       kMin / 2,
       true},
      // The sum's rounding to a double is a tie, broken by the third value (which also forces the
      // superaccumulator): the average rounds up.
      {"a tie broken far below",
       {0x1.418p-15, 0x1p-68, 0x1.44p-122, 0},
       0x1.4180000000001p-17,
       true},
      {"infinity and a number", {kInf, 1}, kInf},
      {"minus infinity after a spill", {0x1p60, 1, 0x1p-60, -1, -kInf}, -kInf},
      {"the same infinity twice", {kInf, 3, kInf}, kInf},
  };
  return cases;
}

}  // namespace

TEST_CASE("exact sums: hand-checked cancellation, range and infinities", "[kernels][exact_sum]") {
  const Case c = GENERATE(from_range(hand_cases()));
  INFO(c.name);
  for (const bool reference : {true, false}) {
    INFO((reference ? "avg_pool_reference" : "avg_pool"));
    CHECK(bits(average<double>(c.values, reference)) == bits(c.expected));
    if (!c.f64_only) {
      CHECK(bits(average<float>(c.values, reference)) == bits(static_cast<float>(c.expected)));
    }
  }
}

TEST_CASE("exact sums: NaN is the first NaN added, or the default for inf - inf",
          "[kernels][exact_sum]") {
  const double payload = std::bit_cast<double>(std::uint64_t{0x7ff8000000123000});
  const double other = std::bit_cast<double>(std::uint64_t{0xfff8000000456000});
  for (const bool reference : {true, false}) {
    INFO((reference ? "avg_pool_reference" : "avg_pool"));
    CHECK(std::isnan(average<double>({kInf, -kInf}, reference)));
    CHECK(std::isnan(average<float>({1, -kInf, 2, kInf}, reference)));
    // inf - inf before the NaN: the NaN added still wins, whatever the order.
    CHECK(bits(average<double>({kInf, -kInf, payload, other}, reference)) == bits(payload));
    CHECK(bits(average<double>({other, kInf, payload}, reference)) == bits(other));
    CHECK(bits(average<float>({kInf, payload, -kInf}, reference)) ==
          bits(static_cast<float>(payload)));
  }
}

// Random windows whose values span the type's whole range, often with cancellation: the
// average is within one ulp of the exact one (big-integer oracle), and its bits depend on the
// exact sum alone: a shuffled window, and one where cancelling values that force the
// superaccumulator replace zeros, give the same bits.
TEMPLATE_TEST_CASE("exact sums: within one ulp, and a function of the exact sum alone",
                   "[kernels][exact_sum]", float, double) {
  constexpr bool f32 = sizeof(TestType) == 4;
  const int min_exp = f32 ? -149 : -1074, max_exp = f32 ? 127 : 1023;
  const int digits = std::numeric_limits<TestType>::digits;
  SplitMix64 rng(f32 ? 101 : 202);
  // A value of the type: random sign and significand, exponent from the whole range or near e.
  auto value = [&](int e, int spread) {
    const int lo = std::max(min_exp, e - spread), hi = std::min(max_exp, e + spread);
    const auto mant = static_cast<double>(rng.next() >> (64 - digits));  // < 2^digits
    const int exp = static_cast<int>(rng.range(lo, hi));
    const double v = std::ldexp(mant, std::max(exp - digits + 1, min_exp));
    return static_cast<double>(static_cast<TestType>(rng.coin() ? -v : v));
  };
  for (int round = 0; round < 4000; ++round) {
    const std::size_t taps = static_cast<std::size_t>(rng.range(1, 24));
    const int mode = static_cast<int>(rng.range(0, 3));
    std::vector<double> v;
    for (std::size_t i = 0; i < taps; ++i) {
      switch (mode) {
        case 0:  // anywhere in the range
          v.push_back(value(0, max_exp - min_exp));
          break;
        case 1:  // values and their exact negatives at far-apart scales: strong cancellation
          if (i % 2 && rng.coin()) {
            v.push_back(-v.back());
          } else {
            v.push_back(value(static_cast<int>(rng.range(min_exp, max_exp)), 2));
          }
          break;
        case 2:  // near the top of the range: sums overflow the type
          v.push_back(value(max_exp, 3));
          break;
        default:  // near the bottom: subnormals
          v.push_back(value(min_exp + digits, digits + 3));
          break;
      }
    }
    for (std::size_t i = 0; i < taps / 3; ++i) v[rng.next() % taps] = 0;
    std::vector<double> shuffled = v;
    for (std::size_t i = taps; i > 1; --i) std::swap(shuffled[i - 1], shuffled[rng.next() % i]);
    // huge, tiny, 1 in a row cannot be held as sum + err: the sum moves to the superaccumulator.
    const double huge = std::ldexp(1.0, max_exp), tiny = std::ldexp(1.0, min_exp);
    std::vector<double> zeros = v, spilled = {huge, tiny, 1, -1, -tiny, -huge};
    zeros.resize(taps + 6, 0.0);
    spilled.insert(spilled.end(), v.begin(), v.end());

    const TestType y = average<TestType>(v, true);
    INFO("mode " << mode << " round " << round << " average " << y);
    CAPTURE(v);
    REQUIRE(within_one_ulp_of_average(v, taps, y));
    REQUIRE(bits(average<TestType>(shuffled, true)) == bits(y));
    REQUIRE(bits(average<TestType>(spilled, true)) == bits(average<TestType>(zeros, true)));
    REQUIRE(within_one_ulp_of_average(zeros, taps + 6, average<TestType>(zeros, true)));
    if (f32) REQUIRE(within_one_ulp_of_average(v, taps, average<TestType>(v, false)));
  }
}
