// Long first spatial axes in bands (avg_pool, max_pool): the kernels keep tables of 16 to 45
// bytes an output row along it, which on a long 1-D sequence (40 million samples: 1.8 GB) passed
// a run's 64 MiB above its tensors. A window pooling whose first spatial axis has more than
// kBandRows output rows runs a band of that many at a time, each band of a plane a tensor of its
// own, in place (its rows follow each other). Adaptive bins follow from the whole axis: not
// banded.
#pragma once

#include <cstdint>

#include "half_pieces.hpp"
#include "irrun/element_type.hpp"
#include "irrun/pool_geometry.hpp"
#include "irrun/tensor.hpp"

namespace irrun::kernels::detail {

constexpr std::int64_t kBandRows = std::int64_t{1} << 14;

inline bool in_bands(const PoolGeometry& g) {
  return !g.adaptive && g.out[3 - g.spatial_rank] > kBandRows;
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
