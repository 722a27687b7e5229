// Planes of 49 floats (7x7: S4, S7) in their order (ops.hpp, plane49_sum), four at a time, at
// 256 bits: each chunk of four floats loaded and widened once (the faster width for conversions
// on Zen 4, round 24), a chunk shared by two planes merged into each, each plane's chunks added
// as a tree (chains of four additions where two accumulators per plane took seven), no lanes
// rotated.
//
// Included by each vector path (avx2.cpp, avx512.cpp) inside its own anonymous namespace, once,
// after it defines:
//   IRRUN_PATH                   its target attribute;
//   add256(a, b)                 a + b (an FMA: the adds go to the FMA pipes, see add_fma);
//   p49_merge<M>(into, shared)   into + shared in the lanes of mask M, into in the others;
//   p49_track(v, m)              m raised to at least the |x| of v's floats when none is NaN.
// No #pragma once: each path compiles its own copy with its own instructions.

// The sum of w[Lo .. Hi - 1], pairwise (portable.cpp's tree_sum).
template <int Lo, int Hi>
IRRUN_PATH IRRUN_INLINE __m256d p49_tree(const __m256d* w) {
  if constexpr (Hi - Lo == 1)
    return w[Lo];
  else
    return add256(p49_tree<Lo, (Lo + Hi) / 2>(w), p49_tree<(Lo + Hi) / 2, Hi>(w));
}

// v[k] = chunk C0 + k of x, widened.
template <int C0, int... K>
IRRUN_PATH IRRUN_INLINE void p49_widen(const float* x, __m256d* v,
                                       std::integer_sequence<int, K...>) {
  ((v[K] = _mm256_cvtps_pd(_mm_loadu_ps(x + 4 * (C0 + K)))), ...);
}

// The lane sums of plane J of the four at x. `shared`: the chunk plane J - 1 ended in, widened;
// on return, the one plane J ends in.
template <int J>
IRRUN_PATH IRRUN_INLINE __m256d p49_lanes(const float* x, __m256d& shared) {
  constexpr Chunks49 c = chunks49(J);
  static_assert(c.n >= 4);  // the shared chunks merge into different neighbours
  __m256d v[c.n];
  if constexpr (c.first > 0) v[0] = shared;
  p49_widen<c.c0 + c.first>(x, v + c.first, std::make_integer_sequence<int, c.n - c.first>{});
  shared = v[c.n - 1];
  if constexpr (c.end < c.n) v[c.n - 2] = p49_merge<c.m1>(v[c.n - 2], v[c.n - 1]);
  if constexpr (c.first > 0) v[1] = p49_merge<c.m0>(v[1], v[0]);
  return p49_tree<c.first, c.end>(v);
}

template <int... J>
IRRUN_PATH IRRUN_INLINE void p49_planes(const float* x, __m256d* q,
                                        std::integer_sequence<int, J...>) {
  __m256d shared = _mm256_setzero_pd();
  ((q[J] = p49_lanes<J>(x, shared)), ...);
}

// s[p] = the sums of `count` planes of 49 floats at x, the first of index 0 modulo four; with
// Bound, m raised to at least their greatest |x| when none is NaN (Ops::plane_sums).
template <bool Bound>
IRRUN_PATH void planes49(const float* x, i64 count, double* s, float& m) {
  constexpr i64 n = kPlane49;
  __m256 mm[2];  // two chains for the bound
  for (auto& k : mm) k = _mm256_set1_ps(m);
  i64 p = 0;
  for (; p + 4 <= count; p += 4) {
    const float* xp = x + p * n;
    __m256d q[4];
    p49_planes(xp, q, std::make_integer_sequence<int, 4>{});
    if constexpr (Bound) {
      static_assert(4 * n % 16 == 4);
      for (i64 i = 0; i + 16 <= 4 * n; i += 16)
        p49_track(_mm256_loadu_ps(xp + i), mm[0]), p49_track(_mm256_loadu_ps(xp + i + 8), mm[1]);
      p49_track(_mm256_set_m128(_mm_setzero_ps(), _mm_loadu_ps(xp + 4 * n - 4)), mm[0]);
    }
    // (l0 + l1) + (l2 + l3) of the four planes
    const __m256d t0 = _mm256_hadd_pd(q[0], q[1]), t1 = _mm256_hadd_pd(q[2], q[3]);
    _mm256_storeu_pd(s + p, _mm256_add_pd(_mm256_permute2f128_pd(t0, t1, 0x20),
                                          _mm256_permute2f128_pd(t0, t1, 0x31)));
  }
  for (; p < count; ++p) {  // the last planes, one at a time
    s[p] = plane49_sum(x + p * n, static_cast<int>(p % 4));
    if constexpr (Bound)
      for (i64 i = 0; i < n; ++i) m = std::max(m, std::fabs(x[p * n + i]));  // NaN: m kept
  }
  if constexpr (Bound) {
    alignas(32) float l[8];
    _mm256_store_ps(l, _mm256_max_ps(mm[0], mm[1]));
    m = fold_bound(l, m);
  }
}
