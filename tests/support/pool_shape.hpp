// The tensor shape [N, C, spatial...] of a PoolGeometry's input or output (g.in or g.out), with
// the spatial axes the model has (the geometry pads them to three).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "irrun/pool_geometry.hpp"

namespace irrun::testing {

inline std::vector<std::int64_t> shape_of(const PoolGeometry& g,
                                          const std::array<std::int64_t, 3>& spatial) {
  std::vector<std::int64_t> s{g.batch, g.channels};
  for (std::size_t a = 3 - g.spatial_rank; a < 3; ++a) s.push_back(spatial[a]);
  return s;
}

}  // namespace irrun::testing
