// Pooling attributes, their shape inference, and the one geometry value the kernels consume.
// The arithmetic and the validation order follow OpenVINO (docs/openvino-semantics.md, sections
// 2, 4 and 6); shape inference is the only place output dims and resolved pads are computed.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "irrun/dim.hpp"
#include "irrun/element_type.hpp"

namespace irrun {

enum class RoundingType { floor, ceil, ceil_torch };
enum class AutoPad { explicit_, same_upper, same_lower, valid };

// AvgPool-1/14/16, MaxPool-1/8/14 and AdaptiveMaxPool-8 attributes as read from <data>, before
// any defaulting by shape inference. Fields an op does not have keep their defaults.
struct PoolAttrs {
  std::vector<std::uint64_t> kernel;
  std::vector<std::uint64_t> strides;
  std::vector<std::uint64_t> pads_begin;
  std::vector<std::uint64_t> pads_end;
  std::vector<std::uint64_t> dilations;  // AvgPool-16, MaxPool-8/14; empty means all 1
  bool exclude_pad = true;               // AvgPool only
  RoundingType rounding = RoundingType::floor;
  AutoPad auto_pad = AutoPad::explicit_;
  ElementType index_element_type = ElementType::i64;  // MaxPool-8/14, AdaptiveMaxPool-8
  std::int64_t axis = 0;  // MaxPool-8/14, as written: shape inference normalises it
};

// A broken validation rule; what() is OpenVINO's message for that rule.
class ValidationError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Geometry of one pooling op on static shapes, normalised to 3 spatial axes (D, H, W): for 1-D
// and 2-D pooling the leading axes have size 1, kernel 1, stride 1, dilation 1 and no pads.
// Kernels read only this (and the tensors); they never recompute dims or pads.
struct PoolGeometry {
  std::int64_t batch = 1;
  std::int64_t channels = 1;
  std::size_t spatial_rank = 0;  // 1..3, as in the model
  std::array<std::int64_t, 3> in{1, 1, 1};
  std::array<std::int64_t, 3> out{1, 1, 1};
  // Window pooling only (adaptive == false):
  std::array<std::int64_t, 3> kernel{1, 1, 1};
  std::array<std::int64_t, 3> stride{1, 1, 1};
  std::array<std::int64_t, 3> dilation{1, 1, 1};
  std::array<std::int64_t, 3> pad_begin{0, 0, 0};  // after auto_pad resolution
  std::array<std::int64_t, 3> pad_end{0, 0, 0};
  // OpenVINO's whole-op flag: !exclude_pad && any pad != 0. When set every window divides by
  // prod(kernel); otherwise by its count of in-bounds taps (0 taps -> output 0).
  bool pads_in_avg = false;
  // AdaptiveAvgPool: bins floor(i*I/O) .. ceil((i+1)*I/O) per axis.
  bool adaptive = false;
  // Max pooling indices are positions in the input flattened from dimension index_axis of the
  // model's shape: 0 counts over the whole tensor, 1 restarts per batch item, 2 per (n, c)
  // plane, 3 and 4 per inner row/plane. AdaptiveMaxPool always uses 2.
  std::size_t index_axis = 0;

  std::int64_t planes() const { return batch * channels; }
  std::int64_t in_plane_size() const { return in[0] * in[1] * in[2]; }
  std::int64_t out_plane_size() const { return out[0] * out[1] * out[2]; }
  // The number of input elements from dimension index_axis on: indices are taken modulo this.
  std::int64_t index_range() const;
  friend bool operator==(const PoolGeometry&, const PoolGeometry&) = default;
};

struct PoolInference {
  PartialShape output;
  // Pads after auto_pad resolution, one per spatial axis (OpenVINO overwrites the op's pads).
  std::vector<std::int64_t> pads_begin;
  std::vector<std::int64_t> pads_end;
  // Set only when the input shape (and the output size) are static, and the op can run.
  std::optional<PoolGeometry> geometry;
  // Adaptive pooling of an input dim 0 into a non-empty output: a valid shape, but a kernel with
  // nothing to average (OpenVINO's asserts). The first such spatial axis; no geometry then.
  std::optional<std::size_t> empty_bins_axis;
};

// AvgPool shape inference for op version 1, 14 or 16. Throws ValidationError.
PoolInference infer_avg_pool(const PoolAttrs& attrs, int version, const PartialShape& input);

// MaxPool shape inference for op version 1, 8 or 14 (one output shape; MaxPool-8/14's indices
// output has the same shape). Throws ValidationError.
PoolInference infer_max_pool(const PoolAttrs& attrs, int version, const PartialShape& input);

// AdaptiveAvgPool-8 shape inference. `output_size_shape` is the shape of input 1;
// `output_size` its values when known (a Const), where -1 means a dynamic dim.
PoolInference infer_adaptive_avg_pool(const PartialShape& input,
                                      const PartialShape& output_size_shape,
                                      const std::optional<std::vector<std::int64_t>>& output_size);

// AdaptiveMaxPool-8: the index element type check, then AdaptiveAvgPool-8's rules.
PoolInference infer_adaptive_max_pool(const PoolAttrs& attrs, const PartialShape& input,
                                      const PartialShape& output_size_shape,
                                      const std::optional<std::vector<std::int64_t>>& output_size);

// Adaptive bin of output index i on an axis of input size `in` and output size `out`.
inline std::int64_t adaptive_bin_start(std::int64_t i, std::int64_t in, std::int64_t out) {
  return i * in / out;
}
inline std::int64_t adaptive_bin_end(std::int64_t i, std::int64_t in, std::int64_t out) {
  return ((i + 1) * in + out - 1) / out;
}

std::string to_string(RoundingType r);
std::string to_string(AutoPad p);

}  // namespace irrun
