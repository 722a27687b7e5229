// Pool geometries for the kernel tests: OpenVINO's output-size rule for window pools, adaptive
// ones, a random generator over ranks, kernels, strides, dilations, pads and both rounding
// rules, and a one-line description for failure messages.
#pragma once

#include <array>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "irrun/pool_geometry.hpp"
#include "support/split_mix.hpp"

namespace irrun::testing {

inline std::string describe(const PoolGeometry& g) {
  std::ostringstream os;
  auto l = [](const std::array<std::int64_t, 3>& a) {
    std::ostringstream t;
    t << '[' << a[0] << ',' << a[1] << ',' << a[2] << ']';
    return t.str();
  };
  os << (g.adaptive ? "adaptive" : "window") << " N=" << g.batch << " C=" << g.channels
     << " in=" << l(g.in) << " out=" << l(g.out);
  if (!g.adaptive)
    os << " k=" << l(g.kernel) << " s=" << l(g.stride) << " d=" << l(g.dilation)
       << " pb=" << l(g.pad_begin) << " pe=" << l(g.pad_end) << " pads_in_avg=" << g.pads_in_avg;
  return os.str();
}

// A window geometry with OpenVINO's output size rule (floor or ceil).
inline PoolGeometry window(std::vector<std::int64_t> nc, std::vector<std::int64_t> in,
                           std::vector<std::int64_t> k, std::vector<std::int64_t> s,
                           std::vector<std::int64_t> pb, std::vector<std::int64_t> pe, bool ceil,
                           bool exclude_pad, std::vector<std::int64_t> d = {}) {
  PoolGeometry g;
  g.batch = nc[0];
  g.channels = nc[1];
  g.spatial_rank = in.size();
  const std::size_t lead = 3 - in.size();
  bool any_pad = false;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::size_t a = lead + i;
    g.in[a] = in[i];
    g.kernel[a] = k[i];
    g.stride[a] = s[i];
    g.dilation[a] = d.empty() ? 1 : d[i];
    g.pad_begin[a] = pb[i];
    g.pad_end[a] = pe[i];
    any_pad = any_pad || pb[i] || pe[i];
    const std::int64_t kd = g.dilation[a] * (k[i] - 1) + 1;
    const std::int64_t span = in[i] + pb[i] + pe[i] - kd;
    g.out[a] = (ceil ? (span + s[i] - 1) / s[i] : span / s[i]) + 1;
  }
  g.pads_in_avg = !exclude_pad && any_pad;
  return g;
}

inline PoolGeometry adaptive(std::vector<std::int64_t> nc, std::vector<std::int64_t> in,
                             std::vector<std::int64_t> out) {
  PoolGeometry g;
  g.batch = nc[0];
  g.channels = nc[1];
  g.spatial_rank = in.size();
  g.adaptive = true;
  const std::size_t lead = 3 - in.size();
  for (std::size_t i = 0; i < in.size(); ++i) {
    g.in[lead + i] = in[i];
    g.out[lead + i] = out[i];
  }
  return g;
}

// Rank 1-3, inputs up to 70 (1-D), 40 (2-D) or 9 (3-D) wide; a third adaptive.
inline PoolGeometry random_geometry(SplitMix64& rng) {
  const std::size_t rank = static_cast<std::size_t>(rng.range(1, 3));
  const std::int64_t max_in = rank == 3 ? 9 : rank == 2 ? 40 : 70;
  std::vector<std::int64_t> in, k, s, pb, pe, d, out;
  for (std::size_t i = 0; i < rank; ++i) in.push_back(rng.range(1, max_in));
  const std::vector<std::int64_t> nc{rng.range(1, 2), rng.range(1, 5)};
  if (rng.range(0, 3) == 0) {
    for (auto v : in) out.push_back(rng.range(1, v + 2));
    return adaptive(nc, in, out);
  }
  for (std::size_t i = 0; i < rank; ++i) {
    std::int64_t kd = 0;
    do {
      k.resize(i + 1), s.resize(i + 1), pb.resize(i + 1), pe.resize(i + 1), d.resize(i + 1);
      k[i] = rng.range(1, 7);
      s[i] = rng.range(0, 2) ? rng.range(1, 2) : rng.range(3, 4);
      d[i] = rng.range(0, 5) ? 1 : 2;
      pb[i] = rng.coin() ? 0 : rng.range(1, 3);
      pe[i] = rng.coin() ? 0 : rng.range(1, 3);
      kd = d[i] * (k[i] - 1) + 1;
    } while (kd > in[i] + pb[i] + pe[i]);
  }
  return window(nc, in, k, s, pb, pe, rng.coin(), rng.coin(), d);
}

}  // namespace irrun::testing
