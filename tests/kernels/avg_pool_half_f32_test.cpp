// f16 and bf16 AvgPool through the f32 kernel against the reference kernel: the same bits on
// every geometry it covers, in pieces of any size, on both paths and for any thread count, with
// the outputs it cannot round from f32 (at 16-bit midpoints, inf and NaN) as the reference
// takes them; nothing touched where it declines.
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "irrun/float16.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "support/half_values.hpp"
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
using irrun::testing::mismatches;
using irrun::testing::poisoned_output;
using irrun::testing::random_geometry;
using irrun::testing::random_input;
using irrun::testing::run_reference;
using irrun::testing::same_bits;
using irrun::testing::shape_of;
using irrun::testing::specials;
using irrun::testing::SplitMix64;
using irrun::testing::window;

// Scratch budgets: the default (8 MiB), and a few KiB, which cut planes into bands of rows.
constexpr std::int64_t kChunks[] = {0, 4096, 700};

// The kernel against `want` on each path (AVX-512, AVX2, portable), each pool and each budget;
// false (untouched output) when it declines, which must then hold for all of them.
bool check_route(const PoolGeometry& g, const Tensor& in, const Tensor& want,
                 std::span<const Parallel> pools) {
  int ran = 0, declined = 0;
  for (const Parallel& par : pools)
    for (Isa isa : {Isa::best, Isa::avx2, Isa::portable})
      for (const std::int64_t chunk : kChunks) {
        // Outputs at midpoints taken as the reference does, however many, and as it chooses.
        const bool sums = chunk == 4096;
        INFO("chunk " << chunk << " threads " << par.threads() << " sums " << sums << " isa "
                      << static_cast<int>(isa));
        Tensor got = poisoned_output(g, in.type);
        if (irrun::kernels::avg_pool_half_f32(in, got, g, par, isa, chunk, sums)) {
          ++ran;
          CHECK(mismatches(g, got, want) == 0);
        } else {
          ++declined;
          CHECK(same_bits(got, poisoned_output(g, in.type)));
        }
      }
  // Budgets alone decide: a plane past the small ones declines (adaptive bins, windows too far
  // apart for bands) where the default one may run.
  CHECK((declined == 0 || declined % (static_cast<int>(pools.size()) * 3) == 0));
  return ran > 0;
}

// Any finite bf16 pattern: exponents spanning more than exact double sums hold (avg_pool_half
// declines them).
Tensor any_bf16(SplitMix64& rng, const PoolGeometry& g) {
  Tensor t = Tensor::zeros(ElementType::bf16, shape_of(g, g.in));
  auto* x = t.mutable_data<std::uint16_t>();
  for (std::size_t i = 0; i < t.element_count(); ++i) {
    do x[i] = static_cast<std::uint16_t>(rng.next());
    while ((x[i] & 0x7F80) == 0x7F80);
  }
  return t;
}

}  // namespace

TEST_CASE("f16 and bf16 avg_pool through f32 gives the reference's bits on random geometries",
          "[kernels][avg_pool_half_f32]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  SplitMix64 rng(0xF32F16ull);
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(3)};
  int covered = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const PoolGeometry g = random_geometry(rng);
    // Modes 0-2 (random_input), then any bf16 pattern, then an inf or NaN in some windows.
    const int mode = iter % 5;
    INFO(describe(g) << " mode " << mode);
    Tensor in = mode == 3 && type == ElementType::bf16 ? any_bf16(rng, g)
                                                       : random_input(rng, g, mode % 3, type);
    if (mode == 4) {
      auto* x = in.mutable_data<std::uint16_t>();
      for (int k = 0; k < 3; ++k)
        x[static_cast<std::size_t>(rng.range(0, static_cast<std::int64_t>(in.element_count()) -
                                                    1))] = specials(type)[rng.range(0, 3)];
    }
    const Tensor want = run_reference(g, in, pools[1]);
    covered += check_route(g, in, want, std::span(&pools[1], 1));
    if (iter % 20 == 0) check_route(g, in, want, pools);
  }
  CHECK(covered > 300);
}

TEST_CASE("f16 and bf16 avg_pool through f32 rounds averages at and beside 16-bit midpoints",
          "[kernels][avg_pool_half_f32]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  const Parallel pools[] = {Parallel(1), Parallel(2)};
  irrun::testing::check_midpoints(type,
                                  [&](const PoolGeometry& g, const Tensor& in, const Tensor& want) {
                                    CHECK(check_route(g, in, want, pools));
                                  });
}

TEST_CASE("bf16 avg_pool through f32 rounds sums with a rest past a double's bits once",
          "[kernels][avg_pool_half_f32]") {
  // Windows of 5 whose exact sums are 5m +- (2^-51 + 2^-70), m = 1 + 2^-8 or 1 + 3 * 2^-8 (bf16
  // midpoints): their nearest doubles are 5m +- 2^-50, with a rest of -+(2^-51 - 2^-70). The
  // average's double, mean_of(sum, rest, 5), is m (the average is 2^-53 from it), which rounded
  // to bf16 would tie to even, away from the average: m's even neighbour is on the other side.
  // Rounded once, the average goes to m's neighbour on its own side, 1 + 2^-7 both times
  // (half_mean.hpp). Scaled by signs and powers of 2.
  struct Case {
    double big, small, tiny[2];
    std::uint16_t once;  // the average rounded once, as bf16
  };
  const Case cases[] = {{5.0, 5.0 * 0x1p-8, {0x1p-51, 0x1p-70}, 0x3F81},
                        {5.0, 15.0 * 0x1p-8, {-0x1p-51, -0x1p-70}, 0x3F81}};
  const std::int64_t k = 40;
  const PoolGeometry g = window({1, 1}, {5 * k}, {5}, {5}, {0}, {0}, false, true);
  Tensor in = Tensor::zeros(ElementType::bf16, shape_of(g, g.in));
  auto* x = in.mutable_data<std::uint16_t>();
  std::vector<std::uint16_t> expected;
  for (std::int64_t o = 0; o < k; ++o) {
    const Case& c = cases[o % 2];
    const int e = static_cast<int>(o / 2 % 10) * 12 - 50;
    const double sign = o / 2 % 3 ? 1.0 : -1.0;
    const double values[] = {c.big, c.small, c.tiny[0], c.tiny[1], 0.0};
    for (std::int64_t t = 0; t < 5; ++t)  // rotated, so that the rest comes anywhere
      x[5 * o + t] = irrun::bf16_bits_from_double(sign * std::ldexp(values[(t + o) % 5], e));
    expected.push_back(
        irrun::bf16_bits_from_double(sign * std::ldexp(irrun::bf16_bits_to_double(c.once), e)));
  }
  const Parallel pools[] = {Parallel(1), Parallel(2)};
  const Tensor want = run_reference(g, in, pools[0]);
  const auto* w = want.data<std::uint16_t>();
  CHECK(std::vector<std::uint16_t>(w, w + k) == expected);
  CHECK(check_route(g, in, want, pools));
}

TEST_CASE("f16 and bf16 avg_pool through f32 on rows of infinities and NaNs of every payload",
          "[kernels][avg_pool_half_f32]") {
  // Long rows (every vector path's full width), windows of 3 holding one or two specials apart:
  // which NaN an output carries is the reference's choice, +inf and -inf give NaN.
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  SplitMix64 rng(0x5EC1A1ull);
  const PoolGeometry g = window({2, 3}, {200}, {3}, {1}, {1}, {1}, false, rng.coin());
  Tensor in = random_input(rng, g, 0, type);
  auto* x = in.mutable_data<std::uint16_t>();
  for (std::size_t i = 0; i + 1 < in.element_count(); i += 5) {
    x[i] = specials(type)[rng.range(0, 3)];
    if (rng.coin()) x[i + 1] = specials(type)[rng.range(0, 3)];
  }
  const Parallel pools[] = {Parallel(1), Parallel(2)};
  CHECK(check_route(g, in, run_reference(g, in, pools[0]), pools));
}

TEST_CASE("f16 and bf16 avg_pool through f32 on the benchmark patterns and large planes",
          "[kernels][avg_pool_half_f32]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  SplitMix64 rng(0xB16B16ull);
  const Parallel par(2);
  const PoolGeometry geometries[] = {
      window({1, 8}, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, false),  // S3
      window({1, 4}, {56, 56}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true),   // S1
      adaptive({2, 35}, {7, 7}, {1, 1}),                                       // S4, S7
      adaptive({2, 5}, {45, 37}, {17, 13}),                                    // S8: uneven
      window({1, 2}, {4, 32, 32}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false, true),
      window({1, 1}, {600, 900}, {5, 5}, {1, 1}, {2, 2}, {2, 2}, true, true),  // S9's, ceil
      adaptive({1, 1}, {120, 120}, {1, 1}),  // 14400 taps: past avg_pool_half's 2^13
  };
  for (const PoolGeometry& g : geometries) {
    for (int mode = 0; mode < 4; ++mode) {
      INFO(describe(g) << " mode " << mode);
      const Tensor in = mode == 3 && type == ElementType::bf16
                            ? any_bf16(rng, g)
                            : random_input(rng, g, mode % 3, type);
      Tensor got = poisoned_output(g, type);
      REQUIRE(irrun::kernels::avg_pool_half_f32(in, got, g, par));
      CHECK(mismatches(g, got, run_reference(g, in, par)) == 0);
    }
  }
}

TEST_CASE("f16 and bf16 avg_pool through f32 declines what it cannot cut and touches nothing",
          "[kernels][avg_pool_half_f32]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  SplitMix64 rng(0xDEC32ull);
  const Parallel par(2);
  // Adaptive bins follow from the whole axis: a plane past the budget is not cut into bands.
  const PoolGeometry bins = adaptive({1, 2}, {40, 40}, {7, 7});
  const Tensor in = random_input(rng, bins, 0, type);
  Tensor out = poisoned_output(bins, type);
  CHECK_FALSE(irrun::kernels::avg_pool_half_f32(in, out, bins, par, Isa::best, 4096));
  CHECK(same_bits(out, poisoned_output(bins, type)));
  REQUIRE(irrun::kernels::avg_pool_half_f32(in, out, bins, par));
  CHECK(mismatches(bins, out, run_reference(bins, in, par)) == 0);
  // Other element types.
  const Tensor f32 = Tensor::zeros(ElementType::f32, shape_of(bins, bins.in));
  Tensor f32_out = Tensor::zeros(ElementType::f32, shape_of(bins, bins.out));
  CHECK_FALSE(irrun::kernels::avg_pool_half_f32(f32, f32_out, bins, par));
}
