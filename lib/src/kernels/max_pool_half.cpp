// f16 and bf16 window MaxPool through the f32 fast kernel: the reference kernel's bits (values
// and indices) at the f32 kernel's speed, where the reference compares 16-bit values one by one
// in software.
//
// Why it is exact: both types widen to f32 exactly and keep their order, and a maximum is one of
// the inputs, so it narrows back exactly. The one difference is the start: the reference's
// running maximum starts at the 16-bit type's lowest finite value and takes only strictly
// greater taps, so a tap at that value or -inf is never taken. Such taps widen to f32's lowest,
// which the f32 kernel never takes either, and an output left at f32's lowest narrows to the
// 16-bit lowest. NaN is never taken by either. Planes go a chunk at a time, so that the f32
// copies stay within a few MiB whatever the tensor (32 at most: larger planes are declined).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "../fp_control.hpp"
#include "irrun/float16.hpp"
#include "irrun/kernels/max_pool.hpp"
#include "simd.hpp"

namespace irrun::kernels {
namespace {

using i64 = std::int64_t;

constexpr i64 kChunkBytes = i64{8} << 20;   // scratch of a chunk of planes, nominally
constexpr i64 kPlaneBytes = i64{32} << 20;  // scratch of a single plane, at most (else declined)
constexpr float kLowest = std::numeric_limits<float>::lowest();

// The 16-bit type's lowest finite value and the conversions of its patterns.
struct Half {
  std::uint16_t lowest_bits;
  float lowest;
};
constexpr Half kF16{0xFBFF, -65504.0f};
constexpr Half kBf16{0xFF7F, -0x1.FEp127f};

// x[i] widened to f32, the 16-bit lowest and -inf (and below) to f32's lowest.
void widen(ElementType type, const std::uint16_t* x, i64 n, float* y) {
  const Half h = type == ElementType::f16 ? kF16 : kBf16;
  for (i64 i = 0; i < n; ++i) {
    const float v = type == ElementType::f16
                        ? static_cast<float>(f16_bits_to_double(x[i]))
                        : std::bit_cast<float>(static_cast<std::uint32_t>(x[i]) << 16);
    y[i] = v <= h.lowest ? kLowest : v;
  }
}

__attribute__((target("avx2,fma,f16c"))) void widen_f16c(const std::uint16_t* x, i64 n, float* y) {
  const __m256 lowest = _mm256_set1_ps(kF16.lowest), f32_lowest = _mm256_set1_ps(kLowest);
  i64 i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    _mm256_storeu_ps(y + i, _mm256_blendv_ps(v, f32_lowest, _mm256_cmp_ps(v, lowest, _CMP_LE_OQ)));
  }
  widen(ElementType::f16, x + i, n - i, y + i);
}

// y[i] narrowed back: every value is a widened input or f32's lowest.
void narrow(ElementType type, const float* x, i64 n, std::uint16_t* y) {
  const Half h = type == ElementType::f16 ? kF16 : kBf16;
  for (i64 i = 0; i < n; ++i)
    y[i] = x[i] == kLowest ? h.lowest_bits
           : type == ElementType::f16
               ? f16_bits_from_double(x[i])
               : static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(x[i]) >> 16);
}

__attribute__((target("avx2,fma,f16c"))) void narrow_f16c(const float* x, i64 n, std::uint16_t* y) {
  const __m128i lowest = _mm_set1_epi16(static_cast<short>(kF16.lowest_bits));
  const __m256 f32_lowest = _mm256_set1_ps(kLowest);
  i64 i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m128i h = _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    const __m256i at_lowest = _mm256_castps_si256(_mm256_cmp_ps(v, f32_lowest, _CMP_EQ_OQ));
    // The 32-bit mask lanes packed to 16 bits (saturating keeps 0 and -1).
    const __m128i mask =
        _mm_packs_epi32(_mm256_castsi256_si128(at_lowest), _mm256_extracti128_si256(at_lowest, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), _mm_blendv_epi8(h, lowest, mask));
  }
  narrow(ElementType::f16, x + i, n - i, y + i);
}

}  // namespace

bool max_pool_half(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                   const Parallel& par, Isa isa, std::int64_t chunk_planes) {
  if (in.type != ElementType::f16 && in.type != ElementType::bf16) return false;
  if (values.type != in.type || g.adaptive || !max_pool_fast_covers(ElementType::f32, g))
    return false;
  if (indices && indices->type != ElementType::i32 && indices->type != ElementType::i64)
    return false;
  if (g.planes() * g.out_plane_size() == 0) return true;
  // A plane's f32 input and output and i64 indices: a plane past kPlaneBytes (a 4K frame) runs
  // the reference kernel, so that the scratch stays well within a run's 64 MiB above its tensors.
  const i64 n_in = g.in_plane_size(), n_out = g.out_plane_size();
  const i64 plane_bytes = 4 * n_in + (indices ? 12 : 4) * n_out;
  if (plane_bytes > kPlaneBytes) return false;
  const irrun::detail::FpScope ieee;  // IEEE defaults (fp_control.hpp): no DAZ on bf16 subnormals
  const i64 chunk = chunk_planes > 0 ? chunk_planes : std::max<i64>(1, kChunkBytes / plane_bytes);
  const bool f16c = in.type == ElementType::f16 && isa != Isa::portable && detail::cpu_has_f16c();
  const auto* x = in.data<std::uint16_t>();
  auto* y = values.mutable_data<std::uint16_t>();
  const i64 planes = std::min(chunk, g.planes());
  const auto xs = std::make_unique<float[]>(static_cast<std::size_t>(planes * n_in));
  const auto ys = std::make_unique<float[]>(static_cast<std::size_t>(planes * n_out));
  const auto is =
      std::make_unique<std::int64_t[]>(indices ? static_cast<std::size_t>(planes * n_out) : 0);
  const i64 range = g.index_range();
  for (i64 p0 = 0; p0 < g.planes(); p0 += chunk) {
    const i64 c = std::min(chunk, g.planes() - p0);
    // The chunk as a tensor of its own: indices counted over it all (no wrap), then moved to
    // the whole tensor's count below.
    PoolGeometry gc = g;
    gc.batch = 1;
    gc.channels = c;
    gc.index_axis = 0;
    std::vector<i64> in_shape{1, c}, out_shape{1, c};
    for (std::size_t a = 3 - g.spatial_rank; a < 3; ++a) {
      in_shape.push_back(g.in[a]);
      out_shape.push_back(g.out[a]);
    }
    const Tensor xc = Tensor::wrap(ElementType::f32, in_shape, xs.get());
    Tensor yc = Tensor::wrap(ElementType::f32, out_shape, ys.get());
    Tensor ic = Tensor::wrap(ElementType::i64, out_shape, is.get());
    par.for_range(c * n_in, [&](i64 b, i64 e) {
      if (f16c)
        widen_f16c(x + p0 * n_in + b, e - b, xs.get() + b);
      else
        widen(in.type, x + p0 * n_in + b, e - b, xs.get() + b);
    });
    max_pool_fast(xc, yc, indices ? &ic : nullptr, gc, par, isa);  // covered: checked above
    par.for_range(c * n_out, [&](i64 b, i64 e) {
      if (f16c)
        narrow_f16c(ys.get() + b, e - b, y + p0 * n_out + b);
      else
        narrow(in.type, ys.get() + b, e - b, y + p0 * n_out + b);
      if (!indices) return;
      const i64 offset = p0 * n_in;  // the chunk's first position in the whole tensor
      for (i64 i = b; i < e; ++i) {
        const i64 at = (is[static_cast<std::size_t>(i)] + offset) % range;
        if (indices->type == ElementType::i32)
          indices->mutable_data<std::int32_t>()[p0 * n_out + i] = static_cast<std::int32_t>(at);
        else
          indices->mutable_data<std::int64_t>()[p0 * n_out + i] = at;
      }
    });
  }
  return true;
}

}  // namespace irrun::kernels
