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
// one vector per position; Y = T + in: the outputs, one vector per output, and kLanes - 1 more.
IRRUN_PATH void chunk(const RowTable& rt, const AxisWindows& w, const PoolGeometry& g,
                      const float* x, float* y, Vec* T, Vec* Y) {
  const i64 in = g.in_plane_size(), out = g.out_plane_size(), OW = g.out[2];
  for (i64 p = 0; p < in; p += kLanes) {
    Vec r[kLanes];
    const i64 n = std::min(in - p, kLanes);
    for (i64 k = 0; k < kLanes; ++k) r[k] = load(x + k * in + p, n);
    transpose(r);
    // All kLanes, a last partial block's too: its extra vectors land in Y's first kLanes - 1,
    // before Y is written. (Stored up to n, the vectors went through the stack and a rep movsq:
    // 1x768x17x17 3x3 s2 took 1.45x the time.)
    for (i64 j = 0; j < kLanes; ++j) T[p + j] = r[j];
  }
  const Vec lowest = set1(std::numeric_limits<float>::lowest());
  for (i64 q = 0, o = 0; q < g.out[0] * g.out[1]; ++q) {
    const i64* off = rt.rows(q);
    const i64 n = rt.count(q);
    for (i64 ow = 0; ow < OW; ++ow, ++o) {
      const i64 first = w.first[static_cast<std::size_t>(ow)];
      const i64 taps = w.taps[static_cast<std::size_t>(ow)];
      // max(x, v) is v unless x > v: NaN never wins and a tie keeps the first tap.
      Vec v = lowest;
      for (i64 j = 0; j < n; ++j)
        for (i64 t = 0; t < taps; ++t) v = vmax(T[off[j] + first + t * w.step], v);
      Y[o] = v;
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
  const auto body = [&](i64 b, i64 e) {
    const LineBytes scratch =
        own_line_bytes(sizeof(Vec) * static_cast<std::size_t>(in + (out + kLanes - 1)));
    auto* const T = reinterpret_cast<Vec*>(scratch.get());
    for (i64 c = b; c < e; ++c)
      chunk(rt, axes[2], g, x + c * kLanes * in, y + c * kLanes * out, T, T + in);
  };
  par.for_range(chunks, body, Parallel::fork_grain(chunks, 4 * g.planes() * (in + out)));
  return chunks * kLanes;
}
