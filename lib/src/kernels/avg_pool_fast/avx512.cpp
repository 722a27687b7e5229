// The AVX-512 path of the fast f32 AvgPool: the portable path's operations in the same order,
// eight doubles at a time (compiled for AVX-512F, DQ and VL via target attributes; only called
// when the CPU has them).
#include "ops.hpp"  // first: intrinsics and their warning pragmas

#include "../../fp_control.hpp"
#include "../lanes8.hpp"
#include "bins4.hpp"
#include "own_bound.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <limits>
#include <numeric>

namespace irrun::kernels::avg_fast {
namespace {

// add_fma (avx2.cpp) eight lanes wide: the same addition, on the FMA pipes.
IRRUN_AVX512 inline __m512d add_fma512(__m512d a, __m512d x) {
  return _mm512_fmadd_pd(x, _mm512_set1_pd(1.0), a);
}

// The same at 256 bits (with AVX-512VL: the AVX-512 path is not compiled for FMA3 alone).
IRRUN_AVX512 inline __m256d add_fma256(__m256d a, __m256d x) {
  return _mm256_mask_fmadd_pd(x, 0xFF, _mm256_set1_pd(1.0), a);
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

// vrangeps (greater magnitude, sign cleared): one operation per 16 floats. A quiet NaN is
// ignored; a signalling one gives a quiet NaN, which the next vrangeps of its lane ignores in turn.
IRRUN_AVX512 float amax_avx512(const float* x, i64 n) {
  __m512 m[4];
  for (int j = 0; j < 4; ++j) m[j] = _mm512_setzero_ps();
  i64 i = 0;
  for (; i + 64 <= n; i += 64)
    for (int j = 0; j < 4; ++j) m[j] = _mm512_range_ps(_mm512_loadu_ps(x + i + 16 * j), m[j], 0x0B);
  for (; i + 16 <= n; i += 16) m[0] = _mm512_range_ps(_mm512_loadu_ps(x + i), m[0], 0x0B);
  if (i < n) {
    const auto k = static_cast<__mmask16>((1u << (n - i)) - 1);
    m[1] = _mm512_range_ps(_mm512_maskz_loadu_ps(k, x + i), m[1], 0x0B);
  }
  return _mm512_reduce_max_ps(_mm512_max_ps(_mm512_max_ps(m[0], m[1]), _mm512_max_ps(m[2], m[3])));
}

IRRUN_AVX512 bool all_above_avx512(const float* y, i64 n, float thr) {
  const __m512 t = _mm512_set1_ps(thr);
  __mmask16 below = 0;  // |y| not above thr, or NaN
  i64 i = 0;
  for (; i + 16 <= n; i += 16)
    below |= _mm512_cmp_ps_mask(_mm512_abs_ps(_mm512_loadu_ps(y + i)), t, _CMP_NGT_UQ);
  if (i < n) {
    const auto m = static_cast<__mmask16>((1u << (n - i)) - 1);
    below |=
        _mm512_mask_cmp_ps_mask(m, _mm512_abs_ps(_mm512_maskz_loadu_ps(m, y + i)), t, _CMP_NGT_UQ);
  }
  return below == 0;
}

// The first 1-8 lanes (`lanes`) of p; whole blocks take no masks (folded away where lanes is
// a constant).
IRRUN_AVX512 inline __m512d load8(const double* p, __mmask8 lanes = 0xFF) {
  return lanes == 0xFF ? _mm512_loadu_pd(p) : _mm512_maskz_loadu_pd(lanes, p);
}

// Rounded to nearest without raising a flag: scaling leaves the precision flag to the sums
// (run_whole_plane).
constexpr int kNearestQuiet = _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC;
// vfpclasspd's classes of a value that is not finite: quiet and signalling NaN, +-infinity.
constexpr int kNonFinite = 0x01 | 0x80 | 0x08 | 0x10;

// y = s * r + 0 (finish, ops.hpp) as one FMA: the bits of s * r, but a sum of -0 only gives +0,
// as the reference's sums from +0 do. Stored in the outputs of `lanes`. Masked stores are slow on
// some CPUs (AMD Zen 4): only a partial block uses one.
IRRUN_AVX512 inline void scale_store8(__m512d s, __m512d r, float* out, __mmask8 lanes = 0xFF) {
  const __m256 y = _mm512_cvt_roundpd_ps(
      _mm512_fmadd_round_pd(s, r, _mm512_setzero_pd(), kNearestQuiet), kNearestQuiet);
  if (lanes == 0xFF)
    _mm256_storeu_ps(out, y);
  else
    _mm512_mask_storeu_ps(out, lanes, _mm512_castps256_ps512(y));
}

// Scale (by fl(rinv * inv_w)) and store the outputs of `lanes`.
IRRUN_AVX512 inline void store8(__m512d s, __m512d rinv, const double* inv_w, float* out,
                                __mmask8 lanes = 0xFF) {
  scale_store8(s, _mm512_mul_round_pd(rinv, load8(inv_w, lanes), kNearestQuiet), out, lanes);
}

// Scale, check and store the outputs of `lanes`; returns the updated fail mask.
IRRUN_AVX512 inline __mmask8 finish8(__m512d s, __m512d rinv, const double* inv_w, __m512d t,
                                     __mmask8 fail, float* out, __mmask8 lanes = 0xFF) {
  if (lanes == 0xFF) {
    store8(s, rinv, inv_w, out);
    return fail | _mm512_cmp_pd_mask(_mm512_abs_pd(s), t, _CMP_NGE_UQ);
  }
  store8(s, rinv, inv_w, out, lanes);
  return fail | _mm512_mask_cmp_pd_mask(lanes, _mm512_abs_pd(s), t, _CMP_NGE_UQ);
}

// Whether one of y[0..n) is NaN: the floats added into four accumulators, which a NaN turns
// NaN; one addition per 16 floats where a compare, a mask move and an OR per 16 took S1 6% of its
// time. The additions raise no flag (the exact routes read the precision flag after this). A +inf
// and a -inf in one lane also give NaN, as can sums that overflow both ways: a false alarm, which
// only sends the group down its checked route.
IRRUN_AVX512 bool has_nan_avx512(const float* y, i64 n) {
  const auto add = [&](__m512 a, __m512 v)
                       IRRUN_AVX512_LAMBDA { return _mm512_add_round_ps(a, v, kNearestQuiet); };
  __m512 a[4];
  for (auto& v : a) v = _mm512_setzero_ps();
  i64 i = 0;
  for (; i + 64 <= n; i += 64)
    for (int j = 0; j < 4; ++j) a[j] = add(a[j], _mm512_loadu_ps(y + i + 16 * j));
  for (; i + 16 <= n; i += 16) a[0] = add(a[0], _mm512_loadu_ps(y + i));
  if (i < n)
    a[1] = add(a[1], _mm512_maskz_loadu_ps(static_cast<__mmask16>((1u << (n - i)) - 1), y + i));
  const __m512 s = add(add(a[0], a[1]), add(a[2], a[3]));
  return _mm512_cmp_ps_mask(s, s, _CMP_UNORD_Q) != 0;
}

// Whether an output of the group is NaN: the check of groups run untracked and unchecked
// (Ops::exact_band), whose sums need no bound but NaN's.
IRRUN_AVX512 inline bool has_nan_output(const BandArgs& a) {
  const i64 OW = a.pl->g->out[2];
  return has_nan_avx512(a.out_plane + a.q0 * OW, (a.q1 - a.q0) * OW);
}

// Row q's least |s| of each lane, kept for the check at the group's end (own_check).
IRRUN_AVX512 inline void keep_least(const BandArgs& a, i64 q, const __m512d* least, int count) {
  for (int p = 0; p < count; ++p) _mm512_store_pd(a.least + 8 * (q + p - a.q0), least[p]);
}

// LoadBits taken sixteen floats at a time from a 512-bit load of their own: two operations per
// sixteen floats where tracking the 256-bit loads that are widened took four (S1 0.95 of the
// time). Bits 0 raise neither maximum.
struct LoadBits16 {
  __m512i u, s;
};

IRRUN_AVX512 inline void track16(LoadBits16& b, const float* x) {
  const __m512i i = _mm512_loadu_si512(x);
  b.u = _mm512_max_epu32(b.u, i), b.s = _mm512_max_epi32(b.s, i);
}

IRRUN_AVX512 inline LoadBits fold_bits(LoadBits b, const LoadBits16& w) {
  b.u = _mm256_max_epu32(
      b.u, _mm256_max_epu32(_mm512_castsi512_si256(w.u), _mm512_extracti64x4_epi64(w.u, 1)));
  b.s = _mm256_max_epi32(
      b.s, _mm256_max_epi32(_mm512_castsi512_si256(w.s), _mm512_extracti64x4_epi64(w.s, 1)));
  return b;
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
IRRUN_AVX512 inline __m512d combine8_avx512(const __m512d* a, const __m512d* ends = nullptr) {
  __m512d b[4];  // b[j] = [P2j(01), P2j+1(01), P2j(23), P2j+1(23), ... (45) ..., ... (67) ...]
  for (int j = 0; j < 4; ++j) {
    __m512d lo = _mm512_unpacklo_pd(a[2 * j], a[2 * j + 1]);  // lanes 0, 2, 4, 6 of both
    if (ends)  // plane p's last value, lane p of *ends, into its lane 0 (+0 to the others)
      lo = _mm512_add_pd(lo, _mm512_maskz_permutexvar_pd(
                                 3, _mm512_set_epi64(0, 0, 0, 0, 0, 0, 2 * j + 1, 2 * j), *ends));
    b[j] = _mm512_add_pd(lo, _mm512_unpackhi_pd(a[2 * j], a[2 * j + 1]));
  }
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

// The floats of v widened to doubles, their greatest |x| tracked in m: one vrangeps (max of
// magnitudes, sign cleared) where a min and a max took two, on the pipes the conversions and
// additions need (S7 0.27 -> 0.22 ms). A NaN may drop out of m or reset it; see Ops::plane_sums.
// Without Bound, m is left alone (Ops::exact_plane_sums).
template <bool Bound>
IRRUN_AVX512 inline __m512d widen(__m256 v, __m256& m) {
  if constexpr (Bound) m = _mm256_range_ps(v, m, 0x0B);
  return _mm512_cvtps_pd(v);
}

// ---- Planes of 49 floats in their order (planes49.hpp): a shared chunk merges into a plane as one
// masked FMA (S4 and S7 0.94 of the time of an addition and a blend). Flat groups' runs of
// 3-row windows (vrun3.hpp).
#define IRRUN_PATH IRRUN_AVX512
IRRUN_AVX512 IRRUN_INLINE __m256d add256(__m256d a, __m256d b) {
  return add_fma256(a, b);
}
template <int M>
IRRUN_AVX512 IRRUN_INLINE __m256d p49_merge(__m256d into, __m256d shared) {
  return _mm256_mask3_fmadd_pd(shared, _mm256_set1_pd(1.0), into, M);
}
IRRUN_AVX512 IRRUN_INLINE void p49_track(__m256 v, __m256& m) {
  m = _mm256_range_ps(v, m, 0x0B);  // as widen
}
// Eight columns a step: on this Intel Xeon S3 took 0.86-0.91 of four columns' time with its
// output prefetched, 0.955 without (round 79; on Zen 5 0.92 against 0.91 in round 65).
struct Vrun3 {
  using V = __m512d;
  static constexpr i64 kLanes = 8;
  IRRUN_AVX512 static V widen(const float* p) { return _mm512_cvtps_pd(_mm256_loadu_ps(p)); }
  IRRUN_AVX512 static V add(V a, V b) { return add_fma512(a, b); }
  IRRUN_AVX512 static void store(double* p, V v) { _mm512_storeu_pd(p, v); }
};
#include "planes49.hpp"
#include "vrun3.hpp"

using StreamV = __m512d;

template <bool Whole, int R>
IRRUN_AVX512 IRRUN_INLINE __m512d stream_v(const float* p, const i64* taps, i64 rows, i64 left) {
  const auto load = [&](i64 at) IRRUN_AVX512_LAMBDA {
    if constexpr (Whole) return _mm512_cvtps_pd(_mm256_loadu_ps(p + at));
    const auto m = static_cast<__mmask8>((1u << std::clamp<i64>(left - at, 0, 8)) - 1);
    return _mm512_cvtps_pd(_mm256_maskz_loadu_ps(m, p + at));
  };
  __m512d v = load(taps[0]);
  for (i64 j = 1; j < (R > 0 ? R : rows); ++j) v = add_fma512(v, load(taps[j]));
  return v;
}

// The taps shifted out of cur and next (valignq), as in row_s1_avx512.
template <int K>
IRRUN_AVX512 IRRUN_INLINE __m256 stream_y(__m512d cur, __m512d next, double r) {
  const auto tap = [&]<int J>() IRRUN_AVX512_LAMBDA {
    if constexpr (J == 8) return next;
    const __m512i c = _mm512_castpd_si512(cur), n = _mm512_castpd_si512(next);
    if constexpr (J < 8) return _mm512_castsi512_pd(_mm512_alignr_epi64(n, c, J));
  };
  __m512d s = cur;
  [&]<int... J>(std::integer_sequence<int, J...>) IRRUN_AVX512_LAMBDA {
    ((s = _mm512_add_pd(s, tap.template operator()<J + 1>())), ...);
  }
  (std::make_integer_sequence<int, K - 1>{});
  return _mm512_cvtpd_ps(_mm512_fmadd_pd(s, _mm512_set1_pd(r), _mm512_setzero_pd()));
}
#include "stream.hpp"
#undef IRRUN_PATH

template <bool Bound>
IRRUN_AVX512 void plane_sums_t(const float* x, i64 n, i64 count, double* s, float& bound) {
  if (n == kPlane49) return planes49<Bound>(x, count, s, bound);
  const i64 full = n / 8 * 8;
  // The zero-filled last block; masked-off floats are not read, and zeros add nothing to m.
  const auto tail = static_cast<__mmask16>((1u << (n - full)) - 1);
  const bool one_left = n - full == 1;  // the last floats of eight planes as one vector
  auto last = [&](const float* q) IRRUN_AVX512_LAMBDA {
    return _mm512_castps512_ps256(_mm512_maskz_loadu_ps(tail, q));
  };
  // Four independent chains keep the latency of vrangeps off the critical path.
  __m256 m[4];
  for (auto& mm : m) mm = _mm256_set1_ps(bound);
  const __m512d zero = _mm512_setzero_pd();
  i64 p = 0;
  for (; p + 8 <= count; p += 8) {
    const float* xp = x + p * n;
    __m512d a[8], ends = zero;
    for (int j = 0; j < 8; ++j) a[j] = zero;
    for (i64 i = 0; i < full; i += 8)
      for (int j = 0; j < 8; ++j)
        a[j] = add_fma512(a[j], widen<Bound>(_mm256_loadu_ps(xp + j * n + i), m[j & 3]));
    if (one_left) {
      // One float left per plane (3x3 and 5x5 planes): the eight planes' last floats in one
      // vector (scalar loads: a gather is slower), each added to lane 0 of its plane in the
      // combining tree, where the zero-filled last block would put it: the same additions.
      const float* q = xp + full;
      ends = widen<Bound>(
          _mm256_setr_ps(q[0], q[n], q[2 * n], q[3 * n], q[4 * n], q[5 * n], q[6 * n], q[7 * n]),
          m[0]);
    } else if (tail != 0) {
      for (int j = 0; j < 8; ++j) {
        const __m512d v = widen<Bound>(last(xp + j * n + full), m[j & 3]);
        a[j] = _mm512_add_pd(a[j], _mm512_mask_mov_pd(zero, static_cast<__mmask8>(tail), v));
      }
    }
    _mm512_storeu_pd(s + p, combine8_avx512(a, one_left ? &ends : nullptr));
  }
  for (; p < count; ++p) {  // one plane at a time: one register of lanes, combined in memory
    const float* xp = x + p * n;
    __m512d a = zero;
    for (i64 i = 0; i < full; i += 8)
      a = add_fma512(a, widen<Bound>(_mm256_loadu_ps(xp + i), m[0]));
    if (tail != 0) {
      const __m512d v = widen<Bound>(last(xp + full), m[0]);
      a = _mm512_add_pd(a, _mm512_mask_mov_pd(zero, static_cast<__mmask8>(tail), v));
    }
    alignas(64) double l[8];
    _mm512_store_pd(l, a);
    s[p] = combine_lanes(l);
  }
  alignas(32) float l[8];
  _mm256_store_ps(l, _mm256_max_ps(_mm256_max_ps(m[0], m[1]), _mm256_max_ps(m[2], m[3])));
  bound = fold_bound(l, bound);
}

IRRUN_AVX512 void plane_sums_avx512(const float* x, i64 n, i64 count, double* s, float& bound) {
  plane_sums_t<true>(x, n, count, s, bound);
}

IRRUN_AVX512 void exact_plane_sums_avx512(const float* x, i64 n, i64 count, double* s) {
  float unused = 0;
  plane_sums_t<false>(x, n, count, s, unused);
}

constexpr HrowSet kHrowAvx512{hrow_s1_avx512<2>, hrow_s1_avx512<3>, hrow_s1_avx512<5>,
                              hrow_s1_avx512<7>, hrow_s1_avx512<0>, hrow_s2_avx512<2>,
                              hrow_s2_avx512<3>, hrow_s2_avx512<0>, hrow_bins4_avx512};

// Ops::vsum (as vsum_portable), also the vertical pass of the group functions. The last 1-15
// columns of a row of eight or more are whole blocks of eight, the last one ending at n and
// overlapping the one before (its columns summed again, to the same values): masked loads with
// a mask known only at run time cost more (S6's rows of 28: -9%). Up to four columns left after
// a whole block are four floats converted at 256 bits instead (S6's rows of 28 as 16 + 8 + 4:
// 0.96 of the time, round 34). Past n, V is not written: it keeps the zeros it was allocated
// with (the zero padding of Plan::vlen, which windows past the row read), or in flat groups what
// an earlier group left, which the lane masks keep out. Rows under eight columns take masked
// loads and whole stores (+0 past n: Plan::vlen leaves room).
// Bound: *m raised to the greatest |x| loaded (Ops::vsum_bound), one vrangeps per 16 floats
// (8 or 4 in the last blocks) down the rows of each block, then one into the row's accumulator. A
// signalling NaN comes out of vrangeps quiet, and the next value replaces a quiet NaN: so it
// drops only the values above it in its own column and block, and the accumulator, which only
// takes these quiet results, loses nothing.
template <int R, bool Bound = false>
IRRUN_AVX512 IRRUN_INLINE void vrow_avx512(const float* plane, const i64* off, i64 r_rt, i64 n,
                                           double* v, float* m = nullptr) {
  const i64 r = R > 0 ? R : r_rt;
  const float* p0 = plane + off[0];
  __m512 mx = _mm512_setzero_ps();
  __m256 mt = _mm256_setzero_ps();
  const auto track = [&](__m512& acc, __m512 x) IRRUN_AVX512_LAMBDA {
    if constexpr (Bound) acc = _mm512_range_ps(x, acc, 0x0B);
  };
  const auto track8 = [&](__m256& acc, __m256 x) IRRUN_AVX512_LAMBDA {
    if constexpr (Bound) acc = _mm256_range_ps(x, acc, 0x0B);
    return x;
  };
  const auto fold = [&]() IRRUN_AVX512_LAMBDA {
    if constexpr (Bound) {
      const __m256 h = _mm256_max_ps(_mm512_castps512_ps256(mx), _mm512_extractf32x8_ps(mx, 1));
      alignas(32) float l[8];
      _mm256_store_ps(l, _mm256_max_ps(h, mt));
      *m = fold_bound(l, *m);
    }
  };
  i64 i = 0;
  // Without a bound to track, rows of two blocks or more convert at 256 bits, four floats at a
  // time with the additions on the FMA pipes: this Zen 4 widens 6.6 floats a cycle so, 4.0 with
  // 512-bit conversions (round 24). S3's flat groups: 0.93-0.96 of the time; a single block
  // (S6's rows of 28) measured 1.02.
  if (!Bound && n >= 32)
    for (; i + 16 <= n; i += 16) {
      __m256d a[4];
      for (int b = 0; b < 4; ++b) a[b] = _mm256_cvtps_pd(_mm_loadu_ps(p0 + i + 4 * b));
      for (i64 j = 1; j < r; ++j) {
        const float* pj = plane + off[j] + i;
        for (int b = 0; b < 4; ++b)
          a[b] = add_fma256(a[b], _mm256_cvtps_pd(_mm_loadu_ps(pj + 4 * b)));
      }
      for (int b = 0; b < 4; ++b) _mm256_storeu_pd(v + i + 4 * b, a[b]);
    }
  // B blocks of 16 columns summed down the rows together. With a bound, strips of up to seven
  // blocks (112 columns), each row's B lines read in turn: S8's rows of 224 as two strips took
  // 0.947 of the time of one block at a time (round 41). Each block keeps its own bound register,
  // so a NaN in one block drops none of another's values (see above).
  const auto strip = [&]<int B>() IRRUN_AVX512_LAMBDA {
    __m512 f[B];
    __m512d a[2 * B];
    for (int b = 0; b < B; ++b) {
      f[b] = _mm512_setzero_ps();
      track(f[b], _mm512_loadu_ps(p0 + i + 16 * b));
      a[2 * b] = _mm512_cvtps_pd(_mm256_loadu_ps(p0 + i + 16 * b));
      a[2 * b + 1] = _mm512_cvtps_pd(_mm256_loadu_ps(p0 + i + 16 * b + 8));
    }
    for (i64 j = 1; j < r; ++j) {
      const float* pj = plane + off[j] + i;
      for (int b = 0; b < B; ++b) {
        track(f[b], _mm512_loadu_ps(pj + 16 * b));
        a[2 * b] = add_fma512(a[2 * b], _mm512_cvtps_pd(_mm256_loadu_ps(pj + 16 * b)));
        a[2 * b + 1] = add_fma512(a[2 * b + 1], _mm512_cvtps_pd(_mm256_loadu_ps(pj + 16 * b + 8)));
      }
    }
    for (int b = 0; b < B; ++b) {
      track(mx, f[b]);
      _mm512_storeu_pd(v + i + 16 * b, a[2 * b]);
      _mm512_storeu_pd(v + i + 16 * b + 8, a[2 * b + 1]);
    }
    i += 16 * B;
  };
  if constexpr (Bound) {
    while (n - i >= 16) {
      // clang-format off
      switch (std::min<i64>((n - i) / 16, 7)) {
        case 1: strip.template operator()<1>(); break;
        case 2: strip.template operator()<2>(); break;
        case 3: strip.template operator()<3>(); break;
        case 4: strip.template operator()<4>(); break;
        case 5: strip.template operator()<5>(); break;
        case 6: strip.template operator()<6>(); break;
        default: strip.template operator()<7>(); break;
      }
      // clang-format on
    }
  } else if (n - i >= 16) {  // rows of 16-31 columns
    strip.template operator()<1>();
  }
  if (i < n && n >= 8) {  // the last 1-15 columns: see above
    const auto block = [&](i64 c) IRRUN_AVX512_LAMBDA {
      __m256 f = _mm256_setzero_ps();
      __m512d a = _mm512_cvtps_pd(track8(f, _mm256_loadu_ps(p0 + c)));
      for (i64 j = 1; j < r; ++j)
        a = add_fma512(a, _mm512_cvtps_pd(track8(f, _mm256_loadu_ps(plane + off[j] + c))));
      track8(mt, f);
      _mm512_storeu_pd(v + c, a);
    };
    if (n - i > 8) block(i), i += 8;
    if (n - i <= 4) {  // four floats: one 256-bit conversion, not a whole block again
      const i64 c = n - 4;
      __m128 f4 = _mm_setzero_ps();
      const auto ld = [&](const float* p) IRRUN_AVX512_LAMBDA {
        const __m128 x = _mm_loadu_ps(p);
        if constexpr (Bound) f4 = _mm_range_ps(x, f4, 0x0B);
        return _mm256_cvtps_pd(x);
      };
      __m256d a4 = ld(p0 + c);
      for (i64 j = 1; j < r; ++j) a4 = _mm256_add_pd(a4, ld(plane + off[j] + c));
      track8(mt, _mm256_zextps128_ps256(f4));
      _mm256_storeu_pd(v + c, a4);
    } else {
      block(n - 8);
    }
    return fold();
  }
  for (; i < n; i += 8) {  // rows under eight columns: masked-off floats are not read
    const auto k = static_cast<__mmask16>(n - i >= 8 ? 0xFF : (1u << (n - i)) - 1);
    __m256 f = _mm256_setzero_ps();
    const auto load = [&](const float* p) IRRUN_AVX512_LAMBDA {
      return _mm512_cvtps_pd(track8(f, _mm512_castps512_ps256(_mm512_maskz_loadu_ps(k, p))));
    };
    __m512d a = load(p0 + i);
    for (i64 j = 1; j < r; ++j) a = add_fma512(a, load(plane + off[j] + i));
    track8(mt, f);
    // Masked-off lanes hold +0 (zero-masked loads): a full store keeps the zero padding past
    // the row (Plan::vlen leaves room) and avoids a slow masked store.
    _mm512_storeu_pd(v + i, a);
  }
  fold();
}

IRRUN_AVX512 void vsum_avx512(const float* plane, const i64* off, i64 r, i64 n, double* v) {
  vrow_avx512<0>(plane, off, r, n, v);
}

IRRUN_AVX512 void vsum_bound_avx512(const float* plane, const i64* off, i64 r, i64 n, double* v,
                                    float& m) {
  vrow_avx512<0, true>(plane, off, r, n, v, &m);
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
    if (r == 0) {
      std::fill(v, v + IW, 0.0);
    } else {
      with_row_count(r,
                     [&]<int R>() IRRUN_AVX512_LAMBDA { vrow_avx512<R>(a.plane, off, r, IW, v); });
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

// Equal bins of four columns that tile the row from its start (S6: 28x28 to 7x7), without V
// rows (bins4.hpp). A row's last 1-3 outputs are its last four again (those written twice get
// the same bits); rows under four outputs store masked.
template <int R>
IRRUN_AVX512 IRRUN_INLINE __m256d bin4_sums(const float* x, const i64* off, i64 r) {
  const i64 n = R > 0 ? R : r;
  __m256d v = _mm256_cvtps_pd(_mm_loadu_ps(x + off[0]));
  for (i64 j = 1; j < n; ++j) v = add_fma256(v, _mm256_cvtps_pd(_mm_loadu_ps(x + off[j])));
  return v;
}

template <bool Check>
IRRUN_AVX512 bool rows_bins4_avx512(const BandArgs& a) {
  const Plan& pl = *a.pl;
  const i64 OW = pl.g->out[2];
  const i64* begin = pl.row_begin.data();
  const double* inv_w = pl.inv_w.data();
  const __m256d t = _mm256_set1_pd(a.t), zero = _mm256_setzero_pd();
  const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFF));
  bool failed = false;
  for (i64 q = a.q0; q < a.q1; ++q) {
    prefetch_step(*a.next);
    const i64 r = begin[q + 1] - begin[q];
    const i64* off = pl.row_off.data() + begin[q];
    float* out = a.out_plane + q * OW;
    const __m256d rinv = _mm256_set1_pd(pl.row_rinv[static_cast<std::size_t>(q)]);
    __mmask8 fail = 0;
    // Scale, check and store the four sums s of outputs ow .. ow + 3 (`lanes` of them).
    const auto finish = [&](__m256d s, i64 ow, __mmask8 lanes) IRRUN_AVX512_LAMBDA {
      const __m256d w =
          lanes == 0xF ? _mm256_loadu_pd(inv_w + ow) : _mm256_maskz_loadu_pd(lanes, inv_w + ow);
      const __m128 y = _mm256_cvtpd_ps(_mm256_mask_fmadd_pd(s, 0xFF, _mm256_mul_pd(rinv, w), zero));
      if (lanes == 0xF)  // masked stores are slow on Zen 4
        _mm_storeu_ps(out + ow, y);
      else
        _mm_mask_storeu_ps(out + ow, lanes, y);
      if constexpr (Check)
        fail |= _mm256_mask_cmp_pd_mask(lanes, _mm256_and_pd(s, abs_mask), t, _CMP_NGE_UQ);
    };
    if (r == 0) {  // no input rows: every sum +0
      for (i64 ow = 0; ow < OW; ow += 4) finish(zero, ow, first_lanes(std::min<i64>(4, OW - ow)));
    } else if (OW >= 4) {
      with_row_count(r, [&]<int R>() IRRUN_AVX512_LAMBDA {
        const auto block = [&](i64 ow) IRRUN_AVX512_LAMBDA {
          const float* x = a.plane + 4 * ow;
          finish(bins4_taps(bin4_sums<R>(x, off, r), bin4_sums<R>(x + 4, off, r),
                            bin4_sums<R>(x + 8, off, r), bin4_sums<R>(x + 12, off, r)),
                 ow, 0xF);
        };
        i64 ow = 0;
        for (; ow + 4 <= OW; ow += 4) block(ow);
        if (ow < OW) block(OW - 4);
      });
    } else {  // one to three bins
      __m256d v[4] = {zero, zero, zero, zero};
      for (i64 b = 0; b < OW; ++b) v[b] = bin4_sums<0>(a.plane + 4 * b, off, r);
      finish(bins4_taps(v[0], v[1], v[2], v[3]), 0, first_lanes(OW));
    }
    if constexpr (Check) a.row_failed[q - a.q0] = fail != 0, failed |= fail != 0;
  }
  return failed;
}

IRRUN_AVX512 bool band_bins4_avx512(const BandArgs& a, const Ops&) {
  return a.unchecked ? rows_bins4_avx512<false>(a) : rows_bins4_avx512<true>(a);
}

template <HrowFn H>
struct BandAvx512 {
  static constexpr BandFn fn = band_avx512<H>;
};

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
// Where every output takes one factor (Plan::flat_one: include-pad), it stays in a register:
// a load of flat_r per block cost S3 1.15x the time. Exact: Ops::exact_band (T = 0, so only a
// NaN sum fails), no least |s| kept (S3 0.95), and vrun3's pairs share their common rows' sum
// (its Exact form with no gap between V rows: S3 0.978-0.991 of the time).
template <int K, int PAD = -1, bool Exact = false>
IRRUN_AVX512 bool band_flat_avx512(const BandArgs& a, const Ops&) {
  const Plan& pl = *a.pl;
  const i64 IW = pl.g->in[2];
  flat_vertical(a, [&](i64 r, const i64* off, i64 rows, double* v) IRRUN_AVX512_LAMBDA {
    const i64 n = rows * IW;
    if (r == 2) return vrow_avx512<2>(a.plane, off, r, n, v);
    if (r == 3 && vrun3_fits(off, IW)) return vrun3<4, Exact, 0>(a.plane + off[0], IW, rows, v);
    if (r == 3) return vrow_avx512<3>(a.plane, off, r, n, v);
    vrow_avx512<0>(a.plane, off, r, n, v);
  });

  const i64 taps = K > 0 ? K : pl.k_w;
  const i64 n_out = (a.q1 - a.q0) * IW;
  std::fill(a.row_failed, a.row_failed + (a.q1 - a.q0), false);
  const double* vp = a.v - pl.pad_left;
  const double* r = pl.flat_r.data() + a.q0 * IW;
  float* out = a.out_plane + a.q0 * IW;
  const __m512d t = _mm512_set1_pd(a.t), rone = _mm512_set1_pd(pl.flat_one);
  const bool one = pl.flat_one != 0;
  const std::uint64_t* lanes_begin = pl.flat_lanes.data();
  const std::uint64_t* lanes_end = lanes_begin + pl.mask_period * taps * 8;
  const std::uint8_t* kmask_end = pl.flat_kmask.data() + pl.mask_period * taps;
  // The first check waits for the group's end: each lane keeps its least |s| (vrangepd), and
  // total adds up the whole blocks' sums, which vrangepd drops where they are NaN: it is NaN or
  // infinite exactly when one of them is (finite sums of floats stay far from overflowing), and
  // rounds without a flag ({rn-sae}). Where a compare and its mask moves took four operations a
  // block (S3 0.92-0.94). Only a group that fails the check runs its horizontal pass again,
  // without storing, to flag the rows of its failed outputs. (On AVX2 the same change measured
  // 1.015-1.025: band_flat_avx2 checks each block.) A NaN accumulator s * 0 + nan had chained
  // the blocks on the FMA's four cycles (S3 0.965 of the time, round 66), an OR of vfpclasspd's
  // masks took two operations a block on the ports 0 and 5 that Intel's 512-bit work shares
  // (round 79: total and the masked additions below, S3 0.94-0.95).
  __m512d least = _mm512_set1_pd(std::numeric_limits<double>::infinity());
  __m512d total = _mm512_setzero_pd();
  unsigned bad = 0;  // the last partial block's
  // The next band's span, a line per block of the first pass (run_windows' prefetch_next).
  PrefetchRange pf = take_steps(*a.next, a.q1 - a.q0);
  const double* const v = a.v;  // in a register: the stores could alias a
  const auto pass = [&]<bool Flag>() IRRUN_AVX512_LAMBDA {
    const std::uint64_t* mk = lanes_begin;          // PAD < 0: lanes as 64-bit AND masks
    const std::uint8_t* km = pl.flat_kmask.data();  // PAD >= 0: the same lanes as bit masks
    __m512i prev = _mm512_castpd_si512(_mm512_loadu_pd(v - 8)),
            cur = _mm512_castpd_si512(_mm512_loadu_pd(v));
    // Outputs k .. k + 7 (Full) or the last 1-7 outputs of the group (their lanes masked); Pf:
    // with line k / 8 of the stream.
    const auto block = [&]<bool Full, bool Pf = false>(i64 k) IRRUN_AVX512_LAMBDA {
      const auto masked = [&](int j, __m512d x) IRRUN_AVX512_LAMBDA {
        if (j == PAD) return x;
        return _mm512_castsi512_pd(
            _mm512_and_si512(_mm512_castpd_si512(x), _mm512_loadu_si512(mk + 8 * j)));
      };
      __m512d s;
      if constexpr (PAD >= 0) {
        const __m512i next = _mm512_castpd_si512(_mm512_loadu_pd(v + k + 8));
        [&]<int... J>(std::integer_sequence<int, J...>) IRRUN_AVX512_LAMBDA {
          const auto tap = [&]<int O>() IRRUN_AVX512_LAMBDA {
            if constexpr (O < 0) return _mm512_castsi512_pd(_mm512_alignr_epi64(cur, prev, 8 + O));
            if constexpr (O > 0) return _mm512_castsi512_pd(_mm512_alignr_epi64(next, cur, O));
            if constexpr (O == 0) return _mm512_castsi512_pd(cur);
          };
          // Tap j lies in its own row in the lanes of mask j (every lane for the centre, j ==
          // PAD); a masked addition keeps s in the others, where an AND with the tap's lanes
          // added +0: the same sums but for the sign of a zero, which the scaling's + 0 drops.
          // The mask by kmovb from memory, a load: GCC went through a general register and a
          // kmovb on port 5.
          const auto lanes_in = [&](int j) IRRUN_AVX512_LAMBDA {
            __mmask8 m;
            asm("kmovb %1, %0" : "=k"(m) : "m"(km[j]));
            return m;
          };
          constexpr int first = PAD == 1 ? 2 : 1;  // the taps added by the fold below
          if constexpr (PAD == 0) {
            s = tap.template operator()<0>();
          } else if constexpr (PAD == 1) {
            const __m512d c = tap.template operator()<0>();
            s = _mm512_mask_add_pd(c, lanes_in(0), tap.template operator()<-1>(), c);
          } else {
            s = _mm512_maskz_mov_pd(lanes_in(0), tap.template operator()<-PAD>());
          }
          ((s = J < first ? s
                : J == PAD
                    ? _mm512_add_pd(s, tap.template operator()<J - PAD>())
                    : _mm512_mask_add_pd(s, lanes_in(J), s, tap.template operator()<J - PAD>())),
           ...);
        }
        (std::make_integer_sequence<int, K>{});
        prev = cur, cur = next;
      } else {  // whole loads (the V buffer's guards cover the reach), masked lanes ANDed to +0
        s = masked(0, _mm512_loadu_pd(vp + k));
        for (i64 j = 1; j < taps; ++j)
          s = _mm512_add_pd(s, masked(static_cast<int>(j), _mm512_loadu_pd(vp + k + j)));
      }
      if constexpr (PAD >= 0) {  // the next block's lanes, in the table its taps use
        if ((km += taps) == kmask_end) km = pl.flat_kmask.data();
      } else if ((mk += taps * 8) == lanes_end) {
        mk = lanes_begin;
      }
      const __mmask8 lanes = Full ? 0xFF : first_lanes(n_out - k);
      if constexpr (Flag) {  // rare: flag the rows of the failed lanes
        const unsigned fail = _mm512_mask_cmp_pd_mask(lanes, _mm512_abs_pd(s), t, _CMP_NGE_UQ);
        for (i64 l = 0; l < 8; ++l)
          if (fail >> l & 1) a.row_failed[(k + l) / IW] = true;
      } else if constexpr (Full) {  // finish8 with the factor fl(1 * r) = r: y = s * r
        if constexpr (Pf) _mm_prefetch(reinterpret_cast<const char*>(pf.p + 2 * k), _MM_HINT_T0);
        if (k % 16 == 0) prefetch_write(out + k, kOutAhead);
        scale_store8(s, one ? rone : load8(r + k), out + k);
        if (!Exact) least = _mm512_range_pd(least, s, 0x0A);
        total = _mm512_add_round_pd(total, s, kNearestQuiet);
      } else {
        scale_store8(s, one ? rone : load8(r + k, lanes), out + k, lanes);
        if (!Exact) least = _mm512_mask_range_pd(least, lanes, least, s, 0x0A);
        bad |= _mm512_mask_fpclass_pd_mask(lanes, s, kNonFinite);
      }
    };
    i64 k = 0;
    const i64 whole = n_out / 8 * 8,
              k_pf = Flag ? 0 : std::min(whole, (pf.end - pf.p + 15) / 16 * 8);
    for (; k < k_pf; k += 8) block.template operator()<true, true>(k);
    for (; k < whole; k += 8) block.template operator()<true>(k);
    if (k < n_out) block.template operator()<false>(k);
  };
  pass.template operator()<false>();
  bad |= _mm512_fpclass_pd_mask(total, kNonFinite);
  if ((_mm512_cmp_pd_mask(least, t, _CMP_NGE_UQ) | bad) == 0) return false;
  pass.template operator()<true>();
  return true;
}

// The period of rows of IW columns: the fewest rows whose outputs fill whole blocks of eight, 8 /
// gcd(IW, 8); and the lanes of the period's block b whose left (Left) or right tap lies in the
// lane's own row (all but those of a row's first or last column).
template <int IW>
constexpr int kPeriodRows = 8 / std::gcd(IW, 8);
template <int IW, bool Left>
constexpr int period_lanes(int b) {
  int m = 0xFF;
  for (int r = 0; r < kPeriodRows<IW>; ++r) {
    const int at = Left ? r * IW : r * IW + IW - 1;  // the row's first or last column
    if (at / 8 == b) m &= ~(1 << at % 8);
  }
  return m;
}

// Ops::exact_band of the flat groups of 3x3 "same" pools on rows of IW columns (kFlat3Widths, S3's
// 28; pick_exact_flat3_avx512), One: every output takes Plan::flat_one. band_flat_avx512<3, 1,
// true>'s vertical pass, taps and additions, its horizontal pass P = kPeriodRows rows at a time
// (two for S3): their outputs are whole blocks of eight, and only the blocks that hold a row's
// first or last column have a tap outside its row (S3: three of seven). Their lane masks are
// constants, in registers; the other blocks add without masks, and the rows' output lines are
// asked for a few at a time. band_flat_avx512 loads two masks a block from a table it walks, and
// tests each block for its output prefetch: with irrun bench on S3's model, this took 0.874 of
// the time at one thread and 0.883 at two; on 128 planes in L2, 0.840. Rows left after the last
// P take their masks from the same lanes, in a loop.
template <bool One, int IW>
IRRUN_AVX512 bool exact_flat3_avx512(const BandArgs& a, const Ops&) {
  constexpr int P = kPeriodRows<IW>, B = P * IW / 8;
  const Plan& pl = *a.pl;
  const i64 rows = a.q1 - a.q0;
  flat_vertical(a, [&](i64 r, const i64* off, i64 n_rows, double* vq) IRRUN_AVX512_LAMBDA {
    if (r == 3 && vrun3_fits(off, IW)) return vrun3<4, true, 0>(a.plane + off[0], IW, n_rows, vq);
    with_row_count(
        r, [&]<int R>() IRRUN_AVX512_LAMBDA { vrow_avx512<R>(a.plane, off, r, n_rows * IW, vq); });
  });
  const double* v = a.v;
  const double* r = pl.flat_r.data() + a.q0 * IW;
  float* out = a.out_plane + a.q0 * IW;
  const __m512d rone = _mm512_set1_pd(pl.flat_one);
  PrefetchRange pf = take_steps(*a.next, rows);
  __m512d total = _mm512_setzero_pd();
  __m512i prev = _mm512_castpd_si512(_mm512_loadu_pd(v - 8)),
          cur = _mm512_castpd_si512(_mm512_loadu_pd(v));
  // Outputs k .. k + 7 of the rows at v, out, r (the lanes of `lanes`); their left taps in lanes
  // L, their right taps in lanes R (0xFF: no mask); Pf: with line k / 8 of the stream.
  const auto block = [&]<int L, int R, bool Pf>(i64 k, __mmask8 lanes = 0xFF, __mmask8 l = L,
                                                __mmask8 rt = R) __attribute__((always_inline))
  IRRUN_AVX512_LAMBDA {
    const __m512i next = _mm512_castpd_si512(_mm512_loadu_pd(v + k + 8));
    const __m512d c = _mm512_castsi512_pd(cur);
    const __m512d left = _mm512_castsi512_pd(_mm512_alignr_epi64(cur, prev, 7));
    const __m512d right = _mm512_castsi512_pd(_mm512_alignr_epi64(next, cur, 1));
    __m512d s = L == 0xFF ? _mm512_add_pd(left, c) : _mm512_mask_add_pd(c, l, left, c);
    s = R == 0xFF ? _mm512_add_pd(s, right) : _mm512_mask_add_pd(s, rt, s, right);
    prev = cur, cur = next;
    if constexpr (Pf) _mm_prefetch(reinterpret_cast<const char*>(pf.p + 2 * k), _MM_HINT_T0);
    scale_store8(s, One ? rone : load8(r + k, lanes), out + k, lanes);
    if (lanes == 0xFF)
      total = _mm512_add_round_pd(total, s, kNearestQuiet);
    else
      total = _mm512_mask_add_round_pd(total, lanes, total, s, kNearestQuiet);
  };
  const auto period = [&]<bool Pf>() __attribute__((always_inline)) IRRUN_AVX512_LAMBDA {
    for (i64 c = 0; c < P * IW; c += 16) prefetch_write(out + c, kOutAhead);
    [&]<int... J>(std::integer_sequence<int, J...>) __attribute__((always_inline))
    IRRUN_AVX512_LAMBDA {
      (block.template operator()<period_lanes<IW, true>(J), period_lanes<IW, false>(J), Pf>(8 * J),
       ...);
    }
    (std::make_integer_sequence<int, B>{});
    v += P * IW, r += P * IW, out += P * IW;
    if constexpr (Pf) pf.p += 2 * P * IW;
  };
  i64 q = 0;
  // Periods with their share of the stream (a difference: both pointers are null without one).
  for (; q + P <= rows && pf.end - pf.p >= 2 * P * IW; q += P) period.template operator()<true>();
  for (; q + P <= rows; q += P) period.template operator()<false>();
  if (q < rows) {  // the first rows of a period, the masks from a table
    static constexpr auto lanes = [] {
      std::array<std::uint8_t, 2 * B> m{};
      for (int b = 0; b < B; ++b) {
        m[2 * b] = static_cast<std::uint8_t>(period_lanes<IW, true>(b));
        m[2 * b + 1] = static_cast<std::uint8_t>(period_lanes<IW, false>(b));
      }
      return m;
    }();
    const i64 n = (rows - q) * IW;
    for (i64 k = 0; k < n; k += 8)
      block.template operator()<0, 0, false>(k, first_lanes(n - k), lanes[k / 4], lanes[k / 4 + 1]);
  }
  return _mm512_fpclass_pd_mask(total, kNonFinite) != 0;
}

// The widths exact_flat3_avx512 is built for: rows of 8N and 8N + 4, periods of one and two rows.
// Narrower periods hold a row's first or last column in most blocks (17: 16 of a period's 17),
// where the constant masks gained nothing and the long unrolled periods cost (irrun bench, 3x3
// "same": rows of 17 1.065x the time, 35 1.035x; 8 0.846, 28 0.874).
constexpr int kFlat3Widths[] = {8, 12, 16, 20, 24, 28, 32, 36, 40, 44, 48, 52, 56, 60, 64};

// exact_flat3_avx512 for pl's rows, if they fit it (3x3 "same" on rows of one of kFlat3Widths;
// the vertical pass takes its runs of rows as band_flat_avx512 does), else nullptr.
BandFn pick_exact_flat3_avx512(const Plan& pl) {
  if (pl.k_w != 3 || pl.pad_left != 1) return nullptr;
  const i64 IW = pl.g->in[2];
  const bool one = pl.flat_one != 0;
  return [&]<std::size_t... I>(std::index_sequence<I...>) {
    BandFn f = nullptr;
    ((f = IW == kFlat3Widths[I] ? one ? exact_flat3_avx512<true, kFlat3Widths[I]>
                                      : exact_flat3_avx512<false, kFlat3Widths[I]>
                                : f),
     ...);
    return f;
  }
  (std::make_index_sequence<std::size(kFlat3Widths)>{});
}

// Rows of stride-2 windows of K = 3 taps with one pad column on the left (3x3 s2 p1 pools, S1,
// S5) or K = 2 taps without (2x2 s2, S2). The vertical sums of 16 columns stay in two registers
// and the horizontal taps come from them: the even and odd columns, and for K = 3 the previous
// block's last odd column (+0 at the row's start, like the padded V row). No V row is stored or
// reloaded; the same additions in the same order as vrow_avx512 then hrow_s2_avx512<K>, so the
// same bits. rows[j] points at the j-th input row of the window (r of them).
// P = 2: two output rows of 3-row windows where the first row's last input row is the second
// one's first (3x3 s2, S1): rows[0..2] are the first row's, rows[2..4] the second's, and the
// shared row is converted once. Each row gets its own additions in its own order, so the bits
// of P = 1. Returns a mask of the rows with an output that failed the check against t_s.
// Own: no check against t_s; it waits for the bound, and the group then checks the stored
// outputs (own_check_outputs): the loads raise `bits` (P = 2: all but rows[0], the last row of the
// pair before, or tracked by run_s2_avx512).
template <int K, bool Own, int R, int P = 1, bool Pf = false, bool Track = true>
IRRUN_AVX512 IRRUN_INLINE int row_s2_avx512(const float* const* rows, i64 r_rt, i64 IW, i64 OW,
                                            const double* inv_w, const double* rinv_s, double t_s,
                                            float* const* out, LoadBits& bits_io,
                                            PrefetchRange pf = {}) {
  static_assert(K == 2 || K == 3);
  static_assert(P == 1 || (P == 2 && R == 3));
  const i64 r = R >= 0 ? R : r_rt;
  const __m512i even = _mm512_set_epi64(14, 12, 10, 8, 6, 4, 2, 0);
  const __m512i odd = _mm512_set_epi64(15, 13, 11, 9, 7, 5, 3, 1);
  LoadBits bits{};  // in registers (see row_s1_avx512)
  if constexpr (Own) bits = bits_io;
  const __m512d t = _mm512_set1_pd(t_s);
  __m512d rinv[P];
  __m512i left[P];
  __mmask8 fail[P];
  for (int p = 0; p < P; ++p)
    rinv[p] = _mm512_set1_pd(rinv_s[p]), left[p] = _mm512_setzero_si512(), fail[p] = 0;
  const auto finish = [&](int p, __m512d a0, __m512d a1, i64 ow,
                          __mmask8 lanes) IRRUN_AVX512_LAMBDA {
    const __m512i e = _mm512_castpd_si512(_mm512_permutex2var_pd(a0, even, a1));
    const __m512i o = _mm512_castpd_si512(_mm512_permutex2var_pd(a0, odd, a1));
    __m512d s = _mm512_castsi512_pd(e);
    if constexpr (K == 3)  // the odd column before each even one, the even, then the odd
      s = _mm512_add_pd(_mm512_castsi512_pd(_mm512_alignr_epi64(o, left[p], 7)), s);
    s = _mm512_add_pd(s, _mm512_castsi512_pd(o));
    left[p] = o;
    if constexpr (Own) {
      store8(s, rinv[p], inv_w + ow, out[p] + ow, lanes);
    } else {
      fail[p] = finish8(s, rinv[p], inv_w + ow, t, fail[p], out[p] + ow, lanes);
    }
  };
  // The j-th input row of output row p.
  const auto row = [&](int p, i64 j) IRRUN_AVX512_LAMBDA { return rows[p * 2 + j]; };
  const auto whole = [&](const float* x, bool track = true) IRRUN_AVX512_LAMBDA {
    const __m256 f = _mm256_loadu_ps(x);
    if (Own && Track && track) track_bits(bits, f);
    return _mm512_cvtps_pd(f);
  };
  // Outputs ow .. ow + 7 of the one row (P = 1), from input columns 2 * ow on.
  const auto whole_block = [&](i64 ow) IRRUN_AVX512_LAMBDA {
    const i64 c = 2 * ow;
    __m512d a0 = whole(rows[0] + c), a1 = whole(rows[0] + c + 8);
    for (i64 j = 1; j < r; ++j) {
      a0 = add_fma512(a0, whole(rows[j] + c));
      a1 = add_fma512(a1, whole(rows[j] + c + 8));
    }
    finish(0, a0, a1, ow, 0xFF);
  };
  i64 ow = 0, c = 0;
  LoadBits16 bits16{_mm512_setzero_si512(), _mm512_setzero_si512()};
  if (r > 0)
    for (; ow + 8 <= OW && c + 16 <= IW; ow += 8, c += 16) {  // whole blocks: no masks
      if constexpr (Pf) prefetch_lines<5>(pf);
      if constexpr (P == 2) {
        if constexpr (Own && Track)
          for (int j = 1; j < 5; ++j) track16(bits16, rows[j] + c);
        const auto w = [&](const float* x) IRRUN_AVX512_LAMBDA {  // tracked above
          return _mm512_cvtps_pd(_mm256_loadu_ps(x));
        };
        const __m512d m0 = w(rows[2] + c), m1 = w(rows[2] + c + 8);  // the shared row
        __m512d a0 = add_fma512(w(rows[0] + c), w(rows[1] + c));
        __m512d a1 = add_fma512(w(rows[0] + c + 8), w(rows[1] + c + 8));
        a0 = add_fma512(a0, m0), a1 = add_fma512(a1, m1);
        __m512d b0 = add_fma512(m0, w(rows[3] + c)), b1 = add_fma512(m1, w(rows[3] + c + 8));
        b0 = add_fma512(b0, w(rows[4] + c)), b1 = add_fma512(b1, w(rows[4] + c + 8));
        finish(0, a0, a1, ow, 0xFF);
        finish(1, b0, b1, ow, 0xFF);
      } else {
        whole_block(ow);
      }
    }
  // K = 2 carries nothing from block to block: a row tail whose windows lie inside the row is
  // the row's last eight outputs computed whole (those already written get the same bits again)
  // instead of a masked block. Masked stores are slow on AMD Zen 4, where S2 (28 outputs a row)
  // spent a quarter of its row time in its tails.
  if constexpr (K == 2 && P == 1)
    if (r > 0 && ow < OW && OW >= 8 && 2 * OW <= IW) {
      whole_block(OW - 8);
      ow = OW;
    }
  // The row's last blocks: masked-off floats are not read and add as +0 (a ceil window can
  // start past the row).
  const auto load = [&](const float* x, __mmask16 m) IRRUN_AVX512_LAMBDA {
    const __m256 f = _mm512_castps512_ps256(_mm512_maskz_loadu_ps(m, x));
    if (Own && Track) track_bits(bits, f);
    return _mm512_cvtps_pd(f);
  };
  for (c = 2 * ow; ow < OW; ow += 8, c += 16)
    for (int p = 0; p < P; ++p) {
      __m512d a0 = _mm512_setzero_pd(), a1 = a0;
      if (r > 0) {
        const i64 n = std::max<i64>(0, IW - c);
        const auto m0 = static_cast<__mmask16>(n >= 8 ? 0xFF : (1u << n) - 1);
        const auto m1 = static_cast<__mmask16>(n >= 16 ? 0xFF : n <= 8 ? 0 : (1u << (n - 8)) - 1);
        a0 = load(row(p, 0) + c, m0);
        a1 = load(row(p, 0) + c + 8, m1);
        for (i64 j = 1; j < r; ++j) {
          a0 = add_fma512(a0, load(row(p, j) + c, m0));
          a1 = add_fma512(a1, load(row(p, j) + c + 8, m1));
        }
      }
      finish(p, a0, a1, ow, first_lanes(OW - ow));
    }
  if constexpr (Pf)
    while (pf.p < pf.end) prefetch_lines<1>(pf);
  if constexpr (Own && Track) bits_io = fold_bits(bits, bits16);
  int failed = 0;
  for (int p = 0; p < P; ++p) failed |= (fail[p] != 0) << p;
  return failed;
}

// One 2x2 s2 row of two input rows (S2) at 256 bits: the operations of row_s2_avx512<2, false, 2>
// (r0 + r1 per column, then the even column plus the odd one, scaled by one FMA) four outputs at
// a time, each input float loaded 128 bits wide and converted at 256 bits, the faster width on
// Zen 4 (round 24). Unpacking columns 0-3 and 4-7 gives outputs 0, 2, 1, 3, put in order before
// the scaling. Where 512-bit conversions and permutes took this row, S2's rows took 1.2x longer
// (round 38). Returns whether an output failed the check against t_s (Check: else no check).
// EqualW: every column factor inv_w[ow] is the same (Plan::equal_w), so is every product
// fl(rinv * inv_w[ow]): one for the row, none per block.
template <bool Check, bool EqualW>
IRRUN_AVX512 IRRUN_INLINE bool row_2x2_avx512(const float* r0, const float* r1, i64 IW, i64 OW,
                                              const double* inv_w, double rinv_s, double t_s,
                                              float* out) {
  const __m256d rinv = _mm256_set1_pd(rinv_s), t = _mm256_set1_pd(t_s), zero = _mm256_setzero_pd();
  const __m256d r_row = _mm256_set1_pd(rinv_s * inv_w[0]);
  const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7FFFFFFFFFFFFFFF));
  __mmask8 fail = 0;
  // Outputs ow .. ow + 3 (those of `lanes`), from columns 2 * ow on; masked-off floats are not
  // read and add as +0 (a ceil window can start past the row).
  const auto block = [&](i64 ow, __mmask8 lanes, __mmask8 m0, __mmask8 m1) IRRUN_AVX512_LAMBDA {
    const i64 c = 2 * ow;
    const auto wide = [&](const float* x, __mmask8 m) IRRUN_AVX512_LAMBDA {
      return _mm256_cvtps_pd(m == 0xF ? _mm_loadu_ps(x) : _mm_maskz_loadu_ps(m, x));
    };
    const __m256d a = add_fma256(wide(r0 + c, m0), wide(r1 + c, m0));
    const __m256d b = add_fma256(wide(r0 + c + 4, m1), wide(r1 + c + 4, m1));
    // Outputs 0, 2, 1, 3; put in order after the scaling where it takes one factor (EqualW),
    // in four floats (an in-lane shuffle) instead of four doubles (a cross-lane permute).
    __m256d s = _mm256_add_pd(_mm256_unpacklo_pd(a, b), _mm256_unpackhi_pd(a, b));
    if (!EqualW) s = _mm256_permute4x64_pd(s, 0xD8);
    const __m256d r =
        EqualW ? r_row
               : _mm256_mul_pd(rinv, lanes == 0xF ? _mm256_loadu_pd(inv_w + ow)
                                                  : _mm256_maskz_loadu_pd(lanes, inv_w + ow));
    __m128 y = _mm256_cvtpd_ps(_mm256_mask_fmadd_pd(s, 0xFF, r, zero));
    if (EqualW) y = _mm_shuffle_ps(y, y, 0xD8);
    if (lanes == 0xF) {
      _mm_storeu_ps(out + ow, y);
      if (Check) fail |= _mm256_cmp_pd_mask(_mm256_and_pd(s, abs_mask), t, _CMP_NGE_UQ);
    } else {
      _mm_mask_storeu_ps(out + ow, lanes, y);
      // EqualW: s holds outputs 0, 2, 1, 3, and so must the lanes checked.
      const auto s_lanes =
          EqualW ? static_cast<__mmask8>((lanes & 9) | (lanes & 2) << 1 | (lanes & 4) >> 1) : lanes;
      if (Check)
        fail |= _mm256_mask_cmp_pd_mask(s_lanes, _mm256_and_pd(s, abs_mask), t, _CMP_NGE_UQ);
    }
  };
  i64 ow = 0;
  for (; ow + 4 <= OW && 2 * ow + 8 <= IW; ow += 4) block(ow, 0xF, 0xF, 0xF);
  // A tail whose windows lie inside the row: the row's last four outputs, whole (those already
  // written get the same bits again); masked stores are slow on Zen 4.
  if (ow < OW && OW >= 4 && 2 * OW <= IW) return block(OW - 4, 0xF, 0xF, 0xF), fail != 0;
  for (; ow < OW; ow += 4) {
    const auto lanes = [](i64 k) { return first_lanes(std::clamp<i64>(k, 0, 4)); };
    block(ow, lanes(OW - ow), lanes(IW - 2 * ow), lanes(IW - 2 * ow - 4));
  }
  return fail != 0;
}

// row_2x2_avx512 for the band: unchecked where it is checked after, one factor per row where
// the column factors are equal.
IRRUN_AVX512 IRRUN_INLINE bool row_2x2(const BandArgs& a, const float* r0, const float* r1,
                                       double rinv, float* out) {
  const Plan& pl = *a.pl;
  const i64 IW = pl.g->in[2], OW = pl.g->out[2];
  const double* w = pl.inv_w.data();
  if (a.unchecked)
    return pl.equal_w ? row_2x2_avx512<false, true>(r0, r1, IW, OW, w, rinv, 0, out)
                      : row_2x2_avx512<false, false>(r0, r1, IW, OW, w, rinv, 0, out);
  return pl.equal_w ? row_2x2_avx512<true, true>(r0, r1, IW, OW, w, rinv, a.t, out)
                    : row_2x2_avx512<true, false>(r0, r1, IW, OW, w, rinv, a.t, out);
}

// Ops::planes for 2x2 s2 windows of two input rows each (S2): row_2x2_avx512 on every row of
// the chunk's planes, unchecked, in one loop (per row, run_windows and band_s2_avx512 took their
// dispatch and set-up: S2 0.965-0.968 of the time; 1.010 with the factor read once per call, a
// layout effect).
template <bool EqualW>
IRRUN_AVX512 void planes_2x2(const Plan& pl, const float* x, float* y, i64 count) {
  const i64 IW = pl.g->in[2], OW = pl.g->out[2], rows = pl.g->out[0] * pl.g->out[1];
  const i64 in = pl.g->in_plane_size();
  const double* w = pl.inv_w.data();
  for (i64 p = 0; p < count; ++p, x += in) {
    const float* r0 = x + pl.row_off[0];  // one run of rows (Plan::step_end): no table loads
    for (i64 q = 0; q < rows; ++q, y += OW, r0 += pl.row_step)
      row_2x2_avx512<false, EqualW>(r0, r0 + IW, IW, OW, w, pl.row_rinv[q], 0, y);
  }
}

IRRUN_AVX512 void planes_2x2_avx512(const Plan& pl, const float* x, float* y, i64 count) {
  pl.equal_w ? planes_2x2<true>(pl, x, y, count) : planes_2x2<false>(pl, x, y, count);
}

// Rows q0 .. q1 - 1 of one run (Plan::step_end), each summing R input rows (R < 0: r): the row
// pointers advance by Plan::row_step. Runs of 3-row windows whose last row is the next window's
// first go two rows at a time (row_s2_avx512<K, 3, 2>: S1 in 0.90 of the time, scripts/ab).
// Own: the rows' loads tracked in bits, their outputs checked by the group (own_check_outputs);
// `loaded`: the group before loaded the run's rows up to q0's (own_continues).
template <int K, bool Own, int R, bool Track>
IRRUN_AVX512 bool run_s2_avx512(const BandArgs& a, i64 q0, i64 q1, i64 r, LoadBits& bits,
                                bool loaded) {
  const Plan& pl = *a.pl;
  const i64 IW = pl.g->in[2], OW = pl.g->out[2], step = pl.row_step;
  const i64 n = R > 0 ? R : r;  // a constant count keeps the pointers in registers
  const float* rows[R > 0 ? R : kFusedMaxRows];
  const i64* off = pl.row_off.data() + pl.row_begin[static_cast<std::size_t>(q0)];
  for (i64 j = 0; j < n; ++j) rows[j] = a.plane + off[j];
  const double* rinv = pl.row_rinv.data();
  bool failed = false;
  // Without Own: the flags of rows with a failed output.
  const auto keep = [&](i64 q, int f, int count) IRRUN_AVX512_LAMBDA {
    if constexpr (Own) return;
    for (int p = 0; p < count; ++p) a.row_failed[q + p - a.q0] = (f >> p & 1) != 0;
    failed |= f != 0;
  };
  i64 q = q0;
  if constexpr (R == 3)
    if (off[2] == off[0] + step && q + 1 < q1) {
      if (Own && Track && !loaded) track_row(bits, rows[0], IW);  // the pairs track rows 1-4
      for (; q + 1 < q1; q += 2) {
        prefetch_step(*a.next);
        prefetch_step(*a.next);
        const float* pair[5] = {rows[0], rows[1], rows[2], rows[1] + step, rows[2] + step};
        float* out[2] = {a.out_plane + q * OW, a.out_plane + (q + 1) * OW};
        const int f = row_s2_avx512<K, Own, 3, 2, false, Track>(pair, r, IW, OW, pl.inv_w.data(),
                                                                rinv + q, a.t, out, bits);
        keep(q, f, 2);
        for (i64 j = 0; j < n; ++j) rows[j] += 2 * step;
      }
    }
  for (; q < q1; ++q) {
    float* out = a.out_plane + q * OW;
    // A streamed next band (S5) is prefetched a few lines per block: a row's worth at once
    // stalled on the miss buffers. Where nothing streams (S1, S2), the test per block cost 2-3%.
    if (a.next->left > 0)
      keep(q,
           row_s2_avx512<K, Own, R, 1, true, Track>(rows, r, IW, OW, pl.inv_w.data(), rinv + q, a.t,
                                                    &out, bits, take_steps(*a.next, 1)),
           1);
    else if constexpr (K == 2 && R == 2 && !Own)
      keep(q, row_2x2(a, rows[0], rows[1], rinv[q], out), 1);
    else
      keep(q,
           row_s2_avx512<K, Own, R, 1, false, Track>(rows, r, IW, OW, pl.inv_w.data(), rinv + q,
                                                     a.t, &out, bits),
           1);
    for (i64 j = 0; j < n; ++j) rows[j] += step;
  }
  return failed;
}

// Own without Track (Ops::exact_band): the outputs stored unchecked, no load tracked, and then
// whether one is NaN.
template <int K, bool Own, bool Track = true>
IRRUN_AVX512 bool band_s2_avx512(const BandArgs& a, const Ops&) {
  const Plan& pl = *a.pl;
  LoadBits bits = Own && Track ? own_bits(*a.own) : LoadBits{};  // untouched without
  bool loaded = Own && Track && own_continues(a), failed = false;
  for (i64 q = a.q0; q < a.q1;) {
    const i64 q_end = std::min(a.q1, pl.step_end[static_cast<std::size_t>(q)]);
    const i64 r =
        pl.row_begin[static_cast<std::size_t>(q) + 1] - pl.row_begin[static_cast<std::size_t>(q)];
    switch (r) {  // the common row counts unrolled at compile time
      case 2:
        failed |= run_s2_avx512<K, Own, 2, Track>(a, q, q_end, r, bits, loaded);
        break;
      case 3:
        failed |= run_s2_avx512<K, Own, 3, Track>(a, q, q_end, r, bits, loaded);
        break;
      case 6:  // 3x3x3 windows (S5): 3x3 rows inside, 2x3 at the edges
        failed |= run_s2_avx512<K, Own, 6, Track>(a, q, q_end, r, bits, loaded);
        break;
      case 9:
        failed |= run_s2_avx512<K, Own, 9, Track>(a, q, q_end, r, bits, loaded);
        break;
      default:  // select_avx512 takes this path for windows of up to kFusedMaxRows rows
        failed |= run_s2_avx512<K, Own, -1, Track>(a, q, q_end, r, bits, loaded);
    }
    q = q_end, loaded = false;
  }
  if constexpr (Own && !Track) return !a.nan_later && has_nan_output(a);
  return Own ? own_check_outputs(a, bits, all_above_avx512) : failed;
}

// Rows of stride-1 windows of K columns with PAD pad columns on the left (K = 3, 5, 7; PAD 0 or
// (K - 1) / 2), too wide for flat groups (S9: 5x5 "same" on rows of 1024). The vertical sums of
// eight columns stay in a register, and the horizontal taps are shifted out of it and its two
// neighbours (valignq; +0 outside the row, like the padded V row): no V row is stored or
// reloaded. R = -1, P = 1: one output row of r_rt input rows, rows[j] its j-th. R > 0: P output
// rows whose windows are R consecutive input rows, rows[i] the i-th of their R + P - 1 rows,
// each converted once for all of them. Every row gets vrow_avx512's then hrow_s1_avx512<K>'s
// additions in their order, so the same bits.
// The check waits for the bound: the rows' loads raise `bits` (R > 0: only the last P input
// rows, the others were loaded by the pass before or by run_s1_avx512), and least[p] takes,
// lane by lane, the least |s| of row p (own_bound.hpp).
// Full: inv_w is Plan::full_r, and the blocks of `mid` take its one factor from a register (S9:
// 0.975 of the time with a load per block). The plan holds it: in an exact band
// (Ops::exact_band) the rounded product fl(full_rinv * inv_w) would raise the precision flag
// and fail the band (S9 1.07 of the time, the same bits).
struct MidFactor {
  double r = 0;
  i64 lo = 0, hi = 0;
};

template <int K, int PAD, int R, int P, bool Full = false, bool Track = true>
IRRUN_AVX512 IRRUN_INLINE void row_s1_avx512(const float* const* rows, i64 r_rt, i64 IW, i64 OW,
                                             const double* inv_w, const double* rinv_s,
                                             float* const* out, LoadBits& bits_io, __m512d* least,
                                             PrefetchRange pf, MidFactor mid = {}) {
  static_assert(PAD <= 8 && K - 1 - PAD <= 8 && (R > 0 || P == 1));
  constexpr int kIn = R > 0 ? R + P - 1 : 1;
  // A local copy stays in registers: through the reference, every update went to memory (the
  // output stores may alias it: __m256i may alias anything).
  LoadBits bits = bits_io;
  __m512d rinv[P];
  const __m512d rmid = _mm512_set1_pd(mid.r);
  __m512i prev[P], cur[P], next[P];
  for (int p = 0; p < P; ++p)
    rinv[p] = _mm512_set1_pd(rinv_s[p]),
    least[p] = _mm512_set1_pd(std::numeric_limits<double>::infinity());
  // The vertical sums of columns c .. c + 7 into v[]; m masks the columns inside the row.
  const auto vblock = [&]<bool Whole>(i64 c, __mmask16 m, __m512i* v) IRRUN_AVX512_LAMBDA {
    const auto load = [&](const float* x, bool track) IRRUN_AVX512_LAMBDA {
      __m256 f;
      if constexpr (Whole)
        f = _mm256_loadu_ps(x + c);
      else
        f = _mm512_castps512_ps256(_mm512_maskz_loadu_ps(m, x + c));
      if (Track && track) track_bits(bits, f);
      return _mm512_cvtps_pd(f);
    };
    if constexpr (R > 0) {
      __m512d x[kIn], a[P];
      for (int i = 0; i < kIn; ++i) x[i] = load(rows[i], i >= R - 1);
      for (int p = 0; p < P; ++p) {
        a[p] = x[p];
        for (int j = 1; j < R; ++j) a[p] = add_fma512(a[p], x[p + j]);
        v[p] = _mm512_castpd_si512(a[p]);
      }
    } else {
      __m512d a = r_rt > 0 ? load(rows[0], true) : _mm512_setzero_pd();
      for (i64 j = 1; j < r_rt; ++j) a = add_fma512(a, load(rows[j], true));
      v[0] = _mm512_castpd_si512(a);
    }
  };
  // Outputs ow .. ow + 7 of every row from prev, cur and next (columns ow - 8 .. ow + 15).
  const auto hblock = [&](i64 ow, __mmask8 lanes) IRRUN_AVX512_LAMBDA {
    for (int p = 0; p < P; ++p) {
      const auto tap = [&]<int O>() IRRUN_AVX512_LAMBDA {
        if constexpr (O < 0)
          return _mm512_castsi512_pd(_mm512_alignr_epi64(cur[p], prev[p], 8 + O));
        if constexpr (O > 0) return _mm512_castsi512_pd(_mm512_alignr_epi64(next[p], cur[p], O));
        if constexpr (O == 0) return _mm512_castsi512_pd(cur[p]);
      };
      __m512d s = tap.template operator()<-PAD>();
      [&]<int... J>(std::integer_sequence<int, J...>) IRRUN_AVX512_LAMBDA {
        ((s = _mm512_add_pd(s, tap.template operator()<J + 1 - PAD>())), ...);
      }
      (std::make_integer_sequence<int, K - 1>{});
      if constexpr (Full)  // inv_w is Plan::full_r: the factors fl(rinv * inv_w) themselves
        scale_store8(s, ow >= mid.lo && ow < mid.hi ? rmid : load8(inv_w + ow, lanes), out[p] + ow,
                     lanes);
      else
        store8(s, rinv[p], inv_w + ow, out[p] + ow, lanes);
      // One vrangepd (least magnitude, sign cleared) for an abs and a min.
      if constexpr (Track)
        least[p] = lanes == 0xFF ? _mm512_range_pd(least[p], s, 0x0A)
                                 : _mm512_mask_range_pd(least[p], lanes, least[p], s, 0x0A);
      prev[p] = cur[p], cur[p] = next[p];
    }
  };
  for (int p = 0; p < P; ++p) prev[p] = _mm512_setzero_si512();
  const auto mask = [&](i64 c) IRRUN_AVX512_LAMBDA {
    return static_cast<__mmask16>(c >= IW ? 0 : IW - c >= 8 ? 0xFF : (1u << (IW - c)) - 1);
  };
  if (IW >= 8)
    vblock.template operator()<true>(0, 0xFF, cur);
  else
    vblock.template operator()<false>(0, mask(0), cur);
  i64 ow = 0;
  for (; ow + 8 <= OW && ow + 16 <= IW; ow += 8) {  // whole blocks: no masks
    // Two lines per block: S9's groups of four rows take about 2.25 (their 128 blocks and the
    // next band's 288 lines); the rest goes at the end. Computed per geometry, 1.03 of the time.
    prefetch_lines<2>(pf);
    // And two lines of the next pass's four output rows into L2: the stores waited for each
    // line from memory (S9 0.92 of the time; the same rows 128 columns ahead: no gain).
    if constexpr (P > 1) prefetch_out4(out[0] + P * OW, OW, ow);
    vblock.template operator()<true>(ow + 8, 0xFF, next);
    hblock(ow, 0xFF);
  }
  for (; ow < OW; ow += 8) {  // the row's last blocks: columns past the row add as +0
    // A block wholly past the row is +0 (what its masked loads would sum): its loads, widenings
    // and additions were half of the work of narrow rows (IW 7, a 3-D 2x7x7 window).
    if (ow + 8 >= IW)
      for (int p = 0; p < P; ++p) next[p] = _mm512_setzero_si512();
    else
      vblock.template operator()<false>(ow + 8, mask(ow + 8), next);
    hblock(ow, first_lanes(OW - ow));
  }
  while (pf.p < pf.end) prefetch_lines<1>(pf);
  bits_io = bits;
}

// Rows q0 .. q1 - 1 of one run (Plan::step_end), r input rows each. R > 0: the windows are R
// consecutive input rows and the run steps by one row, so four output rows share the
// conversions of their R + 3 input rows. Each row's least |s| is kept for own_check.
// Without Track, no load is tracked (Ops::exact_band).
template <int K, int PAD, int R, bool Track>
IRRUN_AVX512 void run_s1_avx512(const BandArgs& a, i64 q0, i64 q1, i64 r, LoadBits& bits,
                                bool loaded) {
  constexpr int kP = kFusedRows;
  const Plan& pl = *a.pl;
  const i64 IW = pl.g->in[2], OW = pl.g->out[2], step = pl.row_step;
  const float* rows[R > 0 ? R + kP - 1 : kFusedMaxRows];
  const i64* off = pl.row_off.data() + pl.row_begin[static_cast<std::size_t>(q0)];
  for (i64 j = 0; j < (R > 0 ? R + kP - 1 : r); ++j)
    rows[j] = a.plane + (R > 0 ? off[0] + j * IW : off[j]);
  const double* rinv = pl.row_rinv.data();
  __m512d least[kP];
  i64 q = q0;
  if constexpr (R > 0) {
    // The rows of the first pass that row_s1_avx512 does not track, unless the group before
    // loaded them (`loaded`).
    if (Track && q + kP <= q1 && !loaded)
      for (int j = 0; j < R - 1; ++j) track_row(bits, rows[j], IW);
    for (; q + kP <= q1; q += kP) {
      float* out[kP];
      for (int p = 0; p < kP; ++p) out[p] = a.out_plane + (q + p) * OW;
      if (std::all_of(rinv + q, rinv + q + kP, [&](double v) { return v == pl.full_rinv; }))
        row_s1_avx512<K, PAD, R, kP, true, Track>(rows, r, IW, OW, pl.full_r.data(), rinv + q, out,
                                                  bits, least, take_steps(*a.next, kP),
                                                  {pl.full_mid, pl.full_lo, pl.full_hi});
      else
        row_s1_avx512<K, PAD, R, kP, false, Track>(rows, r, IW, OW, pl.inv_w.data(), rinv + q, out,
                                                   bits, least, take_steps(*a.next, kP));
      if constexpr (Track) keep_least(a, q, least, kP);
      for (auto& row : rows) row += kP * step;
    }
  }
  for (; q < q1; ++q) {
    float* out = a.out_plane + q * OW;
    row_s1_avx512<K, PAD, -1, 1, false, Track>(rows, r, IW, OW, pl.inv_w.data(), rinv + q, &out,
                                               bits, least, take_steps(*a.next, 1));
    if constexpr (Track) keep_least(a, q, least, 1);
    for (i64 j = 0; j < r; ++j) rows[j] += step;
  }
}

// Track: the check against the bound of the loads (own_check); else (Ops::exact_band) T = 0,
// whether an output is NaN.
template <int K, int PAD, bool Track = true>
IRRUN_AVX512 bool band_s1_avx512(const BandArgs& a, const Ops&) {
  const Plan& pl = *a.pl;
  const i64 IW = pl.g->in[2];
  LoadBits bits = Track ? own_bits(*a.own) : LoadBits{};
  bool loaded = Track && own_continues(a);
  for (i64 q = a.q0; q < a.q1;) {
    const i64 q_end = std::min(a.q1, pl.step_end[static_cast<std::size_t>(q)]);
    const auto b = static_cast<std::size_t>(pl.row_begin[static_cast<std::size_t>(q)]);
    const i64 r = pl.row_begin[static_cast<std::size_t>(q) + 1] - static_cast<i64>(b);
    bool consecutive = r == K && pl.row_step == IW;
    for (i64 j = 1; consecutive && j < r; ++j)
      consecutive = pl.row_off[b + static_cast<std::size_t>(j)] == pl.row_off[b] + j * IW;
    if (consecutive)
      run_s1_avx512<K, PAD, K, Track>(a, q, q_end, r, bits, loaded);
    else
      run_s1_avx512<K, PAD, -1, Track>(a, q, q_end, r, bits, loaded);
    q = q_end, loaded = false;
  }
  if constexpr (Track) return own_check(a, bits);
  return !a.nan_later && has_nan_output(a);
}

// Ops::scale_planes of chunks whose outputs all take one factor r (one_factor; S2's planes,
// S6's bins): the n >= 8 sums at s scaled into y eight at a time, the last eight again where n
// is not a multiple of eight (those written twice get the same bits). Swap: the sums of each
// four outputs are in the order 0, 2, 1, 3 (sums_2x2), put in order as floats. False if a sum
// is NaN. 512 bits where scale_flat takes 256 (S2: 0.86 of the time, S6: 0.98, against row
// loops at 256 bits). After the precision flag's read: plain rounding, no {rn-sae}.
template <bool Swap>
IRRUN_AVX512 bool scale_flat_avx512(const double* s, float* y, i64 n, double r_s) {
  const __m512d r = _mm512_set1_pd(r_s), zero = _mm512_setzero_pd();
  __mmask8 nan = 0;
  const auto one = [&](i64 o) IRRUN_AVX512_LAMBDA {
    const __m512d v = _mm512_loadu_pd(s + o);
    __m256 f = _mm512_cvtpd_ps(_mm512_fmadd_pd(v, r, zero));
    if (Swap) f = _mm256_shuffle_ps(f, f, 0xD8);
    _mm256_storeu_ps(y + o, f);
    nan |= _mm512_cmp_pd_mask(v, v, _CMP_UNORD_Q);
  };
  i64 o = 0;
  for (; o + 8 <= n; o += 8) one(o);
  if (o < n) one(n - 8);
  return nan == 0;
}

IRRUN_AVX512 bool scale_2x2_avx512(const Plan& pl, const double* s, float* y, i64 count) {
  const i64 n = count * pl.g->out_plane_size();
  return n >= 8 ? scale_flat_avx512<true>(s, y, n, one_factor(pl)) : scale_2x2(pl, s, y, count);
}

// planes_bins4 and sums_bins4 (avx2.cpp) eight outputs a block: each pair of bins' rows of four
// columns widened at 512 bits, one conversion for eight floats where the 256-bit path takes two
// (each an operation on port 5 as well as port 0 on Intel), and the eight bins' taps put in
// order by four unpacks and four two-source permutes (the 256-bit path: eight shuffles for
// four bins). The same additions in the same order, so the same bits. n >= 8 outputs: the last
// block is the last eight again.
template <class Block>
IRRUN_AVX512 IRRUN_INLINE void bins4_blocks8(const Plan& pl, const float* x, i64 count,
                                             Block&& block) {
  const i64 n = count * pl.g->out_plane_size();
  const i64* start = pl.bins4_start.data();
  const i64 rows = static_cast<i64>(pl.bins4_rows.size());
  with_row_count(rows, [&]<int R>() IRRUN_AVX512_LAMBDA {
    const i64* off = pl.bins4_rows.data();
    // Column sums of the bins at p (lanes 0-3) and q (lanes 4-7), rows in table order.
    const auto sums = [&](const float* p, const float* q) IRRUN_AVX512_LAMBDA {
      const auto row = [&](i64 o) IRRUN_AVX512_LAMBDA {
        const __m256 f = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(p + o)),
                                              _mm_loadu_ps(q + o), 1);
        return _mm512_cvtps_pd(f);
      };
      const i64 m = R > 0 ? R : rows;
      __m512d v = row(off[0]);
      for (i64 j = 1; j < m; ++j) v = add_fma512(v, row(off[j]));
      return v;
    };
    const __m512i even = _mm512_setr_epi64(0, 4, 1, 5, 8, 12, 9, 13);  // lanes 0, 1 of a pair
    const __m512i odd = _mm512_setr_epi64(2, 6, 3, 7, 10, 14, 11, 15);
    const bool far = pl.far;  // in a register: the stores could alias pl
    const float* next = x + count * pl.g->in_plane_size();
    const i64 share = 4 * pl.g->in_plane_size() / pl.g->out_plane_size();
    const auto one = [&](i64 o) IRRUN_AVX512_LAMBDA {
      if (far) prefetch_row(next + o / 4 * share, 2 * share);
      const __m512d a = sums(x + start[o], x + start[o + 1]);
      const __m512d b = sums(x + start[o + 2], x + start[o + 3]);
      const __m512d c = sums(x + start[o + 4], x + start[o + 5]);
      const __m512d d = sums(x + start[o + 6], x + start[o + 7]);
      // lo_ab: taps 0 and 2 of bins 0, 2 (low half) and 1, 3 (high half); hi_ab taps 1 and 3.
      const __m512d lo_ab = _mm512_unpacklo_pd(a, b), hi_ab = _mm512_unpackhi_pd(a, b);
      const __m512d lo_cd = _mm512_unpacklo_pd(c, d), hi_cd = _mm512_unpackhi_pd(c, d);
      __m512d v = _mm512_permutex2var_pd(lo_ab, even, lo_cd);            // tap 0 of bins 0-7
      v = _mm512_add_pd(v, _mm512_permutex2var_pd(hi_ab, even, hi_cd));  // tap 1
      v = _mm512_add_pd(v, _mm512_permutex2var_pd(lo_ab, odd, lo_cd));   // tap 2
      block(o, _mm512_add_pd(v, _mm512_permutex2var_pd(hi_ab, odd, hi_cd)));
    };
    i64 o = 0;
    for (; o + 8 <= n; o += 8) one(o);
    if (o < n) one(n - 8);
  });
}

IRRUN_AVX512 void planes_bins4_avx512(const Plan& pl, const float* x, float* y, i64 count) {
  if (count * pl.g->out_plane_size() < 8) return planes_bins4(pl, x, y, count);
  const __m512d r = _mm512_set1_pd(bins4_factor(pl)), zero = _mm512_setzero_pd();
  bins4_blocks8(pl, x, count, [&](i64 o, __m512d s) IRRUN_AVX512_LAMBDA {
    _mm256_storeu_ps(y + o, _mm512_cvtpd_ps(_mm512_fmadd_pd(s, r, zero)));
  });
}

IRRUN_AVX512 void sums_bins4_avx512(const Plan& pl, const float* x, double* s, i64 count) {
  if (count * pl.g->out_plane_size() < 8) return sums_bins4(pl, x, s, count);
  bins4_blocks8(pl, x, count,
                [&](i64 o, __m512d v) IRRUN_AVX512_LAMBDA { _mm512_storeu_pd(s + o, v); });
}

IRRUN_AVX512 bool scale_bins4_avx512(const Plan& pl, const double* s, float* y, i64 count) {
  const i64 n = count * pl.g->out_plane_size();
  return n >= 8 ? scale_flat_avx512<false>(s, y, n, bins4_factor(pl))
                : scale_bins4(pl, s, y, count);
}

template <bool Track>
BandFn pick_band_s1_avx512(i64 k, i64 pad_left) {
  if (k == 3) return pad_left == 0 ? band_s1_avx512<3, 0, Track> : band_s1_avx512<3, 1, Track>;
  if (k == 5) return pad_left == 0 ? band_s1_avx512<5, 0, Track> : band_s1_avx512<5, 2, Track>;
  return pad_left == 0 ? band_s1_avx512<7, 0, Track> : band_s1_avx512<7, 3, Track>;
}

template <bool Exact = false>
BandFn pick_band_flat_avx512(i64 k, i64 pad_left) {
  if (k == 3 && pad_left == 1) return band_flat_avx512<3, 1, Exact>;  // 3x3 "same"
  if (k == 5 && pad_left == 2) return band_flat_avx512<5, 2, Exact>;
  if (k == 7 && pad_left == 3) return band_flat_avx512<7, 3, Exact>;
  switch (k) {
    case 2:
      return band_flat_avx512<2, -1, Exact>;
    case 3:
      return band_flat_avx512<3, -1, Exact>;
    case 5:
      return band_flat_avx512<5, -1, Exact>;
    default:
      return band_flat_avx512<0, -1, Exact>;
  }
}

// ---- Planes in lanes (lanes.hpp), a lane per plane in 512-bit vectors, scaled with {rn-sae}
// as they are summed.
using LaneV = __m512d;
IRRUN_AVX512 IRRUN_INLINE __m512d lanes_add(__m512d a, __m512d b) {
  return _mm512_add_pd(a, b);
}
IRRUN_AVX512 IRRUN_INLINE __m512d lanes_zero() {
  return _mm512_setzero_pd();
}
IRRUN_AVX512 IRRUN_INLINE __m512d lanes_widen(__m256 v) {
  return _mm512_cvtps_pd(v);
}
#define IRRUN_PATH IRRUN_AVX512
#include "lanes.hpp"
#undef IRRUN_PATH

// The outputs scaled as their sums come (the scaling raises no flag), kept in Y until the
// transpose; a NaN sum seen from the greatest |s| of each lane as raw bits (above infinity's).
template <int K, int S>
IRRUN_AVX512 bool lanes_kernel(const Plan& pl, const float* x, float* y, double* scratch) {
  const PoolGeometry& g = *pl.g;
  const i64 P = g.in_plane_size();
  auto* const T = reinterpret_cast<__m512d*>(scratch);
  auto* const Y = reinterpret_cast<__m256*>(T + P + lanes_vlen(pl));  // lanes_scratch
  lanes_in(x, P, T);
  const __m512i abs = _mm512_set1_epi64(0x7FFFFFFFFFFFFFFF);
  __m512i nan_bits = _mm512_setzero_si512();
  const double* f = pl.flat_r.data();  // the outputs' factors, in order
  float* yo = reinterpret_cast<float*>(Y);
  lanes_sums<K, S>(pl, T, [&](__m512d s) IRRUN_AVX512_LAMBDA {
    nan_bits = _mm512_max_epu64(nan_bits, _mm512_and_si512(_mm512_castpd_si512(s), abs));
    scale_store8(s, _mm512_set1_pd(*f++), yo);
    yo += 8;
  });
  lanes_out(g.out_plane_size(), y, [&](i64 o) IRRUN_AVX512_LAMBDA { return Y[o]; });
  return _mm512_cmpgt_epu64_mask(nan_bits, _mm512_set1_epi64(0x7FF0000000000000)) == 0 &&
         !irrun::detail::inexact();
}

}  // namespace

Ops select_avx512(Plan& pl) {
  Ops ops{stats_avx512, vsum_avx512, plane_sums_avx512};
  ops.finish_row = hrow_s1_avx512<1>;
  ops.amax = amax_avx512, ops.all_above = all_above_avx512;
  ops.band = band_generic;
  if (pl.fixed_w) {
    ops.hrow = pick_hrow(kHrowAvx512, pl.stride_w, pl.k_w);
    ops.band = pick_band<BandAvx512, kHrowAvx512>(ops.hrow);
  }
  // Windows of three rows (S1) read each input row once in pairs of output rows, and take
  // their bound from those loads (0.94 of the time, scripts/ab); rows read alone (S2: 1.08) or
  // more than once (3x3x3 windows, S5: 1.11) cost more so than the band's stats pass.
  if (pl.fixed_w && pl.stride_w == 2 && pl.k_w == 3 && pl.pad_left == 1 &&
      pl.max_rows <= kFusedMaxRows) {
    ops.own_bound = pl.max_rows == 3;
    ops.band = ops.own_bound ? band_s2_avx512<3, true> : band_s2_avx512<3, false>;
    ops.exact_band = band_s2_avx512<3, true, false>, ops.has_nan = has_nan_avx512;
    ops.keeps_v = false;
  }
  if (pl.fixed_w && pl.stride_w == 2 && pl.k_w == 2 && pl.pad_left == 0 &&
      pl.max_rows <= kFusedMaxRows) {
    ops.band = band_s2_avx512<2, false>, ops.keeps_v = false;
    if (pl.check_after && rows_consecutive(pl, 2) && one_run(pl)) {
      ops.planes = planes_2x2_avx512;
      if (exact_2x2(pl)) ops.exact_planes = sums_2x2, ops.scale_planes = scale_2x2_avx512;
    }
  }
  // Bins of four that tile the row from its start (S6): 256-bit rows without V rows (round 38).
  if (ops.hrow == hrow_bins4_avx512 && pl.pad_left == 0 && 4 * pl.g->out[2] <= pl.g->in[2]) {
    ops.band = band_bins4_avx512, ops.keeps_v = false;
    if (make_bins4_planes(pl))
      ops.planes = planes_bins4_avx512, ops.exact_planes = sums_bins4_avx512,
      ops.scale_planes = scale_bins4_avx512;
  }
  if (flat_eligible(pl)) {
    make_flat(pl);
    // Exact first with T = 0, NaN tested in the pass: a scan of the stored outputs for NaN
    // instead cost S3 1.085 (they are still on their way to memory).
    ops.band = pick_band_flat_avx512(pl.k_w, pl.pad_left);
    ops.exact_band = pick_band_flat_avx512<true>(pl.k_w, pl.pad_left);
    if (const BandFn f = pick_exact_flat3_avx512(pl)) ops.exact_band = f;
  } else if (make_stream(pl)) {
    ops.planes = stream_fn(pl, std::make_integer_sequence<int, kStreamMaxKernel>{});
  } else if (pl.fixed_w && pl.stride_w == 1 && (pl.k_w == 3 || pl.k_w == 5 || pl.k_w == 7) &&
             // Windows at most as tall as wide (2-D K x K, 1-D): taller ones (3-D, 5x3) run
             // every row alone through its chain of additions, which narrow rows leave
             // latency-bound (1x1024x10x7x7 with 2x7x7 windows: 0.44 of the time through
             // band_avx512; 5x3 on 28x28 0.75; 1-D rows of k3 through band_avx512 1.42).
             (pl.pad_left == 0 || 2 * pl.pad_left == pl.k_w - 1) && pl.max_rows <= pl.k_w) {
    ops.band = pick_band_s1_avx512<true>(pl.k_w, pl.pad_left), ops.keeps_v = false;
    ops.exact_band = pick_band_s1_avx512<false>(pl.k_w, pl.pad_left);
    ops.has_nan = has_nan_avx512;
    ops.own_bound = true;
    pl.full_rinv = pl.uniform ? 1.0 : 1.0 / static_cast<double>(pl.max_rows);
    pl.full_r.resize(pl.inv_w.size());
    for (std::size_t ow = 0; ow < pl.inv_w.size(); ++ow)
      pl.full_r[ow] = pl.full_rinv * pl.inv_w[ow];
    const i64 OW = pl.g->out[2];  // at least 1 (avg_pool_fast returns before without outputs)
    pl.full_mid = pl.full_r[static_cast<std::size_t>(OW / 2)];
    const auto uniform = [&](i64 ow) {
      const double* r = pl.full_r.data() + ow;
      return ow + 8 <= OW && std::all_of(r, r + 8, [&](double v) { return v == pl.full_mid; });
    };
    for (pl.full_lo = 0; pl.full_lo < OW && !uniform(pl.full_lo);) pl.full_lo += 8;
    for (pl.full_hi = pl.full_lo; uniform(pl.full_hi);) pl.full_hi += 8;
  }
  // S8 (uneven bins of 13-14 rows): 0.85 of the time with the band's stats pass.
  if (ops.band == band_generic && pl.bound_in_pass)
    ops.vsum_bound = vsum_bound_avx512, ops.own_bound = true;
  // Exact sums first (only the sums' additions round: the scaling rounds with {rn-sae}).
  ops.exact_plane_sums = exact_plane_sums_avx512;
  // Planes in lanes where the row kernels pay for a band per small plane. Not where whole
  // planes already run as one pass (streamed: the person-attributes network's 5x3 planes took
  // 1.9x the time in lanes; 2x2 s2: 1x96x32x16 2.05x, 1x512x14x14 1.08x), nor flat groups of
  // rows past 128 floats (3x3 "same" on 1x576x19x19 1.14x, 1x768x17x17 1.00x; on 1x1280x8x8
  // 0.61, 1x1024x10x10 0.80; with V in registers, round 77, 19x19 1.02x and 17x17 0.88-0.96).
  if (!ops.planes && (!pl.flat || pl.g->in_plane_size() <= 128) && make_lanes(pl))
    ops.lanes = pick_lanes(pl);
  return ops;
}

}  // namespace irrun::kernels::avg_fast
