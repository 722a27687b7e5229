#include "irrun/kernels/max_pool.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <Eigen/Core>

#include "../fp_control.hpp"
#include "bands.hpp"
#include "irrun/error.hpp"
#include "max_indices.hpp"
#include "max_reduce.hpp"
#include "window.hpp"

namespace irrun::kernels {
namespace {

using detail::AxisWindows;
using detail::bin_max;
using detail::Max;
using detail::move_band_indices;
using detail::move_tile_indices;
using detail::untaken_to_plane_start;
using detail::Window;
using detail::window_max;

template <class T, class I>
void max_pool_typed(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                    const std::array<AxisWindows, 3>& axes, const Parallel& par) {
  const T* x = in.data<T>();
  T* y = values.mutable_data<T>();
  I* idx = indices ? indices->mutable_data<I>() : nullptr;
  // An empty input (a spatial dim of 0 under padding) has only empty windows: index 0.
  const std::int64_t range = std::max<std::int64_t>(g.index_range(), 1);
  detail::for_each_window(g, axes, par, [&](std::int64_t p, std::int64_t o, const Window& w) {
    const T* plane = x + p * g.in_plane_size();
    const Max<T> m = g.adaptive ? bin_max(plane, w) : window_max(plane, w);
    const std::int64_t out = p * g.out_plane_size() + o;
    y[out] = m.value;
    if (idx) idx[out] = static_cast<I>((p * g.in_plane_size() + m.position) % range);
  });
}

template <class T>
void max_pool_values(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                     const std::array<AxisWindows, 3>& axes, const Parallel& par) {
  if (indices && indices->type == ElementType::i32)
    return max_pool_typed<T, std::int32_t>(in, values, indices, g, axes, par);
  max_pool_typed<T, std::int64_t>(in, values, indices, g, axes, par);
}

}  // namespace

namespace {

void check_max_pool_arguments(const Tensor& in, const Tensor& values, const Tensor* indices,
                              const PoolGeometry& g) {
  const std::string kernel = "max_pool";
  detail::check_arguments(kernel, in, values, g);
  if (indices) {
    if (indices->type != ElementType::i32 && indices->type != ElementType::i64)
      throw std::invalid_argument("max_pool: indices are " + std::string(to_string(indices->type)) +
                                  ", not i32 or i64");
    detail::check_tensor(kernel, *indices, detail::expected_shape(g, g.out), "indices");
    if (g.planes() * g.out_plane_size() != 0 && !indices->buffer.writable())
      throw std::invalid_argument("max_pool: indices are not writable");
  }
}

// Whether a band's own positions (bands.hpp) fit i32 indices without wrapping: they count its
// input rows alone, at most (kBandRows - 1) strides and a window's extent (in double: no
// overflow on any geometry).
bool band_positions_fit_i32(const PoolGeometry& g) {
  const std::size_t a = 3 - g.spatial_rank;
  const double rows =
      std::min(static_cast<double>(g.in[a]),
               static_cast<double>(detail::kBandRows - 1) * static_cast<double>(g.stride[a]) +
                   static_cast<double>(g.kernel[a] - 1) * static_cast<double>(g.dilation[a]) + 1);
  return rows * static_cast<double>(g.in_plane_size() / g.in[a]) < 0x1p31;
}

}  // namespace

void max_pool(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
              const Parallel& par, Kernels kernels) {
  const irrun::detail::FpScope ieee;  // IEEE defaults (fp_control.hpp)
  check_max_pool_arguments(in, values, indices, g);
  if (const auto rows = detail::long_rows(g)) {
    const Tensor x = detail::rows_view(in, *rows, rows->in);
    Tensor y = detail::rows_view(values, *rows, rows->out);
    if (!indices) return max_pool(x, y, nullptr, *rows, par, kernels);
    Tensor i = detail::rows_view(*indices, *rows, rows->out);
    max_pool(x, y, &i, *rows, par, kernels);
    return untaken_to_plane_start(values, *indices, g);
  }
  if (const auto tiles = detail::tiles(g, in.type)) {
    detail::for_each_tile(in, values, indices, g, *tiles, par,
                          [&](const Tensor& x, Tensor& y, Tensor* i, const detail::Tile& t) {
                            max_pool(x, y, i, t.g, par, kernels);
                            if (i) move_tile_indices(y, *i, g, t);
                          });
    return;
  }
  if (detail::in_bands(g) && g.planes() * g.out_plane_size() > 0 &&
      (!indices || indices->type == ElementType::i64 || band_positions_fit_i32(g))) {
    const std::int64_t row_in = g.in_plane_size() / g.in[3 - g.spatial_rank];  // in[a] > 0
    const std::int64_t range = std::max<std::int64_t>(g.index_range(), 1);
    detail::for_each_band(
        in, values, g, par, [&](const Tensor& x, Tensor& y, const detail::Piece& pc) {
          if (!indices) return max_pool(x, y, nullptr, pc.g, par, kernels);
          Tensor band_indices = Tensor::wrap(
              indices->type, pc.out_shape,
              indices->buffer.mutable_data() + packed_byte_size(indices->type, pc.out_at));
          max_pool(x, y, &band_indices, pc.g, par, kernels);
          move_band_indices(y, band_indices, pc.p0 * g.in_plane_size(), pc.r0 * row_in, range);
        });
    return;
  }
  if (kernels != Kernels::reference &&
      (max_pool_fast(in, values, indices, g, par, isa_of(kernels)) ||
       max_pool_half(in, values, indices, g, par, isa_of(kernels))))
    return;
  max_pool_reference(in, values, indices, g, par);
}

void max_pool_reference(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                        const Parallel& par) {
  const irrun::detail::FpScope ieee;  // IEEE defaults (fp_control.hpp)
  check_max_pool_arguments(in, values, indices, g);
  if (g.planes() * g.out_plane_size() == 0) return;
  const auto axes = detail::axis_windows(g);

  switch (in.type) {
    case ElementType::f32:
      return max_pool_values<float>(in, values, indices, g, axes, par);
    case ElementType::f64:
      return max_pool_values<double>(in, values, indices, g, axes, par);
    case ElementType::f16:
      return max_pool_values<Eigen::half>(in, values, indices, g, axes, par);
    case ElementType::bf16:
      return max_pool_values<Eigen::bfloat16>(in, values, indices, g, axes, par);
    case ElementType::i8:
      return max_pool_values<std::int8_t>(in, values, indices, g, axes, par);
    case ElementType::u8:
      return max_pool_values<std::uint8_t>(in, values, indices, g, axes, par);
    case ElementType::i16:
      return max_pool_values<std::int16_t>(in, values, indices, g, axes, par);
    case ElementType::i32:
      return max_pool_values<std::int32_t>(in, values, indices, g, axes, par);
    case ElementType::i64:
      return max_pool_values<std::int64_t>(in, values, indices, g, axes, par);
    case ElementType::u16:
      return max_pool_values<std::uint16_t>(in, values, indices, g, axes, par);
    case ElementType::u32:
      return max_pool_values<std::uint32_t>(in, values, indices, g, axes, par);
    case ElementType::u64:
      return max_pool_values<std::uint64_t>(in, values, indices, g, axes, par);
    default:
      throw unsupported_error("max_pool: element type " + std::string(to_string(in.type)) +
                              " is not supported (f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, "
                              "u32 and u64 are)");
  }
}

}  // namespace irrun::kernels
