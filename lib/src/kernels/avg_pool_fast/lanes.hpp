// Planes in lanes (Ops::lanes): eight small planes at a time, plane k in lane k of every vector.
// The planes' floats transposed in and widened (lanes_in), per output row its V (the sums of its
// rows, in table order: lanes_vrow) and per output the sum of its taps over V, left to right
// (lanes_sums): band_generic's additions, so every path's bits. Small planes (1280 planes of 8x8
// with 3x3 "same" windows) had run a band each through the row kernels, whose set-up and short
// rows cost more than their sums.
//
// Included by each vector path (avx2.cpp, avx512.cpp) inside its own anonymous namespace, once,
// after it defines:
//   IRRUN_PATH              its target attribute;
//   LaneV                   eight doubles, one per plane;
//   lanes_add(a, b)         a + b, lane by lane;
//   lanes_zero()            +0 in every lane;
//   lanes_widen(v)          the eight floats of v as doubles.
// No #pragma once: each path compiles its own copy with its own instructions.

// T[p] = position p of the eight planes at x (P floats apart), widened.
IRRUN_PATH IRRUN_INLINE void lanes_in(const float* x, i64 P, LaneV* T) {
  for (i64 p = 0; p < P; p += 8) {
    __m256 r[8];
    const i64 n = std::min<i64>(P - p, 8);
    for (int k = 0; k < 8; ++k) r[k] = detail::load_floats(x + k * P + p, n);
    detail::transpose8(r);
    for (i64 j = 0; j < n; ++j) T[p + j] = lanes_widen(r[j]);
  }
}

// y = the eight planes' OP outputs (OP floats apart), output o's eight from out(o).
template <class Out>
IRRUN_PATH IRRUN_INLINE void lanes_out(i64 OP, float* y, Out&& out) {
  for (i64 o = 0; o < OP; o += 8) {
    __m256 r[8];
    const i64 n = std::min<i64>(OP - o, 8);
    for (i64 j = 0; j < 8; ++j) r[j] = j < n ? out(o + j) : _mm256_setzero_ps();
    detail::transpose8(r);
    for (int k = 0; k < 8; ++k) detail::store_floats(y + k * OP + o, r[k], n);
  }
}

// V[c] of the lanes: the sum of rows off[0 .. r) of the widened planes T at column c, in order.
// Four columns at a time in registers: row by row through memory, I3D's head (14 rows a window)
// waited on each V value's store and reload.
IRRUN_PATH IRRUN_INLINE void lanes_vrow(const LaneV* T, const i64* off, i64 r, i64 IW, LaneV* V) {
  if (r == 0) {
    std::fill(V, V + IW, lanes_zero());
    return;
  }
  i64 c = 0;
  for (; c + 4 <= IW; c += 4) {
    const LaneV* t = T + off[0] + c;
    LaneV a0 = t[0], a1 = t[1], a2 = t[2], a3 = t[3];
    for (i64 j = 1; j < r; ++j) {
      t = T + off[j] + c;
      a0 = lanes_add(a0, t[0]), a1 = lanes_add(a1, t[1]);
      a2 = lanes_add(a2, t[2]), a3 = lanes_add(a3, t[3]);
    }
    V[c] = a0, V[c + 1] = a1, V[c + 2] = a2, V[c + 3] = a3;
  }
  for (; c < IW; ++c) {
    LaneV a = T[off[0] + c];
    for (i64 j = 1; j < r; ++j) a = lanes_add(a, T[off[j] + c]);
    V[c] = a;
  }
}

// Fixed windows of K taps at stride S (K >= S), output by output to sum(s), their taps from
// v(c), the V value at column c (-lead .. ): the window's last K - S values stay in registers
// as it moves, each output taking S new ones, and its taps are added left to right. The loops
// are unrolled before GCC splits win into registers: unrolled later, win stayed on the stack
// and each output waited on a store's forwarding (AVX2 8x8 planes 1.2-1.5x the time).
template <int K, int S, class At, class Sum>
IRRUN_PATH IRRUN_INLINE void lanes_walk(i64 OW, i64 lead, At&& v, Sum&& sum) {
  static_assert(K >= S && S > 0);
  LaneV win[K];
#pragma GCC unroll 8
  for (int j = 0; j < K - S; ++j) win[j + S] = v(j - lead);
  for (i64 ow = 0; ow < OW; ++ow) {
#pragma GCC unroll 8
    for (int j = 0; j < K - S; ++j) win[j] = win[j + S];
#pragma GCC unroll 8
    for (int j = K - S; j < K; ++j) win[j] = v(ow * S + j - lead);
    LaneV s = win[0];
#pragma GCC unroll 8
    for (int j = 1; j < K; ++j) s = lanes_add(s, win[j]);
    sum(s);
  }
}

// The sums of the eight planes in T (P positions, then lanes_vlen(pl) vectors for V), output by
// output in order, to sum(s). Fixed windows (K > 0 taps at stride S; K = -1: any k_w) take
// theirs from a V padded with zeros (pad_left before, as the row kernels' V rows: a +0 added
// changes no sum but a zero's sign, which the scaling's + 0 drops), other windows (adaptive,
// dilated: K = 0) from the axis's table. Rows of up to three window rows with a window of their
// own (K, S > 0) sum each V value as the window reaches it, in registers, where a V row was
// stored and loaded back (3x3 "same" on 1x1280x8x8, 1x2048x8x8, 1x1024x10x10 and 1x512x7x7,
// 3x3 s2 p1 on 1x512x14x14: 0.84-0.90 of the time, 0.87-0.92 with the AVX2 cap).
template <int K, int S, class Sum>
IRRUN_PATH IRRUN_INLINE void lanes_sums(const Plan& pl, LaneV* T, Sum&& sum) {
  const PoolGeometry& g = *pl.g;
  const i64 IW = g.in[2], OW = g.out[2], rows = g.out[0] * g.out[1];
  const i64 lead = K != 0 ? pl.pad_left : 0;
  LaneV* const V = T + g.in_plane_size() + lead;
  if constexpr (K != 0) std::fill(V - lead, V - lead + lanes_vlen(pl), lanes_zero());
  const Axis& w = pl.ax[2];
  const i64 k = K > 0 ? K : pl.k_w;
  for (i64 q = 0; q < rows; ++q) {
    const std::size_t b = pl.row_begin[static_cast<std::size_t>(q)];
    const i64 r = pl.row_begin[static_cast<std::size_t>(q + 1)] - b;
    const i64* off = pl.row_off.data() + b;
    if constexpr (K > 0 && S > 0) {
      // V[c] as lanes_vrow sums it, +0 in the pads; the rows' pointers in registers (the sums'
      // vector stores may alias off, which GCC then read again for every output).
      const auto fused = [&]<int R>() IRRUN_PATH {
        const LaneV* t[R > 0 ? R : 1];
#pragma GCC unroll 4
        for (int j = 0; j < R; ++j) t[j] = T + off[j];
        lanes_walk<K, S>(
            OW, lead,
            [&](i64 c) IRRUN_PATH {
              if (R == 0 || c < 0 || c >= IW) return lanes_zero();
              LaneV a = t[0][c];
#pragma GCC unroll 4
              for (int j = 1; j < R; ++j) a = lanes_add(a, t[j][c]);
              return a;
            },
            sum);
      };
      if (r <= 3) {  // R = r, or 0 for no rows (with_row_count)
        with_row_count(r, fused);
        continue;
      }
      lanes_vrow(T, off, r, IW, V);
      lanes_walk<K, S>(
          OW, lead, [&](i64 c) IRRUN_PATH { return V[c]; }, sum);
      continue;
    }
    lanes_vrow(T, off, r, IW, V);
    for (i64 ow = 0; ow < OW; ++ow) {
      LaneV s;
      if constexpr (K != 0) {
        const LaneV* t = V - lead + ow * pl.stride_w;
        s = t[0];
        for (i64 j = 1; j < k; ++j) s = lanes_add(s, t[j]);
      } else {
        const LaneV* t = V + w.first[static_cast<std::size_t>(ow)];
        const i64 n = w.taps[static_cast<std::size_t>(ow)];
        s = n > 0 ? t[0] : lanes_zero();
        for (i64 j = 1; j < n; ++j) s = lanes_add(s, t[j * w.step]);
      }
      sum(s);
    }
  }
}

// Ops::lanes, defined by each path after this file: lanes_sums<K, S>, each output scaled by its
// factor (Plan::flat_r), transposed back (lanes_out); whether the sums were exact (the precision
// flag) and none was NaN.
template <int K, int S>
IRRUN_PATH bool lanes_kernel(const Plan& pl, const float* x, float* y, double* scratch);

// The kernel of pl's windows: the fixed ones with one of their own (stride, taps), other fixed
// ones K = -1, the rest K = 0.
inline decltype(&lanes_kernel<0, 0>) pick_lanes(const Plan& pl) {
  if (!pl.fixed_w) return lanes_kernel<0, 0>;
  const std::tuple<int, int, decltype(&lanes_kernel<0, 0>)> fixed[] = {
      {1, 2, lanes_kernel<2, 1>}, {1, 3, lanes_kernel<3, 1>}, {1, 5, lanes_kernel<5, 1>},
      {1, 7, lanes_kernel<7, 1>}, {2, 2, lanes_kernel<2, 2>}, {2, 3, lanes_kernel<3, 2>}};
  for (const auto& [stride, taps, fn] : fixed)
    if (pl.stride_w == stride && pl.k_w == taps) return fn;
  return lanes_kernel<-1, 0>;
}
