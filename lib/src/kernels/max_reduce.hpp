// Internal to the kernels: OpenVINO's two max reductions over one window, shared by the reference
// MaxPool kernel and the fast kernel's adaptive fix-up (max_pool_fast.cpp).
#pragma once

#include <cstdint>
#include <limits>

#include "window.hpp"

namespace irrun::kernels::detail {

// The maximum of one window and the flat position (in its plane) it came from.
template <class T>
struct Max {
  T value;
  std::int64_t position;
};

// OpenVINO's max_pool reference: start from lowest() at position 0 and take strictly greater
// taps only, so padding behaves as -inf, ties keep the first tap and NaN never wins.
template <class T>
Max<T> window_max(const T* plane, const Window& window) {
  Max<T> m{std::numeric_limits<T>::lowest(), 0};
  window.for_each_row([&](std::int64_t first, std::int64_t count, std::int64_t step) {
    for (std::int64_t t = 0; t < count; ++t) {
      const std::int64_t pos = first + t * step;
      if (plane[pos] > m.value) m = {plane[pos], pos};
    }
  });
  return m;
}

// OpenVINO's adaptive_max_pool reference: std::max_element along each row (a later element
// wins only if the current one compares less), rows kept unless strictly greater, starting
// from the bin's first element. It differs from window_max only where a row starts with NaN
// (the bin's first row: NaN is the result; a later row: that row is skipped) and where no
// element is greater than lowest() (the bin's first element, not lowest() at position 0).
template <class T>
Max<T> bin_max(const T* plane, const Window& window) {
  bool started = false;
  Max<T> m{};
  window.for_each_row([&](std::int64_t first, std::int64_t count, std::int64_t step) {
    if (!started) m = {plane[first], first}, started = true;
    Max<T> row{plane[first], first};
    for (std::int64_t t = 1; t < count; ++t) {
      const std::int64_t pos = first + t * step;
      if (row.value < plane[pos]) row = {plane[pos], pos};
    }
    if (row.value > m.value) m = row;
  });
  return m;
}

}  // namespace irrun::kernels::detail
