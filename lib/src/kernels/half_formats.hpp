// Internal to the 16-bit kernels (avg_pool_half.cpp, avg_pool_half_f32.cpp): f16 and bf16 as
// traits, for templates over the two formats.
#pragma once

#include <cstdint>

#include "irrun/float16.hpp"
#include "simd.hpp"

namespace irrun::kernels::detail {

// The two formats: their exponent fields, scalar conversions, and eight at a time on AVX2 (to
// f16 sixteen on AVX-512 too).
struct F16 {
  static constexpr std::int16_t exponent_mask = 0x7C00, smallest_normal = 0x0400;
  static constexpr int mantissa_bits = 10, exponent_bias = 15;
  static double to_double(std::uint16_t h) { return f16_bits_to_double(h); }
  static std::uint16_t from_double(double x) { return f16_bits_from_double(x); }
  __attribute__((target("avx2,fma,f16c"), always_inline)) static __m256 to_float8(
      const std::uint16_t* x) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)));
  }
  // Eight floats, to nearest even; and sixteen.
  __attribute__((target("avx2,fma,f16c"), always_inline)) static __m128i from_float8(__m256 f) {
    return _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);
  }
  IRRUN_AVX512 __attribute__((always_inline)) static __m256i from_float16(__m512 f) {
    return _mm512_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);
  }
};

struct BF16 {
  static constexpr std::int16_t exponent_mask = 0x7F80, smallest_normal = 0x0080;
  static constexpr int mantissa_bits = 7, exponent_bias = 127;
  static double to_double(std::uint16_t h) { return bf16_bits_to_double(h); }
  static std::uint16_t from_double(double x) { return bf16_bits_from_double(x); }
  // A bf16 is the top half of a float.
  __attribute__((target("avx2,fma,f16c"), always_inline)) static __m256 to_float8(
      const std::uint16_t* x) {
    const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(w, 16));
  }
  // Eight finite floats, to nearest even on their bits (half the dropped bits' range less one,
  // plus the kept last bit, carries into it exactly when rounding up).
  __attribute__((target("avx2,fma,f16c"), always_inline)) static __m128i from_float8(__m256 f) {
    const __m256i b = _mm256_castps_si256(f);
    const __m256i last = _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    const __m256i r = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(b, _mm256_set1_epi32(0x7FFF)), last), 16);
    // Packed within each 128-bit lane: 0-3 0-3 | 4-7 4-7.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0x08);
    return _mm256_castsi256_si128(packed);
  }
  IRRUN_AVX512 __attribute__((always_inline)) static __m256i from_float16(__m512 f) {
    const __m512i b = _mm512_castps_si512(f);
    const __m512i last = _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(b, _mm512_set1_epi32(0x7FFF)), last), 16);
    return _mm512_cvtepi32_epi16(r);
  }
};

}  // namespace irrun::kernels::detail
