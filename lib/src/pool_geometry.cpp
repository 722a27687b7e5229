#include "irrun/pool_geometry.hpp"

#include <algorithm>
#include <locale>
#include <sstream>

namespace irrun {
namespace {

__extension__ typedef __int128 i128;

// Attribute values beyond this are rejected before any arithmetic, so sums of dims, pads and
// dilated kernels cannot overflow (irrun's own rule; OpenVINO would wrap).
constexpr std::uint64_t kMaxAttr = std::uint64_t{1} << 40;

[[noreturn]] void fail(const std::string& message) {
  throw ValidationError(message);
}

template <class T>
std::string list(const std::vector<T>& v) {
  std::ostringstream s;
  s.imbue(std::locale::classic());
  s << '{';
  for (std::size_t i = 0; i < v.size(); ++i) s << (i ? ", " : "") << v[i];
  s << '}';
  return s.str();
}

void check_range(const char* name, const std::vector<std::uint64_t>& values) {
  for (auto v : values) {
    if (v > kMaxAttr)
      fail(std::string(name) + " value " + std::to_string(v) + " is out of range (max " +
           std::to_string(kMaxAttr) + ")");
  }
}

std::string shape_text(const PartialShape& s) {
  return to_string(s);
}

bool rank_is_3_to_5(const PartialShape& s) {
  return !s.rank_is_static() || (s.rank() >= 3 && s.rank() <= 5);
}

// Kernel extent after dilation; a zero kernel makes OpenVINO's size_t arithmetic wrap to
// SIZE_MAX, which then fails the "larger than the data shape" rule (kept for the same message).
i128 dilated(std::uint64_t kernel, std::uint64_t dilation) {
  if (kernel == 0) return static_cast<i128>(UINT64_MAX);
  return static_cast<i128>(dilation) * (kernel - 1) + 1;
}

// Values here are never negative (dims, pads and dilated kernels).
std::string int_text(i128 v) {
  char digits[48];
  char* p = digits + sizeof digits;
  do {
    *--p = static_cast<char>('0' + static_cast<int>(v % 10));
    v /= 10;
  } while (v > 0);
  return std::string(p, digits + sizeof digits);
}

// Same-padding total on one axis (OpenVINO dim::padding).
std::int64_t same_padding(std::int64_t dim, std::int64_t stride, i128 kernel_dilated) {
  const std::int64_t out = dim / stride + (dim % stride != 0 ? 1 : 0);
  const i128 total = static_cast<i128>(out - 1) * stride + kernel_dilated - dim;
  return total > 0 ? static_cast<std::int64_t>(total) : 0;
}

// One spatial axis of the output, on one bound of the input dim (finite values only).
std::int64_t spatial_bound(std::int64_t dim, std::int64_t pb, std::int64_t pe, i128 kd,
                           std::int64_t stride, RoundingType rounding) {
  const i128 padded_minus_kernel = static_cast<i128>(dim) + pb + pe - kd;
  const i128 span = padded_minus_kernel > 0 ? padded_minus_kernel : 0;  // interval clip at 0
  const bool up = rounding != RoundingType::floor;
  const i128 q = up ? (span + stride - 1) / stride : span / stride;
  i128 out = q + 1;
  // ceil_torch: drop the last window if it would start in the right padding.
  if (rounding == RoundingType::ceil_torch && q * stride > static_cast<i128>(dim) + pb - 1) out = q;
  if (out > kInf - 1) fail("output dimension overflows");
  return static_cast<std::int64_t>(out);
}

void fill_geometry_axes(PoolGeometry& g, const PartialShape& input, const PartialShape& output) {
  const auto in = input.to_static();
  const auto out = output.to_static();
  g.batch = in[0];
  g.channels = in[1];
  g.spatial_rank = in.size() - 2;
  const std::size_t offset = 3 - g.spatial_rank;
  for (std::size_t i = 0; i < g.spatial_rank; ++i) {
    g.in[offset + i] = in[2 + i];
    g.out[offset + i] = out[2 + i];
  }
}

// What distinguishes the window pooling ops in shape inference.
struct WindowRules {
  bool dilations;   // AvgPool-16, MaxPool-8/14 read them; the others use all 1s
  bool ceil_torch;  // AvgPool-14/16, MaxPool-14 accept rounding_type=ceil_torch
  bool count_pads;  // AvgPool with exclude-pad=false: padding counts in the divisor
  // AvgPool with exclude-pad=true rejects windows entirely in padding; MaxPool has no such rule.
  bool padding_rule;
};

// The rules shared by AvgPool and MaxPool (OpenVINO's pooling_shape_inference_util).
PoolInference infer_window_pool(const PoolAttrs& attrs, const WindowRules& rules,
                                const PartialShape& input) {
  check_range("kernel", attrs.kernel);
  check_range("strides", attrs.strides);
  check_range("pads_begin", attrs.pads_begin);
  check_range("pads_end", attrs.pads_end);
  check_range("dilations", attrs.dilations);

  const auto& kernel = attrs.kernel;
  const std::size_t num_spatial = kernel.size();
  auto pads_begin = attrs.pads_begin;
  auto pads_end = attrs.pads_end;
  if (pads_begin.empty()) pads_begin.resize(num_spatial, 0);
  if (pads_end.empty()) pads_end.resize(num_spatial, 0);
  auto dilations = attrs.dilations;
  if (!rules.dilations || dilations.empty()) dilations.assign(num_spatial, 1);

  // Validation in OpenVINO's order: the first failing rule wins. Its list-length messages say
  // "input size - 2" where most compare with the kernel's length ("expected 2, got 2" for a
  // kernel of one value on a 4-D input): irrun adds every length.
  const auto lengths = [&] {
    const auto n = [](std::size_t k) { return std::to_string(k); };
    return " (kernel has " + n(num_spatial) + " value(s), pads_begin " + n(pads_begin.size()) +
           ", pads_end " + n(pads_end.size()) + ", strides " + n(attrs.strides.size()) +
           (rules.dilations ? ", dilations " + n(dilations.size()) : std::string()) + "; " +
           (input.rank_is_static() && input.rank() >= 2
                ? "the input has " + n(input.rank() - 2) + " spatial dim(s)"
                : std::string("the input's rank is not known")) +
           ")";
  };
  if (pads_begin.size() != num_spatial)
    fail("Expected pads_begin size to be equal to input size - 2. Got: " +
         std::to_string(pads_begin.size()) + lengths());
  if (pads_end.size() != num_spatial)
    fail("Expected pads_end size to be equal to input size - 2. Got: " +
         std::to_string(pads_end.size()) + lengths());
  if (!rank_is_3_to_5(input))
    fail("Expected a 3D, 4D or 5D tensor for the input. Got: " + shape_text(input));
  if (attrs.strides.size() != num_spatial)
    fail("Expected strides size to be equal to input size - 2. Got: " +
         std::to_string(attrs.strides.size()) + lengths());
  if (dilations.size() != num_spatial)
    fail("Expected dilations size to be equal to kernel size. Got: " +
         std::to_string(dilations.size()) + lengths());
  if (input.rank_is_static() && num_spatial != input.rank() - 2)
    fail("Expected kernel size to be equal to input size - 2. Got: " + std::to_string(num_spatial) +
         lengths());
  const auto is_zero = [](std::uint64_t v) { return v == 0; };
  if (std::any_of(attrs.strides.begin(), attrs.strides.end(), is_zero))
    fail("Strides has zero dimension(s). " + list(attrs.strides));
  if (std::any_of(dilations.begin(), dilations.end(), is_zero))
    fail("Kernel dilations has zero dimension(s). " + list(dilations));
  if (!rules.ceil_torch && attrs.rounding == RoundingType::ceil_torch)
    fail("Rounding CEIL_TORCH is not supported.");

  PoolInference result;
  result.pads_begin.assign(pads_begin.begin(), pads_begin.end());
  result.pads_end.assign(pads_end.begin(), pads_end.end());
  const bool same = attrs.auto_pad == AutoPad::same_upper || attrs.auto_pad == AutoPad::same_lower;

  if (!input.rank_is_static()) {
    if (attrs.auto_pad == AutoPad::valid) {
      std::fill(result.pads_begin.begin(), result.pads_begin.end(), 0);
      std::fill(result.pads_end.begin(), result.pads_end.end(), 0);
    }
    result.output = PartialShape(std::vector<Dim>(2 + num_spatial, Dim::dynamic()));
    return result;
  }

  // Auto padding overwrites the pads (dynamic axes under same_* get 0).
  for (std::size_t i = 0; i < num_spatial; ++i) {
    const Dim& d = input[2 + i];
    if (attrs.auto_pad == AutoPad::valid || (same && !d.is_static())) {
      result.pads_begin[i] = result.pads_end[i] = 0;
    } else if (same) {
      // A zero kernel pads nothing here; the kernel-size rule below then reports it.
      const auto total = same_padding(d.min, static_cast<std::int64_t>(attrs.strides[i]),
                                      kernel[i] == 0 ? 0 : dilated(kernel[i], dilations[i]));
      const auto small = total / 2, big = total - small;
      result.pads_begin[i] = attrs.auto_pad == AutoPad::same_upper ? small : big;
      result.pads_end[i] = attrs.auto_pad == AutoPad::same_upper ? big : small;
    }
  }

  const Dim& batch = input[0];
  const Dim& channels = input[1];
  if (batch.is_static() && batch.min == 0) fail("Batch size is zero.");
  if (channels.is_static() && channels.min == 0) fail("Channel count is zero.");

  std::vector<Dim> out{batch, channels};
  for (std::size_t i = 0; i < num_spatial; ++i) {
    const Dim& d = input[2 + i];
    if (same && !d.is_static()) {
      out.push_back(Dim::dynamic());
      continue;
    }
    const std::int64_t pb = result.pads_begin[i], pe = result.pads_end[i];
    const i128 kd = dilated(kernel[i], dilations[i]);
    const auto stride = static_cast<std::int64_t>(attrs.strides[i]);
    if (d.is_static()) {
      const i128 padded = static_cast<i128>(d.min) + pb + pe;
      if (kd > padded)
        fail("Kernel after dilation has size (dim: " + int_text(kd) +
             ") larger than the data shape after padding (dim: " + int_text(padded) + ") at axis " +
             std::to_string(i) + ".");
      if (rules.padding_rule && !(kd > pb && kd > pe))
        fail("Kernel after dilation is sometimes entirely in the padding area for axis " +
             std::to_string(i) + " (dilated kernel dimension: " + int_text(kd) +
             ", padding below dimension: " + std::to_string(pb) +
             ", padding above dimension: " + std::to_string(pe) + ") and this is not allowed.");
    }
    Dim o;
    o.min = spatial_bound(d.min, pb, pe, kd, stride, attrs.rounding);
    o.max = d.max == kInf ? kInf : spatial_bound(d.max, pb, pe, kd, stride, attrs.rounding);
    out.push_back(o);
  }
  result.output = PartialShape(std::move(out));

  if (input.is_static()) {
    PoolGeometry g;
    fill_geometry_axes(g, input, result.output);
    const std::size_t offset = 3 - num_spatial;
    bool any_pad = false;
    for (std::size_t i = 0; i < num_spatial; ++i) {
      g.kernel[offset + i] = static_cast<std::int64_t>(kernel[i]);
      g.stride[offset + i] = static_cast<std::int64_t>(attrs.strides[i]);
      g.dilation[offset + i] = static_cast<std::int64_t>(dilations[i]);
      g.pad_begin[offset + i] = result.pads_begin[i];
      g.pad_end[offset + i] = result.pads_end[i];
      any_pad = any_pad || result.pads_begin[i] != 0 || result.pads_end[i] != 0;
    }
    g.pads_in_avg = rules.count_pads && any_pad;
    result.geometry = g;
  }
  return result;
}

}  // namespace

std::string to_string(RoundingType r) {
  switch (r) {
    case RoundingType::floor:
      return "floor";
    case RoundingType::ceil:
      return "ceil";
    case RoundingType::ceil_torch:
      return "ceil_torch";
  }
  return "?";
}

std::string to_string(AutoPad p) {
  switch (p) {
    case AutoPad::explicit_:
      return "explicit";
    case AutoPad::same_upper:
      return "same_upper";
    case AutoPad::same_lower:
      return "same_lower";
    case AutoPad::valid:
      return "valid";
  }
  return "?";
}

std::int64_t PoolGeometry::index_range() const {
  if (index_axis == 0) return planes() * in_plane_size();
  if (index_axis == 1) return channels * in_plane_size();
  std::int64_t range = 1;
  for (std::size_t a = 3 - spatial_rank + (index_axis - 2); a < 3; ++a) range *= in[a];
  return range;
}

PoolInference infer_avg_pool(const PoolAttrs& attrs, int version, const PartialShape& input) {
  return infer_window_pool(
      attrs, {version >= 16, version != 1, !attrs.exclude_pad, attrs.exclude_pad}, input);
}

PoolInference infer_max_pool(const PoolAttrs& attrs, int version, const PartialShape& input) {
  if (version == 1) return infer_window_pool(attrs, {false, false, false, false}, input);
  // OpenVINO evaluates only i32/i64 indices but does not validate the attribute; irrun checks
  // it up front so a model it accepts is one it can run.
  if (attrs.index_element_type != ElementType::i32 && attrs.index_element_type != ElementType::i64)
    fail("Index element type must be i32 or i64 (got " +
         std::string(to_string(attrs.index_element_type)) + ")");
  // Axis normalisation runs before shape inference, only when the rank is known.
  std::int64_t axis = attrs.axis;
  if (input.rank_is_static()) {
    const auto rank = static_cast<std::int64_t>(input.rank());
    if (axis < -rank || axis >= rank)
      fail("Axis " + std::to_string(axis) + " out of the tensor rank range [" +
           std::to_string(-rank) + ", " + std::to_string(rank == 0 ? 0 : rank - 1) + "].");
    if (axis < 0) axis += rank;
  }
  auto result = infer_window_pool(attrs, {true, version >= 14, false, false}, input);
  if (result.geometry) result.geometry->index_axis = static_cast<std::size_t>(axis);
  return result;
}

PoolInference infer_adaptive_avg_pool(const PartialShape& input,
                                      const PartialShape& output_size_shape,
                                      const std::optional<std::vector<std::int64_t>>& output_size) {
  if (!rank_is_3_to_5(input))
    fail("Expected a 3D, 4D or 5D tensor for the input. Got: " + shape_text(input));
  // irrun's own rule: OpenVINO indexes the first dim without checking the rank.
  if (output_size_shape.rank_is_static() && output_size_shape.rank() != 1)
    fail("output_size must be a 1D tensor. Got: " + shape_text(output_size_shape));

  PoolInference result;
  if (!input.rank_is_static()) {
    result.output = PartialShape::dynamic_rank();
    return result;
  }
  const std::size_t num_spatial = input.rank() - 2;
  if (output_size_shape.rank_is_static() &&
      !output_size_shape[0].contains(static_cast<std::int64_t>(num_spatial)))
    fail("Output shape for spatial dimension not compatible with data shape.");

  std::vector<Dim> out{input[0], input[1]};
  if (output_size) {
    if (output_size->size() != num_spatial)
      fail("Number of spatial dimensions is not compatible with input data rank");
    for (std::size_t i = 0; i < num_spatial; ++i) {
      const auto v = (*output_size)[i];
      // -1 is a dynamic dim; any other negative value has no meaning (irrun's own rule).
      if (v < -1)
        fail("output_size value " + std::to_string(v) + " at axis " + std::to_string(i) +
             " is negative");
      // Like the window attributes: bounded, so output sizes and bin arithmetic cannot overflow.
      if (v > static_cast<std::int64_t>(kMaxAttr))
        fail("output_size value " + std::to_string(v) + " at axis " + std::to_string(i) +
             " is out of range (max " + std::to_string(kMaxAttr) + ")");
      out.push_back(v == -1 ? Dim::dynamic() : Dim::fixed(v));
    }
  } else {
    out.insert(out.end(), num_spatial, Dim::dynamic());
  }
  result.output = PartialShape(std::move(out));

  if (input.is_static() && result.output.is_static()) {
    // OpenVINO's kernel asserts only on a bin it computes: an empty output computes none.
    const bool empty_output = std::any_of(result.output.dims->begin(), result.output.dims->end(),
                                          [](const Dim& d) { return d.min == 0; });
    for (std::size_t i = 0; i < num_spatial; ++i) {
      if (input[2 + i].min == 0 && !empty_output) {
        result.empty_bins_axis = i;
        return result;
      }
      // Bins compute (i + 1) * in + out - 1 in 64 bits.
      const i128 bin_end = static_cast<i128>(result.output[2 + i].min) * (input[2 + i].min + 1);
      if (bin_end > kInf)
        fail("output_size " + std::to_string(result.output[2 + i].min) + " with input dimension " +
             std::to_string(input[2 + i].min) + " at axis " + std::to_string(i) +
             " overflows 64-bit bin arithmetic");
    }
    PoolGeometry g;
    fill_geometry_axes(g, input, result.output);
    g.adaptive = true;
    result.geometry = g;
  }
  return result;
}

PoolInference infer_adaptive_max_pool(const PoolAttrs& attrs, const PartialShape& input,
                                      const PartialShape& output_size_shape,
                                      const std::optional<std::vector<std::int64_t>>& output_size) {
  if (attrs.index_element_type != ElementType::i32 && attrs.index_element_type != ElementType::i64)
    fail("Index element type must be i32 or i64");
  auto result = infer_adaptive_avg_pool(input, output_size_shape, output_size);
  if (result.geometry) result.geometry->index_axis = 2;  // per (n, c) plane
  return result;
}

}  // namespace irrun
