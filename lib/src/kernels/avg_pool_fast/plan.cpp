#include "plan.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <numeric>

#include "../exact_sum.hpp"
#include "../kept_plan.hpp"
#include "../read_ahead.hpp"

namespace irrun::kernels::avg_fast {
namespace {

Axis make_axis(const PoolGeometry& g, std::size_t a) {
  Axis ax{detail::axis_windows(g, a)};
  for (const i64 taps : ax.taps) ax.max_taps = std::max(ax.max_taps, taps);
  return ax;
}

// Runs of output rows: end[q] is one past the last row of the run from q, whose rows sum as
// many input rows as q, each at q's offsets plus `shift` per row.
std::vector<i64> make_runs(const Plan& pl, i64 rows, i64 shift) {
  const auto at = [](i64 i) { return static_cast<std::size_t>(i); };
  std::vector<i64> end(at(rows), 0);
  for (i64 q = rows - 1; q >= 0; --q) {
    const i64 b = pl.row_begin[at(q)], r = pl.row_begin[at(q + 1)] - b;
    bool joins = q + 1 < rows && pl.row_begin[at(q + 2)] - pl.row_begin[at(q + 1)] == r;
    for (i64 j = 0; joins && j < r; ++j)
      joins = pl.row_off[at(b + r + j)] == pl.row_off[at(b + j)] + shift;
    end[at(q)] = joins ? end[at(q + 1)] : q + 1;
  }
  return end;
}

// Whether every column of [0, n) is a tap of some window of the axis. Undilated windows and
// bins start in order (first is nondecreasing), so a sweep tells; dilated ones are marked tap by
// tap (a row of millions with 64-tap windows took 0.5 s so).
bool every_column_read(const Axis& ax, i64 n) {
  if (ax.step == 1) {
    i64 read_to = 0;  // columns [0, read_to) are read
    for (std::size_t o = 0; o < ax.first.size() && read_to < n; ++o) {
      if (ax.taps[o] == 0) continue;
      if (ax.first[o] > read_to) return false;
      read_to = std::max(read_to, ax.first[o] + ax.taps[o]);
    }
    return read_to >= n;
  }
  std::vector<bool> read(static_cast<std::size_t>(n), false);
  for (std::size_t o = 0; o < ax.first.size(); ++o)
    for (i64 t = 0; t < ax.taps[o]; ++t)
      read[static_cast<std::size_t>(ax.first[o] + t * ax.step)] = true;
  return std::all_of(read.begin(), read.end(), [](bool b) { return b; });
}

}  // namespace

bool make_plan(const PoolGeometry& g, Plan& pl) {
  // An empty input axis padded to outputs: no window has a tap (the reference kernel's zeros
  // cost nothing), and the spans below would divide by an empty row.
  if (std::find(g.in.begin(), g.in.end(), 0) != g.in.end() && g.out_plane_size() > 0) return false;
  pl.g = &g;
  for (std::size_t a = 0; a < 3; ++a) pl.ax[a] = make_axis(g, a);
  const i64 n_max = pl.ax[0].max_taps * pl.ax[1].max_taps * pl.ax[2].max_taps;
  if (n_max > kMaxTaps) return false;
  pl.uniform = !g.adaptive && g.pads_in_avg;
  pl.far = detail::far_layer(static_cast<double>(g.planes()) *
                             static_cast<double>(g.in_plane_size() + g.out_plane_size()) *
                             sizeof(float));
  pl.kvol = detail::volume_divisor(g.kernel.data());

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
  // A division where the taps change; the greatest factor and whether all are equal on the
  // way (rows of millions of outputs: one pass over them).
  double w = 0.0, w_max = 0.0;
  pl.equal_w = true;
  for (i64 ow = 0, last = -1; ow < g.out[2]; ++ow) {
    const i64 tw = pl.uniform ? 0 : pl.ax[2].taps[static_cast<std::size_t>(ow)];
    if (tw != last) {
      w = pl.uniform ? 1.0 / pl.kvol.hi : (tw == 0 ? 0.0 : 1.0 / static_cast<double>(tw));
      pl.equal_w = pl.equal_w && (ow == 0 || w == pl.inv_w[0]);
      w_max = std::max(w_max, w);
      last = tw;
    }
    pl.inv_w[static_cast<std::size_t>(ow)] = w;
  }

  // T = N * d * M * 2^-26 with d = N - 1 (at least 1): no value of a window meets more than
  // N - 1 rounded additions on its way to the sum, whatever the order (avg_pool_fast.cpp,
  // accuracy proof). N * d is exact: N <= kMaxTaps.
  const i64 depth = std::max<i64>(1, n_max - 1);
  pl.t_factor = static_cast<double>(n_max) * static_cast<double>(depth) * 0x1p-26;

  pl.max_rows = std::max<i64>(1, pl.ax[0].max_taps * pl.ax[1].max_taps);
  // Bands: whole output depth slices for 3-D pooling (so a band's input is contiguous), else
  // output rows; sized so a band reads about kBandInputFloats, fixed by the geometry alone.
  const bool by_depth = g.out[0] > 1;
  pl.rows_per_unit = by_depth ? g.out[1] : 1;
  const i64 in_rows_per_unit =
      by_depth ? std::max<i64>(1, g.stride[0]) * g.in[1]
               : std::max<i64>(1, g.adaptive ? g.in[1] / std::max<i64>(1, g.out[1]) : g.stride[1]);
  const i64 units = by_depth ? g.out[0] : g.out[1];
  // units may be 0 (no output rows): then one unit per band and no bands.
  pl.units_per_band = std::clamp<i64>(
      kBandInputFloats / std::max<i64>(1, in_rows_per_unit * g.in[2]), 1, std::max<i64>(1, units));
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
  // Rounding is monotone: no product of the factors rounds above that of their maxima.
  const auto greatest = [](const auto& v) {
    return std::accumulate(v.begin(), v.end(), 0.0,
                           [](double a, double b) { return std::max(a, b); });
  };
  pl.r_max = greatest(pl.row_rinv) * w_max;
  const i64 rows_per_bin = g.adaptive && OH > 0 && IH % OH == 0 ? IH / OH : 0;
  pl.row_step = (g.adaptive ? rows_per_bin : g.stride[1]) * IW;
  pl.step_end = make_runs(pl, out_rows, pl.row_step);
  const bool all_columns = every_column_read(pl.ax[2], IW);
  pl.bound_in_pass = pl.max_rows >= kBoundMinRows &&
                     4 * static_cast<i64>(pl.row_off.size()) <= 5 * g.in[0] * IH && all_columns;
  pl.check_after = all_columns;
  pl.band_span_begin.assign(static_cast<std::size_t>(pl.bands), 0);
  pl.band_span_len.assign(static_cast<std::size_t>(pl.bands), 0);
  for (i64 band = 0; band < pl.bands; ++band) {
    const i64 q0 = band * pl.units_per_band * pl.rows_per_unit;
    const i64 q1 = std::min(out_rows, q0 + pl.units_per_band * pl.rows_per_unit);
    const auto b0 = pl.row_off.begin() + pl.row_begin[static_cast<std::size_t>(q0)];
    const auto b1 = pl.row_off.begin() + pl.row_begin[static_cast<std::size_t>(q1)];
    if (b0 == b1) continue;
    const auto [lo, hi] = std::minmax_element(b0, b1);
    const i64 len = *hi - *lo + IW;
    pl.band_span_begin[static_cast<std::size_t>(band)] = *lo;
    pl.band_span_len[static_cast<std::size_t>(band)] = len;
    if (!pl.check_after || len > kAfterMaxFloats) {
      pl.check_after = false;
      continue;
    }
    std::vector<bool> read(static_cast<std::size_t>(len / IW), false);
    for (auto it = b0; it != b1; ++it) read[static_cast<std::size_t>((*it - *lo) / IW)] = true;
    pl.check_after = std::all_of(read.begin(), read.end(), [](bool r) { return r; });
  }
  return true;
}

std::size_t table_bytes(const Plan& pl) {
  std::size_t bytes = 0;
  for (const Axis& ax : pl.ax) bytes += detail::vector_bytes(ax.first, ax.taps);
  return bytes + detail::vector_bytes(pl.inv_w, pl.inv_w_swap, pl.row_begin, pl.row_off,
                                      pl.row_rinv, pl.step_end, pl.band_span_begin,
                                      pl.band_span_len, pl.run_end, pl.flat_r, pl.full_r,
                                      pl.bins4_start, pl.bins4_rows, pl.flat_lanes, pl.flat_kmask,
                                      pl.stream_taps, pl.stream_blocks);
}

bool rows_consecutive(const Plan& pl, i64 rows) {
  const i64 IW = pl.g->in[2];
  for (std::size_t q = 0; q + 1 < pl.row_begin.size(); ++q) {
    const auto b = static_cast<std::size_t>(pl.row_begin[q]);
    if (pl.row_begin[q + 1] - pl.row_begin[q] != rows) return false;
    for (i64 k = 1; k < rows; ++k)
      if (pl.row_off[b + static_cast<std::size_t>(k)] != pl.row_off[b] + k * IW) return false;
  }
  return true;
}

bool one_run(const Plan& pl) {
  return !pl.step_end.empty() && pl.step_end[0] == static_cast<i64>(pl.step_end.size());
}

double one_factor(const Plan& pl) {
  if (!pl.equal_w || pl.row_rinv.empty()) return 0;
  const double r = pl.row_rinv[0];
  for (const double q : pl.row_rinv)
    if (q != r) return 0;
  return r * pl.inv_w[0];
}

bool make_bins4_planes(Plan& pl) {
  const PoolGeometry& g = *pl.g;
  const i64 in = g.in_plane_size(), out = g.out_plane_size(), OW = g.out[2], IW = g.in[2];
  const i64 chunk = after_chunk_planes(g);
  const i64 rows = pl.row_begin.size() > 1 ? pl.row_begin[1] - pl.row_begin[0] : 0;
  if (!pl.check_after || rows == 0 || chunk * out < 4 || !rows_consecutive(pl, rows)) return false;
  pl.bins4_rows.resize(static_cast<std::size_t>(rows));
  for (i64 k = 0; k < rows; ++k) pl.bins4_rows[static_cast<std::size_t>(k)] = k * IW;
  const i64 n = exact_chunk_planes(g) * out;  // at least chunk * out
  pl.bins4_start.resize(static_cast<std::size_t>(n));
  for (i64 o = 0; o < n; ++o) {
    const i64 p = o / out, q = o % out / OW, ow = o % OW;
    const auto at = [](i64 i) { return static_cast<std::size_t>(i); };
    pl.bins4_start[at(o)] = p * in + pl.row_off[at(pl.row_begin[at(q)])] + 4 * ow;
  }
  return true;
}

namespace {

// Plan::flat_r.
void output_factors(Plan& pl) {
  const i64 rows = pl.g->out[0] * pl.g->out[1], OW = pl.g->out[2];
  const auto at = [](i64 i) { return static_cast<std::size_t>(i); };
  pl.flat_r.resize(at(rows * OW));
  for (i64 q = 0; q < rows; ++q)
    for (i64 ow = 0; ow < OW; ++ow)
      pl.flat_r[at(q * OW + ow)] = pl.row_rinv[at(q)] * pl.inv_w[at(ow)];
}

}  // namespace

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
  pl.run_end = make_runs(pl, rows, IW);
  output_factors(pl);
  pl.flat_one = one_factor(pl);
  pl.mask_period = std::lcm(i64{8}, IW) / 8;
  pl.flat_lanes.assign(at(pl.mask_period * pl.k_w * 8), 0);
  pl.flat_kmask.assign(at(pl.mask_period * pl.k_w), 0);
  for (i64 b = 0; b < pl.mask_period; ++b)
    for (i64 j = 0; j < pl.k_w; ++j)
      for (i64 l = 0; l < 8; ++l) {
        const i64 c = (8 * b + l) % IW + j - pl.pad_left;
        if (c < 0 || c >= IW) continue;
        pl.flat_lanes[at((b * pl.k_w + j) * 8 + l)] = ~std::uint64_t{0};
        pl.flat_kmask[at(b * pl.k_w + j)] |= static_cast<std::uint8_t>(1 << l);
      }
}

bool make_stream(Plan& pl) {
  const PoolGeometry& g = *pl.g;
  const i64 IH = g.in[1], IW = g.in[2], OH = g.out[1], OW = g.out[2], in = g.in_plane_size();
  const i64 out = g.out_plane_size(), rows = g.out[0] * OH;
  // Whole planes checked after their group (run_windows), of one band each.
  if (!pl.check_after || pl.bands != 1 || out >= in || in > kAfterChunkFloats ||
      one_factor(pl) == 0)
    return false;
  if (!pl.fixed_w || pl.stride_w != 1 || pl.pad_left != 0 || pl.k_w > kStreamMaxKernel ||
      OW + pl.k_w - 1 > IW)
    return false;
  // Where it pays: rows narrower than 32 (wider ones fill the row kernels' blocks: 32x32 and
  // 40x40 planes took 1.05x and 1.12x, 28x28 0.88), and an output per block of eight positions
  // or more (3-D windows of 2x7x7 on 10x7x7 planes, nine outputs to 490 positions, took 3.2x).
  if (IW >= 32 || 8 * out < in) return false;
  const auto at = [](i64 i) { return static_cast<std::size_t>(i); };
  const i64 r = pl.row_begin[1];
  if (r == 0) return false;
  // Every output row sums output 0's rows moved to its own position (stride 1, no padding).
  for (i64 q = 0; q < rows; ++q) {
    const i64 b = pl.row_begin[at(q)], shift = (q / OH * IH + q % OH) * IW;
    if (pl.row_begin[at(q + 1)] - b != r) return false;
    for (i64 j = 0; j < r; ++j)
      if (pl.row_off[at(b + j)] != pl.row_off[at(j)] + shift) return false;
  }
  pl.stream_taps.assign(pl.row_off.begin(), pl.row_off.begin() + r);
  pl.stream_last = ((g.out[0] - 1) * IH + OH - 1) * IW + OW - 1;
  pl.stream_blocks.assign(at(std::lcm(in, i64{8}) / 8), {});
  for (i64 i = 0; i < 8 * static_cast<i64>(pl.stream_blocks.size()); ++i) {
    const i64 pos = i % in, w = pos % IW, h = pos / IW % IH, d = pos / IW / IH;
    if (d >= g.out[0] || h >= OH || w >= OW) continue;
    Plan::StreamBlock& blk = pl.stream_blocks[at(i / 8)];
    blk.lanes = static_cast<std::uint8_t>(blk.lanes | 1u << (i % 8));
    blk.order |= static_cast<std::uint64_t>(i % 8) << (8 * blk.count++);
  }
  return true;
}

bool make_lanes(Plan& pl) {
  const PoolGeometry& g = *pl.g;
  if (pl.whole_plane || g.planes() < 8 || g.in_plane_size() > kLanesMaxPlane) return false;
  if (pl.flat_r.empty()) output_factors(pl);  // make_flat's, where flat groups apply too
  return true;
}

i64 lanes_scratch(const Plan& pl) {
  const PoolGeometry& g = *pl.g;
  return 8 * (g.in_plane_size() + lanes_vlen(pl) + g.out_plane_size());
}

namespace {

// f(x) for every input of window (od, oh, ow), in the reference kernel's order.
template <class F>
void for_each_tap(const Plan& pl, const float* plane, i64 od, i64 oh, i64 ow, F&& f) {
  const PoolGeometry& g = *pl.g;
  const auto D = static_cast<std::size_t>(od), H = static_cast<std::size_t>(oh),
             W = static_cast<std::size_t>(ow);
  const i64 td = pl.ax[0].taps[D], th = pl.ax[1].taps[H], tw = pl.ax[2].taps[W];
  for (i64 a = 0; a < td; ++a) {
    const i64 id = pl.ax[0].first[D] + a * pl.ax[0].step;
    for (i64 b = 0; b < th; ++b) {
      const i64 ih = pl.ax[1].first[H] + b * pl.ax[1].step;
      const float* row = plane + (id * g.in[1] + ih) * g.in[2];
      for (i64 c = 0; c < tw; ++c) f(row[pl.ax[2].first[W] + c * pl.ax[2].step]);
    }
  }
}

}  // namespace

float fallback_output(const Plan& pl, const float* plane, i64 od, i64 oh, i64 ow, double s,
                      double r) {
  i64 taps = 0;
  for_each_tap(pl, plane, od, oh, ow, [&](float) { ++taps; });
  if (taps == 0) return 0.0f;
  const auto for_each_value = [&](const auto& f) {
    for_each_tap(pl, plane, od, oh, ow, [&](float x) { f(x); });
  };
  const detail::Divisor n = pl.uniform ? pl.kvol : detail::Divisor(taps);
  // The exact sum rounded to nearest: from exact_sum's TwoSums where they hold it (a
  // superaccumulator first made each output of windows cancelling to 0 cost 10x the reference's).
  double hi, lo;
  if (detail::exact_sum(for_each_value, hi, lo)) {
    if (hi == s) return static_cast<float>(s * r + 0.0);  // finish's bits
    return static_cast<float>(detail::mean_of(hi, lo, n));
  }
  if (std::isfinite(s)) {  // then every input is finite
    detail::Superaccumulator exact;
    for_each_tap(pl, plane, od, oh, ow, [&](float x) { exact.add(x); });
    if (exact.split().hi == s) return static_cast<float>(s * r + 0.0);
    return static_cast<float>(detail::mean_of(exact, n));  // what a replay would give
  }
  return static_cast<float>(detail::exact_mean_replayed(for_each_value, n));
}

double window_threshold(const Plan& pl, const float* plane, i64 od, i64 oh, i64 ow) {
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
  for_each_tap(pl, plane, od, oh, ow, [&](float x) {
    if (x > hi) hi = x;  // NaN compares false: ignored
    if (x < lo) lo = x;
  });
  return threshold(pl, lo, hi);
}

double threshold(const Plan& pl, float lo, float hi) {
  if (!(lo <= hi)) return 0.0;         // no value but NaN: nothing to bound
  if (lo >= 0 || hi <= 0) return 0.0;  // one sign: sum|x| = |s|, relative bound
  return mixed_threshold(pl, std::max(hi, -lo));
}

double bits_threshold(const Plan& pl, std::uint32_t u, std::int32_t s) {
  const std::uint32_t neg = u > 0x80000000u ? u & 0x7FFFFFFFu : 0;  // -0 is no negative value
  const auto pos = static_cast<std::uint32_t>(std::max(s, 0));
  const float m = std::bit_cast<float>(std::max(neg, pos));
  const bool mixed = neg != 0 && pos != 0;
  if (std::isnan(m) || (mixed && std::isinf(m))) return std::numeric_limits<double>::quiet_NaN();
  return mixed ? mixed_threshold(pl, m) : 0.0;
}

}  // namespace irrun::kernels::avg_fast
