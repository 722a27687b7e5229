// Test-only oracle for AvgPool / AdaptiveAvgPool, written straight from
// docs/openvino-semantics.md sections 3, 4 and 7 and sharing no code with the kernel: every tap of
// every window is visited and bounds-tested, adaptive bins are recomputed here.
//
// Floats: it accumulates in long double (>= 64 significand bits) and divides once, so its result
// is the exact average rounded to double whenever the window sums fit 64 bits exactly; the
// randomized tests choose their inputs so that they do. That is what lets tests judge a 1-ulp
// contract.
// Integers: exact __int128 sums and divisors, and the section 7 rule (8-bit types: nearest, ties
// to even; wider: toward zero) computed with floor division, unlike the kernel.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "irrun/pool_geometry.hpp"

namespace irrun::testing {

static_assert(std::numeric_limits<long double>::digits >= 64,
              "the oracle needs a 64-bit significand to stay exact");

__extension__ typedef __int128 i128;

// Calls f(taps, divisor) for every output in row-major order (planes x out[0] x out[1] x out[2]):
// `taps` are the flat input indices of the window's in-bounds taps, `divisor` is prod(kernel)
// when padding counts, else the number of taps.
template <class F>
void for_each_window(const PoolGeometry& g, F&& f) {
  const std::int64_t ID = g.in[0], IH = g.in[1], IW = g.in[2];
  const std::int64_t OD = g.out[0], OH = g.out[1], OW = g.out[2];
  std::vector<std::size_t> taps;
  for (std::int64_t p = 0; p < g.batch * g.channels; ++p) {
    for (std::int64_t od = 0; od < OD; ++od) {
      for (std::int64_t oh = 0; oh < OH; ++oh) {
        for (std::int64_t ow = 0; ow < OW; ++ow) {
          const std::int64_t o[3] = {od, oh, ow};
          const std::int64_t size[3] = {ID, IH, IW};
          const std::int64_t osize[3] = {OD, OH, OW};
          // Candidate input positions per axis; out-of-range ones are padding.
          std::vector<std::int64_t> pos[3];
          for (int a = 0; a < 3; ++a) {
            if (g.adaptive) {
              // start = floor(i*I/O), end = ceil((i+1)*I/O), as OpenVINO's adaptive_pool.
              const std::int64_t start = o[a] * size[a] / osize[a];
              const auto end = static_cast<std::int64_t>(
                  std::ceil(static_cast<double>((o[a] + 1) * size[a]) / osize[a]));
              for (std::int64_t i = start; i < end; ++i) pos[a].push_back(i);
            } else {
              for (std::int64_t j = 0; j < g.kernel[a]; ++j) {
                pos[a].push_back(o[a] * g.stride[a] - g.pad_begin[a] + j * g.dilation[a]);
              }
            }
          }

          taps.clear();
          for (std::int64_t d : pos[0]) {
            for (std::int64_t h : pos[1]) {
              for (std::int64_t w : pos[2]) {
                if (d < 0 || d >= ID || h < 0 || h >= IH || w < 0 || w >= IW) continue;
                taps.push_back(static_cast<std::size_t>(((p * ID + d) * IH + h) * IW + w));
              }
            }
          }
          i128 divisor = static_cast<i128>(taps.size());
          if (!g.adaptive && g.pads_in_avg)
            divisor = static_cast<i128>(g.kernel[0]) * g.kernel[1] * g.kernel[2];
          f(taps, divisor);
        }
      }
    }
  }
}

// input: planes x in[0] x in[1] x in[2] row-major; returns planes x out[0] x out[1] x out[2].
inline std::vector<double> naive_avg_pool(const PoolGeometry& g, const std::vector<double>& input) {
  std::vector<double> result;
  for_each_window(g, [&](const std::vector<std::size_t>& taps, i128 divisor) {
    long double sum = 0;
    for (auto i : taps) sum += input[i];
    result.push_back(taps.empty() ? 0.0
                                  : static_cast<double>(sum / static_cast<long double>(divisor)));
  });
  return result;
}

// floor(a / b) for b > 0.
inline i128 floor_div(i128 a, i128 b) {
  const i128 q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

// The integer oracle: `nearest_even` for i8/u8, else truncation toward zero.
inline std::vector<i128> naive_avg_pool_int(const PoolGeometry& g, const std::vector<i128>& input,
                                            bool nearest_even) {
  std::vector<i128> result;
  for_each_window(g, [&](const std::vector<std::size_t>& taps, i128 n) {
    i128 s = 0;
    for (auto i : taps) s += input[i];
    if (taps.empty()) {
      result.push_back(0);
    } else if (nearest_even) {
      // Round half up: floor((2s + n) / 2n); an exact half (2s + n divisible by 2n) that went up
      // to an odd value goes back down to the even one.
      i128 q = floor_div(2 * s + n, 2 * n);
      if ((2 * s + n) % (2 * n) == 0 && q % 2 != 0) --q;
      result.push_back(q);
    } else {
      const i128 q = floor_div(s, n);
      result.push_back(s < 0 && s % n != 0 ? q + 1 : q);
    }
  });
  return result;
}

}  // namespace irrun::testing
