// Internal to the kernels: the one enumeration of pooling windows that the reference AvgPool and
// MaxPool kernels share. It turns a PoolGeometry into the in-bounds taps of every output window
// (padding and ceil overhang are never visited) and walks the outputs plane by plane, so each
// kernel only says how it reduces a window's rows. Also the argument checks both kernels make.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "irrun/parallel.hpp"
#include "irrun/pool_geometry.hpp"
#include "irrun/tensor.hpp"

namespace irrun::kernels::detail {

// The in-bounds taps of every window on one axis: output o reads inputs
// first[o] + t*step for t in [0, taps[o]). Computed once per axis so the inner loops never test
// bounds.
struct AxisWindows {
  std::vector<std::int64_t> first;
  std::vector<std::int64_t> taps;
  std::int64_t step = 1;
};

inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}  // a >= 0, b > 0

inline AxisWindows window_axis(std::int64_t in, std::int64_t out, std::int64_t kernel,
                               std::int64_t stride, std::int64_t dilation, std::int64_t pad_begin) {
  AxisWindows a;
  a.first.resize(static_cast<std::size_t>(out));
  a.taps.resize(static_cast<std::size_t>(out));
  a.step = dilation;
  if (dilation == 1) {
    // The same windows without branches or divisions, which the compiler vectorises: on bands
    // of long rows, a division per output was most of a MaxPool's time.
    for (std::int64_t o = 0; o < out; ++o) {
      const std::int64_t start = o * stride - pad_begin, first = std::max<std::int64_t>(start, 0);
      a.first[static_cast<std::size_t>(o)] = first;
      a.taps[static_cast<std::size_t>(o)] =
          std::max<std::int64_t>(0, std::min(start + kernel, in) - first);
    }
    return a;
  }
  for (std::int64_t o = 0; o < out; ++o) {
    // Tap j sits at start + j*dilation, j < kernel. The window is never clipped to the padded
    // extent (ceil mode may run past pads_end); only taps inside [0, in) are read.
    const std::int64_t start = o * stride - pad_begin;
    const std::int64_t lo = start < 0 ? ceil_div(-start, dilation) : 0;
    const std::int64_t hi = start < in ? std::min(kernel, ceil_div(in - start, dilation)) : 0;
    a.first[static_cast<std::size_t>(o)] = start + lo * dilation;
    a.taps[static_cast<std::size_t>(o)] = std::max<std::int64_t>(0, hi - lo);
  }
  return a;
}

inline AxisWindows adaptive_axis(std::int64_t in, std::int64_t out) {
  AxisWindows a;
  a.first.resize(static_cast<std::size_t>(out));
  a.taps.resize(static_cast<std::size_t>(out));
  for (std::int64_t o = 0; o < out; ++o) {
    const std::int64_t begin = adaptive_bin_start(o, in, out);
    a.first[static_cast<std::size_t>(o)] = begin;
    a.taps[static_cast<std::size_t>(o)] = adaptive_bin_end(o, in, out) - begin;
  }
  return a;
}

// The windows of axis a (0: D, 1: H, 2: W) of a geometry, and of all three.
inline AxisWindows axis_windows(const PoolGeometry& g, std::size_t a) {
  return g.adaptive ? adaptive_axis(g.in[a], g.out[a])
                    : window_axis(g.in[a], g.out[a], g.kernel[a], g.stride[a], g.dilation[a],
                                  g.pad_begin[a]);
}
inline std::array<AxisWindows, 3> axis_windows(const PoolGeometry& g) {
  return {axis_windows(g, 0), axis_windows(g, 1), axis_windows(g, 2)};
}

// One output's window: its in-bounds taps on each axis.
class Window {
 public:
  Window(const std::array<AxisWindows, 3>& axes, const PoolGeometry& g, std::size_t d,
         std::size_t h, std::size_t w)
      : axes_(axes), g_(g), d_(d), h_(h), w_(w) {}

  std::int64_t taps() const { return axes_[0].taps[d_] * axes_[1].taps[h_] * axes_[2].taps[w_]; }

  // Calls row(first, taps, step) for every row of in-bounds taps along W, D-major then H: the
  // row reads the plane's elements first + t*step, t in [0, taps), with first a flat index into
  // the input plane. Rows come in the order OpenVINO's reference kernels visit them.
  template <class Row>
  void for_each_row(Row&& row) const {
    const AxisWindows& wd = axes_[0];
    const AxisWindows& wh = axes_[1];
    const AxisWindows& ww = axes_[2];
    if (ww.taps[w_] == 0) return;
    for (std::int64_t td = 0; td < wd.taps[d_]; ++td) {
      const std::int64_t id = wd.first[d_] + td * wd.step;
      for (std::int64_t th = 0; th < wh.taps[h_]; ++th) {
        const std::int64_t ih = wh.first[h_] + th * wh.step;
        row((id * g_.in[1] + ih) * g_.in[2] + ww.first[w_], ww.taps[w_], ww.step);
      }
    }
  }

  // f(load(plane[i])) for the window's inputs i, in the same order.
  template <class T, class Load, class F>
  void for_each_value(const T* plane, const Load& load, F&& f) const {
    for_each_row([&](std::int64_t first, std::int64_t count, std::int64_t step) {
      for (std::int64_t t = 0; t < count; ++t) f(load(plane[first + t * step]));
    });
  }

 private:
  const std::array<AxisWindows, 3>& axes_;
  const PoolGeometry& g_;
  std::size_t d_, h_, w_;
};

// The input rows of every output row q = od * OH + oh in the order the reference visits them
// (D-major, then H): the plane offsets off[begin[q] .. begin[q + 1]). The MaxPool kernels walk
// windows by it, their taps along W from the axis's windows.
struct RowTable {
  std::vector<std::int64_t> begin{0}, off;
  const std::int64_t* rows(std::int64_t q) const {
    return off.data() + begin[static_cast<std::size_t>(q)];
  }
  std::int64_t count(std::int64_t q) const {
    return begin[static_cast<std::size_t>(q) + 1] - begin[static_cast<std::size_t>(q)];
  }
};

inline RowTable row_table(const PoolGeometry& g, const std::array<AxisWindows, 3>& axes) {
  RowTable rt;
  for (std::int64_t q = 0; q < g.out[0] * g.out[1]; ++q) {
    const auto od = static_cast<std::size_t>(q / g.out[1]);
    const auto oh = static_cast<std::size_t>(q % g.out[1]);
    for (std::int64_t td = 0; td < axes[0].taps[od]; ++td) {
      const std::int64_t id = axes[0].first[od] + td * axes[0].step;
      for (std::int64_t th = 0; th < axes[1].taps[oh]; ++th)
        rt.off.push_back((id * g.in[1] + axes[1].first[oh] + th * axes[1].step) * g.in[2]);
    }
    rt.begin.push_back(static_cast<std::int64_t>(rt.off.size()));
  }
  return rt;
}

// Calls output(plane, o, window) for every output o (a flat index into the output plane) of
// every plane. Planes are split across `par`; each output is visited exactly once, so a kernel
// that computes each output on its own is deterministic for any thread count.
template <class Output>
void for_each_window(const PoolGeometry& g, const std::array<AxisWindows, 3>& axes,
                     const Parallel& par, Output&& output) {
  par.for_range(g.planes(), [&](std::int64_t plane_begin, std::int64_t plane_end) {
    for (std::int64_t p = plane_begin; p < plane_end; ++p) {
      std::int64_t o = 0;
      for (std::size_t d = 0; d < static_cast<std::size_t>(g.out[0]); ++d) {
        for (std::size_t h = 0; h < static_cast<std::size_t>(g.out[1]); ++h) {
          for (std::size_t w = 0; w < static_cast<std::size_t>(g.out[2]); ++w) {
            output(p, o++, Window(axes, g, d, h, w));
          }
        }
      }
    }
  });
}

// --- argument checks ---------------------------------------------------------------------------

inline std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// [N, C, spatial...] of the geometry's input (g.in) or output (g.out) in the model's rank.
inline std::vector<std::int64_t> expected_shape(const PoolGeometry& g,
                                                const std::array<std::int64_t, 3>& spatial) {
  std::vector<std::int64_t> shape{g.batch, g.channels};
  for (std::size_t a = 3 - g.spatial_rank; a < 3; ++a) shape.push_back(spatial[a]);
  return shape;
}

// `kernel` names the caller in messages ("avg_pool").
inline void check_geometry(const std::string& kernel, const PoolGeometry& g) {
  auto fail = [&](const std::string& what) {
    throw std::invalid_argument(kernel + ": invalid geometry: " + what);
  };
  if (g.spatial_rank < 1 || g.spatial_rank > 3) fail("spatial rank must be 1..3");
  if (g.batch < 0 || g.channels < 0) fail("negative batch or channels");
  // An empty output computes no bin, so its bins may be empty.
  const bool empty_output =
      g.batch == 0 || g.channels == 0 || std::find(g.out.begin(), g.out.end(), 0) != g.out.end();
  for (std::size_t a = 0; a < 3; ++a) {
    if (g.in[a] < 0 || g.out[a] < 0) fail("negative spatial size");
    if (g.adaptive) {
      if (g.in[a] == 0 && !empty_output) fail("adaptive pooling of an empty axis");
    } else if (g.kernel[a] < 1 || g.stride[a] < 1 || g.dilation[a] < 1 || g.pad_begin[a] < 0 ||
               g.pad_end[a] < 0) {
      fail("kernel, stride and dilation must be >= 1 and pads >= 0");
    }
  }
}

inline void check_tensor(const std::string& kernel, const Tensor& t,
                         const std::vector<std::int64_t>& shape, const char* role) {
  if (t.shape != shape) {
    throw std::invalid_argument(kernel + ": " + role + " shape " + shape_text(t.shape) +
                                " does not match the geometry " + shape_text(shape));
  }
  if (t.buffer.size() < t.byte_size()) {
    throw std::invalid_argument(kernel + ": " + role + " buffer is too small");
  }
}

// The input matches g.in and the output g.out, both of one element type, the output writable.
inline void check_arguments(const std::string& kernel, const Tensor& in, const Tensor& out,
                            const PoolGeometry& g) {
  if (in.type != out.type) {
    throw std::invalid_argument(kernel + ": input is " + std::string(to_string(in.type)) +
                                " but output is " + std::string(to_string(out.type)));
  }
  check_geometry(kernel, g);
  check_tensor(kernel, in, expected_shape(g, g.in), "input");
  check_tensor(kernel, out, expected_shape(g, g.out), "output");
  if (g.planes() * g.out_plane_size() != 0 && !out.buffer.writable())
    throw std::invalid_argument(kernel + ": output is not writable");
}

}  // namespace irrun::kernels::detail
