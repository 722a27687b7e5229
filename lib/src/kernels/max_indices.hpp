// MaxPool's indices from a piece of a tensor (bands.hpp: a band, rows, a tile), counted over the
// piece's own input, moved to the whole tensor's count (max_pool.cpp). An output that took no tap
// holds lowest() (the kernels start there, at position 0, and take only a tap above it): it keeps
// position 0 of its (n, c) plane. Counts are modulo the whole op's index range; an i32 count
// wraps like a cast, as the kernels'.
#pragma once

#include <cstdint>

#include "bands.hpp"
#include "irrun/pool_geometry.hpp"
#include "irrun/tensor.hpp"

namespace irrun::kernels::detail {

// A band's: the plane's start `base`, plus for a taken tap the band's first input row `shift`.
void move_band_indices(const Tensor& values, Tensor& indices, std::int64_t base, std::int64_t shift,
                       std::int64_t range);

// After a run as rows (long_rows): an output that took no tap got position 0 of its row.
void untaken_to_plane_start(const Tensor& values, Tensor& indices, const PoolGeometry& g);

// A tile's of g (for_each_tile).
void move_tile_indices(const Tensor& values, Tensor& indices, const PoolGeometry& g, const Tile& t);

}  // namespace irrun::kernels::detail
