// The benchmark shapes (S1-S9 average, M1-M4 max) and their shape inference, shared by the
// Google Benchmark suite (bench.cpp) and the A/B harness (bench/ab). In an unnamed namespace on
// purpose: the A/B harness compiles this header twice, once against each of two builds of irrun
// (one with its namespace renamed), and each copy must stay private to its translation unit.
#pragma once

#include <cstdint>
#include <vector>

#include "irrun/dim.hpp"
#include "irrun/pool_geometry.hpp"

namespace {

using i64 = std::int64_t;

struct Shape {
  // Every member has a default, so that rows may name only the members they set.
  const char* id = "";
  bool adaptive = false;
  std::vector<i64> in{};
  // Pool attributes (window) or output size (adaptive).
  std::vector<i64> kernel{}, stride{}, pads_begin{}, pads_end{}, out_size{};
  bool exclude_pad = true;
  bool ceil = false;
  // oneDNN equivalent (kernel/stride/pads); `dnnl_exact` false: a same-cost proxy, not the op.
  std::vector<i64> dk{}, ds{}, dpl{}, dpr{};
  bool dnnl_exact = true;
  bool dnnl_exclude = true;
  // Max pooling (MaxPool-<version>, or AdaptiveMaxPool-8 when adaptive) instead of average;
  // exclude_pad and dnnl_exclude do not apply. AvgPool rows are AvgPool-1.
  bool max = false;
  int version = 1;
  // A layer of --irrun_model (bench.cpp): its name, type and shapes, added to the rows' labels.
  const char* layer = "";
};

// The same op as MaxPool-1: values only.
inline Shape values_only(Shape s, const char* id) {
  s.id = id;
  s.version = 1;
  return s;
}

inline const std::vector<Shape>& shapes() {
  // MaxPool-8 of the ResNet stem (values + i64 indices, axis 0); M1v: the same as MaxPool-1.
  static const Shape stem_max = {.id = "M1",
                                 .in = {1, 64, 112, 112},
                                 .kernel = {3, 3},
                                 .stride = {2, 2},
                                 .pads_begin = {1, 1},
                                 .pads_end = {1, 1},
                                 .dk = {3, 3},
                                 .ds = {2, 2},
                                 .dpl = {1, 1},
                                 .dpr = {1, 1},
                                 .max = true,
                                 .version = 8};
  // MaxPool-8 2x2 s2 (VGG's, U-Net's; rows of 28 outputs); M2v: the same as MaxPool-1.
  static const Shape max_2x2 = {.id = "M2",
                                .in = {1, 256, 56, 56},
                                .kernel = {2, 2},
                                .stride = {2, 2},
                                .pads_begin = {0, 0},
                                .pads_end = {0, 0},
                                .dk = {2, 2},
                                .ds = {2, 2},
                                .dpl = {0, 0},
                                .dpr = {0, 0},
                                .max = true,
                                .version = 8};
  static const std::vector<Shape> s = {
      {"S1",
       false,
       {1, 64, 112, 112},
       {3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       {},
       true,
       false,
       {3, 3},
       {2, 2},
       {1, 1},
       {1, 1},
       true,
       true},
      {"S2",
       false,
       {1, 256, 56, 56},
       {2, 2},
       {2, 2},
       {0, 0},
       {0, 0},
       {},
       true,
       false,
       {2, 2},
       {2, 2},
       {0, 0},
       {0, 0},
       true,
       true},
      {"S3",
       false,
       {8, 512, 28, 28},
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       {},
       false,
       false,
       {3, 3},
       {1, 1},
       {1, 1},
       {1, 1},
       true,
       false},
      {"S4",
       false,
       {32, 2048, 7, 7},
       {7, 7},
       {1, 1},
       {0, 0},
       {0, 0},
       {},
       true,
       false,
       {7, 7},
       {1, 1},
       {0, 0},
       {0, 0},
       true,
       true},
      {"S5",
       false,
       {1, 32, 32, 64, 64},
       {3, 3, 3},
       {2, 2, 2},
       {1, 1, 1},
       {1, 1, 1},
       {},
       true,
       false,
       {3, 3, 3},
       {2, 2, 2},
       {1, 1, 1},
       {1, 1, 1},
       true,
       true},
      // AdaptiveAvgPool 28 -> 7: bins of exactly 4, i.e. AvgPool k4 s4.
      {"S6",
       true,
       {8, 512, 28, 28},
       {},
       {},
       {},
       {},
       {7, 7},
       true,
       false,
       {4, 4},
       {4, 4},
       {0, 0},
       {0, 0},
       true,
       true},
      {"S7",
       true,
       {32, 2048, 7, 7},
       {},
       {},
       {},
       {},
       {1, 1},
       true,
       false,
       {7, 7},
       {7, 7},
       {0, 0},
       {0, 0},
       true,
       true},
      // 224 -> 17 x 13 has uneven, overlapping bins: oneDNN has no such op; the proxy is an
      // AvgPool of the same output size with the larger bin as kernel.
      {"S8",
       true,
       {1, 64, 224, 224},
       {},
       {},
       {},
       {},
       {17, 13},
       true,
       false,
       {14, 18},
       {13, 17},
       {0, 0},
       {0, 0},
       false,
       true},
      {"S9",
       false,
       {1, 16, 1024, 1024},
       {5, 5},
       {1, 1},
       {2, 2},
       {2, 2},
       {},
       true,
       true,
       {5, 5},
       {1, 1},
       {2, 2},
       {2, 2},
       true,
       true},
      stem_max,
      values_only(stem_max, "M1v"),
      max_2x2,
      values_only(max_2x2, "M2v"),
      // I3D's 3x3x3 s1 p1 MaxPool-1 (Mixed_4b's branch 3): narrow rows of 14 columns, 3-D windows.
      {.id = "M4",
       .in = {1, 480, 20, 14, 14},
       .kernel = {3, 3, 3},
       .stride = {1, 1, 1},
       .pads_begin = {1, 1, 1},
       .pads_end = {1, 1, 1},
       .dk = {3, 3, 3},
       .ds = {1, 1, 1},
       .dpl = {1, 1, 1},
       .dpr = {1, 1, 1},
       .max = true},
      // AdaptiveMaxPool 28 -> 7 (i64 indices): bins of exactly 4, i.e. MaxPool k4 s4.
      {.id = "M3",
       .adaptive = true,
       .in = {8, 512, 28, 28},
       .out_size = {7, 7},
       .dk = {4, 4},
       .ds = {4, 4},
       .dpl = {0, 0},
       .dpr = {0, 0},
       .max = true,
       .version = 8},
  };
  return s;
}

// MaxPool-8/14 and AdaptiveMaxPool-8 have a second output, the indices (i64 here).
inline bool has_indices(const Shape& s) {
  return s.max && (s.adaptive || s.version >= 8);
}

inline std::vector<std::uint64_t> u64(const std::vector<i64>& v) {
  return std::vector<std::uint64_t>(v.begin(), v.end());
}

inline irrun::PoolInference infer(const Shape& s) {
  const auto input = irrun::PartialShape::from_static(s.in);
  irrun::PoolAttrs a;  // index_element_type i64, axis 0
  if (s.adaptive) {
    const auto size_shape = irrun::PartialShape::from_static({static_cast<i64>(s.out_size.size())});
    return s.max ? irrun::infer_adaptive_max_pool(a, input, size_shape, s.out_size)
                 : irrun::infer_adaptive_avg_pool(input, size_shape, s.out_size);
  }
  a.kernel = u64(s.kernel);
  a.strides = u64(s.stride);
  a.pads_begin = u64(s.pads_begin);
  a.pads_end = u64(s.pads_end);
  a.exclude_pad = s.exclude_pad;
  a.rounding = s.ceil ? irrun::RoundingType::ceil : irrun::RoundingType::floor;
  return s.max ? irrun::infer_max_pool(a, s.version, input)
               : irrun::infer_avg_pool(a, s.version, input);
}

inline std::vector<i64> out_dims(const Shape& s) {
  return infer(s).output.to_static();
}

inline i64 count(const std::vector<i64>& d) {
  i64 n = 1;
  for (auto v : d) n *= v;
  return n;
}

}  // namespace
