// Long first spatial axes in bands (avg_pool, max_pool): the kernels keep tables of 16 to 45
// bytes an output row along it, which on a long 1-D sequence (40 million samples: 1.8 GB) passed
// a run's 64 MiB above its tensors. A window pooling whose first spatial axis has more than
// kBandRows output rows runs a band of that many at a time, each band of a plane a tensor of its
// own, in place (its rows follow each other). Adaptive bins follow from the whole axis: not
// banded. A long W under windows of 1 x K (1-D pools written in 2-D or 3-D) bands as rows; under
// windows that pool another axis too, it goes in tiles of kBandRows output columns, copied.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <vector>

#include "half_pieces.hpp"
#include "irrun/element_type.hpp"
#include "irrun/parallel.hpp"
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

// Calls f(band_in, band_out, piece) for each band, the threads of `par` a range of bands each
// (f's calls then run serially): views of `in` and `out` (the piece's geometry their own,
// pad_begin from the band's first input row, indices counted over the band alone).
template <class F>
void for_each_band(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par,
                   F&& f) {
  const Pieces bands{false, 1, kBandRows, 0};
  const std::byte* x = in.buffer.data();
  std::byte* y = out.buffer.mutable_data();
  par.for_range(piece_count(g, bands), [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t k = b; k < e; ++k) {
      const Piece pc = piece_at(g, bands, k);
      const Tensor band_in =
          Tensor::wrap(in.type, pc.in_shape, x + packed_byte_size(in.type, pc.in_at));
      Tensor band_out =
          Tensor::wrap(out.type, pc.out_shape, y + packed_byte_size(out.type, pc.out_at));
      f(band_in, band_out, pc);
    }
  });
}

// Wide rows (a W of more than kTileCols outputs that long_rows leaves, 3 x 3 windows over
// [1, 1, 3, 40M] say) in tiles of kTileCols output columns, and of as many planes and output
// rows along the first spatial axis as keep a tile's input and output within kTileBytes (one
// output row's at least), each copied out of the tensor and its outputs back (its rows lie apart
// there). The kernels keep tables of 16-45 bytes an output column, and the f32 kernel V rows of 8
// bytes an input column a thread (made anew by each band of a 16-bit tensor's f32 copies):
// [1,1,3,40M] took 2.8 GB above its tensors and 1.6x the reference kernel's time. The copy costs a
// pass over the tensor: f32 tiles from 2^18 input columns (planes of 64 rows of 20000 ran 1.3-3x
// slower in tiles), other types from 2^16 (bench/HISTORY.md, round 61). None where one output row's
// input and output pass kTileMaxBytes (windows or strides over thousands of rows or columns).
constexpr std::int64_t kTileCols = kBandRows;
constexpr std::int64_t kTileBytes = std::int64_t{8} << 20;
constexpr std::int64_t kTileMaxBytes = std::int64_t{32} << 20;

struct Tiles {
  std::int64_t planes, rows, rows_in, cols, cols_in;  // of a tile, at most
};

inline std::optional<Tiles> tiles(const PoolGeometry& g, ElementType type) {
  const std::int64_t min_cols = std::int64_t{1} << (type == ElementType::f32 ? 18 : 16);
  if (g.adaptive || g.spatial_rank == 1 || g.in[2] <= min_cols || g.out[2] <= kTileCols)
    return std::nullopt;
  const std::size_t a = 3 - g.spatial_rank;
  const auto reach = [&](std::size_t d, std::int64_t outs) {  // input of `outs` outputs along d
    return std::min(g.in[d], (outs - 1) * g.stride[d] + (g.kernel[d] - 1) * g.dilation[d] + 1);
  };
  Tiles t{1, g.out[a], g.in[a], kTileCols, reach(2, kTileCols)};
  // Bytes of a tile's input and output row along the first spatial axis (with the middle axis
  // of three and the tile's columns).
  const std::int64_t bytes = bit_width(type) / 8;
  const std::int64_t row_in = (g.spatial_rank == 3 ? g.in[1] : 1) * t.cols_in * bytes;
  const std::int64_t row_out = (g.spatial_rank == 3 ? g.out[1] : 1) * t.cols * bytes;
  if (const std::int64_t plane = g.in[a] * row_in + g.out[a] * row_out; plane <= kTileBytes) {
    t.planes =
        std::clamp<std::int64_t>(kTileBytes / std::max<std::int64_t>(1, plane), 1, g.planes());
  } else {
    // r rows read at most reach(a, 1) + (r - 1) * next input rows.
    const std::int64_t one = reach(a, 1) * row_in + row_out;
    if (one > kTileMaxBytes) return std::nullopt;
    const std::int64_t next = std::min(g.stride[a], g.in[a]) * row_in + row_out;
    t.rows = std::clamp<std::int64_t>((kTileBytes - one) / std::max<std::int64_t>(1, next) + 1, 1,
                                      g.out[a]);
    t.rows_in = reach(a, t.rows);
  }
  return t;
}

// A tile: planes [p0, p0 + planes), its spans along the first spatial axis (rows) and W (cols),
// and its geometry as a tensor of its own (indices counted over all of it).
struct Tile {
  std::int64_t p0, planes;
  AxisSpan rows, cols;
  PoolGeometry g;
};

// The elements of a tensor of g (spatial dims `dims`) in planes [p0, p0 + planes), rows [a0, a1)
// of the first spatial axis and columns [w0, w1), copied to `packed` in order (gather) or back.
inline void copy_box(const PoolGeometry& g, const std::array<std::int64_t, 3>& dims,
                     std::size_t bytes, const Tile& t, bool outputs, const std::byte* from,
                     std::byte* to, bool gather) {
  const std::size_t a = 3 - g.spatial_rank;
  const AxisSpan& r = t.rows;
  const AxisSpan& c = t.cols;
  const std::int64_t a0 = outputs ? r.o0 : r.r0, a1 = outputs ? r.o1 : r.r1;
  const std::int64_t w0 = outputs ? c.o0 : c.r0, w1 = outputs ? c.o1 : c.r1;
  const std::int64_t mid = g.spatial_rank == 3 ? dims[1] : 1;
  const auto row = static_cast<std::size_t>(w1 - w0) * bytes;
  std::size_t k = 0;
  for (std::int64_t p = t.p0; p < t.p0 + t.planes; ++p)
    for (std::int64_t i = a0; i < a1; ++i)
      for (std::int64_t j = 0; j < mid; ++j, k += row) {
        const auto at =
            static_cast<std::size_t>(((p * dims[a] + i) * mid + j) * dims[2] + w0) * bytes;
        if (gather)
          std::memcpy(to + k, from + at, row);
        else
          std::memcpy(to + at, from + k, row);
      }
}

// Calls f(tile_in, tile_out, tile_indices, tile) for each tile, the threads of `par` a range of
// tiles each (f's calls then run serially): tile_in holds the tile's inputs, tile_out (and
// tile_indices, null when `indices` is) take its outputs, which go to `out` (and `indices`)
// after f returns.
template <class F>
void for_each_tile(const Tensor& in, Tensor& out, Tensor* indices, const PoolGeometry& g,
                   const Tiles& ts, const Parallel& par, F&& f) {
  const std::size_t a = 3 - g.spatial_rank;
  const std::int64_t mid_in = g.spatial_rank == 3 ? g.in[1] : 1;
  const std::int64_t mid_out = g.spatial_rank == 3 ? g.out[1] : 1;
  const std::int64_t n_out = ts.planes * ts.rows * mid_out * ts.cols;
  const auto count = [](std::int64_t n, std::int64_t k) { return (n + k - 1) / k; };
  const std::int64_t by_rows = count(g.out[a], ts.rows), by_cols = count(g.out[2], ts.cols);
  const auto bytes = [](const Tensor& v) { return bit_width(v.type) / 8; };
  par.for_range(count(g.planes(), ts.planes) * by_rows * by_cols, [&](std::int64_t b,
                                                                      std::int64_t e) {
    Tensor x = Tensor::zeros(in.type, {ts.planes * ts.rows_in * mid_in * ts.cols_in});
    Tensor y = Tensor::zeros(out.type, {n_out});
    Tensor yi = indices ? Tensor::zeros(indices->type, {n_out}) : Tensor{};
    for (std::int64_t k = b; k < e; ++k) {
      const std::int64_t p0 = k / (by_rows * by_cols) * ts.planes;
      const std::int64_t o0 = k / by_cols % by_rows * ts.rows, c0 = k % by_cols * ts.cols;
      Tile t{p0, std::min(ts.planes, g.planes() - p0),
             axis_span(g, a, o0, std::min(g.out[a], o0 + ts.rows)),
             axis_span(g, 2, c0, std::min(g.out[2], c0 + ts.cols)), g};
      t.g.batch = 1;
      t.g.channels = t.planes;
      t.g.index_axis = 0;
      narrow_axis(t.g, a, t.rows);
      narrow_axis(t.g, 2, t.cols);
      const std::vector<std::int64_t> in_shape = expected_shape(t.g, t.g.in);
      const std::vector<std::int64_t> out_shape = expected_shape(t.g, t.g.out);
      copy_box(g, g.in, bytes(in), t, false, in.buffer.data(), x.buffer.mutable_data(), true);
      const Tensor tile_in = Tensor::wrap(in.type, in_shape, x.buffer.data());
      Tensor tile_out = Tensor::wrap(out.type, out_shape, y.buffer.mutable_data());
      Tensor tile_indices =
          indices ? Tensor::wrap(yi.type, out_shape, yi.buffer.mutable_data()) : Tensor{};
      f(tile_in, tile_out, indices ? &tile_indices : nullptr, t);
      copy_box(g, g.out, bytes(out), t, true, y.buffer.data(), out.buffer.mutable_data(), false);
      if (indices)
        copy_box(g, g.out, bytes(yi), t, true, yi.buffer.data(), indices->buffer.mutable_data(),
                 false);
    }
  });
}

}  // namespace irrun::kernels::detail
