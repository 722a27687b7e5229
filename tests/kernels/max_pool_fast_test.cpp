// The fast MaxPool kernel against the reference kernel: the same bits in values and indices on
// random window geometries (1-D/2-D/3-D, widths around the vector sizes, pads up to and beyond
// the kernel, dilations, floor/ceil/ceil_torch output sizes, every index axis), on data full of
// NaN, +-inf, +-0, lowest() and ties, for every ISA path and 1/2/3/7 threads; plus hand cases.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <catch2/catch.hpp>

#include "../../lib/src/kernels/max_lanes.hpp"
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
using irrun::testing::poisoned;
using irrun::testing::same_bits;
using Rng = irrun::testing::SplitMix64;
using i64 = std::int64_t;

using irrun::testing::describe_max;
using irrun::testing::random_max_pool_geometry;
using irrun::testing::Rounding;
using irrun::testing::set_axis;
using irrun::testing::shape_of;

// AdaptiveMaxPool with equal bins (in % out == 0 on every axis): bins of 1-2 columns (the
// stride-1 and -2 rows), 3-9 (column-first rows) or 17-40 (AVX2's portable rows past 16), 1-5
// rows and planes, 1-40 bins along W (past one and two blocks of 16 and 8 outputs), 1-9 along
// H, 1-3 along D.
PoolGeometry random_adaptive_geometry(Rng& rng) {
  PoolGeometry g;
  g.adaptive = true;
  g.spatial_rank = static_cast<std::size_t>(rng.range(1, 3));
  g.batch = rng.range(1, 2);
  g.channels = rng.range(1, 3);
  for (std::size_t a = 3 - g.spatial_rank; a < 3; ++a) {
    const i64 out = a == 2 ? rng.range(1, 40) : rng.range(1, g.spatial_rank == 3 ? 3 : 9);
    g.out[a] = out;
    const i64 pick = rng.range(0, 9);
    const i64 bin_w = pick < 4 ? rng.range(1, 2) : pick < 9 ? rng.range(3, 9) : rng.range(17, 40);
    g.in[a] = out * (a == 2 ? bin_w : rng.range(1, 5));
  }
  g.index_axis = 2;  // AdaptiveMaxPool's indices count within each (n, c) plane
  return g;
}

// Small values so ties are common, plus NaN, +-inf, +-0 and lowest().
template <class T>
Tensor random_input(Rng& rng, const PoolGeometry& g) {
  constexpr ElementType type = std::is_same_v<T, float> ? ElementType::f32 : ElementType::f64;
  Tensor t = Tensor::zeros(type, shape_of(g, g.in));
  T* x = t.mutable_data<T>();
  const auto special = rng.range(0, 3);  // some inputs are mostly special values
  for (std::size_t i = 0; i < t.element_count(); ++i) {
    const auto v = rng.range(0, special == 0 ? 9 : 24);
    switch (v) {
      case 0:
        x[i] = std::numeric_limits<T>::quiet_NaN();
        break;
      case 1:
        x[i] = -std::numeric_limits<T>::infinity();
        break;
      case 2:
        x[i] = std::numeric_limits<T>::infinity();
        break;
      case 3:
        x[i] = std::numeric_limits<T>::lowest();
        break;
      case 4:
        x[i] = T(-0.0);
        break;
      case 5:
        x[i] = T(0.0);
        break;
      default:
        x[i] = static_cast<T>(rng.range(-3, 3));
    }
  }
  return t;
}

struct Result {
  Tensor values, indices;
};

// index_type f32 stands for "no indices".
Result run(const PoolGeometry& g, const Tensor& in, ElementType index_type, const Parallel& par,
           bool fast, Isa isa = Isa::best) {
  const auto out_shape = shape_of(g, g.out);
  Result r{poisoned(in.type, out_shape), poisoned(ElementType::i64, out_shape)};
  const bool with_indices = index_type != ElementType::f32;
  if (with_indices) r.indices = poisoned(index_type, out_shape);
  Tensor* indices = with_indices ? &r.indices : nullptr;
  if (fast) {
    REQUIRE(irrun::kernels::max_pool_fast(in, r.values, indices, g, par, isa));
  } else {
    irrun::kernels::max_pool_reference(in, r.values, indices, g, par);
  }
  return r;
}

const char* isa_name(Isa isa) {
  return isa == Isa::best ? "best" : isa == Isa::avx2 ? "avx2" : "portable";
}

// `adaptive`: AdaptiveMaxPool geometries, and every other input without NaN (a NaN in a bin's
// rows sends its output row to the fix-up, so NaN-free inputs test the vector path).
template <class T>
void differential(std::uint64_t seed, int iterations, bool adaptive = false) {
  Rng rng(seed);
  const Parallel serial(1);
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(3), Parallel(7)};
  int mismatches = 0;
  for (int iter = 0; iter < iterations && mismatches < 5; ++iter) {
    const PoolGeometry g = adaptive ? random_adaptive_geometry(rng) : random_max_pool_geometry(rng);
    INFO(describe_max(g));
    Tensor in = random_input<T>(rng, g);
    if (adaptive && iter % 2 == 0)
      for (T& v : std::span(in.mutable_data<T>(), in.element_count()))
        if (v != v) v = static_cast<T>(rng.range(-3, 3));
    REQUIRE(irrun::kernels::max_pool_fast_covers(in.type, g));
    for (const ElementType it : {ElementType::i64, ElementType::i32, ElementType::f32}) {
      INFO("indices " << (it == ElementType::f32   ? "none"
                          : it == ElementType::i32 ? "i32"
                                                   : "i64"));
      const Result want = run(g, in, it, serial, false);
      for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
        INFO("isa " << isa_name(isa));
        // Thread counts only on one ISA each round, to keep the test quick.
        for (const Parallel& par : pools) {
          if (par.threads() != 1 && (iter + static_cast<int>(isa)) % 3 != 0) continue;
          INFO("threads " << par.threads());
          const Result got = run(g, in, it, par, true, isa);
          const bool ok = same_bits(got.values, want.values) &&
                          (it == ElementType::f32 || same_bits(got.indices, want.indices));
          CHECK(ok);
          mismatches += ok ? 0 : 1;
        }
      }
    }
  }
}

PoolGeometry geometry_1d(i64 in, i64 k, i64 s, i64 pb, i64 pe, i64 d = 1) {
  PoolGeometry g;
  g.spatial_rank = 1;
  set_axis(g, 2, in, k, s, d, pb, pe, Rounding::floor);
  return g;
}

Tensor input_1d(const std::vector<float>& v) {
  Tensor t = Tensor::zeros(ElementType::f32, {1, 1, static_cast<i64>(v.size())});
  std::memcpy(t.mutable_data<float>(), v.data(), v.size() * sizeof(float));
  return t;
}

}  // namespace

TEST_CASE("max_pool_fast matches the reference kernel bit for bit (f32)",
          "[kernels][max_pool][max_pool_fast]") {
  differential<float>(0x4D50465, 400);
}

TEST_CASE("max_pool_fast matches the reference kernel bit for bit (f64)",
          "[kernels][max_pool][max_pool_fast]") {
  differential<double>(0x4D50466, 120);
}

// AdaptiveMaxPool with equal bins runs the window kernel (kernel = stride = bin) and redoes the
// outputs where OpenVINO's adaptive reduction differs: rows starting with NaN, bins without an
// element above lowest().
TEST_CASE("max_pool_fast matches the reference on adaptive equal bins (f32, f64)",
          "[kernels][max_pool][max_pool_fast]") {
  differential<float>(0xADA9, 300, true);
  differential<double>(0xADAA, 100, true);
}

// Strides of 3 or more reduce columns first; rows that tile exactly (equal bins, k = s windows)
// run in flat groups of several output rows (up to 4096 columns), the last group of a plane
// short. Wide rows split into several groups per plane here, with and without NaN.
TEST_CASE("max_pool_fast column-first rows and flat groups", "[kernels][max_pool][max_pool_fast]") {
  Rng rng(0xF1A7);
  const auto adaptive = [](i64 c, i64 ih, i64 iw, i64 oh, i64 ow) {
    PoolGeometry g;
    g.adaptive = true;
    g.spatial_rank = 2;
    g.channels = c;
    g.in = {1, ih, iw};
    g.out = {1, oh, ow};
    g.index_axis = 2;
    return g;
  };
  const auto window = [](i64 c, i64 ih, i64 iw, i64 k, i64 s, i64 pad) {
    PoolGeometry g;
    g.spatial_rank = 2;
    g.channels = c;
    set_axis(g, 1, ih, k, s, 1, pad, pad, Rounding::floor);
    set_axis(g, 2, iw, k, s, 1, pad, pad, Rounding::floor);
    return g;
  };
  const PoolGeometry cases[] = {
      adaptive(3, 64, 300, 16, 50),  // bins of 4x6: groups of 13 rows, then 3
      adaptive(2, 28, 28, 7, 7),     // M3's bins: one group of seven rows
      adaptive(2, 9, 4608, 3, 128),  // rows wider than a group: groups of one row
      window(2, 40, 1200, 4, 4, 0),  // k = s: flat, groups of 3 rows, then 1
      window(2, 30, 1203, 3, 3, 0),  // in_w not a multiple of s: row by row
      window(2, 30, 301, 5, 3, 2),   // padded, overlapping: row by row
  };
  const Parallel serial(1), two(2);
  for (const PoolGeometry& g : cases) {
    INFO(describe_max(g));
    for (const bool nan : {false, true}) {
      Tensor in = random_input<float>(rng, g);
      if (!nan)
        for (float& v : std::span(in.mutable_data<float>(), in.element_count()))
          if (v != v) v = static_cast<float>(rng.range(-3, 3));
      for (const ElementType it : {ElementType::i64, ElementType::f32}) {
        const Result want = run(g, in, it, serial, false);
        for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable})
          for (const Parallel* par : {&serial, &two}) {
            INFO("isa " << isa_name(isa) << ", threads " << par->threads() << ", NaN " << nan);
            const Result got = run(g, in, it, *par, true, isa);
            CHECK(same_bits(got.values, want.values));
            if (it != ElementType::f32) CHECK(same_bits(got.indices, want.indices));
          }
      }
    }
  }
}

namespace {

struct Axis {
  i64 in, k, s, d, pb, pe;
};

PoolGeometry geometry(i64 c, std::initializer_list<Axis> axes, Rounding r = Rounding::floor) {
  PoolGeometry g;
  g.spatial_rank = axes.size();
  g.channels = c;
  std::size_t a = 3 - axes.size();
  for (const Axis& x : axes) set_axis(g, a++, x.in, x.k, x.s, x.d, x.pb, x.pe, r);
  return g;
}

// Every case on inputs with -0 and NaN, with NaN but no -0, with neither, and of -1 and both
// zeros alone; with and without indices, every ISA, 1 and 3 threads, and on copies guarded by
// an unreadable page.
void check_orders(std::span<const PoolGeometry> cases, Rng& rng) {
  const Parallel serial(1), three(3);
  for (const PoolGeometry& g : cases) {
    INFO(describe_max(g));
    // -0 and NaN; NaN but no -0; neither; only -1, -0 and +0 (windows of both zeros, whose
    // first one in the recurrence's order gives the sign).
    for (const int data : {0, 1, 2, 3}) {
      Tensor in = random_input<float>(rng, g);
      for (float& v : std::span(in.mutable_data<float>(), in.element_count())) {
        if (data > 0 && v == 0.0f) v = 0.0f;
        if (data > 1 && v != v) v = static_cast<float>(rng.range(-3, 3));
        if (data == 3) v = rng.range(0, 2) == 0 ? -1.0f : rng.range(0, 1) ? 0.0f : -0.0f;
      }
      INFO("data " << data);
      for (const ElementType it : {ElementType::i64, ElementType::f32}) {
        const Result want = run(g, in, it, serial, false);
        for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable})
          for (const Parallel* par : {&serial, &three}) {
            INFO("isa " << isa_name(isa) << ", threads " << par->threads());
            const Result got = run(g, in, it, *par, true, isa);
            CHECK(same_bits(got.values, want.values));
            if (it != ElementType::f32) CHECK(same_bits(got.indices, want.indices));
          }
        irrun::testing::with_guarded_copies(in, [&](const Tensor& copy, const char* where) {
          for (const Isa isa : {Isa::best, Isa::avx2}) {
            INFO("isa " << isa_name(isa) << ", " << where);
            const Result got = run(g, copy, it, serial, true, isa);
            CHECK(same_bits(got.values, want.values));
            if (it != ElementType::f32) CHECK(same_bits(got.indices, want.indices));
          }
        });
      }
    }
  }
}

}  // namespace

// Rows of up to 64 columns and outputs run as narrow rows (AVX-512: up to 8 columns in the AVX2
// kernel's vectors, then one to four vectors of 16; AVX2: one to eight of 8, its positions on rows
// of 49-64 with stride 1 or 2 from the row blocks):
// whole loads past a row's end within the plane, groups of whole planes' rows stored back to
// back, and values alone order-free unless a column's maximum is -0 (then again with
// positions). Inputs with and without
// -0 and NaN, planes of several groups (the last one short), every tap slot width, the rows'
// vectors past the input's end guarded by an unreadable page.
TEST_CASE("max_pool_fast narrow rows", "[kernels][max_pool][max_pool_fast]") {
  Rng rng(0x4A77);
  const PoolGeometry cases[] = {
      geometry(3, {{4, 3, 1, 1, 1, 1}, {7, 3, 1, 1, 1, 1}, {7, 3, 1, 1, 1, 1}}),  // I3D's 7x7
      geometry(2, {{3, 3, 1, 1, 1, 1}, {14, 3, 1, 1, 1, 1}, {14, 3, 1, 1, 1, 1}}),
      geometry(2, {{3, 3, 1, 1, 1, 1}, {28, 3, 1, 1, 1, 1}, {28, 3, 1, 1, 1, 1}}),  // two vectors
      geometry(2, {{4, 2, 2, 1, 0, 0}, {14, 2, 2, 1, 0, 0}, {14, 2, 2, 1, 0, 0}}),
      geometry(2, {{5, 3, 2, 1, 0, 1}, {28, 3, 2, 1, 0, 1}, {28, 3, 2, 1, 0, 1}}),
      geometry(2, {{2, 1, 1, 1, 0, 0}, {16, 3, 2, 1, 0, 1}, {16, 3, 2, 1, 0, 1}}),
      geometry(3, {{10, 3, 2, 1, 0, 0}, {5, 3, 2, 1, 0, 0}}),  // 5x3 planes
      geometry(2, {{7, 7, 1, 1, 0, 0}, {7, 7, 1, 1, 0, 0}}),   // global 7x7: 7 tap slots
      geometry(2, {{6, 3, 1, 2, 2, 2}, {9, 3, 1, 2, 2, 2}}),   // dilated, padded
      geometry(2, {{5, 3, 3, 1, 1, 1}, {31, 4, 3, 1, 1, 2}}, Rounding::ceil),
      geometry(1, {{300, 3, 1, 1, 1, 1}, {16, 3, 1, 1, 1, 1}}),  // groups of 256 rows, then 44
      geometry(1, {{40, 2, 1, 1, 0, 0}, {32, 2, 1, 1, 1, 0}}),   // 33 outputs: three vectors
      geometry(3, {{7, 3, 2, 1, 0, 0}, {35, 3, 2, 1, 0, 0}}),    // 35 columns: three vectors
      geometry(2, {{5, 3, 2, 1, 1, 1}, {38, 3, 2, 1, 1, 1}}),
      geometry(1, {{4, 3, 1, 1, 1, 1}, {48, 3, 1, 1, 1, 1}}),  // 48 outputs
      geometry(1, {{4, 2, 1, 1, 0, 0}, {49, 2, 1, 1, 0, 0}}),  // 49 columns: AVX-512 only
      geometry(2, {{3, 1, 1, 1, 0, 0}, {9, 3, 2, 1, 0, 1}, {56, 3, 2, 1, 0, 1}}),  // I3D's 56x56
      geometry(2, {{6, 2, 2, 1, 0, 0}, {56, 2, 2, 1, 0, 0}}),                      // M2's rows
      geometry(2, {{5, 3, 1, 1, 1, 1}, {64, 3, 1, 1, 1, 1}}),                      // 64 outputs
      geometry(2, {{5, 3, 1, 1, 1, 1}, {63, 3, 1, 1, 2, 2}}),  // 65 outputs: not narrow
      geometry(2, {{4, 3, 3, 1, 1, 1}, {62, 4, 3, 1, 1, 2}}, Rounding::ceil),
      geometry(2, {{3, 3, 1, 1, 1, 1}, {4, 3, 1, 1, 1, 1}, {41, 3, 1, 1, 1, 1}}),
      geometry(2, {{3, 3, 1, 1, 1, 1}, {17, 3, 1, 1, 1, 1}}),  // 17 outputs: two vectors
      geometry(2, {{24, 3, 1, 1, 1, 1}}),
      geometry(2, {{1, 1, 1, 1, 0, 0}}),
  };
  check_orders(cases, rng);
}

// Values alone of stride-2 narrow rows with windows of two or three columns take their taps from
// registers, each row's column maxima split into even and odd columns (and one of them shifted by
// a column): every row width from 1 to 64 columns (AVX-512: one to four vectors of 16, rows of up
// to 8 in one of 8; AVX2: one to eight of 8), pads_begin 0 and 1, pads_end 0 to 2 (windows past
// the row's end or wholly in the padding), floor and ceil; 3-D windows (separable rows) too.
TEST_CASE("max_pool_fast narrow stride-2 rows take their taps from registers",
          "[kernels][max_pool][max_pool_fast]") {
  Rng rng(0x52E6);
  std::vector<PoolGeometry> cases;
  for (i64 w = 1; w <= 64; ++w)
    for (const i64 k : {2, 3}) {
      const Axis h{rng.range(1, 7), 3, 2, 1, rng.range(0, 1), rng.range(0, 1)};
      const Axis x{w, k, 2, 1, rng.range(0, 1), rng.range(0, 2)};
      const Rounding r = rng.range(0, 1) ? Rounding::ceil : Rounding::floor;
      if (w % 8 == 3)
        cases.push_back(geometry(2, {{rng.range(3, 6), 3, 1, 1, 1, 1}, h, x}, r));  // separable
      else
        cases.push_back(geometry(rng.range(1, 3), {h, x}, r));
    }
  check_orders(cases, rng);
}

// Values alone of 3-D windows over narrow rows of 9-48 columns on AVX-512 take each plane of D's
// maxima over the window's rows once, in a ring kept for the windows that overlap it (separable
// windows): groups of whole planes of D (several in a tensor, the last one short), strides of D
// up to half the kernel (and above it: rows from the table), windows clipped by D's padding or
// wholly in it, dilated H, one to three vectors, D windows up to the ring's limit and past it.
TEST_CASE("max_pool_fast separable 3-D windows", "[kernels][max_pool][max_pool_fast]") {
  Rng rng(0x5E9A);
  const PoolGeometry cases[] = {
      geometry(2, {{6, 3, 1, 1, 1, 1}, {14, 3, 1, 1, 1, 1}, {14, 3, 1, 1, 1, 1}}),   // I3D's
      geometry(1, {{25, 3, 1, 1, 1, 1}, {28, 3, 1, 1, 1, 1}, {28, 3, 1, 1, 1, 1}}),  // 2 groups
      geometry(2, {{9, 3, 2, 1, 0, 1}, {28, 3, 2, 1, 0, 1}, {28, 3, 2, 1, 0, 1}}),
      geometry(2, {{12, 5, 2, 1, 2, 2}, {9, 3, 2, 1, 1, 1}, {20, 3, 1, 1, 1, 1}}),
      geometry(3, {{5, 2, 1, 1, 0, 0}, {10, 2, 1, 1, 0, 0}, {9, 2, 1, 1, 0, 0}}),
      geometry(2, {{3, 5, 1, 1, 2, 2}, {6, 3, 1, 1, 1, 1}, {20, 3, 1, 1, 1, 1}}),
      geometry(2, {{11, 4, 3, 1, 1, 2}, {7, 2, 2, 1, 0, 1}, {33, 3, 2, 1, 1, 1}}),
      geometry(2, {{3, 2, 1, 1, 2, 2}, {5, 3, 1, 1, 1, 1}, {17, 3, 1, 1, 1, 1}}),  // no taps
      geometry(2, {{5, 3, 1, 1, 1, 1}, {9, 3, 1, 2, 2, 2}, {12, 3, 1, 1, 1, 1}}),  // dilated H
      geometry(1, {{4, 3, 1, 1, 1, 1}, {6, 3, 1, 1, 1, 1}, {48, 3, 1, 1, 1, 1}}),
      geometry(1, {{9, 7, 1, 1, 3, 3}, {48, 3, 1, 1, 1, 1}, {16, 3, 1, 1, 1, 1}}),
      geometry(1, {{9, 8, 1, 1, 3, 4}, {48, 3, 1, 1, 1, 1}, {40, 3, 1, 1, 1, 1}}),  // no ring
      geometry(2, {{8, 3, 2, 1, 1, 1}, {7, 3, 1, 1, 1, 1}, {10, 3, 1, 1, 1, 1}}, Rounding::ceil),
      // Three columns, stride 1, pads_begin 0 or 1 (their taps shifted, not permuted): valid,
      // padded at the end only, rows of 16 and 17 (a vector, two), 32 and 48 (two, three).
      geometry(2, {{6, 3, 1, 1, 0, 0}, {5, 3, 1, 1, 1, 1}, {16, 3, 1, 1, 0, 0}}),
      geometry(2, {{6, 3, 1, 1, 1, 1}, {5, 3, 1, 1, 0, 2}, {16, 3, 1, 1, 0, 2}}),
      geometry(2, {{6, 2, 1, 1, 0, 1}, {6, 3, 1, 1, 1, 1}, {17, 3, 1, 1, 1, 1}}),
      geometry(2, {{5, 3, 1, 1, 1, 1}, {4, 3, 1, 1, 1, 1}, {32, 3, 1, 1, 0, 1}}, Rounding::ceil),
      geometry(1, {{4, 4, 2, 1, 1, 2}, {5, 3, 1, 1, 1, 1}, {48, 3, 1, 1, 1, 1}}),
      geometry(1, {{4, 3, 1, 1, 1, 1}, {5, 3, 1, 1, 1, 1}, {9, 3, 1, 1, 1, 3}}),  // lanes past in_w
  };
  check_orders(cases, rng);
}

// Stride-2 rows of more than 32 outputs on AVX-512: blocks of 32 de-interleave their loads, their
// padding before and after the row masked to -inf, and values alone take their taps once from
// the maxima over the window's rows (in order again when a -0 was read). Last blocks whose
// windows reach into pads_end (I3D's 1x3x3 s2), left padding, dilation, ceil, short last blocks.
TEST_CASE("max_pool_fast de-interleaved rows", "[kernels][max_pool][max_pool_fast]") {
  Rng rng(0xDE1E);
  const PoolGeometry cases[] = {
      geometry(2, {{2, 1, 1, 1, 0, 0}, {9, 3, 2, 1, 0, 1}, {112, 3, 2, 1, 0, 1}}),  // I3D
      geometry(2, {{9, 3, 2, 1, 1, 1}, {112, 3, 2, 1, 1, 1}}),                      // M1
      geometry(2, {{5, 3, 2, 1, 0, 1}, {70, 3, 2, 1, 0, 1}}),     // 35 outputs: a short block
      geometry(16, {{41, 3, 2, 1, 0, 1}, {128, 3, 2, 1, 0, 1}}),  // pads_end in the block's c
      geometry(2, {{4, 2, 2, 1, 0, 0}, {130, 2, 2, 1, 0, 0}}),
      geometry(2, {{5, 3, 2, 2, 2, 2}, {99, 3, 2, 2, 2, 2}}),  // dilated, padded
      geometry(2, {{5, 3, 2, 1, 0, 0}, {97, 3, 2, 1, 0, 0}}, Rounding::ceil),
      geometry(1, {{6, 5, 2, 1, 2, 3}, {150, 5, 2, 1, 2, 3}}),  // 5 taps, pads up to 3
      geometry(2, {{200, 3, 2, 1, 1, 1}}),
  };
  check_orders(cases, rng);
}

// Values alone of rows past 64 columns or outputs with windows of two or three columns, stride 1
// or 2 (no dilation), on AVX-512 take each output row's column maxima in vectors from column
// -pad on, and their taps shifted out of them (wide rows): pads from 0 to past a vector, windows
// past the row's end (pads_end, ceil) or wholly in the padding, last outputs whose last taps
// lie past their vectors' columns, windows of one to nine rows (two and three unrolled) or
// none, several groups a plane (the last one short), 1-D to 3-D.
TEST_CASE("max_pool_fast wide rows", "[kernels][max_pool][max_pool_fast]") {
  Rng rng(0x31DE);
  const PoolGeometry cases[] = {
      geometry(2, {{9, 3, 2, 1, 1, 1}, {112, 3, 2, 1, 1, 1}}),  // M1v
      geometry(2, {{7, 3, 2, 1, 0, 0}, {147, 3, 2, 1, 0, 0}}),  // Inception v3's
      geometry(2, {{8, 3, 2, 1, 0, 1}, {150, 3, 2, 1, 0, 1}}),  // SSD Inception's
      geometry(2, {{6, 2, 2, 1, 0, 0}, {224, 2, 2, 1, 0, 0}}),  // VGG's
      geometry(2, {{5, 2, 2, 1, 1, 1}, {97, 2, 2, 1, 1, 1}}, Rounding::ceil),
      geometry(2, {{5, 3, 1, 1, 1, 1}, {70, 3, 1, 1, 1, 1}}),   // stride 1
      geometry(2, {{4, 3, 1, 1, 0, 0}, {200, 3, 1, 1, 0, 0}}),  // 198 outputs
      geometry(2, {{4, 3, 1, 1, 1, 1}, {96, 3, 1, 1, 1, 1}}),   // last taps past the vectors
      geometry(2, {{5, 3, 2, 1, 1, 1}, {128, 3, 2, 1, 1, 1}}),
      geometry(1, {{150, 3, 1, 1, 1, 1}, {81, 2, 1, 1, 0, 1}}),   // groups of 50 rows
      geometry(2, {{4, 2, 1, 1, 1, 0}, {65, 2, 1, 1, 1, 0}}),     // one and two rows
      geometry(2, {{9, 3, 2, 1, 1, 1}, {100, 3, 2, 1, 20, 20}}),  // pads past a vector
      geometry(2, {{9, 3, 1, 1, 17, 17}, {66, 3, 1, 1, 17, 17}}),
      geometry(2, {{6, 2, 1, 1, 3, 3}, {90, 3, 2, 1, 1, 1}}),  // rows wholly in the padding
      geometry(2, {{12, 5, 2, 1, 2, 2}, {99, 3, 2, 1, 0, 0}}, Rounding::ceil),     // five rows
      geometry(2, {{4, 3, 1, 1, 1, 1}, {9, 3, 2, 1, 1, 1}, {80, 3, 2, 1, 1, 1}}),  // nine
      geometry(2, {{300, 3, 2, 1, 1, 1}}),                                         // 1-D
      geometry(2, {{3, 3, 1, 1, 1, 1}, {5, 3, 1, 1, 0, 70}}),  // 73 outputs of 5 columns
  };
  check_orders(cases, rng);
}

// Layers that read and write 16 MiB or more read their input ahead on the AVX-512 path, and
// those of 32 MiB or more write their outputs ahead too (read_ahead.hpp): prefetches alone,
// so the same bits, through the loops of units that take them, on row-by-row geometries and
// flat groups, with windows of no input row (their units read nothing ahead) and the same
// layers without indices (some under the sizes).
TEST_CASE("max_pool_fast on large layers", "[kernels][max_pool][max_pool_fast]") {
  Rng rng(0xFA8);
  const auto window = [](i64 n, i64 c, i64 ih, i64 iw, i64 k, i64 s, i64 pad_h, i64 pad_w) {
    PoolGeometry g;
    g.spatial_rank = 2;
    g.batch = n;
    g.channels = c;
    set_axis(g, 1, ih, k, s, 1, pad_h, pad_h, Rounding::floor);
    set_axis(g, 2, iw, k, s, 1, pad_w, pad_w, Rounding::floor);
    return g;
  };
  PoolGeometry bins;  // M3's bins of 4x4 (flat groups) on 12x512 planes of 28x28
  bins.adaptive = true;
  bins.spatial_rank = 2;
  bins.batch = 12;
  bins.channels = 512;
  bins.in = {1, 28, 28};
  bins.out = {1, 7, 7};
  bins.index_axis = 2;
  const PoolGeometry cases[] = {
      window(8, 256, 56, 56, 2, 2, 0, 0),   // M2 eight times over: 45 MB with i64 indices
      window(4, 64, 112, 112, 3, 2, 1, 1),  // the ResNet stem's MaxPool four times over
      window(2, 512, 56, 61, 2, 2, 2, 0),   // first and last output rows read no input row
      bins,
  };
  const Parallel serial(1), two(2);
  for (const PoolGeometry& g : cases) {
    INFO(describe_max(g));
    const Tensor in = random_input<float>(rng, g);
    for (const ElementType it : {ElementType::i64, ElementType::f32}) {
      const Result want = run(g, in, it, two, false);
      for (const Isa isa : {Isa::best, Isa::avx2})
        for (const Parallel* par : {&serial, &two}) {
          INFO("isa " << isa_name(isa) << ", threads " << par->threads());
          const Result got = run(g, in, it, *par, true, isa);
          CHECK(same_bits(got.values, want.values));
          if (it != ElementType::f32) CHECK(same_bits(got.indices, want.indices));
        }
    }
  }
}

// Every path reads its input only: a copy of it against an unreadable page, on either side
// (guarded_copy.hpp), gives the reference's bits without a fault. The random geometries, and
// rows of 2x2 s2 and 3x3 s2 p1 pools 2-70 wide, whose blocks of 32 outputs load past the row's
// end only in lanes masked off (AVX-512: one past a row of under 32 outputs de-interleaves it
// whole, those lanes not read).
TEST_CASE("max_pool_fast reads nothing outside its input", "[kernels][max_pool][max_pool_fast]") {
  Rng rng(0x6A4D);
  const Parallel par(1);
  std::vector<PoolGeometry> cases;
  for (int iter = 0; iter < 200; ++iter) cases.push_back(random_max_pool_geometry(rng));
  for (i64 w = 2; w <= 70; ++w)
    for (const i64 k : {2, 3}) {
      PoolGeometry g;
      g.spatial_rank = 2;
      g.channels = 2;
      set_axis(g, 1, 5, k, 2, 1, k - 2, k - 2, Rounding::floor);
      set_axis(g, 2, w, k, 2, 1, k - 2, k - 2, Rounding::floor);
      if (g.out[2] >= 1) cases.push_back(g);
    }
  for (const PoolGeometry& g : cases) {
    INFO(describe_max(g));
    const Tensor in = random_input<float>(rng, g);
    const Result want = run(g, in, ElementType::i64, par, false);
    irrun::testing::with_guarded_copies(in, [&](const Tensor& copy, const char* where) {
      for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
        INFO("isa " << isa_name(isa) << ", " << where);
        const Result got = run(g, copy, ElementType::i64, par, true, isa);
        CHECK(same_bits(got.values, want.values));
        CHECK(same_bits(got.indices, want.indices));
      }
    });
  }
}

// A thread keeps the tables of its last geometry (max_pool_fast.cpp, plan_of): a run on kept
// tables, after a run of the same geometry on other data, gives the bits of a run on fresh ones
// (a thread of its own).
TEST_CASE("max_pool_fast on a kept plan gives a fresh plan's values and indices",
          "[kernels][max_pool][max_pool_fast]") {
  Rng rng(0xCAC4F);
  const Parallel par(2);
  for (int iter = 0; iter < 150; ++iter) {
    const PoolGeometry g = random_max_pool_geometry(rng);
    INFO(describe_max(g));
    const Tensor first = random_input<float>(rng, g), in = random_input<float>(rng, g);
    for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
      INFO("isa " << isa_name(isa));
      run(g, first, ElementType::i64, par, true, isa);
      const Result kept = run(g, in, ElementType::i64, par, true, isa);
      Result fresh;
      std::thread([&] { fresh = run(g, in, ElementType::i64, par, true, isa); }).join();
      CHECK(same_bits(kept.values, fresh.values));
      CHECK(same_bits(kept.indices, fresh.indices));
    }
  }
}

TEST_CASE("max_pool_fast hand cases", "[kernels][max_pool][max_pool_fast]") {
  const Parallel par(1);
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float lowest = std::numeric_limits<float>::lowest();
  for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
    INFO("isa " << isa_name(isa));
    {  // ties keep the first tap, +0 does not beat -0, NaN never wins
      const auto g = geometry_1d(6, 2, 2, 0, 0);
      const Tensor in = input_1d({-0.0f, 0.0f, nan, 1.0f, 2.0f, 2.0f});
      const Result r = run(g, in, ElementType::i64, par, true, isa);
      const float* v = r.values.data<float>();
      const i64* i = r.indices.data<i64>();
      CHECK(std::signbit(v[0]));
      CHECK(i[0] == 0);
      CHECK(v[1] == 1.0f);
      CHECK(i[1] == 3);
      CHECK(v[2] == 2.0f);
      CHECK(i[2] == 4);
    }
    {  // windows entirely in padding, -inf and lowest() give lowest() at index 0
      const auto g = geometry_1d(3, 2, 2, 3, 3);  // windows [-3,-2], [-1,0], [1,2], [3,4]
      const Tensor in = input_1d({-inf, lowest, -inf});
      const Result r = run(g, in, ElementType::i32, par, true, isa);
      REQUIRE(r.values.element_count() == 4);
      for (int o = 0; o < 4; ++o) {
        CHECK(r.values.data<float>()[o] == lowest);
        CHECK(r.indices.data<std::int32_t>()[o] == 0);
      }
    }
    {  // wide rows with dilation: the reference's values and indices
      const auto g = geometry_1d(67, 3, 1, 2, 2, 2);
      std::vector<float> v(67);
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>((i * 7) % 5);
      const Tensor in = input_1d(v);
      const Result want = run(g, in, ElementType::i64, par, false);
      const Result got = run(g, in, ElementType::i64, par, true, isa);
      CHECK(same_bits(got.values, want.values));
      CHECK(same_bits(got.indices, want.indices));
    }
  }
}

// Small planes without indices run sixteen at a time in lanes on AVX-512, eight on AVX2 where the
// stride along W is 2 or more and planes are of at most 200 floats (max_lanes.hpp): random
// windows of up to nine taps (padding, strides, dilation, every rounding) on 16-45 planes of up
// to 512 floats, so that 0-15 planes follow the last chunk, on inputs of ties, NaN, infinities,
// lowest() and both zeros: the reference's values on one to three threads, on both vector paths
// (the AVX2 path's chunks on two threads).
// Whether the AVX2 path takes g in lanes (its planes and windows within the common limits): a
// stride of 2 or more along W and planes of at most kLanesMaxPlaneAvx2 floats.
bool avx2_lanes(const PoolGeometry& g) {
  return irrun::testing::cpu_has_avx2() && g.stride[2] >= 2 &&
         g.in_plane_size() <= irrun::kernels::detail::kLanesMaxPlaneAvx2;
}

TEST_CASE("max_pool_fast runs small planes in lanes", "[kernels][max_pool][max_pool_fast]") {
  Rng rng(0x1A4E516ull);
  int lanes = 0, lanes_avx2 = 0;
  for (int iter = 0; iter < 4000 && (lanes < 150 || lanes_avx2 < 100); ++iter) {
    PoolGeometry g = random_max_pool_geometry(rng);
    g.batch = 1;
    g.channels = rng.range(16, 45);
    if (g.in_plane_size() > irrun::kernels::detail::kLanesMaxPlane ||
        g.kernel[0] * g.kernel[1] * g.kernel[2] > irrun::kernels::detail::kLanesMaxTaps)
      continue;
    const bool avx2 = irrun::kernels::detail::max_lanes_cover(g, Isa::avx2);
    CHECK(avx2 == avx2_lanes(g));
    CHECK_FALSE(irrun::kernels::detail::max_lanes_cover(g, Isa::portable));
    lanes += irrun::kernels::detail::max_lanes_cover(g, Isa::best);
    lanes_avx2 += avx2;
    INFO(describe_max(g));
    const Tensor in = random_input<float>(rng, g);
    const Result want = run(g, in, ElementType::f32, Parallel(1), false);
    for (const int threads : {1, 2, 3}) {
      INFO("threads " << threads);
      CHECK(same_bits(run(g, in, ElementType::f32, Parallel(threads), true).values, want.values));
    }
    CHECK(
        same_bits(run(g, in, ElementType::f32, Parallel(2), true, Isa::avx2).values, want.values));
  }
  if (irrun::testing::cpu_has_avx2()) CHECK((lanes >= 150 && lanes_avx2 >= 100));
}

// For "max_pool_fast lanes take the sign of a window's first zero": g's output (1, 0) covers rows
// 1-3 and columns 0-2.
void check_zero_signs_in_lanes(const PoolGeometry& g) {
  INFO(describe_max(g));
  const bool lanes = irrun::testing::cpu_has_avx512() || avx2_lanes(g);
  CHECK(irrun::kernels::detail::max_lanes_cover(g, Isa::best) == lanes);
  const i64 n = g.in_plane_size();
  for (i64 a = 0; a < 9; ++a)
    for (i64 b = 0; b < 9; ++b) {
      if (a == b) continue;
      Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
      float* x = in.mutable_data<float>();
      std::fill_n(x, in.element_count(), -1.0f);
      for (i64 p = 0; p < g.planes(); ++p) {
        x[p * n + (1 + a / 3) * g.in[2] + a % 3] = p % 2 ? -0.0f : 0.0f;
        x[p * n + (1 + b / 3) * g.in[2] + b % 3] = p % 2 ? 0.0f : -0.0f;
      }
      INFO("zeros at taps " << a << " and " << b);
      const Result want = run(g, in, ElementType::f32, Parallel(1), false);
      for (const Isa isa : {Isa::best, Isa::avx2}) {
        INFO("isa " << isa_name(isa));
        CHECK(same_bits(run(g, in, ElementType::f32, Parallel(2), true, isa).values, want.values));
      }
    }
}

// In lanes too a window takes its first zero's sign: a -0 and a +0 (or the signs swapped) in
// every pair of a 3x3 window's taps, among -1s, in one plane of every chunk's lanes; with
// stride 1 along W (AVX-512 lanes only) and 2, and along H 2 and 1 (the rows' maxima shared).
TEST_CASE("max_pool_fast lanes take the sign of a window's first zero",
          "[kernels][max_pool][max_pool_fast]") {
  for (const PoolGeometry& g : {geometry(20, {{5, 3, 2, 1, 1, 1}, {6, 3, 1, 1, 0, 1}}),
                                geometry(20, {{5, 3, 2, 1, 1, 1}, {7, 3, 2, 1, 0, 0}}),
                                geometry(20, {{5, 3, 1, 1, 0, 0}, {6, 3, 1, 1, 0, 1}}),
                                geometry(20, {{5, 3, 1, 1, 0, 0}, {7, 3, 2, 1, 0, 0}})})
    check_zero_signs_in_lanes(g);
}

// Values alone run columns first (narrow rows, stride-2 rows): a window of both zeros takes the
// sign of its first zero in the recurrence's order (rows, then columns), which a column's
// maximum need not give: a -0 in row 0 of column p and a +0 in row 1 of column p - 1 give -0
// (and the signs swapped, +0), whichever vector of a row the two columns fall in. Every column
// p of rows of 1-100 columns (narrow rows of one to four vectors, rows of blocks), stride 1 and
// 2, every ISA, values alone and with indices.
TEST_CASE("max_pool_fast takes the sign of a window's first zero",
          "[kernels][max_pool][max_pool_fast]") {
  const Parallel par(1);
  for (const i64 width : {5, 12, 20, 28, 31, 40, 70, 100})
    for (const i64 stride : {1, 2})
      for (const bool minus_first : {true, false})
        for (i64 p = 1; p < width; ++p) {
          PoolGeometry g;
          g.spatial_rank = 2;
          set_axis(g, 1, 3, 3, 1, 1, 0, 0, Rounding::floor);  // three rows: columns first
          set_axis(g, 2, width, 3, stride, 1, 1, 1, Rounding::floor);
          Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
          float* x = in.mutable_data<float>();
          std::fill_n(x, in.element_count(), -1.0f);
          x[p] = minus_first ? -0.0f : 0.0f;              // row 0, column p
          x[width + p - 1] = minus_first ? 0.0f : -0.0f;  // row 1, column p - 1
          INFO("width " << width << ", stride " << stride << ", column " << p << ", -0 first "
                        << minus_first);
          for (const ElementType it : {ElementType::f32, ElementType::i64}) {
            const Result want = run(g, in, it, par, false);
            for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
              INFO("isa " << isa_name(isa));
              CHECK(same_bits(run(g, in, it, par, true, isa).values, want.values));
            }
          }
        }
}

// Separable windows take a column's maximum over planes of D from each plane's maximum over its
// rows: a -0 in one plane and a +0 in a later one (or the signs swapped), in any rows, in the
// same column or a neighbour, give the first one's sign as the recurrence does (D-major).
TEST_CASE("max_pool_fast takes the sign of a 3-D window's first zero",
          "[kernels][max_pool][max_pool_fast]") {
  const Parallel par(1);
  for (const i64 width : {12, 28, 40})
    for (const i64 pad : {0, 1})
      for (const i64 p : {i64{1}, width / 2})
        for (const i64 plane : {1, 2})
          for (const i64 next : {-1, 0, 1})
            for (i64 rows = 0; rows < 9; ++rows)
              for (const bool minus_first : {true, false}) {
                const PoolGeometry g = geometry(
                    1, {{3, 3, 1, 1, 1, 1}, {3, 3, 1, 1, 1, 1}, {width, 3, 1, 1, pad, pad}});
                Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
                float* x = in.mutable_data<float>();
                std::fill_n(x, in.element_count(), -1.0f);
                x[rows / 3 * width + p] = minus_first ? -0.0f : 0.0f;
                x[(plane * 3 + rows % 3) * width + p + next] = minus_first ? 0.0f : -0.0f;
                INFO("width " << width << ", pad " << pad << ", column " << p << ", plane " << plane
                              << ", next " << next << ", rows " << rows << ", -0 first "
                              << minus_first);
                const Result want = run(g, in, ElementType::f32, par, false);
                for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
                  INFO("isa " << isa_name(isa));
                  CHECK(
                      same_bits(run(g, in, ElementType::f32, par, true, isa).values, want.values));
                }
              }
}

TEST_CASE("max_pool_fast covers f32/f64 windows and equal adaptive bins only",
          "[kernels][max_pool][max_pool_fast]") {
  auto g = geometry_1d(8, 2, 2, 0, 0);
  CHECK(irrun::kernels::max_pool_fast_covers(ElementType::f32, g));
  CHECK(irrun::kernels::max_pool_fast_covers(ElementType::f64, g));
  CHECK_FALSE(irrun::kernels::max_pool_fast_covers(ElementType::f16, g));
  CHECK_FALSE(irrun::kernels::max_pool_fast_covers(ElementType::i32, g));
  g.adaptive = true;  // 8 -> 4: bins of two
  CHECK(irrun::kernels::max_pool_fast_covers(ElementType::f32, g));
  g.out[2] = 3;  // uneven, overlapping bins: the reference kernel
  CHECK_FALSE(irrun::kernels::max_pool_fast_covers(ElementType::f32, g));
  g.out[2] = 2;  // bins of four columns
  CHECK(irrun::kernels::max_pool_fast_covers(ElementType::f32, g));
  g.out[2] = 1;  // one bin of eight
  CHECK(irrun::kernels::max_pool_fast_covers(ElementType::f32, g));
  // Its table of input rows per output row stays within 2^21 entries (16 MiB): a million output
  // rows of 64-row windows took 512 MiB. 32768 rows of 64 are the bound; with 2 D taps, twice it.
  PoolGeometry tall;
  tall.spatial_rank = 2;
  irrun::testing::set_axis(tall, 1, 1000063, 64, 1, 1, 0, 0, irrun::testing::Rounding::floor);
  CHECK_FALSE(irrun::kernels::max_pool_fast_covers(ElementType::f32, tall));
  irrun::testing::set_axis(tall, 1, 32768 + 63, 64, 1, 1, 0, 0, irrun::testing::Rounding::floor);
  CHECK(irrun::kernels::max_pool_fast_covers(ElementType::f32, tall));
  tall.spatial_rank = 3;
  irrun::testing::set_axis(tall, 0, 2, 2, 1, 1, 0, 0, irrun::testing::Rounding::floor);
  CHECK_FALSE(irrun::kernels::max_pool_fast_covers(ElementType::f32, tall));
}
