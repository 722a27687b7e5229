// Equal bins of four columns (S6: 28x28 to 7x7) without V rows, on the AVX2 and AVX-512 paths:
// each bin's four columns are one 128-bit load per input row, widened at 256 bits (the faster
// width for conversions on Zen 4, round 24) and added down the window's rows in table order
// (vrow's additions, issued as FMAs: plain vaddpd cost planes_bins4 1.01 on AVX-512); a 4x4
// transpose of four bins' sums then puts tap k of the four in one register, and the taps are
// added in order (the horizontal passes' order). So the bits of the V-row path.
#pragma once

#include "ops.hpp"  // first: intrinsics and their warning pragmas

namespace irrun::kernels::avg_fast {

// The four bins' sums from their column sums v0-v3: taps added in order.
IRRUN_AVX2_COMMON IRRUN_INLINE __m256d bins4_taps(__m256d v0, __m256d v1, __m256d v2, __m256d v3) {
  const __m256d lo01 = _mm256_unpacklo_pd(v0, v1), hi01 = _mm256_unpackhi_pd(v0, v1);
  const __m256d lo23 = _mm256_unpacklo_pd(v2, v3), hi23 = _mm256_unpackhi_pd(v2, v3);
  __m256d s = _mm256_permute2f128_pd(lo01, lo23, 0x20);            // tap 0 of each bin
  s = _mm256_add_pd(s, _mm256_permute2f128_pd(hi01, hi23, 0x20));  // tap 1
  s = _mm256_add_pd(s, _mm256_permute2f128_pd(lo01, lo23, 0x31));  // tap 2
  return _mm256_add_pd(s, _mm256_permute2f128_pd(hi01, hi23, 0x31));
}

// The one factor of planes_bins4's outputs: every bin has four columns and the same rows.
inline double bins4_factor(const Plan& pl) {
  return pl.row_rinv[0] * pl.inv_w[0];
}

// Ops::planes for bins of four (avx2.cpp; both paths run it, as it takes 256-bit operations
// only), where make_bins4_planes built its tables.
void planes_bins4(const Plan& pl, const float* x, float* y, i64 count);
// Its two passes for Ops::exact_planes and Ops::scale_planes: the sums, then their scaling
// (AVX-512 scales chunks of eight outputs or more at 512 bits).
void sums_bins4(const Plan& pl, const float* x, double* s, i64 count);
bool scale_bins4(const Plan& pl, const double* s, float* y, i64 count);

}  // namespace irrun::kernels::avg_fast
