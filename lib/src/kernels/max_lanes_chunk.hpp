// MaxPool's planes in lanes (max_lanes.cpp), one chunk of kLanes planes, plane k in lane k of
// every vector; and the run over a layer's chunks.
//
// Included by each vector path of max_lanes.cpp inside its own namespace, after it defines:
//   IRRUN_PATH             its target attribute;
//   Vec, kLanes            its vector of floats and their count;
//   load(p, n)             the first n floats of p (1 .. kLanes; no mask for a whole vector:
//                          masked loads and stores are slow on Zen 4 and 5), 0 elsewhere;
//   store(p, v, n)         v's first n floats into p, alike;
//   transpose(r)           r[k] becomes the k-th floats of the kLanes vectors r;
//   vmax(x, v)             x if x > v, else v (vmaxps' operand order);
//   set1(f)                f in every lane.
// No #pragma once: each path compiles its own copy with its own instructions.

// kLanes planes from x (in floats apart), their outputs at y (out apart). T: the planes' floats,
// one vector per position; H = T + in: where `shared`, per input row its maximum under each
// output column's taps; Y = H + rows * OW: the outputs, one vector per output, and kLanes - 1
// more. K > 0: the windows along W are K taps at step 1 where not cut by the row's ends, and
// those take their taps unrolled (a loop per row of taps had spent half of 1x768x17x17 3x3 s2's
// time on its counter and branch).
template <int K>
IRRUN_PATH void chunk(const RowTable& rt, const AxisWindows& w, const PoolGeometry& g, bool shared,
                      const float* x, float* y, Vec* T) {
  const i64 in = g.in_plane_size(), out = g.out_plane_size(), OW = g.out[2], IW = g.in[2];
  const i64 rows = g.in[0] * g.in[1];
  Vec* const H = T + in;
  Vec* const Y = H + rows * OW;
  for (i64 p = 0; p < in; p += kLanes) {
    Vec r[kLanes];
    const i64 n = std::min(in - p, kLanes);
    for (i64 k = 0; k < kLanes; ++k) r[k] = load(x + k * in + p, n);
    transpose(r);
    // All kLanes, a last partial block's too: its extra vectors land in H's first kLanes - 1,
    // before H is written (Y's, where H is shorter). (Stored up to n, the vectors went through the
    // stack and a rep movsq: 1x768x17x17 3x3 s2 took 1.45x the time.)
    for (i64 j = 0; j < kLanes; ++j) T[p + j] = r[j];
  }
  const Vec lowest = set1(std::numeric_limits<float>::lowest());
  // The tables' pointers in registers: the outputs' vector stores may alias them.
  const i64 *const first = w.first.data(), *const taps = w.taps.data(), step = w.step;
  // max(x, v) is v unless x > v: from lowest() over the taps in order, NaN never wins and a tie
  // keeps the first tap. v raised by the taps of output column ow in the row at `row`:
  const auto row_max = [&](const Vec* row, i64 ow, Vec v) IRRUN_PATH {
    const Vec* t = row + first[ow];
    const i64 n = taps[ow];
    if (K > 0 && n == K) {
      for (int j = 0; j < K; ++j) v = vmax(t[j], v);
      return v;
    }
    for (i64 j = 0; j < n; ++j) v = vmax(t[j * step], v);
    return v;
  };
  if (!shared) {
    for (i64 q = 0, o = 0; q < g.out[0] * g.out[1]; ++q) {
      const i64* off = rt.rows(q);
      const i64 n = rt.count(q);
      const Vec* r[kLanesMaxTaps];
      for (i64 j = 0; j < n; ++j) r[j] = T + off[j];
      for (i64 ow = 0; ow < OW; ++ow, ++o) {
        Vec v = lowest;
        for (i64 j = 0; j < n; ++j) v = row_max(r[j], ow, v);
        Y[o] = v;
      }
    }
  } else {
    // Each input row's maxima once, then each output's rows in order: the same maximum as one
    // pass over its taps, as a row's replaces the rows' before only where greater (so the first
    // greatest tap still wins) and a first row's is lowest() itself where no tap beat it.
    for (i64 r = 0; r < rows; ++r)
      for (i64 ow = 0; ow < OW; ++ow) H[r * OW + ow] = row_max(T + r * IW, ow, lowest);
    for (i64 q = 0, o = 0; q < g.out[0] * g.out[1]; ++q) {
      const i64* off = rt.rows(q);
      const i64 n = rt.count(q);
      const Vec* h[kLanesMaxTaps];
      for (i64 j = 0; j < n; ++j) h[j] = H + off[j] / IW * OW;
      for (i64 ow = 0; ow < OW; ++ow, ++o) {
        Vec v = n > 0 ? h[0][ow] : lowest;
        for (i64 j = 1; j < n; ++j) v = vmax(h[j][ow], v);
        Y[o] = v;
      }
    }
  }
  for (i64 o = 0; o < out; o += kLanes) {
    Vec r[kLanes];
    for (i64 j = 0; j < kLanes; ++j) r[j] = o + j < out ? Y[o + j] : lowest;
    transpose(r);
    const i64 n = std::min(out - o, kLanes);
    for (i64 k = 0; k < kLanes; ++k) store(y + k * out + o, r[k], n);
  }
}

// The layer's whole chunks of kLanes planes, over the threads; returns the planes run.
i64 run_chunks(const float* x, float* y, const PoolGeometry& g, const Parallel& par) {
  const auto axes = axis_windows(g);
  const RowTable rt = row_table(g, axes);
  const i64 in = g.in_plane_size(), out = g.out_plane_size(), chunks = g.planes() / kLanes;
  const i64 vectors = in + g.in[0] * g.in[1] * g.out[2] + out + kLanes - 1;  // T, H, Y
  // Rows shared by the windows of stride-1 rows, their maxima taken once: 10x10, 8x8 and 7x7
  // 3x3 s1 p1 0.79-0.82 of the time on AVX-512; not where few rows or none are shared (3x3 s2
  // 1.07-1.11x, 2x2 s2 1.10-1.20x).
  const bool shared = g.stride[1] == 1 && g.kernel[1] > 1;
  const i64 k = axes[2].step == 1 ? g.kernel[2] : 0;
  const auto run = k == 2 ? chunk<2> : k == 3 ? chunk<3> : chunk<0>;
  const auto body = [&](i64 b, i64 e) {
    const LineBytes scratch = own_line_bytes(sizeof(Vec) * static_cast<std::size_t>(vectors));
    auto* const T = reinterpret_cast<Vec*>(scratch.get());
    for (i64 c = b; c < e; ++c)
      run(rt, axes[2], g, shared, x + c * kLanes * in, y + c * kLanes * out, T);
  };
  par.for_range(chunks, body, Parallel::fork_grain(chunks, 4 * g.planes() * (in + out)));
  return chunks * kLanes;
}
