// Window MaxPool geometries for the kernel tests: OpenVINO's MaxPool output sizes (floor, ceil,
// ceil_torch; pads up to and past the kernel), a random generator over ranks, widths around the
// vector sizes, dilations, strides and index axes, and a one-line description.
#pragma once

#include <array>
#include <cstdint>
#include <sstream>
#include <string>

#include "irrun/pool_geometry.hpp"
#include "support/split_mix.hpp"

namespace irrun::testing {

inline std::string describe_max(const PoolGeometry& g) {
  std::ostringstream os;
  auto l = [](const std::array<std::int64_t, 3>& a) {
    std::ostringstream t;
    t << '[' << a[0] << ',' << a[1] << ',' << a[2] << ']';
    return t.str();
  };
  os << "N=" << g.batch << " C=" << g.channels << " in=" << l(g.in) << " out=" << l(g.out)
     << " k=" << l(g.kernel) << " s=" << l(g.stride) << " d=" << l(g.dilation)
     << " pb=" << l(g.pad_begin) << " pe=" << l(g.pad_end) << " axis=" << g.index_axis;
  return os.str();
}

enum class Rounding { floor, ceil, ceil_torch };

// One axis with OpenVINO's MaxPool output size rules (the dilated kernel fits the padded input;
// pads may reach or exceed the kernel).
inline void set_axis(PoolGeometry& g, std::size_t a, std::int64_t in, std::int64_t k,
                     std::int64_t s, std::int64_t d, std::int64_t pb, std::int64_t pe, Rounding r) {
  g.in[a] = in, g.kernel[a] = k, g.stride[a] = s, g.dilation[a] = d;
  g.pad_begin[a] = pb, g.pad_end[a] = pe;
  const std::int64_t span = in + pb + pe - (d * (k - 1) + 1);
  std::int64_t out = (r == Rounding::floor ? span / s : (span + s - 1) / s) + 1;
  // ceil_torch drops a last window that would start in the end padding.
  if (r == Rounding::ceil_torch && out > 1 && (out - 1) * s >= in + pb) --out;
  g.out[a] = out;
}

inline PoolGeometry random_max_pool_geometry(SplitMix64& rng) {
  PoolGeometry g;
  g.spatial_rank = static_cast<std::size_t>(rng.range(1, 3));
  g.batch = rng.range(1, 2);
  g.channels = rng.range(1, 3);
  const auto r = static_cast<Rounding>(rng.range(0, 2));
  for (std::size_t a = 3 - g.spatial_rank; a < 3; ++a) {
    const bool w = a == 2;
    // Widths around one and two vectors of 16 and 8 outputs, sometimes several blocks of 32.
    const std::int64_t in = !w                     ? rng.range(1, g.spatial_rank == 3 ? 6 : 9)
                            : rng.range(0, 3) == 0 ? rng.range(60, 150)
                                                   : rng.range(1, 70);
    std::int64_t k = 0, d = 0, pb = 0, pe = 0;
    do {
      k = w && rng.range(0, 4) == 0 ? rng.range(6, 12) : rng.range(1, 5);
      d = rng.range(0, 3) == 0 ? rng.range(2, 3) : 1;
      pb = rng.range(0, k + 2);
      pe = rng.range(0, k + 2);
    } while (d * (k - 1) + 1 > in + pb + pe);
    // Strides 3 and up take the column-first rows; past 16 (AVX2) or 32 (AVX-512) columns
    // between outputs, their taps span too many vectors and run the portable rows.
    const std::int64_t pick = rng.range(0, 19);
    const std::int64_t s = pick < 7    ? 1
                           : pick < 14 ? 2
                           : pick < 18 ? rng.range(3, 8)
                                       : rng.range(9, 40);
    set_axis(g, a, in, k, s, d, pb, pe, r);
  }
  g.index_axis =
      static_cast<std::size_t>(rng.range(0, static_cast<std::int64_t>(g.spatial_rank) + 1));
  return g;
}

}  // namespace irrun::testing
