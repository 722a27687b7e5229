// f16 and bf16 window MaxPool through the f32 fast kernel: the reference kernel's bits (values
// and indices) at the f32 kernel's speed, where the reference compares 16-bit values one by one
// in software.
//
// Why it is exact: both types widen to f32 exactly and keep their order, and a maximum is one of
// the inputs, so it narrows back exactly. The one difference is the start: the reference's
// running maximum starts at the 16-bit type's lowest finite value and takes only strictly
// greater taps, so a tap at that value or -inf is never taken. Such taps widen to f32's lowest,
// which the f32 kernel never takes either, and an output left at f32's lowest narrows to the
// 16-bit lowest. NaN is never taken by either. Planes go a chunk at a time, and large planes a
// band of rows at a time, so that the f32 copies stay within 8 MiB whatever the tensor (32 MiB at
// most, for windows spanning many rows of a large plane: wider bands are declined).
#include <algorithm>
#include <bit>
#include <cstdint>
#include <limits>
#include <stdexcept>

#include "../fp_control.hpp"
#include "half_pieces.hpp"
#include "irrun/float16.hpp"
#include "irrun/kernels/max_pool.hpp"
#include "scratch.hpp"
#include "simd.hpp"

namespace irrun::kernels {
namespace {

using i64 = std::int64_t;

constexpr i64 kChunkBytes = i64{8} << 20;  // scratch of a piece of work, nominally
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

// Indices from a piece's count to the whole tensor's: base + local, plus `shift` (the band's
// first row) for a taken tap; an untaken output (lowest) keeps index 0 of its plane. Counts that
// restart within a plane `wrap` (else 0); an i32 count that does not fit wraps like a cast.
template <class I>
void move_indices(const i64* local, const float* values, i64 n, i64 base, i64 shift, i64 wrap,
                  I* out) {
  for (i64 i = 0; i < n; ++i) {
    const i64 at = local[i] + base + (values[i] != kLowest ? shift : 0);
    out[i] = static_cast<I>(wrap ? at % wrap : at);
  }
}

}  // namespace

bool max_pool_half(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                   const Parallel& par, Isa isa, std::int64_t chunk_bytes) {
  if (in.type != ElementType::f16 && in.type != ElementType::bf16) return false;
  if (values.type != in.type || g.adaptive || !max_pool_fast_covers(ElementType::f32, g))
    return false;
  if (indices && indices->type != ElementType::i32 && indices->type != ElementType::i64)
    return false;
  if (g.planes() * g.out_plane_size() == 0) return true;
  if (max_pool_half_rows(in, values, indices, g, par, isa)) return true;
  const i64 n_in = g.in_plane_size();
  const auto plan =
      detail::plan_pieces(g, indices ? 12 : 4, chunk_bytes > 0 ? chunk_bytes : kChunkBytes);
  if (!plan) return false;

  const irrun::detail::FpScope ieee;  // IEEE defaults (fp_control.hpp): no DAZ on bf16 subnormals
  const bool f16c = in.type == ElementType::f16 && isa != Isa::portable && detail::cpu_has_f16c();
  const auto* x = in.data<std::uint16_t>();
  auto* y = values.mutable_data<std::uint16_t>();
  const i64 row_in = n_in / g.in[3 - g.spatial_rank];
  const detail::PieceCopies<std::int64_t> copies(detail::Slot::max_half, g, *plan, indices);
  float* const xs = copies.xs;
  float* const ys = copies.ys;
  std::int64_t* const is = copies.extra;
  const i64 range = g.index_range();
  // The count is a multiple of the plane's size (it restarts every plane or more), or divides it.
  const i64 wrap = range < n_in ? range : 0;
  detail::for_each_piece(g, *plan, [&](const detail::Piece& pc) {
    if (pc.r0 == pc.r1) {
      // Every window is padding: the f32 kernel's start, lowest with index 0.
      std::fill_n(ys, pc.n_out, kLowest);
      std::fill_n(is, indices ? pc.n_out : 0, 0);
    } else {
      const Tensor xc = Tensor::wrap(ElementType::f32, pc.in_shape, xs);
      Tensor yc = Tensor::wrap(ElementType::f32, pc.out_shape, ys);
      Tensor ic = Tensor::wrap(ElementType::i64, pc.out_shape, is);
      par.for_range(pc.n_in, [&](i64 b, i64 e) {
        if (f16c)
          widen_f16c(x + pc.in_at + b, e - b, xs + b);
        else
          widen(in.type, x + pc.in_at + b, e - b, xs + b);
      });
      if (!max_pool_fast(xc, yc, indices ? &ic : nullptr, pc.g, par, isa))
        throw std::logic_error("max_pool_half: a piece the f32 kernel does not cover");
    }
    const i64 plane_in = pc.n_in / pc.planes, plane_out = pc.n_out / pc.planes;  // of the piece
    par.for_range(pc.n_out, [&](i64 b, i64 e) {
      if (f16c)
        narrow_f16c(ys + b, e - b, y + pc.out_at + b);
      else
        narrow(in.type, ys + b, e - b, y + pc.out_at + b);
      if (!indices) return;
      // Indices moved from the piece's count to the whole tensor's, a plane at a time.
      for (i64 i = b; i < e;) {
        const i64 pl = i / plane_out, end = std::min(e, (pl + 1) * plane_out);
        const i64 base = (pc.p0 + pl) * n_in % range - pl * plane_in;
        if (indices->type == ElementType::i32)
          move_indices(is + i, ys + i, end - i, base, pc.r0 * row_in, wrap,
                       indices->mutable_data<std::int32_t>() + pc.out_at + i);
        else
          move_indices(is + i, ys + i, end - i, base, pc.r0 * row_in, wrap,
                       indices->mutable_data<std::int64_t>() + pc.out_at + i);
        i = end;
      }
    });
  });
  return true;
}

}  // namespace irrun::kernels
