// The pieces of the fast f32 AvgPool (avg_pool_fast.cpp) shared by its ISA paths (portable.cpp,
// avx2.cpp, avx512.cpp) and its runner: the portable sums that define the summation order, the
// row and group function types, and the per-ISA selection of an Ops table.
#pragma once

#include "../simd.hpp"  // first: intrinsics and their warning pragmas

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>

#include "plan.hpp"

namespace irrun::kernels::avg_fast {

// The row passes are inlined into the group functions (band_*): a call per row costs more than
// a short row (S1: 3584 rows of 56 outputs per call).
#define IRRUN_INLINE inline __attribute__((always_inline))

// ------------------------------------------------------------------------------------------
// The portable sums. Every vector path does the same operations in the same order.

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
  const double y = s * r + 0.0;  // a sum of -0 only gives +0, as the reference's sums from +0
  *out = static_cast<float>(y);
  return !(std::fabs(s) >= t);
}

inline bool hrow_fixed_portable(const double* vp, i64 stride, i64 k, i64 ow_count,
                                const double* inv_w, double rinv, double t, float* out) {
  bool fail = false;
  for (i64 ow = 0; ow < ow_count; ++ow)
    fail |= finish(hsum_fixed(vp, ow, stride, k), rinv, inv_w[ow], t, out + ow);
  return fail;
}

// Equal adaptive bins: stride = taps = k.
inline bool hrow_bins_portable(const double* vp, i64 k, i64 ow_count, const double* inv_w,
                               double rinv, double t, float* out) {
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

// m raised to the greatest of eight lanes of |x| bounds (NaN lanes ignored: see Ops::plane_sums).
inline float fold_bound(const float* lanes, float m) {
  for (int j = 0; j < 8; ++j)
    if (lanes[j] > m) m = lanes[j];
  return m;
}

// The fixed tree that combines a plane's eight lane accumulators (every path uses it).
inline double combine_lanes(const double* a) {
  return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

// ---- Planes of 49 floats (7x7: the global pools of most networks, S4 and S7) add in an order of
// their own, in which the vector paths load each float once, four at a time, and add in short
// chains. Planes 4q .. 4q + 3 (counted from plane 0) are one stream of 49 chunks of four floats,
// chunk c holding floats 4c .. 4c + 3 in lanes 0-3. Plane j of the four covers chunks c0 ..
// c0 + n - 1 (Chunks49); a chunk it shares with plane j - 1 (j + 1) is first added, in plane
// j's lanes only, to the plane's second (second-to-last) chunk. Then its chunks add lane by
// lane as a balanced tree, halves split at (lo + hi) / 2, and the lanes as (l0 + l1) + (l2 + l3).

constexpr int kPlane49 = 49;

// The lanes of chunk c of a stream of planes of n floats that belong to plane j.
constexpr int chunk_mask(int n, int c, int j) {
  int mask = 0;
  for (int k = 0; k < 4; ++k)
    if (4 * c + k >= j * n && 4 * c + k < (j + 1) * n) mask |= 1 << k;
  return mask;
}

struct Chunks49 {
  int c0, n;       // the plane's first chunk in the stream of four planes, and its count
  int m0, m1;      // the plane's lanes of its first and last chunk
  int first, end;  // its chunks that add in the tree, the shared ones merged
};

constexpr Chunks49 chunks49(int j) {
  const int c0 = kPlane49 * j / 4, n = (kPlane49 * j + kPlane49 - 1) / 4 - c0 + 1;
  const int m0 = chunk_mask(kPlane49, c0, j), m1 = chunk_mask(kPlane49, c0 + n - 1, j);
  return {c0, n, m0, m1, m0 == 0xF ? 0 : 1, m1 == 0xF ? n : n - 1};
}

// The sum of the plane of 49 floats at x in that order; j: the plane's index modulo four. The
// vector paths sum four planes at a time (planes49.hpp).
double plane49_sum(const float* x, int j);

// ------------------------------------------------------------------------------------------
// Row and group functions.

using HrowFn = bool (*)(const double*, i64, i64, const double*, double, double, float*);

float amax_portable(const float* x, i64 n);
bool all_above_portable(const float* y, i64 n, float thr);

struct BandArgs;

struct Ops {
  void (*stats)(const float*, i64, float&, float&);
  // v[i] = plane[off[0] + i] + ... + plane[off[r - 1] + i] (left to right), i < n; r > 0.
  void (*vsum)(const float* plane, const i64* off, i64 r, i64 n, double* v);
  // Sums of `count` planes of n floats; m raised to at least the planes' greatest |x| when none
  // of them is NaN (a NaN makes its plane's sum NaN, which fails every check).
  void (*plane_sums)(const float*, i64, i64, double*, float& m);
  // plane_sums without the bound, for sums that need none: those whose additions were all
  // exact, which MXCSR's precision flag tells (run_whole_plane). Only where no other operation
  // of it rounds (AVX-512).
  void (*exact_plane_sums)(const float*, i64, i64, double*) = nullptr;
  HrowFn hrow = nullptr;        // fixed-tap horizontal pass for this op's stride and kernel
  HrowFn finish_row = nullptr;  // the one-tap stride-1 pass: scale, check, store a row of sums
  bool (*band)(const BandArgs&, const Ops&) = nullptr;  // one group of rows (window kernel)
  bool keeps_v = true;  // band leaves the group's V rows in the buffer (else: rescans rebuild)
  i64 min_group = 1;    // rows per group, at least (kFusedRows: band sums that many at once)
  // vsum that also raises m to at least the greatest |x| it loads, NaN aside: a signalling NaN
  // may drop the values above it in its column out of m, but every window that holds them
  // holds the NaN too (Plan::bound_in_pass), and its output fails every check. Set where
  // band_generic is to check against the bound of its group's loads instead of the band's.
  void (*vsum_bound)(const float* plane, const i64* off, i64 r, i64 n, double* v,
                     float& m) = nullptr;
  // band checks against a T of its own loads (vsum_bound, own_bound.hpp), not the band's
  // stats, which are then not taken, and reports the greatest in BandArgs::own->t.
  bool own_bound = false;
  // band can run unchecked (BandArgs::unchecked), and a band that can be checked after its group
  // (check_after) is, even where band takes its own bound otherwise.
  bool after = false;
  // band for sums that need no bound: a group function whose operations other than the sums'
  // additions raise no precision flag (AVX-512), run with T = 0 (failing NaN only) and without
  // stats or a bound of its own; run_windows keeps its band when the flag stays clear.
  bool (*exact_band)(const BandArgs&, const Ops&) = nullptr;
  // exact_band in two passes, where the scaling raises the flag too (AVX2): exact_band stores
  // the group's double sums in its V rows (BandArgs::v, pl.vlen apart; where and in which order
  // is the pair's business) and no outputs; after the flag is read, scale_band scales them into
  // the outputs, false if a sum is NaN.
  bool (*scale_band)(const BandArgs&) = nullptr;
  // Whether one of n stored outputs is NaN, raising no flag: where exact_band scans its outputs
  // so, run_windows batches the exact tries of small bands and scans once (BandArgs::nan_later).
  bool (*has_nan)(const float* y, i64 n) = nullptr;
  // The check after a group (check_after): the greatest |x| of n floats, at least, with a NaN
  // ignored or (AVX-512) dropping the values before it in its lane; whether every |y[i]| is
  // above thr (a NaN is not).
  float (*amax)(const float* x, i64 n) = amax_portable;
  bool (*all_above)(const float* y, i64 n, float thr) = all_above_portable;
  // Whole planes checked after their group (run_windows): `count` planes from x, at most
  // after_chunk_planes and four outputs or more, their outputs at y stored unchecked with
  // band's bits, in one pass.
  using PlanesFn = void (*)(const Plan&, const float* x, float* y, i64 count);
  PlanesFn planes = nullptr;
  // planes in two passes, for sums that need no bound: exact_planes stores the double sums
  // (no operation but their additions rounds), and after the precision flag is read,
  // scale_planes scales them into y, false if a sum is NaN (run_windows).
  void (*exact_planes)(const Plan&, const float* x, double* s, i64 count) = nullptr;
  bool (*scale_planes)(const Plan&, const double* s, float* y, i64 count) = nullptr;
  // Eight whole planes from x, their outputs at y, for sums that need no bound (lanes.hpp):
  // whether the sums were exact (the precision flag, clear at the call) and none was NaN; where
  // not, y holds no outputs of use. `scratch`: lanes_scratch(pl) doubles, 64-byte aligned.
  bool (*lanes)(const Plan&, const float* x, float* y, double* scratch) = nullptr;
};

// Ops::exact_planes and Ops::scale_planes for 2x2 s2 planes (avx2.cpp; both vector paths run
// them, AVX-512 its own scaling where a chunk holds eight outputs or more), where exact_2x2
// holds: rows of whole blocks of four outputs whose windows lie inside the row, and one factor
// for every output (every window has four taps; one_factor).
void sums_2x2(const Plan& pl, const float* x, double* s, i64 count);
bool scale_2x2(const Plan& pl, const double* s, float* y, i64 count);
inline bool exact_2x2(const Plan& pl) {
  return pl.g->out[2] % 4 == 0 && 2 * pl.g->out[2] <= pl.g->in[2] && one_factor(pl) != 0;
}

// The vectorised horizontal passes of one ISA: stride 1 with k = 2, 3, 5, 7 or any, stride 2
// with k = 2, 3 or any, and stride-4 bins of four.
struct HrowSet {
  HrowFn s1_k2, s1_k3, s1_k5, s1_k7, s1_any;
  HrowFn s2_k2, s2_k3, s2_any;
  HrowFn bins4;
};

inline HrowFn pick_hrow(const HrowSet& set, i64 stride, i64 k) {
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

// f.template operator()<R>() with R = r for the row counts the group functions unroll at compile
// time (1-6 and 9: 3x3 windows, and 3x3x3 ones with 6 rows at the edges and 9 inside), R = 0
// (any count, read at run time) otherwise.
template <class F>
IRRUN_INLINE void with_row_count(i64 r, F&& f) {
  switch (r) {
    case 1:
      return f.template operator()<1>();
    case 2:
      return f.template operator()<2>();
    case 3:
      return f.template operator()<3>();
    case 4:
      return f.template operator()<4>();
    case 5:
      return f.template operator()<5>();
    case 6:
      return f.template operator()<6>();
    case 9:
      return f.template operator()<9>();
    default:
      return f.template operator()<0>();
  }
}

// The part of the next band's span still to prefetch, `step` floats per output row.
struct Prefetch {
  const float* p = nullptr;
  i64 left = 0, step = 0;
};

// The next `steps` steps of f as a range of floats, for a group function to prefetch a few lines
// at a time through its loop (prefetch_lines) where prefetch_step (below) asks for them at once: a
// burst of a row's lines stalls on the miss buffers when memory is slow (S9 0.86-0.90 of the time
// spread).
struct PrefetchRange {
  const float* p = nullptr;
  const float* end = nullptr;
};

inline PrefetchRange take_steps(Prefetch& f, i64 steps) {
  const i64 n = std::max<i64>(0, std::min(f.left, steps * f.step));
  const PrefetchRange r{f.p, f.p + n};
  f.p += n, f.left -= n;
  return r;
}

// Prefetches the next step at once into L2 (not L1: the V rows and this band's input rows live
// there).
inline void prefetch_step(Prefetch& f) {
  if (f.left <= 0) return;
  const PrefetchRange r = take_steps(f, 1);
  for (const float* p = r.p; p < r.end; p += 16)
    _mm_prefetch(reinterpret_cast<const char*>(p), _MM_HINT_T1);
}

// The lines of x[0 .. n) into L1.
inline void prefetch_row(const float* x, i64 n) {
  for (i64 i = 0; i < n; i += 16) _mm_prefetch(reinterpret_cast<const char*>(x + i), _MM_HINT_T0);
}

template <int Lines>
inline void prefetch_lines(PrefetchRange& r) {
  if (r.p >= r.end) return;
  for (int i = 0; i < Lines; ++i)
    _mm_prefetch(reinterpret_cast<const char*>(r.p + 16 * i), _MM_HINT_T1);
  r.p += 16 * Lines;
}

// Two lines of four output rows (OW floats apart from out) per block of eight columns c, into L2,
// ahead of their stores: a store to a line not in the cache waits for it (S9's 64 MB of output).
inline void prefetch_out4(const float* out, i64 OW, i64 c) {
  const float* o = out + ((c >> 3) & 1) * 2 * OW + (c & ~i64{15});
  _mm_prefetch(reinterpret_cast<const char*>(o), _MM_HINT_T1);
  _mm_prefetch(reinterpret_cast<const char*>(o + OW), _MM_HINT_T1);
}

// Asks for the line `ahead` floats past p for writing (prefetchw: x86-64 CPUs from Broadwell and
// every AMD one have it, older ones take it as a NOP; GCC emits it only for the prfchw target).
// The address, an integer, may lie past the output: it is only prefetched, which never faults.
inline void prefetch_write(const float* p, i64 ahead) {
  const auto at = reinterpret_cast<std::uintptr_t>(p) + static_cast<std::uintptr_t>(4 * ahead);
  asm volatile("prefetchw (%0)" ::"r"(at));
}

// How far ahead of its stores a pass asks for its output lines (floats: 1 KB). On this Intel
// Xeon the stores of S3's 12.8 MB of outputs waited for their lines (RFO) from the L3: S3
// 0.94-0.95 of the time with them asked for (0.5 KB 0.97, 2 KB 0.955; all at once at the group's
// start 1.11x), round 79.
constexpr i64 kOutAhead = 256;

// The first check's bound of groups that take it from their own loads (Ops::own_bound), kept
// from one group of a band to the next.
struct OwnBound {
  // own_bound.hpp: the unsigned and signed maxima of the raw bits of the band's loads so far
  // (bits_threshold; band_s2_avx2: of the last group's, which loads all its windows read), and
  // the row after the last group's: where the next group starts in the same run of rows, the
  // input rows before its first window's last are loaded already.
  std::uint32_t u = 0;
  std::int32_t s = 0;
  i64 q_next = -1;
  double t = std::numeric_limits<double>::quiet_NaN();  // out: the group's greatest T
};

struct BandArgs {
  const Plan* pl;
  const float* plane;
  float* out_plane;
  i64 q0, q1;
  double t;   // from the band's stats; NaN where the group takes its own bound (Ops::own_bound)
  double* v;  // the group's V rows (pl.vlen apart, zero pads)
  // One row of pl.vlen doubles of scratch past every group's rows: a short group's next row is
  // a V row of a later group, whose pads rescans rely on.
  double* spare;
  bool* row_failed;
  Prefetch* next;  // the vector group functions prefetch a chunk of it per row
  OwnBound* own;   // Ops::own_bound: the band's so far
  double* least;   // own_check: eight doubles per row of the group (64-byte aligned)
  // Set by check_after, which judges the stored outputs itself: a group function may skip its
  // check (what it returns and flags is not read).
  bool unchecked = false;
  // Ops::exact_band of a batch of small bands (run_windows): the group need not scan its
  // outputs for NaN, Ops::has_nan scans the batch's after its last group.
  bool nan_later = false;
};

// One group of output rows [q0, q1) of one plane: vertical sums into v (group rows of
// pl.vlen doubles, zero padding kept), then the horizontal pass, scaling, check and store.
// Returns true when some output of the group failed the check; row_failed[q - q0] says which
// rows hold one (the caller judges the outputs that failed by their own windows' T).
using BandFn = bool (*)(const BandArgs&, const Ops&);

// The vertical pass of a flat group (band_flat_avx512, band_flat_avx2): each run of rows
// (Plan::run_end) is one stretch of V, its rows * IW sums by vrow(r, off, rows, v) from the r
// input rows at plane + off[j]; runs without rows are zeros. Gap: zeros the group function keeps
// between its V rows (exact_flat3_avx2), which vrow's rows then leave room for, IW + Gap apart.
template <i64 Gap = 0, class Vrow>
IRRUN_INLINE void flat_vertical(const BandArgs& a, Vrow&& vrow) {
  const Plan& pl = *a.pl;
  const i64 IW = pl.g->in[2];
  const i64* begin = pl.row_begin.data();
  for (i64 q = a.q0; q < a.q1;) {
    const i64 q_end = std::min(a.q1, pl.run_end[static_cast<std::size_t>(q)]);
    const i64 r = begin[q + 1] - begin[q];
    double* v = a.v + (q - a.q0) * (IW + Gap);
    if (r == 0) {
      for (i64 j = 0; j < q_end - q; ++j) std::fill_n(v + j * (IW + Gap), IW, 0.0);
    } else {
      vrow(r, pl.row_off.data() + begin[q], q_end - q, v);
    }
    q = q_end;
  }
}

// ------------------------------------------------------------------------------------------
// Defined in portable.cpp: the portable blocks the vector paths also use.

void stats_portable(const float* x, i64 n, float& lo, float& hi);

// V row q of a plane (its IW vertical sums, zeros without rows) into v, summed by ops.vsum
// (every path's vsum gives the same bits), or with m by ops.vsum_bound, which raises m. The
// portable group and the rescans of fused rows use it.
void vsum_row(const Plan& pl, const Ops& ops, const float* plane, i64 q, double* v,
              float* m = nullptr);

// The portable group: vsum_row, then the row pass, in the same order as the vector groups.
bool band_generic(const BandArgs& a, const Ops& ops);

// Ops::exact_band and Ops::scale_band of band_generic's rows of uneven bins (S8): the group's V
// rows, then their sums (band_generic's additions) over their own values, output ow at V[ow],
// which no later bin reads where exact_bins_in_place holds (every bin starts at or past its own
// index: in >= out); then, after the flag's read, finish()'s scaling, false if a sum is NaN.
bool exact_band_bins(const BandArgs& a, const Ops& ops);
bool scale_band_bins(const BandArgs& a);
bool exact_bins_in_place(const Plan& pl);

// The Ops of one ISA path for pl (may add flat-group tables to pl). The vector ones are only
// called when the CPU has the ISA (simd.hpp).
Ops select_portable(const Plan& pl);
Ops select_avx2(Plan& pl);
Ops select_avx512(Plan& pl);

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

}  // namespace irrun::kernels::avg_fast
