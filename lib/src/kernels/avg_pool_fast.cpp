// Fast f32 AvgPool / AdaptiveAvgPool on plain NC[D]HW tensors.
//
// Algorithm (per plane, per band of output rows):
//   0. once per call (make_plan): per flattened output row q = od*OH + oh, the table of input
//      row offsets it sums (in summation order) and its row factor 1/rows; per band, the
//      contiguous input span scanned for stats. The loops do no divisions and no per-row setup;
//   1. stats: min and max of the band's input span (one contiguous pass, NaN ignored; the first
//      4 KB of the next band's span are prefetched meanwhile);
//   2. vertical: for each output row, V[w] = sum of the window's input rows at column w, in
//      double (exact conversion from f32), rows added left to right in table order;
//   3. horizontal: s[ow] = sum of V over the window's columns, taps added left to right
//      (stride 1 and 2 vectorised; equal adaptive bins, in % out == 0, are windows with
//      kernel = stride = in/out, bins of four vectorised by gathering tap m of eight (AVX-512)
//      or four (AVX2) outputs with permutes; uneven bins scalar), y = s * (1/rows * 1/cols) or
//      s * (1/kernel volume), rounded once to f32.
//   On AVX-512 and AVX2, steps 2 and 3 for a group of rows run in one function (band_avx512,
//   band_avx2) with the horizontal pass inlined, and narrow stride-1 rows run as flat groups
//   (band_flat_*); on AVX-512, 3x3 s2 p1 rows keep their vertical sums in registers
//   (band_k3s2_avx512). The portable path runs the same additions through band_generic.
// Global pools and AdaptiveAvgPool to 1x1 (one window covering the whole plane) instead sum
// each contiguous plane directly, eight planes at a time on AVX-512 and four on AVX2
// (plane_sum_portable gives the order), with the min/max taken from the same loads.
//
// Accuracy proof (the contract: within one ulp of the exact average a = s/n):
//   Every sum is a fixed tree of double additions over the window's f32 values (plus exact
//   zeros for padding, whose additions are exact). The window tree is a left-to-right chain of
//   row sums (at most rows - 1 additions) followed by a left-to-right chain over the K
//   horizontal taps (K - 1 additions), so d <= N + K; the bins-of-four gather changes only
//   where the taps come from, not the chain, and the plane sums below add at most N + 3.
//   make_plan uses D = N + K + 16 (K = 0 for uneven bins). With at most d rounded additions on
//   any path, |s^ - s| <= gamma_d * sum|x| <= gamma_d * N * M =: B, where N bounds the taps of any
//   window, M = max |x| over the band and gamma_d = d*u/(1-d*u), u = 2^-53. The result is
//   y = fl(s^ * fl(fl(1/r) * fl(1/c))) = (s^/n)(1+e), |e| <= 4.01u. If B <= 2^-28 |s^| then
//   |y - a| < 2^-26 |a|; any two reals that close round to f32 values at most one ulp apart
//   (the f32 spacing at and just below a is >= 2^-25 |a|, also for subnormals), so fl32(y) is
//   within one ulp of fl32(a). The kernel checks |s^| >= T with T = N * D * M * 2^-24 >= 2^28 B
//   (D >= d, slack covers the gamma factor and the rounding of T itself). When all inputs of
//   the band have one sign, sum|x| = |s| and the bound holds for every output (T = 0) as long
//   as D <= 2^23. Outputs that fail the check (strong cancellation, an all-zero window in a
//   mixed-sign band, NaN) are recomputed with the reference kernel's compensated sum in the
//   reference order, which gives the reference kernel's bits. The group functions flag the rows
//   holding a failed output; only those rows are rescanned (their V rows are still buffered).
// Determinism: bands, summation orders and the check depend only on the geometry and the data,
// never on the thread count; every output is written by exactly one fixed-order loop. The AVX2
// and portable paths perform the same operations in the same order (some AVX2 additions are
// issued as FMAs x * 1 + a, which round identically), so they agree bit for bit.
#include "simd.hpp"  // first: intrinsics and their warning pragmas

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <utility>
#include <vector>

#include "compensated_sum.hpp"
#include "irrun/kernels/avg_pool.hpp"

namespace irrun::kernels {
namespace {

using detail::cpu_has_avx2;
using detail::cpu_has_avx512;
using i64 = std::int64_t;

// The row passes are inlined into the group functions (band_*): a call per row costs more than
// a short row (S1: 3584 rows of 56 outputs per call).
#define IRRUN_INLINE inline __attribute__((always_inline))

constexpr i64 kMaxTaps = i64{1} << 22;   // N above this: the reference kernel
constexpr i64 kBandInputFloats = 32768;  // input floats scanned per band (L2-sized)
constexpr i64 kVBufferDoubles = 4096;    // vertical sums kept per group of rows (L1)
constexpr i64 kPrefetchFloats = 1024;    // floats of the next band's span prefetched (4 KB)
constexpr i64 kStreamMinFloats = 16384;  // longer spans: the rest prefetched row by row
constexpr i64 kWholePlaneBlock = 64;     // planes per unit in the whole-plane kernel
constexpr i64 kFlatMaxWidth = 64;        // flat groups: rows up to this wide, kernels up to
constexpr i64 kFlatMaxKernel = 16;       // this wide, planes up to this many outputs
constexpr i64 kFlatMaxPlane = i64{1} << 16;
constexpr i64 kVGuard = 32;  // doubles before and after the V buffer (flat taps and tails)

// ------------------------------------------------------------------------------------------
// Portable building blocks. The AVX2 versions below do the same operations in the same order.

void stats_portable(const float* x, i64 n, float& lo, float& hi) {
  for (i64 i = 0; i < n; ++i) {
    if (x[i] > hi) hi = x[i];  // NaN compares false: ignored
    if (x[i] < lo) lo = x[i];
  }
}

// v[i] = rows[0][i] + rows[1][i] + ... (left to right), i < n.
void vsum_portable_from(const float* const* rows, i64 r_count, i64 begin, i64 n, double* v) {
  for (i64 i = begin; i < n; ++i) {
    double s = rows[0][i];
    for (i64 r = 1; r < r_count; ++r) s += static_cast<double>(rows[r][i]);
    v[i] = s;
  }
}

void vsum_portable(const float* const* rows, i64 r_count, i64 n, double* v) {
  vsum_portable_from(rows, r_count, 0, n, v);
}

// s = vp[ow*stride] + vp[ow*stride+1] + ... (K taps, left to right).
inline double hsum_fixed(const double* vp, i64 ow, i64 stride, i64 k) {
  const double* p = vp + ow * stride;
  double s = p[0];
  for (i64 j = 1; j < k; ++j) s += p[j];
  return s;
}

// Epilogue of one output: scale, check, store. Returns true when the check fails.
inline bool finish(double s, double rinv, double inv_w, double t, float* out) {
  const double r = rinv * inv_w;
  const double y = s * r;
  *out = static_cast<float>(y);
  return !(std::fabs(s) >= t);
}

bool hrow_fixed_portable(const double* vp, i64 stride, i64 k, i64 ow_count, const double* inv_w,
                         double rinv, double t, float* out) {
  bool fail = false;
  for (i64 ow = 0; ow < ow_count; ++ow)
    fail |= finish(hsum_fixed(vp, ow, stride, k), rinv, inv_w[ow], t, out + ow);
  return fail;
}

// Equal adaptive bins: stride = taps = k.
bool hrow_bins_portable(const double* vp, i64 k, i64 ow_count, const double* inv_w, double rinv,
                        double t, float* out) {
  return hrow_fixed_portable(vp, k, k, ow_count, inv_w, rinv, t, out);
}

// hsum_fixed on the zero-padded V row, read from the unpadded row v of n values (flat groups).
inline double hsum_flat(const double* v, i64 n, i64 ow, i64 pad_left, i64 k) {
  auto tap = [&](i64 j) {
    const i64 c = ow + j - pad_left;
    return c >= 0 && c < n ? v[c] : 0.0;
  };
  double s = tap(0);
  for (i64 j = 1; j < k; ++j) s += tap(j);
  return s;
}

// Windows given by (first, taps, step) on an unpadded V row: adaptive bins, strides > 2,
// dilation.
inline double hsum_generic(const double* v, i64 first, i64 taps, i64 step) {
  if (taps == 0) return 0.0;
  double s = v[first];
  for (i64 t = 1; t < taps; ++t) s += v[first + t * step];
  return s;
}

// The fixed tree that combines a plane's eight lane accumulators (every path uses it).
inline double combine_lanes(const double* a) {
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// Sum of one contiguous plane in the kernel's fixed order: eight lane accumulators, starting at
// +0, add x[8b + l] for every block b of eight floats (the last block zero-filled); then
// s = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)). The vector paths keep lane l of a plane
// in lane l of a register and combine several planes at once with a transposing tree that does
// exactly these additions, so every path gives the same bits.
double plane_sum_portable(const float* x, i64 n) {
  double a[8] = {};
  i64 i = 0;
  for (; i + 8 <= n; i += 8)
    for (int l = 0; l < 8; ++l) a[l] += static_cast<double>(x[i + l]);
  if (i < n)
    for (int l = 0; l < 8; ++l) a[l] += i + l < n ? static_cast<double>(x[i + l]) : 0.0;
  return combine_lanes(a);
}

// s[p] = plane_sum(plane p) for `count` consecutive planes of n floats.
void plane_sums_portable(const float* x, i64 n, i64 count, double* s) {
  for (i64 p = 0; p < count; ++p) s[p] = plane_sum_portable(x + p * n, n);
}

void stats_portable(const float* x, i64 n, float& lo, float& hi);

void plane_sums_stats_portable(const float* x, i64 n, i64 count, double* s, float& lo, float& hi) {
  stats_portable(x, n * count, lo, hi);
  plane_sums_portable(x, n, count, s);
}

// ------------------------------------------------------------------------------------------
// AVX2 versions (compiled for AVX2+FMA via target attributes; only called when the CPU has it).
// Every ISA path is selected at run time, so the binary runs on any x86-64.

#define IRRUN_AVX2 __attribute__((target("avx2,fma")))

IRRUN_AVX2 void stats_avx2(const float* x, i64 n, float& lo, float& hi) {
  __m256 mx0 = _mm256_set1_ps(hi), mx1 = mx0;
  __m256 mn0 = _mm256_set1_ps(lo), mn1 = mn0;
  i64 i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(x + i);
    const __m256 b = _mm256_loadu_ps(x + i + 8);
    // max/min return the second operand when the first is NaN: NaN inputs are ignored.
    mx0 = _mm256_max_ps(a, mx0);
    mn0 = _mm256_min_ps(a, mn0);
    mx1 = _mm256_max_ps(b, mx1);
    mn1 = _mm256_min_ps(b, mn1);
  }
  if (i + 8 <= n) {
    const __m256 a = _mm256_loadu_ps(x + i);
    mx0 = _mm256_max_ps(a, mx0);
    mn0 = _mm256_min_ps(a, mn0);
    i += 8;
  }
  // Fold the lanes in registers (no NaN left: every lane started from hi or lo).
  __m256 h = _mm256_max_ps(mx0, mx1), l = _mm256_min_ps(mn0, mn1);
  __m128 h4 = _mm_max_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  __m128 l4 = _mm_min_ps(_mm256_castps256_ps128(l), _mm256_extractf128_ps(l, 1));
  h4 = _mm_max_ps(h4, _mm_movehl_ps(h4, h4));
  l4 = _mm_min_ps(l4, _mm_movehl_ps(l4, l4));
  hi = _mm_cvtss_f32(_mm_max_ss(h4, _mm_shuffle_ps(h4, h4, 1)));
  lo = _mm_cvtss_f32(_mm_min_ss(l4, _mm_shuffle_ps(l4, l4, 1)));
  stats_portable(x + i, n - i, lo, hi);
}

// a + x as the FMA x * 1 + a: x * 1 is exact and the FMA rounds once, so this is the same
// double addition (signed zeros, infinities and NaN included). AMD cores (Zen 3 to 5) convert
// (vcvtps2pd) on the two FADD pipes; the idle FMA pipes take the adds off them (on Zen 5, S4
// -25%, the vertical sums -5 to -10%).
IRRUN_AVX2 inline __m256d add_fma(__m256d a, __m256d x) {
  return _mm256_fmadd_pd(x, _mm256_set1_pd(1.0), a);
}

IRRUN_AVX2 void vsum_avx2(const float* const* rows, i64 r_count, i64 n, double* v) {
  i64 i = 0;
  for (; i + 16 <= n; i += 16) {
    const float* r0 = rows[0] + i;
    __m256d a0 = _mm256_cvtps_pd(_mm_loadu_ps(r0));
    __m256d a1 = _mm256_cvtps_pd(_mm_loadu_ps(r0 + 4));
    __m256d a2 = _mm256_cvtps_pd(_mm_loadu_ps(r0 + 8));
    __m256d a3 = _mm256_cvtps_pd(_mm_loadu_ps(r0 + 12));
    for (i64 r = 1; r < r_count; ++r) {
      const float* p = rows[r] + i;
      a0 = add_fma(a0, _mm256_cvtps_pd(_mm_loadu_ps(p)));
      a1 = add_fma(a1, _mm256_cvtps_pd(_mm_loadu_ps(p + 4)));
      a2 = add_fma(a2, _mm256_cvtps_pd(_mm_loadu_ps(p + 8)));
      a3 = add_fma(a3, _mm256_cvtps_pd(_mm_loadu_ps(p + 12)));
    }
    _mm256_storeu_pd(v + i, a0);
    _mm256_storeu_pd(v + i + 4, a1);
    _mm256_storeu_pd(v + i + 8, a2);
    _mm256_storeu_pd(v + i + 12, a3);
  }
  for (; i + 4 <= n; i += 4) {
    __m256d a = _mm256_cvtps_pd(_mm_loadu_ps(rows[0] + i));
    for (i64 r = 1; r < r_count; ++r) a = add_fma(a, _mm256_cvtps_pd(_mm_loadu_ps(rows[r] + i)));
    _mm256_storeu_pd(v + i, a);
  }
  for (; i < n; ++i) {
    double s = rows[0][i];
    for (i64 r = 1; r < r_count; ++r) s += static_cast<double>(rows[r][i]);
    v[i] = s;
  }
}

// Scale, check and store four outputs; returns the updated fail mask.
IRRUN_AVX2 inline __m256d finish4(__m256d s, __m256d rinv, const double* inv_w, __m256d t,
                                  __m256d fail, float* out) {
  const __m256d r = _mm256_mul_pd(rinv, _mm256_loadu_pd(inv_w));
  const __m256d y = _mm256_mul_pd(s, r);
  _mm_storeu_ps(out, _mm256_cvtpd_ps(y));
  const __m256d abs = _mm256_andnot_pd(_mm256_set1_pd(-0.0), s);
  return _mm256_or_pd(fail, _mm256_cmp_pd(abs, t, _CMP_NGE_UQ));
}

// Stride 1, K taps (K > 0 compile-time, or runtime k when K == 0).
template <int K>
IRRUN_AVX2 IRRUN_INLINE bool hrow_s1_avx2(const double* vp, i64 k, i64 ow_count,
                                          const double* inv_w, double rinv_s, double t_s,
                                          float* out) {
  const i64 taps = K > 0 ? K : k;
  const __m256d rinv = _mm256_set1_pd(rinv_s), t = _mm256_set1_pd(t_s);
  __m256d fail = _mm256_setzero_pd();
  i64 ow = 0;
  for (; ow + 4 <= ow_count; ow += 4) {
    const double* p = vp + ow;
    __m256d s = _mm256_loadu_pd(p);
    for (i64 j = 1; j < taps; ++j) s = _mm256_add_pd(s, _mm256_loadu_pd(p + j));
    fail = finish4(s, rinv, inv_w + ow, t, fail, out + ow);
  }
  bool failed = _mm256_movemask_pd(fail) != 0;
  for (; ow < ow_count; ++ow)
    failed |= finish(hsum_fixed(vp, ow, 1, taps), rinv_s, inv_w[ow], t_s, out + ow);
  return failed;
}

// Stride 2: taps 2m and 2m+1 of four outputs come from the unpacked pair of loads at 2m.
template <int K>
IRRUN_AVX2 IRRUN_INLINE bool hrow_s2_avx2(const double* vp, i64 k, i64 ow_count,
                                          const double* inv_w, double rinv_s, double t_s,
                                          float* out) {
  const i64 taps = K > 0 ? K : k;
  const __m256d rinv = _mm256_set1_pd(rinv_s), t = _mm256_set1_pd(t_s);
  __m256d fail = _mm256_setzero_pd();
  i64 ow = 0;
  for (; ow + 4 <= ow_count; ow += 4) {
    const double* p = vp + 2 * ow;
    // Lanes hold outputs in the order 0, 2, 1, 3 until the final permute.
    __m256d a = _mm256_loadu_pd(p), b = _mm256_loadu_pd(p + 4);
    __m256d s = _mm256_unpacklo_pd(a, b);
    if (taps > 1) s = _mm256_add_pd(s, _mm256_unpackhi_pd(a, b));
    for (i64 m = 1; 2 * m < taps; ++m) {
      a = _mm256_loadu_pd(p + 2 * m);
      b = _mm256_loadu_pd(p + 2 * m + 4);
      s = _mm256_add_pd(s, _mm256_unpacklo_pd(a, b));
      if (2 * m + 1 < taps) s = _mm256_add_pd(s, _mm256_unpackhi_pd(a, b));
    }
    s = _mm256_permute4x64_pd(s, 0xD8);
    fail = finish4(s, rinv, inv_w + ow, t, fail, out + ow);
  }
  bool failed = _mm256_movemask_pd(fail) != 0;
  for (; ow < ow_count; ++ow)
    failed |= finish(hsum_fixed(vp, ow, 2, taps), rinv_s, inv_w[ow], t_s, out + ow);
  return failed;
}

// Stores the first `count` (1-3) floats of v: masked stores (vmaskmovps) are slow on AMD cores.
IRRUN_AVX2 inline void store_first(float* out, __m128 v, i64 count) {
  if (count == 1) {
    _mm_store_ss(out, v);
    return;
  }
  _mm_storel_pi(reinterpret_cast<__m64*>(out), v);
  if (count == 3) _mm_store_ss(out + 2, _mm_movehl_ps(v, v));
}

// Equal bins of four (stride 4, four taps): the windows of four outputs are 16 consecutive V
// values; 128-bit loads put the halves of windows 0|2 and 1|3 in the two lanes of four registers,
// and unpacklo/hi transpose them into tap m of the four outputs, added in tap order as
// hsum_fixed. The V row is zero-padded past the last window (Plan::vlen), so a partial last
// block loads whole windows; only its valid outputs are stored and checked.
IRRUN_AVX2 IRRUN_INLINE bool hrow_bins4_avx2(const double* vp, i64, i64 ow_count,
                                             const double* inv_w, double rinv_s, double t_s,
                                             float* out) {
  const __m256d rinv = _mm256_set1_pd(rinv_s), t = _mm256_set1_pd(t_s);
  __m256d fail = _mm256_setzero_pd();
  for (i64 ow = 0; ow < ow_count; ow += 4) {
    const double* p = vp + 4 * ow;
    const __m256d a = _mm256_loadu2_m128d(p + 8, p);       // taps 0, 1 of outputs 0 | 2
    const __m256d b = _mm256_loadu2_m128d(p + 12, p + 4);  // taps 0, 1 of outputs 1 | 3
    const __m256d c = _mm256_loadu2_m128d(p + 10, p + 2);  // taps 2, 3 of outputs 0 | 2
    const __m256d d = _mm256_loadu2_m128d(p + 14, p + 6);  // taps 2, 3 of outputs 1 | 3
    __m256d s = _mm256_add_pd(_mm256_unpacklo_pd(a, b), _mm256_unpackhi_pd(a, b));
    s = _mm256_add_pd(s, _mm256_unpacklo_pd(c, d));
    s = _mm256_add_pd(s, _mm256_unpackhi_pd(c, d));
    if (ow + 4 <= ow_count) {
      fail = finish4(s, rinv, inv_w + ow, t, fail, out + ow);
      continue;
    }
    // Partial last block: finish4's operations, the stores and the check limited to n lanes.
    const i64 n = ow_count - ow;
    const __m256d y = _mm256_mul_pd(s, _mm256_mul_pd(rinv, _mm256_loadu_pd(inv_w + ow)));
    store_first(out + ow, _mm256_cvtpd_ps(y), n);
    const __m256d valid = _mm256_castsi256_pd(
        _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_set_epi64x(3, 2, 1, 0)));
    const __m256d abs = _mm256_andnot_pd(_mm256_set1_pd(-0.0), s);
    fail = _mm256_or_pd(fail, _mm256_and_pd(valid, _mm256_cmp_pd(abs, t, _CMP_NGE_UQ)));
  }
  return _mm256_movemask_pd(fail) != 0;
}

// Lanes 0-3 and 4-7 of plane p's accumulators are lo[p] and hi[p]; returns the four plane
// sums in plane_sum_portable's order (hadd adds neighbouring lanes: a0 + a1, a2 + a3).
IRRUN_AVX2 inline __m256d combine4_avx2(const __m256d* lo, const __m256d* hi) {
  const __m256d l01 = _mm256_hadd_pd(lo[0], lo[1]), l23 = _mm256_hadd_pd(lo[2], lo[3]);
  const __m256d h01 = _mm256_hadd_pd(hi[0], hi[1]), h23 = _mm256_hadd_pd(hi[2], hi[3]);
  // [P0(01), P1(01), P0(23), P1(23)] and [P2(01), ...] -> [Pj(01)] + [Pj(23)]
  const __m256d l =
      _mm256_add_pd(_mm256_permute2f128_pd(l01, l23, 0x20), _mm256_permute2f128_pd(l01, l23, 0x31));
  const __m256d h =
      _mm256_add_pd(_mm256_permute2f128_pd(h01, h23, 0x20), _mm256_permute2f128_pd(h01, h23, 0x31));
  return _mm256_add_pd(l, h);
}

// Min and max (NaN ignored) of the floats passed through track (AVX2) or widen (AVX-512).
struct MinMax8 {
  __m256 lo, hi;
};

IRRUN_AVX2 inline void track(__m256 v, MinMax8& m) {
  m.hi = _mm256_max_ps(v, m.hi);  // max/min return the second operand when v is NaN
  m.lo = _mm256_min_ps(v, m.lo);
}

// Folds the lanes of m into lo and hi (the lanes hold no NaN: they started from lo and hi).
IRRUN_AVX2 inline void fold(const MinMax8& m, float& lo, float& hi) {
  alignas(32) float h[8], l[8];
  _mm256_store_ps(h, m.hi);
  _mm256_store_ps(l, m.lo);
  for (int j = 0; j < 8; ++j) {
    if (h[j] > hi) hi = h[j];
    if (l[j] < lo) lo = l[j];
  }
}

// One pass over memory: the min/max come from the same blocks the sums load (a 256-bit load for
// the stats; the sums convert the two 128-bit halves straight from memory, which then hits L1 and
// needs no shuffle).
IRRUN_AVX2 void plane_sums_avx2(const float* x, i64 n, i64 count, double* s, float& lo, float& hi) {
  const i64 full = n / 8 * 8, rest = n - full;
  // The zero-filled last block: maskload reads nothing where the mask is 0; for the stats those
  // lanes are set to all ones (a NaN), which track ignores.
  alignas(32) std::int32_t m[8];
  for (int l = 0; l < 8; ++l) m[l] = l < rest ? -1 : 0;
  const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(m));
  const __m256 filler = _mm256_castsi256_ps(_mm256_cmpeq_epi32(mask, _mm256_setzero_si256()));
  // Two independent min/max chains, planes alternating.
  MinMax8 mm[2];
  for (auto& k : mm) k = {_mm256_set1_ps(lo), _mm256_set1_ps(hi)};
  // Adds the block of eight floats at q to a plane's accumulators al (lanes 0-3), ah (4-7).
  auto block = [](const float* q, __m256d& al, __m256d& ah, MinMax8& k) IRRUN_AVX2 {
    track(_mm256_loadu_ps(q), k);
    al = add_fma(al, _mm256_cvtps_pd(_mm_loadu_ps(q)));
    ah = add_fma(ah, _mm256_cvtps_pd(_mm_loadu_ps(q + 4)));
  };
  auto last = [&](const float* q, __m256d& al, __m256d& ah, MinMax8& k) IRRUN_AVX2 {
    const __m256 v = _mm256_maskload_ps(q, mask);
    track(_mm256_or_ps(v, filler), k);
    al = add_fma(al, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    ah = add_fma(ah, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  };
  i64 p = 0;
  for (; p + 4 <= count; p += 4) {
    const float* xp = x + p * n;
    __m256d al[4], ah[4];
    for (int j = 0; j < 4; ++j) al[j] = ah[j] = _mm256_setzero_pd();
    for (i64 i = 0; i < full; i += 8)
      for (int j = 0; j < 4; ++j) block(xp + j * n + i, al[j], ah[j], mm[j & 1]);
    if (rest > 0)
      for (int j = 0; j < 4; ++j) last(xp + j * n + full, al[j], ah[j], mm[j & 1]);
    _mm256_storeu_pd(s + p, combine4_avx2(al, ah));
  }
  for (; p < count; ++p) {  // one plane at a time, combined in memory
    const float* xp = x + p * n;
    __m256d al = _mm256_setzero_pd(), ah = al;
    for (i64 i = 0; i < full; i += 8) block(xp + i, al, ah, mm[0]);
    if (rest > 0) last(xp + full, al, ah, mm[0]);
    alignas(32) double l[8];
    _mm256_store_pd(l, al);
    _mm256_store_pd(l + 4, ah);
    s[p] = combine_lanes(l);
  }
  fold({_mm256_min_ps(mm[0].lo, mm[1].lo), _mm256_max_ps(mm[0].hi, mm[1].hi)}, lo, hi);
}

#undef IRRUN_AVX2

// ------------------------------------------------------------------------------------------
// AVX-512F versions: the same operations in the same order, eight doubles at a time.

#define IRRUN_AVX512 __attribute__((target("avx512f")))
#define IRRUN_AVX512_LAMBDA __attribute__((target("avx512f")))

// add_fma (AVX2 section) eight lanes wide: the same addition, on the FMA pipes.
IRRUN_AVX512 inline __m512d add_fma512(__m512d a, __m512d x) {
  return _mm512_fmadd_pd(x, _mm512_set1_pd(1.0), a);
}

IRRUN_AVX512 void stats_avx512(const float* x, i64 n, float& lo, float& hi) {
  // Four independent chains: a single max/min chain is latency-bound.
  __m512 mx[4], mn[4];
  for (int j = 0; j < 4; ++j) mx[j] = _mm512_set1_ps(hi), mn[j] = _mm512_set1_ps(lo);
  i64 i = 0;
  for (; i + 64 <= n; i += 64)
    for (int j = 0; j < 4; ++j) {
      const __m512 a = _mm512_loadu_ps(x + i + 16 * j);
      mx[j] = _mm512_max_ps(a, mx[j]);  // NaN in a: keeps mx
      mn[j] = _mm512_min_ps(a, mn[j]);
    }
  for (; i + 16 <= n; i += 16) {
    const __m512 a = _mm512_loadu_ps(x + i);
    mx[0] = _mm512_max_ps(a, mx[0]);
    mn[0] = _mm512_min_ps(a, mn[0]);
  }
  if (i < n) {  // masked-off lanes keep the accumulator (mask_max with src = accumulator)
    const auto m = static_cast<__mmask16>((1u << (n - i)) - 1);
    const __m512 a = _mm512_maskz_loadu_ps(m, x + i);
    mx[1] = _mm512_mask_max_ps(mx[1], m, a, mx[1]);
    mn[1] = _mm512_mask_min_ps(mn[1], m, a, mn[1]);
  }
  const __m512 h = _mm512_max_ps(_mm512_max_ps(mx[0], mx[1]), _mm512_max_ps(mx[2], mx[3]));
  const __m512 l = _mm512_min_ps(_mm512_min_ps(mn[0], mn[1]), _mm512_min_ps(mn[2], mn[3]));
  hi = _mm512_reduce_max_ps(h);  // no NaN left: every lane started from hi or lo
  lo = _mm512_reduce_min_ps(l);
}

IRRUN_AVX512 void vsum_avx512(const float* const* rows, i64 r_count, i64 n, double* v) {
  i64 i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512d a0 = _mm512_cvtps_pd(_mm256_loadu_ps(rows[0] + i));
    __m512d a1 = _mm512_cvtps_pd(_mm256_loadu_ps(rows[0] + i + 8));
    for (i64 r = 1; r < r_count; ++r) {
      a0 = add_fma512(a0, _mm512_cvtps_pd(_mm256_loadu_ps(rows[r] + i)));
      a1 = add_fma512(a1, _mm512_cvtps_pd(_mm256_loadu_ps(rows[r] + i + 8)));
    }
    _mm512_storeu_pd(v + i, a0);
    _mm512_storeu_pd(v + i + 8, a1);
  }
  // The last 1-15 columns: masked loads (masked-off floats are not read) and stores.
  for (; i < n; i += 8) {
    const auto m = static_cast<__mmask16>(n - i >= 8 ? 0xFF : (1u << (n - i)) - 1);
    auto column = [m, i](const float* row) IRRUN_AVX512_LAMBDA {
      return _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps(m, row + i)));
    };
    __m512d a = column(rows[0]);
    for (i64 r = 1; r < r_count; ++r) a = add_fma512(a, column(rows[r]));
    _mm512_mask_storeu_pd(v + i, static_cast<__mmask8>(m), a);
  }
}

// Scale, check and store the outputs of `lanes` (a mask of the first 1-8 lanes); returns the
// updated fail mask.
IRRUN_AVX512 inline __mmask8 finish8(__m512d s, __m512d rinv, const double* inv_w, __m512d t,
                                     __mmask8 fail, float* out, __mmask8 lanes = 0xFF) {
  const __m512d r = _mm512_mul_pd(rinv, _mm512_maskz_loadu_pd(lanes, inv_w));
  const __m512d y = _mm512_mul_pd(s, r);
  // Masked stores are slow on some CPUs (AMD Zen 4): only a partial block uses one.
  if (lanes == 0xFF) {
    _mm256_storeu_ps(out, _mm512_cvtpd_ps(y));
  } else {
    _mm512_mask_storeu_ps(out, lanes, _mm512_castps256_ps512(_mm512_cvtpd_ps(y)));
  }
  return fail | _mm512_mask_cmp_pd_mask(lanes, _mm512_abs_pd(s), t, _CMP_NGE_UQ);
}

IRRUN_AVX512 inline __mmask8 first_lanes(i64 count) {
  return static_cast<__mmask8>(count >= 8 ? 0xFF : (1u << count) - 1);
}

template <int K>
IRRUN_AVX512 IRRUN_INLINE bool hrow_s1_avx512(const double* vp, i64 k, i64 ow_count,
                                              const double* inv_w, double rinv_s, double t_s,
                                              float* out) {
  const i64 taps = K > 0 ? K : k;
  const __m512d rinv = _mm512_set1_pd(rinv_s), t = _mm512_set1_pd(t_s);
  __mmask8 fail = 0;
  i64 ow = 0;
  if constexpr (K > 1 && K <= 8) {
    // Tap j of eight outputs is V[ow + j .. ow + j + 7]: shifted out of the two aligned blocks at
    // ow and ow + 8 (valignq) rather than loaded again across cache lines; the same values in
    // the same order, so the same bits.
    __m512i cur = _mm512_castpd_si512(_mm512_loadu_pd(vp));
    for (; ow < ow_count; ow += 8) {
      const __m512i next = _mm512_castpd_si512(_mm512_loadu_pd(vp + ow + 8));
      __m512d s = _mm512_castsi512_pd(cur);
      [&]<int... J>(std::integer_sequence<int, J...>) IRRUN_AVX512_LAMBDA {
        ((s = _mm512_add_pd(s, _mm512_castsi512_pd(_mm512_alignr_epi64(next, cur, J + 1)))), ...);
      }
      (std::make_integer_sequence<int, K - 1>{});
      fail = finish8(s, rinv, inv_w + ow, t, fail, out + ow, first_lanes(ow_count - ow));
      cur = next;
    }
    return fail != 0;
  }
  // The V row is zero-padded past the last window (Plan::vlen), so the loads of a partial last
  // block stay inside it; only its valid lanes are stored and checked.
  for (; ow < ow_count; ow += 8) {
    const double* p = vp + ow;
    __m512d s = _mm512_loadu_pd(p);
    for (i64 j = 1; j < taps; ++j) s = _mm512_add_pd(s, _mm512_loadu_pd(p + j));
    fail = finish8(s, rinv, inv_w + ow, t, fail, out + ow, first_lanes(ow_count - ow));
  }
  return fail != 0;
}

template <int K>
IRRUN_AVX512 IRRUN_INLINE bool hrow_s2_avx512(const double* vp, i64 k, i64 ow_count,
                                              const double* inv_w, double rinv_s, double t_s,
                                              float* out) {
  const i64 taps = K > 0 ? K : k;
  const __m512d rinv = _mm512_set1_pd(rinv_s), t = _mm512_set1_pd(t_s);
  // Unpacking gives outputs in the order 0,4,1,5,2,6,3,7.
  const __m512i order = _mm512_set_epi64(7, 5, 3, 1, 6, 4, 2, 0);
  __mmask8 fail = 0;
  i64 ow = 0;
  if constexpr (K > 2 && K <= 8) {
    // Taps 2m, 2m+1 come from V[2ow + 2m ..]: shifted out of the aligned blocks at 2ow, 2ow + 8
    // and 2ow + 16 (valignq; the last is the next block's first) instead of reloaded across
    // cache lines. The same values in the same order, so the same bits.
    __m512i a = _mm512_castpd_si512(_mm512_loadu_pd(vp));
    for (; ow < ow_count; ow += 8) {
      const double* p = vp + 2 * ow;
      const __m512i b = _mm512_castpd_si512(_mm512_loadu_pd(p + 8));
      const __m512i c = _mm512_castpd_si512(_mm512_loadu_pd(p + 16));
      __m512d s = _mm512_add_pd(_mm512_unpacklo_pd(_mm512_castsi512_pd(a), _mm512_castsi512_pd(b)),
                                _mm512_unpackhi_pd(_mm512_castsi512_pd(a), _mm512_castsi512_pd(b)));
      [&]<int... M>(std::integer_sequence<int, M...>) IRRUN_AVX512_LAMBDA {
        (
            [&]() IRRUN_AVX512_LAMBDA {
              const __m512d am = _mm512_castsi512_pd(_mm512_alignr_epi64(b, a, 2 * (M + 1)));
              const __m512d bm = _mm512_castsi512_pd(_mm512_alignr_epi64(c, b, 2 * (M + 1)));
              s = _mm512_add_pd(s, _mm512_unpacklo_pd(am, bm));
              if (2 * (M + 1) + 1 < K) s = _mm512_add_pd(s, _mm512_unpackhi_pd(am, bm));
            }(),
            ...);
      }
      (std::make_integer_sequence<int, (K - 1) / 2>{});
      s = _mm512_permutexvar_pd(order, s);
      fail = finish8(s, rinv, inv_w + ow, t, fail, out + ow, first_lanes(ow_count - ow));
      a = c;
    }
    return fail != 0;
  }
  for (; ow < ow_count; ow += 8) {  // partial last block: as in hrow_s1_avx512
    const double* p = vp + 2 * ow;
    __m512d a = _mm512_loadu_pd(p), b = _mm512_loadu_pd(p + 8);
    __m512d s = _mm512_unpacklo_pd(a, b);
    if (taps > 1) s = _mm512_add_pd(s, _mm512_unpackhi_pd(a, b));
    for (i64 m = 1; 2 * m < taps; ++m) {
      a = _mm512_loadu_pd(p + 2 * m);
      b = _mm512_loadu_pd(p + 2 * m + 8);
      s = _mm512_add_pd(s, _mm512_unpacklo_pd(a, b));
      if (2 * m + 1 < taps) s = _mm512_add_pd(s, _mm512_unpackhi_pd(a, b));
    }
    s = _mm512_permutexvar_pd(order, s);
    fail = finish8(s, rinv, inv_w + ow, t, fail, out + ow, first_lanes(ow_count - ow));
  }
  return fail != 0;
}

// Equal bins of four (stride 4, four taps): the four taps of eight outputs are gathered from
// four loads by permutes (outputs 0-3 from the first two loads, 4-7 from the last two) and
// added in tap order, as hsum_fixed.
IRRUN_AVX512 IRRUN_INLINE bool hrow_bins4_avx512(const double* vp, i64, i64 ow_count,
                                                 const double* inv_w, double rinv_s, double t_s,
                                                 float* out) {
  const __m512d rinv = _mm512_set1_pd(rinv_s), t = _mm512_set1_pd(t_s);
  const __m512i i0 = _mm512_set_epi64(12, 8, 4, 0, 12, 8, 4, 0);
  const __m512i i1 = _mm512_set_epi64(13, 9, 5, 1, 13, 9, 5, 1);
  const __m512i i2 = _mm512_set_epi64(14, 10, 6, 2, 14, 10, 6, 2);
  const __m512i i3 = _mm512_set_epi64(15, 11, 7, 3, 15, 11, 7, 3);
  __mmask8 fail = 0;
  for (i64 ow = 0; ow < ow_count; ow += 8) {  // partial last block: as in hrow_s1_avx512
    const double* p = vp + 4 * ow;
    const __m512d a = _mm512_loadu_pd(p), b = _mm512_loadu_pd(p + 8);
    const __m512d c = _mm512_loadu_pd(p + 16), d = _mm512_loadu_pd(p + 24);
    __m512d lo = _mm512_add_pd(_mm512_permutex2var_pd(a, i0, b), _mm512_permutex2var_pd(a, i1, b));
    __m512d hi = _mm512_add_pd(_mm512_permutex2var_pd(c, i0, d), _mm512_permutex2var_pd(c, i1, d));
    lo = _mm512_add_pd(lo, _mm512_permutex2var_pd(a, i2, b));
    hi = _mm512_add_pd(hi, _mm512_permutex2var_pd(c, i2, d));
    lo = _mm512_add_pd(lo, _mm512_permutex2var_pd(a, i3, b));
    hi = _mm512_add_pd(hi, _mm512_permutex2var_pd(c, i3, d));
    const __m512d s = _mm512_mask_blend_pd(0xF0, lo, hi);
    fail = finish8(s, rinv, inv_w + ow, t, fail, out + ow, first_lanes(ow_count - ow));
  }
  return fail != 0;
}

// a[p] holds plane p's eight lane accumulators; returns the eight plane sums in
// plane_sum_portable's order: neighbouring lanes, then pairs of pairs, then the two halves.
IRRUN_AVX512 inline __m512d combine8_avx512(const __m512d* a) {
  __m512d b[4];  // b[j] = [P2j(01), P2j+1(01), P2j(23), P2j+1(23), ... (45) ..., ... (67) ...]
  for (int j = 0; j < 4; ++j)
    b[j] = _mm512_add_pd(_mm512_unpacklo_pd(a[2 * j], a[2 * j + 1]),
                         _mm512_unpackhi_pd(a[2 * j], a[2 * j + 1]));
  const __m512i first = _mm512_set_epi64(13, 12, 5, 4, 9, 8, 1, 0);
  const __m512i second = _mm512_set_epi64(15, 14, 7, 6, 11, 10, 3, 2);
  // c[k] = [P4k..P4k+3 (0123), P4k..P4k+3 (4567)]
  __m512d c[2];
  for (int k = 0; k < 2; ++k)
    c[k] = _mm512_add_pd(_mm512_permutex2var_pd(b[2 * k], first, b[2 * k + 1]),
                         _mm512_permutex2var_pd(b[2 * k], second, b[2 * k + 1]));
  return _mm512_add_pd(_mm512_shuffle_f64x2(c[0], c[1], 0x44),
                       _mm512_shuffle_f64x2(c[0], c[1], 0xEE));
}

// The floats of v widened to doubles, their min and max tracked in m.
IRRUN_AVX512 inline __m512d widen(__m256 v, MinMax8& m) {
  m.hi = _mm256_max_ps(v, m.hi);  // max/min return the second operand when v is NaN
  m.lo = _mm256_min_ps(v, m.lo);
  return _mm512_cvtps_pd(v);
}

IRRUN_AVX512 void plane_sums_avx512(const float* x, i64 n, i64 count, double* s, float& lo,
                                    float& hi) {
  const i64 full = n / 8 * 8;
  // The zero-filled last block; masked-off floats are not read, the zeros do not move min/max
  // past the block's own values (the filler is NaN for the stats).
  const auto tail = static_cast<__mmask16>((1u << (n - full)) - 1);
  const __m512 nan = _mm512_set1_ps(std::numeric_limits<float>::quiet_NaN());
  auto last = [&](const float* q) IRRUN_AVX512_LAMBDA {
    return _mm512_castps512_ps256(_mm512_mask_loadu_ps(nan, tail, q));
  };
  // Four independent min/max chains keep their latency off the critical path.
  MinMax8 m[4];
  for (auto& mm : m) mm = {_mm256_set1_ps(lo), _mm256_set1_ps(hi)};
  const __m512d zero = _mm512_setzero_pd();
  i64 p = 0;
  for (; p + 8 <= count; p += 8) {
    const float* xp = x + p * n;
    __m512d a[8];
    for (int j = 0; j < 8; ++j) a[j] = zero;
    for (i64 i = 0; i < full; i += 8)
      for (int j = 0; j < 8; ++j)
        a[j] = add_fma512(a[j], widen(_mm256_loadu_ps(xp + j * n + i), m[j & 3]));
    if (tail != 0)
      for (int j = 0; j < 8; ++j) {
        const __m512d v = widen(last(xp + j * n + full), m[j & 3]);
        a[j] = _mm512_add_pd(a[j], _mm512_mask_mov_pd(zero, static_cast<__mmask8>(tail), v));
      }
    _mm512_storeu_pd(s + p, combine8_avx512(a));
  }
  for (; p < count; ++p) {  // one plane at a time: one register of lanes, combined in memory
    const float* xp = x + p * n;
    __m512d a = zero;
    for (i64 i = 0; i < full; i += 8) a = add_fma512(a, widen(_mm256_loadu_ps(xp + i), m[0]));
    if (tail != 0) {
      const __m512d v = widen(last(xp + full), m[0]);
      a = _mm512_add_pd(a, _mm512_mask_mov_pd(zero, static_cast<__mmask8>(tail), v));
    }
    alignas(64) double l[8];
    _mm512_store_pd(l, a);
    s[p] = combine_lanes(l);
  }
  alignas(32) float h[8], l[8];
  _mm256_store_ps(h,
                  _mm256_max_ps(_mm256_max_ps(m[0].hi, m[1].hi), _mm256_max_ps(m[2].hi, m[3].hi)));
  _mm256_store_ps(l,
                  _mm256_min_ps(_mm256_min_ps(m[0].lo, m[1].lo), _mm256_min_ps(m[2].lo, m[3].lo)));
  for (int j = 0; j < 8; ++j) {
    if (h[j] > hi) hi = h[j];
    if (l[j] < lo) lo = l[j];
  }
}

#undef IRRUN_AVX512
#undef IRRUN_AVX512_LAMBDA

// ------------------------------------------------------------------------------------------

using HrowFn = bool (*)(const double*, i64, i64, const double*, double, double, float*);

struct BandArgs;

struct Ops {
  void (*stats)(const float*, i64, float&, float&);
  void (*vsum)(const float* const*, i64, i64, double*);
  // Sums of `count` planes of n floats, and the planes' min and max folded into lo, hi.
  void (*plane_sums)(const float*, i64, i64, double*, float&, float&);
  HrowFn hrow = nullptr;        // fixed-tap horizontal pass for this op's stride and kernel
  HrowFn finish_row = nullptr;  // the one-tap stride-1 pass: scale, check, store a row of sums
  bool (*band)(const BandArgs&, const Ops&) = nullptr;  // one group of rows (window kernel)
  bool keeps_v = true;  // band leaves the group's V rows in the buffer (else: rescans rebuild)
};

// The vectorised horizontal passes of one ISA: stride 1 with k = 2, 3, 5, 7 or any, stride 2
// with k = 2, 3 or any, and stride-4 bins of four.
struct HrowSet {
  HrowFn s1_k2, s1_k3, s1_k5, s1_k7, s1_any;
  HrowFn s2_k2, s2_k3, s2_any;
  HrowFn bins4;
};

HrowFn pick_hrow(const HrowSet& set, i64 stride, i64 k) {
  if (stride > 2) return stride == 4 && k == 4 && set.bins4 ? set.bins4 : hrow_bins_portable;
  if (stride == 1) {
    switch (k) {
      case 2:
        return set.s1_k2;
      case 3:
        return set.s1_k3;
      case 5:
        return set.s1_k5;
      case 7:
        return set.s1_k7;
      default:
        return set.s1_any;
    }
  }
  return k == 2 ? set.s2_k2 : k == 3 ? set.s2_k3 : set.s2_any;
}

constexpr HrowSet kHrowAvx512{hrow_s1_avx512<2>, hrow_s1_avx512<3>, hrow_s1_avx512<5>,
                              hrow_s1_avx512<7>, hrow_s1_avx512<0>, hrow_s2_avx512<2>,
                              hrow_s2_avx512<3>, hrow_s2_avx512<0>, hrow_bins4_avx512};

constexpr HrowSet kHrowAvx2{hrow_s1_avx2<2>, hrow_s1_avx2<3>, hrow_s1_avx2<5>,
                            hrow_s1_avx2<7>, hrow_s1_avx2<0>, hrow_s2_avx2<2>,
                            hrow_s2_avx2<3>, hrow_s2_avx2<0>, hrow_bins4_avx2};

// In-bounds taps of every window on one axis: output o reads first[o] + t*step, t < taps[o].
struct Axis {
  std::vector<i64> first, taps;
  i64 step = 1;
  i64 max_taps = 0;
};

Axis make_axis(const PoolGeometry& g, std::size_t a) {
  Axis ax;
  const i64 in = g.in[a], out = g.out[a];
  ax.first.resize(static_cast<std::size_t>(out));
  ax.taps.resize(static_cast<std::size_t>(out));
  if (!g.adaptive) ax.step = g.dilation[a];
  for (i64 o = 0; o < out; ++o) {
    i64 first = 0, taps = 0;
    if (g.adaptive) {
      first = adaptive_bin_start(o, in, out);
      taps = adaptive_bin_end(o, in, out) - first;
    } else {
      const i64 d = g.dilation[a], start = o * g.stride[a] - g.pad_begin[a];
      const i64 lo = start < 0 ? (-start + d - 1) / d : 0;
      const i64 hi = start < in ? std::min(g.kernel[a], (in - start + d - 1) / d) : 0;
      first = start + lo * d;
      taps = std::max<i64>(0, hi - lo);
    }
    ax.first[static_cast<std::size_t>(o)] = first;
    ax.taps[static_cast<std::size_t>(o)] = taps;
    ax.max_taps = std::max(ax.max_taps, taps);
  }
  return ax;
}

struct Plan {
  const PoolGeometry* g = nullptr;
  Axis ax[3];
  bool uniform = false;  // every window divides by the kernel volume
  double kvol = 1;
  bool whole_plane = false;
  bool fixed_w = false;  // horizontal windows of fixed K taps over a zero-padded row
  i64 stride_w = 1, k_w = 1, pad_left = 0, vlen = 0;
  std::vector<double> inv_w;  // per output column (padded to a multiple of 4)
  double t_factor = 0;        // T = M * t_factor for a mixed-sign band
  i64 units_per_plane = 1;    // bands per plane (window kernel)
  i64 rows_per_unit = 1;      // output rows (flattened od*OH + oh) per band unit
  i64 units_per_band = 1;
  i64 bands = 1;
  i64 max_rows = 1;  // max input rows summed by the vertical pass
  // Per-geometry row tables (flattened output row q = od*OH + oh), built once per call: the
  // float offsets in a plane of the input rows summed into V for row q are
  // row_off[row_begin[q] .. row_begin[q+1]), in summation order; row_rinv[q] is the row factor.
  std::vector<i64> row_begin, row_off;
  std::vector<double> row_rinv;
  // Per band: float offset and length of the contiguous input span scanned for min/max.
  std::vector<i64> band_span_begin, band_span_len;
  // Flat groups (AVX-512, see band_flat_avx512): V rows back to back, vlen = IW.
  bool flat = false;
  std::vector<i64> run_end;    // rows q .. run_end[q]-1 read the rows of q shifted by IW per row
  std::vector<double> flat_r;  // per output of a plane: fl(row_rinv[q] * inv_w[ow])
  // [block of eight % mask_period][tap][lane]: all ones where the lane's tap is in its own row.
  std::vector<std::uint64_t> flat_lanes;
  i64 mask_period = 1;
};

// Reference-order compensated average of one output (the fallback).
float fallback_output(const Plan& pl, const float* plane, i64 od, i64 oh, i64 ow) {
  const PoolGeometry& g = *pl.g;
  const auto D = static_cast<std::size_t>(od), H = static_cast<std::size_t>(oh),
             W = static_cast<std::size_t>(ow);
  const i64 td = pl.ax[0].taps[D], th = pl.ax[1].taps[H], tw = pl.ax[2].taps[W];
  const i64 taps = td * th * tw;
  if (taps == 0) return 0.0f;
  detail::CompensatedSum sum;
  for (i64 a = 0; a < td; ++a) {
    const i64 id = pl.ax[0].first[D] + a * pl.ax[0].step;
    for (i64 b = 0; b < th; ++b) {
      const i64 ih = pl.ax[1].first[H] + b * pl.ax[1].step;
      const float* row = plane + (id * g.in[1] + ih) * g.in[2];
      for (i64 c = 0; c < tw; ++c) sum.add(row[pl.ax[2].first[W] + c * pl.ax[2].step]);
    }
  }
  return static_cast<float>(sum.mean(pl.uniform ? pl.kvol : static_cast<double>(taps)));
}

double threshold(const Plan& pl, float lo, float hi) {
  if (!(lo <= hi)) return 0.0;         // no finite value in the band: nothing to bound
  if (lo >= 0 || hi <= 0) return 0.0;  // one sign: sum|x| = |s|, relative bound
  const double m = std::max(static_cast<double>(hi), -static_cast<double>(lo));
  return m * pl.t_factor;
}

// ---- Whole-plane kernel: one window covering each input plane.

void run_whole_plane(const Plan& pl, const Ops& ops, const float* x, float* y, i64 unit_begin,
                     i64 unit_end) {
  const PoolGeometry& g = *pl.g;
  const i64 n = g.in_plane_size();
  const double inv = 1.0 / (pl.uniform ? pl.kvol : static_cast<double>(n));
  std::vector<double> sums(kWholePlaneBlock), inv_w(kWholePlaneBlock, inv);
  for (i64 u = unit_begin; u < unit_end; ++u) {
    const i64 p0 = u * kWholePlaneBlock, count = std::min(g.planes() - p0, kWholePlaneBlock);
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    ops.plane_sums(x + p0 * n, n, count, sums.data(), lo, hi);
    const double t = threshold(pl, lo, hi);
    // The scale/check/store pass of a one-tap stride-1 row: y = s * (1 * inv), as finish().
    if (!ops.finish_row(sums.data(), 1, count, inv_w.data(), 1.0, t, y + p0)) continue;
    for (i64 p = p0; p < p0 + count; ++p)
      if (!(std::fabs(sums[static_cast<std::size_t>(p - p0)]) >= t))
        y[p] = fallback_output(pl, x + p * n, 0, 0, 0);
  }
}

// ---- Window kernel: bands of output rows, vertical then horizontal sums.

// One group of output rows [q0, q1) of one plane: vertical sums into v (group rows of
// pl.vlen doubles, zero padding kept), then the horizontal pass, scaling, check and store.
// Returns true when some output of the group failed the check; row_failed[q - q0] says which
// rows hold one (the caller rescans those rows only).
// The part of the next band's span still to prefetch, `step` floats per output row.
struct Prefetch {
  const float* p = nullptr;
  i64 left = 0, step = 0;
};

// Prefetches the next chunk into L2 (not L1: the V rows and this band's input rows live there).
inline void prefetch_step(Prefetch& f) {
  if (f.left <= 0) return;
  const i64 n = std::min(f.left, f.step);
  for (i64 o = 0; o < n; o += 16) _mm_prefetch(reinterpret_cast<const char*>(f.p + o), _MM_HINT_T1);
  f.p += n, f.left -= n;
}

struct BandArgs {
  const Plan* pl;
  const float* plane;
  float* out_plane;
  i64 q0, q1;
  double t;
  double* v;
  bool* row_failed;
  Prefetch* next;  // the vector group functions prefetch a chunk of it per row
};

using BandFn = bool (*)(const BandArgs&, const Ops&);

// Portable (and AVX2) group: the building blocks above, in the same order as the AVX-512 path.
// V row q of a plane (its IW vertical sums, zeros without rows) into v, summed by `vsum` (every
// path's vsum gives the same bits). The group functions and the rescans of fused rows use it.
void vsum_row(const Plan& pl, decltype(Ops::vsum) vsum, const float* plane, i64 q, double* v) {
  const auto uq = static_cast<std::size_t>(q);
  const i64 r = pl.row_begin[uq + 1] - pl.row_begin[uq];
  const i64* off = pl.row_off.data() + pl.row_begin[uq];
  const float* rows[64];
  std::vector<const float*> many;
  const float** rp = rows;
  if (r > 64) {
    many.resize(static_cast<std::size_t>(r));
    rp = many.data();
  }
  for (i64 j = 0; j < r; ++j) rp[j] = plane + off[j];
  if (r == 0) {
    std::fill(v, v + pl.g->in[2], 0.0);
  } else {
    vsum(rp, r, pl.g->in[2], v);
  }
}

bool band_generic(const BandArgs& a, const Ops& ops) {
  const Plan& pl = *a.pl;
  const i64 OW = pl.g->out[2];
  bool failed = false;
  for (i64 q = a.q0; q < a.q1; ++q)
    vsum_row(pl, ops.vsum, a.plane, q, a.v + (q - a.q0) * pl.vlen + pl.pad_left);
  for (i64 q = a.q0; q < a.q1; ++q) {
    const double* vrow = a.v + (q - a.q0) * pl.vlen;
    const double rinv = pl.row_rinv[static_cast<std::size_t>(q)];
    float* out = a.out_plane + q * OW;
    bool row_failed = false;
    if (pl.fixed_w) {
      row_failed = ops.hrow(vrow, pl.k_w, OW, pl.inv_w.data(), rinv, a.t, out);
    } else {
      for (i64 ow = 0; ow < OW; ++ow) {
        const auto w = static_cast<std::size_t>(ow);
        const double s = hsum_generic(vrow, pl.ax[2].first[w], pl.ax[2].taps[w], pl.ax[2].step);
        row_failed |= finish(s, rinv, pl.inv_w[w], a.t, out + ow);
      }
    }
    a.row_failed[q - a.q0] = row_failed;
    failed |= row_failed;
  }
  return failed;
}

#define IRRUN_AVX2 __attribute__((target("avx2,fma")))

// Lane masks of the first 0-4 lanes (maskload reads nothing where the mask is 0).
alignas(16) constexpr std::int32_t kFirstLanes4[8] = {-1, -1, -1, -1, 0, 0, 0, 0};

IRRUN_AVX2 inline __m128i first_lanes4(i64 count) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(kFirstLanes4 + 4 - count));
}

// v[i] = sum of the rows plane + off[j] at column i, j in table order (as vsum_avx2); the last
// 1-3 columns are masked loads and a whole store of +0 past n (Plan::vlen leaves room).
template <int R>
IRRUN_AVX2 IRRUN_INLINE void vrow_avx2(const float* plane, const i64* off, i64 r_rt, i64 n,
                                       double* v) {
  const i64 r = R > 0 ? R : r_rt;
  const float* p0 = plane + off[0];
  i64 i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256d a0 = _mm256_cvtps_pd(_mm_loadu_ps(p0 + i));
    __m256d a1 = _mm256_cvtps_pd(_mm_loadu_ps(p0 + i + 4));
    for (i64 j = 1; j < r; ++j) {
      const float* pj = plane + off[j] + i;
      a0 = add_fma(a0, _mm256_cvtps_pd(_mm_loadu_ps(pj)));
      a1 = add_fma(a1, _mm256_cvtps_pd(_mm_loadu_ps(pj + 4)));
    }
    _mm256_storeu_pd(v + i, a0);
    _mm256_storeu_pd(v + i + 4, a1);
  }
  for (; i < n; i += 4) {
    const __m128i m = first_lanes4(std::min<i64>(4, n - i));
    __m256d a = _mm256_cvtps_pd(_mm_maskload_ps(p0 + i, m));
    for (i64 j = 1; j < r; ++j)
      a = add_fma(a, _mm256_cvtps_pd(_mm_maskload_ps(plane + off[j] + i, m)));
    _mm256_storeu_pd(v + i, a);
  }
}

// band_avx512 with the AVX2 building blocks: the whole group in one function, H inlined.
template <HrowFn H>
IRRUN_AVX2 bool band_avx2(const BandArgs& a, const Ops&) {
  const Plan& pl = *a.pl;
  const PoolGeometry& g = *pl.g;
  const i64 IW = g.in[2], OW = g.out[2];
  const i64* begin = pl.row_begin.data();
  double* v = a.v + pl.pad_left;
  for (i64 q = a.q0; q < a.q1; ++q, v += pl.vlen) {
    prefetch_step(*a.next);
    const i64 r = begin[q + 1] - begin[q];
    const i64* off = pl.row_off.data() + begin[q];
    switch (r) {  // the row counts of band_avx512, unrolled at compile time
      case 0:
        std::fill(v, v + IW, 0.0);
        break;
      case 1:
        vrow_avx2<1>(a.plane, off, r, IW, v);
        break;
      case 2:
        vrow_avx2<2>(a.plane, off, r, IW, v);
        break;
      case 3:
        vrow_avx2<3>(a.plane, off, r, IW, v);
        break;
      case 4:
        vrow_avx2<4>(a.plane, off, r, IW, v);
        break;
      case 5:
        vrow_avx2<5>(a.plane, off, r, IW, v);
        break;
      case 6:
        vrow_avx2<6>(a.plane, off, r, IW, v);
        break;
      case 9:
        vrow_avx2<9>(a.plane, off, r, IW, v);
        break;
      default:
        vrow_avx2<0>(a.plane, off, r, IW, v);
    }
  }
  bool failed = false;
  const double* vrow = a.v;
  for (i64 q = a.q0; q < a.q1; ++q, vrow += pl.vlen) {
    const bool row_failed =
        H(vrow, pl.k_w, OW, pl.inv_w.data(), pl.row_rinv.data()[q], a.t, a.out_plane + q * OW);
    a.row_failed[q - a.q0] = row_failed;
    failed |= row_failed;
  }
  return failed;
}

// band_flat_avx512 in blocks of four outputs (halves of its blocks of eight).
template <int K, int PAD = -1>
IRRUN_AVX2 bool band_flat_avx2(const BandArgs& a, const Ops&) {
  const Plan& pl = *a.pl;
  const PoolGeometry& g = *pl.g;
  const i64 IW = g.in[2];
  const i64* begin = pl.row_begin.data();
  for (i64 q = a.q0; q < a.q1;) {
    const i64 q_end = std::min(a.q1, pl.run_end[static_cast<std::size_t>(q)]);
    const i64 r = begin[q + 1] - begin[q], n = (q_end - q) * IW;
    double* v = a.v + (q - a.q0) * IW;
    const i64* off = pl.row_off.data() + begin[q];
    if (r == 0) std::fill(v, v + n, 0.0);
    if (r == 2) vrow_avx2<2>(a.plane, off, r, n, v);
    if (r == 3) vrow_avx2<3>(a.plane, off, r, n, v);
    if (r == 1 || r > 3) vrow_avx2<0>(a.plane, off, r, n, v);
    q = q_end;
  }

  const i64 taps = K > 0 ? K : pl.k_w;
  const i64 n_out = (a.q1 - a.q0) * IW;
  std::fill(a.row_failed, a.row_failed + (a.q1 - a.q0), false);
  const double* vp = a.v - pl.pad_left;
  const double* r = pl.flat_r.data() + a.q0 * IW;
  float* out = a.out_plane + a.q0 * IW;
  const __m256d t = _mm256_set1_pd(a.t), sign = _mm256_set1_pd(-0.0);
  const auto* lanes_begin = reinterpret_cast<const double*>(pl.flat_lanes.data());
  const double* lanes_end = lanes_begin + pl.mask_period * taps * 8;
  const double* mk = lanes_begin;  // lanes of the outputs' half of their block of eight
  bool failed = false;
  // PAD >= 0: the taps are shifted out of the blocks before, at and after the four outputs
  // (prev, cur, next; mid = the middle two pairs of two neighbouring blocks) instead of loaded.
  __m256d prev = _mm256_loadu_pd(a.v - 4), cur = _mm256_loadu_pd(a.v);
  __m256d mid = _mm256_permute2f128_pd(prev, cur, 0x21);
  // Outputs k .. k + 3 (Full) or the last 1-3 outputs of the group.
  const auto block = [&]<bool Full>(i64 k) IRRUN_AVX2 {
    const auto masked = [&](i64 j, __m256d x) IRRUN_AVX2 {
      return j == PAD ? x : _mm256_and_pd(x, _mm256_loadu_pd(mk + 8 * j));
    };
    __m256d s;
    if constexpr (PAD >= 0) {
      const __m256d next = _mm256_loadu_pd(a.v + k + 4);
      const __m256d mid2 = _mm256_permute2f128_pd(cur, next, 0x21);
      // shuffle(x, y, 5) = [x1, y0, x3, y2]: V[k + O .. k + O + 3] for O = -3 .. 3.
      const __m256d at[7] = {
          _mm256_shuffle_pd(prev, mid, 5), mid,  _mm256_shuffle_pd(mid, cur, 5),  cur,
          _mm256_shuffle_pd(cur, mid2, 5), mid2, _mm256_shuffle_pd(mid2, next, 5)};
      s = masked(0, at[3 - PAD]);
      for (int j = 1; j < K; ++j) s = _mm256_add_pd(s, masked(j, at[3 + j - PAD]));
      prev = cur, cur = next, mid = mid2;
    } else {
      s = masked(0, _mm256_loadu_pd(vp + k));
      for (i64 j = 1; j < taps; ++j) s = _mm256_add_pd(s, masked(j, _mm256_loadu_pd(vp + k + j)));
    }
    // finish4 with the factor fl(1 * r) = r: y = s * r, stored, checked.
    int fail = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_andnot_pd(sign, s), t, _CMP_NGE_UQ));
    if constexpr (Full) {
      _mm_storeu_ps(out + k, _mm256_cvtpd_ps(_mm256_mul_pd(s, _mm256_loadu_pd(r + k))));
    } else {  // r ends with the plane: masked load
      const i64 n = n_out - k;
      const __m256i lanes = _mm256_cvtepi32_epi64(first_lanes4(n));
      store_first(out + k, _mm256_cvtpd_ps(_mm256_mul_pd(s, _mm256_maskload_pd(r + k, lanes))), n);
      fail &= (1 << n) - 1;
    }
    if (fail != 0) {  // rare: flag the rows of the failed lanes
      failed = true;
      for (int l = 0; l < 4; ++l)
        if (fail >> l & 1) a.row_failed[(k + l) / IW] = true;
    }
    if (k % 8 == 0) {
      mk += 4;
    } else if ((mk += taps * 8 - 4) == lanes_end) {
      mk = lanes_begin;
    }
  };
  i64 k = 0;
  for (; k + 4 <= n_out; k += 4) block.template operator()<true>(k);
  if (k < n_out) block.template operator()<false>(k);
  return failed;
}

template <HrowFn H>
struct BandAvx2 {
  static constexpr BandFn fn = band_avx2<H>;
};

BandFn pick_band_flat_avx2(i64 k, i64 pad_left) {
  if (k == 3 && pad_left == 1) return band_flat_avx2<3, 1>;  // 3x3 "same"
  if (k == 5 && pad_left == 2) return band_flat_avx2<5, 2>;
  if (k == 7 && pad_left == 3) return band_flat_avx2<7, 3>;
  return k == 3 ? band_flat_avx2<3> : k == 5 ? band_flat_avx2<5> : band_flat_avx2<0>;
}

#undef IRRUN_AVX2

#define IRRUN_AVX512 __attribute__((target("avx512f")))
#define IRRUN_AVX512_LAMBDA __attribute__((target("avx512f")))

// v[i] = sum of the rows plane + off[j] at column i, j in table order (as vsum_avx512).
template <int R>
IRRUN_AVX512 IRRUN_INLINE void vrow_avx512(const float* plane, const i64* off, i64 r_rt, i64 n,
                                           double* v) {
  const i64 r = R > 0 ? R : r_rt;
  const float* p0 = plane + off[0];
  i64 i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512d a0 = _mm512_cvtps_pd(_mm256_loadu_ps(p0 + i));
    __m512d a1 = _mm512_cvtps_pd(_mm256_loadu_ps(p0 + i + 8));
    for (i64 j = 1; j < r; ++j) {
      const float* pj = plane + off[j] + i;
      a0 = add_fma512(a0, _mm512_cvtps_pd(_mm256_loadu_ps(pj)));
      a1 = add_fma512(a1, _mm512_cvtps_pd(_mm256_loadu_ps(pj + 8)));
    }
    _mm512_storeu_pd(v + i, a0);
    _mm512_storeu_pd(v + i + 8, a1);
  }
  for (; i < n; i += 8) {  // masked last columns: masked-off floats are not read
    const auto m = static_cast<__mmask16>(n - i >= 8 ? 0xFF : (1u << (n - i)) - 1);
    __m512d a = _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps(m, p0 + i)));
    for (i64 j = 1; j < r; ++j)
      a = add_fma512(
          a, _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps(m, plane + off[j] + i))));
    // Masked-off lanes hold +0 (zero-masked loads): a full store keeps the zero padding past
    // the row (Plan::vlen leaves room) and avoids a slow masked store.
    _mm512_storeu_pd(v + i, a);
  }
}

// The whole group in one function: row tables, no calls per row (the horizontal pass H is
// inlined), the same operations and order as band_generic with the AVX-512 building blocks.
template <HrowFn H>
IRRUN_AVX512 bool band_avx512(const BandArgs& a, const Ops&) {
  const Plan& pl = *a.pl;
  const PoolGeometry& g = *pl.g;
  const i64 IW = g.in[2], OW = g.out[2];
  const i64* begin = pl.row_begin.data();
  const i64* offs = pl.row_off.data();
  double* v = a.v + pl.pad_left;
  for (i64 q = a.q0; q < a.q1; ++q, v += pl.vlen) {
    prefetch_step(*a.next);
    const i64 r = begin[q + 1] - begin[q];
    const i64* off = offs + begin[q];
    switch (r) {
      case 0:
        std::fill(v, v + IW, 0.0);
        break;
      case 1:
        vrow_avx512<1>(a.plane, off, r, IW, v);
        break;
      case 2:
        vrow_avx512<2>(a.plane, off, r, IW, v);
        break;
      case 3:
        vrow_avx512<3>(a.plane, off, r, IW, v);
        break;
      case 4:
        vrow_avx512<4>(a.plane, off, r, IW, v);
        break;
      case 5:
        vrow_avx512<5>(a.plane, off, r, IW, v);
        break;
      case 6:  // 3x3x3 windows (S5): 3x3 rows inside, 2x3 at the edges
        vrow_avx512<6>(a.plane, off, r, IW, v);
        break;
      case 9:
        vrow_avx512<9>(a.plane, off, r, IW, v);
        break;
      default:
        vrow_avx512<0>(a.plane, off, r, IW, v);
    }
  }
  bool failed = false;
  const double* vrow = a.v;
  const double* rinv = pl.row_rinv.data();
  for (i64 q = a.q0; q < a.q1; ++q, vrow += pl.vlen) {
    const bool row_failed =
        H(vrow, pl.k_w, OW, pl.inv_w.data(), rinv[q], a.t, a.out_plane + q * OW);
    a.row_failed[q - a.q0] = row_failed;
    failed |= row_failed;
  }
  return failed;
}

template <HrowFn H>
struct BandAvx512 {
  static constexpr BandFn fn = band_avx512<H>;
};

// The group function Band<H>::fn for the horizontal pass h that pick_hrow(S, ...) returns.
template <template <HrowFn> class Band, const HrowSet& S>
BandFn pick_band(HrowFn h) {
  const std::pair<HrowFn, BandFn> table[] = {
      {S.s1_k2, Band<S.s1_k2>::fn},   {S.s1_k3, Band<S.s1_k3>::fn},
      {S.s1_k5, Band<S.s1_k5>::fn},   {S.s1_k7, Band<S.s1_k7>::fn},
      {S.s1_any, Band<S.s1_any>::fn}, {S.s2_k2, Band<S.s2_k2>::fn},
      {S.s2_k3, Band<S.s2_k3>::fn},   {S.s2_any, Band<S.s2_any>::fn},
      {S.bins4, Band<S.bins4>::fn},   {hrow_bins_portable, Band<hrow_bins_portable>::fn},
  };
  for (const auto& e : table)
    if (e.first == h) return e.second;
  return band_generic;
}

// Flat groups, for narrow rows (stride 1 along W, OW == IW): per-row loops over a few dozen
// columns spend their time in loop set-up and partial blocks, so a group's V rows are stored back
// to back (V[(q - q0) * IW + i]) and both passes run over the whole group as one long row.
//   Vertical: a run of rows whose input rows shift by exactly IW per output row (stride 1, the
//   same row count: every interior row of a plane) is one contiguous vrow_avx512 call.
//   Horizontal: block b of eight outputs adds tap j from V[8b + j - pad_left], ANDed with
//   flat_lanes[b % mask_period][j], all ones in the lanes whose tap lies inside their own row:
//   the other lanes become +0, exactly the zero padding the padded row holds there. Scaling
//   uses flat_r = fl(row_rinv * inv_w) with rinv 1, which is exact. So every output gets the
//   same operations in the same order as band_generic, and the same bits.
// PAD >= 0: K and pad_left are compile-time, taps are shifted out of the aligned blocks around
// the eight outputs (valignq) instead of loaded, and the centre tap (always in its row) is not
// masked; PAD < 0: taps are whole loads. The same values either way, so the same bits.
// Whole blocks run without lane masks (an AND with a table row is one fused load-op; a mask
// register costs a byte load and a kmov per tap); only a group's last block is partial.
template <int K, int PAD = -1>
IRRUN_AVX512 bool band_flat_avx512(const BandArgs& a, const Ops&) {
  const Plan& pl = *a.pl;
  const PoolGeometry& g = *pl.g;
  const i64 IW = g.in[2];
  const i64* begin = pl.row_begin.data();
  const i64* offs = pl.row_off.data();
  for (i64 q = a.q0; q < a.q1;) {
    const i64 q_end = std::min(a.q1, pl.run_end[static_cast<std::size_t>(q)]);
    const i64 r = begin[q + 1] - begin[q], n = (q_end - q) * IW;
    double* v = a.v + (q - a.q0) * IW;
    const i64* off = offs + begin[q];
    switch (r) {
      case 0:
        std::fill(v, v + n, 0.0);
        break;
      case 2:
        vrow_avx512<2>(a.plane, off, r, n, v);
        break;
      case 3:
        vrow_avx512<3>(a.plane, off, r, n, v);
        break;
      default:
        vrow_avx512<0>(a.plane, off, r, n, v);
    }
    q = q_end;
  }

  const i64 taps = K > 0 ? K : pl.k_w;
  const i64 n_out = (a.q1 - a.q0) * IW;
  std::fill(a.row_failed, a.row_failed + (a.q1 - a.q0), false);
  const double* vp = a.v - pl.pad_left;
  const double* r = pl.flat_r.data() + a.q0 * IW;
  float* out = a.out_plane + a.q0 * IW;
  const __m512d t = _mm512_set1_pd(a.t);
  const std::uint64_t *lanes_begin = pl.flat_lanes.data(), *mk = lanes_begin;
  const std::uint64_t* lanes_end = lanes_begin + pl.mask_period * taps * 8;
  bool failed = false;
  __m512i prev = _mm512_castpd_si512(_mm512_loadu_pd(a.v - 8)),
          cur = _mm512_castpd_si512(_mm512_loadu_pd(a.v));
  // Outputs k .. k + 7 (Full) or the last 1-7 outputs of the group (their lanes masked).
  const auto block = [&]<bool Full>(i64 k) IRRUN_AVX512_LAMBDA {
    const auto masked = [&](int j, __m512d x) IRRUN_AVX512_LAMBDA {
      if (j == PAD) return x;
      return _mm512_castsi512_pd(
          _mm512_and_si512(_mm512_castpd_si512(x), _mm512_loadu_si512(mk + 8 * j)));
    };
    __m512d s;
    if constexpr (PAD >= 0) {
      const __m512i next = _mm512_castpd_si512(_mm512_loadu_pd(a.v + k + 8));
      [&]<int... J>(std::integer_sequence<int, J...>) IRRUN_AVX512_LAMBDA {
        const auto tap = [&]<int O>() IRRUN_AVX512_LAMBDA {
          if constexpr (O < 0) return _mm512_castsi512_pd(_mm512_alignr_epi64(cur, prev, 8 + O));
          if constexpr (O > 0) return _mm512_castsi512_pd(_mm512_alignr_epi64(next, cur, O));
          if constexpr (O == 0) return _mm512_castsi512_pd(cur);
        };
        s = masked(0, tap.template operator()<-PAD>());
        ((s = J == 0 ? s : _mm512_add_pd(s, masked(J, tap.template operator()<J - PAD>()))), ...);
      }
      (std::make_integer_sequence<int, K>{});
      prev = cur, cur = next;
    } else {  // whole loads (the V buffer's guards cover the reach), masked lanes ANDed to +0
      s = masked(0, _mm512_loadu_pd(vp + k));
      for (i64 j = 1; j < taps; ++j)
        s = _mm512_add_pd(s, masked(static_cast<int>(j), _mm512_loadu_pd(vp + k + j)));
    }
    // finish8 with the factor fl(1 * r) = r: y = s * r, stored, checked.
    __mmask8 fail;
    if constexpr (Full) {
      _mm256_storeu_ps(out + k, _mm512_cvtpd_ps(_mm512_mul_pd(s, _mm512_loadu_pd(r + k))));
      fail = _mm512_cmp_pd_mask(_mm512_abs_pd(s), t, _CMP_NGE_UQ);
    } else {
      const __mmask8 lanes = first_lanes(n_out - k);
      const __m256 y = _mm512_cvtpd_ps(_mm512_mul_pd(s, _mm512_maskz_loadu_pd(lanes, r + k)));
      _mm512_mask_storeu_ps(out + k, lanes, _mm512_castps256_ps512(y));
      fail = _mm512_mask_cmp_pd_mask(lanes, _mm512_abs_pd(s), t, _CMP_NGE_UQ);
    }
    if (fail != 0) {  // rare: flag the rows of the failed lanes
      failed = true;
      for (int l = 0; l < 8; ++l)
        if (fail >> l & 1) a.row_failed[(k + l) / IW] = true;
    }
    mk += taps * 8;
    if (mk == lanes_end) mk = lanes_begin;
  };
  i64 k = 0;
  for (; k + 8 <= n_out; k += 8) block.template operator()<true>(k);
  if (k < n_out) block.template operator()<false>(k);
  return failed;
}

// Rows of 3-tap stride-2 windows with one pad column on the left (3x3 s2 p1 pools, S1, S5):
// the vertical sums of 16 columns stay in two registers and the horizontal taps come from them:
// the even and odd columns, and the previous block's last odd column (+0 at the row's start,
// like the padded V row). No V row is stored or reloaded; the same additions in the same order
// as vrow_avx512 then hrow_s2_avx512<3>, so the same bits.
template <int R>
IRRUN_AVX512 IRRUN_INLINE bool row_k3s2_avx512(const float* plane, const i64* off, i64 r_rt, i64 IW,
                                               i64 OW, const double* inv_w, double rinv_s,
                                               double t_s, float* out) {
  const i64 r = R >= 0 ? R : r_rt;
  const __m512i even = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
  const __m512d rinv = _mm512_set1_pd(rinv_s), t = _mm512_set1_pd(t_s);
  const auto load = [&](const float* p, __mmask16 m) IRRUN_AVX512_LAMBDA {
    return _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps(m, p)));
  };
  __m512i left = _mm512_setzero_si512();
  __mmask8 fail = 0;
  for (i64 ow = 0, c = 0; ow < OW; ow += 8, c += 16) {
    __m512d a0 = _mm512_setzero_pd(), a1 = a0;
    if (r > 0 && c + 16 <= IW) {
      const float* p0 = plane + off[0] + c;
      a0 = _mm512_cvtps_pd(_mm256_loadu_ps(p0));
      a1 = _mm512_cvtps_pd(_mm256_loadu_ps(p0 + 8));
      for (i64 j = 1; j < r; ++j) {
        const float* pj = plane + off[j] + c;
        a0 = add_fma512(a0, _mm512_cvtps_pd(_mm256_loadu_ps(pj)));
        a1 = add_fma512(a1, _mm512_cvtps_pd(_mm256_loadu_ps(pj + 8)));
      }
    } else if (r > 0) {  // the row's last columns: masked-off floats are not read, add as +0
      const i64 n = std::max<i64>(0, IW - c);  // a ceil window can start past the row
      const auto m0 = static_cast<__mmask16>(n >= 8 ? 0xFF : (1u << n) - 1);
      const auto m1 = static_cast<__mmask16>(n >= 16 ? 0xFF : n <= 8 ? 0 : (1u << (n - 8)) - 1);
      a0 = load(plane + off[0] + c, m0);
      a1 = load(plane + off[0] + c + 8, m1);
      for (i64 j = 1; j < r; ++j) {
        a0 = add_fma512(a0, load(plane + off[j] + c, m0));
        a1 = add_fma512(a1, load(plane + off[j] + c + 8, m1));
      }
    }
    const __m512i e = _mm512_castpd_si512(_mm512_permutex2var_pd(a0, even, a1));
    const __m512i o = _mm512_castpd_si512(_mm512_permutex2var_pd(a0, odd, a1));
    const __m512d l = _mm512_castsi512_pd(_mm512_alignr_epi64(o, left, 7));  // odd column - 1
    const __m512d s =
        _mm512_add_pd(_mm512_add_pd(l, _mm512_castsi512_pd(e)), _mm512_castsi512_pd(o));
    left = o;
    fail = finish8(s, rinv, inv_w + ow, t, fail, out + ow, first_lanes(OW - ow));
  }
  return fail != 0;
}

IRRUN_AVX512 bool band_k3s2_avx512(const BandArgs& a, const Ops&) {
  const Plan& pl = *a.pl;
  const PoolGeometry& g = *pl.g;
  const i64 IW = g.in[2], OW = g.out[2];
  const i64* begin = pl.row_begin.data();
  const double* rinv = pl.row_rinv.data();
  const double* inv_w = pl.inv_w.data();
  bool failed = false;
  for (i64 q = a.q0; q < a.q1; ++q) {
    prefetch_step(*a.next);
    const i64 r = begin[q + 1] - begin[q];
    const i64* off = pl.row_off.data() + begin[q];
    float* out = a.out_plane + q * OW;
    bool row_failed;
    switch (r) {  // the common row counts unrolled at compile time
      case 2:
        row_failed = row_k3s2_avx512<2>(a.plane, off, r, IW, OW, inv_w, rinv[q], a.t, out);
        break;
      case 3:
        row_failed = row_k3s2_avx512<3>(a.plane, off, r, IW, OW, inv_w, rinv[q], a.t, out);
        break;
      case 6:  // 3x3x3 windows (S5): 3x3 rows inside, 2x3 at the edges
        row_failed = row_k3s2_avx512<6>(a.plane, off, r, IW, OW, inv_w, rinv[q], a.t, out);
        break;
      case 9:
        row_failed = row_k3s2_avx512<9>(a.plane, off, r, IW, OW, inv_w, rinv[q], a.t, out);
        break;
      default:
        row_failed = row_k3s2_avx512<-1>(a.plane, off, r, IW, OW, inv_w, rinv[q], a.t, out);
    }
    a.row_failed[q - a.q0] = row_failed;
    failed |= row_failed;
  }
  return failed;
}

BandFn pick_band_flat_avx512(i64 k, i64 pad_left) {
  if (k == 3 && pad_left == 1) return band_flat_avx512<3, 1>;  // 3x3 "same"
  if (k == 5 && pad_left == 2) return band_flat_avx512<5, 2>;
  if (k == 7 && pad_left == 3) return band_flat_avx512<7, 3>;
  switch (k) {
    case 2:
      return band_flat_avx512<2>;
    case 3:
      return band_flat_avx512<3>;
    case 5:
      return band_flat_avx512<5>;
    default:
      return band_flat_avx512<0>;
  }
}

#undef IRRUN_AVX512
#undef IRRUN_AVX512_LAMBDA

struct Scratch {
  std::vector<double> v;  // groups of vertical sums, each pl.vlen long (zero padding kept)
  std::unique_ptr<bool[]> row_failed;  // per row of the group: some output failed the check
};

void run_windows(const Plan& pl, const Ops& ops, const float* x, float* y, i64 unit_begin,
                 i64 unit_end) {
  const PoolGeometry& g = *pl.g;
  const i64 OH = g.out[1], OW = g.out[2];
  const i64 out_rows = g.out[0] * OH;
  const i64 vlen = pl.flat ? g.in[2] : pl.vlen;
  const i64 group = std::max<i64>(1, kVBufferDoubles / vlen);
  Scratch sc;
  sc.v.assign(static_cast<std::size_t>(group * vlen + 2 * kVGuard + 8), 0.0);
  // V rows start on 64-byte boundaries (vlen is a multiple of 8): whole-block loads of a row do
  // not straddle cache lines.
  double* vbase = sc.v.data() + kVGuard;
  vbase += (8 - (reinterpret_cast<std::uintptr_t>(vbase) / sizeof(double)) % 8) % 8;
  sc.row_failed = std::make_unique<bool[]>(static_cast<std::size_t>(group));

  i64 p = unit_begin / pl.bands, band = unit_begin % pl.bands;  // no division per unit
  Prefetch next;
  for (i64 u = unit_begin; u < unit_end; ++u) {
    const float* plane = x + p * g.in_plane_size();
    float* out_plane = y + p * g.out_plane_size();
    const i64 q0 = band * pl.units_per_band * pl.rows_per_unit;
    const i64 q1 = std::min(out_rows, q0 + pl.units_per_band * pl.rows_per_unit);

    // 1. Stats of the band's input span (a contiguous superset of the rows it reads).
    float lo = std::numeric_limits<float>::infinity(), hi = -lo;
    const auto b = static_cast<std::size_t>(band);
    if (pl.band_span_len[b] > 0)
      ops.stats(plane + pl.band_span_begin[b], pl.band_span_len[b], lo, hi);
    const double t = threshold(pl, lo, hi);

    // The stats pass of the next band waits for memory unless its span is on its way: the
    // hardware prefetcher ramps up anew on every 4 KB page, and small bands (a 28x28 plane is
    // 3 KB) are done before it does. So the first page of the next span is asked for now, and
    // the rest of a long span (S5, S9: 144 KB) is prefetched into L2 row by row while this
    // band is computed (S9 -8%, S5 -4%; on short spans, S1, this only cost time).
    next = Prefetch{};
    if (u + 1 < unit_end) {
      const auto nb = static_cast<std::size_t>(band + 1 == pl.bands ? 0 : band + 1);
      const float* p_next = (nb == 0 ? plane + g.in_plane_size() : plane) + pl.band_span_begin[nb];
      const i64 len = pl.band_span_len[nb], n = std::min(len, kPrefetchFloats);
      for (i64 o = 0; o < n; o += 16) __builtin_prefetch(p_next + o, 0, 3);
      if (len > kStreamMinFloats)
        next = {p_next + n, len - n, ((len - n + q1 - q0 - 1) / (q1 - q0) + 15) / 16 * 16};
    }

    for (i64 g0 = q0; g0 < q1; g0 += group) {
      const i64 g1 = std::min(q1, g0 + group);
      // 2-3. Vertical and horizontal sums, scaling, check, store.
      if (!ops.band(BandArgs{&pl, plane, out_plane, g0, g1, t, vbase, sc.row_failed.get(), &next},
                    ops))
        continue;
      // Failed outputs (rare) are recomputed from the V rows still in the buffer.
      for (i64 q = g0; q < g1; ++q) {
        if (!sc.row_failed[q - g0]) continue;
        double* vrow = vbase + (q - g0) * vlen;
        if (!ops.keeps_v) vsum_row(pl, ops.vsum, plane, q, vrow + pl.pad_left);
        float* out = out_plane + q * OW;
        for (i64 ow = 0; ow < OW; ++ow) {
          const auto w = static_cast<std::size_t>(ow);
          const double s =
              pl.flat      ? hsum_flat(vrow, vlen, ow, pl.pad_left, pl.k_w)
              : pl.fixed_w ? hsum_fixed(vrow, ow, pl.stride_w, pl.k_w)
                           : hsum_generic(vrow, pl.ax[2].first[w], pl.ax[2].taps[w], pl.ax[2].step);
          if (!(std::fabs(s) >= t)) out[ow] = fallback_output(pl, plane, q / OH, q % OH, ow);
        }
      }
    }
    if (++band == pl.bands) band = 0, ++p;
  }
}

bool make_plan(const PoolGeometry& g, Plan& pl) {
  pl.g = &g;
  for (std::size_t a = 0; a < 3; ++a) pl.ax[a] = make_axis(g, a);
  const i64 n_max = pl.ax[0].max_taps * pl.ax[1].max_taps * pl.ax[2].max_taps;
  if (n_max > kMaxTaps) return false;
  pl.uniform = !g.adaptive && g.pads_in_avg;
  pl.kvol = static_cast<double>(g.kernel[0]) * static_cast<double>(g.kernel[1]) *
            static_cast<double>(g.kernel[2]);

  // One window per plane that covers the whole input plane.
  pl.whole_plane = g.out_plane_size() == 1 && g.in_plane_size() > 0 &&
                   pl.ax[0].taps[0] == g.in[0] && pl.ax[1].taps[0] == g.in[1] &&
                   pl.ax[2].taps[0] == g.in[2] && pl.ax[0].step == 1 && pl.ax[1].step == 1 &&
                   pl.ax[2].step == 1;

  // Adaptive bins of equal size (in % out == 0) are windows with kernel = stride = in / out.
  const bool even_bins = g.adaptive && g.out[2] > 0 && g.in[2] % g.out[2] == 0;
  pl.fixed_w = even_bins || (!g.adaptive && g.dilation[2] == 1 &&
                             (g.stride[2] == 1 || g.stride[2] == 2) && g.kernel[2] <= 4096);
  pl.stride_w = pl.fixed_w ? (even_bins ? g.in[2] / g.out[2] : g.stride[2]) : 1;
  pl.k_w = pl.fixed_w ? (even_bins ? pl.stride_w : g.kernel[2]) : 1;
  pl.pad_left = pl.fixed_w ? g.pad_begin[2] : 0;
  const i64 ow_round = (g.out[2] + 7) / 8 * 8;  // whole blocks of eight outputs stay in V
  pl.vlen = (pl.pad_left + std::max(g.in[2], pl.stride_w * ow_round + pl.k_w) + 16 + 7) / 8 * 8;
  pl.inv_w.assign(static_cast<std::size_t>(ow_round), 0.0);
  for (i64 ow = 0; ow < g.out[2]; ++ow) {
    const i64 tw = pl.ax[2].taps[static_cast<std::size_t>(ow)];
    pl.inv_w[static_cast<std::size_t>(ow)] =
        pl.uniform ? 1.0 / pl.kvol : (tw == 0 ? 0.0 : 1.0 / static_cast<double>(tw));
  }

  // d: rounded additions on any path; bounded generously for every summation order above.
  const i64 depth = n_max + (pl.fixed_w ? pl.k_w : 0) + 16;
  if (depth > (i64{1} << 23)) return false;
  pl.t_factor = static_cast<double>(n_max) * static_cast<double>(depth) * 0x1p-24;

  pl.max_rows = std::max<i64>(1, pl.ax[0].max_taps * pl.ax[1].max_taps);
  // Bands: whole output depth slices for 3-D pooling (so a band's input is contiguous), else
  // output rows; sized so a band reads about kBandInputFloats, fixed by the geometry alone.
  const bool by_depth = g.out[0] > 1;
  pl.rows_per_unit = by_depth ? g.out[1] : 1;
  const i64 in_rows_per_unit =
      by_depth ? std::max<i64>(1, g.stride[0]) * g.in[1]
               : std::max<i64>(1, g.adaptive ? g.in[1] / std::max<i64>(1, g.out[1]) : g.stride[1]);
  const i64 units = by_depth ? g.out[0] : g.out[1];
  pl.units_per_band =
      std::clamp<i64>(kBandInputFloats / std::max<i64>(1, in_rows_per_unit * g.in[2]), 1, units);
  pl.bands = (units + pl.units_per_band - 1) / pl.units_per_band;

  // Row tables and band spans (see Plan).
  const i64 IH = g.in[1], IW = g.in[2], OH = g.out[1];
  const i64 out_rows = g.out[0] * OH;
  pl.row_begin.assign(1, 0);
  pl.row_off.clear();
  pl.row_rinv.clear();
  for (i64 od = 0; od < g.out[0]; ++od)
    for (i64 oh = 0; oh < OH; ++oh) {
      const auto d = static_cast<std::size_t>(od), h = static_cast<std::size_t>(oh);
      i64 r = 0;
      for (i64 a = 0; a < pl.ax[0].taps[d]; ++a) {
        const i64 id = pl.ax[0].first[d] + a * pl.ax[0].step;
        for (i64 b = 0; b < pl.ax[1].taps[h]; ++b, ++r)
          pl.row_off.push_back((id * IH + pl.ax[1].first[h] + b * pl.ax[1].step) * IW);
      }
      pl.row_begin.push_back(static_cast<i64>(pl.row_off.size()));
      pl.row_rinv.push_back(pl.uniform ? 1.0 : (r == 0 ? 0.0 : 1.0 / static_cast<double>(r)));
    }
  pl.band_span_begin.assign(static_cast<std::size_t>(pl.bands), 0);
  pl.band_span_len.assign(static_cast<std::size_t>(pl.bands), 0);
  for (i64 band = 0; band < pl.bands; ++band) {
    const i64 q0 = band * pl.units_per_band * pl.rows_per_unit;
    const i64 q1 = std::min(out_rows, q0 + pl.units_per_band * pl.rows_per_unit);
    i64 lo_off = std::numeric_limits<i64>::max(), hi_off = -1;
    for (i64 q = q0; q < q1; ++q) {
      const auto b0 = static_cast<std::size_t>(pl.row_begin[static_cast<std::size_t>(q)]);
      const auto b1 = static_cast<std::size_t>(pl.row_begin[static_cast<std::size_t>(q) + 1]);
      for (std::size_t j = b0; j < b1; ++j) {
        lo_off = std::min(lo_off, pl.row_off[j]);
        hi_off = std::max(hi_off, pl.row_off[j]);
      }
    }
    if (hi_off >= 0) {
      pl.band_span_begin[static_cast<std::size_t>(band)] = lo_off;
      pl.band_span_len[static_cast<std::size_t>(band)] = hi_off - lo_off + IW;
    }
  }
  return true;
}

// Flat groups (band_flat_avx512) for narrow stride-1 rows with OW == IW: the run and mask
// tables of Plan.
bool flat_eligible(const Plan& pl) {
  const PoolGeometry& g = *pl.g;
  return pl.fixed_w && pl.stride_w == 1 && g.out[2] == g.in[2] && g.in[2] <= kFlatMaxWidth &&
         pl.k_w <= kFlatMaxKernel && pl.pad_left < pl.k_w && g.out_plane_size() <= kFlatMaxPlane;
}

void make_flat(Plan& pl) {
  const PoolGeometry& g = *pl.g;
  const i64 IW = g.in[2], rows = g.out[0] * g.out[1];
  pl.flat = true;
  const auto at = [](i64 i) { return static_cast<std::size_t>(i); };
  pl.run_end.assign(at(rows), 0);
  for (i64 q = rows - 1; q >= 0; --q) {
    const i64 b = pl.row_begin[at(q)], r = pl.row_begin[at(q + 1)] - b;
    bool joins = q + 1 < rows && pl.row_begin[at(q + 2)] - pl.row_begin[at(q + 1)] == r;
    for (i64 j = 0; joins && j < r; ++j)
      joins = pl.row_off[at(b + r + j)] == pl.row_off[at(b + j)] + IW;
    pl.run_end[at(q)] = joins ? pl.run_end[at(q + 1)] : q + 1;
  }
  pl.flat_r.resize(at(rows * IW));
  for (i64 q = 0; q < rows; ++q)
    for (i64 ow = 0; ow < IW; ++ow)
      pl.flat_r[at(q * IW + ow)] = pl.row_rinv[at(q)] * pl.inv_w[at(ow)];
  pl.mask_period = std::lcm(i64{8}, IW) / 8;
  pl.flat_lanes.assign(at(pl.mask_period * pl.k_w * 8), 0);
  for (i64 b = 0; b < pl.mask_period; ++b)
    for (i64 j = 0; j < pl.k_w; ++j)
      for (i64 l = 0; l < 8; ++l) {
        const i64 c = (8 * b + l) % IW + j - pl.pad_left;
        if (c >= 0 && c < IW) pl.flat_lanes[at((b * pl.k_w + j) * 8 + l)] = ~std::uint64_t{0};
      }
}

}  // namespace

bool avg_pool_fast_covers(ElementType type, const PoolGeometry& g) {
  if (type != ElementType::f32) return false;
  Plan pl;
  return make_plan(g, pl);
}

bool avg_pool_fast(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par,
                   Isa isa) {
  if (in.type != ElementType::f32 || out.type != ElementType::f32) return false;
  Plan pl;
  if (!make_plan(g, pl)) return false;
  if (g.planes() * g.out_plane_size() == 0) return true;

  Ops ops{stats_portable, vsum_portable, plane_sums_stats_portable, nullptr};
  const bool avx512 = isa == Isa::best && cpu_has_avx512();
  const bool avx2 = !avx512 && (isa == Isa::best || isa == Isa::avx2) && cpu_has_avx2();
  if (avx512) ops = {stats_avx512, vsum_avx512, plane_sums_avx512, nullptr};
  if (avx2) ops = {stats_avx2, vsum_avx2, plane_sums_avx2, nullptr};
  auto hrow_s1_portable = [](const double* vp, i64 k, i64 n, const double* iw, double r, double t,
                             float* o) { return hrow_fixed_portable(vp, 1, k, n, iw, r, t, o); };
  ops.finish_row = avx512 ? hrow_s1_avx512<1> : avx2 ? hrow_s1_avx2<1> : +hrow_s1_portable;
  if (pl.fixed_w) {
    if (avx512) {
      ops.hrow = pick_hrow(kHrowAvx512, pl.stride_w, pl.k_w);
    } else if (avx2) {
      ops.hrow = pick_hrow(kHrowAvx2, pl.stride_w, pl.k_w);
    } else if (pl.stride_w == 1) {
      ops.hrow = hrow_s1_portable;
    } else if (pl.stride_w > 2) {
      ops.hrow = hrow_bins_portable;
    } else {
      ops.hrow = [](const double* vp, i64 k, i64 n, const double* iw, double r, double t,
                    float* o) { return hrow_fixed_portable(vp, 2, k, n, iw, r, t, o); };
    }
  }

  ops.band = band_generic;
  if (avx512 && pl.fixed_w) ops.band = pick_band<BandAvx512, kHrowAvx512>(ops.hrow);
  if (avx512 && pl.fixed_w && pl.stride_w == 2 && pl.k_w == 3 && pl.pad_left == 1)
    ops.band = band_k3s2_avx512, ops.keeps_v = false;
  if (avx2 && pl.fixed_w) ops.band = pick_band<BandAvx2, kHrowAvx2>(ops.hrow);
  if ((avx512 || avx2) && flat_eligible(pl)) {
    make_flat(pl);
    ops.band = avx512 ? pick_band_flat_avx512(pl.k_w, pl.pad_left)
                      : pick_band_flat_avx2(pl.k_w, pl.pad_left);
  }

  const float* x = in.data<float>();
  float* y = out.mutable_data<float>();
  if (pl.whole_plane) {
    const i64 units = (g.planes() + kWholePlaneBlock - 1) / kWholePlaneBlock;
    par.for_range(units, [&](i64 b, i64 e) { run_whole_plane(pl, ops, x, y, b, e); });
  } else {
    par.for_range(g.planes() * pl.bands, [&](i64 b, i64 e) { run_windows(pl, ops, x, y, b, e); });
  }
  return true;
}

}  // namespace irrun::kernels
