#include "simd.hpp"  // first: intrinsics and their warning pragmas

#include "max_lanes.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "lanes8.hpp"
#include "lines.hpp"
#include "max_reduce.hpp"
#include "window.hpp"

namespace irrun::kernels::detail {
namespace {

using i64 = std::int64_t;

// The planes past the last chunk: the reference's window_max.
void tail(const PoolGeometry& g, const float* x, float* y, i64 planes) {
  const auto axes = axis_windows(g);
  for (i64 p = 0; p < planes; ++p, x += g.in_plane_size())
    for (std::size_t d = 0; d < static_cast<std::size_t>(g.out[0]); ++d)
      for (std::size_t h = 0; h < static_cast<std::size_t>(g.out[1]); ++h)
        for (std::size_t w = 0; w < static_cast<std::size_t>(g.out[2]); ++w)
          *y++ = window_max(x, Window(axes, g, d, h, w)).value;
}

namespace avx512 {  // sixteen planes a chunk
#define IRRUN_PATH IRRUN_AVX512
using Vec = __m512;
constexpr i64 kLanes = 16;

IRRUN_AVX512 inline __mmask16 first(i64 n) {
  return static_cast<__mmask16>(n >= 16 ? 0xFFFF : (1u << n) - 1);
}
IRRUN_AVX512 inline Vec load(const float* p, i64 n) {
  return n == 16 ? _mm512_loadu_ps(p) : _mm512_maskz_loadu_ps(first(n), p);
}
IRRUN_AVX512 inline void store(float* p, Vec v, i64 n) {
  if (n == 16)
    _mm512_storeu_ps(p, v);
  else
    _mm512_mask_storeu_ps(p, first(n), v);
}
IRRUN_AVX512 inline Vec vmax(Vec x, Vec v) {
  return _mm512_max_ps(x, v);
}
IRRUN_AVX512 inline Vec set1(float f) {
  return _mm512_set1_ps(f);
}

// The 16x16 transpose of floats.
IRRUN_AVX512 inline void transpose(Vec* r) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  // u[4g + j]: rows 4g .. 4g + 3 of columns j, j + 4, j + 8, j + 12 (one per 128-bit lane).
  for (int g = 0; g < 16; g += 4)
    for (int j = 0; j < 2; ++j) {
      const __m512d a = _mm512_castps_pd(t[g + j]), b = _mm512_castps_pd(t[g + j + 2]);
      u[g + 2 * j] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));
      u[g + 2 * j + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));
    }
  for (int j = 0; j < 4; ++j) {
    const __m512 a = _mm512_shuffle_f32x4(u[j], u[4 + j], 0x88);  // columns j, j + 8
    const __m512 b = _mm512_shuffle_f32x4(u[j], u[4 + j], 0xDD);  // j + 4, j + 12
    const __m512 c = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0x88);
    const __m512 d = _mm512_shuffle_f32x4(u[8 + j], u[12 + j], 0xDD);
    r[j] = _mm512_shuffle_f32x4(a, c, 0x88), r[j + 8] = _mm512_shuffle_f32x4(a, c, 0xDD);
    r[j + 4] = _mm512_shuffle_f32x4(b, d, 0x88), r[j + 12] = _mm512_shuffle_f32x4(b, d, 0xDD);
  }
}

#include "max_lanes_chunk.hpp"
#undef IRRUN_PATH
}  // namespace avx512

namespace avx2 {  // eight planes a chunk
#define IRRUN_PATH IRRUN_AVX2
using Vec = __m256;
constexpr i64 kLanes = 8;

IRRUN_AVX2 inline Vec load(const float* p, i64 n) {
  return load_floats(p, n);
}
IRRUN_AVX2 inline void store(float* p, Vec v, i64 n) {
  store_floats(p, v, n);
}
IRRUN_AVX2 inline Vec vmax(Vec x, Vec v) {
  return _mm256_max_ps(x, v);
}
IRRUN_AVX2 inline Vec set1(float f) {
  return _mm256_set1_ps(f);
}
IRRUN_AVX2 inline void transpose(Vec* r) {
  transpose8(r);
}

#include "max_lanes_chunk.hpp"
#undef IRRUN_PATH
}  // namespace avx2

}  // namespace

bool max_lanes_cover(const PoolGeometry& g, Isa isa) {
  // AVX2: strided windows only. Stride-1 windows share their rows' maxima in the row kernels,
  // where a 256-bit vector spans most of a small row: 3x3 s1 p1 on 7x7 to 10x10 planes took
  // 1.29-1.87x the time in lanes, 1.17-1.56x with the lanes' rows shared too (on AVX-512, whose
  // vectors small rows waste, 0.80-0.88 of the row kernels' time, and 0.77-0.82 of that shared).
  i64 lanes = 0, max_plane = kLanesMaxPlane;
  if (isa == Isa::best && cpu_has_avx512())
    lanes = avx512::kLanes;
  else if (isa != Isa::portable && cpu_has_avx2() && g.stride[2] >= 2)
    lanes = avx2::kLanes, max_plane = kLanesMaxPlaneAvx2;
  return lanes > 0 && !g.adaptive && g.planes() >= lanes && g.in_plane_size() <= max_plane &&
         g.kernel[0] * g.kernel[1] * g.kernel[2] <= kLanesMaxTaps;
}

void max_pool_lanes(const float* x, float* y, const PoolGeometry& g, const Parallel& par, Isa isa) {
  const i64 done = isa == Isa::best && cpu_has_avx512() ? avx512::run_chunks(x, y, g, par)
                                                        : avx2::run_chunks(x, y, g, par);
  tail(g, x + done * g.in_plane_size(), y + done * g.out_plane_size(), g.planes() - done);
}

}  // namespace irrun::kernels::detail
