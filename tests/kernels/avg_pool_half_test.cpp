// The f16 and bf16 kernel against the reference kernel: the same bits on every geometry it
// covers, on both of its paths and for any thread count, and nothing touched where it declines
// (bf16 values whose exponents span too far for exact sums among them).
#include <cstdint>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

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

TEST_CASE("f16 and bf16 avg_pool rounds averages at and beside 16-bit midpoints as the reference",
          "[kernels][avg_pool_half]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  const Parallel pools[] = {Parallel(1), Parallel(2)};
  irrun::testing::check_midpoints(type,
                                  [&](const PoolGeometry& g, const Tensor& in, const Tensor& want) {
                                    check_paths(g, in, want, pools);
                                  });
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
      // Output rows past 4096 end in segments (they took a whole row's buffer: rows past some
      // 75000 outputs ran the reference kernel).
      window({1, 2}, {100000}, {2}, {1}, {0}, {0}, false, true),
      window({1, 1}, {3, 9000}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, false),
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

// A thread keeps the tables of its last geometry (avg_pool_half.cpp, layout_of): what the data
// decide must not be kept with them. Averages at or beside bf16 midpoints among the subnormals
// need the division-free ending declined (normal_averages), and values far above them allow it:
// each midpoint pattern runs after a run of its geometry on the latter. Then random geometries
// on values of either kind in either order, with an inf the kernel declines, and again covered.
TEST_CASE("f16 and bf16 avg_pool on a kept plan decides by each run's data",
          "[kernels][avg_pool_half]") {
  const ElementType type = GENERATE(ElementType::f16, ElementType::bf16);
  INFO(irrun::to_string(type));
  SplitMix64 rng(0xCE97ull);
  const Parallel par(2);
  const std::int64_t tiny = 0, large = 150;  // bf16 exponent fields
  const auto run = [&](const PoolGeometry& g, const Tensor& in) {
    Tensor out = poisoned_output(g, type);
    REQUIRE(irrun::kernels::avg_pool_half(in, out, g, par));
    CHECK(mismatches(g, out, run_reference(g, in, par)) == 0);
  };
  irrun::testing::check_midpoints(type,
                                  [&](const PoolGeometry& g, const Tensor& in, const Tensor&) {
                                    run(g, random_input(rng, g, 0, type, large));
                                    run(g, in);
                                  });
  for (int iter = 0; iter < 100; ++iter) {
    const PoolGeometry g = random_geometry(rng);
    INFO(describe(g));
    run(g, random_input(rng, g, 0, type, iter % 2 ? tiny : large));
    run(g, random_input(rng, g, 0, type, iter % 2 ? large : tiny));
    Tensor in = random_input(rng, g, 0, type, large);
    in.mutable_data<std::uint16_t>()[0] = specials(type)[0];
    Tensor out = poisoned_output(g, type);
    // Declined when a window reads the inf (none may: windows all in padding, or its row between
    // windows), else the reference's bits.
    if (irrun::kernels::avg_pool_half(in, out, g, par))
      CHECK(mismatches(g, out, run_reference(g, in, par)) == 0);
    else
      CHECK(same_bits(out, poisoned_output(g, type)));
    in.mutable_data<std::uint16_t>()[0] = 0;
    run(g, in);
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
