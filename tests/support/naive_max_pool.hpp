// Test-only oracle for MaxPool / AdaptiveMaxPool, written from OpenVINO's reference kernels
// (reference/max_pool.hpp, adaptive_max_pool.hpp) and sharing no code with irrun's kernel: every
// kernel tap is visited and bounds-tested in the model's own rank, adaptive bins are recomputed
// here with floating-point ceil, and indices are reduced modulo the element count from `axis`.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace irrun::testing {

template <class T>
struct NaiveMax {
  std::vector<T> values;
  std::vector<std::int64_t> indices;  // before the cast to the index type
};

struct NaiveMaxSpec {
  std::vector<std::int64_t> in;                                    // model shape [N, C, spatial...]
  std::vector<std::int64_t> out;                                   // same rank
  std::vector<std::int64_t> kernel, stride, dilation, pads_begin;  // spatial; unused if adaptive
  bool adaptive = false;
  std::int64_t axis = 0;  // normalised
};

// Row-major offset of spatial position `pos` (one entry per spatial axis) in a plane of `dims`.
inline std::int64_t naive_offset(const std::vector<std::int64_t>& dims,
                                 const std::vector<std::int64_t>& pos) {
  std::int64_t off = 0;
  for (std::size_t a = 0; a < pos.size(); ++a) off = off * dims[a + 2] + pos[a];
  return off;
}

template <class T>
NaiveMax<T> naive_max_pool(const NaiveMaxSpec& s, const std::vector<T>& input) {
  const std::size_t rank = s.in.size() - 2;
  std::int64_t in_plane = 1, out_plane = 1;
  for (std::size_t a = 0; a < rank; ++a) in_plane *= s.in[a + 2], out_plane *= s.out[a + 2];
  std::int64_t range = 1;
  for (std::size_t a = static_cast<std::size_t>(s.axis); a < s.in.size(); ++a) range *= s.in[a];

  NaiveMax<T> r;
  for (std::int64_t p = 0; p < s.in[0] * s.in[1]; ++p) {
    const T* plane = input.data() + p * in_plane;
    for (std::int64_t o = 0; o < out_plane; ++o) {
      std::vector<std::int64_t> opos(rank);
      for (std::size_t a = rank, rest = static_cast<std::size_t>(o); a-- > 0;) {
        opos[a] = static_cast<std::int64_t>(rest % static_cast<std::size_t>(s.out[a + 2]));
        rest /= static_cast<std::size_t>(s.out[a + 2]);
      }
      // Candidate positions per axis (window taps, padding included, or the adaptive bin).
      std::vector<std::vector<std::int64_t>> cand(rank);
      for (std::size_t a = 0; a < rank; ++a) {
        if (s.adaptive) {
          const std::int64_t I = s.in[a + 2], O = s.out[a + 2];
          const auto begin = static_cast<std::int64_t>(std::floor(double(opos[a] * I) / double(O)));
          const auto end =
              static_cast<std::int64_t>(std::ceil(double((opos[a] + 1) * I) / double(O)));
          for (std::int64_t i = begin; i < end; ++i) cand[a].push_back(i);
        } else {
          for (std::int64_t j = 0; j < s.kernel[a]; ++j)
            cand[a].push_back(opos[a] * s.stride[a] - s.pads_begin[a] + j * s.dilation[a]);
        }
      }
      // All combinations in row-major order (last axis fastest).
      std::vector<std::vector<std::int64_t>> taps{{}};
      for (std::size_t a = 0; a < rank; ++a) {
        std::vector<std::vector<std::int64_t>> next;
        for (const auto& t : taps) {
          for (auto c : cand[a]) {
            auto u = t;
            u.push_back(c);
            next.push_back(u);
          }
        }
        taps = next;
      }

      T best{};
      std::int64_t best_pos = 0;
      if (!s.adaptive) {
        best = std::numeric_limits<T>::lowest();
        for (const auto& t : taps) {
          bool inside = true;
          for (std::size_t a = 0; a < rank; ++a) inside = inside && t[a] >= 0 && t[a] < s.in[a + 2];
          if (!inside) continue;
          const auto off = naive_offset(s.in, t);
          if (plane[off] > best) best = plane[off], best_pos = off;
        }
      } else {
        // Rows along the last axis: std::max_element each, then keep the earlier unless a row's
        // maximum is strictly greater, starting from the bin's first element.
        best_pos = naive_offset(s.in, taps.front());
        best = plane[best_pos];
        const std::size_t row = cand[rank - 1].size();
        for (std::size_t k = 0; k < taps.size(); k += row) {
          const auto first = naive_offset(s.in, taps[k]);
          const T* it =
              std::max_element(plane + first, plane + first + static_cast<std::int64_t>(row));
          if (*it > best) best = *it, best_pos = it - plane;
        }
      }
      r.values.push_back(best);
      r.indices.push_back(range == 0 ? 0 : (p * in_plane + best_pos) % range);
    }
  }
  return r;
}

}  // namespace irrun::testing
