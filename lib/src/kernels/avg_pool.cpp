#include "irrun/kernels/avg_pool.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <Eigen/Core>
#include <unsupported/Eigen/CXX11/Tensor>

#include "compensated_sum.hpp"
#include "int_average.hpp"
#include "irrun/error.hpp"
#include "irrun/float16.hpp"

namespace irrun::kernels {
namespace {

// The in-bounds taps of every window on one axis: output o reads inputs
// first[o] + t*step for t in [0, taps[o]). Computed once per axis so the inner loops never test
// bounds.
struct AxisWindows {
  std::vector<std::int64_t> first;
  std::vector<std::int64_t> taps;
  std::int64_t step = 1;
};

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}  // a >= 0, b > 0

AxisWindows window_axis(std::int64_t in, std::int64_t out, std::int64_t kernel, std::int64_t stride,
                        std::int64_t dilation, std::int64_t pad_begin) {
  AxisWindows a;
  a.first.resize(static_cast<std::size_t>(out));
  a.taps.resize(static_cast<std::size_t>(out));
  a.step = dilation;
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

AxisWindows adaptive_axis(std::int64_t in, std::int64_t out) {
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

using detail::CompensatedSum;
using detail::ExactIntSum;
using detail::i128;

// Per element type: how elements load into the window sum, the sum and divisor types, and how
// the average is stored. Floats: exact doubles into a compensated sum, rounded once on store.
struct FloatAverage {
  using Sum = CompensatedSum;
  using Divisor = double;
  static double kernel_volume(const PoolGeometry& g) {
    return static_cast<double>(g.kernel[0]) * static_cast<double>(g.kernel[1]) *
           static_cast<double>(g.kernel[2]);
  }
};

template <class T>
struct Storage;

template <>
struct Storage<float> : FloatAverage {
  static double load(float v) { return v; }
  static float store(double v) { return static_cast<float>(v); }
};

template <>
struct Storage<double> : FloatAverage {
  static double load(double v) { return v; }
  static double store(double v) { return v; }
};

template <>
struct Storage<Eigen::half> : FloatAverage {
  static double load(Eigen::half v) {
    return f16_bits_to_double(Eigen::numext::bit_cast<std::uint16_t>(v));
  }
  static Eigen::half store(double v) {
    return Eigen::numext::bit_cast<Eigen::half>(f16_bits_from_double(v));
  }
};

template <>
struct Storage<Eigen::bfloat16> : FloatAverage {
  static double load(Eigen::bfloat16 v) {
    return bf16_bits_to_double(Eigen::numext::bit_cast<std::uint16_t>(v));
  }
  static Eigen::bfloat16 store(double v) {
    return Eigen::numext::bit_cast<Eigen::bfloat16>(bf16_bits_from_double(v));
  }
};

// Integers: an exact i128 sum and divisor (int_average.hpp); 8-bit types round the exact
// average to nearest (ties to even), wider ones truncate it toward zero.
template <class T>
requires std::is_integral_v<T>
struct Storage<T> {
  using Sum = ExactIntSum<sizeof(T) == 1>;
  using Divisor = i128;
  static i128 kernel_volume(const PoolGeometry& g) {
    return detail::exact_kernel_volume(g.kernel.data(), 3);
  }
  static i128 load(T v) { return v; }
  static T store(i128 v) { return static_cast<T>(v); }
};

template <class T>
void avg_pool_typed(const Tensor& in, Tensor& out, const PoolGeometry& g,
                    const std::array<AxisWindows, 3>& axes, const Parallel& par) {
  using S = Storage<T>;
  using Map = Eigen::TensorMap<Eigen::Tensor<T, 4, Eigen::RowMajor, Eigen::Index>>;
  using ConstMap = Eigen::TensorMap<const Eigen::Tensor<T, 4, Eigen::RowMajor, Eigen::Index>>;
  const ConstMap x(in.data<T>(), g.planes(), g.in[0], g.in[1], g.in[2]);
  Map y(out.mutable_data<T>(), g.planes(), g.out[0], g.out[1], g.out[2]);

  const AxisWindows& wd = axes[0];
  const AxisWindows& wh = axes[1];
  const AxisWindows& ww = axes[2];
  // OpenVINO's whole-op flag: padding (and ceil overhang) counts as zeros in a full kernel.
  const bool full_kernel_divisor = !g.adaptive && g.pads_in_avg;
  const typename S::Divisor kernel_volume = full_kernel_divisor ? S::kernel_volume(g) : 1;

  par.for_range(g.planes(), [&](std::int64_t plane_begin, std::int64_t plane_end) {
    for (std::int64_t p = plane_begin; p < plane_end; ++p) {
      for (std::int64_t od = 0; od < g.out[0]; ++od) {
        const auto d = static_cast<std::size_t>(od);
        for (std::int64_t oh = 0; oh < g.out[1]; ++oh) {
          const auto h = static_cast<std::size_t>(oh);
          for (std::int64_t ow = 0; ow < g.out[2]; ++ow) {
            const auto w = static_cast<std::size_t>(ow);
            const std::int64_t taps = wd.taps[d] * wh.taps[h] * ww.taps[w];
            if (taps == 0) {  // window entirely in padding or past the end
              y(p, od, oh, ow) = S::store(0);
              continue;
            }
            typename S::Sum sum;
            for (std::int64_t td = 0; td < wd.taps[d]; ++td) {
              const std::int64_t id = wd.first[d] + td * wd.step;
              for (std::int64_t th = 0; th < wh.taps[h]; ++th) {
                const std::int64_t ih = wh.first[h] + th * wh.step;
                for (std::int64_t tw = 0; tw < ww.taps[w]; ++tw) {
                  sum.add(S::load(x(p, id, ih, ww.first[w] + tw * ww.step)));
                }
              }
            }
            const typename S::Divisor divisor =
                full_kernel_divisor ? kernel_volume : static_cast<typename S::Divisor>(taps);
            y(p, od, oh, ow) = S::store(sum.mean(divisor));
          }
        }
      }
    }
  });
}

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::vector<std::int64_t> expected_shape(const PoolGeometry& g,
                                         const std::array<std::int64_t, 3>& spatial) {
  std::vector<std::int64_t> shape{g.batch, g.channels};
  for (std::size_t a = 3 - g.spatial_rank; a < 3; ++a) shape.push_back(spatial[a]);
  return shape;
}

void check_geometry(const PoolGeometry& g) {
  auto fail = [](const std::string& what) {
    throw std::invalid_argument("avg_pool: invalid geometry: " + what);
  };
  if (g.spatial_rank < 1 || g.spatial_rank > 3) fail("spatial rank must be 1..3");
  if (g.batch < 0 || g.channels < 0) fail("negative batch or channels");
  for (std::size_t a = 0; a < 3; ++a) {
    if (g.in[a] < 0 || g.out[a] < 0) fail("negative spatial size");
    if (g.adaptive) {
      if (g.out[a] > 0 && g.in[a] == 0) fail("adaptive pooling of an empty axis");
    } else if (g.kernel[a] < 1 || g.stride[a] < 1 || g.dilation[a] < 1 || g.pad_begin[a] < 0 ||
               g.pad_end[a] < 0) {
      fail("kernel, stride and dilation must be >= 1 and pads >= 0");
    }
  }
}

void check_tensor(const Tensor& t, const std::vector<std::int64_t>& shape, const char* role) {
  if (t.shape != shape) {
    throw std::invalid_argument(std::string("avg_pool: ") + role + " shape " + shape_text(t.shape) +
                                " does not match the geometry " + shape_text(shape));
  }
  if (t.buffer.size() < t.byte_size()) {
    throw std::invalid_argument(std::string("avg_pool: ") + role + " buffer is too small");
  }
}

void check_arguments(const Tensor& in, const Tensor& out, const PoolGeometry& g) {
  if (in.type != out.type) {
    throw std::invalid_argument("avg_pool: input is " + std::string(to_string(in.type)) +
                                " but output is " + std::string(to_string(out.type)));
  }
  check_geometry(g);
  check_tensor(in, expected_shape(g, g.in), "input");
  check_tensor(out, expected_shape(g, g.out), "output");
  if (g.planes() * g.out_plane_size() != 0 && !out.buffer.writable())
    throw std::invalid_argument("avg_pool: output is not writable");
}

}  // namespace

void avg_pool_reference(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par) {
  check_arguments(in, out, g);
  if (g.planes() * g.out_plane_size() == 0) return;

  std::array<AxisWindows, 3> axes;
  for (std::size_t a = 0; a < 3; ++a) {
    axes[a] = g.adaptive ? adaptive_axis(g.in[a], g.out[a])
                         : window_axis(g.in[a], g.out[a], g.kernel[a], g.stride[a], g.dilation[a],
                                       g.pad_begin[a]);
  }

  switch (in.type) {
    case ElementType::f32:
      return avg_pool_typed<float>(in, out, g, axes, par);
    case ElementType::f64:
      return avg_pool_typed<double>(in, out, g, axes, par);
    case ElementType::f16:
      return avg_pool_typed<Eigen::half>(in, out, g, axes, par);
    case ElementType::bf16:
      return avg_pool_typed<Eigen::bfloat16>(in, out, g, axes, par);
    case ElementType::i8:
      return avg_pool_typed<std::int8_t>(in, out, g, axes, par);
    case ElementType::i16:
      return avg_pool_typed<std::int16_t>(in, out, g, axes, par);
    case ElementType::i32:
      return avg_pool_typed<std::int32_t>(in, out, g, axes, par);
    case ElementType::i64:
      return avg_pool_typed<std::int64_t>(in, out, g, axes, par);
    case ElementType::u8:
      return avg_pool_typed<std::uint8_t>(in, out, g, axes, par);
    case ElementType::u16:
      return avg_pool_typed<std::uint16_t>(in, out, g, axes, par);
    case ElementType::u32:
      return avg_pool_typed<std::uint32_t>(in, out, g, axes, par);
    case ElementType::u64:
      return avg_pool_typed<std::uint64_t>(in, out, g, axes, par);
    default:
      throw unsupported_error("avg_pool: element type " + std::string(to_string(in.type)) +
                              " is not supported (f32, f64, f16, bf16, i8, i16, i32, i64, u8, "
                              "u16, u32 and u64 are)");
  }
}

void avg_pool(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par) {
  check_arguments(in, out, g);
  if (g.planes() * g.out_plane_size() == 0) return;
  if (avg_pool_fast(in, out, g, par)) return;
  avg_pool_reference(in, out, g, par);
}

}  // namespace irrun::kernels
