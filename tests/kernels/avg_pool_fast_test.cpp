// The fast f32 kernel against the naive oracle, the reference kernel, itself across ISAs and
// across thread counts.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "irrun/kernels/avg_pool.hpp"
#include "support/cpu_paths.hpp"
#include "support/exact_average.hpp"
#include "support/f32_ulps.hpp"
#include "support/guarded_copy.hpp"
#include "support/naive_pool.hpp"
#include "support/pool_geometries.hpp"
#include "support/pool_shape.hpp"
#include "support/split_mix.hpp"
#include "support/tensor_bits.hpp"

namespace {

using irrun::ElementType;
using irrun::Parallel;
using irrun::PoolGeometry;
using irrun::Tensor;
using irrun::kernels::ExactRouteCounts;
using irrun::kernels::Isa;
using irrun::testing::cpu_has_avx2;
using irrun::testing::cpu_has_avx512;
using irrun::testing::same_bits;

using Rng = irrun::testing::SplitMix64;

using irrun::testing::adaptive;
using irrun::testing::describe;
using irrun::testing::random_geometry;
using irrun::testing::shape_of;
using irrun::testing::window;
using irrun::testing::within_one_f32_ulp;
using irrun::testing::within_one_ulp_of_average;

// The S1-S9 benchmark patterns at reduced sizes, plus shapes that cross band, vector-tail and
// whole-plane block boundaries.
std::vector<PoolGeometry> pattern_geometries() {
  return {
      window({1, 3}, {23, 19}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true),   // S1
      window({1, 5}, {16, 14}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, false, true),   // S2
      window({2, 4}, {12, 13}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, false),  // S3
      window({2, 9}, {7, 7}, {7, 7}, {1, 1}, {0, 0}, {0, 0}, false, true),     // S4
      window({1, 130}, {7, 7}, {7, 7}, {7, 7}, {0, 0}, {0, 0}, false, false),  // S4, blocks
      window({1, 2}, {9, 12, 10}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false, true),  // S5
      adaptive({2, 3}, {28, 28}, {7, 7}),                                                    // S6
      adaptive({1, 70}, {7, 7}, {1, 1}),                                                     // S7
      adaptive({1, 2}, {45, 37}, {17, 13}),                                                  // S8
      window({1, 2}, {40, 33}, {5, 5}, {1, 1}, {2, 2}, {2, 2}, true, true),                  // S9
      window({1, 1}, {150, 600}, {5, 5}, {1, 1}, {2, 2}, {2, 2}, true, true),    // S9 bands
      window({1, 1}, {200, 330}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, false),  // S1 bands
      window({1, 2}, {40, 30, 20}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, true, false),
      adaptive({1, 2}, {5, 30, 31}, {2, 7, 5}),
      window({1, 3}, {37}, {4}, {2}, {1}, {2}, true, false),  // 1-D
      // Whole-plane sums: plane sizes with every last-block width 0-7, plane counts that leave
      // partial groups of four (AVX2) and eight (AVX-512) planes.
      adaptive({1, 11}, {3, 5}, {1, 1}),                                    // n = 15
      window({1, 9}, {4, 4}, {4, 4}, {1, 1}, {0, 0}, {0, 0}, false, true),  // n = 16
      adaptive({1, 5}, {1, 3}, {1, 1}),                                     // n = 3
      adaptive({3, 7}, {2, 3, 5}, {1, 1, 1}),                               // n = 30
      window({1, 17}, {9}, {9}, {1}, {0}, {0}, false, true),                // n = 9
      adaptive({1, 13}, {60, 70}, {1, 1}),                                  // n = 4200
  };
}

// Values exact in f32 whose window sums stay exact in the oracle's 64-bit significand: 24-bit
// mantissas, exponents in a window of 28. Modes: mixed signs, one sign, heavy cancellation
// (large +-pairs next to tiny values), zeros and specials.
enum class Data { mixed, positive, cancel, zeros, specials };

float random_value(Rng& rng, Data mode) {
  const auto m = static_cast<double>((rng.next() >> 40) | (1ull << 23));
  const double sign = rng.coin() ? -1.0 : 1.0;
  switch (mode) {
    case Data::mixed:
      return static_cast<float>(sign * std::ldexp(m, static_cast<int>(rng.range(-12, 12)) - 23));
    case Data::positive:
      return static_cast<float>(std::ldexp(m, static_cast<int>(rng.range(-12, 12)) - 23));
    case Data::cancel: {
      const auto r = rng.range(0, 3);
      if (r == 0) return static_cast<float>(sign * std::ldexp(1.0, 14));
      return static_cast<float>(sign * std::ldexp(m, static_cast<int>(rng.range(-14, -10)) - 23));
    }
    case Data::zeros:
      if (rng.range(0, 3)) return rng.coin() ? 0.0f : -0.0f;
      return static_cast<float>(sign * std::ldexp(m, static_cast<int>(rng.range(-4, 4)) - 23));
    case Data::specials: {
      const auto r = rng.range(0, 40);
      if (r == 0) return std::numeric_limits<float>::quiet_NaN();
      if (r == 1) return std::numeric_limits<float>::infinity();
      if (r == 2) return -std::numeric_limits<float>::infinity();
      if (r == 3) return std::numeric_limits<float>::signaling_NaN();
      return static_cast<float>(sign * std::ldexp(m, static_cast<int>(rng.range(-4, 4)) - 23));
    }
  }
  return 0;
}

Tensor random_input(Rng& rng, const PoolGeometry& g, Data mode) {
  Tensor t = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
  float* p = t.mutable_data<float>();
  // cancel: make exact +-2^14 pairs likely inside a window by repeating the previous value
  // negated.
  for (std::size_t i = 0; i < t.element_count(); ++i) {
    p[i] = random_value(rng, mode);
    if (mode == Data::cancel && i > 0 && std::fabs(p[i - 1]) == 0x1p14f && rng.coin())
      p[i] = -p[i - 1];
  }
  return t;
}

// Inputs whose double sums never round: multiples of 2^-8 under 2^7 (the exact-first routes'
// tries must all hold on them).
Tensor exact_input(Rng& rng, const PoolGeometry& g) {
  Tensor t = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
  float* x = t.mutable_data<float>();
  for (std::size_t i = 0; i < t.element_count(); ++i)
    x[i] = static_cast<float>(rng.range(-(1 << 15), 1 << 15)) * 0x1p-8f;
  return t;
}

// The last plane made to round (2^60 + 3 - 2^60), after planes whose sums may be exact: its
// band runs again on the scratch the exact ones used.
void round_last_plane(Tensor& in, const PoolGeometry& g) {
  float* last = in.mutable_data<float>() + (g.planes() - 1) * g.in_plane_size();
  last[0] = 0x1p60f, last[1] = 3.0f, last[2] = -0x1p60f;
}

Tensor poisoned_output(const PoolGeometry& g) {
  Tensor t = Tensor::zeros(ElementType::f32, shape_of(g, g.out));
  float* p = t.mutable_data<float>();
  for (std::size_t i = 0; i < t.element_count(); ++i)
    p[i] = std::numeric_limits<float>::quiet_NaN();
  return t;
}

// The oracle on specials: NaN if any NaN or both infinities, else the infinity, else the sum.
std::vector<double> oracle_of(const PoolGeometry& g, const Tensor& in) {
  std::vector<double> x(in.element_count());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = in.data<float>()[i];
  return irrun::testing::naive_avg_pool(g, x);
}

// counts: the exact routes' tries and misses, when asked.
Tensor run_fast(const PoolGeometry& g, const Tensor& in, const Parallel& par, Isa isa,
                ExactRouteCounts* counts = nullptr) {
  Tensor out = poisoned_output(g);
  REQUIRE(irrun::kernels::avg_pool_fast(in, out, g, par, isa, counts));
  return out;
}

// The reference kernel's output, from poisoned outputs as run_fast's.
Tensor run_reference(const PoolGeometry& g, const Tensor& in, const Parallel& par) {
  Tensor out = poisoned_output(g);
  irrun::kernels::avg_pool_reference(in, out, g, par);
  return out;
}

int check_against_oracle(const PoolGeometry& g, const Tensor& out, const std::vector<double>& want,
                         const char* what) {
  int bad = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    const float got = out.data<float>()[i];
    if (!within_one_f32_ulp(got, static_cast<float>(want[i])) && ++bad <= 3) {
      std::ostringstream os;
      os.precision(17);
      os << what << " " << describe(g) << " output " << i << ": got " << got << ", oracle "
         << want[i];
      FAIL_CHECK(os.str());
    }
  }
  return bad;
}

bool same_bits(float a, float b) {
  return std::bit_cast<std::uint32_t>(a) == std::bit_cast<std::uint32_t>(b);
}

// The best path (on `best_par`) within one ulp of the oracle's `want`, and the portable (one
// thread) and AVX2 (on `avx2_par`) paths bit for bit the same; returns the best path's output.
Tensor check_paths(const PoolGeometry& g, const Tensor& in, const std::vector<double>& want,
                   const Parallel& best_par, const Parallel& avx2_par) {
  const Tensor best = run_fast(g, in, best_par, Isa::best);
  CHECK(check_against_oracle(g, best, want, "best") == 0);
  CHECK(same_bits(run_fast(g, in, Parallel(1), Isa::portable), best));
  CHECK(same_bits(run_fast(g, in, avx2_par, Isa::avx2), best));
  return best;
}

Tensor check_paths(const PoolGeometry& g, const Tensor& in, const Parallel& best_par,
                   const Parallel& avx2_par) {
  return check_paths(g, in, oracle_of(g, in), best_par, avx2_par);
}

// avg_pool_fast into caller memory between canaries: `want`'s bits, and nothing stored before or
// after the output.
void check_within_canaries(const PoolGeometry& g, const Tensor& in, const Parallel& par, Isa isa,
                           const Tensor& want) {
  constexpr std::size_t kGuard = 16;
  constexpr float kCanary = 12345.0f;
  std::vector<float> buffer(want.element_count() + 2 * kGuard, kCanary);
  Tensor out = Tensor::wrap(ElementType::f32, shape_of(g, g.out), buffer.data() + kGuard);
  REQUIRE(irrun::kernels::avg_pool_fast(in, out, g, par, isa));
  CHECK(same_bits(out, want));
  CHECK(std::count(buffer.begin(), buffer.begin() + kGuard, kCanary) == kGuard);
  CHECK(std::count(buffer.end() - kGuard, buffer.end(), kCanary) == kGuard);
}

// AVX2's exact route for g on sums that never round (multiples of 2^-8): tried where AVX2 runs,
// never missed, the reference's bits at one and two threads; then, the last plane made to round,
// every path (check_paths).
void check_exact_avx2(Rng& rng, const PoolGeometry& g) {
  REQUIRE(irrun::kernels::avg_pool_fast_covers(ElementType::f32, g));
  Tensor in = exact_input(rng, g);
  INFO(describe(g));
  ExactRouteCounts counts;
  const Tensor out = run_fast(g, in, Parallel(1), Isa::avx2, &counts);
  CHECK((counts.tries > 0) == cpu_has_avx2());
  CHECK(counts.misses == 0);
  CHECK(same_bits(out, run_reference(g, in, Parallel(1))));
  CHECK(same_bits(run_fast(g, in, Parallel(2), Isa::avx2), out));
  round_last_plane(in, g);
  check_paths(g, in, Parallel(1), Parallel(2));
}

// The exact routes' tries of g on one thread (all, and the lanes' chunks) on an input whose sums
// never round, where none may miss.
struct Tries {
  std::int64_t tries, lanes;
};
Tries exact_tries(const PoolGeometry& g, const Tensor& exact, Isa isa = Isa::best) {
  ExactRouteCounts counts;
  run_fast(g, exact, Parallel(1), isa, &counts);
  CHECK(counts.misses == 0);
  return {counts.tries, counts.lane_tries};
}

// On exact inputs, in turn in each of `planes`: a sum that rounds (2^60 + 3 - 2^60), a NaN and a
// NaN sum of both infinities; every path within one ulp of the oracle and the portable path's
// bits on one to three threads.
void check_planted(Rng& rng, const PoolGeometry& g, std::initializer_list<std::int64_t> planes) {
  for (const std::int64_t plane : planes)
    for (const int kind : {0, 1, 2}) {
      INFO("plane " << plane << ", kind " << kind);
      Tensor in = exact_input(rng, g);
      float* x = in.mutable_data<float>() + plane * g.in_plane_size();
      if (kind == 0) x[0] = 0x1p60f, x[1] = 3.0f, x[2] = -0x1p60f;
      if (kind == 1) x[1] = std::numeric_limits<float>::quiet_NaN();
      if (kind == 2) x[0] = std::numeric_limits<float>::infinity(), x[1] = -x[0];
      const std::vector<double> want = oracle_of(g, in);
      for (const int threads : {1, 2, 3})
        check_paths(g, in, want, Parallel(threads), Parallel(threads));
    }
}

}  // namespace

TEST_CASE("fast avg_pool covers the benchmark patterns", "[kernels][avg_pool_fast]") {
  for (const auto& g : pattern_geometries()) {
    INFO(describe(g));
    CHECK(irrun::kernels::avg_pool_fast_covers(ElementType::f32, g));
  }
  CHECK_FALSE(irrun::kernels::avg_pool_fast_covers(ElementType::f16, pattern_geometries()[0]));
}

TEST_CASE("fast avg_pool matches the oracle on the benchmark patterns",
          "[kernels][avg_pool_fast]") {
  Rng rng(0xBE4C4ull);
  const Parallel par(2);
  for (const auto& g : pattern_geometries()) {
    for (Data mode : {Data::mixed, Data::positive, Data::cancel, Data::zeros, Data::specials}) {
      INFO(describe(g) << " data " << static_cast<int>(mode));
      check_paths(g, random_input(rng, g, mode), par, par);
    }
  }
}

// Every path reads its input only: a copy of it against an unreadable page, on either side
// (guarded_copy.hpp), gives the same bits without a fault, on the random geometries and on
// every benchmark pattern's row kernels over rows 1-70 wide.
TEST_CASE("fast avg_pool reads nothing outside its input", "[kernels][avg_pool_fast]") {
  Rng rng(0x6A4E);
  const Parallel par(1);
  std::vector<PoolGeometry> cases;
  for (int iter = 0; iter < 300; ++iter) cases.push_back(random_geometry(rng));
  for (std::int64_t iw = 1; iw <= 70; ++iw) {
    cases.push_back(window({1, 2}, {5, iw}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true));   // S1
    cases.push_back(window({1, 2}, {6, iw}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, false, true));   // S2
    cases.push_back(window({1, 2}, {5, iw}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, false));  // S3
    cases.push_back(window({1, 2}, {6, iw}, {5, 5}, {1, 1}, {2, 2}, {2, 2}, true, true));    // S9
    cases.push_back(adaptive({1, 2}, {8, iw}, {2, std::max<std::int64_t>(1, iw / 4)}));      // S6
    cases.push_back(adaptive({1, 2}, {9, iw}, {4, std::max<std::int64_t>(1, iw / 3)}));      // S8
    cases.push_back(adaptive({1, 5}, {7, iw}, {1, 1}));  // S4, S7: whole planes
  }
  for (const PoolGeometry& g : cases) {
    if (!irrun::kernels::avg_pool_fast_covers(ElementType::f32, g) || g.out[1] < 1 || g.out[2] < 1)
      continue;
    INFO(describe(g));
    const Tensor in = random_input(rng, g, Data::mixed);
    for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
      const Tensor want = run_fast(g, in, par, isa);
      irrun::testing::with_guarded_copies(in, [&](const Tensor& copy, const char* where) {
        INFO("isa " << static_cast<int>(isa) << ", " << where);
        CHECK(same_bits(run_fast(g, copy, par, isa), want));
      });
    }
  }
}

TEST_CASE("fast avg_pool matches the oracle on random geometries", "[kernels][avg_pool_fast]") {
  Rng rng(0xFA57F00Dull);
  const Parallel par(3);
  int covered = 0;
  for (int iter = 0; iter < 600; ++iter) {
    const PoolGeometry g = random_geometry(rng);
    const Data mode = static_cast<Data>(iter % 5);
    INFO(describe(g) << " data " << static_cast<int>(mode));
    if (!irrun::kernels::avg_pool_fast_covers(ElementType::f32, g)) continue;
    ++covered;
    const Tensor in = random_input(rng, g, mode);
    const auto want = oracle_of(g, in);
    check_paths(g, in, want, par, par);
    // Fast and reference kernels agree within the contract (each within one ulp of the exact
    // average; here the oracle is exact, so both are checked against it).
    const Tensor ref = run_reference(g, in, par);
    CHECK(check_against_oracle(g, ref, want, "reference") == 0);
  }
  CHECK(covered == 600);  // the fast kernel covers every f32 geometry generated here
}

// Values whose double sums round: 2^-40 .. 2^10 with both signs, and +-2^30 .. 2^60 pairs side by
// side or one over the other, so that windows cancel their big terms, exactly or down to a rest,
// and a double sum in some orders loses the small ones. (random_input keeps every double sum exact:
// there a wrong decision to keep a double sum cannot change a bit.)
Tensor wide_input(Rng& rng, const PoolGeometry& g) {
  Tensor t = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
  float* p = t.mutable_data<float>();
  const std::size_t n = t.element_count(), iw = static_cast<std::size_t>(g.in[2]);
  for (std::size_t i = 0; i < n; ++i) {
    const auto m = static_cast<double>((rng.next() >> 40) | (1ull << 23));
    p[i] = static_cast<float>((rng.coin() ? -1 : 1) *
                              std::ldexp(m, static_cast<int>(rng.range(-40, 10)) - 23));
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (rng.range(0, 7) != 0) continue;
    const float big =
        (rng.coin() ? -1.0f : 1.0f) * std::ldexp(1.0f, static_cast<int>(rng.range(30, 60)));
    p[i] = big;
    // The partner cancels it exactly, or leaves big * 2^-k: sums near the checks' thresholds.
    const float rest = rng.coin() ? 0.0f : std::ldexp(big, -static_cast<int>(rng.range(12, 24)));
    if (const std::size_t j = i + (rng.coin() ? 1 : iw); j < n) p[j] = rest - big;
  }
  return t;
}

// A thread keeps the plan of its last geometry (avg_pool_fast.cpp, plan_of): a run on a kept
// plan, after runs of the same geometry on other data and ISAs, gives the bits of a run on a
// fresh one (a thread of its own), so nothing in a plan depends on the data or changes in a run.
TEST_CASE("fast avg_pool on a kept plan gives a fresh plan's bits", "[kernels][avg_pool_fast]") {
  Rng rng(0xCAC4Eull);
  std::vector<PoolGeometry> geometries = pattern_geometries();
  for (int i = 0; i < 60; ++i) geometries.push_back(random_geometry(rng));
  geometries.push_back(window({1, 1}, {3, 16386}, {3, 3}, {1, 1}, {0, 0}, {0, 0}, false, true));
  const Parallel par(2);
  for (const PoolGeometry& g : geometries) {
    INFO(describe(g));
    const Tensor first = wide_input(rng, g), in = wide_input(rng, g);
    for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
      INFO("isa " << static_cast<int>(isa));
      run_fast(g, first, par, isa);  // the plan kept, its first data run
      const Tensor kept = run_fast(g, in, par, isa);
      Tensor fresh;
      std::thread([&] { fresh = run_fast(g, in, par, isa); }).join();
      CHECK(irrun::testing::same_bits(kept, fresh));
    }
  }
}

// Every output within one ulp of its window's exact average (the big-integer oracle), on data
// where a plain double sum often is not: each double sum a path keeps must have been proven, by
// its first check or by the rescan of its row, and every path must take the same decisions.
TEST_CASE("fast avg_pool keeps only proven double sums", "[kernels][avg_pool_fast]") {
  Rng rng(0x5EC0DEull);
  std::vector<PoolGeometry> geometries = pattern_geometries();
  for (int i = 0; i < 150; ++i) geometries.push_back(random_geometry(rng));
  for (int i = 0; i < 100; ++i) {  // the fused stride-2 rows (S1, S2) and flat groups (S3, S9)
    const std::vector<std::int64_t> nc{1, rng.range(1, 3)}, in{rng.range(2, 20), rng.range(2, 70)};
    const bool ceil = rng.coin(), exclude = rng.coin();
    geometries.push_back(window(nc, in, {3, 3}, {2, 2}, {1, 1}, {1, 1}, ceil, exclude));
    geometries.push_back(window(nc, in, {2, 2}, {2, 2}, {0, 0}, {0, 0}, ceil, exclude));
    geometries.push_back(window(nc, in, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, exclude));
    geometries.push_back(window(nc, in, {5, 5}, {1, 1}, {2, 2}, {2, 2}, ceil, exclude));
  }
  // Wide rows: bands of one to three output rows, whose groups are no longer (a group never
  // spans bands), under each fused row kernel, a generic one and adaptive bins.
  for (const std::int64_t w : {9000, 20001}) {
    const std::vector<std::int64_t> nc{1, 2}, in{5, w};
    for (const std::int64_t k : {2, 3, 5, 7})
      geometries.push_back(
          window(nc, in, {k, k}, {1, 1}, {k / 2, k / 2}, {k / 2, k / 2}, false, k % 2 == 1));
    geometries.push_back(window(nc, in, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true, true));
    geometries.push_back(window(nc, in, {2, 2}, {2, 2}, {0, 0}, {0, 0}, false, false));
    geometries.push_back(window(nc, in, {4, 4}, {3, 3}, {1, 1}, {2, 2}, true, true));
    geometries.push_back(adaptive(nc, in, {2, w / 3}));
  }
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(3)};
  int iter = 0, outputs = 0, double_sums_wrong = 0;
  for (const PoolGeometry& g : geometries) {
    INFO(describe(g));
    const Tensor in = wide_input(rng, g);
    const float* x = in.data<float>();
    const Isa isas[] = {Isa::best, Isa::avx2, Isa::portable};
    std::vector<Tensor> outs;
    for (int k = 0; k < 3; ++k) outs.push_back(run_fast(g, in, pools[(iter + k) % 3], isas[k]));
    ++iter;
    CHECK(same_bits(outs[1], outs[0]));
    CHECK(same_bits(outs[2], outs[0]));
    std::size_t o = 0;
    int bad = 0;
    std::vector<double> values;
    irrun::testing::for_each_window(g, [&](const std::vector<std::size_t>& taps, auto divisor) {
      ++o;
      if (taps.empty()) return;
      values.clear();
      double s = 0;
      for (const std::size_t i : taps) values.push_back(x[i]), s += x[i];
      const auto n = static_cast<std::uint64_t>(divisor);
      ++outputs;
      double_sums_wrong += !within_one_ulp_of_average(values, n, static_cast<float>(s / n));
      for (int k = 0; k < 3; ++k) {
        const float y = outs[static_cast<std::size_t>(k)].data<float>()[o - 1];
        if (!within_one_ulp_of_average(values, n, y) && ++bad <= 3)
          FAIL_CHECK("isa " << static_cast<int>(isas[k]) << " output " << o - 1 << ": " << y);
      }
    });
  }
  INFO(outputs << " outputs, " << double_sums_wrong << " plain double sums wrong");
  CHECK(double_sums_wrong > outputs / 50);  // the data does defeat a plain double sum
}

// Found by fuzz_avg_pool: make_plan clamped to the empty range [1, 0] (no output rows) and then
// divided by the band's unit count, 0. Called directly, as the benchmarks and tests do.
TEST_CASE("fast avg_pool on geometries without outputs", "[kernels][avg_pool_fast]") {
  const Parallel par(2);
  for (const PoolGeometry& g : {adaptive({1, 1}, {1, 1}, {0, 1}), adaptive({1, 2}, {4, 5}, {3, 0}),
                                adaptive({2, 1}, {3, 4, 5}, {0, 2, 2})}) {
    INFO(describe(g));
    CHECK(irrun::kernels::avg_pool_fast_covers(ElementType::f32, g));
    const Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
    Tensor out = Tensor::zeros(ElementType::f32, shape_of(g, g.out));
    CHECK(irrun::kernels::avg_pool_fast(in, out, g, par));
  }
}

TEST_CASE("fast avg_pool declines an empty input axis with outputs in its padding",
          "[kernels][avg_pool_fast]") {
  // W of 0 padded to outputs: its plan divided spans by the row length (SIGFPE). The reference
  // kernel's zeros cost nothing.
  const Parallel par(2);
  for (const PoolGeometry& g :
       {window({1, 2}, {4, 0}, {1, 1}, {1, 1}, {0, 1}, {0, 1}, false, true),
        window({1, 1}, {0, 3, 3}, {1, 2, 2}, {1, 1, 1}, {1, 0, 0}, {1, 0, 0}, false, false)}) {
    INFO(describe(g));
    REQUIRE(g.out_plane_size() > 0);
    CHECK_FALSE(irrun::kernels::avg_pool_fast_covers(ElementType::f32, g));
    const Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
    Tensor out = Tensor::zeros(ElementType::f32, shape_of(g, g.out));
    CHECK_FALSE(irrun::kernels::avg_pool_fast(in, out, g, par));
    irrun::kernels::avg_pool(in, out, g, par);
    for (std::size_t i = 0; i < out.element_count(); ++i) CHECK(out.data<float>()[i] == 0.0f);
  }
}

TEST_CASE("fast avg_pool is bit-identical for any thread count", "[kernels][avg_pool_fast]") {
  Rng rng(0xD37E2ull);
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(3), Parallel(7)};
  std::vector<PoolGeometry> geometries = pattern_geometries();
  for (int i = 0; i < 60; ++i) geometries.push_back(random_geometry(rng));
  int iter = 0;
  for (const auto& g : geometries) {
    const Tensor in = random_input(rng, g, static_cast<Data>(iter++ % 5));
    INFO(describe(g));
    const Tensor first = run_fast(g, in, pools[0], Isa::best);
    for (std::size_t k = 1; k < std::size(pools); ++k) {
      INFO("threads " << pools[k].threads());
      CHECK(same_bits(run_fast(g, in, pools[k], Isa::best), first));
    }
  }
}

TEST_CASE("fast avg_pool falls back on cancellation", "[kernels][avg_pool_fast]") {
  // 2^30 + 2^-30 - 2^30: a plain double sum loses 2^-30 and would give 0; the bound cannot
  // prove the double sum, so the output goes through the exact sum: 2^-30/3.
  PoolGeometry g = window({1, 1}, {3}, {3}, {1}, {0}, {0}, false, true);
  Tensor in = Tensor::zeros(ElementType::f32, {1, 1, 3});
  in.mutable_data<float>()[0] = 0x1p30f;
  in.mutable_data<float>()[1] = 0x1p-30f;
  in.mutable_data<float>()[2] = -0x1p30f;
  const Parallel par(1);
  for (Isa isa : {Isa::best, Isa::avx2, Isa::portable})
    CHECK(run_fast(g, in, par, isa).data<float>()[0] == static_cast<float>(0x1p-30 / 3));
}

TEST_CASE("fast avg_pool falls back in the failing rows of a group", "[kernels][avg_pool_fast]") {
  // Rows are rescanned only where the check failed: put the cancelling window in a middle row
  // and in the last row of a group of several rows, the other rows plain.
  PoolGeometry g = window({1, 1}, {5, 3}, {1, 3}, {1, 1}, {0, 0}, {0, 0}, false, true);
  Tensor in = Tensor::zeros(ElementType::f32, {1, 1, 5, 3});
  float* x = in.mutable_data<float>();
  for (int i = 0; i < 15; ++i) x[i] = static_cast<float>(i + 1);
  for (int row : {2, 4}) {
    x[row * 3] = 0x1p30f;
    x[row * 3 + 1] = 0x1p-30f;
    x[row * 3 + 2] = -0x1p30f;
  }
  const Parallel par(1);
  for (Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
    const Tensor out = run_fast(g, in, par, isa);
    const float* y = out.data<float>();
    CHECK(y[0] == 2.0f);
    CHECK(y[1] == 5.0f);
    CHECK(y[2] == static_cast<float>(0x1p-30 / 3));
    CHECK(y[3] == 11.0f);
    CHECK(y[4] == static_cast<float>(0x1p-30 / 3));
  }
}

TEST_CASE("avg_pool dispatch uses the fast kernel only where it is covered",
          "[kernels][avg_pool_fast]") {
  const PoolGeometry g = pattern_geometries()[0];
  const Tensor in16 = Tensor::zeros(ElementType::f16, shape_of(g, g.in));
  Tensor out16 = Tensor::zeros(ElementType::f16, shape_of(g, g.out));
  const Parallel par(1);
  CHECK_FALSE(irrun::kernels::avg_pool_fast(in16, out16, g, par));
}

// The group kernels of the window path: equal adaptive bins (kernel = stride = in/out, bins of
// four vectorised on AVX-512), vertical row counts 0 (windows entirely in padding) to 7+, stride
// 1 and 2 with widths around the vector block sizes, several planes and bands; every data mode
// (mixed signs, cancellation, all-zero windows, NaN/inf) against the oracle, identical bits on
// every ISA path and thread count.
TEST_CASE("fast avg_pool group kernels on random geometries", "[kernels][avg_pool_fast]") {
  Rng rng(0x6A0F5ull);
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(3), Parallel(7)};
  int bins4 = 0, empty_rows = 0, long_bins = 0;
  for (int iter = 0; iter < 400; ++iter) {
    PoolGeometry g;
    const std::vector<std::int64_t> nc{rng.range(1, 2), rng.range(1, 6)};
    const auto kind = rng.range(0, 4);
    if (kind == 4) {  // uneven bins of 8 rows or more (the bound from the vertical pass's loads)
      const std::int64_t oh = rng.range(1, 6), ow = rng.range(2, 9);
      g = adaptive(nc, {oh * rng.range(8, 20) + rng.range(0, oh - 1), ow * rng.range(1, 9) + 1},
                   {oh, ow});
      ++long_bins;
    } else if (kind == 0) {  // equal adaptive bins, 2-D or 3-D
      const std::int64_t bw = rng.coin() ? 4 : rng.range(1, 6), bh = rng.range(1, 5);
      const std::int64_t ow = rng.range(1, 12), oh = rng.range(1, 9);
      if (rng.range(0, 3) == 0)
        g = adaptive(nc, {rng.range(1, 3) * 2, oh * bh, ow * bw}, {2, oh, ow});
      else
        g = adaptive(nc, {oh * bh, ow * bw}, {oh, ow});
      bins4 += bw == 4;
    } else {  // windows: stride 1 or 2, heights 1-7, pads that can exceed the kernel
      const std::int64_t kh = rng.range(1, 7), kw = rng.range(1, 7);
      const std::int64_t sh = rng.range(1, 3), sw = rng.range(1, 2);
      const std::int64_t ph = rng.range(0, 3), pw = rng.range(0, 3);
      const std::int64_t ih = rng.range(std::max<std::int64_t>(1, kh - 2 * ph), 40);
      const std::int64_t iw = rng.range(std::max<std::int64_t>(1, kw - 2 * pw), 70);
      g = window(nc, {ih, iw}, {kh, kw}, {sh, sw}, {ph, pw}, {ph, pw}, rng.coin(), rng.coin());
      empty_rows += ph >= kh;
    }
    if (!irrun::kernels::avg_pool_fast_covers(ElementType::f32, g)) continue;
    const Data mode = static_cast<Data>(iter % 5);
    INFO(describe(g) << " data " << static_cast<int>(mode));
    const Tensor in = random_input(rng, g, mode);
    const Tensor best = check_paths(g, in, pools[1], pools[2]);
    CHECK(same_bits(run_fast(g, in, pools[iter % 4], Isa::best), best));
  }
  CHECK(bins4 > 40);
  CHECK(empty_rows > 10);
  CHECK(long_bins > 40);
}

// Flat groups (AVX-512 and AVX2: narrow stride-1 rows with OW == IW, V rows back to back, masked
// taps at row boundaries): kernels 1-9 with every split of the K-1 pad columns, widths 1-64 around
// the vector block sizes, 2-D and 3-D, vertical strides 1-2 (runs of shifted rows or single rows),
// every data mode (signed zeros keep their sign through the masked taps, cancellation falls back
// in rows that straddle blocks), against the oracle and bit for bit against the portable path.
TEST_CASE("fast avg_pool flat groups on narrow rows", "[kernels][avg_pool_fast]") {
  Rng rng(0xF1A7ull);
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(3)};
  for (int iter = 0; iter < 300; ++iter) {
    const std::vector<std::int64_t> nc{rng.range(1, 2), rng.range(1, 4)};
    const std::int64_t kw = rng.range(1, 9), pl = rng.range(0, kw - 1), pr = kw - 1 - pl;
    const std::int64_t iw = iter % 3 == 0 ? 8 * rng.range(1, 8) + rng.range(-1, 1)
                                          : rng.range(std::max<std::int64_t>(1, kw - pl - pr), 64);
    const std::int64_t kh = rng.range(1, 5), ph = rng.range(0, kh - 1);
    const std::int64_t ih = rng.range(std::max<std::int64_t>(1, kh - 2 * ph), 30);
    const std::int64_t sh = rng.range(1, 2);
    PoolGeometry g =
        rng.range(0, 4) == 0
            ? window(nc, {rng.range(1, 4), ih, std::max<std::int64_t>(iw, 1)}, {2, kh, kw},
                     {1, sh, 1}, {1, ph, pl}, {0, ph, pr}, rng.coin(), rng.coin())
            : window(nc, {ih, std::max<std::int64_t>(iw, 1)}, {kh, kw}, {sh, 1}, {ph, pl}, {ph, pr},
                     rng.coin(), rng.coin());
    if (g.out[0] < 1 || g.out[1] < 1 || g.out[2] != g.in[2]) continue;
    REQUIRE(irrun::kernels::avg_pool_fast_covers(ElementType::f32, g));
    const Data mode = static_cast<Data>(iter % 5);
    INFO(describe(g) << " data " << static_cast<int>(mode));
    const Tensor in = random_input(rng, g, mode);
    check_paths(g, in, pools[iter % 3], pools[(iter + 1) % 3]);
  }
}

// Flat groups that start inside a plane: planes taller than a group (kVBufferDoubles / IW rows)
// and, with rows of 64, than a band, so later groups begin at rows past the first and take
// their lane masks from their own first row (35 x 117 rows is no multiple of eight outputs).
// "Same" 3x3 and 5x5 windows, 3x3 with vertical stride 2, 2x3 (rows of two input rows),
// include- and exclude-pad, every data mode, against the oracle and bit for bit across the paths.
TEST_CASE("fast avg_pool flat groups inside tall planes", "[kernels][avg_pool_fast]") {
  Rng rng(0x7A11ull);
  struct Case {
    std::int64_t ih, iw, kh, kw, sh;
  };
  const Case cases[] = {{300, 35, 3, 3, 1},
                        {400, 35, 5, 5, 1},
                        {700, 13, 3, 3, 2},
                        {1000, 64, 3, 3, 1},
                        {530, 29, 2, 3, 1}};
  int iter = 0;
  for (const Case& c : cases)
    for (const bool exclude : {false, true}) {
      const std::int64_t ph = c.kh / 2, pw = c.kw / 2;
      const PoolGeometry g = window({1, 2}, {c.ih, c.iw}, {c.kh, c.kw}, {c.sh, 1}, {ph, pw},
                                    {c.kh - 1 - ph, c.kw - 1 - pw}, false, exclude);
      REQUIRE(g.out[2] == g.in[2]);
      const Data mode = static_cast<Data>(iter++ % 5);
      INFO(describe(g) << " data " << static_cast<int>(mode));
      check_paths(g, random_input(rng, g, mode), Parallel(iter % 2 + 1), Parallel(2 - iter % 2));
    }
}

// 3x3 "same" flat groups (on AVX-512 exact_flat3_avx512 where its widths take them: a period of
// one or two rows a step, constant lane masks in the blocks that hold a row's first or last
// column; other widths keep band_flat_avx512): widths 8-64 in and out of its list, heights 1-9
// (every count of rows left after the last period) and planes taller than a group (later groups
// start past row 0), include- and exclude-pad. On sums that never round: no exact try missed, the
// reference's bits at one and two threads; on every data mode, and with a NaN, both infinities or a
// sum that rounds at each position of small planes: every path within one ulp of the oracle and bit
// for bit the same.
TEST_CASE("fast avg_pool 3x3 flat groups in periods of rows", "[kernels][avg_pool_fast]") {
  Rng rng(0x8A4ull);
  int iter = 0;
  for (const std::int64_t iw :
       {8, 12, 13, 14, 16, 17, 19, 20, 21, 24, 28, 32, 35, 36, 38, 40, 44, 48, 52, 56, 60, 64})
    for (const std::int64_t ih : {1, 2, 3, 4, 5, 6, 7, 8, 9, 150})
      for (const bool exclude : {false, true}) {
        const PoolGeometry g =
            window({1, 3}, {ih, iw}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, exclude);
        INFO(describe(g));
        const Tensor exact = exact_input(rng, g);
        ExactRouteCounts counts;
        const Tensor out = run_fast(g, exact, Parallel(1), Isa::best, &counts);
        CHECK(counts.misses == 0);
        CHECK(same_bits(out, run_reference(g, exact, Parallel(1))));
        CHECK(same_bits(run_fast(g, exact, Parallel(2), Isa::best), out));
        const Data mode = static_cast<Data>(iter++ % 5);
        check_paths(g, random_input(rng, g, mode), Parallel(1), Parallel(2));
      }
  for (const std::int64_t iw : {8, 12, 14, 17, 28, 35})
    for (const std::int64_t ih : {1, 3, 4, 9}) {
      const PoolGeometry g = window({1, 1}, {ih, iw}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, false);
      for (std::int64_t at = 0; at + 1 < ih * iw; ++at)
        for (const int kind : {0, 1, 2}) {
          INFO(describe(g) << " input " << at << ", kind " << kind);
          Tensor in = exact_input(rng, g);
          float* x = in.mutable_data<float>() + at;
          if (kind == 0)  // a NaN with a payload and a sign
            x[0] = std::bit_cast<float>((rng.coin() ? 0x80000000u : 0u) | 0x7FC00000u |
                                        static_cast<std::uint32_t>(rng.range(1, 0x3FFFFF)));
          if (kind == 1) x[0] = std::numeric_limits<float>::infinity(), x[1] = -x[0];
          if (kind == 2) x[0] = 0x1p60f;
          check_paths(g, in, Parallel(1), Parallel(2));
        }
    }
}

// Stride-2 rows run fused: 3 taps with one left pad column (3x3 s2 p1, S1 and S5) and 2 taps
// without pads (2x2 s2, S2), on AVX-512 and AVX2: row pointers advanced along runs of rows
// (broken by pads, by the depth of 3-D windows and by the groups), vertical sums kept in
// registers, the left tap carried from the previous block, masked loads at the row's end, no V
// row stored (a failing row rebuilds it for the rescan); on AVX2 the last input row stays
// converted for the next output row when that row starts with it (vertical stride 2 under 3
// rows). Widths 1-80 around the blocks of 8 and 16 columns, right pads up to the kernel and ceil
// (windows that start past the row), heights with rows of 0-3 input rows (pads up to the kernel)
// and 3-D windows of 4, 6 and 9 rows; every data mode against the oracle, bit for bit against
// the portable and AVX2 paths.
TEST_CASE("fast avg_pool fused stride-2 rows", "[kernels][avg_pool_fast]") {
  Rng rng(0x3A52ull);
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(3)};
  int cases = 0, empty_rows = 0, fallbacks = 0;
  for (int iter = 0; iter < 600; ++iter) {
    const std::vector<std::int64_t> nc{rng.range(1, 2), rng.range(1, 3)};
    const std::int64_t iw =
        iter % 2 == 0 ? 8 * rng.range(1, 10) + rng.range(-1, 1) : rng.range(1, 80);
    const std::int64_t kw = rng.range(2, 3), pl = kw - 2, pr = rng.range(0, kw - 1);
    const std::int64_t kh = rng.range(1, 3), ph = rng.range(0, kh);
    const std::int64_t ih = rng.range(std::max<std::int64_t>(1, kh - 2 * ph), 20);
    const bool ceil = rng.coin(), exclude = rng.coin();
    const PoolGeometry g =
        rng.range(0, 3) == 0
            ? window(nc, {rng.range(1, 6), ih, std::max<std::int64_t>(iw, 2)}, {3, kh, kw},
                     {2, rng.range(1, 2), 2}, {1, ph, pl}, {1, ph, pr}, ceil, exclude)
            : window(nc, {ih, std::max<std::int64_t>(iw, 2)}, {kh, kw}, {rng.range(1, 2), 2},
                     {ph, pl}, {ph, pr}, ceil, exclude);
    if (g.out[0] < 1 || g.out[1] < 1 || g.out[2] < 1) continue;
    REQUIRE(irrun::kernels::avg_pool_fast_covers(ElementType::f32, g));
    ++cases;
    empty_rows += ph >= kh;
    const Data mode = static_cast<Data>(iter % 5);
    fallbacks += mode == Data::cancel;
    INFO(describe(g) << " data " << static_cast<int>(mode));
    const Tensor in = random_input(rng, g, mode);
    check_paths(g, in, pools[iter % 3], pools[(iter + 1) % 3]);
  }
  CHECK(cases > 500);
  CHECK(empty_rows > 40);
  CHECK(fallbacks > 80);
}

// Stride-2 rows of separate passes (S5 on AVX2) keep their exact sums over their V values: the
// sums of outputs ow.. land on values that the blocks after them no longer read, which holds
// for left pads up to four. Left pads of 0-6 on 7-tap windows (pads 5 and 6 must not sum in
// place: the second block would read sums), on planes of over 8192 floats, whose bands are not
// checked after their group (run_windows); then a plane whose exact sums stay in place before
// one whose sums round (2^60 + 3 - 2^60), which runs again on the same V rows.
TEST_CASE("fast avg_pool stride-2 rows sum in place only where it is safe",
          "[kernels][avg_pool_fast]") {
  Rng rng(0x5214ull);
  std::vector<PoolGeometry> geometries;
  for (const std::int64_t pad : {0, 1, 2, 3, 4, 5, 6})
    for (const std::int64_t iw : {130, 161})
      geometries.push_back(
          window({1, 2}, {64, iw}, {3, 7}, {2, 2}, {1, pad}, {1, 6}, false, pad % 2 == 0));
  for (const PoolGeometry& g : geometries) {
    REQUIRE(irrun::kernels::avg_pool_fast_covers(ElementType::f32, g));
    for (const Data mode : {Data::mixed, Data::cancel, Data::specials}) {
      INFO(describe(g) << " data " << static_cast<int>(mode));
      check_paths(g, random_input(rng, g, mode), Parallel(1), Parallel(2));
    }
    Tensor in = random_input(rng, g, Data::mixed);
    round_last_plane(in, g);
    INFO(describe(g) << " exact, then rounding");
    check_paths(g, in, Parallel(1), Parallel(1));
  }
}

// AVX2's exact stride-2 rows on windows of many rows: fused (exact_band_s2_avx2: 3x3 windows
// with one left pad, outputs a multiple of four, up to nine rows: S5's 3x3x3, rows of 2x4 and 7,
// six rows at the edges) or summed in place (exact_band_s2v_avx2, the others). Windows of H that
// overlap by one to three rows and are clamped at either edge, D windows of one to three planes
// (dilated, or wholly in the padding, exclude-pad or not), 2-D rows, rows whose last columns load
// masked, and groups that end inside a plane of D (S5's 32x32 output rows). On sums that never
// round every try must hold and give the reference's bits at one and two threads; then a plane
// whose sums round, and the other data, on every path.
TEST_CASE("fast avg_pool exact stride-2 rows on 3-D and tall windows", "[kernels][avg_pool_fast]") {
  Rng rng(0xCA771ull);
  const PoolGeometry geometries[] = {
      window({1, 2}, {32, 64, 64}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false, true),
      window({1, 2}, {9, 23, 37}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, true, false),
      window({1, 1}, {7, 30, 45}, {2, 5, 3}, {1, 2, 2}, {0, 2, 1}, {1, 2, 1}, false, true),
      window({1, 1}, {6, 19, 20}, {3, 4, 3}, {2, 1, 2}, {0, 0, 0}, {2, 3, 0}, true, true),
      window({1, 1}, {6, 19, 20}, {3, 4, 3}, {2, 1, 2}, {0, 0, 0}, {2, 3, 0}, true, false),
      window({1, 2}, {9, 21, 40}, {2, 3, 3}, {1, 2, 2}, {0, 1, 1}, {0, 1, 1}, false, true,
             {3, 1, 1}),
      window({1, 3}, {40, 70}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true),
      window({1, 2}, {120, 90}, {5, 5}, {2, 2}, {2, 2}, {2, 2}, false, true),
      // Fused as the first (outputs a multiple of four), with other row counts and edges.
      window({1, 2}, {9, 23, 39}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, true, false),
      window({1, 1}, {7, 30, 47}, {2, 4, 3}, {1, 2, 2}, {0, 1, 1}, {1, 2, 1}, false, true),
      window({1, 2}, {100, 95}, {7, 3}, {2, 2}, {3, 1}, {3, 1}, false, true),
      window({1, 2}, {9, 21, 39}, {2, 3, 3}, {1, 2, 2}, {0, 1, 1}, {0, 1, 1}, false, true,
             {3, 1, 1}),
      window({1, 1}, {6, 19, 39}, {3, 3, 3}, {2, 1, 2}, {0, 0, 1}, {2, 3, 1}, true, true),
      window({1, 1}, {6, 19, 39}, {3, 3, 3}, {2, 1, 2}, {0, 0, 1}, {2, 3, 1}, true, false),
  };
  for (const PoolGeometry& g : geometries) {
    check_exact_avx2(rng, g);
    INFO(describe(g));
    for (const Data mode : {Data::mixed, Data::zeros, Data::specials}) {
      INFO("data " << static_cast<int>(mode));
      check_paths(g, random_input(rng, g, mode), Parallel(1), Parallel(2));
    }
  }
}

// 3x3 s2 rows (S1) on AVX2 store their exact sums four at a time in the lanes' order 0, 2, 1, 3
// and scale them with the column factors in that order (Plan::inv_w_swap). With exclude-pad,
// ceil and two right pads, output OW - 2 (OW a multiple of four, so the third of its four) has
// a pad column and a factor of its own, and OW - 1 only pads. The route must be tried (sums of
// multiples of 2^-8 never round) and give the reference's bits; a plane whose sums round follows.
TEST_CASE("fast avg_pool 3x3 s2 rows scale their exact sums by their own columns' factors",
          "[kernels][avg_pool_fast]") {
  Rng rng(0x51F4ull);
  for (const std::int64_t iw : {37, 45, 117})
    for (const bool exclude : {true, false}) {
      const PoolGeometry g =
          window({1, 3}, {60, iw}, {3, 3}, {2, 2}, {1, 1}, {1, 2}, true, exclude);
      REQUIRE(g.out[2] % 4 == 0);
      check_exact_avx2(rng, g);
    }
}

// Uneven bins (S8) on AVX2 keep their exact sums over their V values, output ow at V[ow]: only
// where every bin starts at or past its own index (in >= out), else a later bin would read a sum.
// Planes over 8192 floats (bands not checked after their group), bins narrower and wider than
// their outputs' count, each data mode, and a plane whose sums round after one whose sums stayed
// in place.
TEST_CASE("fast avg_pool uneven bins sum in place only where every bin starts past its index",
          "[kernels][avg_pool_fast]") {
  const bool avx2 = cpu_has_avx2();
  Rng rng(0xB1A5ull);
  const std::tuple<PoolGeometry, bool> cases[] = {
      {adaptive({1, 2}, {200, 60}, {17, 13}), true},
      {adaptive({1, 2}, {150, 78}, {13, 77}), true},  // bins of one and two columns
      {adaptive({1, 2}, {2000, 5}, {17, 9}), false},  // bins 1 and 2 start before 1 and 2
  };
  for (const auto& [g, in_place] : cases) {
    for (const Data mode : {Data::mixed, Data::cancel, Data::specials}) {
      INFO(describe(g) << " data " << static_cast<int>(mode));
      check_paths(g, random_input(rng, g, mode), Parallel(1), Parallel(2));
    }
    Tensor in = exact_input(rng, g);
    round_last_plane(in, g);
    INFO(describe(g) << " exact, then rounding");
    ExactRouteCounts counts;
    run_fast(g, in, Parallel(1), Isa::avx2, &counts);
    CHECK((counts.tries > 0) == (avx2 && in_place));
    CHECK(counts.misses == (avx2 && in_place ? 1 : 0));
    check_paths(g, in, Parallel(1), Parallel(1));
  }
}

// 2x2 s2 planes checked after (S2) whose chunks hold 4 to 72 outputs: the scale pass of sums
// that need no bound in blocks of eight (one factor for the chunk), the last block again, or
// only four outputs, or, where the last row sums one input row (ceil, odd height), row by row.
TEST_CASE("fast avg_pool 2x2 s2 planes scale chunks of every size", "[kernels][avg_pool_fast]") {
  Rng rng(0x5CA1Eull);
  for (const std::int64_t ow : {4, 8, 12})
    for (const std::int64_t oh : {1, 2, 3})
      for (const std::int64_t planes : {1, 2})
        for (const bool odd : {false, true}) {
          const PoolGeometry g = window({1, planes}, {2 * oh - (odd ? 1 : 0), 2 * ow}, {2, 2},
                                        {2, 2}, {0, 0}, {0, 0}, odd, true);
          for (const Data mode : {Data::mixed, Data::cancel, Data::specials}) {
            INFO(describe(g) << " data " << static_cast<int>(mode));
            check_paths(g, random_input(rng, g, mode), Parallel(1), Parallel(2));
          }
        }
}

// Stride-1 rows too wide for flat groups, K = 3, 5, 7 taps with no pad column on the left or
// (K - 1) / 2 (S9), run fused on AVX-512: vertical sums of eight columns kept in a register, the
// taps shifted out of it and its neighbours, and four output rows whose windows are K consecutive
// input rows summed in one pass over their K + 3 rows (each converted once). Widths 1-150 around
// the blocks of eight, right pads up to the kernel (windows past the row), heights that leave
// runs of four rows and remainders, windows of other heights (one row at a time), vertical
// strides 1-2 and 3-D windows; every data mode against the oracle, bit for bit against the
// portable and AVX2 paths.
TEST_CASE("fast avg_pool fused stride-1 rows", "[kernels][avg_pool_fast]") {
  Rng rng(0x51F0ull);
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(3)};
  int cases = 0, fused = 0;
  for (int iter = 0; iter < 500; ++iter) {
    const std::vector<std::int64_t> nc{rng.range(1, 2), rng.range(1, 3)};
    const std::int64_t kw = 2 * rng.range(1, 3) + 1, pl = rng.coin() ? 0 : kw / 2;
    const std::int64_t pr = rng.range(0, kw - 1);
    const std::int64_t iw = iter % 2 == 0 ? 8 * rng.range(1, 18) + rng.range(-1, 1)
                                          : rng.range(std::max<std::int64_t>(1, kw - pl - pr), 150);
    const std::int64_t kh = rng.range(0, 2) != 0 ? kw : rng.range(1, 8), ph = rng.range(0, kh / 2);
    const std::int64_t ih = rng.range(std::max<std::int64_t>(1, kh - 2 * ph), 24);
    const std::int64_t sh = rng.range(0, 3) != 0 ? 1 : 2;
    const bool ceil = rng.coin(), exclude = rng.coin();
    const PoolGeometry g =
        rng.range(0, 4) == 0
            ? window(nc, {rng.range(1, 4), ih, std::max<std::int64_t>(iw, 1)}, {2, kh, kw},
                     {1, sh, 1}, {1, ph, pl}, {0, ph, pr}, ceil, exclude)
            : window(nc, {ih, std::max<std::int64_t>(iw, 1)}, {kh, kw}, {sh, 1}, {ph, pl}, {ph, pr},
                     ceil, exclude);
    if (g.out[0] < 1 || g.out[1] < 1 || g.out[2] < 1) continue;
    REQUIRE(irrun::kernels::avg_pool_fast_covers(ElementType::f32, g));
    ++cases;
    fused += g.in[0] == 1 && kh == kw && sh == 1 && g.out[1] - 2 * ph >= 4;
    const Data mode = static_cast<Data>(iter % 5);
    INFO(describe(g) << " data " << static_cast<int>(mode));
    const Tensor in = random_input(rng, g, mode);
    check_paths(g, in, pools[iter % 3], pools[(iter + 1) % 3]);
  }
  CHECK(cases > 450);
  CHECK(fused > 100);
}

// Fused stride-1 rows run four at a time: one cancelling window, its output in each row of a
// pass of four in turn (5x5 s1 p2 on rows 12 high: rows 2-5 are the first pass whose windows are
// five whole input rows), at a column in the first, a middle or one of the last blocks (rows of
// 82: a partial block of two outputs); the rest of the input 2^20, so every other output passes
// the band's check and only the flagged row is rechecked.
TEST_CASE("fast avg_pool fused stride-1 rows flag each row's failures",
          "[kernels][avg_pool_fast]") {
  const Parallel par(1);
  for (const int iw : {80, 82}) {
    const PoolGeometry g = window({1, 1}, {12, iw}, {5, 5}, {1, 1}, {2, 2}, {2, 2}, false, true);
    for (int oh = 2; oh < 6; ++oh)
      for (const int ow : {2, 37, iw - 3, iw - 2}) {
        Tensor in = Tensor::zeros(ElementType::f32, {1, 1, 12, iw});
        float* x = in.mutable_data<float>();
        std::fill(x, x + 12 * iw, 0x1p20f);
        for (int h = oh - 2; h <= oh + 2; ++h)
          for (int w = ow - 2; w <= std::min(ow + 2, iw - 1); ++w) x[h * iw + w] = 0.0f;
        x[oh * iw + ow - 1] = 0x1p30f;
        x[oh * iw + ow] = 0x1p-30f;  // a double sum loses it: 0 instead of 2^-30/n
        x[oh * iw + ow + 1] = -0x1p30f;
        std::vector<double> want = oracle_of(g, in);  // exact but for the planted window
        const double n = 5.0 * (std::min(ow + 2, iw - 1) - (ow - 2) + 1);  // exclude-pad
        want[static_cast<std::size_t>(oh * iw + ow)] = 0x1p-30 / n;
        for (Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
          INFO("output " << oh << ", " << ow << " of " << iw << " isa " << static_cast<int>(isa));
          const Tensor out = run_fast(g, in, par, isa);
          CHECK(out.data<float>()[oh * iw + ow] == static_cast<float>(0x1p-30 / n));
          CHECK(check_against_oracle(g, out, want, "fused rows") == 0);
        }
      }
  }
}

// An output whose double sum s^ = G lies just under its first check's T must be judged by its
// own window. Here the window's double sum misses the exact sum by a +-2^-40 that +2^20
// absorbed, and G / N is an f32 midpoint, so the double sum and the exact one round to
// neighbouring f32 values for one of the two signs (fl(G * r) lies on either side of the
// midpoint, by r's rounding): the output must be the reference kernel's. For K x K windows of
// N = K^2 taps, T = N * d * 2^20 * 2^-26 (depth d = N - 1, M = 2^20 from the window's +-2^20,
// the greatest |x| of the band too), and G = N * (a + ulp(a) / 2) lies just under it. A smaller
// T would put G over it and fail this test. The +-2^20 pair sits in each row of the
// window in turn, for windows across the groups of the fused rows that take T from their own
// loads (band_s1_avx512, band_s1_avx2 and band_s2_avx512, carried from group to group;
// band_s2_avx2, per group): a row missing from them leaves T of the small values alone and G
// standing. The flagged rows' rescans must find the output by its stored value.
// For bands checked after their group (check_after): `fill`, the other inputs (G still the
// window's sum), puts every other output above T, so that the check stands or falls by this one
// alone; with `snan_unread`, every input no window reads (stride > k) is a signalling NaN, which
// drops the values before it in its lane out of AVX-512's vrangeps maximum: such bands must not
// be checked after (Plan::check_after). `stride_w`: along W, if not `stride`.
struct UnderT {
  float fill = 0;
  bool snan_unread = false;
  int stride_w = 0;
};

void check_sums_under_t(const PoolGeometry& g, int k, int stride, int pad, UnderT opt = {}) {
  const Parallel par(1);
  const int IH = static_cast<int>(g.in[1]), IW = static_cast<int>(g.in[2]);
  const int OH = static_cast<int>(g.out[1]), OW = static_cast<int>(g.out[2]);
  const int sw = opt.stride_w ? opt.stride_w : stride;
  const double a_top = (k * k - 1) / 64.0;  // T / N
  const double ulp = std::ldexp(1.0, std::ilogb(a_top) - 23);
  for (int oh = 0; oh < OH; ++oh)
    for (const int ow : {pad, OW / 2, OW - 1 - pad})
      for (int dr = 0; dr < k; ++dr)
        for (int j = 0; j < 4; ++j) {
          const int top = oh * stride - pad, left = ow * sw - pad;
          if (top < 0 || top + k > IH || left < 0 || left + k > IW) continue;  // whole windows
          const double a = a_top - 2 * (j / 2 + 1) * ulp;  // even last bit: ties go to a
          const int planted = k == 2 ? 4 : 5;              // the window's taps set below
          const double big = k * k * (a + ulp / 2) - (k * k - planted) * opt.fill;
          const auto hi = static_cast<float>(big);
          const auto lo = static_cast<float>(big - hi);
          REQUIRE(static_cast<double>(hi) + lo == big);
          Tensor in = Tensor::zeros(ElementType::f32, {1, 1, IH, IW});
          float* x = in.mutable_data<float>();
          std::fill(x, x + IH * IW, opt.fill);
          if (opt.snan_unread)
            for (int h = 0; h < IH; ++h)
              for (int w = 0; w < IW; ++w)
                if ((h + pad) % stride >= k || (w + pad) % sw >= k)
                  x[h * IW + w] = std::numeric_limits<float>::signaling_NaN();
          x[(top + dr) * IW + left] = 0x1p20f;
          x[(top + (dr + 1) % k) * IW + left] = j % 2 ? 0x1p-40f : -0x1p-40f;  // lost
          x[(top + dr) * IW + left + 1] = -0x1p20f;
          const int hr = k == 2 ? (dr + 1) % 2 : 1;  // k = 2: beside the lost value
          const int lr = k == 2 ? hr : k - 1;        // k = 2: hi + lo, exact
          x[(top + hr) * IW + left + k - 1] = hi;
          float& xl = x[(top + lr) * IW + left + k - 1];
          xl = (lr == hr ? xl : 0.0f) + lo;
          Tensor want = Tensor::zeros(ElementType::f32, {1, 1, OH, OW});
          irrun::kernels::avg_pool_reference(in, want, g, par);
          const float y = want.data<float>()[oh * OW + ow];
          for (Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
            INFO(describe(g) << " output " << oh << ", " << ow << " pair in row " << top + dr
                             << " a " << a << " isa " << static_cast<int>(isa));
            CHECK(same_bits(run_fast(g, in, par, isa).data<float>()[oh * OW + ow], y));
          }
        }
}

TEST_CASE("fast avg_pool judges every sum under its T by its own window",
          "[kernels][avg_pool_fast]") {
  // 5x5 s1 on rows of 1040: V rows of 1040 doubles, groups of four output rows; without pads
  // the first group starts with a pass of four rows.
  for (const int pad : {2, 0})
    for (const bool exclude : {true, false})
      check_sums_under_t(
          window({1, 1}, {12, 1040}, {5, 5}, {1, 1}, {pad, pad}, {pad, pad}, false, exclude), 5, 1,
          pad);
  // 3x3 s2 p1 rows in pairs, the pair in each of the five input rows of a pair's windows. Rows
  // of 100: one group; of 1040: groups of four rows, two pairs; of 4000: bands of four rows,
  // whose first pair's first input row no group of the band loaded before.
  for (const int iw : {1040, 100, 4000})
    for (const bool exclude : {true, false})
      check_sums_under_t(window({1, 1}, {22, iw}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, exclude),
                         3, 2, 1);
  // 3x3 and 7x7 s1 "same" rows (their own bound on AVX2 too, band_s1_avx2): rows of 1042 make
  // groups of four output rows and a partial last block of outputs; rows of 100, one group.
  for (const int k : {3, 7})
    for (const int iw : {1042, 100})
      check_sums_under_t(
          window({1, 1}, {12, iw}, {k, k}, {1, 1}, {k / 2, k / 2}, {k / 2, k / 2}, false, true), k,
          1, k / 2);
  // 2x2 s2 rows (their own bound on AVX2): rows of 100 with a partial last block of outputs.
  // Rows of 100 make one band of one group, which is checked after it (check_after, as S6's
  // bins of four are): there the other outputs must be large for the check to hang on this one.
  for (const int iw : {1040, 100, 4000})
    for (const float fill : {0.0f, 4.0f})
      check_sums_under_t(window({1, 1}, {22, iw}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, false, true), 2,
                         2, 0, {fill});
  // Bins of four (band_bins4_avx512): on 28x28 planes checked after their group; rows of 1040
  // make a plane too large for that, checked by the rows themselves.
  for (const float fill : {0.0f, 4.0f})
    for (const std::int64_t iw : {28, 1040})
      check_sums_under_t(adaptive({1, 1}, {28, iw}, {7, iw / 4}), 4, 4, 0, {fill});
  // 3x3 windows of stride 4 leave every fourth row, column, or both, unread.
  for (const int iw : {47, 48, 100})
    for (const auto& [sh, sw] : {std::pair{4, 4}, {4, 2}, {2, 4}})
      check_sums_under_t(window({1, 1}, {23, iw}, {3, 3}, {sh, sw}, {0, 0}, {0, 0}, false, true), 3,
                         sh, 0, {4.0f, true, sw});
}

// An exact double sum needs no bound: an output whose sum s^ is the exact sum of its window
// (rounded to nearest) keeps fl32(s^ * r) on every path (fallback_output), under its own T too,
// where the exact
// average rounded once can be the neighbouring f32 value. Here s^ = hi + mid + lo, three floats
// that add up exactly to a double for which the two differ, beside a +-2^30 pair that sets T
// far above it (every partial sum exact). Found near n * m for f32 midpoints m (fl(s * r) and
// s / n then fall on either side of m for some s); r = fl(1 / n), n = 49. (Not for every n: for 9
// and 25, n * fl(1 / n) is too close to 1 for s near a midpoint to tell the two apart.)
struct ExactUnderT {
  double s = 0;
  float hi = 0, mid = 0, lo = 0;
};

ExactUnderT exact_sum_under_t(double n) {
  const double r = 1.0 / n;
  for (int j = 0; j < 100000; ++j) {
    const double m = 2.0 - (2 * j + 1) * 0x1p-24;  // near 2: m * (r's error) is largest
    for (int d = -4; d <= 4; ++d) {
      double s = n * m;
      for (int i = 0; i < std::abs(d); ++i) s = std::nextafter(s, d < 0 ? 0.0 : 1e300);
      if (static_cast<float>(s * r + 0.0) == static_cast<float>(s / n)) continue;
      ExactUnderT e{s, static_cast<float>(s), 0, 0};
      e.mid = static_cast<float>(s - e.hi);
      e.lo = static_cast<float>(s - e.hi - e.mid);
      if (static_cast<double>(e.hi) + e.mid + e.lo == s) return e;
    }
  }
  FAIL("no exact sum found");
  return {};
}

TEST_CASE("fast avg_pool keeps an exact sum under its T", "[kernels][avg_pool_fast]") {
  const Parallel par(1);
  // A 7x7 plane (the whole-plane sums; lane i % 8 adds x[i] in address order): the pair in
  // lane 0 cancels before hi joins it, mid and lo in lanes 1 and 2. And a 7x7 window of a 7x15
  // plane: the pair and hi down its first column, mid and lo atop the next two.
  const PoolGeometry plane = window({1, 1}, {7, 7}, {7, 7}, {1, 1}, {0, 0}, {0, 0}, false, true);
  const PoolGeometry win = window({1, 1}, {7, 15}, {7, 7}, {2, 2}, {0, 0}, {0, 0}, false, true);
  for (const auto& [g, n, at] : {std::tuple{plane, 49.0, std::array{0, 8, 16, 1, 2}},
                                 std::tuple{win, 49.0, std::array{0, 15, 30, 1, 2}}}) {
    const ExactUnderT e = exact_sum_under_t(n);
    Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
    float* x = in.mutable_data<float>();
    x[at[0]] = 0x1p30f, x[at[1]] = -0x1p30f, x[at[2]] = e.hi, x[at[3]] = e.mid, x[at[4]] = e.lo;
    const auto y = static_cast<float>(e.s * (1.0 / n) + 0.0);
    const Tensor ref = run_reference(g, in, par);
    REQUIRE_FALSE(same_bits(ref.data<float>()[0], y));  // the case tells the two rules apart
    for (Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
      INFO(describe(g) << " s " << e.s << " isa " << static_cast<int>(isa));
      CHECK(same_bits(run_fast(g, in, par, isa).data<float>()[0], y));
    }
  }
}

// The exact-first routes (avg_pool_fast.cpp) on sums that never round (multiples of 2^-8 under
// 2^7): every try must hold. A route whose pass rounds anything but its sums (a product computed
// in an exact band, say) fails every try with the same outputs, only slower, which no other test
// sees. The benchmark shapes with fewer planes, on each path with its routes: AVX-512's S8 rows
// take none (their bound comes with their loads), nor do AVX2's S9 rows (their time is in their
// stores) or the portable path.
TEST_CASE("fast avg_pool keeps its exact-first tries on sums that never round",
          "[kernels][avg_pool_fast]") {
  const bool avx2 = cpu_has_avx2(), avx512 = cpu_has_avx512();
  struct Shape {
    const char* name;
    PoolGeometry g;
    bool on_avx2, on_avx512;  // whether the path has an exact-first route for it
  };
  const Shape shapes[] = {
      {"S1", window({1, 4}, {112, 112}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true), true, true},
      {"S2", window({1, 8}, {56, 56}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, false, true), true, true},
      {"S3", window({1, 8}, {28, 28}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, false), true, true},
      {"S4", window({1, 64}, {7, 7}, {7, 7}, {1, 1}, {0, 0}, {0, 0}, false, true), true, true},
      {"S5", window({1, 2}, {32, 64, 64}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false, true),
       true, true},
      {"S6", adaptive({1, 8}, {28, 28}, {7, 7}), true, true},
      {"S7", adaptive({1, 64}, {7, 7}, {1, 1}), true, true},
      {"S8", adaptive({1, 2}, {224, 224}, {17, 13}), true, false},
      {"S9", window({1, 1}, {64, 1024}, {5, 5}, {1, 1}, {2, 2}, {2, 2}, true, true), false, true},
  };
  Rng rng(0xE8AC7ull);
  for (const Shape& s : shapes) {
    const Tensor in = exact_input(rng, s.g);
    for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
      const bool routes = isa == Isa::portable         ? false
                          : isa == Isa::best && avx512 ? s.on_avx512
                                                       : avx2 && s.on_avx2;
      ExactRouteCounts counts;
      run_fast(s.g, in, Parallel(2), isa, &counts);
      INFO(s.name << " isa " << static_cast<int>(isa) << ": " << counts.tries << " tries, "
                  << counts.misses << " missed");
      CHECK(counts.misses == 0);
      CHECK((counts.tries > 0) == routes);
    }
  }
}

// Small bands (planes of a few rows) try the exact route in batches on AVX-512: the flag read
// and the outputs scanned for NaN once a batch, and a batch that misses runs again on the
// checked route. On exact data no try misses. A plane whose sums round, a NaN and a NaN sum of
// both infinities, in turn in planes that start, end or sit inside batches, on 1-3 threads
// (whose ranges cut the batches elsewhere): every path within one ulp of the oracle and the
// portable path's bits.
TEST_CASE("fast avg_pool batches the exact tries of small bands", "[kernels][avg_pool_fast]") {
  Rng rng(0xBA7C4ull);
  // (Stride-1 windows inside planes narrower than 32 stream instead: planes_stream; planes of
  // up to 512 floats, eight or more of them, run in lanes, "fast avg_pool runs small planes in
  // lanes", but flat groups of rows past 128 floats.)
  const PoolGeometry shapes[] = {
      window({1, 300}, {6, 90}, {3, 3}, {1, 1}, {0, 0}, {0, 0}, false, true),
      window({1, 200}, {5, 130}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true),
      window({2, 75}, {12, 44}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, true),
      // (windows taller than wide: no exact route)
      window({1, 90}, {10, 8, 8}, {2, 7, 7}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, false, true),
  };
  for (const PoolGeometry& g : shapes) {
    INFO(describe(g));
    const Tensor exact = exact_input(rng, g);
    const Tries t = exact_tries(g, exact);
    CHECK((t.tries > 0) == (cpu_has_avx512() && g.spatial_rank == 2));
    CHECK(t.lanes == 0);
    check_paths(g, exact, Parallel(1), Parallel(1));
    check_planted(rng, g, {0, 1, 37, g.planes() - 1});
  }
}

// Small planes (up to 512 floats), eight or more of them, run eight at a time in lanes on both
// vector paths (Ops::lanes), but where whole planes run as one pass already (streamed, 2x2 s2) or
// flat groups hold rows of more than 128 floats (on AVX2, 512: so there more layers take them).
// 1-D, 2-D and 3-D windows with padding, strides,
// dilation, ceil mode and the pad in the average or not, and adaptive bins; plane counts that
// leave 0-7 planes past the last chunk; every data mode (sums that round, NaN and infinities
// send their chunk to the window kernel) against the oracle and every path's bits on one to
// three threads (whose ranges cut the chunks elsewhere), the input against unreadable pages and
// the output between canaries. On exact data no try may miss.
TEST_CASE("fast avg_pool runs small planes in lanes", "[kernels][avg_pool_fast]") {
  Rng rng(0x1A4E5ull);
  std::int64_t lanes = 0, lanes_avx2 = 0;
  for (int iter = 0; iter < 240; ++iter) {
    const auto rank = static_cast<std::size_t>(rng.range(1, 3));
    std::vector<std::int64_t> in, k, s, pb, pe, d, out;
    for (std::size_t i = 0; i < rank; ++i)
      in.push_back(rng.range(1, rank == 3 ? 8 : rank == 2 ? 20 : 64));
    const std::vector<std::int64_t> nc{rng.range(1, 2), rng.range(4, 24)};
    PoolGeometry g;
    if (iter % 5 == 4) {
      for (const auto v : in) out.push_back(rng.range(1, v + 1));
      g = adaptive(nc, in, out);
    } else {
      for (const auto v : in) {
        d.push_back(iter % 7 == 0 ? rng.range(1, 2) : 1);
        k.push_back(rng.range(1, std::min<std::int64_t>(v, 7)));
        s.push_back(rng.range(1, 3));
        pb.push_back(rng.range(0, (k.back() - 1) * d.back()));
        pe.push_back(rng.range(0, (k.back() - 1) * d.back()));
      }
      g = window(nc, in, k, s, pb, pe, rng.coin(), rng.coin(), d);
    }
    if (g.out_plane_size() == 0 || g.in_plane_size() > 512) continue;
    const Data mode = static_cast<Data>(iter % 5);
    INFO(describe(g) << " data " << static_cast<int>(mode));
    const Tensor exact = exact_input(rng, g);
    ExactRouteCounts counts;
    const Tensor want = run_fast(g, exact, Parallel(1), Isa::best, &counts);
    CHECK(counts.misses == 0);
    CHECK(same_bits(want, run_reference(g, exact, Parallel(1))));
    lanes += counts.lane_tries > 0;
    const Tries avx2 = exact_tries(g, exact, Isa::avx2);
    CHECK(same_bits(run_fast(g, exact, Parallel(1), Isa::avx2), want));
    lanes_avx2 += avx2.lanes > 0;
    const Tensor x = random_input(rng, g, mode);
    const int threads = iter % 3 + 1;
    const Tensor best = check_paths(g, x, Parallel(threads), Parallel(4 - threads));
    irrun::testing::with_guarded_copies(x, [&](const Tensor& copy, const char* where) {
      INFO(where);
      check_within_canaries(g, copy, Parallel(threads), Isa::best, best);
    });
  }
  if (cpu_has_avx2()) CHECK(lanes > 100);
  if (cpu_has_avx512())
    CHECK(lanes_avx2 > lanes);
  else if (cpu_has_avx2())
    CHECK(lanes_avx2 == lanes);
}

// The lanes' chunks of eight planes fall back one by one: a plane whose sums round, a NaN and a
// NaN sum of both infinities in turn in the first, a middle and the last plane of a chunk and
// in the planes past the last whole chunk, on one to three threads; every path within one ulp
// of the oracle and the portable path's bits.
TEST_CASE("fast avg_pool lanes fall back chunk by chunk", "[kernels][avg_pool_fast]") {
  Rng rng(0xC4A1Full);
  const PoolGeometry shapes[] = {
      window({1, 37}, {8, 8}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, true),
      window({2, 13}, {14, 14}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, false),
      window({1, 21}, {10, 7, 7}, {2, 7, 7}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, false, true),
      adaptive({1, 19}, {9, 11}, {4, 3}),
  };
  for (const PoolGeometry& g : shapes) {
    INFO(describe(g));
    const Tensor exact = exact_input(rng, g);
    CHECK((exact_tries(g, exact).lanes == g.planes() / 8) == cpu_has_avx2());
    CHECK((exact_tries(g, exact, Isa::avx2).lanes == g.planes() / 8) == cpu_has_avx2());
    check_planted(rng, g, {0, 3, 7, 8, g.planes() - 1});
  }
}

// Small planes checked after their group are checked a few at a time (S6: two 28x28 planes, 2x2
// s2 on 16x16: eight): the check must take its bound from every plane of the chunk and judge
// every output of it. One plane holds ones and a window whose double sum loses 3 beside +-2^60
// (and the ones under them), in turn each plane of the chunks; the other planes hold ones (a
// bound from them alone passes that window) or 2^50 (their outputs pass the chunk's bound, so
// the check hangs on that window). Every path on one and two threads (whose ranges cut the
// chunks elsewhere) must give the reference's bits.
TEST_CASE("fast avg_pool checks every plane of a chunk checked after", "[kernels][avg_pool_fast]") {
  const PoolGeometry geometries[] = {
      adaptive({1, 6}, {28, 28}, {7, 7}),
      window({1, 11}, {16, 16}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, false, true),
      window({1, 11}, {10, 5}, {3, 3}, {1, 1}, {0, 0}, {0, 0}, false, true),  // streamed
  };
  for (const PoolGeometry& g : geometries) {
    const std::int64_t planes = g.planes(), IW = g.in[2], n = g.in_plane_size();
    for (const float fill : {1.0f, 0x1p50f})
      for (std::int64_t j = 0; j < planes; ++j) {
        Tensor in = Tensor::zeros(ElementType::f32, {1, planes, g.in[1], IW});
        float* x = in.mutable_data<float>();
        std::fill(x, x + planes * n, fill);
        std::fill(x + j * n, x + (j + 1) * n, 1.0f);
        float* w = x + j * n;  // the window of output (0, 0)
        w[0] = 0x1p60f, w[IW] = 3.0f, w[1] = -0x1p60f, w[IW + 1] = 256.0f;
        Tensor want = Tensor::zeros(ElementType::f32, {1, planes, g.out[1], g.out[2]});
        irrun::kernels::avg_pool_reference(in, want, g, Parallel(1));
        for (const int threads : {1, 2})
          for (Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
            INFO(describe(g) << " fill " << fill << " plane " << j << " threads " << threads
                             << " isa " << static_cast<int>(isa));
            CHECK(same_bits(run_fast(g, in, Parallel(threads), isa), want));
          }
      }
  }
}

// Small planes whose stride-1 windows lie inside them and whose rows are narrower than 32
// stream on both vector paths (planes_stream): a chunk's planes as one row of positions, eight
// at a time, the outputs among them packed and stored together. 1-D, 2-D and 3-D windows of 1-9
// columns under up to 3x5 rows, plane sizes that put outputs in every lane of the blocks, plane
// counts that end chunks (2048 input floats) and the threads' ranges anywhere in a block; every
// data mode against the oracle and the portable path's bits on one to three threads, the input
// against unreadable pages and the output between canaries.
TEST_CASE("fast avg_pool streams small planes", "[kernels][avg_pool_fast]") {
  Rng rng(0x57EA4ull);
  int streamed = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const auto rank = rng.range(1, 3);
    const std::int64_t kw = rng.range(1, 9), iw = rng.range(kw, 31);
    const std::int64_t kh = rank > 1 ? rng.range(1, 5) : 1, ih = rank > 1 ? rng.range(kh, 12) : 1;
    const std::int64_t kd = rank > 2 ? rng.range(1, 3) : 1, id = rank > 2 ? rng.range(kd, 4) : 1;
    const std::int64_t in_size = id * ih * iw;
    const std::int64_t out_size = (id - kd + 1) * (ih - kh + 1) * (iw - kw + 1);
    const std::vector<std::int64_t> nc{
        1, rng.range(1, 3 * std::max<std::int64_t>(1, 2048 / in_size) + 1)};
    const bool exclude = rng.coin();
    const PoolGeometry g =
        rank == 1   ? window(nc, {iw}, {kw}, {1}, {0}, {0}, false, exclude)
        : rank == 2 ? window(nc, {ih, iw}, {kh, kw}, {1, 1}, {0, 0}, {0, 0}, false, exclude)
                    : window(nc, {id, ih, iw}, {kd, kh, kw}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, false,
                             exclude);
    streamed += 8 * out_size >= in_size && out_size < in_size;
    const Data mode = static_cast<Data>(iter % 5);
    INFO(describe(g) << " data " << static_cast<int>(mode));
    const Tensor in = random_input(rng, g, mode);
    const int threads = iter % 3 + 1;
    const Tensor best = check_paths(g, in, Parallel(threads), Parallel(4 - threads));
    for (const Isa isa : {Isa::best, Isa::avx2})
      irrun::testing::with_guarded_copies(in, [&](const Tensor& copy, const char* where) {
        INFO("isa " << static_cast<int>(isa) << ", " << where);
        check_within_canaries(g, copy, Parallel(threads), isa, best);
      });
  }
  CHECK(streamed > 250);
}

// Every path stores whole blocks where it can (a row's last block again over outputs already
// written, a flat group's blocks across row ends): none may store past the output tensor, which
// here is caller memory with canaries after it (and before it).
TEST_CASE("fast avg_pool writes nothing outside its output", "[kernels][avg_pool_fast]") {
  Rng rng(0xCA7A);
  int cases = 0;
  for (int iter = 0; iter < 300; ++iter) {
    const std::int64_t iw = rng.range(2, 70), ih = rng.range(1, 9), planes = rng.range(1, 3);
    PoolGeometry g;
    switch (iter % 4) {
      case 0:  // 2x2 s2 (S2's rows)
        g = window({1, planes}, {ih + 1, iw}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, rng.coin(), true);
        break;
      case 1:  // 3x3 s2 p1 (S1's rows)
        g = window({1, planes}, {ih, iw}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, rng.coin(), rng.coin());
        break;
      case 2:  // 3x3 s1 p1 (flat groups on narrow rows)
        g = window({1, planes}, {ih, iw}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, rng.coin());
        break;
      default:  // adaptive bins (of four where the sizes divide)
        g = adaptive({1, planes}, {ih * 4, iw}, {ih, std::max<std::int64_t>(1, iw / 4)});
    }
    if (g.out[1] < 1 || g.out[2] < 1) continue;
    ++cases;
    INFO(describe(g));
    const Tensor in = random_input(rng, g, Data::mixed);
    const Tensor want = run_fast(g, in, Parallel(1), Isa::portable);
    for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable})
      for (const int threads : {1, 2}) check_within_canaries(g, in, Parallel(threads), isa, want);
  }
  CHECK(cases > 250);
}

TEST_CASE("fast avg_pool fused stride-2 row pairs flag each row's failures",
          "[kernels][avg_pool_fast]") {
  // 3x3 s2 p1 rows run two at a time (rows 1-2 and 3-4 here; row 0 sums two input rows). One
  // cancelling window, in the second row of a pair (input row 4 reaches output row 2 alone) or
  // in the first (input row 6: output row 3 alone). Its other taps are 0, the rest of the input
  // 2^20: every other output passes the band's check, so only the flagged row is rechecked.
  const PoolGeometry g = window({1, 1}, {12, 24}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true);
  const Parallel par(1);
  for (const auto [oh, ow, row] : {std::array{2, 5, 4}, std::array{3, 9, 6}}) {
    Tensor in = Tensor::zeros(ElementType::f32, {1, 1, 12, 24});
    float* x = in.mutable_data<float>();
    std::fill(x, x + 12 * 24, 0x1p20f);
    for (int h = 2 * oh - 1; h <= 2 * oh + 1; ++h)
      for (int w = 2 * ow - 1; w <= 2 * ow + 1; ++w) x[h * 24 + w] = 0.0f;
    x[row * 24 + 2 * ow - 1] = 0x1p30f;
    x[row * 24 + 2 * ow] = 0x1p-30f;  // a double sum loses it: 0 instead of 2^-30/9
    x[row * 24 + 2 * ow + 1] = -0x1p30f;
    std::vector<double> want = oracle_of(g, in);  // exact but for the planted window
    want[static_cast<std::size_t>(oh * 12 + ow)] = 0x1p-30 / 9;
    for (Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
      INFO("output row " << oh);
      const Tensor out = run_fast(g, in, par, isa);
      CHECK(out.data<float>()[oh * 12 + ow] == static_cast<float>(0x1p-30 / 9));
      CHECK(check_against_oracle(g, out, want, "row pairs") == 0);
    }
  }
}

// 2x2 s2 rows (S2's, on AVX-512 four outputs at a time) on planes too tall to be checked after
// their group: every output of a row's partial last block is checked, also where every window
// divides by the kernel's area (ceil with a pad counted, one factor for the row). One window at
// a time cancels: 2^30 + 2^-30 over -2^30 + 0 sums to 0 in double, not 2^-30. The others (2^20
// and more) pass the band's check: only the planted one can flag its row.
TEST_CASE("fast avg_pool 2x2 s2 rows check every output of their last block",
          "[kernels][avg_pool_fast]") {
  const Parallel par(1);
  int planted = 0;
  for (const bool ceil_pad : {false, true})
    for (const std::int64_t iw : {2, 3, 5, 6, 7, 10, 11}) {
      const std::int64_t ih = (8192 / iw + 4) / 2 * 2, pe = ceil_pad ? 1 : 0;
      const PoolGeometry g =
          window({1, 1}, {ih, iw}, {2, 2}, {2, 2}, {0, 0}, {0, pe}, ceil_pad, !ceil_pad);
      const std::int64_t ow_count = g.out[2], oh = g.out[1] / 2;
      for (std::int64_t ow = 0; ow < ow_count && 2 * ow + 1 < iw; ++ow) {
        Tensor in = Tensor::zeros(ElementType::f32, {1, 1, ih, iw});
        float* x = in.mutable_data<float>();
        for (std::int64_t i = 0; i < ih * iw; ++i)
          x[i] = std::ldexp(static_cast<float>(i % 7 + 1), 20);
        float* top = x + 2 * oh * iw + 2 * ow;
        top[0] = 0x1p30f, top[iw] = 0x1p-30f, top[1] = -0x1p30f, top[iw + 1] = 0.0f;
        const Tensor want = run_reference(g, in, Parallel(1));
        for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
          INFO("width " << iw << (ceil_pad ? " ceil, pad counted" : "") << " output " << ow
                        << " isa " << static_cast<int>(isa));
          const Tensor out = run_fast(g, in, par, isa);
          CHECK(same_bits(out, want));
        }
        ++planted;
      }
    }
  CHECK(planted == 2 * (1 + 1 + 2 + 3 + 3 + 5 + 5));
}

// The AVX2 3x3 s2 p1 rows keep a converted input row in the group's V buffer for the next row.
// A rescan rebuilds a failed row's V values but not its zero pad column: that row must not have
// landed on it. Output (0, 0) cancels (2^30 + 2^-30 over -2^30 + 0: its double sum is 0); its
// rescan must sum the pad as 0, not as a kept row's 2^20, which passes the check and keeps the 0.
// (Found by fuzz_avg_pool: AVX2 one ulp away from the other paths.)
TEST_CASE("fast avg_pool fused stride-2 rows leave the pad of rescanned rows zero",
          "[kernels][avg_pool_fast]") {
  for (const std::int64_t ih : {3, 5, 8, 23}) {
    const PoolGeometry g = window({1, 2}, {ih, 19}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true);
    INFO(describe(g));
    Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
    float* x = in.mutable_data<float>();
    std::fill(x, x + in.element_count(), 0x1p20f);
    for (const std::int64_t plane : {0, 1}) {
      float* p = x + plane * ih * 19;
      p[0] = 0x1p30f, p[1] = -0x1p30f;
      p[19] = 0x1p-30f, p[20] = 0.0f;
    }
    std::vector<double> want = oracle_of(g, in);  // exact but for the planted windows
    const auto plane_out = static_cast<std::size_t>(g.out[1] * g.out[2]);
    want[0] = want[plane_out] = 0x1p-30 / 4;
    for (const int threads : {1, 2})
      for (Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
        INFO("threads " << threads << " isa " << static_cast<int>(isa));
        const Tensor out = run_fast(g, in, Parallel(threads), isa);
        CHECK(out.data<float>()[0] == static_cast<float>(0x1p-30 / 4));
        CHECK(check_against_oracle(g, out, want, "pad column") == 0);
      }
  }
  // Nor may it land on a later group's row: right after a short group's rows (the last group of
  // a band: 36x1000 has bands of 16 output rows in groups of 4, 40x600 groups of 6) lies a V row
  // of the next plane's groups. Plane 1's output (2, 0) cancels as above (rows 3-5, columns
  // 0-1: 2^30 - 2^30 + 2^-30 over six taps).
  for (const auto& [ih, iw] : {std::pair<std::int64_t, std::int64_t>{36, 1000}, {40, 600}}) {
    const PoolGeometry g = window({1, 2}, {ih, iw}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true);
    INFO(describe(g));
    Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
    float* x = in.mutable_data<float>();
    std::fill(x, x + in.element_count(), 0x1p20f);
    float* p = x + ih * iw;
    for (std::int64_t h = 3; h <= 5; ++h) p[h * iw] = p[h * iw + 1] = 0.0f;
    p[3 * iw] = 0x1p30f, p[3 * iw + 1] = -0x1p30f, p[4 * iw] = 0x1p-30f;
    const std::size_t at = static_cast<std::size_t>(g.out[1] * g.out[2] + 2 * g.out[2]);
    for (Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
      INFO("isa " << static_cast<int>(isa));
      CHECK(run_fast(g, in, Parallel(1), isa).data<float>()[at] == static_cast<float>(0x1p-30 / 6));
    }
  }
}

TEST_CASE("fast avg_pool flat groups fall back in straddling blocks", "[kernels][avg_pool_fast]") {
  // Width 5, k3 s1 p1 exclude-pad: the block of outputs 8-15 covers the end of row 1, row 2 and
  // the start of row 3; only output 8 (2^30 + 2^-30 - 2^30) cancels and falls back.
  PoolGeometry g = window({1, 1}, {4, 5}, {1, 3}, {1, 1}, {0, 1}, {0, 1}, false, true);
  Tensor in = Tensor::zeros(ElementType::f32, {1, 1, 4, 5});
  float* x = in.mutable_data<float>();
  for (int i = 0; i < 20; ++i) x[i] = static_cast<float>(i + 1);
  x[7] = 0x1p30f, x[8] = 0x1p-30f, x[9] = -0x1p30f;
  const Parallel par(1);
  const auto want = oracle_of(g, in);
  for (Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
    const Tensor out = run_fast(g, in, par, isa);
    CHECK(check_against_oracle(g, out, want, "fast") == 0);
    CHECK(out.data<float>()[8] == static_cast<float>(0x1p-30 / 3));
    CHECK(out.data<float>()[9] == static_cast<float>((0x1p-30 - 0x1p30) / 2));
    CHECK(out.data<float>()[10] == 11.5f);
  }
}

// Whole-plane sums take a bound of |x| from the loads of the sums, and a NaN may throw it off
// (vrangeps drops a quiet NaN but turns a signalling one into a quiet NaN that the next load
// replaces). A NaN, quiet or signalling, anywhere in a unit of planes, last blocks included, must
// still leave a cancelling plane of the same unit failing its check and falling back: its double
// sum, 2^-10 (2^40 + 3 * 2^-15 lost 3 * 2^-15), is wrong by 9% and would pass a check against
// the other planes' |x| <= 3. Plane counts cover whole groups of planes and the remainder.
TEST_CASE("fast avg_pool whole-plane checks hold with a NaN in every position",
          "[kernels][avg_pool_fast]") {
  const Parallel par(1);
  for (const auto& [h, w] : {std::pair<std::int64_t, std::int64_t>{3, 3}, {3, 5}, {7, 7}, {4, 4}})
    for (const std::int64_t channels : {5, 8, 13}) {
      const PoolGeometry g = adaptive({1, channels}, {h, w}, {1, 1});
      const std::int64_t n = h * w;
      for (const std::int64_t cancel : {std::int64_t{0}, channels - 1})
        for (std::int64_t nan_plane = 0; nan_plane < channels; ++nan_plane) {
          if (nan_plane == cancel) continue;
          for (std::int64_t at = 0; at < 2 * n; ++at) {
            const std::int64_t nan_at = at % n;
            const float nan = at < n ? std::numeric_limits<float>::quiet_NaN()
                                     : std::numeric_limits<float>::signaling_NaN();
            Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
            float* x = in.mutable_data<float>();
            for (std::int64_t i = 0; i < channels * n; ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
            float* c = x + cancel * n;
            std::fill(c, c + n, 0.0f);
            // With 17 floats or more, 2^40, 3 * 2^-15 and -2^40 share lane 0 of the sums, where
            // one NaN can drop 2^40 from the bound.
            const std::int64_t lane = n >= 17 ? 8 : 1;
            c[0] = 0x1p40f, c[lane] = 0x3p-15f, c[2 * lane] = -0x1p40f, c[3] = 0x1p-10f;
            x[nan_plane * n + nan_at] = nan;
            INFO(describe(g) << " cancel " << cancel << " NaN at " << nan_plane << "/" << nan_at
                             << (at < n ? " quiet" : " signalling"));
            for (Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
              INFO("isa " << static_cast<int>(isa));
              const Tensor out = run_fast(g, in, par, isa);
              CHECK(out.data<float>()[cancel] ==
                    static_cast<float>((0x1p-10 + 0x3p-15) / static_cast<double>(n)));
              CHECK(std::isnan(out.data<float>()[nan_plane]));
            }
          }
        }
    }
}

namespace {

// Data whose f32 averages depend on the order of the double additions: each window holds K
// (a power of two, the divisor), K * 2^-24 and two halves of K's double ulp, K * 2^-53. The
// exact average is just above the f32 midpoint 1 + 2^-24; it rounds up when the two halves meet
// before either meets K (their sum is one ulp), else each half is rounded away (a tie to the
// even K + K * 2^-24) and the average rounds to 1. Returns the values of one window of n taps
// with K at b, K * 2^-24 at b + 1 and the halves at i and j (positions modulo n).
std::vector<float> order_probe(std::int64_t n, double k, std::int64_t b, std::int64_t i,
                               std::int64_t j) {
  std::vector<float> v(static_cast<std::size_t>(n), 0.0f);
  v[static_cast<std::size_t>(b % n)] = static_cast<float>(k);
  v[static_cast<std::size_t>((b + 1) % n)] = static_cast<float>(k * 0x1p-24);
  v[static_cast<std::size_t>(i % n)] = static_cast<float>(k * 0x1p-53);
  v[static_cast<std::size_t>(j % n)] = static_cast<float>(k * 0x1p-53);
  return v;
}

// Every order probe of n taps with K at each b of `bs` and the halves at two other places.
std::vector<std::vector<float>> order_probes(std::int64_t n, double k,
                                             std::initializer_list<std::int64_t> bs) {
  std::vector<std::vector<float>> probes;
  for (const std::int64_t b : bs)
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = i + 1; j < n; ++j)
        if (i != b && j != b && i != (b + 1) % n && j != (b + 1) % n)
          probes.push_back(order_probe(n, k, b, i, j));
  return probes;
}

// The verdict on an input of order probes: some outputs round up and some do not (the probes do
// tell orders apart), the portable path is within the oracle's bound, and every path gives its
// bits.
void check_probe_outputs(const PoolGeometry& g, const Tensor& in, const Parallel& par) {
  const Tensor portable = run_fast(g, in, par, Isa::portable);
  const float* y = portable.data<float>();
  const auto outputs = static_cast<std::ptrdiff_t>(portable.element_count());
  const auto up = std::count_if(y, y + outputs, [](float v) { return v > 1.0f; });
  CHECK(up > 0);
  CHECK(up < outputs);
  CHECK(check_against_oracle(g, portable, oracle_of(g, in), "portable") == 0);
  CHECK(same_bits(run_fast(g, in, par, Isa::avx2), portable));
  CHECK(same_bits(run_fast(g, in, par, Isa::best), portable));
}

}  // namespace

// Whole-plane sums (global pools with a power-of-two kernel volume, so the divisor is exact):
// one order probe per plane, over every placement of the two halves and a few of K, plane counts
// that leave partial groups of planes and planes with every kind of last block. Any path that
// adds in another order than plane_sum_portable changes some outputs by one ulp. Then each
// probe fills a unit of 64 planes: a path whose exact sums (tried first, kept if no addition
// rounded) took another order than its checked ones would find whole units exact in that order
// where this one rounds, and keep other bits (round 48's first try).
// Streamed planes (planes_stream) add in that order too, and so do planes in lanes (Ops::lanes),
// which keep only sums whose additions were all exact: in another order, sums that round in this
// one could be exact there. Each plane holds an order probe in the window of its first output
// and zeros in the column after it, which the second output's window takes with the rest of the
// probe. Windows of 4x2, 8x1 and 2x2x2 tell the rows' order apart (three rows or more), those of
// 2x4 and 1x8 the taps'. (Those of 2x3 and 1x5, the lanes' windows of three and five taps in
// registers, cannot: a divisor of 6 or 5 leaves the probe's averages away from f32 midpoints.)
// A padded row or plane after the plane's last stops them streaming: the lanes take them (their
// first outputs as before).
TEST_CASE("fast avg_pool streamed planes add in the same order on every ISA",
          "[kernels][avg_pool_fast]") {
  struct Case {
    std::vector<std::int64_t> in, k;
  };
  for (const Case& c :
       {Case{{4, 3}, {4, 2}}, Case{{8, 2}, {8, 1}}, Case{{2, 2, 3}, {2, 2, 2}},
        Case{{2, 5}, {2, 4}}, Case{{1, 9}, {1, 8}}, Case{{2, 4}, {2, 3}}, Case{{1, 6}, {1, 5}}})
    for (const std::int64_t pad : {0, 1}) {
      const std::int64_t n =
          std::accumulate(c.k.begin(), c.k.end(), std::int64_t{1}, std::multiplies<>());
      const auto probes = order_probes(n, static_cast<double>(n), {0, n / 2, n - 1});
      // In lanes each probe fills a chunk of eight planes: a chunk is kept only when all its sums
      // are exact, and one probe whose sums round would hide the others.
      const std::int64_t repeat = pad == 1 ? 8 : 1;
      const std::vector<std::int64_t> ones(c.in.size(), 1), zeros(c.in.size(), 0);
      std::vector<std::int64_t> end = zeros;
      end[0] = pad;
      const PoolGeometry g = window({1, repeat * static_cast<std::int64_t>(probes.size())}, c.in,
                                    c.k, ones, zeros, end, false, true);
      REQUIRE(g.out_plane_size() == 2 * (pad + 1));
      INFO(describe(g));
      for (const Isa isa : {Isa::best, Isa::avx2}) {
        ExactRouteCounts counts;
        run_fast(g, Tensor::zeros(ElementType::f32, shape_of(g, g.in)), Parallel(1), isa, &counts);
        if (pad == 1) CHECK((counts.lane_tries > 0) == cpu_has_avx2());
      }
      Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
      float* x = in.mutable_data<float>();
      const std::int64_t IH = g.in[1], IW = g.in[2], kh = g.kernel[1], kw = g.kernel[2];
      for (std::int64_t p = 0; p < g.planes(); ++p)
        for (std::int64_t t = 0; t < n; ++t)
          x[p * g.in_plane_size() + (t / kw / kh * IH + t / kw % kh) * IW + t % kw] =
              probes[static_cast<std::size_t>(p / repeat)][static_cast<std::size_t>(t)];
      check_probe_outputs(g, in, Parallel(2));
    }
}

TEST_CASE("fast avg_pool whole-plane sums add in the same order on every ISA",
          "[kernels][avg_pool_fast]") {
  struct Case {
    std::int64_t h, w, kh, kw;
  };
  const Parallel par(2);
  for (const Case& c : {Case{3, 3, 4, 4}, Case{3, 5, 4, 8}, Case{2, 3, 2, 4}, Case{4, 5, 4, 8},
                        Case{7, 7, 8, 8}, Case{2, 4, 2, 4}})
    for (const std::int64_t repeat : {1, 64}) {
      const std::int64_t n = c.h * c.w;
      const double k = static_cast<double>(c.kh * c.kw);
      std::vector<float> data;
      const auto probes =
          repeat == 1 ? order_probes(n, k, {0, n / 2, n - 1}) : order_probes(n, k, {0});
      for (const auto& v : probes)
        for (std::int64_t r = 0; r < repeat; ++r) data.insert(data.end(), v.begin(), v.end());
      const std::int64_t planes = static_cast<std::int64_t>(data.size()) / n;
      // Pads that make the kernel cover the plane: a global pool dividing by the kernel volume.
      const PoolGeometry g = window({1, planes}, {c.h, c.w}, {c.kh, c.kw}, {1, 1}, {0, 0},
                                    {c.kh - c.h, c.kw - c.w}, false, false);
      REQUIRE(g.out[1] * g.out[2] == 1);
      INFO(describe(g) << ", each probe in " << repeat << " planes");
      Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
      std::copy(data.begin(), data.end(), in.mutable_data<float>());
      check_probe_outputs(g, in, par);
    }
}

// Whole-plane sums are checked first against the greatest |x| of their unit of 64 planes as if
// its signs were mixed; when one fails, every plane of the unit is judged by its own T, from
// its min and max. Each unit here holds order probes (positive; see order_probe) and one plane
// of +-2^100, so every probe fails the first check; each probe's plane has one sign, T = 0, so
// the probes keep their double sums, with +2^100 and -2^100 alike. Falling back instead (a
// recheck against the unit's T, or none) gives the reference kernel's sums, which differ by one
// ulp on some probes.
TEST_CASE("fast avg_pool whole-plane sums that fail are judged by their own plane",
          "[kernels][avg_pool_fast]") {
  const std::int64_t n = 16;  // 4x4 planes, divisor 16
  const auto probes = order_probes(n, 16.0, {0, 7});
  for (const float big : {0x1p100f, -0x1p100f}) {
    // Plane 5 of every unit of 64 is the big one.
    std::vector<float> data;
    std::vector<std::int64_t> probe_plane;
    for (std::size_t k = 0; k < probes.size(); ++k) {
      if (data.size() / n % 64 == 5) data.insert(data.end(), n, big);
      probe_plane.push_back(static_cast<std::int64_t>(data.size()) / n);
      data.insert(data.end(), probes[k].begin(), probes[k].end());
    }
    const auto planes = static_cast<std::int64_t>(data.size()) / n;
    const PoolGeometry g = adaptive({1, planes}, {4, 4}, {1, 1});
    Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
    std::copy(data.begin(), data.end(), in.mutable_data<float>());
    // The probes alone: one sign, small, every sum passes the first check.
    const PoolGeometry g_alone =
        adaptive({1, static_cast<std::int64_t>(probes.size())}, {4, 4}, {1, 1});
    Tensor alone = Tensor::zeros(ElementType::f32, shape_of(g_alone, g_alone.in));
    for (std::size_t k = 0; k < probes.size(); ++k)
      std::copy(probes[k].begin(), probes[k].end(), alone.mutable_data<float>() + k * n);
    const Tensor sums = run_fast(g_alone, alone, Parallel(1), Isa::portable);
    const Tensor ref = run_reference(g, in, Parallel(1));
    int differ = 0;
    for (std::size_t k = 0; k < probes.size(); ++k)
      differ += sums.data<float>()[k] != ref.data<float>()[probe_plane[k]];
    REQUIRE(differ > 0);  // the two kinds of result do tell the checks apart
    INFO("big " << big << ", " << differ << " of " << probes.size() << " probes differ");
    for (const int threads : {1, 2})
      for (Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
        INFO("threads " << threads << " isa " << static_cast<int>(isa));
        const Tensor out = run_fast(g, in, Parallel(threads), isa);
        int bad = 0;
        for (std::size_t k = 0; k < probes.size(); ++k) {
          bad += out.data<float>()[probe_plane[k]] != sums.data<float>()[k];
        }
        CHECK(bad == 0);
        CHECK(check_against_oracle(g, out, oracle_of(g, in), "fast") == 0);
      }
  }
}

// The greatest |x| of a unit of 64 planes must see every float: one plane per unit holds 1, and
// 3, +2^100 (eight floats later, the same lane) and -2^100 (the next lane, whose pair cancels
// the first), so its double sum is 1 where the exact sum is 4; the other planes hold ones, so
// that they pass the first check. A bound that misses the two big values (both within 16
// floats) lets the 1 pass too, and nothing judges it again. The plane takes every
// position in the unit's first and last planes (every offset of 7x7 planes in a stream of
// eight), and one more unit is partial.
TEST_CASE("fast avg_pool whole-plane sums take their bound from every float",
          "[kernels][avg_pool_fast]") {
  const Parallel par(1);
  for (const auto& [h, w] :
       {std::pair<std::int64_t, std::int64_t>{3, 3}, {5, 5}, {7, 7}, {4, 5}, {8, 8}, {6, 9}}) {
    const std::int64_t n = h * w;
    std::vector<std::pair<std::int64_t, std::int64_t>> at;  // (plane of the unit, first float)
    for (std::int64_t j = 0; j < 64; ++j)
      if (j < 9 || j >= 55)
        for (std::int64_t i = 0; i + 8 < n; i += 2) at.emplace_back(j, i);
    at.emplace_back(61, 0);  // in the partial unit of 63 planes
    const auto planes = static_cast<std::int64_t>(at.size()) * 64 - 1;
    const PoolGeometry g = adaptive({1, planes}, {h, w}, {1, 1});
    Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
    std::fill_n(in.mutable_data<float>(), planes * n, 1.0f);
    for (std::size_t u = 0; u < at.size(); ++u) {
      const auto [j, i] = at[u];
      float* x = in.mutable_data<float>() + (static_cast<std::int64_t>(u) * 64 + j) * n;
      std::fill_n(x, n, 0.0f);
      x[(i + 2) % 8] = 1.0f;
      x[i] = 3.0f, x[i + 8] = 0x1p100f, x[i + 9 < n ? i + 9 : i + 1] = -0x1p100f;
    }
    const Tensor want = run_reference(g, in, Parallel(1));
    REQUIRE(want.data<float>()[at[0].first] == static_cast<float>(4.0 / static_cast<double>(n)));
    for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
      INFO(h << "x" << w << " planes, isa " << static_cast<int>(isa));
      CHECK(same_bits(run_fast(g, in, par, isa), want));
    }
  }
}

// 7x7 planes add in an order of their own (ops.hpp): lane l of plane j holds its floats i with
// (j + i) % 4 == l, and the lanes add as (l0 + l1) + (l2 + l3). So +2^100 and 3 in one lane
// (3 is lost, in any order within the lane), -2^100 in its pair's other lane and 1 in the other
// pair give a double sum of 1 where the exact sum is 4; the other planes hold ones. A bound that
// misses the two big values (in one chunk of four floats, or a chunk apart) lets the 1 pass. The
// big value takes every position of planes 0-7 (two groups of four) and of the last planes of a
// partial unit (one at a time after its groups).
TEST_CASE("fast avg_pool 7x7 whole-plane sums take their bound from every float",
          "[kernels][avg_pool_fast]") {
  const Parallel par(1);
  constexpr std::int64_t n = 49;
  // Plane j of planes: ones, but the four values above with +2^100 at float i.
  const auto plant = [](float* x, std::int64_t j, std::int64_t i) {
    std::fill_n(x, n, 0.0f);
    const std::int64_t a = (j + i) % 4;  // the lane of +2^100
    // Its pair's lane: the neighbour in its chunk, or three floats away at the plane's ends.
    std::int64_t pair = a % 2 == 0 ? i + 1 : i - 1;
    if (pair < 0 || pair >= n) pair = a % 2 == 0 ? i - 3 : i + 3;
    const std::int64_t same = i + 4 < n ? i + 4 : i - 4, other = i + 2 < n ? i + 2 : i - 2;
    x[i] = 0x1p100f, x[pair] = -0x1p100f, x[same] = 3.0f, x[other] = 1.0f;
  };
  const auto check = [&](std::int64_t planes, const std::vector<std::int64_t>& at) {
    const PoolGeometry g = adaptive({1, planes}, {7, 7}, {1, 1});
    Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
    std::fill_n(in.mutable_data<float>(), planes * n, 1.0f);
    for (std::size_t u = 0; u < at.size(); u += 2)
      plant(in.mutable_data<float>() + at[u] * n, at[u] % 4, at[u + 1]);
    const Tensor want = run_reference(g, in, Parallel(1));
    REQUIRE(want.data<float>()[at[0]] == static_cast<float>(4.0 / 49.0));
    for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
      INFO(planes << " planes, isa " << static_cast<int>(isa));
      CHECK(same_bits(run_fast(g, in, par, isa), want));
    }
  };
  std::vector<std::int64_t> at;  // (plane, float) pairs, one per unit of 64 planes
  for (std::int64_t j = 0; j < 8; ++j)
    for (std::int64_t i = 0; i < n; ++i) at.insert(at.end(), {64 * (j * n + i) + j, i});
  check(8 * n * 64, at);
  for (const std::int64_t j : {60, 61, 62})  // one partial unit of 63 planes: 15 groups of four
    for (std::int64_t i = 0; i < n; ++i) check(63, {j, i});
}

// The last planes of a unit that do not fill a group of four add one at a time, in the order of
// their index modulo four: order probes in every plane of 4 + r planes.
TEST_CASE("fast avg_pool 7x7 whole planes after the last group of four keep the order",
          "[kernels][avg_pool_fast]") {
  const Parallel par(1);
  constexpr std::int64_t n = 49;
  const auto probes = order_probes(n, 64.0, {0});
  for (const std::int64_t r : {1, 2, 3}) {
    const PoolGeometry g =
        window({1, 4 + r}, {7, 7}, {8, 8}, {1, 1}, {0, 0}, {1, 1}, false, false);  // divisor 64
    REQUIRE(g.out[1] * g.out[2] == 1);
    std::int64_t up = 0, bad = 0;
    for (const auto& v : probes) {
      Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
      for (std::int64_t p = 0; p < 4 + r; ++p)
        std::copy(v.begin(), v.end(), in.mutable_data<float>() + p * n);
      const Tensor portable = run_fast(g, in, par, Isa::portable);
      up += portable.data<float>()[4 + r - 1] > 1.0f;
      for (const Isa isa : {Isa::avx2, Isa::best})
        bad += !same_bits(run_fast(g, in, par, isa), portable);
    }
    INFO(r << " planes after the group");
    CHECK(up > 0);
    CHECK(up < static_cast<std::int64_t>(probes.size()));
    CHECK(bad == 0);
  }
}

// Equal adaptive bins of four by four (divisor 1/4 * 1/4, exact): one order probe per bin, over
// every placement of the two halves and a few of K, with widths that leave partial blocks of the
// vectorised bins-of-four pass (and widths below one block). The vertical pass adds each column's
// four rows first, then the horizontal pass the four columns: another order on any path changes
// some outputs by one ulp.
TEST_CASE("fast avg_pool bins of four add in the same order on every ISA",
          "[kernels][avg_pool_fast]") {
  const Parallel par(2);
  const auto probes = order_probes(16, 16.0, {0, 5, 15});
  const auto count = static_cast<std::int64_t>(probes.size());
  for (const std::int64_t ow : {1, 2, 3, 4, 5, 7, 9, 12}) {
    const std::int64_t oh = (count + ow - 1) / ow;
    const PoolGeometry g = adaptive({1, 2}, {4 * oh, 4 * ow}, {oh, ow});
    INFO(describe(g));
    Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
    float* x = in.mutable_data<float>();
    for (std::int64_t plane = 0; plane < 2; ++plane)
      for (std::int64_t o = 0; o < oh * ow; ++o) {
        // Plane 1 takes the probes in reverse order: every probe in every column of a block.
        const auto& v =
            probes[static_cast<std::size_t>(plane == 0 ? o % count : count - 1 - o % count)];
        for (std::int64_t k = 0; k < 16; ++k)
          x[plane * 16 * oh * ow + (4 * (o / ow) + k / 4) * 4 * ow + 4 * (o % ow) + k % 4] =
              v[static_cast<std::size_t>(k)];
      }
    check_probe_outputs(g, in, par);
  }
}

// An output that fails the first check (against its band's stats, or on AVX-512 with uneven
// bins of many rows against the greatest |x| its group's vertical pass loaded) is judged by the
// T of its own window. Bins of 16 rows by 2 or 3 columns (5 columns into 3 uneven bins): the
// outer bins hold order probes (positive) in their own columns, and every fifth output row has
// +-2^100, which cancel, in column 1 (the first and middle bins). The first bins of those rows
// have mixed signs: their probes fall back to the reference kernel's sums. Every other probe's
// window has one sign, T = 0: it keeps its double sum, though its row, band and group hold
// 2^100. The two kinds of result differ by one ulp on some probes. A signalling NaN after
// +-2^100 in the middle bin of those rows makes that bin NaN and must change nothing else.
// Bins of four across the row whose bins down the plane hold the same number of rows (7 to 3:
// three each, overlapping) or not (8 to 3: 3, 4, 3), or the rows of 4-wide stride-4 windows
// (dilated down the plane: not consecutive), on planes small enough to run whole planes checked
// after, several to a chunk: on AVX2 and AVX-512 those with equal bins of consecutive rows run
// as one flat pass over the chunk (planes_bins4), the others row by row.
TEST_CASE("fast avg_pool bins of four over whole planes, even or not down the plane",
          "[kernels][avg_pool_fast]") {
  Rng rng(0xB1254F1Aull);
  std::vector<PoolGeometry> geometries;
  for (const std::int64_t ow : {1, 2, 3, 7}) {
    for (const auto [ih, oh] : {std::array<std::int64_t, 2>{7, 3}, {8, 3}, {10, 4}, {12, 3}})
      geometries.push_back(adaptive({3, 5}, {ih, 4 * ow}, {oh, ow}));
    for (const std::int64_t d : {1, 2})
      for (const bool exclude_pad : {true, false})
        geometries.push_back(window({3, 5}, {9, 4 * ow}, {3, 4}, {2, 4}, {1, 0}, {1, 0}, false,
                                    exclude_pad, {d, 1}));
  }
  for (const PoolGeometry& g : geometries)
    for (const Data mode : {Data::mixed, Data::cancel, Data::specials}) {
      INFO(describe(g) << " data " << static_cast<int>(mode));
      const Tensor in = random_input(rng, g, mode);
      const Tensor best = check_paths(g, in, Parallel(2), Parallel(1));
      CHECK(same_bits(best, run_fast(g, in, Parallel(1), Isa::best)));
    }
}

TEST_CASE("fast avg_pool judges each failing output by its own window",
          "[kernels][avg_pool_fast]") {
  // 16 rows x 2 columns: divisor 32.
  const auto probes = order_probes(16, 32.0, {0, 7, 15});
  const auto rows = static_cast<std::int64_t>(probes.size() + 1) / 2;
  const PoolGeometry g = adaptive({1, 1}, {16 * rows, 5}, {rows, 3});
  INFO(describe(g));
  // The probes alone (one sign, no failures anywhere): their double sums.
  Tensor alone = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
  float* a = alone.mutable_data<float>();
  for (std::size_t k = 0; k < probes.size(); ++k)
    for (std::int64_t i = 0; i < 16; ++i)
      a[(16 * (static_cast<std::int64_t>(k) / 2) + i) * 5 + (k % 2 ? 4 : 0)] =
          probes[k][static_cast<std::size_t>(i)];
  const Tensor sums = run_fast(g, alone, Parallel(1), Isa::portable);
  for (const bool nan : {false, true}) {
    Tensor in = alone;
    float* x = in.mutable_data<float>();
    for (std::int64_t q = 0; q < rows; q += 5) {
      x[(16 * q + 3) * 5 + 1] = 0x1p100f;
      x[(16 * q + 6) * 5 + 1] = -0x1p100f;
      if (nan) x[(16 * q + 9) * 5 + 2] = std::numeric_limits<float>::signaling_NaN();
    }
    const Tensor ref = run_reference(g, in, Parallel(1));
    int differ = 0;
    for (std::int64_t q = 0; q < rows; q += 5)
      differ += sums.data<float>()[q * 3] != ref.data<float>()[q * 3];
    REQUIRE(differ > 0);  // the two kinds of result do tell the checks apart
    INFO("NaN " << nan << ", " << differ << " probes differ");
    for (const int threads : {1, 2})
      for (Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
        INFO("threads " << threads << " isa " << static_cast<int>(isa));
        const Tensor out = run_fast(g, in, Parallel(threads), isa);
        int bad = 0;
        for (std::int64_t q = 0; q < rows; ++q) {
          const std::int64_t o = q * 3;
          bad += out.data<float>()[o] != (q % 5 == 0 ? ref : sums).data<float>()[o];
          bad += out.data<float>()[o + 2] != sums.data<float>()[o + 2];
          bad += !same_bits(out.data<float>()[o + 1], ref.data<float>()[o + 1]);
          bad += std::isnan(out.data<float>()[o + 1]) != (nan && q % 5 == 0);
        }
        CHECK(bad == 0);  // (the oracle's double sums lose the probes next to +-2^100)
      }
  }
}

// The reference sums from +0, so a window of -0 only averages to +0; the fast sums start from a
// window's first tap, and -0 + -0 is -0. Every path and group function, and whole planes.
TEST_CASE("fast avg_pool averages windows of -0 to +0", "[kernels][avg_pool_fast]") {
  const Parallel par(1);
  const std::vector<PoolGeometry> geometries = {
      window({1, 2}, {8, 8}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, false, true),       // 2x2 s2
      window({1, 2}, {9, 19}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true),      // 3x3 s2 p1
      window({1, 1}, {12, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, true),     // flat groups
      window({1, 1}, {12, 1040}, {5, 5}, {1, 1}, {0, 0}, {0, 0}, false, true),   // fused s1
      window({1, 1}, {12, 1040}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, false),  // fused s1, pads
      window({1, 1}, {10, 40}, {3, 3}, {3, 3}, {0, 0}, {0, 0}, false, false),    // stride 3
      window({1, 2}, {9, 12, 10}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false, true),  // 3-D
      adaptive({1, 2}, {16, 16}, {4, 4}),      // bins of four
      adaptive({1, 1}, {224, 224}, {17, 13}),  // uneven bins
      adaptive({1, 9}, {7, 7}, {1, 1}),        // whole planes
  };
  for (const PoolGeometry& g : geometries) {
    Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
    float* x = in.mutable_data<float>();
    std::fill(x, x + in.element_count(), -0.0f);
    const Tensor want = run_reference(g, in, par);
    REQUIRE(!std::signbit(want.data<float>()[0]));
    for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
      INFO(describe(g) << " isa " << static_cast<int>(isa));
      CHECK(same_bits(run_fast(g, in, par, isa), want));
    }
  }
}

// +inf + -inf is NaN, and x86 makes it a negative NaN where the reference's exact sum gives a
// positive one: every NaN output must come from the reference. The fused stride-1 rows check a
// row's least |s| once, against a T from the bits of their loads; with both infinities among
// them, a row of infinite sums around a few NaN ones would pass a T of infinity.
TEST_CASE("fast avg_pool takes NaN sums of both infinities from the reference",
          "[kernels][avg_pool_fast]") {
  const Parallel par(1);
  constexpr int kW = 1040;  // rows too wide for flat groups: band_s1_avx512 on AVX-512
  constexpr float kInf = std::numeric_limits<float>::infinity();
  int cases = 0;
  for (const int pad : {2, 0})
    for (const bool exclude : {true, false})
      for (const float sign : {1.0f, -1.0f})
        for (const int row : {0, 3, 5, 11})
          // Columns 517-565 put the NaN outputs in each 16-float quarter of a 64-float block,
          // which the AVX-512 NaN scan of exact bands adds into accumulators of their own.
          for (const int col : {0, 517, 533, 549, 565, kW - 1}) {
            const PoolGeometry g =
                window({1, 1}, {12, kW}, {5, 5}, {1, 1}, {pad, pad}, {pad, pad}, false, exclude);
            Tensor in = Tensor::zeros(ElementType::f32, {1, 1, 12, kW});
            float* x = in.mutable_data<float>();
            std::fill(x, x + 12 * kW, sign * kInf);
            x[row * kW + col] = -sign * kInf;
            const Tensor want = run_reference(g, in, par);
            for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
              INFO(describe(g) << " " << -sign << "inf at " << row << ", " << col << " isa "
                               << static_cast<int>(isa));
              CHECK(same_bits(run_fast(g, in, par, isa), want));
              ++cases;
            }
          }
  CHECK(cases == 2 * 2 * 2 * 4 * 6 * 3);
}

// The same on flat groups of one to three outputs (3x3 "same" on one row of 1-3), whose sums
// AVX2 scales masked after its exact first pass: the NaN of the two infinities must fail it.
TEST_CASE("fast avg_pool takes NaN sums of both infinities from the reference in tiny planes",
          "[kernels][avg_pool_fast]") {
  const Parallel par(1);
  constexpr float kInf = std::numeric_limits<float>::infinity();
  for (const std::int64_t w : {1, 2, 3})
    for (const bool exclude : {true, false})
      for (std::int64_t col = 0; col < w; ++col) {
        const PoolGeometry g =
            window({1, 1}, {1, w}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, exclude);
        Tensor in = Tensor::zeros(ElementType::f32, {1, 1, 1, w});
        float* x = in.mutable_data<float>();
        std::fill(x, x + w, kInf);
        x[col] = w == 1 ? std::numeric_limits<float>::quiet_NaN() : -kInf;
        const Tensor want = run_reference(g, in, par);
        for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
          INFO(describe(g) << " -inf or NaN at " << col << " isa " << static_cast<int>(isa));
          CHECK(same_bits(run_fast(g, in, par, isa), want));
        }
      }
}

namespace {

// Specials at `rate` per mille among small exact values: +-inf, quiet and signalling NaNs of
// both signs with random payloads, +-0, subnormals, +-FLT_MAX; +-0 at twice the rate besides.
float special_value(Rng& rng, int rate) {
  const auto r = rng.range(0, 999);
  if (r < rate) {
    const auto payload = static_cast<std::uint32_t>(rng.next() >> 42) & 0x3FFFFFu;
    const std::uint32_t sign = rng.coin() ? 0x80000000u : 0u;
    switch (rng.range(0, 7)) {
      case 0:
        return std::numeric_limits<float>::infinity();
      case 1:
        return -std::numeric_limits<float>::infinity();
      case 2:
        return std::bit_cast<float>(sign | 0x7FC00000u | payload);  // quiet NaN
      case 3:
        return std::bit_cast<float>(sign | 0x7F800000u | payload | 1u);  // signalling NaN
      case 4:
        return -0.0f;
      case 5:
        return 0.0f;
      case 6:
        return std::bit_cast<float>(sign | payload | 1u);  // subnormal
      default:
        return (rng.coin() ? -1.0f : 1.0f) * std::numeric_limits<float>::max();
    }
  }
  if (r < 3 * rate) return rng.coin() ? -0.0f : 0.0f;
  const auto m = static_cast<double>((rng.next() >> 56) | (1ull << 8));
  return static_cast<float>((rng.coin() ? -1.0 : 1.0) *
                            std::ldexp(m, static_cast<int>(rng.range(-4, 4)) - 8));
}

// NaN, infinite and zero results bit for bit (sign and payload) with the reference, the others
// within one ulp.
int special_mismatches(const PoolGeometry& g, const Tensor& out, const Tensor& want,
                       const char* what) {
  int bad = 0;
  for (std::size_t i = 0; i < want.element_count(); ++i) {
    const float y = out.data<float>()[i], r = want.data<float>()[i];
    const bool exact = !std::isfinite(y) || !std::isfinite(r) || y == 0 || r == 0;
    if ((exact ? !same_bits(y, r) : !within_one_f32_ulp(y, r)) && ++bad <= 3)
      FAIL_CHECK(describe(g) << " " << what << " output " << i << ": fast " << std::hex
                             << std::bit_cast<std::uint32_t>(y) << " reference "
                             << std::bit_cast<std::uint32_t>(r) << std::dec);
  }
  return bad;
}

}  // namespace

// Every group function and path, on inputs thick with specials and with cancelling +-2^20..2^60
// pairs (outputs near and under their checks' T): NaN, infinite and zero results must be the
// reference's bits, whichever first check let them through. (From an adversarial review that
// found the -0 windows and the AVX2 kept row of the tests above.)
TEST_CASE("fast avg_pool gives the reference's bits for NaN, infinite and zero results",
          "[kernels][avg_pool_fast]") {
  Rng rng(0x5BEC1A15);
  std::vector<PoolGeometry> geometries = {
      window({1, 3}, {16, 30}, {2, 2}, {2, 2}, {0, 0}, {0, 0}, true, true),
      window({1, 3}, {17, 33}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true, false),
      window({1, 2}, {9, 12, 10}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, false, true),
      window({1, 3}, {12, 20}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, true),
      window({1, 3}, {12, 21}, {5, 5}, {1, 1}, {2, 2}, {2, 2}, false, false),
      window({1, 3}, {12, 21}, {2, 2}, {1, 1}, {0, 0}, {1, 1}, false, true),
      window({1, 1}, {14, 1040}, {5, 5}, {1, 1}, {2, 2}, {2, 2}, false, true),
      window({1, 1}, {14, 1040}, {3, 3}, {1, 1}, {0, 0}, {0, 0}, false, true),
      window({1, 1}, {14, 300}, {7, 7}, {1, 1}, {3, 3}, {3, 3}, false, false),
      window({1, 1}, {14, 300}, {7, 5}, {1, 1}, {3, 2}, {3, 2}, false, true),
      window({1, 2}, {40, 600}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false, true),
      adaptive({1, 2}, {16, 40}, {4, 10}),
      adaptive({1, 1}, {224, 224}, {17, 13}),
      adaptive({1, 2}, {45, 37}, {17, 13}),
      adaptive({1, 2}, {5, 30, 31}, {2, 7, 5}),
      adaptive({1, 70}, {7, 7}, {1, 1}),
      adaptive({1, 11}, {3, 5}, {1, 1}),
      adaptive({1, 9}, {60, 70}, {1, 1}),
      window({1, 17}, {4, 4}, {4, 4}, {1, 1}, {0, 0}, {0, 0}, false, true),
      window({1, 2}, {10, 40}, {3, 3}, {3, 3}, {1, 1}, {2, 2}, true, false),
      window({1, 2}, {20, 30}, {3, 3}, {2, 2}, {2, 2}, {2, 2}, true, true),
      window({1, 2}, {9, 31}, {4, 4}, {3, 3}, {1, 1}, {3, 3}, true, true),
      // Flat groups of one to three outputs (AVX2 scales their exact sums masked).
      window({1, 9}, {1, 3}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, false),
      window({1, 9}, {1, 2}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, true),
      window({1, 9}, {1, 1}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, false),
  };
  for (int i = 0; i < 40; ++i) geometries.push_back(random_geometry(rng));
  int cases = 0;
  for (const PoolGeometry& g : geometries) {
    if (!irrun::kernels::avg_pool_fast_covers(ElementType::f32, g)) continue;
    for (const int rate : {0, 1, 10, 60}) {
      Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
      float* x = in.mutable_data<float>();
      const std::size_t n = in.element_count(), iw = static_cast<std::size_t>(g.in[2]);
      for (std::size_t i = 0; i < n; ++i) x[i] = special_value(rng, rate);
      for (std::size_t i = 0; i < n; ++i) {  // pairs side by side or one row apart
        if (rng.range(0, 15) != 0) continue;
        const float big =
            (rng.coin() ? -1.0f : 1.0f) * std::ldexp(1.0f, static_cast<int>(rng.range(20, 60)));
        x[i] = big;
        const float rest =
            rng.coin() ? 0.0f : std::ldexp(big, -static_cast<int>(rng.range(12, 30)));
        if (const std::size_t j = i + (rng.coin() ? 1 : iw); j < n) x[j] = rest - big;
      }
      const Tensor want = run_reference(g, in, Parallel(1));
      const Tensor base = run_fast(g, in, Parallel(1), Isa::portable);
      for (const int threads : {1, 3})
        for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
          INFO("rate " << rate << " threads " << threads << " isa " << static_cast<int>(isa));
          const Tensor out = run_fast(g, in, Parallel(threads), isa);
          CHECK(special_mismatches(g, out, want, "fast") == 0);
          CHECK(same_bits(out, base));
          ++cases;
        }
    }
  }
  CHECK(cases > 300);
}

// Flat groups keep each lane's least |s| and whether a sum was NaN through the group, and test
// them once at its end; a group that fails runs its row pass again to flag its rows. The
// group's last block is partial when rows x width is not a multiple of 8, and what its lanes
// hold must count too. 2x3 windows (rows R, R + 1) on 4 rows, so one group of 3 output rows:
// - a cancelling window (2^30 + 2^-30 - 2^30 over zeros, which a double sum gets wrong) at each
//   output of the partial block, among values of 2^20 or more, which pass the check;
// - two quiet NaNs at (R, C + 1) and (R + 1, C): the reference's average is the first NaN of
//   its row-major stream, the double sum's the first of its column sums, so the sum at (R, C)
//   must fail. Where every output they reach is in the partial block (width 5, (2, 3)), or
//   every one is in whole blocks.
TEST_CASE("fast avg_pool flat groups check their partial last block", "[kernels][avg_pool_fast]") {
  Rng rng(0xF1A7B10Cull);
  const Parallel par(1);
  int cancelling = 0, nans = 0;
  for (const std::int64_t iw : {5, 7, 13}) {
    const PoolGeometry g = window({1, 1}, {4, iw}, {2, 3}, {1, 1}, {0, 1}, {0, 1}, false, true);
    const std::int64_t n_out = 3 * iw, partial = n_out / 8 * 8;
    for (std::int64_t o = 0; o < n_out; ++o) {
      const std::int64_t row = o / iw, c = o % iw;
      if (c == 0 || c == iw - 1) continue;  // windows of three columns only
      // The outputs the NaNs reach: (R - 1 .. R, C .. C + 2) and (R .. R + 1, C - 1 .. C + 1).
      const std::int64_t first = row > 0 ? (row - 1) * iw + c : c - 1,
                         last = row < 2 ? (row + 1) * iw + c + 1
                                        : o + std::min<std::int64_t>(2, iw - 1 - c);
      for (int rep = 0; rep < 4; ++rep) {
        const bool nan = rep > 0;
        if (!nan && o < partial) continue;
        if (nan && first < partial && last >= partial) continue;
        Tensor in = Tensor::zeros(ElementType::f32, {1, 1, 4, iw});
        float* x = in.mutable_data<float>();
        for (std::int64_t i = 0; i < 4 * iw; ++i)
          x[i] = std::ldexp(static_cast<float>(i % 7 + 1), 20);
        float* top = x + row * iw + c;  // input (R, C)
        if (nan) {
          const auto quiet = [&] {
            const auto payload = static_cast<std::uint32_t>(rng.next() >> 42) & 0x3FFFFFu;
            return std::bit_cast<float>((rng.coin() ? 0x80000000u : 0u) | 0x7FC00000u | payload);
          };
          top[1] = quiet(), top[iw] = quiet();
        } else {
          top[-1] = 0x1p30f, top[0] = 0x1p-30f, top[1] = -0x1p30f;
          top[iw - 1] = top[iw] = top[iw + 1] = 0.0f;
        }
        const Tensor want = run_reference(g, in, Parallel(1));
        for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
          INFO("width " << iw << " output " << o << (nan ? " NaNs" : " cancelling") << " isa "
                        << static_cast<int>(isa));
          const Tensor out = run_fast(g, in, par, isa);
          CHECK(special_mismatches(g, out, want, "fast") == 0);
          CHECK(same_bits(out.data<float>()[o], want.data<float>()[o]));
        }
        ++(nan ? nans : cancelling);
      }
    }
  }
  CHECK(cancelling == 4 + 4 + 6);
  CHECK(nans == 3 * 25);
}

// Uneven bins of nine rows: on AVX-512 the vertical pass takes the first check's bound from its
// own loads (Plan::bound_in_pass), in blocks of 16, 8 and 4 columns, and masked ones under 8. A
// column whose inputs 3, +2^100, -2^100 sum to +0 in double (exactly to 3) must raise that bound
// wherever it lies in the row: else the windows holding it pass with sums 3 short.
TEST_CASE("fast avg_pool takes its own bound from every column it loads",
          "[kernels][avg_pool_fast]") {
  const Parallel par(1);
  int cases = 0;
  for (std::int64_t iw = 1; iw <= 40; ++iw)
    for (std::int64_t c = 0; c < iw; ++c) {
      const PoolGeometry g = adaptive({1, 1}, {9, iw}, {1, iw > 2 ? iw - 1 : 1});
      Tensor in = Tensor::zeros(ElementType::f32, shape_of(g, g.in));
      float* x = in.mutable_data<float>();
      for (std::int64_t i = 0; i < 9 * iw; ++i) x[i] = 1.0f;
      x[c] = 3.0f, x[iw + c] = 0x1p100f, x[2 * iw + c] = -0x1p100f;
      const Tensor want = run_reference(g, in, Parallel(1));
      for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable}) {
        INFO("width " << iw << " column " << c << " isa " << static_cast<int>(isa));
        CHECK(same_bits(run_fast(g, in, par, isa), want));
      }
      ++cases;
    }
  CHECK(cases == 40 * 41 / 2);
}
