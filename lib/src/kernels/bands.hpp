// Long first spatial axes in bands (avg_pool, max_pool): the kernels keep tables of 16 to 45
// bytes an output row along it, which on a long 1-D sequence (40 million samples: 1.8 GB) passed
// a run's 64 MiB above its tensors. A window pooling whose first spatial axis has more than
// kBandRows output rows runs a band of that many at a time, each band of a plane a tensor of its
// own, in place (its rows follow each other). Adaptive bins follow from the whole axis: not
// banded. A long W under windows of 1 x K (1-D pools written in 2-D or 3-D) bands as rows.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "half_pieces.hpp"
#include "irrun/element_type.hpp"
#include "irrun/pool_geometry.hpp"
#include "irrun/tensor.hpp"

namespace irrun::kernels::detail {

constexpr std::int64_t kBandRows = std::int64_t{1} << 14;

// (An empty input axis has no rows to band: its windows are all padding.)
inline bool in_bands(const PoolGeometry& g) {
  const std::size_t a = 3 - g.spatial_rank;
  return !g.adaptive && g.out[a] > kBandRows && g.in[a] > 0;
}

// A pooling of a W of more than kBandRows outputs that leaves every other axis alone (kernel,
// stride and dilation 1, no pads) as a 1-D pooling of N x C*D*H rows, which bands along W: the
// same windows, divisors and index counts where indices count from the tensor (index_axis 0), a
// batch item (1) or the row (the last axis); none otherwise.
inline std::optional<PoolGeometry> long_rows(const PoolGeometry& g) {
  if (g.adaptive || g.spatial_rank == 1 || g.out[2] <= kBandRows) return std::nullopt;
  for (std::size_t a = 3 - g.spatial_rank; a < 2; ++a)
    if (g.kernel[a] != 1 || g.stride[a] != 1 || g.dilation[a] != 1 || g.pad_begin[a] != 0 ||
        g.pad_end[a] != 0 || g.out[a] != g.in[a])
      return std::nullopt;
  PoolGeometry r = g;
  r.spatial_rank = 1;
  r.channels = g.channels * g.in[0] * g.in[1];
  for (std::size_t a = 0; a < 2; ++a) {
    r.in[a] = r.out[a] = r.kernel[a] = r.stride[a] = r.dilation[a] = 1;
    r.pad_begin[a] = r.pad_end[a] = 0;
  }
  if (g.index_axis == g.spatial_rank + 1)
    r.index_axis = 2;
  else if (g.index_axis > 1)
    return std::nullopt;
  return r;
}

// `t` seen as [N, C*D*H, W] for a row geometry r (spatial: r.in for an input, r.out for an
// output), in place.
inline Tensor rows_view(const Tensor& t, const PoolGeometry& r,
                        const std::array<std::int64_t, 3>& spatial) {
  return Tensor::wrap(t.type, {r.batch, r.channels, spatial[2]}, t.buffer.data());
}
inline Tensor rows_view(Tensor& t, const PoolGeometry& r,
                        const std::array<std::int64_t, 3>& spatial) {
  return Tensor::wrap(t.type, {r.batch, r.channels, spatial[2]}, t.buffer.mutable_data());
}

// Calls f(band_in, band_out, piece) for each band, in order: views of `in` and `out` (the
// piece's geometry their own, pad_begin from the band's first input row, indices counted over
// the band alone).
template <class F>
void for_each_band(const Tensor& in, Tensor& out, const PoolGeometry& g, F&& f) {
  const Pieces bands{false, 1, kBandRows, 0};
  const std::byte* x = in.buffer.data();
  std::byte* y = out.buffer.mutable_data();
  for_each_piece(g, bands, [&](const Piece& pc) {
    const Tensor band_in =
        Tensor::wrap(in.type, pc.in_shape, x + packed_byte_size(in.type, pc.in_at));
    Tensor band_out =
        Tensor::wrap(out.type, pc.out_shape, y + packed_byte_size(out.type, pc.out_at));
    f(band_in, band_out, pc);
  });
}

}  // namespace irrun::kernels::detail
