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

#include "../fp_control.hpp"
#include "bands.hpp"
#include "exact_sum.hpp"
#include "half_mean.hpp"
#include "half_pieces.hpp"
#include "int_average.hpp"
#include "irrun/error.hpp"
#include "irrun/float16.hpp"
#include "window.hpp"

namespace irrun::kernels {
namespace {

using detail::axis_windows;
using detail::AxisWindows;
using detail::check_arguments;
using detail::ExactIntSum;
using detail::for_each_window;
using detail::i128;
using detail::Window;

// Per element type: how elements load into the window sum, the sum and divisor types, and how
// the average is stored. Floats: exact doubles, summed exactly (exact_sum.hpp), the average
// rounded once on store.
struct FloatAverage {
  using Divisor = detail::Divisor;
  template <class ForEach>
  static double mean(const ForEach& for_each_value, Divisor n) {
    return detail::exact_mean(for_each_value, n);
  }
  static Divisor kernel_volume(const PoolGeometry& g) {
    return detail::volume_divisor(g.kernel.data());
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

// 16-bit floats: the exact average rounded once to their bits (half_mean.hpp), where a double
// in between could round it twice.
template <class F, class T>
struct HalfAverage : FloatAverage {
  template <class ForEach>
  static std::uint16_t mean(const ForEach& for_each_value, Divisor n) {
    return detail::exact_mean_as<F>(for_each_value, n);
  }
  static double load(T v) { return F::to_double(Eigen::numext::bit_cast<std::uint16_t>(v)); }
  static T store(std::uint16_t bits) { return Eigen::numext::bit_cast<T>(bits); }
};

template <>
struct Storage<Eigen::half> : HalfAverage<detail::F16, Eigen::half> {};

template <>
struct Storage<Eigen::bfloat16> : HalfAverage<detail::BF16, Eigen::bfloat16> {};

// Integers: an exact i128 sum and divisor (int_average.hpp); 8-bit types round the exact
// average to nearest (ties to even), wider ones truncate it toward zero.
template <class T>
requires std::is_integral_v<T>
struct Storage<T> {
  using Divisor = i128;
  template <class ForEach>
  static i128 mean(const ForEach& for_each_value, i128 n) {
    ExactIntSum<sizeof(T) == 1> sum;
    for_each_value([&](i128 x) { sum.add(x); });
    return sum.mean(n);
  }
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
  const T* x = in.data<T>();
  T* y = out.mutable_data<T>();
  // OpenVINO's whole-op flag: padding (and ceil overhang) counts as zeros in a full kernel.
  const bool full_kernel_divisor = !g.adaptive && g.pads_in_avg;
  const typename S::Divisor kernel_volume = full_kernel_divisor ? S::kernel_volume(g) : 1;

  for_each_window(g, axes, par, [&](std::int64_t p, std::int64_t o, const Window& window) {
    T& result = y[p * g.out_plane_size() + o];
    const std::int64_t taps = window.taps();
    if (taps == 0) {  // window entirely in padding or past the end
      result = S::store(0);
      return;
    }
    const T* plane = x + p * g.in_plane_size();
    const auto for_each_value = [&](const auto& f) { window.for_each_value(plane, S::load, f); };
    const typename S::Divisor divisor =
        full_kernel_divisor ? kernel_volume : static_cast<typename S::Divisor>(taps);
    result = S::store(S::mean(for_each_value, divisor));
  });
}

// Where the two f16/bf16 kernels' speeds cross (bench/HISTORY.md, rounds 58, 59 and 70): through
// f32 first for windows of 9 taps or more (16 in 1-D), from double sums first elsewhere (3-tap
// windows, 1-D ones of 5 or 9, whose many outputs at 16-bit midpoints cost the f32 route more;
// windows of 2^k taps, which it hands to double sums anyway). Each is the other's fallback.
// (3-D windows whose output rows fit one 16-float vector went from double sums first until the
// f32 kernel's narrow rows got faster: i3d's 2x7x7 head then took 0.58 of the time through f32,
// 3x3x3 windows on 7x7 and 14x14 planes 0.36-0.55, and only 1x3x3 "same" windows with the
// padding excluded, whose 4- and 6-tap edges hold many midpoints, 1.34x.)
bool half_through_f32_first(const PoolGeometry& g) {
  return detail::window_taps(g) >= (g.spatial_rank == 1 ? 16 : 9);
}

}  // namespace

void avg_pool_reference(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par) {
  const irrun::detail::FpScope ieee;  // IEEE defaults (fp_control.hpp)
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

void avg_pool(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par,
              Kernels kernels) {
  const irrun::detail::FpScope ieee;  // IEEE defaults (fp_control.hpp)
  check_arguments("avg_pool", in, out, g);
  if (g.planes() * g.out_plane_size() == 0) return;
  if (const auto rows = detail::long_rows(g)) {
    Tensor y = detail::rows_view(out, *rows, rows->out);
    return avg_pool(detail::rows_view(in, *rows, rows->in), y, *rows, par, kernels);
  }
  if (const auto tiles = detail::tiles(g, in.type)) {
    detail::for_each_tile(in, out, nullptr, g, *tiles, par,
                          [&](const Tensor& x, Tensor& y, Tensor*, const detail::Tile& t) {
                            avg_pool(x, y, t.g, par, kernels);
                          });
    return;
  }
  if (detail::in_bands(g)) {
    // Each output is its window's alone (the contract above): the bits are the whole call's.
    detail::for_each_band(in, out, g, par,
                          [&](const Tensor& x, Tensor& y, const detail::Piece& pc) {
                            avg_pool(x, y, pc.g, par, kernels);
                          });
    return;
  }
  const Isa isa = isa_of(kernels);
  const bool f32_first = half_through_f32_first(g);
  if (kernels != Kernels::reference && (avg_pool_fast(in, out, g, par, isa) ||
                                        (f32_first && avg_pool_half_f32(in, out, g, par, isa)) ||
                                        avg_pool_half(in, out, g, par, isa) ||
                                        (!f32_first && avg_pool_half_f32(in, out, g, par, isa))))
    return;
  avg_pool_reference(in, out, g, par);
}

}  // namespace irrun::kernels
