// Fast f32 AvgPool / AdaptiveAvgPool on plain NC[D]HW tensors.
//
// Algorithm (per plane, per band of output rows):
//   exact first: on AVX-512, a band (or a unit of whole planes) runs first with no stats and no
//      bound (Ops::exact_band, Ops::exact_plane_sums), after clearing MXCSR's precision flag.
//      There only the sums' additions can raise it (the scaling rounds with {rn-sae}), so if it
//      stays clear every sum is exact and needs no bound: the band is done unless a sum is NaN.
//      Else the band runs again, as follows. (S1, S3, S5, S9 and S4, S7 on typical data, whose
//      double sums of floats are exact unless their magnitudes span some 2^29.) Whole planes
//      and the planes checked after their group (S2, S6: Ops::exact_planes, the sums stored,
//      the flag read, then the scaling) scale in a pass of their own, and so do this on AVX2
//      too, as do AVX2's window rows but the fused stride-1 ones (S1, S3, S5, S8:
//      Ops::scale_band after each group, the sums kept in its V rows). Nothing else in an exact
//      pass may round, or every try fails unseen (ExactRouteCounts counts them). A range stops
//      trying where the route keeps failing (ExactTries).
//   0. once per call (make_plan): per flattened output row q = od*OH + oh, the table of input
//      row offsets it sums (in summation order) and its row factor 1/rows; per band, the
//      contiguous input span scanned for stats. The loops do no divisions and no per-row setup;
//   1. stats: min and max of the band's input span (one contiguous pass, NaN ignored; the first
//      4 KB of the next band's span are prefetched meanwhile), for the first check (below).
//      Uneven bins of many rows on AVX-512 (Plan::bound_in_pass) skip it: their vertical pass
//      takes the greatest |x| from its own loads (Ops::vsum_bound); so do the stride-1 rows of
//      band_s1_avx512 and band_s1_avx2 and the stride-2 rows of band_s2_avx2, and the 3x3 s2
//      row pairs of band_s2_avx512 (the maxima of the loads' bits, bits_threshold). Short bands
//      of one group that write less than they read (S2, S6) take it after the group instead,
//      from L1, and check the stored outputs against it (check_after), the group running
//      unchecked (BandArgs::unchecked; on AVX2 the 2x2 s2 rows, Ops::after, untracked too);
//   2. vertical: for each output row, V[w] = sum of the window's input rows at column w, in
//      double (exact conversion from f32), rows added left to right in table order;
//   3. horizontal: s[ow] = sum of V over the window's columns, taps added left to right
//      (stride 1 and 2 vectorised; equal adaptive bins, in % out == 0, are windows with
//      kernel = stride = in/out, bins of four vectorised by gathering tap m of eight (AVX-512)
//      or four (AVX2) outputs with permutes; uneven bins scalar), y = s * (1/rows * 1/cols) or
//      s * (1/kernel volume), rounded once to f32.
//   On AVX-512 and AVX2, steps 2 and 3 for a group of rows run in one function (band_avx512,
//   band_avx2) with the horizontal pass inlined, and narrow stride-1 rows run as flat groups
//   (band_flat_*); 3x3 s2 p1 and 2x2 s2 rows (on AVX2 of windows up to four rows high) keep
//   their vertical sums in registers (band_s2_avx512, band_s2_avx2; on AVX2 an input row shared
//   by two output rows is converted once) and advance their row pointers along runs of rows
//   (Plan::step_end) instead of reading them from the row table; on AVX-512 the 2x2 s2 rows of
//   two input rows run at 256 bits (row_2x2_avx512), and bins of four that tile the row run
//   without V rows, four bins' column sums transposed (band_bins4_avx512; whole planes of
//   them on both paths as one pass over a chunk's outputs, planes_bins4). On AVX-512,
//   stride-1 rows of 3, 5 or 7 taps too wide for flat groups do too (band_s1_avx512), four
//   output rows of windows of consecutive input rows in one pass, each input row converted once
//   for all four; on AVX2 such passes (2-D K x K windows, band_s1_avx2) store their four V rows for
//   the horizontal pass. The portable path runs the same additions through band_generic.
// Small planes whose stride-1 windows lie inside them, with rows narrower than 32, run as one
// row of positions per chunk of planes, eight at a time, the outputs among them packed
// (stream.hpp; checked after, as the chunks of whole planes below). Other small planes, eight
// or more of them, run eight at a time in the lanes of each vector on both vector paths
// (Ops::lanes, lanes.hpp: transposed in, summed in the canonical order, scaled, transposed out),
// exact sums only: a chunk whose sums round goes to the row kernels (run_lanes).
// Global pools and AdaptiveAvgPool to 1x1 (one window covering the whole plane) instead sum
// each contiguous plane directly, eight planes at a time on AVX-512 and four on AVX2
// (plane_sum_portable gives the order; 7x7 planes have one of their own, in which every four are
// one stream of chunks of four floats: plane49_sum, planes49.hpp), with the greatest |x| taken
// from the same floats; a unit of planes takes its min and max only when an output fails the
// check against that bound.
//
// Accuracy proof (the contract: within one ulp of the exact average a = s/n):
//   Every sum is a fixed tree of double additions over the window's f32 values (plus exact
//   zeros for padding and masked lanes: adding one rounds nothing). Without those, a tree of at
//   most N leaves, N bounding the taps of any window: a value meets at most d = N - 1 rounded
//   additions on its way to the sum, whatever the order and shape of the tree, and
//   |s^ - s| <= gamma_d * sum|x| <= gamma_d * N * M =: B, where M = max |x| over the window's
//   inputs (or any superset of them) and gamma_d = d*u/(1-d*u), u = 2^-53 (no partial sum of
//   f32 values leaves the normal doubles). The result is
//   y = fl(s^ * fl(fl(1/r) * fl(1/c))) = (s^/n)(1+e), |e| <= 4.01u (a kernel volume's factor is
//   fl(1/fl(n)): |e| <= 3.01u), so n |y - a| <= B + 4.01u |s^|.
//   With |s| >= |s^| - B, that is at most 2^-26 |s| once |s^| (2^-26 - 4.01u) >= B (1 + 2^-26),
//   which |s^| >= d * N * M * 2^-27 * (1 + 2^-23) ensures (d <= 2^22). Then |y - a| <= 2^-26 |a|;
//   any two reals that close round to f32 values at most one ulp apart (the f32 spacing at and
//   just below a is >= 2^-25 |a|, also for subnormals), so fl32(y) is within one ulp of fl32(a).
//   The kernel checks |s^| >= T with T = N * d * M * 2^-26 (make_plan), twice that: the slack
//   covers the rounding of T itself. When all those inputs have one sign, sum|x| = |s| and
//   n |y - a| <= (gamma_d + 4.01u (1 + gamma_d)) |s| < 2^-26 |s| (d <= 2^22): T = 0. A check of
//   a stored output instead (after_floor: |y| > fl32(T * r_max)) holds as well, as every path's
//   factor is at most r_max and rounding is monotone: |s^| < T gives |y| <= fl32(T * r_max).
//   All of this, and the exact sums, assume IEEE defaults (round to nearest, no flush-to-zero),
//   which the entry points set whatever the caller's thread has (fp_control.hpp).
//   Outputs that fail the check (strong cancellation, an all-zero window with mixed signs
//   around it, NaN) are recomputed with the reference kernel's exact sum (exact_sum.hpp),
//   which gives the reference kernel's bits, unless s^ is that exact sum rounded to nearest
//   (|s^ - s| <= u |s|: n |y - a| <= 6.02u |s|, within 2^-26 |s|; so is every s^ whose
//   additions were all exact), which keeps fl32(y) (fallback_output).
//   The decision is each output's own: T from the min and max of its window's inputs, or s^
//   being its exact sum rounded (which a clear precision flag after the sums proves for all of
//   a band's outputs at once). The
//   kernels first check against a T at least as large: the band's, from the stats of a span
//   holding all of its rows, the mixed-sign T of the greatest |x| their vertical pass loaded
//   (Ops::vsum_bound), the T of the bits of all the band's loads so far (band_s1_*,
//   band_s2_avx512) or of the group's (band_s2_avx2), or
//   for whole planes that of the greatest |x| of a unit of planes. An
//   output that passes that passes its own T. One that fails is judged by its own T
//   (recheck_rows, window_threshold; run_whole_plane), so every path makes the same decisions,
//   and gives the same bits, whatever its first check.
// Files: avg_pool_fast/plan.* (the tables), ops.hpp (the portable sums that fix the order, the
// function types), portable.cpp, avx2.cpp and avx512.cpp (the ISA paths); this file runs them.
// Determinism: bands, summation orders and the check depend only on the geometry and the data,
// never on the thread count; every output is written by exactly one fixed-order loop. The AVX2
// and portable paths perform the same operations in the same order (some AVX2 additions are
// issued as FMAs x * 1 + a, which round identically), so they agree bit for bit.
#include "avg_pool_fast/ops.hpp"  // first: intrinsics and their warning pragmas

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "../fp_control.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "kept_plan.hpp"
#include "lines.hpp"

namespace irrun::kernels {
namespace {

using namespace avg_fast;
using detail::cpu_has_avx2;
using detail::cpu_has_avx512;

// T of the n floats at x, from their min and max (threshold; 0 for one sign).
double stats_threshold(const Plan& pl, const Ops& ops, const float* x, i64 n) {
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  ops.stats(x, n, lo, hi);
  return threshold(pl, lo, hi);
}

// The length of a group's V rows (a flat group's rows are back to back, IW apart).
i64 v_stride(const Plan& pl) {
  return pl.flat ? pl.g->in[2] : pl.vlen;
}

// Whether the exact-first route is worth trying: not once it has failed on more than about an
// eighth of its tries in this range (data whose sums round, whose bands each run twice so).
// begin() also clears the precision flag for the try.
// The range's counts go to `counts` at its end (avg_pool_fast's diagnostic), if given.
struct ExactTries {
  ExactRouteCounts* counts;
  i64 tries = 0, misses = 0;
  explicit ExactTries(ExactRouteCounts* c) : counts(c) {}
  ExactTries(const ExactTries&) = delete;
  ExactTries& operator=(const ExactTries&) = delete;
  ~ExactTries() {
    if (counts) counts->tries += tries, counts->misses += misses;
  }
  bool begin() const {
    if (8 * misses > tries + 32) return false;
    irrun::detail::clear_inexact();
    return true;
  }
  // n: the bands of a batch (run_windows), each counted as a try.
  bool record(bool hit, i64 n = 1) {
    tries += n, misses += hit ? 0 : n;
    return hit;
  }
};

// ---- Whole-plane kernel: one window covering each input plane.

void run_whole_plane(const Plan& pl, const Ops& ops, const float* x, float* y, i64 unit_begin,
                     i64 unit_end, ExactRouteCounts* counts) {
  const PoolGeometry& g = *pl.g;
  const i64 n = g.in_plane_size();
  const double inv = 1.0 / (pl.uniform ? pl.kvol.hi : static_cast<double>(n));
  // (Not on cache lines of its own, as the other scratch: S4 and S7 took 1.02-1.04x the time
  // at two threads so.)
  std::vector<double> sums(kWholePlaneBlock), inv_w(kWholePlaneBlock, inv);
  ExactTries exact(counts);
  for (i64 u = unit_begin; u < unit_end; ++u) {
    const i64 p0 = u * kWholePlaneBlock, count = std::min(g.planes() - p0, kWholePlaneBlock);
    const float* xu = x + p0 * n;
    // Sums whose additions were all exact need no bound (fallback_output keeps every exact sum's
    // fl32(s * r)): where the sums alone raise the precision flag when one rounds, they run
    // without tracking the greatest |x| first, and the unit is done unless the flag rose or a
    // sum is NaN (S4, S7: 0.8 of the time). The flag's reads are compiler barriers
    // (fp_control.hpp), and the sums reach memory between them.
    if (ops.exact_plane_sums && exact.begin()) {
      ops.exact_plane_sums(xu, n, count, sums.data());
      if (exact.record(!irrun::detail::inexact() &&
                       !ops.finish_row(sums.data(), 1, count, inv_w.data(), 1.0, 0.0, y + p0)))
        continue;
    }
    float m = 0;
    ops.plane_sums(xu, n, count, sums.data(), m);
    // The scale/check/store pass of a one-tap stride-1 row: y = s * (1 * inv), as finish(),
    // checked first against the mixed-sign T of the greatest |x|, which the sums track at the
    // cost of one operation per load (min and max took two).
    if (!ops.finish_row(sums.data(), 1, count, inv_w.data(), 1.0, mixed_threshold(pl, m), y + p0))
      continue;
    // Some sum failed: each plane of the unit is judged by its own T, from its min and max: 0
    // when it has one sign (an all-zero plane after a ReLU fails the first check, but passes
    // here), no more than the first T otherwise. Every plane, not only those that failed: a NaN
    // fails every check, and m may then have missed values of other planes. The outputs that
    // pass are stored already.
    for (i64 p = p0; p < p0 + count; ++p)
      if (!(std::fabs(sums[static_cast<std::size_t>(p - p0)]) >=
            stats_threshold(pl, ops, x + p * n, n)))
        y[p] = fallback_output(pl, x + p * n, 0, 0, 0, sums[static_cast<std::size_t>(p - p0)], inv);
  }
}

// ---- Window kernel: bands of output rows, vertical then horizontal sums.

struct Scratch {
  std::vector<double> v;  // groups of vertical sums, each pl.vlen long (zero padding kept)
  std::unique_ptr<bool[]> row_failed;  // per row of the group: some output failed the check
  LineVector<double> least;            // BandArgs::least
};

// The flagged rows of group [g0, g1) (rare): an output that passed the first check (T `t_first`)
// passes its own; any other is judged by the T of its own window and recomputed if it fails
// that. Which outputs may have failed shows in their stored y, so only those have their sums
// redone, from the V rows still in the buffer (or rebuilt once): S9's rows of 1024 outputs
// rarely hold more than one. Out of line: the loop of run_windows stays small. v_valid: the
// buffer holds the group's V rows (else they are built where needed).
[[gnu::noinline]] void recheck_rows(const Plan& pl, const Ops& ops, const float* plane,
                                    float* out_plane, i64 g0, i64 g1, double* vbase, i64 vlen,
                                    const bool* row_failed, double t_first, bool v_valid) {
  const PoolGeometry& g = *pl.g;
  const i64 OH = g.out[1], OW = g.out[2];
  for (i64 q = g0; q < g1; ++q) {
    if (!row_failed[q - g0]) continue;
    double* vrow = vbase + (q - g0) * vlen;
    bool have_v = v_valid;
    float* out = out_plane + q * OW;
    const double rinv = pl.row_rinv[static_cast<std::size_t>(q)];
    for (i64 ow = 0; ow < OW; ++ow) {
      const auto w = static_cast<std::size_t>(ow);
      // Every path stores y = fl32(s * r), r = fl(rinv * inv_w), and rounding is monotone and
      // symmetric: |s| < t_first gives |y| <= fl32(t_first * r). Outputs past that bound
      // passed the first check (a NaN y does not pass this test), so their sums are not redone.
      if (std::fabs(out[ow]) > static_cast<float>(t_first * (rinv * pl.inv_w[w]))) continue;
      if (!have_v) vsum_row(pl, ops, plane, q, vrow + pl.pad_left), have_v = true;
      const double s = pl.flat ? hsum_flat(vrow, vlen, ow, pl.pad_left, pl.k_w)
                       : pl.fixed_w
                           ? hsum_fixed(vrow, ow, pl.stride_w, pl.k_w)
                           : hsum_generic(vrow, pl.ax[2].first[w], pl.ax[2].taps[w], pl.ax[2].step);
      if (std::fabs(s) >= t_first) continue;
      const i64 od = q / OH, oh = q % OH;
      if (!(std::fabs(s) >= window_threshold(pl, plane, od, oh, ow)))
        out[ow] = fallback_output(pl, plane, od, oh, ow, s, rinv * pl.inv_w[w]);
    }
  }
}

// A band of one group checked after it: the group stores its outputs unchecked (T = 0 fails
// NaN sums only, which the check below fails too), then the band's span, now in L1, gives the
// greatest |x| (Ops::amax: one operation per load where min and max took two) and its mixed-sign
// T. |s| < T gives |y| <= fl32(T * r_max) (rounding is monotone), so if every |y| is above that
// every output passes. Else the exact stats' T (0 for one sign) is tried, and then the rows are
// judged output by output. Since every float of the span reaches an output (Plan::check_after), a
// NaN that drops out of amax makes some y NaN, which fails both checks. A group function
// (BandFn) that rechecks its rows itself: it returns false. judge_after is that check for
// outputs already stored (v_valid: the group's V rows are in the buffer); check_after runs the
// band first.
bool judge_after(const BandArgs& a, const Ops& ops, bool v_valid) {
  const Plan& pl = *a.pl;
  const i64 OW = pl.g->out[2];
  const auto passes = [&](double t) {
    return ops.all_above(a.out_plane + a.q0 * OW, (a.q1 - a.q0) * OW, after_floor(pl, t));
  };
  const auto b = static_cast<std::size_t>(a.q0 / (pl.units_per_band * pl.rows_per_unit));
  const float* span = a.plane + pl.band_span_begin[b];
  const i64 span_len = pl.band_span_len[b];
  if (passes(mixed_threshold(pl, ops.amax(span, span_len)))) return false;
  const double t = stats_threshold(pl, ops, span, span_len);
  if (passes(t)) return false;
  // Only rows with an output at or under the floor hold one to redo (recheck_rows' own test is
  // stricter): its scalar test of every output of every row took S2 from 0.975 to 0.989.
  const float floor = after_floor(pl, t);
  for (i64 q = a.q0; q < a.q1; ++q)
    a.row_failed[q - a.q0] = !ops.all_above(a.out_plane + q * OW, OW, floor);
  recheck_rows(pl, ops, a.plane, a.out_plane, a.q0, a.q1, a.v, v_stride(pl), a.row_failed, t,
               v_valid);
  return false;
}

bool check_after(const BandArgs& a, const Ops& ops) {
  ops.band(a, ops);  // a.unchecked: its check is this one
  return judge_after(a, ops, ops.keeps_v);
}

void run_windows(const Plan& pl, const Ops& ops, const float* x, float* y, i64 unit_begin,
                 i64 unit_end, ExactRouteCounts* counts) {
  const PoolGeometry& g = *pl.g;
  const i64 out_rows = g.out[0] * g.out[1];
  const i64 vlen = v_stride(pl);
  // Group functions that keep no V rows take at least kFusedRows rows, as do those that sum
  // that many at once (Ops::min_group): band_s1_avx512 and band_s1_avx2 run four rows at a time,
  // and S9's rows of 1024 would otherwise make groups of three. A group never spans bands: no
  // more rows than a band's (rows of 200000 columns, a band each: V rows of 1.6 MB, five of
  // them zeroed for each chunk of a thread's range made two threads slower than one).
  const i64 group =
      std::min(std::max<i64>(1, pl.units_per_band * pl.rows_per_unit),
               std::max<i64>(ops.keeps_v ? ops.min_group : kFusedRows, kVBufferDoubles / vlen));
  // The scratch is made on first use: whole planes checked after their group (S2, S6) need it
  // only when a check fails, and its zeroed 32 KB cost S2 5% at two threads (eight calls a run).
  Scratch sc;
  double* vbase = nullptr;
  const auto scratch = [&] {
    // One more row than the group's: scratch for a group function (band_s2_avx2 keeps a
    // converted input row there), apart from the rows and pads that rescans rely on. Flat rows
    // leave room for the zeros exact_flat3_avx2 keeps after each.
    const i64 row = vlen + (pl.flat ? kFlatGap : 0);
    sc.v.assign(static_cast<std::size_t>((group + 1) * row + 2 * kVGuard + 8), 0.0);
    // V rows start on 64-byte boundaries (vlen is a multiple of 8): whole-block loads of a row
    // do not straddle cache lines.
    vbase = sc.v.data() + kVGuard;
    vbase += (8 - (reinterpret_cast<std::uintptr_t>(vbase) / sizeof(double)) % 8) % 8;
    sc.row_failed = std::make_unique<bool[]>(static_cast<std::size_t>(group));
    sc.least.resize(static_cast<std::size_t>(group * 8));
  };

  // Bands that write as much as they read (S3: 3x3 s1 "same" on 28x28) take their burst into
  // L2 only: into L1 it stalled on the miss buffers, which the output's first stores need as
  // well (S3 0.80-0.89 of the time). Where little is written (S6) L1 stays faster.
  const bool writes_input_size = g.out_plane_size() >= g.in_plane_size();
  // Bands of one group that write less than they read, whose every input float reaches an
  // output and whose span fits in L1 (S2, S6), are checked after it (check_after): S6 0.85-0.86
  // of the time, S2 0.92. Where as much is written (S3) the group waits on its stores instead
  // (1.35); S5's spans of 144 KB lost their stream into L2 (1.04-1.09).
  const bool after = (!ops.own_bound || ops.after) && !writes_input_size && pl.check_after &&
                     pl.units_per_band * pl.rows_per_unit <= group;
  const BandFn group_fn = after ? check_after : ops.band;
  i64 p = unit_begin / pl.bands, band = unit_begin % pl.bands;  // no division per unit
  // Units before this one whose batch of exact tries failed: the checked route. A batch holds
  // at most batch_cap bands: one after a miss, twice as many after each hit, so that data whose
  // sums round (every try misses) wastes no more bands than without batches.
  i64 checked_to = unit_begin, batch_cap = 1;
  Prefetch next;
  OwnBound own;
  ExactTries exact(counts);
  // The last stream's step, a line's floats per row, and its span and rows: the bands of a run
  // repeat them (S3: its two divisions a band, on the way to the band's first loads, had taken
  // 2% of the time).
  i64 step = 0, step_of[2] = {-1, 0};
  // prefetch_next of unit u (plane `plane`, band `band`, rows q0 .. q1).
  const auto prefetch_at = [&](i64 u, const float* plane, i64 band, i64 q0, i64 q1, bool burst) {
    next = Prefetch{};
    if (u + 1 < unit_end && !after) {
      const auto nb = static_cast<std::size_t>(band + 1 == pl.bands ? 0 : band + 1);
      const float* p_next = (nb == 0 ? plane + g.in_plane_size() : plane) + pl.band_span_begin[nb];
      const i64 len = pl.band_span_len[nb], n = std::min(len, kPrefetchFloats);
      const auto line = [&](i64 o) { return reinterpret_cast<const char*>(p_next + o); };
      if (burst && writes_input_size)
        for (i64 o = 0; o < n; o += 16) _mm_prefetch(line(o), _MM_HINT_T1);
      else if (burst)
        for (i64 o = 0; o < n; o += 16) _mm_prefetch(line(o), _MM_HINT_T0);
      const auto stream = [&](i64 from) {
        const i64 rest = len - from, rows = q1 - q0;
        if (rest != step_of[0] || rows != step_of[1])
          step_of[0] = rest, step_of[1] = rows, step = ((rest + rows - 1) / rows + 15) / 16 * 16;
        next = {p_next + from, rest, step};
      };
      if (len > kStreamMinFloats)
        stream(n);
      else if (!burst && pl.far && len >= kExactStreamFloats)
        stream(0);
    }
  };
  // buffer: whether the group function uses the scratch. An exact band that keeps no V rows and
  // scales as it sums (AVX-512's fused rows: S1, S9) uses none, so a chunk that never leaves
  // the exact route makes none (its malloc and zeroed 32 KB were 3.6% of S1's time at two
  // threads); one that did use it would fail at once on the null pointers.
  const auto args = [&](i64 plane, i64 q0, i64 q1, double t, bool buffer = true) {
    if (buffer && !vbase) scratch();
    return BandArgs{&pl,
                    x + plane * g.in_plane_size(),
                    y + plane * g.out_plane_size(),
                    q0,
                    q1,
                    t,
                    vbase,
                    vbase ? vbase + group * vlen : nullptr,
                    sc.row_failed.get(),
                    &next,
                    &own,
                    sc.least.data(),
                    after};
  };
  // Whole planes checked after (S6: 28x28 planes of 3 KB), without the band machinery: the
  // planes of a span of at most kAfterChunkFloats run first (S6: two), then one check covers
  // them all, whose T (from their greatest |x|) is at least each plane's: a plane that passes
  // its own check passes it, and one that fails its own fails it. Only a failing chunk is
  // judged plane by plane (judge_after), so the outputs do not depend on how the threads'
  // ranges cut the chunks. A NaN dropped from the maximum makes some output NaN, which fails
  // the check. Exact sums are tried over whole numbers of such chunks, up to kExactChunkFloats
  // (S6: ten planes), as the precision flag's read after each try waits for all before it.
  if (after && pl.bands == 1 && pl.band_span_begin[0] == 0 &&
      pl.band_span_len[0] == g.in_plane_size()) {
    const i64 in = g.in_plane_size(), out = g.out_plane_size();
    const i64 chunk = after_chunk_planes(g);
    const i64 exact_chunk = ops.exact_planes ? exact_chunk_planes(g) : chunk;
    // The thread's sums on cache lines of their own (detail::OwnLines).
    detail::OwnLines<double> sums(ops.exact_planes ? static_cast<std::size_t>(exact_chunk * out)
                                                   : 0);
    for (i64 e0 = unit_begin; e0 < unit_end; e0 += exact_chunk) {
      const i64 e1 = std::min(unit_end, e0 + exact_chunk);
      // Exact sums first (AVX-512, S2), as run_whole_plane: in two passes, the sums' and, after
      // the precision flag is read, the scaling's (which raises it).
      if (ops.exact_planes && (e1 - e0) * out >= 4 && exact.begin()) {
        ops.exact_planes(pl, x + e0 * in, sums.data(), e1 - e0);
        if (exact.record(!irrun::detail::inexact() &&
                         ops.scale_planes(pl, sums.data(), y + e0 * out, e1 - e0)))
          continue;
      }
      for (i64 p0 = e0; p0 < e1; p0 += chunk) {
        const i64 p1 = std::min(e1, p0 + chunk);
        if (ops.planes && (p1 - p0) * out >= 4)
          ops.planes(pl, x + p0 * in, y + p0 * out, p1 - p0);
        else
          for (i64 q = p0; q < p1; ++q) ops.band(args(q, 0, out_rows, 0.0), ops);
        const double t = mixed_threshold(pl, ops.amax(x + p0 * in, (p1 - p0) * in));
        if (ops.all_above(y + p0 * out, (p1 - p0) * out, after_floor(pl, t))) continue;
        // Again plane by plane, from the stored outputs (the band's bits), not the band run again
        // for its V rows: the rescans build the ones they need (S2 0.989 of the time, where three
        // planes a run have a near-zero average on the benchmark's input). Flat groups' V rows
        // (back to back) are the band's to build.
        for (i64 q = p0; q < p1; ++q)
          pl.flat ? check_after(args(q, 0, out_rows, 0.0), ops)
                  : judge_after(args(q, 0, out_rows, 0.0), ops, false);
      }
    }
    return;
  }
  for (i64 u = unit_begin; u < unit_end; ++u) {
    const float* plane = x + p * g.in_plane_size();
    float* out_plane = y + p * g.out_plane_size();
    const i64 q0 = band * pl.units_per_band * pl.rows_per_unit;
    const i64 q1 = std::min(out_rows, q0 + pl.units_per_band * pl.rows_per_unit);

    // The stats pass of the next band waits for memory unless its span is on its way: the
    // hardware prefetcher ramps up anew on every 4 KB page, and small bands (a 28x28 plane is
    // 3 KB) are done before it does. So the first page of the next span is asked for now, and
    // the rest of a long span (S5, S9: 144 KB) is prefetched into L2 row by row while this
    // band is computed (S9 -8%, S5 -4%; on short spans, S1, this only cost time).
    // A band checked after its group takes none: its group meets the misses with the hardware
    // prefetcher's help, and a burst stalled it (S6 0.99 with, 0.84 without). Nor does a band
    // on the exact route (burst false), whose next band will most likely take no stats pass
    // either: on Zen 5 the burst held the miss buffers the group's loads and stores need (round
    // 65, without it: S3 0.94 of the time at one thread and two, 0.88 with the AVX2 cap at two;
    // S1 0.96, S5 and S8 0.98-0.99), while on data whose sums round, where the stats pass runs,
    // it keeps S3 at 0.90 of the time it takes without.
    // Where the layer's tensors are too large to stay near in the L3 (Plan::far: 16 MiB or more
    // read and written, half the L3 of this host and of the issue's), an exact band takes the next
    // band's whole span as a stream instead, which its group prefetches a little at a time
    // (round 66): flat groups a line per block of eight outputs into L1 (S3, 25.7 MB: 0.85 of
    // the time at one thread, 0.97 at two, 0.85 with the AVX2 cap; into L2 0.93), the other
    // groups a row's step at a time (prefetch_step). 3x3 s2 on 8x64 planes of 112x112 (S1 eight
    // times, 32 MB) took 0.45-0.50 of the time, 3x3 s1 on 4x64 of them (25.7 MB) 0.47, 3x3
    // "same" on 4x256 planes of 56x56 (25.7 MB) 0.59. On smaller layers, mostly in the L3, the
    // stream only cost: S1 itself (4 MB) 1.27, three times S1 (12 MB) 1.19, four (16 MB) 0.98,
    // 8x512 planes of 21x21 (14.4 MB) 1.05, 64x64 planes in L2 1.07. Nor for short spans
    // (7x7 planes of 196 B, 25.7 MB: 1.02).
    const auto prefetch_next = [&](bool burst) { prefetch_at(u, plane, band, q0, q1, burst); };

    // 0. Sums that need no bound first (AVX-512): a band whose additions all were exact keeps
    // them (fallback_output keeps every exact sum's fl32(s * r)), with no stats pass and no
    // bound taken; else it runs again from step 1, from its first group: a band is kept or
    // redone whole, so its bits are the same however the threads' ranges fall.
    // Small bands (a plane of 10x5 is one) try in batches of about kExactBatchFloats of input
    // (AVX-512, one pass): the flag cleared once and read once after the batch, and where the
    // group function would scan its stored outputs for NaN (Ops::has_nan), the batch's outputs
    // scanned once at its end (BandArgs::nan_later). A batch that misses runs its bands again
    // on the checked route. Each band's bits are the same on either route, so where the
    // batches fall (the threads' ranges) changes no output. Per band, the flag's read and
    // write and the scan of outputs still in the store buffer had cost a 1x768x10x5 3x3 pool
    // some 25% of its time.
    const bool small = !ops.scale_band &&
                       2 * pl.band_span_len[static_cast<std::size_t>(band)] <= kExactBatchFloats;
    if (ops.exact_band && !after && small && u >= checked_to && exact.begin()) {
      const i64 rows_per_band = pl.units_per_band * pl.rows_per_unit, OW = g.out[2];
      const i64 out0 = p * g.out_plane_size() + q0 * OW;
      i64 ub = u, bp = p, bb = band, floats = 0;
      bool hit = true;
      for (; ub < unit_end && hit &&
             (ub == u || (ub - u < batch_cap && floats < kExactBatchFloats &&
                          2 * pl.band_span_len[static_cast<std::size_t>(bb)] <= kExactBatchFloats));
           ++ub) {
        const i64 b0 = bb * rows_per_band, b1 = std::min(out_rows, b0 + rows_per_band);
        prefetch_at(ub, x + bp * g.in_plane_size(), bb, b0, b1, false);
        for (i64 g0 = b0; g0 < b1 && hit; g0 += group) {
          BandArgs ga = args(bp, g0, std::min(b1, g0 + group), 0.0, ops.keeps_v);
          ga.nan_later = ops.has_nan != nullptr;
          hit = !ops.exact_band(ga, ops);
        }
        floats += pl.band_span_len[static_cast<std::size_t>(bb)];
        if (++bb == pl.bands) bb = 0, ++bp;
      }
      const i64 out1 = bp * g.out_plane_size() + bb * rows_per_band * OW;  // unit ub's first
      hit =
          hit && !(ops.has_nan && ops.has_nan(y + out0, out1 - out0)) && !irrun::detail::inexact();
      if (exact.record(hit, ub - u)) {
        u = ub - 1, p = bp, band = bb, batch_cap = std::min<i64>(2 * batch_cap, kExactBatchFloats);
        continue;
      }
      checked_to = ub, batch_cap = 1;
    } else if (ops.exact_band && !after && !small && u >= checked_to && exact.begin()) {
      prefetch_next(false);
      bool hit = true;
      for (i64 g0 = q0; g0 < q1 && hit; g0 += group) {
        const BandArgs ga =
            args(p, g0, std::min(q1, g0 + group), 0.0, ops.keeps_v || ops.scale_band);
        hit = !ops.exact_band(ga, ops) && !irrun::detail::inexact();
        // Two passes (AVX2): the scaling, then the flag cleared for the next group's sums (the
        // next band's exact.begin() clears it after the last).
        if (hit && ops.scale_band) {
          hit = ops.scale_band(ga);
          if (ga.q1 < q1) irrun::detail::clear_inexact();
        }
      }
      if (exact.record(hit)) {
        if (++band == pl.bands) band = 0, ++p;
        continue;
      }
    }

    // 1. Stats of the band's input span (a contiguous superset of the rows it reads), unless
    // the group function takes its bound from its own loads or the band is checked after it.
    const auto b = static_cast<std::size_t>(band);
    // Without stats T is NaN, not threshold's 0: a group function that used it by mistake would
    // fail every output (each then judged by its own window) instead of passing every one. A
    // group checked after takes 0 (check_after).
    const double t = after           ? 0.0
                     : ops.own_bound ? std::numeric_limits<double>::quiet_NaN()
                                     : stats_threshold(pl, ops, plane + pl.band_span_begin[b],
                                                       pl.band_span_len[b]);
    prefetch_next(true);

    own = OwnBound{};
    for (i64 g0 = q0; g0 < q1; g0 += group) {
      const i64 g1 = std::min(q1, g0 + group);
      // 2-3. Vertical and horizontal sums, scaling, check, store.
      if (!group_fn(args(p, g0, g1, t), ops)) continue;
      recheck_rows(pl, ops, plane, out_plane, g0, g1, vbase, vlen, sc.row_failed.get(),
                   ops.own_bound ? own.t : t, ops.keeps_v);
    }
    if (++band == pl.bands) band = 0, ++p;
  }
}

// ---- Planes in lanes (Plan::lanes): eight small planes at a time, on the exact route only.

// Chunk c holds planes 8c .. 8c + 7. A chunk whose sums round or hold a NaN runs again through
// run_windows, as do the planes past the last whole chunk and, once more than about an eighth
// of the thread's tries missed (ExactTries), the rest of its range; where the lanes' sums are
// exact they have run_windows' bits.
void run_lanes(const Plan& pl, const Ops& ops, const float* x, float* y, i64 chunk_begin,
               i64 chunk_end, ExactRouteCounts* counts) {
  const PoolGeometry& g = *pl.g;
  const i64 in = g.in_plane_size(), out = g.out_plane_size();
  const i64 end = std::min(g.planes(), 8 * chunk_end);
  const detail::LineBytes bytes =
      detail::own_line_bytes(sizeof(double) * static_cast<std::size_t>(lanes_scratch(pl)));
  auto* const scratch = reinterpret_cast<double*>(bytes.get());
  ExactTries exact(counts);
  for (i64 p0 = 8 * chunk_begin; p0 < end; p0 += 8) {
    if (p0 + 8 > end || !exact.begin()) {
      run_windows(pl, ops, x, y, p0 * pl.bands, end * pl.bands, counts);
      return;
    }
    if (counts) ++counts->lane_tries;
    if (!exact.record(ops.lanes(pl, x + p0 * in, y + p0 * out, scratch)))
      run_windows(pl, ops, x, y, p0 * pl.bands, (p0 + 8) * pl.bands, counts);
  }
}

// A plan and the ops chosen for it, from the geometry and the ISA alone (kept_plan.hpp).
struct Planned {
  PoolGeometry g;
  Isa isa = Isa::best;
  Plan pl;
  Ops ops;
  std::size_t table_bytes() const { return avg_fast::table_bytes(pl); }
};

// The plan and ops of g (g has outputs), or none where the fast kernel does not cover g.
std::shared_ptr<const Planned> plan_of(const PoolGeometry& g, Isa isa) {
  return detail::kept_plan<Planned>(g, isa, [](Planned& p) {
    if (!make_plan(p.g, p.pl)) return false;
    const bool avx512 = p.isa == Isa::best && cpu_has_avx512();
    const bool avx2 = !avx512 && (p.isa == Isa::best || p.isa == Isa::avx2) && cpu_has_avx2();
    p.ops = avx512 ? select_avx512(p.pl) : avx2 ? select_avx2(p.pl) : select_portable(p.pl);
    // The exact-first routes trust the precision flag: none where it is not seen to work.
    if (!irrun::detail::inexact_flag_works())
      p.ops.exact_plane_sums = nullptr, p.ops.exact_band = nullptr, p.ops.exact_planes = nullptr,
      p.ops.lanes = nullptr;
    return true;
  });
}

// Whether the fast kernel covers g: from the kept plan (the 16-bit kernels ask before each run
// of g, and make_plan took 32% of a piece of 16384 outputs), but for a g without outputs, which
// runs nothing and keeps no plan.
bool covers(const PoolGeometry& g, Isa isa) {
  if (g.planes() * g.out_plane_size() == 0) {
    Plan pl;
    return make_plan(g, pl);
  }
  return plan_of(g, isa) != nullptr;
}

}  // namespace

bool avg_pool_fast_covers(ElementType type, const PoolGeometry& g) {
  return type == ElementType::f32 && covers(g, Isa::best);
}

bool avg_pool_fast(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par,
                   Isa isa, ExactRouteCounts* counts) {
  if (in.type != ElementType::f32 || out.type != ElementType::f32) return false;
  const irrun::detail::FpScope ieee;  // IEEE defaults (fp_control.hpp)
  if (g.planes() * g.out_plane_size() == 0) return covers(g, isa);
  const std::shared_ptr<const Planned> planned = plan_of(g, isa);
  if (!planned) return false;
  const Plan& pl = planned->pl;
  const Ops& ops = planned->ops;

  const float* x = in.data<float>();
  float* y = out.mutable_data<float>();
  const i64 bytes = 4 * g.planes() * (g.in_plane_size() + g.out_plane_size());
  const auto split = [&](i64 n, auto&& body) {
    par.for_range(n, body, Parallel::fork_grain(n, bytes));
  };
  if (pl.whole_plane) {
    split((g.planes() + kWholePlaneBlock - 1) / kWholePlaneBlock,
          [&](i64 b, i64 e) { run_whole_plane(pl, ops, x, y, b, e, counts); });
  } else if (ops.lanes) {
    split((g.planes() + 7) / 8, [&](i64 b, i64 e) { run_lanes(pl, ops, x, y, b, e, counts); });
  } else {
    split(g.planes() * pl.bands, [&](i64 b, i64 e) { run_windows(pl, ops, x, y, b, e, counts); });
  }
  return true;
}

}  // namespace irrun::kernels
