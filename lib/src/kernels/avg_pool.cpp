#include "irrun/kernels/avg_pool.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <Eigen/Core>

#include "compensated_sum.hpp"
#include "irrun/error.hpp"
#include "irrun/float16.hpp"
#include "window.hpp"

namespace irrun::kernels {
namespace {

using detail::axis_windows;
using detail::AxisWindows;
using detail::check_arguments;
using detail::CompensatedSum;
using detail::for_each_window;
using detail::Window;

// Loads an element as an exact double and rounds a double result to the element type once.
template <class T>
struct Storage;

template <>
struct Storage<float> {
  static double load(float v) { return v; }
  static float store(double v) { return static_cast<float>(v); }
};

template <>
struct Storage<double> {
  static double load(double v) { return v; }
  static double store(double v) { return v; }
};

template <>
struct Storage<Eigen::half> {
  static double load(Eigen::half v) {
    return f16_bits_to_double(Eigen::numext::bit_cast<std::uint16_t>(v));
  }
  static Eigen::half store(double v) {
    return Eigen::numext::bit_cast<Eigen::half>(f16_bits_from_double(v));
  }
};

template <>
struct Storage<Eigen::bfloat16> {
  static double load(Eigen::bfloat16 v) {
    return bf16_bits_to_double(Eigen::numext::bit_cast<std::uint16_t>(v));
  }
  static Eigen::bfloat16 store(double v) {
    return Eigen::numext::bit_cast<Eigen::bfloat16>(bf16_bits_from_double(v));
  }
};

template <class T>
void avg_pool_typed(const Tensor& in, Tensor& out, const PoolGeometry& g,
                    const std::array<AxisWindows, 3>& axes, const Parallel& par) {
  using S = Storage<T>;
  const T* x = in.data<T>();
  T* y = out.mutable_data<T>();
  // OpenVINO's whole-op flag: padding (and ceil overhang) counts as zeros in a full kernel.
  const bool full_kernel_divisor = !g.adaptive && g.pads_in_avg;
  const double kernel_volume = static_cast<double>(g.kernel[0]) * static_cast<double>(g.kernel[1]) *
                               static_cast<double>(g.kernel[2]);

  for_each_window(g, axes, par, [&](std::int64_t p, std::int64_t o, const Window& window) {
    T& result = y[p * g.out_plane_size() + o];
    const std::int64_t taps = window.taps();
    if (taps == 0) {  // window entirely in padding or past the end
      result = S::store(0.0);
      return;
    }
    const T* plane = x + p * g.in_plane_size();
    CompensatedSum sum;
    window.for_each_row([&](std::int64_t first, std::int64_t count, std::int64_t step) {
      for (std::int64_t t = 0; t < count; ++t) sum.add(S::load(plane[first + t * step]));
    });
    const double divisor = full_kernel_divisor ? kernel_volume : static_cast<double>(taps);
    result = S::store(sum.mean(divisor));
  });
}

}  // namespace

void avg_pool_reference(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par) {
  check_arguments("avg_pool", in, out, g);
  if (g.planes() * g.out_plane_size() == 0) return;
  const auto axes = axis_windows(g);

  switch (in.type) {
    case ElementType::f32:
      return avg_pool_typed<float>(in, out, g, axes, par);
    case ElementType::f64:
      return avg_pool_typed<double>(in, out, g, axes, par);
    case ElementType::f16:
      return avg_pool_typed<Eigen::half>(in, out, g, axes, par);
    case ElementType::bf16:
      return avg_pool_typed<Eigen::bfloat16>(in, out, g, axes, par);
    default:
      throw unsupported_error("avg_pool: element type " + std::string(to_string(in.type)) +
                              " is not supported (f32, f64, f16 and bf16 are)");
  }
}

void avg_pool(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par) {
  check_arguments("avg_pool", in, out, g);
  if (g.planes() * g.out_plane_size() == 0) return;
  if (avg_pool_fast(in, out, g, par)) return;
  avg_pool_reference(in, out, g, par);
}

}  // namespace irrun::kernels
