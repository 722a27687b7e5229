// Tests of the floating-point control state irrun computes under (lib/src/fp_control.hpp): a
// caller whose thread rounds toward zero, flushes subnormals (FTZ, DAZ) and traps invalid
// operations gets the bits of a caller under IEEE defaults from every kernel, its thread pool's
// workers included, and from the random inputs, conversions, stats and comparisons of golden
// runs, and gets its own state back. x86 only (the MXCSR).
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>

#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "irrun/blob.hpp"
#include "irrun/compare.hpp"
#include "irrun/float16.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "irrun/kernels/max_pool.hpp"
#include "irrun/parallel.hpp"
#include "irrun/tensor.hpp"
#include "support/pool_geometries.hpp"
#include "support/pool_shape.hpp"
#include "support/split_mix.hpp"

namespace {

using irrun::ElementType;
using irrun::Parallel;
using irrun::PoolGeometry;
using irrun::Tensor;
using irrun::kernels::Kernels;
using irrun::testing::adaptive;
using irrun::testing::describe;
using irrun::testing::window;

// Round toward zero, flush-to-zero, denormals-are-zero, the invalid operation unmasked.
constexpr unsigned kHostile = (0x1F80u & ~0x0080u) | 0x6000u | 0x8000u | 0x0040u;

// f32 values in [-1, 1), one in eight subnormal, and one window's worth of +inf and -inf (their
// sum is an invalid operation) and NaNs.
Tensor hostile_input(const PoolGeometry& g, std::uint64_t seed) {
  Tensor t = Tensor::zeros(ElementType::f32, irrun::testing::shape_of(g, g.in));
  irrun::testing::SplitMix64 rng(seed);
  float* x = t.mutable_data<float>();
  const std::int64_t n = static_cast<std::int64_t>(t.element_count());
  for (std::int64_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(rng.next() >> 11) * 0x1p-53 * 2 - 1;
    x[i] = rng.range(0, 7) == 0 ? static_cast<float>(u * 0x1p-127) : static_cast<float>(u);
  }
  x[0] = std::numeric_limits<float>::infinity();
  x[1] = -std::numeric_limits<float>::infinity();
  x[n / 2] = std::numeric_limits<float>::quiet_NaN();
  return t;
}

// Every kernel's output on `in`, one tensor each: the fast AvgPool at each ISA, the reference
// AvgPool, the f16 AvgPool, and MaxPool (values and i64 indices) fast and reference, in f32, f16
// and bf16.
std::vector<Tensor> run_all(const Tensor& in, const PoolGeometry& g, const Parallel& par) {
  const auto shape = irrun::testing::shape_of(g, g.out);
  std::vector<Tensor> outs;
  for (const Kernels k : {Kernels::best, Kernels::avx2, Kernels::portable, Kernels::reference}) {
    outs.push_back(Tensor::zeros(ElementType::f32, shape));
    irrun::kernels::avg_pool(in, outs.back(), g, par, k);
  }
  // f16 (the f16 kernel), from the same values scaled into its range: 2^-14 and below subnormal.
  Tensor in16 = Tensor::zeros(ElementType::f16, in.shape);
  for (std::size_t i = 0; i < in.element_count(); ++i)
    in16.mutable_data<std::uint16_t>()[i] =
        irrun::f16_bits_from_double(static_cast<double>(in.data<float>()[i]) * 0x1p-10);
  for (const Kernels k : {Kernels::best, Kernels::portable, Kernels::reference}) {
    outs.push_back(Tensor::zeros(ElementType::f16, shape));
    irrun::kernels::avg_pool(in16, outs.back(), g, par, k);
  }
  if (!g.adaptive || g.in[2] % g.out[2] == 0) {
    for (const Kernels k : {Kernels::best, Kernels::reference}) {
      outs.push_back(Tensor::zeros(ElementType::f32, shape));
      Tensor indices = Tensor::zeros(ElementType::i64, shape);
      irrun::kernels::max_pool(in, outs.back(), &indices, g, par, k);
      outs.push_back(std::move(indices));
    }
  }
  // f16 and bf16 MaxPool (max_pool_half, called directly too): bf16 keeps the f32 subnormals
  // (truncated bits: a conversion through double would see DAZ's zeros).
  if (!g.adaptive) {
    Tensor in_bf16 = Tensor::zeros(ElementType::bf16, in.shape);
    for (std::size_t i = 0; i < in.element_count(); ++i)
      in_bf16.mutable_data<std::uint16_t>()[i] =
          static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(in.data<float>()[i]) >> 16);
    for (const Tensor* half : {&in16, &in_bf16}) {
      for (const Kernels k : {Kernels::best, Kernels::reference}) {
        outs.push_back(Tensor::zeros(half->type, shape));
        irrun::kernels::max_pool(*half, outs.back(), nullptr, g, par, k);
      }
      outs.push_back(Tensor::zeros(half->type, shape));
      Tensor indices = Tensor::zeros(ElementType::i64, shape);
      REQUIRE(irrun::kernels::max_pool_half(*half, outs.back(), &indices, g, par));
      outs.push_back(std::move(indices));
    }
  }
  return outs;
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.byte_size() == b.byte_size() &&
         std::memcmp(a.buffer.data(), b.buffer.data(), a.byte_size()) == 0;
}

}  // namespace

TEST_CASE("kernels compute under IEEE defaults whatever the caller's floating-point state",
          "[fp_control][kernels]") {
  const PoolGeometry geometries[] = {
      window({1, 4}, {16, 16}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, false, true),
      window({1, 3}, {12, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true),
      window({1, 3}, {20, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, false),
      window({1, 2}, {9, 1030}, {5, 5}, {1, 1}, {2, 2}, {2, 2}, true, true),
      window({2, 20}, {7, 7}, {7, 7}, {1, 1}, {0, 0}, {0, 0}, false, true),
      adaptive({1, 6}, {28, 28}, {7, 7}),
      adaptive({1, 2}, {40, 45}, {17, 13}),
  };
  const unsigned caller = _mm_getcsr();
  for (const PoolGeometry& g : geometries) {
    INFO(describe(g));
    const Tensor in = hostile_input(g, 7);
    const Parallel defaults_par(2);
    const std::vector<Tensor> want = run_all(in, g, defaults_par);
    // The pool is made under the hostile state too: its threads start with it.
    _mm_setcsr(kHostile);
    std::vector<Tensor> got;
    unsigned after = 0;
    {
      const Parallel par(2);
      got = run_all(in, g, par);
      after = _mm_getcsr() & ~0x3Fu;
    }
    _mm_setcsr(caller);
    CHECK(after == kHostile);
    REQUIRE(got.size() == want.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("kernel output " << i);
      CHECK(same_bytes(got[i], want[i]));
    }
  }
}

// The whole-plane sums clear the precision flag to learn whether their additions were exact
// (run_whole_plane); the caller's flags, set or clear, come back as they were, and the kernels'
// own rounded operations raise none of them for the caller.
TEST_CASE("kernels leave the caller's exception flags as they were", "[fp_control][kernels]") {
  const PoolGeometry g = adaptive({1, 40}, {7, 7}, {1, 1});
  Tensor in = hostile_input(g, 11);
  in.mutable_data<float>()[0] = in.mutable_data<float>()[1] = 1.0f;  // no inf or NaN
  in.mutable_data<float>()[in.element_count() / 2] = 1.0f;
  const unsigned caller = _mm_getcsr();
  const Parallel par(2);
  for (const Kernels k : {Kernels::best, Kernels::avx2, Kernels::portable, Kernels::reference})
    for (const unsigned flags : {0x00u, 0x20u, 0x3Fu}) {
      Tensor out = Tensor::zeros(ElementType::f32, irrun::testing::shape_of(g, g.out));
      _mm_setcsr((caller & ~0x3Fu) | flags);
      irrun::kernels::avg_pool(in, out, g, par, k);
      const unsigned after = _mm_getcsr() & 0x3Fu;
      _mm_setcsr(caller);
      INFO("kernels " << static_cast<int>(k) << " flags " << flags);
      CHECK(after == flags);
    }
}

TEST_CASE("Parallel runs every chunk under the caller's floating-point control state",
          "[fp_control][parallel]") {
  const unsigned caller = _mm_getcsr();
  const Parallel par(2);  // workers made under the caller's state, then run under another
  std::vector<unsigned> seen(64, 0);
  _mm_setcsr(kHostile);
  par.for_range(64, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) seen[static_cast<std::size_t>(i)] = _mm_getcsr() & ~0x3Fu;
  });
  _mm_setcsr(caller);
  for (const unsigned s : seen) CHECK(s == kHostile);
  // And back: a worker leaves a chunk with the state it had.
  par.for_range(64, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) seen[static_cast<std::size_t>(i)] = _mm_getcsr() & ~0x3Fu;
  });
  for (const unsigned s : seen) CHECK(s == (caller & ~0x3Fu));
}
TEST_CASE("random inputs, conversions, stats and comparisons ignore the caller's state",
          "[fp_control][blob][compare]") {
  struct Results {
    Tensor r32, r16, c32, c16;
    irrun::TensorStats st;
    irrun::TensorComparison cmp;
  };
  const auto compute = [] {
    Results r;
    r.r32 = irrun::random_tensor(ElementType::f32, {4096}, 5);
    r.r16 = irrun::random_tensor(ElementType::f16, {4096}, 5);
    Tensor wide = irrun::random_tensor(ElementType::f64, {4096}, 6);
    double* w = wide.mutable_data<double>();
    for (std::size_t i = 0; i < 4096; i += 8) w[i] *= 0x1p-140;  // f32 subnormals, f16 zeros
    r.c32 = irrun::convert_float(wide, ElementType::f32);
    r.c16 = irrun::convert_float(wide, ElementType::f16);
    r.st = irrun::stats(r.c32);
    Tensor actual = irrun::convert_float(wide, ElementType::f32);
    float* a = actual.mutable_data<float>();
    for (std::size_t i = 0; i < 4096; i += 5) a[i] = std::nextafter(a[i], 2.0f);
    a[7] = std::numeric_limits<float>::quiet_NaN();
    r.cmp = irrun::compare_tensors("y", r.c32, ElementType::f32, actual, {1e-7, 0});
    return r;
  };
  const Results want = compute();
  const unsigned caller = _mm_getcsr();
  _mm_setcsr(kHostile);
  const Results got = compute();
  const unsigned after = _mm_getcsr() & ~0x3Fu;
  _mm_setcsr(caller);
  CHECK(after == kHostile);
  CHECK(same_bytes(got.r32, want.r32));
  CHECK(same_bytes(got.r16, want.r16));
  CHECK(same_bytes(got.c32, want.c32));
  CHECK(same_bytes(got.c16, want.c16));
  CHECK(std::memcmp(&got.st.min, &want.st.min, sizeof(double)) == 0);
  CHECK(std::memcmp(&got.st.mean, &want.st.mean, sizeof(double)) == 0);
  CHECK(got.cmp.status == want.cmp.status);
  CHECK(got.cmp.out_of_tolerance == want.cmp.out_of_tolerance);
  CHECK(got.cmp.max_rel_error == want.cmp.max_rel_error);
  CHECK(want.cmp.out_of_tolerance > 0);
}
#endif
