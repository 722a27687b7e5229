// Test-only oracle for AvgPool / AdaptiveAvgPool, written straight from
// docs/openvino-semantics.md sections 3 and 4 and sharing no code with the kernel: every tap of
// every window is visited and bounds-tested, adaptive bins are recomputed here.
//
// It accumulates in long double (>= 64 significand bits) and divides once, so its result is the
// exact average rounded to double whenever the window sums fit 64 bits exactly; the randomized
// tests choose their inputs so that they do. That is what lets tests judge a 1-ulp contract.
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

// input: planes x in[0] x in[1] x in[2] row-major; returns planes x out[0] x out[1] x out[2].
inline std::vector<double> naive_avg_pool(const PoolGeometry& g, const std::vector<double>& input) {
  const std::int64_t ID = g.in[0], IH = g.in[1], IW = g.in[2];
  const std::int64_t OD = g.out[0], OH = g.out[1], OW = g.out[2];
  std::vector<double> result;

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

          long double sum = 0;
          std::int64_t inside = 0;
          for (std::int64_t d : pos[0]) {
            for (std::int64_t h : pos[1]) {
              for (std::int64_t w : pos[2]) {
                if (d < 0 || d >= ID || h < 0 || h >= IH || w < 0 || w >= IW) continue;
                sum += input[static_cast<std::size_t>(((p * ID + d) * IH + h) * IW + w)];
                ++inside;
              }
            }
          }

          long double divisor = static_cast<long double>(inside);
          if (!g.adaptive && g.pads_in_avg) {
            divisor = static_cast<long double>(g.kernel[0] * g.kernel[1] * g.kernel[2]);
          }
          result.push_back(inside == 0 ? 0.0 : static_cast<double>(sum / divisor));
        }
      }
    }
  }
  return result;
}

}  // namespace irrun::testing
