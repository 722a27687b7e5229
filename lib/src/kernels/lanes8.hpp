// Internal to the kernels: eight planes in the lanes of a 256-bit vector of floats (the AvgPool
// lanes of both vector paths, the MaxPool lanes on AVX2): the 8x8 transpose, and a vector's first
// n floats loaded and stored. AVX instructions only (IRRUN_AVX2_COMMON): inlined into either path.
#pragma once

#include <cstdint>

#include "simd.hpp"

namespace irrun::kernels::detail {

// The 8x8 transpose of floats: r[k] becomes the k-th floats of the eight.
IRRUN_AVX2_COMMON inline void transpose8(__m256* r) {
  const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
  const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
  const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
  const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
  const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
  const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
  const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  r[0] = _mm256_permute2f128_ps(u0, u4, 0x20), r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
  r[2] = _mm256_permute2f128_ps(u2, u6, 0x20), r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
  r[4] = _mm256_permute2f128_ps(u0, u4, 0x31), r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
  r[6] = _mm256_permute2f128_ps(u2, u6, 0x31), r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

// Lanes [0, n) as a vmaskmovps mask.
IRRUN_AVX2_COMMON inline __m256i first8(std::int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)),
                            _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

// The first n (1-8) floats of p, +0 elsewhere (vmaskmovps reads only the masked lanes); no mask
// for all eight: masked loads and stores are slow on AMD cores.
IRRUN_AVX2_COMMON inline __m256 load_floats(const float* p, std::int64_t n) {
  return n == 8 ? _mm256_loadu_ps(p) : _mm256_maskload_ps(p, first8(n));
}

// v's first n (1-8) floats into p, alike.
IRRUN_AVX2_COMMON inline void store_floats(float* p, __m256 v, std::int64_t n) {
  if (n == 8)
    _mm256_storeu_ps(p, v);
  else
    _mm256_maskstore_ps(p, first8(n), v);
}

}  // namespace irrun::kernels::detail
