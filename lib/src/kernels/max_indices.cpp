#include "max_indices.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include <Eigen/Core>

namespace irrun::kernels::detail {
namespace {

// The bits of lowest() in a tensor of `type`: an output that took no tap (the kernels start there
// at position 0, and take only a tap above it).
std::uint64_t lowest_bits(ElementType type) {
  const auto bits = []<class T>(T lowest) {
    std::uint64_t b = 0;
    std::memcpy(&b, &lowest, sizeof lowest);
    return b;
  };
  switch (type) {
    case ElementType::f32:
      return bits(std::numeric_limits<float>::lowest());
    case ElementType::f64:
      return bits(std::numeric_limits<double>::lowest());
    case ElementType::f16:
      return bits(std::numeric_limits<Eigen::half>::lowest());
    case ElementType::bf16:
      return bits(std::numeric_limits<Eigen::bfloat16>::lowest());
    case ElementType::i8:
      return bits(std::numeric_limits<std::int8_t>::lowest());
    case ElementType::i16:
      return bits(std::numeric_limits<std::int16_t>::lowest());
    case ElementType::i32:
      return bits(std::numeric_limits<std::int32_t>::lowest());
    case ElementType::i64:
      return bits(std::numeric_limits<std::int64_t>::lowest());
    default:  // unsigned: 0
      return 0;
  }
}

// Calls f(i, idx[i], taken) for every output i of a MaxPool's values and indices (I: i32 or
// i64), taken: whether its value is a tap's (not lowest()).
template <class F>
void for_each_index(const Tensor& values, Tensor& indices, F&& f) {
  const std::size_t size = bit_width(values.type) / 8;
  const std::uint64_t lowest = lowest_bits(values.type);
  const std::byte* v = values.buffer.data();
  const auto run = [&](auto* idx) {
    for (std::size_t i = 0; i < values.element_count(); ++i) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, v + i * size, size);
      f(i, idx[i], bits != lowest);
    }
  };
  if (indices.type == ElementType::i32)
    run(indices.mutable_data<std::int32_t>());
  else
    run(indices.mutable_data<std::int64_t>());
}

}  // namespace

void move_band_indices(const Tensor& values, Tensor& indices, std::int64_t base, std::int64_t shift,
                       std::int64_t range) {
  for_each_index(values, indices, [&](std::size_t, auto& idx, bool taken) {
    const std::int64_t at = base + (taken ? shift : 0) + static_cast<std::int64_t>(idx);
    idx = static_cast<std::remove_reference_t<decltype(idx)>>(at % range);
  });
}

void move_tile_indices(const Tensor& values, Tensor& indices, const PoolGeometry& g,
                       const Tile& t) {
  const std::int64_t range = std::max<std::int64_t>(g.index_range(), 1);
  const PoolGeometry& tg = t.g;
  // A tile position: plane k of the tile, then row r of the first spatial axis, j of the middle
  // one of three, column w.
  const std::int64_t mid = g.spatial_rank == 3 ? g.in[1] : 1;
  const std::int64_t row = tg.in_plane_size() / std::max<std::int64_t>(1, t.rows.r1 - t.rows.r0);
  for_each_index(values, indices, [&](std::size_t i, auto& idx, bool taken) {
    const std::int64_t k = static_cast<std::int64_t>(i) / tg.out_plane_size();
    std::int64_t at = (t.p0 + k) * g.in_plane_size();
    if (taken) {
      const std::int64_t pos = static_cast<std::int64_t>(idx) - k * tg.in_plane_size();
      const std::int64_t r = pos / row, j = pos % row / tg.in[2], w = pos % tg.in[2];
      at += ((t.rows.r0 + r) * mid + j) * g.in[2] + t.cols.r0 + w;
    }
    idx = static_cast<std::remove_reference_t<decltype(idx)>>(at % range);
  });
}

void untaken_to_plane_start(const Tensor& values, Tensor& indices, const PoolGeometry& g) {
  const std::int64_t range = std::max<std::int64_t>(g.index_range(), 1);
  for_each_index(values, indices, [&](std::size_t i, auto& idx, bool taken) {
    if (taken) return;
    const auto plane = static_cast<std::int64_t>(i) / g.out_plane_size();
    idx = static_cast<std::remove_reference_t<decltype(idx)>>(plane * g.in_plane_size() % range);
  });
}

}  // namespace irrun::kernels::detail
