// f16 and bf16 tensors through the f32 fast kernels, a piece at a time (max_pool_half.cpp,
// avg_pool_half_f32.cpp), so that the f32 copies stay within a budget whatever the tensor: planes
// that fit go several at a time, whole; a larger plane goes a band of output rows at a time along
// the model's first spatial axis, with the input rows its windows span, as a tensor of its own.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "irrun/pool_geometry.hpp"
#include "scratch.hpp"
#include "window.hpp"

namespace irrun::kernels::detail {

// The shape of the pieces. Scratch bytes: 4 an input and `out_bytes` an output.
struct Pieces {
  bool whole;
  std::int64_t planes;     // planes of a piece
  std::int64_t rows;       // output rows of a piece along the first spatial axis
  std::int64_t rows_read;  // input rows a piece reads there, at most
};

// The taps of a window of g: its kernel clipped to the input, or an adaptive bin's ceil(in / out)
// (a bin may read one more), on each axis.
inline double window_taps(const PoolGeometry& g) {
  double taps = 1;
  for (std::size_t a = 0; a < 3; ++a)
    taps *= static_cast<double>(g.adaptive
                                    ? (g.in[a] + g.out[a] - 1) / std::max<std::int64_t>(1, g.out[a])
                                    : std::min(g.kernel[a], g.in[a]));
  return taps;
}

// Pieces within `budget` bytes of scratch; none when a band of one output row would pass 32 MiB
// (windows over thousands of rows of a wide plane), or when the pieces would widen more than
// 2^20 values and 8 per reference tap (windows dilated or strided far along the band axis).
std::optional<Pieces> plan_pieces(const PoolGeometry& g, std::int64_t out_bytes,
                                  std::int64_t budget);

// A plan's f32 copies of a piece, in a slot's kept scratch (scratch.hpp): xs its inputs, ys its
// outputs, and `extra` one E an output (none without `with_extra`).
template <class E>
class PieceCopies {
 public:
  PieceCopies(Slot slot, const PoolGeometry& g, const Pieces& p, bool with_extra)
      : n_in_(static_cast<std::size_t>(p.planes * p.rows_read * row(g.in, g))),
        n_out_(static_cast<std::size_t>(p.planes * p.rows * row(g.out, g))),
        scratch_(slot, Scratch::part_bytes<float>(n_in_) + Scratch::part_bytes<float>(n_out_) +
                           Scratch::part_bytes<E>(with_extra ? n_out_ : 0)),
        xs(scratch_.take<float>(n_in_)),
        ys(scratch_.take<float>(n_out_)),
        extra(scratch_.take<E>(with_extra ? n_out_ : 0)) {}

 private:
  // The elements of a row along the band axis.
  static std::int64_t row(const std::array<std::int64_t, 3>& dims, const PoolGeometry& g) {
    const std::size_t a = 3 - g.spatial_rank;
    return dims[0] * dims[1] * dims[2] / dims[a];
  }
  std::size_t n_in_, n_out_;
  Scratch scratch_;

 public:
  float* const xs;
  float* const ys;
  E* const extra;
};

// One piece: planes [p0, p0 + planes), output rows [o0, o1) and input rows [r0, r1) along the
// band axis (none when every window is padding), and its geometry as a tensor of its own: its
// windows where they are in the whole plane (pad_begin from the band's first row; kernels clip
// windows at the input's end), indices counted over all of it.
struct Piece {
  std::int64_t p0, planes, o0, o1, r0, r1;
  PoolGeometry g;
  std::vector<std::int64_t> in_shape, out_shape;
  std::int64_t in_at, out_at;  // its first input and output in the whole tensor
  std::int64_t n_in, n_out;    // its inputs and outputs
};

// Output rows [o0, o1) along axis a of g, and the input rows [r0, r1) their windows read (none
// when every window is padding); a geometry of them alone keeps its windows where they are in the
// whole axis: pad_begin from r0 (at least 0: a band past the input's end, under a pads_end of more
// than a band, has no rows and no taps whatever its pad), no pad_end (kernels clip windows at the
// input's end).
struct AxisSpan {
  std::int64_t o0, o1, r0, r1, pad_begin;
};
inline AxisSpan axis_span(const PoolGeometry& g, std::size_t a, std::int64_t o0, std::int64_t o1) {
  const std::int64_t lo = o0 * g.stride[a] - g.pad_begin[a];
  const std::int64_t hi =
      (o1 - 1) * g.stride[a] - g.pad_begin[a] + (g.kernel[a] - 1) * g.dilation[a] + 1;
  const std::int64_t r0 = std::clamp<std::int64_t>(lo, 0, g.in[a]);
  return {o0, o1, r0, std::clamp<std::int64_t>(hi, r0, g.in[a]),
          std::max<std::int64_t>(0, r0 - lo)};
}
inline void narrow_axis(PoolGeometry& g, std::size_t a, const AxisSpan& s) {
  g.in[a] = s.r1 - s.r0;
  g.out[a] = s.o1 - s.o0;
  g.pad_begin[a] = s.pad_begin;
  g.pad_end[a] = 0;
}

// How many pieces there are, and piece k of them (planes first, then rows).
inline std::int64_t piece_count(const PoolGeometry& g, const Pieces& p) {
  const std::size_t a = 3 - g.spatial_rank;
  return (g.planes() + p.planes - 1) / p.planes * ((g.out[a] + p.rows - 1) / p.rows);
}
inline Piece piece_at(const PoolGeometry& g, const Pieces& p, std::int64_t k) {
  const std::size_t a = 3 - g.spatial_rank;
  const std::int64_t n_in = g.in_plane_size(), n_out = g.out_plane_size();
  const std::int64_t row_in = n_in / g.in[a], row_out = n_out / g.out[a];
  const std::int64_t bands = (g.out[a] + p.rows - 1) / p.rows;
  const std::int64_t p0 = k / bands * p.planes, o0 = k % bands * p.rows;
  const std::int64_t c = std::min(p.planes, g.planes() - p0);
  AxisSpan s = axis_span(g, a, o0, std::min(g.out[a], o0 + p.rows));
  // Whole planes keep all their rows, so that they stay one after the other.
  if (p.whole) s = {s.o0, s.o1, 0, g.in[a], g.pad_begin[a]};
  Piece piece{p0,
              c,
              s.o0,
              s.o1,
              s.r0,
              s.r1,
              g,
              {},
              {},
              p0 * n_in + s.r0 * row_in,
              p0 * n_out + s.o0 * row_out,
              c * (s.r1 - s.r0) * row_in,
              c * (s.o1 - s.o0) * row_out};
  PoolGeometry& gc = piece.g;
  gc.batch = 1;
  gc.channels = c;
  gc.index_axis = 0;
  narrow_axis(gc, a, s);
  piece.in_shape = expected_shape(gc, gc.in);
  piece.out_shape = expected_shape(gc, gc.out);
  return piece;
}

// f(piece) for the pieces in order.
template <class F>
void for_each_piece(const PoolGeometry& g, const Pieces& p, F&& f) {
  for (std::int64_t k = 0, n = piece_count(g, p); k < n; ++k) f(piece_at(g, p, k));
}

}  // namespace irrun::kernels::detail
