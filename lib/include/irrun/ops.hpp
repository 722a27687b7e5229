// The op table: for each supported (type, version), how to read its attributes and infer its
// outputs. Everything else in an IR is an opaque node whose outputs are the declared ones.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "irrun/attrs.hpp"
#include "irrun/dim.hpp"
#include "irrun/element_type.hpp"
#include "irrun/ir.hpp"
#include "irrun/pool_geometry.hpp"
#include "irrun/tensor.hpp"

namespace irrun {

struct ParameterAttrs {
  ElementType type = ElementType::undefined;
  PartialShape shape;
};

struct ConstAttrs {
  ElementType type = ElementType::undefined;
  std::vector<std::int64_t> shape;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

using OpAttrs = std::variant<std::monostate, ParameterAttrs, ConstAttrs, PoolAttrs>;

// What shape inference knows about one output.
struct ValueInfo {
  PartialShape shape;
  ElementType type = ElementType::undefined;
  std::optional<std::vector<long double>> values;  // small numeric Consts (e.g. output_size),
                                                   // exactly, whatever their element type
};

struct InferContext {
  const Layer& layer;
  std::span<const ValueInfo> inputs;
  const Buffer* weights;  // the .bin, or nullptr when there is none
};

struct InferResult {
  std::vector<ValueInfo> outputs;
  std::optional<PoolGeometry> geometry;  // pooling ops on static shapes
  Diagnostics warnings;                  // e.g. output_size unknown because weights are missing
};

enum class OpKind {
  parameter,
  constant,
  result,
  avg_pool,
  adaptive_avg_pool,
  max_pool,
  adaptive_max_pool
};

struct OpEntry {
  std::string_view type;  // canonical spelling
  int version;      // op version: AvgPool 1/14/16, MaxPool 1/8/14, Adaptive*Pool 8, the rest 1
  int first_opset;  // opsets whose `version` string resolves to this entry
  int last_opset;
  OpKind kind;
  std::size_t inputs;                            // required number of inputs
  std::span<const std::string_view> attributes;  // names read from <data>
  OpAttrs (*parse)(AttrReader& reader, int version);
  InferResult (*infer)(const OpAttrs& attrs, int version, const InferContext& ctx);
};

// The entry for a layer, nullptr if its type is not one irrun implements (an opaque node).
// Throws LayerError ("unknown-opset") when `version` is one of OpenVINO's opset1..opset16 and that
// opset does not register the type (opset_ops.hpp), and when `version` begins with "opset" but is
// none of them, or is no opset of OpenVINO's for a type irrun implements.
const OpEntry* resolve_op(const Layer& layer);

// "AvgPool-14"
std::string op_label(const OpEntry& op);

// The number of outputs the op has: 0 for Result, 2 for MaxPool-8/14 and AdaptiveMaxPool-8
// (values and indices), else 1.
std::size_t output_count(const OpEntry& op);

// The tensor name update_v10_model gives output `output` of `producer` when a Result reads it
// (create_ie_output_name): the layer's name, or "name.i" when the op has several outputs (the
// op's count, e.g. MaxPool-8's two, whatever the ports declare; the ports' for an opaque op).
std::string v10_output_name(const Layer& producer, std::size_t output);

// Pooling ops, which run a kernel on a PoolGeometry.
bool is_pool(OpKind kind);

// The executed element types of the pooling kernels (every pooling op runs the same types).
bool kernel_supports(ElementType type);

}  // namespace irrun
