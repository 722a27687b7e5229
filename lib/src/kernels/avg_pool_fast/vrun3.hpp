// The vertical pass of flat groups over a run of 3-row windows on consecutive input rows (3x3
// "same" pools: S3). The run's V rows are back to back, as its input rows are:
// V[i] = (x[i] + x[i + IW]) + x[i + 2 IW], vrow's additions in its order, so the same bits.
// Row by row, each input row is converted three times; G rows at a time convert their G + 2
// input rows once each (S3 with G = 4: 0.91 of the time on AVX-512, round 65; G = 2 0.95, 6 0.94;
// on the Intel Xeon of round 79, eight columns a step with the outputs prefetched, against round
// 78's code: G = 4 0.86-0.91, 2 0.91, 6 0.93, 8 0.90).
//
// Included by each vector path (avx2.cpp, avx512.cpp) inside its own anonymous namespace, after
// it defines IRRUN_PATH (its target attribute) and Vrun3 (its vector of doubles: kLanes columns,
// widen(const float*), add(a, b) on the FMA pipes, store(double*, v)). No #pragma once: each path
// compiles its own copy with its own instructions.

// Whether the window rows at off (three of them) are consecutive input rows of width IW.
IRRUN_PATH IRRUN_INLINE bool vrun3_fits(const i64* off, i64 IW) {
  return IW >= Vrun3::kLanes && off[1] - off[0] == IW && off[2] - off[1] == IW;
}

// The run's rows * IW sums into v, x at the first window row of its first V row, its V rows back
// to back. Columns go kLanes at a time, a row's last ones ending at IW (overlapping the block
// before: the same values); nothing is written past a row's IW columns. Exact: for sums that no
// addition rounds (Ops::exact_band, which any order gives the same bits): the V rows IW + Gap
// apart (exact_flat3_avx2; band_flat_avx512: Gap 0), and two rows share the sum of their common
// input rows, w[j + 1] + w[j + 2], three additions a pair instead of four (S3 with the AVX2 cap:
// 0.967 of the time; natively 0.978-0.991).
template <int G, bool Exact = false, i64 Gap = kFlatGap>
IRRUN_PATH IRRUN_INLINE void vrun3(const float* x, i64 IW, i64 rows, double* v) {
  const i64 VS = Exact ? IW + Gap : IW;
  i64 q = 0;
  for (; q + G <= rows; q += G) {
    const auto cols = [&](i64 i, i64 o) IRRUN_PATH {  // input i, V o: columns of row q
      typename Vrun3::V w[G + 2];
      for (int j = 0; j < G + 2; ++j) w[j] = Vrun3::widen(x + i + j * IW);
      typename Vrun3::V p;  // Exact: w[j + 1] + w[j + 2] for an even j, shared with row j + 1
      for (int j = 0; j < G; ++j) {
        if constexpr (Exact) {
          if (j % 2 == 0) p = Vrun3::add(w[j + 1], w[j + 2]);
          Vrun3::store(v + o + j * VS, j % 2 == 0 ? Vrun3::add(w[j], p) : Vrun3::add(p, w[j + 2]));
        } else {
          Vrun3::store(v + o + j * VS, Vrun3::add(Vrun3::add(w[j], w[j + 1]), w[j + 2]));
        }
      }
    };
    constexpr i64 L = Vrun3::kLanes;
    i64 c = 0;
    for (; c + L <= IW; c += L) cols(q * IW + c, q * VS + c);
    if (c < IW) cols(q * IW + IW - L, q * VS + IW - L);
  }
  if constexpr (G > 1)
    if (q < rows) vrun3<G / 2, Exact, Gap>(x + q * IW, IW, rows - q, v + q * VS);
}
