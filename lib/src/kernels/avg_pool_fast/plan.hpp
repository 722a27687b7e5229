// The tables of the fast f32 AvgPool (avg_pool_fast.cpp), built once per call from the geometry
// alone, before any thread starts: per axis the in-bounds taps of every window, per flattened
// output row the input rows it sums (in summation order), per band the input span scanned for
// min/max, the factor of the accuracy threshold, and the tables of flat groups.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "../exact_sum.hpp"
#include "../lines.hpp"
#include "../window.hpp"
#include "irrun/pool_geometry.hpp"

namespace irrun::kernels::avg_fast {

using i64 = std::int64_t;

constexpr i64 kMaxTaps = i64{1} << 22;   // N above this: the reference kernel
constexpr i64 kBandInputFloats = 32768;  // input floats scanned per band (L2-sized)
constexpr i64 kVBufferDoubles = 4096;    // vertical sums kept per group of rows (L1)
constexpr i64 kPrefetchFloats = 1024;    // floats of the next band's span prefetched (4 KB)
constexpr i64 kStreamMinFloats = 16384;  // longer spans: the rest prefetched row by row
constexpr i64 kExactStreamFloats = 512;  // exact bands' spans streamed in, at least (far)
constexpr i64 kAfterMaxFloats = 8192;    // spans checked after their group, at most (L1)
constexpr i64 kAfterChunkFloats = 2048;  // whole planes checked after together, at most
constexpr i64 kExactChunkFloats = 8192;  // whole planes summed exactly together, at most
constexpr i64 kExactBatchFloats = 4096;  // small bands' exact tries batched up to this span
constexpr i64 kWholePlaneBlock = 64;     // planes per unit in the whole-plane kernel
constexpr i64 kFlatMaxWidth = 64;        // flat groups: rows up to this wide, kernels up to
constexpr i64 kFlatMaxKernel = 16;       // this wide, planes up to this many outputs
constexpr i64 kFlatMaxPlane = i64{1} << 16;
constexpr i64 kFlatGap = 4;        // most zeros after each V row of exact_flat3_avx2 (3x3 "same")
constexpr i64 kVGuard = 32;        // doubles before and after the V buffer (flat taps and tails)
constexpr i64 kBoundMinRows = 8;   // Plan::bound_in_pass: windows of at least this many rows
constexpr i64 kFusedRows = 4;      // output rows that band_s1_avx512 sums in one pass
constexpr i64 kFusedMaxRows = 64;  // fused rows (band_s1/s2_avx512): window rows, at most

constexpr i64 kStreamMaxKernel = 9;  // streamed planes: windows up to 9 wide (two blocks of V)
constexpr i64 kLanesMaxPlane = 512;  // planes in lanes: input planes of at most this many floats

// Tables the vector loops load a whole register of at a time start on a cache line (lines.hpp).
using detail::LineVector;

// An axis's windows (window.hpp) and the most taps of any.
struct Axis : detail::AxisWindows {
  i64 max_taps = 0;
};

struct Plan {
  const PoolGeometry* g = nullptr;
  Axis ax[3];
  bool uniform = false;  // every window divides by the kernel volume
  detail::Divisor kvol;  // the kernel volume (kvol.hi: rounded to a double past 2^53)
  bool whole_plane = false;
  bool fixed_w = false;  // horizontal windows of fixed K taps over a zero-padded row
  i64 stride_w = 1, k_w = 1, pad_left = 0, vlen = 0;
  LineVector<double> inv_w;  // per output column (padded to a multiple of 4)
  // inv_w in the order 0, 2, 1, 3 of each four, where the AVX2 stride-2 rows leave their sums so
  // (select_avx2; empty elsewhere).
  LineVector<double> inv_w_swap;
  bool equal_w = false;     // inv_w[ow] the same for every output column
  double t_factor = 0;      // T = M * t_factor for a mixed-sign band
  i64 units_per_plane = 1;  // bands per plane (window kernel)
  i64 rows_per_unit = 1;    // output rows (flattened od*OH + oh) per band unit
  i64 units_per_band = 1;
  i64 bands = 1;
  i64 max_rows = 1;  // max input rows summed by the vertical pass
  // The vertical pass may take the group's greatest |x| from its own loads instead of a stats
  // pass over the band: windows of kBoundMinRows rows or more (long chains of additions leave
  // the vector pipes room for one more operation per load), input rows read about once (at most
  // 5/4 times: each read costs that operation again) and every input column inside some window
  // (so every value loaded reaches some output, and a NaN among them makes that output NaN).
  bool bound_in_pass = false;
  // Per-geometry row tables (flattened output row q = od*OH + oh), built once per call: the
  // float offsets in a plane of the input rows summed into V for row q are
  // row_off[row_begin[q] .. row_begin[q+1]), in summation order; row_rinv[q] is the row factor.
  std::vector<i64> row_begin, row_off;
  std::vector<double> row_rinv;
  double r_max = 0;  // at least every fl(row_rinv[q] * inv_w[ow]): run_windows' check after a group
  // Runs of rows: rows q .. step_end[q]-1 sum as many input rows as q, at q's offsets plus
  // row_step per row (the vertical stride, or an even bin's height, times IW), so a group
  // function advances its row pointers instead of reading them from the table for each row:
  // those dependent loads after the row's stores cost S2 ~15%.
  i64 row_step = 0;
  std::vector<i64> step_end;
  // Per band: float offset and length of the contiguous input span scanned for min/max.
  std::vector<i64> band_span_begin, band_span_len;
  // Spans of at most kAfterMaxFloats, every float of each an input of one of its band's windows
  // (run_windows may then check a band after its group).
  bool check_after = false;
  // The layer is far (detail::far_layer), too large to stay near in the L3: its
  // exact bands and chunks of planes prefetch the next ones as they go (run_windows).
  bool far = false;
  // Flat groups (AVX-512, see band_flat_avx512): V rows back to back, vlen = IW.
  bool flat = false;
  std::vector<i64> run_end;  // rows q .. run_end[q]-1 read the rows of q shifted by IW per row
  // Per output of a plane: fl(row_rinv[q] * inv_w[ow]) (flat groups, planes in lanes).
  LineVector<double> flat_r;
  double flat_one = 0;  // one_factor(*this): every flat_r the same (include-pad), else 0
  // Fused stride-1 rows (band_s1_avx512): fl(full_rinv * inv_w[ow]) for the rows whose factor
  // is full_rinv, that of windows of max_rows rows (all rows but a few at the edges), which then
  // take y = s * full_r[ow] with one multiplication fewer per eight outputs.
  double full_rinv = 0;
  LineVector<double> full_r;
  // The blocks of eight outputs from full_lo to full_hi (multiples of 8) whose factors are all
  // full_mid (the row's interior): they take it from a register.
  double full_mid = 0;
  i64 full_lo = 0, full_hi = 0;
  // Whole planes of bins of four run flat (planes_bins4): per output of a chunk of
  // after_chunk_planes planes, its bin's first input float (from the chunk's first); every bin
  // sums bins4_rows.size() rows at these offsets.
  std::vector<i64> bins4_start, bins4_rows;
  // [block of eight % mask_period][tap][lane]: all ones where the lane's tap is in its own row.
  LineVector<std::uint64_t> flat_lanes;
  // The same lanes as bit masks, [block of eight % mask_period][tap] (AVX-512's masked adds).
  std::vector<std::uint8_t> flat_kmask;
  i64 mask_period = 1;
  // Streamed planes (stream.hpp): a chunk's planes as one row of positions, every output at the
  // position of its window's first input. V at a position sums the floats stream_taps past it
  // (output 0's input rows, in summation order), and the k_w V values from an output's own
  // position on are its window's: no window reaches past its row or plane. Per block of eight
  // positions (the block's index modulo the table's length): the lanes that hold an output,
  // their count and their order.
  struct StreamBlock {
    std::uint64_t order = 0;  // byte j: the lane of the block's j-th output
    std::uint8_t lanes = 0, count = 0;
  };
  std::vector<i64> stream_taps;
  std::vector<StreamBlock> stream_blocks;
  i64 stream_last = 0;  // the position of a plane's last output
};

// Fills pl for g; false when the fast kernel does not cover g (windows of more than kMaxTaps
// taps).
bool make_plan(const PoolGeometry& g, Plan& pl);

// The bytes of pl's tables.
std::size_t table_bytes(const Plan& pl);

// Whether every output row sums `rows` consecutive input rows; whether all output rows are one
// run (Plan::step_end: the first input row steps by row_step from each to the next).
bool rows_consecutive(const Plan& pl, i64 rows);
bool one_run(const Plan& pl);
// The factor fl(row_rinv[q] * inv_w[ow]) of every output, where all are the same (every row
// factor equal and Plan::equal_w), else 0: the scale passes of such chunks take it flat.
double one_factor(const Plan& pl);
// The tables of planes_bins4 (Plan::bins4_start, bins4_rows), where whole planes are checked
// after (Plan::check_after), every output row's bins sum the same number of consecutive input
// rows and a chunk holds four outputs or more; false (no tables) otherwise. (run_windows takes band
// for a thread's last chunk where it holds fewer.)
bool make_bins4_planes(Plan& pl);

// Flat groups (band_flat_*) for narrow stride-1 rows with OW == IW: whether they apply, and
// their run and mask tables in pl.
bool flat_eligible(const Plan& pl);
void make_flat(Plan& pl);

// Streamed planes (stream.hpp) for stride-1 windows inside small planes with narrow rows, whole
// planes checked after their group, one factor for every output: whether they apply and pay,
// and then their tables in pl.
bool make_stream(Plan& pl);

// Planes in lanes (Ops::lanes: eight small planes at a time, plane k in lane k of every vector)
// for planes of at most kLanesMaxPlane floats, eight or more of them: whether they apply, and
// then the outputs' factors in pl (Plan::flat_r).
bool make_lanes(Plan& pl);
// The vectors of a V row of Ops::lanes: pl.vlen (the zero-padded row) where the windows are
// fixed (Plan::fixed_w), else IW.
inline i64 lanes_vlen(const Plan& pl) {
  return pl.fixed_w ? pl.vlen : pl.g->in[2];
}
// The doubles of scratch Ops::lanes takes: the widened planes, a V row and the outputs' sums
// (AVX2) or outputs (AVX-512).
i64 lanes_scratch(const Plan& pl);
// T for a band whose finite inputs lie in [lo, hi]: an output whose sum s has |s| >= T is
// proven within one ulp (avg_pool_fast.cpp, accuracy proof).
double threshold(const Plan& pl, float lo, float hi);

// threshold's T, or more, for the inputs whose raw bits have the unsigned maximum u and the
// signed maximum s (each taken with 0): u is above 0x80000000 when some input is negative, and
// then its low 31 bits are their greatest |x|; s is above 0 when some input is positive, and
// then it is the greatest of them. A NaN's bits lie above infinity's in both: T is then NaN,
// which fails every check (threshold ignores NaN; here it would otherwise hide among the sums).
// So is a T of infinity (both infinities among the inputs): a check of a row's least |s| would
// pass a row whose NaN sums (+inf + -inf) hide among infinite ones, with the sum's NaN bits, not
// the reference's.
double bits_threshold(const Plan& pl, std::uint32_t u, std::int32_t s);

// T for inputs of mixed sign with |x| <= m: threshold's value, or more, for any band whose
// greatest |x| is at most m.
inline double mixed_threshold(const Plan& pl, float m) {
  return static_cast<double>(m) * pl.t_factor;
}

// Planes per chunk of whole planes checked after their group (run_windows): kAfterChunkFloats
// of input, at least one plane.
inline i64 after_chunk_planes(const PoolGeometry& g) {
  return std::max<i64>(1, kAfterChunkFloats / std::max<i64>(1, g.in_plane_size()));
}

// Planes per try of their exact sums (run_windows: Ops::exact_planes), a whole number of
// after_chunk_planes: the precision flag read after each try waits for every operation before
// it, and S6's chunks of two planes had spent a fifth of its time there (round 81).
inline i64 exact_chunk_planes(const PoolGeometry& g) {
  const i64 chunk = after_chunk_planes(g);
  return chunk *
         std::max<i64>(1, kExactChunkFloats / (chunk * std::max<i64>(1, g.in_plane_size())));
}

// The least |y| of outputs that pass a check of their stored values against T: |s| < T gives
// |y| <= fl32(T * r_max) (rounding is monotone). T = 0 passes all but NaN (-1); a T of NaN
// passes none.
inline float after_floor(const Plan& pl, double t) {
  return t == 0 ? -1.0f : static_cast<float>(t * pl.r_max);
}

// The output of a window whose fast sum s failed its own check (strong cancellation, NaN): the
// fast result fl32(s * r) still when s is the exact sum of the window's inputs rounded to
// nearest (at most half a double ulp off: nothing to bound; every sum whose additions were all
// exact), else the exact average, the reference kernel's bits. r is the factor the paths scale
// this output by, fl(rinv * inv_w).
float fallback_output(const Plan& pl, const float* plane, i64 od, i64 oh, i64 ow, double s,
                      double r);

// T of one output's own window, from the min and max of its inputs: the check that decides
// whether its fast sum stands (avg_pool_fast.cpp, accuracy proof).
double window_threshold(const Plan& pl, const float* plane, i64 od, i64 oh, i64 ow);

}  // namespace irrun::kernels::avg_fast
