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
#include <memory>
#include <optional>
#include <stdexcept>
#include <vector>

#include "../fp_control.hpp"
#include "irrun/float16.hpp"
#include "irrun/kernels/max_pool.hpp"
#include "simd.hpp"

namespace irrun::kernels {
namespace {

using i64 = std::int64_t;

constexpr i64 kChunkBytes = i64{8} << 20;   // scratch of a piece of work, nominally
constexpr i64 kPlaneBytes = i64{32} << 20;  // scratch of a band of one output row, at most
constexpr double kWidenedPerTap = 8;        // values widened per reference tap, at most,
constexpr double kWidenedAnyway = 1 << 20;  // once past this many values (a fraction of a ms)
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

// Pieces of work: planes that fit the budget go several at a time, whole; a larger plane goes a
// band of output rows at a time along the model's first spatial axis, with the input rows its
// windows span. Scratch bytes: 4 an input and `out_bytes` an output (4, or 12 with i64 indices).
struct Pieces {
  bool whole;
  i64 planes;     // planes of a piece
  i64 rows;       // output rows of a piece along the first spatial axis
  i64 rows_read;  // input rows a piece reads there, at most
};

std::optional<Pieces> plan_pieces(const PoolGeometry& g, i64 out_bytes, i64 budget) {
  const std::size_t a = 3 - g.spatial_rank;
  const i64 n_in = g.in_plane_size(), n_out = g.out_plane_size();
  const i64 plane_bytes = 4 * n_in + out_bytes * n_out;
  std::optional<Pieces> p;
  if (plane_bytes <= budget) {
    p = Pieces{true, std::clamp<i64>(budget / plane_bytes, 1, g.planes()), g.out[a], g.in[a]};
  } else {
    // A band of b output rows reads at most first + (b - 1) * next input rows.
    const i64 row_in = n_in / g.in[a], row_out = n_out / g.out[a];
    const i64 first = std::min((g.kernel[a] - 1) * g.dilation[a] + 1, g.in[a]);
    const i64 next = std::min(g.stride[a], g.in[a]);
    const i64 first_bytes = 4 * row_in * first + out_bytes * row_out;
    const i64 next_bytes = 4 * row_in * next + out_bytes * row_out;
    // A band of one output row past kPlaneBytes (windows over thousands of rows of a wide
    // plane) runs the reference kernel, so that the scratch stays well within a run's 64 MiB
    // above its tensors.
    if (first_bytes > kPlaneBytes) return std::nullopt;
    const i64 rows = std::clamp<i64>((budget - first_bytes) / next_bytes + 1, 1, g.out[a]);
    p = Pieces{false, 1, rows, std::min(g.in[a], first + (rows - 1) * next)};
  }
  // Values widened against the reference's taps (compares of 16-bit values in software, about
  // ten times a widening): windows dilated or strided far along the band axis had each band
  // widen rows no window reads, up to thousands of times the reference's time (seconds).
  const double bands = static_cast<double>((g.out[a] + p->rows - 1) / p->rows);
  const double widened = static_cast<double>(g.planes()) * bands *
                         static_cast<double>(p->rows_read) * static_cast<double>(n_in / g.in[a]);
  double taps = static_cast<double>(g.planes()) * static_cast<double>(n_out);
  for (std::size_t b = 0; b < 3; ++b) taps *= static_cast<double>(std::min(g.kernel[b], g.in[b]));
  if (widened > kWidenedPerTap * taps && widened > kWidenedAnyway) return std::nullopt;
  return p;
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
  const std::size_t a = 3 - g.spatial_rank;
  const i64 n_in = g.in_plane_size(), n_out = g.out_plane_size();
  const i64 row_in = n_in / g.in[a], row_out = n_out / g.out[a];
  const i64 stride = g.stride[a], extent = (g.kernel[a] - 1) * g.dilation[a] + 1;
  const auto plan = plan_pieces(g, indices ? 12 : 4, chunk_bytes > 0 ? chunk_bytes : kChunkBytes);
  if (!plan) return false;
  const auto [whole, planes, rows, rows_read] = *plan;

  const irrun::detail::FpScope ieee;  // IEEE defaults (fp_control.hpp): no DAZ on bf16 subnormals
  const bool f16c = in.type == ElementType::f16 && isa != Isa::portable && detail::cpu_has_f16c();
  const auto* x = in.data<std::uint16_t>();
  auto* y = values.mutable_data<std::uint16_t>();
  const auto xs = std::make_unique<float[]>(static_cast<std::size_t>(planes * rows_read * row_in));
  const auto ys = std::make_unique<float[]>(static_cast<std::size_t>(planes * rows * row_out));
  const auto is = std::make_unique<std::int64_t[]>(
      indices ? static_cast<std::size_t>(planes * rows * row_out) : 0);
  const i64 range = g.index_range();
  // The count is a multiple of the plane's size (it restarts every plane or more), or divides it.
  const i64 wrap = range < n_in ? range : 0;
  for (i64 p0 = 0; p0 < g.planes(); p0 += planes) {
    const i64 c = std::min(planes, g.planes() - p0);
    for (i64 o0 = 0; o0 < g.out[a]; o0 += rows) {
      const i64 o1 = std::min(g.out[a], o0 + rows);
      // The input rows [r0, r1) a band's windows span (none when all are padding); whole
      // planes keep all their rows, so that they stay one after the other.
      const i64 lo = o0 * stride - g.pad_begin[a], hi = (o1 - 1) * stride - g.pad_begin[a] + extent;
      const i64 r0 = whole ? 0 : std::clamp<i64>(lo, 0, g.in[a]);
      const i64 r1 = whole ? g.in[a] : std::clamp<i64>(hi, r0, g.in[a]);
      const i64 n_x = c * (r1 - r0) * row_in, n_y = c * (o1 - o0) * row_out;
      const std::uint16_t* xp = x + p0 * n_in + r0 * row_in;
      if (r0 == r1) {
        // Every window is padding: the f32 kernel's start, lowest with index 0.
        std::fill_n(ys.get(), n_y, kLowest);
        std::fill_n(is.get(), indices ? n_y : 0, 0);
      } else {
        // The piece as a tensor of its own: its windows where they are in the whole plane
        // (pad_begin from the band's first row), indices counted over all of it (no wrap).
        PoolGeometry gc = g;
        gc.batch = 1;
        gc.channels = c;
        gc.index_axis = 0;
        gc.in[a] = r1 - r0;
        gc.out[a] = o1 - o0;
        gc.pad_begin[a] = r0 - lo;
        gc.pad_end[a] = 0;  // kernels clip windows at the input's end
        std::vector<i64> in_shape{1, c}, out_shape{1, c};
        for (std::size_t b = a; b < 3; ++b) {
          in_shape.push_back(gc.in[b]);
          out_shape.push_back(gc.out[b]);
        }
        const Tensor xc = Tensor::wrap(ElementType::f32, in_shape, xs.get());
        Tensor yc = Tensor::wrap(ElementType::f32, out_shape, ys.get());
        Tensor ic = Tensor::wrap(ElementType::i64, out_shape, is.get());
        par.for_range(n_x, [&](i64 b, i64 e) {
          if (f16c)
            widen_f16c(xp + b, e - b, xs.get() + b);
          else
            widen(in.type, xp + b, e - b, xs.get() + b);
        });
        if (!max_pool_fast(xc, yc, indices ? &ic : nullptr, gc, par, isa))
          throw std::logic_error("max_pool_half: a piece the f32 kernel does not cover");
      }
      const i64 out_at = p0 * n_out + o0 * row_out;
      const i64 plane_in = (r1 - r0) * row_in, plane_out = (o1 - o0) * row_out;  // of the piece
      par.for_range(n_y, [&](i64 b, i64 e) {
        if (f16c)
          narrow_f16c(ys.get() + b, e - b, y + out_at + b);
        else
          narrow(in.type, ys.get() + b, e - b, y + out_at + b);
        if (!indices) return;
        // Indices moved from the piece's count to the whole tensor's, a plane at a time.
        for (i64 i = b; i < e;) {
          const i64 pl = i / plane_out, end = std::min(e, (pl + 1) * plane_out);
          const i64 base = (p0 + pl) * n_in % range - pl * plane_in;
          if (indices->type == ElementType::i32)
            move_indices(is.get() + i, ys.get() + i, end - i, base, r0 * row_in, wrap,
                         indices->mutable_data<std::int32_t>() + out_at + i);
          else
            move_indices(is.get() + i, ys.get() + i, end - i, base, r0 * row_in, wrap,
                         indices->mutable_data<std::int64_t>() + out_at + i);
          i = end;
        }
      });
    }
  }
  return true;
}

}  // namespace irrun::kernels
