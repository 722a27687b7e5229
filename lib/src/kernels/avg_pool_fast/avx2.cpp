// The AVX2+FMA path of the fast f32 AvgPool: the portable path's operations in the same order,
// four doubles at a time (compiled for AVX2+FMA via target attributes; only called when the CPU
// has it, so the binary runs on any x86-64).
#include "ops.hpp"  // first: intrinsics and their warning pragmas

#include "../../fp_control.hpp"
#include "../lanes8.hpp"
#include "bins4.hpp"
#include "own_bound.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>

namespace irrun::kernels::avg_fast {
namespace {

IRRUN_AVX2 float amax_avx2(const float* x, i64 n) {
  const __m256 sign = _mm256_set1_ps(-0.0f);
  // Four chains: with two, S2's planes waited on the latency of vmaxps (amax a fifth of S2).
  const __m256 zero = _mm256_setzero_ps();
  __m256 m[4] = {zero, zero, zero, zero};
  i64 i = 0;
  for (; i + 32 <= n; i += 32)  // max returns its second operand for a NaN first: ignored
    for (int j = 0; j < 4; ++j)
      m[j] = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + i + 8 * j)), m[j]);
  for (; i + 8 <= n; i += 8)
    m[0] = _mm256_max_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(x + i)), m[0]);
  alignas(32) float mm[8];
  _mm256_store_ps(mm, _mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3])));
  return std::max(*std::max_element(mm, mm + 8), amax_portable(x + i, n - i));
}

IRRUN_AVX2 bool all_above_avx2(const float* y, i64 n, float thr) {
  const __m256 t = _mm256_set1_ps(thr), sign = _mm256_set1_ps(-0.0f);
  __m256 below = _mm256_setzero_ps();  // |y| not above thr, or NaN
  i64 i = 0;
  for (; i + 8 <= n; i += 8)
    below = _mm256_or_ps(
        below, _mm256_cmp_ps(_mm256_andnot_ps(sign, _mm256_loadu_ps(y + i)), t, _CMP_NGT_UQ));
  return _mm256_movemask_ps(below) == 0 && all_above_portable(y + i, n - i, thr);
}

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

// y = s * r + 0 (finish, ops.hpp) as one FMA: the bits of s * r, but a sum of -0 only gives +0,
// as the reference's sums from +0 do.
IRRUN_AVX2 inline __m128 scale4(__m256d s, __m256d r) {
  return _mm256_cvtpd_ps(_mm256_fmadd_pd(s, r, _mm256_setzero_pd()));
}

// Scale, check and store four outputs; returns the updated fail mask.
IRRUN_AVX2 inline __m256d finish4(__m256d s, __m256d rinv, const double* inv_w, __m256d t,
                                  __m256d fail, float* out) {
  _mm_storeu_ps(out, scale4(s, _mm256_mul_pd(rinv, _mm256_loadu_pd(inv_w))));
  const __m256d abs = _mm256_andnot_pd(_mm256_set1_pd(-0.0), s);
  return _mm256_or_pd(fail, _mm256_cmp_pd(abs, t, _CMP_NGE_UQ));
}

// The frame of the fixed-tap row passes: blocks of four outputs whose sums sum(p) come from the
// V values at p = vp + S * ow, then the last 1-3 outputs one by one in the same order.
template <int S, class Sum>
IRRUN_AVX2 IRRUN_INLINE bool hrow_avx2(const double* vp, i64 taps, i64 ow_count,
                                       const double* inv_w, double rinv_s, double t_s, float* out,
                                       Sum sum) {
  const __m256d rinv = _mm256_set1_pd(rinv_s), t = _mm256_set1_pd(t_s);
  __m256d fail = _mm256_setzero_pd();
  i64 ow = 0;
  for (; ow + 4 <= ow_count; ow += 4)
    fail = finish4(sum(vp + S * ow), rinv, inv_w + ow, t, fail, out + ow);
  bool failed = _mm256_movemask_pd(fail) != 0;
  for (; ow < ow_count; ++ow)
    failed |= finish(hsum_fixed(vp, ow, S, taps), rinv_s, inv_w[ow], t_s, out + ow);
  return failed;
}

// The stride-1 sums of four outputs from the V values at p (hsum_fixed's order).
IRRUN_AVX2 IRRUN_INLINE __m256d taps_s1(const double* p, i64 taps) {
  __m256d s = _mm256_loadu_pd(p);
  for (i64 j = 1; j < taps; ++j) s = _mm256_add_pd(s, _mm256_loadu_pd(p + j));
  return s;
}

// Stride 1, K taps (K > 0 compile-time, or runtime k when K == 0).
template <int K>
IRRUN_AVX2 IRRUN_INLINE bool hrow_s1_avx2(const double* vp, i64 k, i64 ow_count,
                                          const double* inv_w, double rinv, double t, float* out) {
  const i64 taps = K > 0 ? K : k;
  return hrow_avx2<1>(vp, taps, ow_count, inv_w, rinv, t, out,
                      [&](const double* p) IRRUN_AVX2 { return taps_s1(p, taps); });
}

// The stride-2 sums of four outputs from the V values at p (hsum_fixed's order): taps 2m and
// 2m+1 come from the unpacked pair of loads at 2m.
IRRUN_AVX2 IRRUN_INLINE __m256d taps_s2(const double* p, i64 taps) {
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
  return _mm256_permute4x64_pd(s, 0xD8);
}

// Stride 2, K taps (K > 0 compile-time, or runtime k when K == 0).
template <int K>
IRRUN_AVX2 IRRUN_INLINE bool hrow_s2_avx2(const double* vp, i64 k, i64 ow_count,
                                          const double* inv_w, double rinv, double t, float* out) {
  const i64 taps = K > 0 ? K : k;
  return hrow_avx2<2>(vp, taps, ow_count, inv_w, rinv, t, out,
                      [&](const double* p) IRRUN_AVX2 { return taps_s2(p, taps); });
}

// Lane masks of the first 0-4 lanes (maskload reads nothing where the mask is 0).
alignas(16) constexpr std::int32_t kFirstLanes4[8] = {-1, -1, -1, -1, 0, 0, 0, 0};

IRRUN_AVX2 inline __m128i first_lanes4(i64 count) {
  return _mm_loadu_si128(reinterpret_cast<const __m128i*>(kFirstLanes4 + 4 - count));
}

// The same lanes as a mask of four doubles.
IRRUN_AVX2 inline __m256d first_lanes4d(i64 count) {
  return _mm256_castsi256_pd(_mm256_cvtepi32_epi64(first_lanes4(count)));
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

// The sums s of four outputs scaled by fl(rinv * inv_w) (scale4), the first n (1-4) stored.
IRRUN_AVX2 IRRUN_INLINE void store_scaled4(__m256d s, __m256d rinv, const double* inv_w, float* out,
                                           i64 n) {
  const __m128 y = scale4(s, _mm256_mul_pd(rinv, _mm256_loadu_pd(inv_w)));
  n == 4 ? _mm_storeu_ps(out, y) : store_first(out, y, n);
}

// The scale pass of n >= 4 sums s whose factors r(o) (outputs o .. o + 3) are finite and
// positive, eight at a time: two blocks of four converted, put in order where the sums are (Swap:
// 0, 2, 1, 3 of each four, sums_2x2), stored as they are and tested for NaN together, as floats,
// by one compare (a sum is NaN exactly where its output is). Joined into one vector first (one
// store and one test: S2 had taken 0.90 of the time with the AVX2 cap against blocks of four
// each tested), the join took port 5 beside the two conversions (S3 with the cap 0.986-0.989, S1
// 0.993, S2 0.997). The last eight (or four) again where n is not a multiple of eight: those
// written twice get the same bits.
// Sixteen a step through pointers: with an index, each load folded into an FMA took the front end
// two slots, and the pass was bound by them (S3 with the AVX2 cap 0.97 of the time, S6 0.98).
// Ahead: the output lines asked for ahead of the stores (prefetch_write), for the flat passes of
// whole planes and flat groups (scale_flat; with the AVX2 cap on this Intel Xeon S6 took 0.95-0.97
// of the time, S3 0.98-1.00; S1's rows, not asked, 1.01-1.02).
template <bool Swap, bool Ahead = false, class Factor>
IRRUN_AVX2 IRRUN_INLINE bool scale_run(const double* s, float* y, i64 n, Factor r) {
  __m128 nan = _mm_setzero_ps();
  const auto four = [&](const double* p, i64 o) IRRUN_AVX2 {  // r(o): none for one factor
    const __m128 f = scale4(_mm256_loadu_pd(p), r(o));
    return Swap ? _mm_shuffle_ps(f, f, 0xD8) : f;
  };
  const auto eight = [&](const double* p, float* q) IRRUN_AVX2 {
    const __m128 lo = four(p, q - y), hi = four(p + 4, q - y + 4);
    _mm_storeu_ps(q, lo);
    _mm_storeu_ps(q + 4, hi);
    nan = _mm_or_ps(nan, _mm_cmpunord_ps(lo, hi));
  };
  if (n >= 8) {
    const double* p = s;
    float* q = y;
    for (const float* const end = y + n; end - q >= 16; p += 16, q += 16) {
      if (Ahead) prefetch_write(q, kOutAhead);
      eight(p, q), eight(p + 8, q + 8);
    }
    if (n % 16 >= 8) eight(p, q);
    if (n % 8 != 0) eight(s + n - 8, y + n - 8);
  } else {
    const auto one = [&](i64 o) IRRUN_AVX2 {
      const __m128 f = four(s + o, o);
      _mm_storeu_ps(y + o, f);
      nan = _mm_or_ps(nan, _mm_cmpunord_ps(f, f));
    };
    i64 o = 0;
    for (; o + 4 <= n; o += 4) one(o);
    if (o < n) one(n - 4);
  }
  return _mm_movemask_ps(nan) == 0;
}

// finish4 for rows checked at their group's end (own_check): scales and stores the first n
// (1-4) outputs of s and lowers least to their |s| (the lanes past n leave it as it is).
IRRUN_AVX2 IRRUN_INLINE void finish4_least(__m256d s, __m256d rinv, const double* inv_w, float* out,
                                           i64 n, __m256d& least) {
  store_scaled4(s, rinv, inv_w, out, n);
  __m256d abs = _mm256_andnot_pd(_mm256_set1_pd(-0.0), s);
  if (n != 4)
    abs = _mm256_blendv_pd(_mm256_set1_pd(std::numeric_limits<double>::infinity()), abs,
                           first_lanes4d(n));
  least = _mm256_min_pd(abs, least);
}

// finish4 for the first n (1-3) outputs of a block: stores and check limited to n lanes.
IRRUN_AVX2 inline __m256d finish_first(__m256d s, __m256d rinv, const double* inv_w, __m256d t,
                                       __m256d fail, float* out, i64 n) {
  store_scaled4(s, rinv, inv_w, out, n);
  const __m256d valid = first_lanes4d(n);
  const __m256d abs = _mm256_andnot_pd(_mm256_set1_pd(-0.0), s);
  return _mm256_or_pd(fail, _mm256_and_pd(valid, _mm256_cmp_pd(abs, t, _CMP_NGE_UQ)));
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
    fail = ow + 4 <= ow_count ? finish4(s, rinv, inv_w + ow, t, fail, out + ow)
                              : finish_first(s, rinv, inv_w + ow, t, fail, out + ow, ow_count - ow);
  }
  return _mm256_movemask_pd(fail) != 0;
}

// Lanes 0-3 and 4-7 of plane p's accumulators are lo[p] and hi[p]; returns the four plane
// sums in plane_sum_portable's order (hadd adds neighbouring lanes: a0 + a1, a2 + a3). With
// `ends`, lane 0 of plane p first adds lane p of *ends, as combine8_avx512.
IRRUN_AVX2 inline __m256d combine4_avx2(const __m256d* lo, const __m256d* hi,
                                        const __m256d* ends = nullptr) {
  const auto pairs = [&](int j) IRRUN_AVX2 {
    if (!ends) return _mm256_hadd_pd(lo[j], lo[j + 1]);
    // [e_j, e_j+1, +0, +0] onto [lane 0 of P_j, of P_j+1, lane 2 of P_j, of P_j+1]
    const __m256d e = j == 0 ? _mm256_blend_pd(_mm256_setzero_pd(), *ends, 3)
                             : _mm256_permute2f128_pd(*ends, *ends, 0x81);
    return _mm256_add_pd(_mm256_add_pd(_mm256_unpacklo_pd(lo[j], lo[j + 1]), e),
                         _mm256_unpackhi_pd(lo[j], lo[j + 1]));
  };
  const __m256d l01 = pairs(0), l23 = pairs(2);
  const __m256d h01 = _mm256_hadd_pd(hi[0], hi[1]), h23 = _mm256_hadd_pd(hi[2], hi[3]);
  // [P0(01), P1(01), P0(23), P1(23)] and [P2(01), ...] -> [Pj(01)] + [Pj(23)]
  const __m256d l =
      _mm256_add_pd(_mm256_permute2f128_pd(l01, l23, 0x20), _mm256_permute2f128_pd(l01, l23, 0x31));
  const __m256d h =
      _mm256_add_pd(_mm256_permute2f128_pd(h01, h23, 0x20), _mm256_permute2f128_pd(h01, h23, 0x31));
  return _mm256_add_pd(l, h);
}

// m raised to the |x| of v's floats (max returns its second operand, m, when v is NaN).
IRRUN_AVX2 inline void track(__m256 v, __m256& m) {
  m = _mm256_max_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), v), m);
}

// ---- Planes of 49 floats in their order (planes49.hpp): a shared chunk merges into a plane as an
// addition and a blend. Flat groups' runs of 3-row windows (vrun3.hpp).
#define IRRUN_PATH IRRUN_AVX2
IRRUN_AVX2 IRRUN_INLINE __m256d add256(__m256d a, __m256d b) {
  return add_fma(a, b);
}
template <int M>
IRRUN_AVX2 IRRUN_INLINE __m256d p49_merge(__m256d into, __m256d shared) {
  return _mm256_blend_pd(into, add_fma(into, shared), M);
}
IRRUN_AVX2 IRRUN_INLINE void p49_track(__m256 v, __m256& m) {
  track(v, m);
}
// Four columns a step.
struct Vrun3 {
  using V = __m256d;
  static constexpr i64 kLanes = 4;
  IRRUN_AVX2 static V widen(const float* p) { return _mm256_cvtps_pd(_mm_loadu_ps(p)); }
  IRRUN_AVX2 static V add(V a, V b) { return add_fma(a, b); }
  IRRUN_AVX2 static void store(double* p, V v) { _mm256_storeu_pd(p, v); }
};
#include "planes49.hpp"
#include "vrun3.hpp"

struct StreamV {
  __m256d lo, hi;  // positions 0-3, 4-7
};

template <bool Whole, int R>
IRRUN_AVX2 IRRUN_INLINE StreamV stream_v(const float* p, const i64* taps, i64 rows, i64 left) {
  const auto load = [&](i64 at) IRRUN_AVX2 {
    if constexpr (Whole) return _mm256_cvtps_pd(_mm_loadu_ps(p + at));
    return _mm256_cvtps_pd(_mm_maskload_ps(p + at, first_lanes4(std::clamp<i64>(left - at, 0, 4))));
  };
  StreamV v{load(taps[0]), load(taps[0] + 4)};
  for (i64 j = 1; j < (R > 0 ? R : rows); ++j)
    v.lo = add_fma(v.lo, load(taps[j])), v.hi = add_fma(v.hi, load(taps[j] + 4));
  return v;
}

// Lanes M .. M + 3 of the eight of a and b.
template <int M>
IRRUN_AVX2 IRRUN_INLINE __m256d lanes_from(__m256d a, __m256d b) {
  if constexpr (M == 0) return a;
  if constexpr (M == 4) return b;
  const __m256d mid = _mm256_permute2f128_pd(a, b, 0x21);  // lanes 2-5
  if constexpr (M == 1) return _mm256_shuffle_pd(a, mid, 0x5);
  if constexpr (M == 2) return mid;
  if constexpr (M == 3) return _mm256_shuffle_pd(mid, b, 0x5);
}

template <int K>
IRRUN_AVX2 IRRUN_INLINE __m256 stream_y(StreamV cur, StreamV next, double r_s) {
  const __m256d q[4] = {cur.lo, cur.hi, next.lo, next.hi}, r = _mm256_set1_pd(r_s);
  // Tap J of the four positions from 4 H.
  const auto tap = [&]<int J, int H>() IRRUN_AVX2 {
    constexpr int at = J + 4 * H;
    if constexpr (at % 4 == 0) return q[at / 4];
    if constexpr (at % 4 != 0) return lanes_from<at % 4>(q[at / 4], q[at / 4 + 1]);
  };
  __m256d lo = q[0], hi = q[1];
  [&]<int... J>(std::integer_sequence<int, J...>) IRRUN_AVX2 {
    ((lo = _mm256_add_pd(lo, tap.template operator()<J + 1, 0>()),
      hi = _mm256_add_pd(hi, tap.template operator()<J + 1, 1>())),
     ...);
  }
  (std::make_integer_sequence<int, K - 1>{});
  return _mm256_set_m128(scale4(hi, r), scale4(lo, r));
}
#include "stream.hpp"
#undef IRRUN_PATH

// One pass over memory: the bound comes from the same blocks the sums load (a 256-bit load for
// the bound; the sums convert the two 128-bit halves straight from memory, which then hits L1
// and needs no shuffle).
template <bool Bound>
IRRUN_AVX2 void plane_sums_t(const float* x, i64 n, i64 count, double* s, float& bound) {
  if (n == kPlane49) return planes49<Bound>(x, count, s, bound);
  const i64 full = n / 8 * 8, rest = n - full;
  // The zero-filled last block: maskload reads nothing where the mask is 0.
  alignas(32) std::int32_t m[8];
  for (int l = 0; l < 8; ++l) m[l] = l < rest ? -1 : 0;
  const __m256i mask = _mm256_load_si256(reinterpret_cast<const __m256i*>(m));
  // Two independent chains, planes alternating.
  __m256 mm[2];
  for (auto& k : mm) k = _mm256_set1_ps(bound);
  // Adds the block of eight floats at q to a plane's accumulators al (lanes 0-3), ah (4-7).
  auto block = [](const float* q, __m256d& al, __m256d& ah, __m256& k) IRRUN_AVX2 {
    if constexpr (Bound) track(_mm256_loadu_ps(q), k);
    al = add_fma(al, _mm256_cvtps_pd(_mm_loadu_ps(q)));
    ah = add_fma(ah, _mm256_cvtps_pd(_mm_loadu_ps(q + 4)));
  };
  auto last = [&](const float* q, __m256d& al, __m256d& ah, __m256& k) IRRUN_AVX2 {
    const __m256 v = _mm256_maskload_ps(q, mask);
    if constexpr (Bound) track(v, k);
    al = add_fma(al, _mm256_cvtps_pd(_mm256_castps256_ps128(v)));
    ah = add_fma(ah, _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1)));
  };
  i64 p = 0;
  for (; p + 4 <= count; p += 4) {
    const float* xp = x + p * n;
    __m256d al[4], ah[4], ends = _mm256_setzero_pd();
    for (int j = 0; j < 4; ++j) al[j] = ah[j] = _mm256_setzero_pd();
    for (i64 i = 0; i < full; i += 8)
      for (int j = 0; j < 4; ++j) block(xp + j * n + i, al[j], ah[j], mm[j & 1]);
    if (rest == 1) {  // 8k + 1 floats (3x3, 5x5): the last floats in one vector, as AVX-512
      const float* q = xp + full;
      const __m128 e = _mm_setr_ps(q[0], q[n], q[2 * n], q[3 * n]);
      if constexpr (Bound) track(_mm256_set_m128(_mm_setzero_ps(), e), mm[0]);
      ends = _mm256_cvtps_pd(e);
    } else if (rest > 0) {
      for (int j = 0; j < 4; ++j) last(xp + j * n + full, al[j], ah[j], mm[j & 1]);
    }
    _mm256_storeu_pd(s + p, combine4_avx2(al, ah, rest == 1 ? &ends : nullptr));
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
  alignas(32) float l[8];
  _mm256_store_ps(l, _mm256_max_ps(mm[0], mm[1]));
  bound = fold_bound(l, bound);
}

IRRUN_AVX2 void plane_sums_avx2(const float* x, i64 n, i64 count, double* s, float& bound) {
  plane_sums_t<true>(x, n, count, s, bound);
}

// Without the bound (Ops::exact_plane_sums): only the additions here can raise the precision
// flag; the scaling after them (finish_row) raises it too, so run_whole_plane clears it again
// for every unit.
IRRUN_AVX2 void exact_plane_sums_avx2(const float* x, i64 n, i64 count, double* s) {
  float unused = 0;
  plane_sums_t<false>(x, n, count, s, unused);
}

constexpr HrowSet kHrowAvx2{hrow_s1_avx2<2>, hrow_s1_avx2<3>, hrow_s1_avx2<5>,
                            hrow_s1_avx2<7>, hrow_s1_avx2<0>, hrow_s2_avx2<2>,
                            hrow_s2_avx2<3>, hrow_s2_avx2<0>, hrow_bins4_avx2};

// Ops::vsum (as vsum_portable), also the vertical pass of the group functions; the last
// 1-3 columns are masked loads and a whole store of +0 past n (Plan::vlen leaves room).
// B chains of four columns are summed down the rows together: many rows (R = 0) keep four in
// flight, few two. Ops::vsum (adaptive bins: S8) keeps eight, each row's two lines read in turn,
// then four (S8: 0.963-0.967 of the time with four, round 41; twelve spilled, 1.06).
template <int R, int B = (R > 0 ? 2 : 4)>
IRRUN_AVX2 IRRUN_INLINE void vrow_avx2(const float* plane, const i64* off, i64 r_rt, i64 n,
                                       double* v) {
  const i64 r = R > 0 ? R : r_rt;
  const float* p0 = plane + off[0];
  i64 i = 0;
  const auto strips = [&]<int C>() IRRUN_AVX2 {
    for (; i + 4 * C <= n; i += 4 * C) {
      __m256d acc[C];
      for (int b = 0; b < C; ++b) acc[b] = _mm256_cvtps_pd(_mm_loadu_ps(p0 + i + 4 * b));
      for (i64 j = 1; j < r; ++j) {
        const float* pj = plane + off[j] + i;
        for (int b = 0; b < C; ++b)
          acc[b] = add_fma(acc[b], _mm256_cvtps_pd(_mm_loadu_ps(pj + 4 * b)));
      }
      for (int b = 0; b < C; ++b) _mm256_storeu_pd(v + i + 4 * b, acc[b]);
    }
  };
  strips.template operator()<B>();
  if constexpr (B > 4) strips.template operator()<4>();
  for (; i < n; i += 4) {
    const __m128i m = first_lanes4(std::min<i64>(4, n - i));
    __m256d a = _mm256_cvtps_pd(_mm_maskload_ps(p0 + i, m));
    for (i64 j = 1; j < r; ++j)
      a = add_fma(a, _mm256_cvtps_pd(_mm_maskload_ps(plane + off[j] + i, m)));
    _mm256_storeu_pd(v + i, a);
  }
}

// The group's V rows (pl.vlen apart from a.v, their values after pl.pad_left zeros).
IRRUN_AVX2 IRRUN_INLINE void vrows_avx2(const BandArgs& a) {
  const Plan& pl = *a.pl;
  const i64 IW = pl.g->in[2];
  const i64* begin = pl.row_begin.data();
  double* v = a.v + pl.pad_left;
  for (i64 q = a.q0; q < a.q1; ++q, v += pl.vlen) {
    prefetch_step(*a.next);
    const i64 r = begin[q + 1] - begin[q];
    const i64* off = pl.row_off.data() + begin[q];
    if (r == 0) {
      std::fill(v, v + IW, 0.0);
    } else {
      with_row_count(r, [&]<int R>() IRRUN_AVX2 { vrow_avx2<R>(a.plane, off, r, IW, v); });
    }
  }
}

// band_avx512 with the AVX2 building blocks: the whole group in one function, H inlined.
template <HrowFn H>
IRRUN_AVX2 bool band_avx2(const BandArgs& a, const Ops&) {
  const Plan& pl = *a.pl;
  const i64 OW = pl.g->out[2];
  vrows_avx2(a);
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

// Ops::exact_band of the stride-2 rows that band_avx2 runs (S5): its sums (K taps, or k when
// K == 0) without scaling or check, each row's stored over its own V values from their start,
// for scale_band_v after the flag's read (where exact_s2_in_place holds).
template <int K>
IRRUN_AVX2 bool exact_band_s2v_avx2(const BandArgs& a, const Ops&) {
  const Plan& pl = *a.pl;
  const i64 OW = pl.g->out[2], taps = K > 0 ? K : pl.k_w;
  vrows_avx2(a);
  double* vp = a.v;
  for (i64 q = a.q0; q < a.q1; ++q, vp += pl.vlen) {
    double* s = vp + pl.pad_left;
    i64 ow = 0;
    for (; ow + 4 <= OW; ow += 4) _mm256_storeu_pd(s + ow, taps_s2(vp + 2 * ow, taps));
    for (; ow < OW; ++ow) s[ow] = hsum_fixed(vp, ow, 2, taps);
  }
  return false;
}

// Where exact_band_s2v_avx2 may sum in place: its sums stay inside the row's values (OW <= IW),
// and output ow >= 4 reads from padded column 2 ow on, past the sums written before it (up to
// column pad_left + ow - 1) when pad_left <= 4. Its scaling (scale_run) takes four or more.
IRRUN_AVX2 inline bool exact_s2_in_place(const Plan& pl) {
  return pl.fixed_w && pl.stride_w == 2 && pl.g->out[2] >= 4 && pl.g->out[2] <= pl.g->in[2] &&
         pl.pad_left <= 4;
}

// Fused stride-2 rows of windows up to four rows high: K = 3 taps with one pad column on the left
// (3x3 s2 p1 pools, S1) or K = 2 taps without (2x2 s2, S2). As band_s2_avx512, the vertical sums
// of eight columns stay in two registers and the taps of four outputs come from their even and odd
// columns (and, for K = 3, the previous block's last odd column); no V row is stored and reloaded.
// Lanes hold the outputs in the order 0, 2, 1, 3 until the final permute, as in hrow_s2_avx2. When
// the next output row starts with the input row summed last (3x3 s2: row 2i + 1), that row is also
// kept converted (carry_out) and the next row loads it (carry_in) instead of converting it again: a
// third of S1's conversions, the bottleneck on Zen 3 (one per cycle). The same additions in the
// same order as vrow_avx2 then hrow_s2_avx2<K>, so the same bits.
// Own: the check waits for the bound (own_bound.hpp): every float loaded raises `bits` (a carried
// row was loaded by the row before, in the same group), and the group checks the stored outputs
// (own_check_outputs). Else nothing is checked or tracked (a band checked after its group,
// BandArgs::unchecked). Sums (not Own): the sums are stored at `sums`, whole blocks of four in
// the lanes' order 0, 2, 1, 3 (the scaling puts them in order as floats, an in-lane shuffle, where
// a permute here cost a cross-lane one per block), and no output (Ops::exact_band, whose scaling
// runs after the flag's read).
template <int K, int R, bool Own, bool Sums = false>
IRRUN_AVX2 IRRUN_INLINE void row_s2_avx2(const float* const* rows, i64 r_rt, i64 IW, i64 OW,
                                         const double* inv_w, double rinv_s, const double* carry_in,
                                         double* carry_out, float* out, LoadBits& bits_io,
                                         double* sums = nullptr) {
  static_assert(!(Own && Sums));
  const i64 r = R > 0 ? R : r_rt;
  const __m256d rinv = _mm256_set1_pd(rinv_s);
  __m256d left = _mm256_setzero_pd();  // lane 0: the odd column before
  LoadBits bits = bits_io;             // a local copy stays in registers (see row_s1_avx512)
  // Outputs ow .. ow + 3 from columns c .. c + 7; Whole: all inside the row and OW, else masked
  // loads past the row (a ceil window can start past it; +0 there) and a partial store.
  const auto block = [&]<bool Whole>(i64 ow, i64 c) IRRUN_AVX2 {
    __m256d a0 = _mm256_setzero_pd(), a1 = a0;
    if (r > 0) {
      const i64 n = Whole ? 8 : std::clamp<i64>(IW - c, 0, 8);
      const __m128i m0 = first_lanes4(std::min<i64>(n, 4));
      const __m128i m1 = first_lanes4(std::max<i64>(n - 4, 0));
      const auto cvt = [&](const float* p, __m256d& x0, __m256d& x1) IRRUN_AVX2 {
        if constexpr (Own)
          track_bits(bits,
                     Whole ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, _mm256_set_m128i(m1, m0)));
        x0 = _mm256_cvtps_pd(Whole ? _mm_loadu_ps(p) : _mm_maskload_ps(p, m0));
        x1 = _mm256_cvtps_pd(Whole ? _mm_loadu_ps(p + 4) : _mm_maskload_ps(p + 4, m1));
      };
      if (carry_in) {
        a0 = _mm256_loadu_pd(carry_in + c), a1 = _mm256_loadu_pd(carry_in + c + 4);
      } else {
        cvt(rows[0] + c, a0, a1);
      }
      __m256d x0 = a0, x1 = a1;
      for (i64 j = 1; j < r; ++j) {
        cvt(rows[j] + c, x0, x1);
        a0 = add_fma(a0, x0), a1 = add_fma(a1, x1);
      }
      if (carry_out) _mm256_storeu_pd(carry_out + c, x0), _mm256_storeu_pd(carry_out + c + 4, x1);
    }
    const __m256d e = _mm256_unpacklo_pd(a0, a1);  // columns c, c + 4, c + 2, c + 6
    const __m256d o = _mm256_unpackhi_pd(a0, a1);  // columns c + 1, c + 5, c + 3, c + 7
    __m256d s;
    if constexpr (K == 3) {
      const __m256d o_rot = _mm256_permute4x64_pd(o, 0x4B);  // c + 7, c + 3, c + 1, c + 5
      const __m256d l = _mm256_blend_pd(o_rot, left, 1);     // c - 1, c + 3, c + 1, c + 5
      left = o_rot;
      s = _mm256_add_pd(_mm256_add_pd(l, e), o);
    } else {
      s = _mm256_add_pd(e, o);
    }
    if constexpr (Sums) return _mm256_storeu_pd(sums + ow, s);
    s = _mm256_permute4x64_pd(s, 0xD8);
    const i64 n = Whole ? 4 : std::min<i64>(4, OW - ow);
    store_scaled4(s, rinv, inv_w + ow, out + ow, n);
  };
  i64 ow = 0, c = 0;
  for (; ow + 4 <= OW && c + 8 <= IW; ow += 4, c += 8) block.template operator()<true>(ow, c);
  for (; ow < OW; ow += 4, c += 8) block.template operator()<false>(ow, c);
  bits_io = bits;
}

// Row q's least |s| of four lanes, for own_check: both halves of the row's eight.
IRRUN_AVX2 inline void keep_least4(const BandArgs& a, i64 q, __m256d least) {
  double* l = a.least + 8 * (q - a.q0);
  _mm256_store_pd(l, least), _mm256_store_pd(l + 4, least);
}

// Windows of fused stride-2 rows (run_s2_avx2), at most: four rows on the checked route
// (band_s2_avx2), nine on the exact one (exact_band_s2_avx2; select_avx2).
constexpr i64 kFusedS2Rows = 9;

// Where exact_band_s2_avx2 keeps row q's sums: inside its V row, past the zero pad that rescans
// rely on (they rebuild a row's values, not its pads), 64-byte aligned as V rows start (right
// at the pad's end the stores straddled lines: S1 1.03 of the time, not 0.96). Its whole
// blocks of four sums must fit there, and the row's scaling (scale_run) takes four or more
// (exact_s2_fits).
IRRUN_AVX2 inline i64 sums_offset(const Plan& pl) {
  return (pl.pad_left + 7) / 8 * 8;
}

IRRUN_AVX2 inline double* sums_row(const BandArgs& a, i64 q) {
  return a.v + (q - a.q0) * a.pl->vlen + sums_offset(*a.pl);
}

IRRUN_AVX2 inline bool exact_s2_fits(const Plan& pl) {
  return pl.g->out[2] >= 4 && pl.g->out[2] % 4 == 0 &&  // scale_run<true> swaps whole fours
         sums_offset(pl) + (pl.g->out[2] + 3) / 4 * 4 <= pl.pad_left + pl.g->in[2];
}

// The group takes its bound from its rows' loads (S1, S2: no stats pass) and checks every row at
// its end (own_check_outputs), unless it is checked after (Own false: BandArgs::unchecked).
template <int K, bool Own, bool Sums = false>
IRRUN_AVX2 bool run_s2_avx2(const BandArgs& a) {
  const Plan& pl = *a.pl;
  const PoolGeometry& g = *pl.g;
  const i64 IW = g.in[2], OW = g.out[2];
  const i64* begin = pl.row_begin.data();
  const i64* row_off = pl.row_off.data();
  // The converted row sits in the V buffer's spare row (BandArgs::spare), 64-byte aligned like
  // the V rows, which keep the zero pads that rescans rely on (they rebuild a row's values only;
  // right after a short group's rows lies a later group's row). Each block loads its columns
  // before it stores the next row's.
  double* const carry = a.spare;
  // Every row loads what its windows read, or carries it from the row before in the group: the
  // group's own loads bound its windows, without the band's before it.
  LoadBits bits{};
  bool carried = false;
  for (i64 q = a.q0; q < a.q1;) {  // runs of rows (Plan::step_end): pointers advance by row_step
    const i64 q_end = std::min(a.q1, pl.step_end[static_cast<std::size_t>(q)]);
    const i64 r = begin[q + 1] - begin[q];
    with_row_count(r, [&]<int R>() IRRUN_AVX2 {
      const i64 n = R > 0 ? R : r;  // a constant count keeps the pointers in registers
      const float* rows[R > 0 ? R : kFusedS2Rows];  // select_avx2: at most kFusedS2Rows
      for (i64 j = 0; j < n; ++j) rows[j] = a.plane + row_off[begin[q] + j];
      for (; q < q_end; ++q) {
        prefetch_step(*a.next);
        // Keep the last row when the next output row starts with it (3x3 s2; the 2x2 s2 rows
        // never share one, and their loop then has no carry branches).
        const bool keep = K == 3 && r > 0 && q + 1 < a.q1 && begin[q + 2] > begin[q + 1] &&
                          row_off[begin[q + 1]] == row_off[begin[q] + r - 1];
        row_s2_avx2<K, R, Own, Sums>(rows, r, IW, OW, pl.inv_w.data(), pl.row_rinv[q],
                                     carried ? carry : nullptr, keep ? carry : nullptr,
                                     a.out_plane + q * OW, bits, sums_row(a, q));
        carried = keep;
        for (i64 j = 0; j < n; ++j) rows[j] += pl.row_step;
      }
    });
  }
  return Own && own_check_outputs(a, bits, all_above_avx2);
}

template <int K>
IRRUN_AVX2 bool band_s2_avx2(const BandArgs& a, const Ops&) {
  return a.unchecked ? run_s2_avx2<K, false>(a) : run_s2_avx2<K, true>(a);
}

// Ops::exact_band and Ops::scale_band of the fused stride-2 rows (S1): the rows' sums without
// tracking their loads, stored in the group's V rows; then each row's scaling as row_s2_avx2's,
// y = fl32(s * fl(rinv * inv_w) + 0), false if a sum is NaN. (S1 0.97 of the time with the AVX2
// cap, where the tracking took an extra load and two integer maxima per eight floats.)
template <int K>
IRRUN_AVX2 bool exact_band_s2_avx2(const BandArgs& a, const Ops&) {
  return run_s2_avx2<K, false, true>(a);
}

// Ops::scale_band where the group's row q keeps its OW >= 4 sums at a.v + (q - q0) * vlen +
// offset: y = fl32(s * fl(rinv * inv_w) + 0), as the rows' own finish. Swap: the sums of each
// four in the order 0, 2, 1, 3, scaled by inv_w_swap (the same products) and put in order as
// floats.
template <bool Swap>
IRRUN_AVX2 IRRUN_INLINE bool scale_rows(const BandArgs& a, i64 offset) {
  const Plan& pl = *a.pl;
  const i64 OW = pl.g->out[2];
  const double* s = a.v + offset;
  const double* w = Swap ? pl.inv_w_swap.data() : pl.inv_w.data();
  for (i64 q = a.q0; q < a.q1; ++q, s += pl.vlen) {
    const __m256d rinv = _mm256_set1_pd(pl.row_rinv[static_cast<std::size_t>(q)]);
    const auto r = [&](i64 o) IRRUN_AVX2 { return _mm256_mul_pd(rinv, _mm256_loadu_pd(w + o)); };
    if (!scale_run<Swap>(s, a.out_plane + q * OW, OW, r)) return false;
  }
  return true;
}

IRRUN_AVX2 bool scale_band_avx2(const BandArgs& a) {  // exact_band_s2_avx2's
  return scale_rows<true>(a, sums_offset(*a.pl));
}

IRRUN_AVX2 bool scale_band_v(const BandArgs& a) {  // exact_band_s2v_avx2's
  return scale_rows<false>(a, a.pl->pad_left);
}

// Ops::planes for 2x2 s2 windows of two input rows each (S2), as planes_2x2_avx512: every row
// of the chunk's planes unchecked and untracked, in one loop.
IRRUN_AVX2 void planes_2x2_avx2(const Plan& pl, const float* x, float* y, i64 count) {
  const i64 IW = pl.g->in[2], OW = pl.g->out[2], rows = pl.g->out[0] * pl.g->out[1];
  const i64 in = pl.g->in_plane_size();
  LoadBits bits{};  // untouched: nothing tracked
  for (i64 p = 0; p < count; ++p, x += in) {
    const float* r[2] = {x + pl.row_off[0], x + pl.row_off[0] + IW};  // one run of rows
    for (i64 q = 0; q < rows; ++q, y += OW, r[0] += pl.row_step, r[1] += pl.row_step)
      row_s2_avx2<2, 2, false>(r, 2, IW, OW, pl.inv_w.data(), pl.row_rinv[q], nullptr, nullptr, y,
                               bits);
  }
}

// The V rows of kFusedRows output rows whose windows are K consecutive input rows, the first at
// x: each of their K + 3 input rows is converted once and added, in its turn, into the V rows
// whose windows hold it, so each V row (vlen apart at v) gets vrow_avx2's additions in its order
// from a third (K = 5) of the conversions. Rows K - 1 on are tracked as they are loaded; the
// rows before are the previous window's, tracked with it (band_s1_avx2). Two lines per block of
// the four output rows at out (OW apart) are prefetched into L2 for the row passes after: their
// stores waited for each line from memory (S9 0.90 of the time).
template <int K>
IRRUN_AVX2 IRRUN_INLINE void vrows_s1_avx2(const float* x, i64 IW, double* v, i64 vlen,
                                           LoadBits& bits_io, PrefetchRange pf, const float* out,
                                           i64 OW) {
  constexpr int P = kFusedRows, N = K + P - 1;
  LoadBits bits = bits_io;  // a local copy stays in registers (see row_s1_avx512)
  // Columns c .. c + 7; Whole: all inside the row, else masked loads (+0 past IW, stored too:
  // Plan::vlen leaves room, and the zeros are the right pad).
  const auto block = [&]<bool Whole>(i64 c) IRRUN_AVX2 {
    const i64 n = Whole ? 8 : IW - c;
    const __m128i m0 = first_lanes4(std::min<i64>(n, 4));
    const __m128i m1 = first_lanes4(std::max<i64>(n - 4, 0));
    __m256d acc[P][2];
    for (int j = 0; j < N; ++j) {
      const float* p = x + j * IW + c;
      if (j >= K - 1)
        track_bits(bits,
                   Whole ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, _mm256_set_m128i(m1, m0)));
      const __m256d x0 = _mm256_cvtps_pd(Whole ? _mm_loadu_ps(p) : _mm_maskload_ps(p, m0));
      const __m256d x1 = _mm256_cvtps_pd(Whole ? _mm_loadu_ps(p + 4) : _mm_maskload_ps(p + 4, m1));
      for (int q = std::max(0, j - K + 1); q <= std::min(P - 1, j); ++q) {
        if (q == j) {  // the window's first row
          acc[q][0] = x0, acc[q][1] = x1;
        } else {
          acc[q][0] = add_fma(acc[q][0], x0), acc[q][1] = add_fma(acc[q][1], x1);
        }
      }
    }
    for (int q = 0; q < P; ++q) {
      _mm256_storeu_pd(v + q * vlen + c, acc[q][0]);
      _mm256_storeu_pd(v + q * vlen + c + 4, acc[q][1]);
    }
  };
  i64 c = 0;
  for (; c + 8 <= IW; c += 8) {
    prefetch_lines<2>(pf);
    prefetch_out4(out, OW, c);
    block.template operator()<true>(c);
  }
  if (c < IW) block.template operator()<false>(c);
  while (pf.p < pf.end) prefetch_lines<1>(pf);
  bits_io = bits;
}

// hrow_s1_avx2<K> for a row checked at its group's end (own_check): it returns the least |s| of
// each lane. The last 1-3 outputs are a block too (V is zero-padded, inv_w padded to whole
// blocks), their other lanes +inf.
template <int K>
IRRUN_AVX2 IRRUN_INLINE __m256d hrow_s1_least_avx2(const double* vp, i64 OW, const double* inv_w,
                                                   double rinv_s, float* out) {
  const __m256d rinv = _mm256_set1_pd(rinv_s);
  __m256d least = _mm256_set1_pd(std::numeric_limits<double>::infinity());
  i64 ow = 0;
  for (; ow + 4 <= OW; ow += 4)
    finish4_least(taps_s1(vp + ow, K), rinv, inv_w + ow, out + ow, 4, least);
  if (ow < OW) finish4_least(taps_s1(vp + ow, K), rinv, inv_w + ow, out + ow, OW - ow, least);
  return least;
}

// Stride-1 windows of K x K (3, 5, 7) consecutive rows of a 2-D plane (S9): four output rows at a
// time share the conversions of their K + 3 input rows (vrows_s1_avx2); the rows at the plane's
// edges and a group's last 1-3 go one by one as band_avx2's. V rows are kept. The group takes
// its bound from the band's loads (own_bound.hpp) instead of a stats pass over the band: windows
// move down the plane, so each tracks only its rows past the last one tracked.
template <int K>
IRRUN_AVX2 bool band_s1_avx2(const BandArgs& a, const Ops&) {
  constexpr i64 P = kFusedRows;
  const Plan& pl = *a.pl;
  const i64 IW = pl.g->in[2], OW = pl.g->out[2], vlen = pl.vlen;
  const i64* begin = pl.row_begin.data();
  LoadBits bits = own_bits(*a.own);
  // Input rows at offsets below `tracked` are tracked: where the group before ended in this
  // run, all of the first window's rows but its last.
  i64 tracked = -1;
  if (own_continues(a) && begin[a.q0 + 1] > begin[a.q0])
    tracked = pl.row_off[static_cast<std::size_t>(begin[a.q0 + 1] - 1)];
  // The row pass, its least |s| kept for own_check.
  const auto hrow = [&](i64 q) IRRUN_AVX2 {
    keep_least4(a, q,
                hrow_s1_least_avx2<K>(a.v + (q - a.q0) * vlen, OW, pl.inv_w.data(), pl.row_rinv[q],
                                      a.out_plane + q * OW));
  };
  for (i64 q = a.q0; q < a.q1;) {  // runs of rows (Plan::step_end): offsets advance by row_step
    const i64 q_run = q, q_end = std::min(a.q1, pl.step_end[static_cast<std::size_t>(q)]);
    const i64 r = begin[q + 1] - begin[q];
    const i64* off = pl.row_off.data() + begin[q];
    bool consecutive = r == K && pl.row_step == IW;
    for (i64 j = 1; consecutive && j < r; ++j) consecutive = off[j] == off[0] + j * IW;
    for (; consecutive && q + P <= q_end; q += P) {
      const i64 o = off[0] + (q - q_run) * IW;
      for (i64 j = 0; j < K - 1; ++j)
        if (o + j * IW >= tracked) track_row(bits, a.plane + o + j * IW, IW);
      vrows_s1_avx2<K>(a.plane + o, IW, a.v + (q - a.q0) * vlen + pl.pad_left, vlen, bits,
                       take_steps(*a.next, P), a.out_plane + q * OW, OW);
      tracked = o + (K + P - 1) * IW;
      for (i64 p = 0; p < P; ++p) hrow(q + p);
    }
    for (; q < q_end; ++q) {
      prefetch_step(*a.next);
      const i64 shift = (q - q_run) * pl.row_step;  // row q's rows: off's, shifted
      const float* plane = a.plane + shift;
      double* v = a.v + (q - a.q0) * vlen + pl.pad_left;
      if (r == 0) {
        std::fill(v, v + IW, 0.0);
      } else {
        for (i64 j = 0; j < r; ++j)
          if (shift + off[j] >= tracked) track_row(bits, plane + off[j], IW);
        tracked = std::max(tracked, shift + off[r - 1] + IW);
        with_row_count(r, [&]<int R>() IRRUN_AVX2 { vrow_avx2<R>(plane, off, r, IW, v); });
      }
      hrow(q);
    }
  }
  return own_check(a, bits);
}

// band_flat_avx512 in blocks of four outputs (halves of its blocks of eight), each checked
// against t as it is stored. Sums (Ops::exact_band; PAD >= 0, whose taps come from registers):
// no check and no output; each block's sums go over the V values at its own outputs, which no
// later block loads (the next block loads from k + 8 on), for scale_flat_band after the flag's
// read.
template <int K, int PAD = -1, bool Sums = false>
IRRUN_AVX2 bool band_flat_avx2(const BandArgs& a, const Ops&) {
  static_assert(!Sums || PAD >= 0);
  const Plan& pl = *a.pl;
  const i64 IW = pl.g->in[2];
  flat_vertical(a, [&](i64 r, const i64* off, i64 rows, double* v) IRRUN_AVX2 {
    const i64 n = rows * IW;
    if (r == 2) return vrow_avx2<2>(a.plane, off, r, n, v);
    if (r == 3 && vrun3_fits(off, IW)) return vrun3<4>(a.plane + off[0], IW, rows, v);
    if (r == 3) return vrow_avx2<3>(a.plane, off, r, n, v);
    vrow_avx2<0>(a.plane, off, r, n, v);
  });

  const i64 taps = K > 0 ? K : pl.k_w;
  const i64 n_out = (a.q1 - a.q0) * IW;
  if (!Sums) std::fill(a.row_failed, a.row_failed + (a.q1 - a.q0), false);
  const double* vp = a.v - pl.pad_left;
  const double* r = pl.flat_r.data() + a.q0 * IW;
  float* out = a.out_plane + a.q0 * IW;
  const __m256d t = _mm256_set1_pd(a.t), sign = _mm256_set1_pd(-0.0);
  const auto* lanes_begin = reinterpret_cast<const double*>(pl.flat_lanes.data());
  const double* lanes_end = lanes_begin + pl.mask_period * taps * 8;
  const double* mk = lanes_begin;  // lanes of the outputs' half of their block of eight
  bool failed = false;
  const PrefetchRange pf = take_steps(*a.next, a.q1 - a.q0);  // as band_flat_avx512
  double* const v = a.v;  // in a register: the stores could alias a
  // PAD >= 0: the taps are shifted out of the blocks before, at and after the four outputs
  // (prev, cur, next; mid = the middle two pairs of two neighbouring blocks) instead of loaded.
  __m256d prev = _mm256_loadu_pd(v - 4), cur = _mm256_loadu_pd(v);
  __m256d mid = _mm256_permute2f128_pd(prev, cur, 0x21);
  // Outputs k .. k + 3 (Full) or the last 1-3 outputs of the group; Pf: with line k / 8 of the
  // stream where k / 4 is even.
  const auto block = [&]<bool Full, bool Pf = false>(i64 k) IRRUN_AVX2 {
    const auto masked = [&](i64 j, __m256d x) IRRUN_AVX2 {
      return j == PAD ? x : _mm256_and_pd(x, _mm256_loadu_pd(mk + 8 * j));
    };
    __m256d s;
    if constexpr (PAD >= 0) {
      const __m256d next = _mm256_loadu_pd(v + k + 4);
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
    if (k % 8 == 0) {  // the next block's lanes
      mk += 4;
      if constexpr (Pf) _mm_prefetch(reinterpret_cast<const char*>(pf.p + 2 * k), _MM_HINT_T0);
    } else if ((mk += taps * 8 - 4) == lanes_end) {
      mk = lanes_begin;
    }
    if constexpr (Sums) {
      if (Full) return _mm256_storeu_pd(v + k, s);
      // The V row's zero pad past n_out stays.
      return _mm256_maskstore_pd(v + k, _mm256_castpd_si256(first_lanes4d(n_out - k)), s);
    }
    // finish4 with the factor fl(1 * r) = r: y = s * r, stored, checked.
    int fail = _mm256_movemask_pd(_mm256_cmp_pd(_mm256_andnot_pd(sign, s), t, _CMP_NGE_UQ));
    if constexpr (Full) {
      _mm_storeu_ps(out + k, scale4(s, _mm256_loadu_pd(r + k)));
    } else {  // r ends with the plane: masked load
      const i64 n = n_out - k;
      const __m256i lanes = _mm256_castpd_si256(first_lanes4d(n));
      store_first(out + k, scale4(s, _mm256_maskload_pd(r + k, lanes)), n);
      fail &= (1 << n) - 1;
    }
    if (fail != 0) {  // rare: flag the rows of the failed lanes
      failed = true;
      for (int l = 0; l < 4; ++l)
        if (fail >> l & 1) a.row_failed[(k + l) / IW] = true;
    }
  };
  i64 k = 0;
  const i64 whole = n_out / 4 * 4, k_pf = std::min(whole, (pf.end - pf.p + 15) / 16 * 8);
  for (; k < k_pf; k += 4) block.template operator()<true, true>(k);
  for (; k < whole; k += 4) block.template operator()<true>(k);
  if (k < n_out) block.template operator()<false>(k);
  return failed;
}

// Ops::exact_band of the flat groups of 3x3 "same" pools (S3), for rows of 20 or more. The
// group's V rows are followed by Gap zeros each (1-4: rows IW + Gap apart, a multiple of four, so
// on 32-byte boundaries; against four zeros for every width, Inception's rows of 35 took 0.94-0.96
// of the time, SSD's of 38 0.93-0.97, rows of 21 0.86), so an output's left and right taps need
// no lane masks: loads, or shuffles of the centres where a load would straddle a cache line
// (band_flat_avx2 shifts every tap out of registers, three shuffles a block of four, and ANDs two
// with lane masks from a table it walks). Row by row, blocks of four (a row's last ending
// at its end) store their sums four doubles behind their outputs' places in rows back to back,
// where no later block loads, for scale_flat_behind after the flag's read. Each row asks for its
// share of the next band's stream (a line per 16 columns) before its blocks: at a line per eight
// columns the loads waited on the requests (S3 with the AVX2 cap: 0.93 of band_flat_avx2's time;
// 1.01 at a line per eight columns, 0.98 without the stream).
template <i64 Gap>
IRRUN_AVX2 bool exact_flat3_avx2(const BandArgs& a, const Ops&) {
  const i64 IW = a.pl->g->in[2], VS = IW + Gap, rows = a.q1 - a.q0;
  double* const v = a.v;
  // The zeros: four before the first row and Gap after each (four are stored: the next row's
  // columns are written after; vrow_avx2's last block of a row stores zeros too). Rows 32-byte
  // aligned: no store straddles a cache line (S3: 0.976 of the time with one or two zeros).
  _mm256_storeu_pd(v - 4, _mm256_setzero_pd());
  for (i64 q = 0; q < rows; ++q) _mm256_storeu_pd(v + q * VS + IW, _mm256_setzero_pd());
  flat_vertical<Gap>(a, [&](i64 r, const i64* off, i64 n_rows, double* vq) IRRUN_AVX2 {
    if (r == 3 && vrun3_fits(off, IW)) return vrun3<4, true, Gap>(a.plane + off[0], IW, n_rows, vq);
    for (i64 j = 0; j < n_rows; ++j)
      with_row_count(
          r, [&]<int R>() IRRUN_AVX2 { vrow_avx2<R>(a.plane + j * IW, off, r, IW, vq + j * VS); });
  });
  PrefetchRange pf = take_steps(*a.next, rows);
  const i64 row_lines = (IW + 15) / 16;
  // V starts on a 64-byte boundary (run_windows), so every row on a 32-byte one.
  const i64 n_al = Gap == 4 ? IW : IW / 4 * 4;  // the row's blocks on 32-byte boundaries
  double* s = v - 4;
  for (i64 q = 0; q < rows; ++q, s += IW) {
    const double* vq = v + q * VS;
    const auto block = [&](i64 c) IRRUN_AVX2 {
      const __m256d left = _mm256_loadu_pd(vq + c - 1), right = _mm256_loadu_pd(vq + c + 1);
      _mm256_storeu_pd(s + c, _mm256_add_pd(_mm256_add_pd(left, _mm256_loadu_pd(vq + c)), right));
    };
    for (i64 l = 0; l < row_lines && pf.p < pf.end; ++l, pf.p += 16)
      _mm_prefetch(reinterpret_cast<const char*>(pf.p), _MM_HINT_T0);
    // Blocks on 32-byte boundaries. The left tap of a block at a cache line's start and the
    // right tap of one in its middle would straddle two lines, a load that takes two of the
    // three load ports' slots: they come from the block's centre and its neighbour's, loaded
    // anyway, by a lane swap and an in-lane shuffle (S3 with the AVX2 cap: 0.95-0.96 of the
    // time; the left taps alone 0.97; the same as a function called here 0.98). First: the row
    // starts a line.
    const auto left = [&](__m256d prev, __m256d cur) IRRUN_AVX2 {  // columns c - 1 .. c + 2
      return _mm256_shuffle_pd(_mm256_permute2f128_pd(prev, cur, 0x21), cur, 5);
    };
    const auto right = [&](__m256d cur, __m256d next) IRRUN_AVX2 {  // columns c + 1 .. c + 4
      return _mm256_shuffle_pd(cur, _mm256_permute2f128_pd(cur, next, 0x21), 5);
    };
    // Block c at a line's start (its left tap from prev and cur) and block c in a line's middle
    // (its right tap from cur and next, the block after's centre).
    const auto at_start = [&](i64 c, __m256d prev, __m256d cur) IRRUN_AVX2 {
      _mm256_storeu_pd(
          s + c, _mm256_add_pd(_mm256_add_pd(left(prev, cur), cur), _mm256_loadu_pd(vq + c + 1)));
    };
    const auto mid_line = [&](i64 c, __m256d cur, __m256d next) IRRUN_AVX2 {
      _mm256_storeu_pd(
          s + c, _mm256_add_pd(_mm256_add_pd(_mm256_loadu_pd(vq + c - 1), cur), right(cur, next)));
    };
    const auto run = [&]<bool First>() IRRUN_AVX2 {
      i64 c = 0;  // vq - 4: the zeros before the row (the row before's, or those before V)
      __m256d prev = _mm256_load_pd(vq - 4), cur = _mm256_load_pd(vq);
      if (!First) {  // block 0 in a line's middle
        const __m256d next = _mm256_load_pd(vq + 4);
        mid_line(0, cur, next);
        prev = cur, cur = next, c = 4;
      }
      for (; c + 8 <= n_al; c += 8) {  // a line's two blocks
        const __m256d next = _mm256_load_pd(vq + c + 4);
        at_start(c, prev, cur);
        const __m256d nn = _mm256_load_pd(vq + c + 8);
        mid_line(c + 4, next, nn);
        prev = next, cur = nn;
      }
      if (c < n_al) at_start(c, prev, cur);  // a last block at a line's start
    };
    if ((reinterpret_cast<std::uintptr_t>(vq) & 63) == 0)
      run.template operator()<true>();
    else
      run.template operator()<false>();
    if (Gap != 4) block(IW - 4);  // the row's last block, ending at its end
  }
  return false;
}

// Stride-1 windows of K x K rows (K = 3, 5, 7) that band_s1_avx2 runs: on 2-D planes (one depth
// tap), so that the windows of a run are consecutive rows moving down by one.
bool s1_square(const Plan& pl) {
  const PoolGeometry& g = *pl.g;
  return pl.fixed_w && pl.stride_w == 1 && (pl.k_w == 3 || pl.k_w == 5 || pl.k_w == 7) &&
         pl.ax[0].max_taps == 1 && g.kernel[1] == pl.k_w && g.stride[1] == 1 && g.dilation[1] == 1;
}

template <HrowFn H>
struct BandAvx2 {
  static constexpr BandFn fn = band_avx2<H>;
};

// The flat group for k and pad_left; Sums: its Ops::exact_band, for "same" pads only (else none).
template <bool Sums = false>
BandFn pick_band_flat_avx2(i64 k, i64 pad_left) {
  if (k == 3 && pad_left == 1) return band_flat_avx2<3, 1, Sums>;  // 3x3 "same"
  if (k == 5 && pad_left == 2) return band_flat_avx2<5, 2, Sums>;
  if (k == 7 && pad_left == 3) return band_flat_avx2<7, 3, Sums>;
  if constexpr (Sums) return nullptr;
  return k == 3 ? band_flat_avx2<3> : k == 5 ? band_flat_avx2<5> : band_flat_avx2<0>;
}

// ---- Planes in lanes (lanes.hpp), a lane per plane in two 256-bit vectors.
struct LaneV {
  __m256d lo, hi;  // planes 0-3, 4-7
};
IRRUN_AVX2 IRRUN_INLINE LaneV lanes_add(LaneV a, LaneV b) {
  return {add_fma(a.lo, b.lo), add_fma(a.hi, b.hi)};
}
IRRUN_AVX2 IRRUN_INLINE LaneV lanes_zero() {
  return {_mm256_setzero_pd(), _mm256_setzero_pd()};
}
IRRUN_AVX2 IRRUN_INLINE LaneV lanes_widen(__m256 v) {
  return {_mm256_cvtps_pd(_mm256_castps256_ps128(v)), _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1))};
}
#define IRRUN_PATH IRRUN_AVX2
#include "lanes.hpp"
#undef IRRUN_PATH

// Two passes, as the other exact routes here: the scaling raises the precision flag, so the sums
// are kept past V and the flag read before they are scaled (scale4), on their way out through
// the transpose; a NaN sum seen as a NaN output.
template <int K, int S>
IRRUN_AVX2 bool lanes_kernel(const Plan& pl, const float* x, float* y, double* scratch) {
  const PoolGeometry& g = *pl.g;
  const i64 P = g.in_plane_size();
  auto* const T = reinterpret_cast<LaneV*>(scratch);
  LaneV* const sums = T + P + lanes_vlen(pl);  // lanes_scratch
  lanes_in(x, P, T);
  LaneV* s = sums;
  lanes_sums<K, S>(pl, T, [&](LaneV v) IRRUN_AVX2 { *s++ = v; });
  if (irrun::detail::inexact()) return false;
  const double* f = pl.flat_r.data();  // the outputs' factors, in order
  __m256 nan = _mm256_setzero_ps();
  lanes_out(g.out_plane_size(), y, [&](i64 o) IRRUN_AVX2 {
    const __m256d r = _mm256_set1_pd(f[o]);
    const __m256 v = _mm256_set_m128(scale4(sums[o].hi, r), scale4(sums[o].lo, r));
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return v;
  });
  return _mm256_movemask_ps(nan) == 0;
}

}  // namespace

// The two passes of Ops::exact_planes and Ops::scale_planes for 2x2 s2 planes (S2, where
// exact_2x2 holds), on both ISA paths: the sums s = (r0 + r1)[2 ow] + (r0 + r1)[2 ow + 1], as
// every path adds them, four outputs at a time at 256 bits, then y = fl32(s * r + 0) with the one
// factor r (scale_flat). Unpacking columns 0-3 and 4-7 gives outputs 0, 2, 1, 3; they stay so,
// and the floats are put in order (an in-lane shuffle): a permute after the hadd cost S2 1.05.
namespace {

IRRUN_AVX2 inline __m256d wide(const float* p) {
  return _mm256_cvtps_pd(_mm_loadu_ps(p));
}

// A chunk whose outputs all take one factor (one_factor; S2's planes, S6's bins).
template <bool Swap>
IRRUN_AVX2 bool scale_flat(const double* s, float* y, i64 n, double r_s) {
  const __m256d r = _mm256_set1_pd(r_s);
  return scale_run<Swap, true>(s, y, n, [&](i64) IRRUN_AVX2 { return r; });
}

// Ops::scale_band of the flat groups: the sums band_flat_avx2<K, PAD, true> left over V scaled
// by their outputs' factors (Plan::flat_r, or the one they share), y = fl32(s * r + 0) as its
// blocks' scale4.
IRRUN_AVX2 bool scale_flat_band(const BandArgs& a) {
  const i64 IW = a.pl->g->in[2], n = (a.q1 - a.q0) * IW;
  const double* r = a.pl->flat_r.data() + a.q0 * IW;
  float* y = a.out_plane + a.q0 * IW;
  if (n >= 4 && a.pl->flat_one != 0) return scale_flat<false>(a.v, y, n, a.pl->flat_one);
  if (n >= 4)
    return scale_run<false>(a.v, y, n, [&](i64 o) IRRUN_AVX2 { return _mm256_loadu_pd(r + o); });
  // 1-3 outputs: V's zero pad follows them.
  const __m256d lanes = first_lanes4d(n), s = _mm256_loadu_pd(a.v);
  store_first(y, scale4(s, _mm256_maskload_pd(r, _mm256_castpd_si256(lanes))), n);
  return _mm256_movemask_pd(_mm256_and_pd(_mm256_cmp_pd(s, s, _CMP_UNORD_Q), lanes)) == 0;
}

// Ops::scale_band of exact_flat3_avx2: its sums, four doubles before V, as scale_flat_band.
IRRUN_AVX2 bool scale_flat_behind(const BandArgs& a) {
  BandArgs b = a;
  b.v -= 4;
  return scale_flat_band(b);
}

}  // namespace

IRRUN_AVX2 void sums_2x2(const Plan& pl, const float* x, double* s, i64 count) {
  const i64 IW = pl.g->in[2], OW = pl.g->out[2], rows = pl.g->out[0] * pl.g->out[1];
  const i64 in = pl.g->in_plane_size();
  const bool far = pl.far;
  for (i64 p = 0; p < count; ++p, x += in) {
    const float* r0 = x + pl.row_off[0];  // one run of rows
    for (i64 q = 0; q < rows; ++q, s += OW, r0 += pl.row_step) {
      if (far) prefetch_row(r0 + count * in, 2 * IW);  // the next chunk's same rows
      for (i64 ow = 0; ow < OW; ow += 4) {
        const float* c0 = r0 + 2 * ow;
        const __m256d a = add_fma(wide(c0), wide(c0 + IW));
        const __m256d b = add_fma(wide(c0 + 4), wide(c0 + IW + 4));
        _mm256_storeu_pd(s + ow, _mm256_add_pd(_mm256_unpacklo_pd(a, b), _mm256_unpackhi_pd(a, b)));
      }
    }
  }
}

IRRUN_AVX2 bool scale_2x2(const Plan& pl, const double* s, float* y, i64 count) {
  return scale_flat<true>(s, y, count * pl.g->out_plane_size(), one_factor(pl));
}

// The four-output blocks of `count` planes of bins of four, their sums to `block`: the chunk's
// outputs as one row, four at a time, each lane's bin from Plan::bins4_start, so
// four bins of a block may lie in different rows or planes; the last block is the last four
// outputs again (those written twice get the same bits). Per row, the set-up and a second block
// for a row's last three outputs had taken most of S6's row time (S6 0.78 of the time on
// AVX-512, round 39, where it ran first).
template <class Block>
IRRUN_AVX2 IRRUN_INLINE void bins4_blocks(const Plan& pl, const float* x, i64 count,
                                          Block&& block) {
  const i64 n = count * pl.g->out_plane_size();
  const i64* start = pl.bins4_start.data();
  const i64 rows = static_cast<i64>(pl.bins4_rows.size());
  with_row_count(rows, [&]<int R>() IRRUN_AVX2 {
    const i64* off = pl.bins4_rows.data();
    const auto sums = [&](const float* p) IRRUN_AVX2 {  // a bin's column sums (bins4.hpp)
      const i64 m = R > 0 ? R : rows;
      __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(p + off[0]));
      for (i64 j = 1; j < m; ++j) v = add_fma(v, _mm256_cvtps_pd(_mm_loadu_ps(p + off[j])));
      return v;
    };
    // Where pl.far, each block prefetches its share of the next chunk's planes, which follow.
    const bool far = pl.far;  // in a register: the stores could alias pl
    const float* next = x + count * pl.g->in_plane_size();
    const i64 share = 4 * pl.g->in_plane_size() / pl.g->out_plane_size();
    const auto one = [&](i64 o) IRRUN_AVX2 {
      if (far) prefetch_row(next + o / 4 * share, share);
      block(o, bins4_taps(sums(x + start[o]), sums(x + start[o + 1]), sums(x + start[o + 2]),
                          sums(x + start[o + 3])));
    };
    i64 o = 0;
    for (; o + 4 <= n; o += 4) one(o);
    if (o < n) one(n - 4);
  });
}

IRRUN_AVX2 void planes_bins4(const Plan& pl, const float* x, float* y, i64 count) {
  const __m256d r = _mm256_set1_pd(bins4_factor(pl));
  bins4_blocks(pl, x, count,
               [&](i64 o, __m256d s) IRRUN_AVX2 { _mm_storeu_ps(y + o, scale4(s, r)); });
}

IRRUN_AVX2 void sums_bins4(const Plan& pl, const float* x, double* s, i64 count) {
  bins4_blocks(pl, x, count, [&](i64 o, __m256d v) IRRUN_AVX2 { _mm256_storeu_pd(s + o, v); });
}

IRRUN_AVX2 bool scale_bins4(const Plan& pl, const double* s, float* y, i64 count) {
  return scale_flat<false>(s, y, count * pl.g->out_plane_size(), bins4_factor(pl));
}

Ops select_avx2(Plan& pl) {
  Ops ops{stats_avx2, vrow_avx2<0, 8>, plane_sums_avx2};

  ops.amax = amax_avx2, ops.all_above = all_above_avx2;
  ops.finish_row = hrow_s1_avx2<1>;
  ops.band = band_generic;
  if (pl.fixed_w) {
    ops.hrow = pick_hrow(kHrowAvx2, pl.stride_w, pl.k_w);
    ops.band = pick_band<BandAvx2, kHrowAvx2>(ops.hrow);
  }
  // Exact sums first for stride-2 rows (S5; the fused ones below take their own), in two passes.
  if (exact_s2_in_place(pl)) {
    ops.exact_band = pl.k_w == 3 ? exact_band_s2v_avx2<3> : exact_band_s2v_avx2<0>;
    ops.scale_band = scale_band_v;
  }
  // Fused stride-2 rows for 2-D windows of up to four rows (S1, S2: -10%). With the nine rows of
  // 3x3x3 windows (S5) the separate passes are faster on the checked route (fused: 1.05x in
  // round 10, 1.07x in round 74): a block's two chains of eight additions leave the out-of-order
  // window too little to overlap. They take their bound from their own loads (S1 0.965, S2
  // 0.968 of the time, scripts/ab --isa avx2): an extra 256-bit load per eight floats, tracked
  // with two integer maxima (one load converted twice, with an extract, cost S1 1.19 and S2
  // 1.27). Their exact sums, which track nothing, take windows of up to kFusedS2Rows rows (S5:
  // 0.85 of the separate passes' time, round 74).
  const bool s2_pad1 = pl.fixed_w && pl.stride_w == 2 && pl.k_w == 3 && pl.pad_left == 1;
  if (s2_pad1 && pl.max_rows <= kFusedS2Rows && exact_s2_fits(pl)) {
    ops.exact_band = exact_band_s2_avx2<3>, ops.scale_band = scale_band_avx2;
    pl.inv_w_swap = pl.inv_w;  // OW a multiple of four (exact_s2_fits)
    for (std::size_t o = 0; o + 4 <= pl.inv_w.size(); o += 4)
      std::swap(pl.inv_w_swap[o + 1], pl.inv_w_swap[o + 2]);
  }
  if (pl.fixed_w && pl.stride_w == 2 && pl.max_rows <= 4) {
    if (s2_pad1) ops.band = band_s2_avx2<3>, ops.keeps_v = false, ops.own_bound = true;
    if (pl.k_w == 2 && pl.pad_left == 0) {  // S2: checked after where it can be (0.91)
      ops.band = band_s2_avx2<2>, ops.keeps_v = false, ops.own_bound = true, ops.after = true;
      if (pl.check_after && rows_consecutive(pl, 2) && one_run(pl)) {
        ops.planes = planes_2x2_avx2;
        if (exact_2x2(pl)) ops.exact_planes = sums_2x2, ops.scale_planes = scale_2x2;
      }
    }
  }
  // Bins of four that tile the row from its start (S6), of whole planes checked after.
  if (ops.hrow == hrow_bins4_avx2 && pl.pad_left == 0 && 4 * pl.g->out[2] <= pl.g->in[2] &&
      make_bins4_planes(pl))
    ops.planes = planes_bins4, ops.exact_planes = sums_bins4, ops.scale_planes = scale_bins4;
  if (flat_eligible(pl)) {
    make_flat(pl);
    ops.band = pick_band_flat_avx2(pl.k_w, pl.pad_left);
    // Exact sums first (S3), in two passes: the scaling raises the precision flag.
    // exact_flat3_avx2 from rows of 20: its blocks stop at each row's end, where narrower rows
    // lost more to their partial blocks and row loops than the masks cost (IW = 8: 1.23x the
    // time, 12: 1.10x, 13: 1.17x, 17: 1.08x, 16: 0.98; 20: 0.91, 21: 1.00, 24-64: 0.90-0.96).
    // Its V rows IW + Gap apart with Gap = 1-4 zeros: a multiple of four, 32-byte aligned.
    constexpr BandFn flat3[] = {exact_flat3_avx2<4>, exact_flat3_avx2<3>, exact_flat3_avx2<2>,
                                exact_flat3_avx2<1>};
    if (pl.k_w == 3 && pl.pad_left == 1 && pl.g->in[2] >= 20)
      ops.exact_band = flat3[pl.g->in[2] % 4], ops.scale_band = scale_flat_behind;
    else if ((ops.exact_band = pick_band_flat_avx2<true>(pl.k_w, pl.pad_left)))
      ops.scale_band = scale_flat_band;
  } else if (make_stream(pl)) {
    ops.planes = stream_fn(pl, std::make_integer_sequence<int, kStreamMaxKernel>{});
  } else if (s1_square(pl)) {
    ops.band = pl.k_w == 3 ? band_s1_avx2<3> : pl.k_w == 5 ? band_s1_avx2<5> : band_s1_avx2<7>;
    ops.own_bound = true, ops.min_group = kFusedRows;
  }
  // Uneven bins (S8): exact first in two passes, with no stats pass.
  if (ops.band == band_generic && exact_bins_in_place(pl))
    ops.exact_band = exact_band_bins, ops.scale_band = scale_band_bins;
  // Exact sums first: whole planes, and planes of bins of four, whose scaling (which raises the
  // precision flag) is a pass of its own.
  ops.exact_plane_sums = exact_plane_sums_avx2;
  // Planes in lanes where the row kernels pay for a band per small plane (as select_avx512),
  // flat groups of rows up to 512 floats too: since the lanes sum V in registers (round 77),
  // 3x3 "same" on 1x768x17x17 took 0.78-0.81 of the flat groups' time, 1x576x19x19 0.82 (on
  // AVX-512 0.88-0.96 and 1.02, so there they stay flat).
  if (!ops.planes && (!pl.flat || pl.g->in_plane_size() <= 512) && make_lanes(pl))
    ops.lanes = pick_lanes(pl);
  return ops;
}

}  // namespace irrun::kernels::avg_fast
