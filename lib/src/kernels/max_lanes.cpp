#include "simd.hpp"  // first: intrinsics and their warning pragmas

#include "max_lanes.hpp"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

#include "lines.hpp"
#include "max_reduce.hpp"
#include "window.hpp"

namespace irrun::kernels::detail {
namespace {

using i64 = std::int64_t;
constexpr i64 kLanes = 16;  // planes a chunk, one per lane

// The 16x16 transpose of floats: r[k] becomes the k-th floats of the sixteen.
IRRUN_AVX512 inline void transpose16(__m512* r) {
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

// Sixteen planes from x (in floats apart), their outputs at y (out apart). T: the planes' floats,
// one vector per position; Y: the outputs, one vector per output. Masked loads and stores only
// for a last partial block: they are slow on Zen 4 and 5.
IRRUN_AVX512 void chunk(const RowTable& rt, const AxisWindows& w, const PoolGeometry& g,
                        const float* x, float* y, __m512* T, __m512* Y) {
  const i64 in = g.in_plane_size(), out = g.out_plane_size(), OW = g.out[2];
  for (i64 p = 0; p < in; p += kLanes) {
    __m512 r[kLanes];
    const auto m = static_cast<__mmask16>(in - p >= kLanes ? 0xFFFF : (1u << (in - p)) - 1);
    for (i64 k = 0; k < kLanes; ++k)
      r[k] =
          m == 0xFFFF ? _mm512_loadu_ps(x + k * in + p) : _mm512_maskz_loadu_ps(m, x + k * in + p);
    transpose16(r);
    for (i64 j = 0; j < kLanes && p + j < in; ++j) T[p + j] = r[j];
  }
  const __m512 lowest = _mm512_set1_ps(std::numeric_limits<float>::lowest());
  for (i64 q = 0, o = 0; q < g.out[0] * g.out[1]; ++q) {
    const i64* off = rt.rows(q);
    const i64 n = rt.count(q);
    for (i64 ow = 0; ow < OW; ++ow, ++o) {
      const i64 first = w.first[static_cast<std::size_t>(ow)];
      const i64 taps = w.taps[static_cast<std::size_t>(ow)];
      // max(x, v) is v unless x > v: NaN never wins and a tie keeps the first tap.
      __m512 v = lowest;
      for (i64 j = 0; j < n; ++j)
        for (i64 t = 0; t < taps; ++t) v = _mm512_max_ps(T[off[j] + first + t * w.step], v);
      Y[o] = v;
    }
  }
  for (i64 o = 0; o < out; o += kLanes) {
    __m512 r[kLanes];
    for (i64 j = 0; j < kLanes; ++j) r[j] = o + j < out ? Y[o + j] : lowest;
    transpose16(r);
    const auto m = static_cast<__mmask16>(out - o >= kLanes ? 0xFFFF : (1u << (out - o)) - 1);
    for (i64 k = 0; k < kLanes; ++k) {
      if (m == 0xFFFF)
        _mm512_storeu_ps(y + k * out + o, r[k]);
      else
        _mm512_mask_storeu_ps(y + k * out + o, m, r[k]);
    }
  }
}

// The planes past the last chunk of sixteen: the reference's window_max.
void tail(const std::array<AxisWindows, 3>& axes, const PoolGeometry& g, const float* x, float* y,
          i64 planes) {
  for (i64 p = 0; p < planes; ++p, x += g.in_plane_size())
    for (std::size_t d = 0; d < static_cast<std::size_t>(g.out[0]); ++d)
      for (std::size_t h = 0; h < static_cast<std::size_t>(g.out[1]); ++h)
        for (std::size_t w = 0; w < static_cast<std::size_t>(g.out[2]); ++w)
          *y++ = window_max(x, Window(axes, g, d, h, w)).value;
}

}  // namespace

bool max_lanes_cover(const PoolGeometry& g) {
  return !g.adaptive && g.planes() >= kLanes && g.in_plane_size() <= kLanesMaxPlane &&
         g.kernel[0] * g.kernel[1] * g.kernel[2] <= kLanesMaxTaps && cpu_has_avx512();
}

void max_pool_lanes(const float* x, float* y, const PoolGeometry& g, const Parallel& par) {
  const auto axes = axis_windows(g);
  const RowTable rt = row_table(g, axes);
  const i64 in = g.in_plane_size(), out = g.out_plane_size(), chunks = g.planes() / kLanes;
  const auto body = [&](i64 b, i64 e) {
    const LineBytes scratch =
        own_line_bytes(sizeof(__m512) * static_cast<std::size_t>(in + (out + kLanes - 1)));
    auto* const T = reinterpret_cast<__m512*>(scratch.get());
    for (i64 c = b; c < e; ++c)
      chunk(rt, axes[2], g, x + c * kLanes * in, y + c * kLanes * out, T, T + in);
  };
  par.for_range(chunks, body, Parallel::fork_grain(chunks, 4 * g.planes() * (in + out)));
  tail(axes, g, x + chunks * kLanes * in, y + chunks * kLanes * out, g.planes() - chunks * kLanes);
}

}  // namespace irrun::kernels::detail
