// f16 and bf16 MaxPool through the f32 fast kernel against the reference kernel: the same bits
// in values and indices on random window geometries, on data full of the values where the two
// could part (the 16-bit lowest, -inf, NaN, +-0, ties, the largest and smallest values), for
// every ISA path, 1-3 threads, chunks of planes and bands of rows; and nothing touched where it
// declines.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include <catch2/catch.hpp>

#include "irrun/kernels/max_pool.hpp"
#include "support/cpu_paths.hpp"
#include "support/guarded_copy.hpp"
#include "support/max_pool_geometries.hpp"
#include "support/pool_shape.hpp"
#include "support/split_mix.hpp"
#include "support/tensor_bits.hpp"

namespace {

using irrun::ElementType;
using irrun::Parallel;
using irrun::PoolGeometry;
using irrun::Tensor;
using irrun::kernels::Isa;
using irrun::testing::describe_max;
using irrun::testing::poisoned;
using irrun::testing::random_max_pool_geometry;
using irrun::testing::same_bits;
using irrun::testing::shape_of;
using irrun::testing::SplitMix64;
using i64 = std::int64_t;
using irrun::testing::Rounding;
using irrun::testing::set_axis;

// Patterns of each type: NaN (quiet and signalling), -inf, lowest, -largest subnormal... +inf.
const std::uint16_t kF16Special[] = {0x7E00, 0x7C01, 0xFE00, 0xFC00, 0xFBFF, 0xFBFE, 0x8001,
                                     0x8000, 0x0000, 0x0001, 0x03FF, 0x7BFF, 0x7C00};
const std::uint16_t kBf16Special[] = {0x7FC0, 0x7F81, 0xFFC0, 0xFF80, 0xFF7F, 0xFF7E, 0x8001,
                                      0x8000, 0x0000, 0x0001, 0x007F, 0x7F7F, 0x7F80};

// +-1, +-2 and +-0 (ties are common), often the special patterns; some inputs mostly special.
Tensor random_input(SplitMix64& rng, ElementType type, const PoolGeometry& g) {
  static const std::uint16_t kF16Small[] = {0x3C00, 0x4000, 0xBC00, 0xC000, 0x0000, 0x8000};
  static const std::uint16_t kBf16Small[] = {0x3F80, 0x4000, 0xBF80, 0xC000, 0x0000, 0x8000};
  const bool f16 = type == ElementType::f16;
  Tensor t = Tensor::zeros(type, shape_of(g, g.in));
  auto* x = t.mutable_data<std::uint16_t>();
  const i64 odds = rng.range(0, 3) == 0 ? 1 : 4;
  for (std::size_t i = 0; i < t.element_count(); ++i) {
    if (rng.range(0, odds) == 0)
      x[i] = (f16 ? kF16Special : kBf16Special)[rng.range(0, std::size(kF16Special) - 1)];
    else
      x[i] = (f16 ? kF16Small : kBf16Small)[rng.range(0, std::size(kF16Small) - 1)];
  }
  return t;
}

}  // namespace

TEST_CASE("max_pool_half matches the reference kernel bit for bit (f16, bf16)",
          "[kernels][max_pool][max_pool_half]") {
  SplitMix64 rng(0x4A1F16ull);
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(3)};
  for (int iter = 0; iter < 400; ++iter) {
    const PoolGeometry g = random_max_pool_geometry(rng);
    const ElementType type = iter % 2 ? ElementType::f16 : ElementType::bf16;
    const ElementType index_type = iter % 3 ? ElementType::i64 : ElementType::i32;
    // The default budget, bands of one output row, or a budget around a few planes.
    const i64 plane_bytes = 4 * g.in_plane_size() + 12 * g.out_plane_size();
    const i64 pick = rng.range(0, 3);
    const i64 chunk = pick == 0 ? 0 : pick == 1 ? 1 : rng.range(1, 3 * plane_bytes);
    const Parallel& par = pools[iter % 3];
    const Isa isa = iter % 5 == 0 ? Isa::portable : iter % 5 == 1 ? Isa::avx2 : Isa::best;
    INFO(describe_max(g) << (type == ElementType::f16 ? " f16" : " bf16") << " chunk " << chunk
                         << " threads " << par.threads() << " isa " << static_cast<int>(isa));
    const Tensor in = random_input(rng, type, g);
    const auto out_shape = shape_of(g, g.out);
    Tensor want = poisoned(type, out_shape), want_idx = poisoned(index_type, out_shape);
    irrun::kernels::max_pool_reference(in, want, &want_idx, g, pools[0]);
    Tensor got = poisoned(type, out_shape), got_idx = poisoned(index_type, out_shape);
    REQUIRE(irrun::kernels::max_pool_half(in, got, &got_idx, g, par, isa, chunk));
    CHECK(same_bits(got, want));
    CHECK(same_bits(got_idx, want_idx));
    Tensor values_only = poisoned(type, out_shape);
    REQUIRE(irrun::kernels::max_pool_half(in, values_only, nullptr, g, par, isa, chunk));
    CHECK(same_bits(values_only, want));
  }
}

TEST_CASE("max_pool_half counts indices over the whole tensor across its chunks and bands",
          "[kernels][max_pool][max_pool_half]") {
  // 2x3 planes in chunks of 1, 2 and 4 planes and in bands of 1 or 2 output rows, the indices
  // counted from every axis (i32 too).
  SplitMix64 rng(0xC4A2Cull);
  const Parallel par(2);
  PoolGeometry g;
  g.spatial_rank = 2;
  g.batch = 2;
  g.channels = 3;
  irrun::testing::set_axis(g, 1, 5, 2, 1, 1, 0, 0, irrun::testing::Rounding::floor);
  irrun::testing::set_axis(g, 2, 9, 3, 2, 1, 1, 1, irrun::testing::Rounding::ceil);
  for (std::size_t axis = 0; axis < 4; ++axis) {
    g.index_axis = axis;
    for (const ElementType index_type : {ElementType::i32, ElementType::i64}) {
      const Tensor in = random_input(rng, ElementType::f16, g);
      const auto out_shape = shape_of(g, g.out);
      Tensor want = poisoned(ElementType::f16, out_shape),
             want_idx = poisoned(index_type, out_shape);
      irrun::kernels::max_pool_reference(in, want, &want_idx, g, par);
      const i64 plane_bytes = 4 * g.in_plane_size() + 12 * g.out_plane_size();
      for (const i64 chunk :
           {i64{1}, plane_bytes - 1, plane_bytes, 2 * plane_bytes, 4 * plane_bytes}) {
        INFO("axis " << axis << " chunk " << chunk);
        Tensor got = poisoned(ElementType::f16, out_shape), idx = poisoned(index_type, out_shape);
        REQUIRE(irrun::kernels::max_pool_half(in, got, &idx, g, par, Isa::best, chunk));
        CHECK(same_bits(got, want));
        CHECK(same_bits(idx, want_idx));
      }
    }
  }
}

TEST_CASE("max_pool_half declines what the f32 kernel does not cover and touches nothing",
          "[kernels][max_pool][max_pool_half]") {
  const Parallel par(2);
  PoolGeometry g;
  g.spatial_rank = 1;
  irrun::testing::set_axis(g, 2, 600, 300, 1, 1, 0, 0, irrun::testing::Rounding::floor);
  const Tensor in = Tensor::zeros(ElementType::f16, shape_of(g, g.in));
  const Tensor untouched = poisoned(ElementType::f16, shape_of(g, g.out));
  Tensor out = poisoned(ElementType::f16, shape_of(g, g.out));
  CHECK_FALSE(irrun::kernels::max_pool_half(in, out, nullptr, g, par));  // kernel past 256
  CHECK(same_bits(out, untouched));
  PoolGeometry adaptive;
  adaptive.adaptive = true;
  adaptive.spatial_rank = 1;
  adaptive.in[2] = 8;
  adaptive.out[2] = 4;
  const Tensor a_in = Tensor::zeros(ElementType::f16, shape_of(adaptive, adaptive.in));
  Tensor a_out = Tensor::zeros(ElementType::f16, shape_of(adaptive, adaptive.out));
  CHECK_FALSE(irrun::kernels::max_pool_half(a_in, a_out, nullptr, adaptive, par));
  // Large planes go in bands: 4M and 9M inputs (28 and 36 MB of f32 copies) give the reference's
  // bits, the second in bands of rows.
  for (const i64 side : {2000, 3000}) {
    PoolGeometry big;
    big.spatial_rank = 2;
    irrun::testing::set_axis(big, 1, side, 2, 2, 1, 0, 0, irrun::testing::Rounding::floor);
    irrun::testing::set_axis(big, 2, side, 2, 2, 1, 0, 0, irrun::testing::Rounding::floor);
    INFO("side " << side);
    SplitMix64 rng(static_cast<std::uint64_t>(side));
    const Tensor big_in = random_input(rng, ElementType::f16, big);
    const auto shape = shape_of(big, big.out);
    Tensor want = poisoned(ElementType::f16, shape), want_idx = poisoned(ElementType::i64, shape);
    irrun::kernels::max_pool_reference(big_in, want, &want_idx, big, par);
    Tensor got = poisoned(ElementType::f16, shape), idx = poisoned(ElementType::i64, shape);
    REQUIRE(irrun::kernels::max_pool_half(big_in, got, &idx, big, par));
    CHECK(same_bits(got, want));
    CHECK(same_bits(idx, want_idx));
  }
  // A band of one output row whose f32 input rows alone pass 32 MiB (2100 rows of 4000) is
  // declined; 1000 rows run. (On the portable path: vector rows take both without f32 copies.)
  for (const i64 rows : {2100, 1000}) {
    PoolGeometry tall;
    tall.spatial_rank = 2;
    irrun::testing::set_axis(tall, 1, 2100, rows, rows, 1, 0, 0, irrun::testing::Rounding::floor);
    irrun::testing::set_axis(tall, 2, 4000, 1, 1, 1, 0, 0, irrun::testing::Rounding::floor);
    INFO("kernel rows " << rows);
    SplitMix64 rng(static_cast<std::uint64_t>(rows));
    const Tensor tall_in = random_input(rng, ElementType::bf16, tall);
    const auto shape = shape_of(tall, tall.out);
    Tensor want = poisoned(ElementType::bf16, shape), want_idx = poisoned(ElementType::i64, shape);
    irrun::kernels::max_pool_reference(tall_in, want, &want_idx, tall, par);
    Tensor got = poisoned(ElementType::bf16, shape), idx = poisoned(ElementType::i64, shape);
    const bool runs = rows == 1000;
    CHECK(irrun::kernels::max_pool_half(tall_in, got, &idx, tall, par, Isa::portable) == runs);
    CHECK(same_bits(got, runs ? want : poisoned(ElementType::bf16, shape)));
    CHECK(same_bits(idx, runs ? want_idx : poisoned(ElementType::i64, shape)));
    if (!irrun::testing::cpu_has_avx512()) continue;
    Tensor values = poisoned(ElementType::bf16, shape);
    REQUIRE(irrun::kernels::max_pool_half(tall_in, values, &idx, tall, par));
    CHECK(same_bits(values, want));
    CHECK(same_bits(idx, want_idx));
  }
  // Windows dilated or strided far along the band axis: every band would widen rows no window
  // reads, seconds where the reference takes a millisecond: declined (on the portable path: vector
  // rows take it), and max_pool gives the reference's bits. Undilated, the same plane runs.
  for (const i64 dilation : {2150000, 1}) {
    PoolGeometry far;
    far.spatial_rank = 1;
    irrun::testing::set_axis(far, 2, 2200000, 2, 1, dilation, 0, 0,
                             irrun::testing::Rounding::floor);
    SplitMix64 rng(static_cast<std::uint64_t>(dilation));
    const Tensor far_in = random_input(rng, ElementType::f16, far);
    const auto shape = shape_of(far, far.out);
    Tensor want = poisoned(ElementType::f16, shape), want_idx = poisoned(ElementType::i64, shape);
    irrun::kernels::max_pool_reference(far_in, want, &want_idx, far, par);
    Tensor got = poisoned(ElementType::f16, shape), idx = poisoned(ElementType::i64, shape);
    INFO("dilation " << dilation);
    CHECK(irrun::kernels::max_pool_half(far_in, got, &idx, far, par, Isa::avx2) == (dilation == 1));
    if (dilation != 1) {
      CHECK(same_bits(got, poisoned(ElementType::f16, shape)));
      irrun::kernels::max_pool(far_in, got, &idx, far, par);
    }
    CHECK(same_bits(got, want));
    CHECK(same_bits(idx, want_idx));
  }
  PoolGeometry strided;  // 400 of 400000 rows read, in bands
  strided.spatial_rank = 2;
  irrun::testing::set_axis(strided, 1, 400000, 2, 1000, 1, 0, 0, irrun::testing::Rounding::floor);
  irrun::testing::set_axis(strided, 2, 8, 2, 2, 1, 0, 0, irrun::testing::Rounding::floor);
  const Tensor strided_in = Tensor::zeros(ElementType::bf16, shape_of(strided, strided.in));
  Tensor strided_out = poisoned(ElementType::bf16, shape_of(strided, strided.out));
  CHECK_FALSE(  // (portable: the 16-bit rows would take it)
      irrun::kernels::max_pool_half(strided_in, strided_out, nullptr, strided, par, Isa::portable));
  const Tensor f32_in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
  Tensor f32_out = Tensor::zeros(ElementType::f32, shape_of(g, g.out));
  CHECK_FALSE(irrun::kernels::max_pool_half(f32_in, f32_out, nullptr, g, par));
}

// Narrow rows (up to 64 columns and outputs, any stride) and rows of more than 64 columns or
// outputs with stride 1 or 2: the rows load f16 and bf16 and store them, no f32 copies; values
// and i32 / i64 indices, or values alone. The 16-bit lowest (never taken: index 0 where nothing
// exceeds it), -inf, NaN and both zeros (values alone take stride 2's taps and narrow rows'
// outputs from the rows' maxima, again in order after a -0), subnormals, the largest values;
// inputs with and without -0; masked loads at the rows' ends and padding (the input guarded by
// unreadable pages); a layer past 16 MiB (it reads ahead); 1 and 3 threads; AVX-512 and AVX2.
// Wide rows with strides of 3, f16 on AVX2 where the row blocks would load it (their positions,
// windows of more than three columns) and the portable path take the f32 copies.
TEST_CASE("max_pool_half_rows loads and stores 16-bit values and their indices",
          "[kernels][max_pool][max_pool_half]") {
  SplitMix64 rng(0x16B0115ull);
  struct Axis {
    i64 in, k, s, d, pb, pe;
  };
  const auto geometry = [](i64 c, std::initializer_list<Axis> axes) {
    PoolGeometry g;
    g.spatial_rank = axes.size();
    g.channels = c;
    std::size_t a = 3 - axes.size();
    for (const Axis& x : axes) set_axis(g, a++, x.in, x.k, x.s, x.d, x.pb, x.pe, Rounding::floor);
    return g;
  };
  const PoolGeometry cases[] = {
      geometry(2, {{3, 1, 1, 1, 0, 0}, {9, 3, 2, 1, 0, 1}, {112, 3, 2, 1, 0, 1}}),  // I3D
      geometry(3, {{9, 3, 2, 1, 1, 1}, {112, 3, 2, 1, 1, 1}}),                      // M1
      geometry(16, {{41, 3, 2, 1, 0, 1}, {128, 3, 2, 1, 0, 1}}),  // pads_end in a block's c
      geometry(2, {{7, 3, 2, 2, 2, 2}, {99, 3, 2, 2, 2, 2}}),     // dilated, padded
      geometry(2, {{6, 3, 1, 1, 1, 1}, {70, 3, 1, 1, 1, 1}}),     // stride 1
      geometry(1, {{5, 2, 1, 1, 0, 0}, {49, 2, 1, 1, 0, 0}}),     // 48 outputs of 49 columns
      geometry(1, {{300, 5, 2, 1, 2, 2}}),                        // 1-D, 5 taps
      geometry(16, {{40, 1, 1, 1, 0, 0}, {112, 3, 2, 1, 0, 1}, {112, 3, 2, 1, 0, 1}}),  // 20 MB
      // Narrow rows: I3D's 3x3x3 s1 and s2 on 28x28 and 14x14 planes, 2x2x2 s2, rows of 9
      // columns (one vector), 17 and 33 (two and three), 48, stride 3, 1-D, dilated.
      geometry(3, {{6, 3, 1, 1, 1, 1}, {28, 3, 1, 1, 1, 1}, {28, 3, 1, 1, 1, 1}}),
      geometry(3, {{7, 3, 2, 1, 0, 1}, {28, 3, 2, 1, 0, 1}, {28, 3, 2, 1, 0, 1}}),
      geometry(5, {{4, 2, 2, 1, 0, 0}, {14, 2, 2, 1, 0, 0}, {14, 2, 2, 1, 0, 0}}),
      geometry(7, {{5, 3, 1, 1, 1, 1}, {9, 3, 1, 1, 1, 1}}),
      geometry(4, {{6, 3, 2, 1, 1, 1}, {17, 3, 2, 1, 1, 1}}),
      geometry(4, {{5, 3, 1, 1, 0, 0}, {33, 3, 1, 1, 0, 0}}),
      geometry(2, {{4, 2, 1, 1, 0, 1}, {48, 2, 1, 1, 0, 1}}),
      geometry(3, {{7, 3, 3, 1, 1, 1}, {40, 4, 3, 1, 1, 1}}),
      geometry(9, {{44, 5, 1, 1, 2, 2}}),
      geometry(2, {{8, 3, 1, 2, 2, 2}, {30, 3, 1, 2, 2, 2}}),
      // AVX-512's narrow rows of four vectors: I3D's 1x3x3 s(1,2,2) on 56x56, 3x3x3 s1 on 64
      // columns, 60 columns with stride 3 (wider ones: the f32 copies).
      geometry(2, {{3, 1, 1, 1, 0, 0}, {9, 3, 2, 1, 0, 1}, {56, 3, 2, 1, 0, 1}}),
      geometry(2, {{4, 3, 1, 1, 1, 1}, {5, 3, 1, 1, 1, 1}, {64, 3, 1, 1, 1, 1}}),
      geometry(3, {{6, 3, 3, 1, 1, 1}, {60, 3, 3, 1, 0, 0}}),
      geometry(2, {{5, 3, 3, 1, 1, 1}, {66, 3, 3, 1, 0, 0}}),
      // Wide rows of two-column windows, stride 1 and 2, pads past a vector.
      geometry(2, {{5, 2, 1, 1, 0, 1}, {81, 2, 1, 1, 0, 1}}),
      geometry(2, {{6, 2, 2, 1, 0, 0}, {130, 2, 2, 1, 0, 0}}),
      geometry(2, {{5, 3, 2, 1, 1, 1}, {100, 3, 2, 1, 20, 20}}),
      // Rows of eight columns or fewer (eight lanes on every path: I3D's 7x7 planes), 49-64 on
      // AVX2 (seven and eight vectors; f16 positions with stride 1 or 2: the copies), five taps
      // on 90 columns (AVX2: the row blocks; f16 the copies).
      geometry(3, {{6, 3, 1, 1, 1, 1}, {7, 3, 1, 1, 1, 1}, {7, 3, 1, 1, 1, 1}}),
      geometry(2, {{5, 2, 2, 1, 0, 0}, {8, 3, 2, 1, 1, 1}}),
      geometry(2, {{4, 3, 1, 1, 1, 1}, {57, 3, 1, 1, 1, 1}}),
      geometry(2, {{5, 3, 3, 1, 0, 0}, {63, 3, 3, 1, 0, 0}}),
      geometry(2, {{5, 5, 1, 1, 2, 2}, {90, 5, 1, 1, 2, 2}}),
  };
  // Where each path takes 16-bit rows: narrow ones (up to 64 columns and outputs, any stride),
  // except f16 positions of 49-64 columns with stride 1 or 2 on AVX2; wider ones with stride 1
  // or 2, except on AVX2 f16 positions and f16 windows not of two or three columns.
  const auto rows16 = [](const PoolGeometry& g, bool f16, bool with, bool avx512) {
    const i64 iw = g.in[2], ow = g.out[2], s = g.stride[2], k = g.kernel[2];
    const bool avx2_f16 = f16 && !avx512;
    if (iw <= 64 && ow <= 64) return !(avx2_f16 && with && iw > 48 && s <= 2);
    if (s > 2) return false;
    return !avx2_f16 || (!with && k >= 2 && k <= 3 && g.dilation[2] == 1);
  };
  const Parallel serial(1), three(3);
  const bool avx512 = irrun::testing::cpu_has_avx512(), avx2 = irrun::testing::cpu_has_f16c();
  for (const PoolGeometry& g : cases) {
    for (const ElementType type : {ElementType::f16, ElementType::bf16}) {
      for (const bool neg_zero : {true, false}) {
        INFO(describe_max(g) << (type == ElementType::f16 ? " f16" : " bf16") << ", -0 "
                             << neg_zero);
        Tensor in = random_input(rng, type, g);
        if (!neg_zero)
          for (std::uint16_t& v : std::span(in.mutable_data<std::uint16_t>(), in.element_count()))
            if (v == 0x8000) v = 0;
        const auto shape = shape_of(g, g.out);
        // Index type f16 stands for "no indices".
        for (const ElementType it : {ElementType::f16, ElementType::i32, ElementType::i64}) {
          const bool with = it != ElementType::f16;
          INFO("indices " << (with ? it == ElementType::i32 ? "i32" : "i64" : "none"));
          Tensor want = poisoned(type, shape), want_idx = poisoned(ElementType::i64, shape);
          if (with) want_idx = poisoned(it, shape);
          irrun::kernels::max_pool_reference(in, want, with ? &want_idx : nullptr, g, serial);
          const auto check = [&](const Tensor& x, const Parallel& par, Isa isa) {
            INFO("isa " << (isa == Isa::best ? "best" : "avx2") << ", threads " << par.threads());
            const bool best = isa == Isa::best;
            const bool runs = avx2 && rows16(g, type == ElementType::f16, with, best && avx512);
            Tensor got = poisoned(type, shape), idx = poisoned(with ? it : ElementType::i64, shape);
            REQUIRE(irrun::kernels::max_pool_half_rows(x, got, with ? &idx : nullptr, g, par,
                                                       isa) == runs);
            CHECK(same_bits(got, runs ? want : poisoned(type, shape)));
            if (with) CHECK(same_bits(idx, runs ? want_idx : poisoned(it, shape)));
            // Values between canaries: no store past the output (a group's last block is masked).
            constexpr std::size_t kGuard = 32;
            std::vector<std::uint16_t> buffer(got.element_count() + 2 * kGuard, 0x5A5A);
            Tensor guarded = Tensor::wrap(type, shape, buffer.data() + kGuard);
            irrun::kernels::max_pool_half_rows(x, guarded, nullptr, g, par, isa);
            CHECK(std::count(buffer.begin(), buffer.begin() + kGuard, 0x5A5A) == kGuard);
            CHECK(std::count(buffer.end() - kGuard, buffer.end(), 0x5A5A) == kGuard);
          };
          for (const Isa isa : {Isa::best, Isa::avx2})
            for (const Parallel* par : {&serial, &three}) check(in, *par, isa);
          if (in.element_count() > 100000) continue;
          irrun::testing::with_guarded_copies(in, [&](const Tensor& copy, const char* where) {
            INFO(where);
            for (const Isa isa : {Isa::best, Isa::avx2}) check(copy, serial, isa);
          });
        }
      }
    }
  }
  const auto declined = [&](const PoolGeometry& g, Isa isa) {
    const Tensor in = random_input(rng, ElementType::f16, g);
    Tensor out = poisoned(ElementType::f16, shape_of(g, g.out));
    const bool ran = irrun::kernels::max_pool_half_rows(in, out, nullptr, g, serial, isa);
    return !ran && same_bits(out, poisoned(ElementType::f16, shape_of(g, g.out)));
  };
  CHECK(declined(geometry(2, {{50, 3, 3, 1, 0, 0}, {150, 3, 3, 1, 0, 0}}), Isa::best));
  CHECK(declined(geometry(2, {{9, 5, 2, 1, 2, 2}, {112, 5, 2, 1, 2, 2}}), Isa::avx2));  // f16
  CHECK(declined(geometry(2, {{9, 3, 2, 1, 1, 1}, {112, 3, 2, 2, 1, 1}}), Isa::avx2));
  CHECK(declined(geometry(2, {{9, 3, 2, 1, 1, 1}, {112, 3, 2, 1, 1, 1}}), Isa::portable));
  CHECK(declined(geometry(2, {{7, 3, 1, 1, 1, 1}, {7, 3, 1, 1, 1, 1}}), Isa::portable));
}
