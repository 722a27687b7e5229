// Internal to the 16-bit AvgPool kernels (avg_pool_half.cpp, avg_pool_half_f32.cpp): the
// reference kernel's 16-bit value of an average from its exact sum s and divisor n, the rounding
// of mean_of(s, 0, n) done without a division, eight outputs at a time.
#pragma once

#include <cstdint>

#include "exact_sum.hpp"
#include "half_formats.hpp"
#include "simd.hpp"

namespace irrun::kernels::detail {

// 1 / n rounded up by some 2^-45 (relative), so that s * 1 / n is never below s / n in size
// (finish_avx2): three roundings' error is below 2^-51, and a product of two such inverses
// errs by twice this.
inline double inverse(double n) {
  return 1.0 / n * (1.0 + 0x1p-45);
}

// y[k] = the reference's 16-bit value of s[k] / n[k], without a division (the divisions bounded
// the kernel): r[k] is inverse(n[k]) or a product of two such (n[k] a product), and
// |s[k] / n[k]| is 0 or at least 2^-126 (a normal float). The reference rounds m, the double
// nearest s / n (its correction term is 0 for exact sums, see below), to 16 bits. That is the
// 16-bit rounding of s / n itself: m is never a 16-bit midpoint unless s / n is (below). So this
// rounds s / n once to 16 bits: first to 24 bits rounded to odd (truncated, the last bit set
// when inexact), which keeps every bit that decides the final rounding since that is 13 more
// than f16 has and 16 more than bf16; then to nearest even. Truncated to 24 bits, s * r, above
// |s / n| by less than a unit of those 24 bits, is s / n truncated or a unit above it; the sign
// of s - t * n (an fma rounds once: 0, or of its exact sign) tells which, and whether t is exact.
// Why m = s / n where either is a midpoint h (of b bits, 12 for f16, 9 for bf16): s is a multiple
// of some 2^e below 2^(e + 53) (as any double is), h a multiple of 2^(E - b) below 2^(E + 1), and n
// an integer below 2^40. So s - h * n, a multiple of the smaller power of 2, is below both in size
// when within n * h * 2^-53 (half a double's gap at h): 0.
// And why the reference's correction is 0 (m = q + fma(-q, n, s) / n): m != q needs s / n within
// 2^-53 (relative) of a midpoint between doubles, half a gap g from q. But s - midpoint * n is a
// multiple of g / 2 (g / 4 at a power of 2): s / n is on the midpoint (where m = q, both ties to
// even) or at least g / (4n) away, too far.
// Four at a time: s / n rounded to odd at 24 bits, as floats (exact).
__attribute__((target("avx2,fma,f16c"), always_inline)) inline __m128 odd4(const double* s,
                                                                           const double* n,
                                                                           const double* r) {
  const __m256d sum = _mm256_loadu_pd(s), zero = _mm256_setzero_pd();
  // + 0: a -0 quotient gives +0, as the reference's -0 + (0 + 0) / n does.
  const __m256d q = _mm256_fmadd_pd(sum, _mm256_loadu_pd(r), zero);
  const __m256i unit = _mm256_set1_epi64x(std::int64_t{1} << 29);  // of the 24 bits
  const __m256d t =
      _mm256_andnot_pd(_mm256_castsi256_pd(_mm256_sub_epi64(unit, _mm256_set1_epi64x(1))), q);
  const __m256d rest = _mm256_fnmadd_pd(t, _mm256_loadu_pd(n), sum);
  const __m256i inexact =
      _mm256_and_si256(_mm256_castpd_si256(_mm256_cmp_pd(rest, zero, _CMP_NEQ_OQ)), unit);
  // |t| > |s / n| where rest and t have opposite signs: t a unit toward zero.
  const __m256i opposite =
      _mm256_cmpgt_epi64(_mm256_setzero_si256(), _mm256_castpd_si256(_mm256_xor_pd(rest, t)));
  const __m256i bits =
      _mm256_sub_epi64(_mm256_castpd_si256(t), _mm256_and_si256(inexact, opposite));
  return _mm256_cvtpd_ps(_mm256_castsi256_pd(_mm256_or_si256(bits, inexact)));
}

// The above over a row's outputs, eight and then four at a time; returns how many it ended.
template <class F>
__attribute__((target("avx2,fma,f16c"))) inline std::int64_t finish_avx2(
    const double* s, const double* n, const double* r, std::int64_t count, std::uint16_t* y) {
  std::int64_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m256 f =
        _mm256_set_m128(odd4(s + i + 4, n + i + 4, r + i + 4), odd4(s + i, n + i, r + i));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), F::from_float8(f));
  }
  if (i + 4 <= count) {
    const __m256 f = _mm256_castps128_ps256(odd4(s + i, n + i, r + i));
    _mm_storel_epi64(reinterpret_cast<__m128i*>(y + i), F::from_float8(f));
    i += 4;
  }
  return i;
}

// y[k] = the reference's 16-bit value of s[k] / n[k], k < count (r[k]: 1 / n[k], see finish_avx2).
template <class F>
void end_outputs(const double* s, const double* n, const double* r, std::int64_t count, bool fast,
                 std::uint16_t* y) {
  std::int64_t k = fast ? finish_avx2<F>(s, n, r, count, y) : 0;
  // A zero sum (a window without taps too) gives +0 whatever its sign and n, as in the
  // reference: q + (rem + 0) / n is -0 + +0 for a -0.
  for (; k < count; ++k) {
    Divisor div;
    div.hi = n[k];  // a count below 2^53, or the kernel volume when that is a double
    y[k] = F::from_double(mean_of(s[k], 0.0, div));
  }
}

}  // namespace irrun::kernels::detail
