// The portable path of the fast f32 AvgPool: the summation order every vector path reproduces.
#include "ops.hpp"  // first: intrinsics and their warning pragmas

namespace irrun::kernels::avg_fast {

void stats_portable(const float* x, i64 n, float& lo, float& hi) {
  for (i64 i = 0; i < n; ++i) {
    if (x[i] > hi) hi = x[i];  // NaN compares false: ignored
    if (x[i] < lo) lo = x[i];
  }
}

float amax_portable(const float* x, i64 n) {
  float m = 0;
  for (i64 i = 0; i < n; ++i) m = std::max(m, std::fabs(x[i]));  // NaN compares false: ignored
  return m;
}

bool all_above_portable(const float* y, i64 n, float thr) {
  bool all = true;
  for (i64 i = 0; i < n; ++i) all &= std::fabs(y[i]) > thr;  // NaN compares false
  return all;
}

namespace {

void vsum_portable(const float* plane, const i64* off, i64 r, i64 n, double* v) {
  for (i64 i = 0; i < n; ++i) {
    double s = plane[off[0] + i];
    for (i64 j = 1; j < r; ++j) s += static_cast<double>(plane[off[j] + i]);
    v[i] = s;
  }
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

// The sum of v[lo .. hi - 1] as a balanced tree, its halves split at (lo + hi) / 2.
double tree_sum(const double* v, int lo, int hi) {
  if (hi - lo == 1) return v[lo];
  const int mid = (lo + hi) / 2;
  return tree_sum(v, lo, mid) + tree_sum(v, mid, hi);
}

// s[p] = the sum of plane p for `count` consecutive planes of n floats, the first of index 0
// modulo four (run_whole_plane's units are 64 planes).
void plane_sums_portable(const float* x, i64 n, i64 count, double* s) {
  for (i64 p = 0; p < count; ++p)
    s[p] = n == kPlane49 ? plane49_sum(x + p * n, static_cast<int>(p % 4))
                         : plane_sum_portable(x + p * n, n);
}

}  // namespace

double plane49_sum(const float* x, int j) {
  const Chunks49 c = chunks49(j);
  double lanes[4];
  for (int l = 0; l < 4; ++l) {
    double v[16];
    for (int k = 0; k < c.n; ++k) {
      const int i = 4 * (c.c0 + k) + l - kPlane49 * j;  // the float's index in the plane
      v[k] = i >= 0 && i < kPlane49 ? static_cast<double>(x[i]) : 0.0;
    }
    if (c.end < c.n && (c.m1 >> l & 1)) v[c.n - 2] += v[c.n - 1];
    if (c.first > 0 && (c.m0 >> l & 1)) v[1] += v[0];
    lanes[l] = tree_sum(v, c.first, c.end);
  }
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

namespace {

void plane_sums_bound_portable(const float* x, i64 n, i64 count, double* s, float& m) {
  for (i64 i = 0; i < n * count; ++i)
    if (std::fabs(x[i]) > m) m = std::fabs(x[i]);  // NaN compares false: ignored
  plane_sums_portable(x, n, count, s);
}

bool hrow_s1_portable(const double* vp, i64 k, i64 n, const double* inv_w, double rinv, double t,
                      float* out) {
  return hrow_fixed_portable(vp, 1, k, n, inv_w, rinv, t, out);
}

bool hrow_s2_portable(const double* vp, i64 k, i64 n, const double* inv_w, double rinv, double t,
                      float* out) {
  return hrow_fixed_portable(vp, 2, k, n, inv_w, rinv, t, out);
}

// The horizontal sums of a group over windows of any width (adaptive bins), rows q .. q + N - 1
// at a time: their sums are N independent chains of additions, where one row's bins, summed in
// order, wait on each other's latency (S8: 17% of the time in this pass with one row at a time).
// Each sum still adds its taps in order, as hsum_generic does; emit(l, ow, s) takes row q + l's
// sum of bin ow.
template <int N, class Emit>
void hsums_n(const BandArgs& a, i64 q, Emit&& emit) {
  const Plan& pl = *a.pl;
  const auto& ax = pl.ax[2];
  const i64 OW = pl.g->out[2];
  const double* v[N];
  for (int l = 0; l < N; ++l) v[l] = a.v + (q + l - a.q0) * pl.vlen;
  for (i64 ow = 0; ow < OW; ++ow) {
    const auto w = static_cast<std::size_t>(ow);
    const i64 first = ax.first[w], taps = ax.taps[w], step = ax.step;
    double s[N] = {};
    if (taps > 0)
      for (int l = 0; l < N; ++l) s[l] = v[l][first];
    for (i64 k = 1; k < taps; ++k)
      for (int l = 0; l < N; ++l) s[l] += v[l][first + k * step];
    for (int l = 0; l < N; ++l) emit(l, ow, s[l]);
  }
}

// f.template operator()<N>(q) over the group's rows four at a time, the last five as three and
// two (S8's 17 rows: 4, 4, 4, 3, 2).
template <class F>
void by_fours(const BandArgs& a, F&& f) {
  for (i64 q = a.q0; q < a.q1;) {
    const i64 left = a.q1 - q;
    const i64 n = left >= 6 ? 4 : left == 5 ? 3 : left;
    // clang-format off
    switch (n) {
      case 4: f.template operator()<4>(q); break;
      case 3: f.template operator()<3>(q); break;
      case 2: f.template operator()<2>(q); break;
      default: f.template operator()<1>(q); break;
    }
    // clang-format on
    q += n;
  }
}

bool hrows_generic(const BandArgs& a, double t) {
  const Plan& pl = *a.pl;
  const i64 OW = pl.g->out[2];
  bool failed = false;
  by_fours(a, [&]<int N>(i64 q) {
    bool fail[N] = {};
    hsums_n<N>(a, q, [&](int l, i64 ow, double s) {
      fail[l] |= finish(s, pl.row_rinv[static_cast<std::size_t>(q + l)],
                        pl.inv_w[static_cast<std::size_t>(ow)], t, a.out_plane + (q + l) * OW + ow);
    });
    for (int l = 0; l < N; ++l) a.row_failed[q + l - a.q0] = fail[l], failed |= fail[l];
  });
  return failed;
}

}  // namespace

void vsum_row(const Plan& pl, const Ops& ops, const float* plane, i64 q, double* v, float* m) {
  const i64 b = pl.row_begin[static_cast<std::size_t>(q)];
  const i64 r = pl.row_begin[static_cast<std::size_t>(q) + 1] - b;
  if (r == 0)
    std::fill(v, v + pl.g->in[2], 0.0);
  else if (m)
    ops.vsum_bound(plane, pl.row_off.data() + b, r, pl.g->in[2], v, *m);
  else
    ops.vsum(plane, pl.row_off.data() + b, r, pl.g->in[2], v);
}

bool band_generic(const BandArgs& a, const Ops& ops) {
  const Plan& pl = *a.pl;
  const i64 OW = pl.g->out[2];
  bool failed = false;
  // With vsum_bound, the check is against the bound of the group's own loads.
  float m = 0;
  for (i64 q = a.q0; q < a.q1; ++q)
    vsum_row(pl, ops, a.plane, q, a.v + (q - a.q0) * pl.vlen + pl.pad_left,
             ops.vsum_bound ? &m : nullptr);
  const double t = ops.vsum_bound ? mixed_threshold(pl, m) : a.t;
  if (ops.vsum_bound) a.own->t = t;
  if (!pl.fixed_w) return hrows_generic(a, t);
  for (i64 q = a.q0; q < a.q1; ++q) {
    const bool row_failed =
        ops.hrow(a.v + (q - a.q0) * pl.vlen, pl.k_w, OW, pl.inv_w.data(),
                 pl.row_rinv[static_cast<std::size_t>(q)], t, a.out_plane + q * OW);
    a.row_failed[q - a.q0] = row_failed;
    failed |= row_failed;
  }
  return failed;
}

bool exact_band_bins(const BandArgs& a, const Ops& ops) {
  const Plan& pl = *a.pl;
  for (i64 q = a.q0; q < a.q1; ++q) vsum_row(pl, ops, a.plane, q, a.v + (q - a.q0) * pl.vlen);
  by_fours(a, [&]<int N>(i64 q) {
    hsums_n<N>(a, q, [&](int l, i64 ow, double s) { a.v[(q + l - a.q0) * pl.vlen + ow] = s; });
  });
  return false;
}

bool scale_band_bins(const BandArgs& a) {
  const Plan& pl = *a.pl;
  const i64 OW = pl.g->out[2];
  const double* v = a.v;
  bool nan = false;  // finish() against T = 0 fails a NaN sum only
  for (i64 q = a.q0; q < a.q1; ++q, v += pl.vlen)
    for (i64 ow = 0; ow < OW; ++ow)
      nan |= finish(v[ow], pl.row_rinv[static_cast<std::size_t>(q)],
                    pl.inv_w[static_cast<std::size_t>(ow)], 0.0, a.out_plane + q * OW + ow);
  return !nan;
}

bool exact_bins_in_place(const Plan& pl) {
  const auto& ax = pl.ax[2];
  if (pl.fixed_w || pl.pad_left != 0) return false;
  for (std::size_t ow = 0; ow < ax.first.size(); ++ow)
    if (ax.first[ow] < static_cast<i64>(ow)) return false;
  return true;
}

Ops select_portable(const Plan& pl) {
  Ops ops{stats_portable, vsum_portable, plane_sums_bound_portable};
  ops.finish_row = hrow_s1_portable;
  if (pl.fixed_w)
    ops.hrow = pl.stride_w == 1   ? hrow_s1_portable
               : pl.stride_w == 2 ? hrow_s2_portable
                                  : hrow_bins_portable;
  ops.band = band_generic;
  return ops;
}

}  // namespace irrun::kernels::avg_fast
