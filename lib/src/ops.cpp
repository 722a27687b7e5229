#include "irrun/ops.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <locale>
#include <sstream>

#include "irrun/blob.hpp"
#include "irrun/checked.hpp"
#include "irrun/number_text.hpp"
#include "irrun/opset_ops.hpp"

namespace irrun {
namespace {

constexpr std::array<std::string_view, 3> kRoundingNames{"floor", "ceil", "ceil_torch"};
constexpr std::array<std::string_view, 4> kAutoPadNames{"explicit", "same_upper", "same_lower",
                                                        "valid"};
constexpr std::array<std::string_view, 2> kParameterAttrs{"shape", "element_type"};
constexpr std::array<std::string_view, 4> kConstAttrs{"element_type", "shape", "offset", "size"};
constexpr std::array<std::string_view, 7> kAvgPoolAttrs{
    "kernel", "strides", "pads_begin", "pads_end", "exclude-pad", "rounding_type", "auto_pad"};
constexpr std::array<std::string_view, 8> kAvgPool16Attrs{
    "kernel",      "strides",       "pads_begin", "pads_end",
    "exclude-pad", "rounding_type", "auto_pad",   "dilations"};
constexpr std::array<std::string_view, 6> kMaxPool1Attrs{"kernel",   "strides",       "pads_begin",
                                                         "pads_end", "rounding_type", "auto_pad"};
constexpr std::array<std::string_view, 9> kMaxPool8Attrs{
    "kernel",   "strides",   "pads_begin",         "pads_end", "rounding_type",
    "auto_pad", "dilations", "index_element_type", "axis"};
constexpr std::array<std::string_view, 1> kAdaptiveMaxPoolAttrs{"index_element_type"};

// --- Parameter -------------------------------------------------------------------------------

OpAttrs parse_parameter(AttrReader& r, int) {
  ParameterAttrs a;
  const auto type = r.text("element_type");
  if (!type) throw LayerError("bad-attribute", "missing attribute 'element_type'");
  const auto parsed = parse_element_type_name(*type);
  if (!parsed)
    throw LayerError("bad-attribute", "attribute 'element_type': \"" + *type +
                                          "\" is not a member of enum element::Type_t");
  a.type = *parsed;
  const auto shape = r.text("shape");
  if (!shape) {
    // The op's default: a static scalar, which few pools accept.
    r.warn("missing-attribute", "no attribute 'shape': OpenVINO makes the input a scalar");
    a.shape = PartialShape::from_static({});
    r.finish(kParameterAttrs);
    return a;
  }
  try {
    a.shape = parse_partial_shape(*shape);
  } catch (const std::invalid_argument& e) {
    throw LayerError("bad-attribute", "attribute 'shape' = \"" + *shape + "\": " + e.what());
  }
  r.finish(kParameterAttrs);
  return a;
}

InferResult infer_parameter(const OpAttrs& attrs, int, const InferContext&) {
  const auto& a = std::get<ParameterAttrs>(attrs);
  return {{ValueInfo{a.shape, a.type, std::nullopt}}, std::nullopt, {}};
}

// --- Const -----------------------------------------------------------------------------------

OpAttrs parse_const(AttrReader& r, int) {
  ConstAttrs a;
  const auto type = r.text("element_type");
  if (!type)
    throw LayerError("bad-attribute", "No attributes defined for Const op! (no 'element_type')");
  // Both the enum adapter and element::Type(string) must accept the spelling: lowercase names.
  const auto parsed = parse_element_type_name(*type);
  if (!parsed || !parse_precision(*type))
    throw LayerError("bad-attribute", "attribute 'element_type': \"" + *type +
                                          "\" is not an element type OpenVINO's Const accepts "
                                          "(use a lowercase name such as f32, i64)");
  a.type = *parsed;
  if (!r.has("shape")) throw LayerError("bad-attribute", "missing attribute 'shape'");
  for (auto d : r.uint_list("shape")) {
    if (d > static_cast<std::uint64_t>(kInf)) throw LayerError("bad-attribute", "shape too large");
    a.shape.push_back(static_cast<std::int64_t>(d));
  }
  a.offset = r.mandatory_u64("offset");
  a.size = r.mandatory_u64("size");
  r.finish(kConstAttrs);
  return a;
}

InferResult infer_const(const OpAttrs& attrs, int, const InferContext& ctx) {
  const auto& a = std::get<ConstAttrs>(attrs);
  InferResult result;
  ValueInfo out{PartialShape::from_static(a.shape), a.type, std::nullopt};
  const auto count = checked_product(a.shape);
  const auto bits = count ? checked_mul(*count, bit_width(a.type)) : std::nullopt;
  if (!bits) throw LayerError("bad-weights", "shape " + to_string(a.shape) + " is too large");
  const std::uint64_t needed = *bits / 8 + (*bits % 8 ? 1 : 0);
  if (ctx.weights) {
    const auto end = checked_add(a.offset, a.size);
    if (!end || *end > ctx.weights->size())
      throw LayerError("bad-weights", "Incorrect weights in bin file! offset " +
                                          std::to_string(a.offset) + " + size " +
                                          std::to_string(a.size) + " exceeds the " +
                                          std::to_string(ctx.weights->size()) + "-byte .bin");
    if (a.size < needed)
      throw LayerError("bad-weights",
                       "Attribute and shape size are inconsistent for Const op! "
                       "size " +
                           std::to_string(a.size) + " < " + std::to_string(needed) +
                           " bytes needed for " + std::string(to_string(a.type)) + " " +
                           to_string(a.shape));
    // Small Consts feed shape inference (AdaptiveAvgPool's output_size), in any element type
    // irrun can read: OpenVINO does not check output_size's.
    if (*count <= 16 && kernel_supports(a.type)) {
      const auto t = Tensor::wrap(a.type, a.shape, ctx.weights->data() + a.offset);
      out.values = exact_values(t, *count);
    }
  }
  result.outputs.push_back(std::move(out));
  return result;
}

// --- Result ----------------------------------------------------------------------------------

OpAttrs parse_none(AttrReader& r, int) {
  r.finish({});
  return std::monostate{};
}

InferResult infer_result(const OpAttrs&, int, const InferContext&) {
  return {};
}

// --- AvgPool ---------------------------------------------------------------------------------

// The window attributes AvgPool and MaxPool share (and AvgPool's exclude-pad), in reading order.
PoolAttrs parse_window(AttrReader& r, bool avg) {
  PoolAttrs a;
  a.kernel = r.uint_list("kernel");
  a.strides = r.uint_list("strides");
  a.pads_begin = r.uint_list("pads_begin");
  a.pads_end = r.uint_list("pads_end");
  if (avg) a.exclude_pad = r.boolean("exclude-pad", true);
  a.rounding = static_cast<RoundingType>(
      r.enumeration("rounding_type", kRoundingNames, "ov::op::RoundingType", 0));
  a.auto_pad = static_cast<AutoPad>(r.enumeration("auto_pad", kAutoPadNames, "ov::op::PadType", 0));
  return a;
}

// `index_element_type` goes through the enum adapter like Parameter's element_type.
ElementType parse_index_type(AttrReader& r) {
  const auto text = r.text("index_element_type");
  if (!text) return ElementType::i64;
  const auto parsed = parse_element_type_name(*text);
  if (!parsed)
    throw LayerError("bad-attribute", "attribute 'index_element_type': \"" + *text +
                                          "\" is not a member of enum element::Type_t");
  return *parsed;
}

OpAttrs parse_avg_pool(AttrReader& r, int version) {
  PoolAttrs a = parse_window(r, true);
  if (version >= 16) {
    a.dilations = r.uint_list("dilations");
    r.finish(kAvgPool16Attrs);
  } else {
    r.finish(kAvgPoolAttrs);
  }
  return a;
}

// An input of no element type is an error, as in OpenVINO; boolean and string ones, which its
// shape inference takes (and its template plugin runs boolean AvgPool-1), are to_result's warning.
void require_typed_input(const InferContext& ctx, std::size_t i) {
  const auto t = ctx.inputs[i].type;
  if (t == ElementType::undefined || t == ElementType::dynamic)
    throw LayerError("bad-type", "input " + std::to_string(i) + " has element type " +
                                     std::string(to_string(t)) +
                                     ", expected a float or integer type");
}

InferResult to_result(PoolInference&& p, ElementType type) {
  InferResult r;
  r.outputs.push_back(ValueInfo{std::move(p.output), type, std::nullopt});
  r.geometry = p.geometry;
  if (type == ElementType::boolean || type == ElementType::string) {
    Diagnostic d;
    d.severity = Severity::warning;
    d.rule = "bad-type";
    d.message = "input 0 has element type " + std::string(to_string(type)) +
                ", not a number: OpenVINO's shape inference accepts it, but the op averages or "
                "compares numbers (irrun does not run it)";
    r.warnings.push_back(std::move(d));
  }
  if (p.empty_bins_axis) {
    Diagnostic d;
    d.severity = Severity::warning;
    d.rule = "empty-bins";
    d.message = "input spatial dimension " + std::to_string(*p.empty_bins_axis) +
                " is 0: every bin is empty, so the op cannot run (OpenVINO's shape inference "
                "accepts it, its kernel asserts)";
    r.warnings.push_back(std::move(d));
  }
  return r;
}

InferResult infer_avg_pool_op(const OpAttrs& attrs, int version, const InferContext& ctx) {
  require_typed_input(ctx, 0);
  try {
    return to_result(infer_avg_pool(std::get<PoolAttrs>(attrs), version, ctx.inputs[0].shape),
                     ctx.inputs[0].type);
  } catch (const ValidationError& e) {
    throw LayerError("validation", e.what());
  }
}

// --- MaxPool ---------------------------------------------------------------------------------

OpAttrs parse_max_pool(AttrReader& r, int version) {
  PoolAttrs a = parse_window(r, false);
  if (version == 1) {
    r.finish(kMaxPool1Attrs);
    return a;
  }
  a.dilations = r.uint_list("dilations");
  a.index_element_type = parse_index_type(r);
  a.axis = r.int64("axis", 0);
  r.finish(kMaxPool8Attrs);
  return a;
}

// Values take the input's type; MaxPool-8/14 add indices of the same shape. i32 indices beyond
// 2^31 - 1 wrap (as in OpenVINO, which casts them): a warning says so when some position can be
// past it (a range of 2^31 positions ends at 2^31 - 1, which fits).
InferResult with_indices(InferResult r, int version, ElementType index_type) {
  if (version < 8) return r;
  r.outputs.push_back(ValueInfo{r.outputs[0].shape, index_type, std::nullopt});
  if (index_type == ElementType::i32 && r.geometry &&
      r.geometry->index_range() - 1 > std::numeric_limits<std::int32_t>::max()) {
    Diagnostic d;
    d.severity = Severity::warning;
    d.rule = "index-overflow";
    d.message = "indices: i32 indices range over " + std::to_string(r.geometry->index_range()) +
                " positions, so those beyond 2147483647 wrap; use index_element_type=\"i64\"";
    r.warnings.push_back(std::move(d));
  }
  return r;
}

InferResult infer_max_pool_op(const OpAttrs& attrs, int version, const InferContext& ctx) {
  require_typed_input(ctx, 0);
  const auto& a = std::get<PoolAttrs>(attrs);
  try {
    return with_indices(
        to_result(infer_max_pool(a, version, ctx.inputs[0].shape), ctx.inputs[0].type), version,
        a.index_element_type);
  } catch (const ValidationError& e) {
    throw LayerError("validation", e.what());
  }
}

// --- AdaptiveAvgPool / AdaptiveMaxPool
// -----------------------------------------------------------------------------------------------------------------------------

OpAttrs parse_adaptive_max_pool(AttrReader& r, int) {
  PoolAttrs a;
  a.index_element_type = parse_index_type(r);
  r.finish(kAdaptiveMaxPoolAttrs);
  return a;
}

// The output_size input (1) should be i32/i64; OpenVINO does not check it.
Diagnostics output_size_warnings(const InferContext& ctx) {
  const auto& size = ctx.inputs[1];
  Diagnostics warnings;
  if (size.type != ElementType::i32 && size.type != ElementType::i64) {
    Diagnostic d;
    d.severity = Severity::warning;
    d.rule = "bad-type";
    d.port = "input 1";
    d.message = "output_size has element type " + std::string(to_string(size.type)) +
                "; the specification allows i32 or i64";
    warnings.push_back(std::move(d));
  }
  return warnings;
}

// output_size's values as dims, as OpenVINO takes them (InTypeRange<int64_t>): each value of any
// element type range-checked, then cast toward zero (2.7 gives 2); NaN or 1e30 is an error.
std::optional<std::vector<std::int64_t>> output_size_dims(const ValueInfo& size) {
  if (!size.values) return std::nullopt;
  constexpr auto lo = std::numeric_limits<std::int64_t>::min();
  constexpr auto hi = std::numeric_limits<std::int64_t>::max();
  std::vector<std::int64_t> dims;
  for (const long double v : *size.values) {
    if (!(v >= static_cast<long double>(lo) && v <= static_cast<long double>(hi))) {
      // Exactly (long double holds every value): 2^63 must not print as a rounded 9.22337e+18.
      const std::string text =
          std::isfinite(v) && v == std::trunc(v) ? fixed_text(v, 0) : general_text(v, 21);
      std::ostringstream s;
      s.imbue(std::locale::classic());
      s << "output_size value " << text << " not in range [" << lo << ":" << hi << "]";
      throw LayerError("validation", s.str());
    }
    dims.push_back(static_cast<std::int64_t>(v));
  }
  return dims;
}

InferResult infer_adaptive_avg_pool_op(const OpAttrs&, int, const InferContext& ctx) {
  require_typed_input(ctx, 0);
  const auto& size = ctx.inputs[1];
  try {
    auto r =
        to_result(infer_adaptive_avg_pool(ctx.inputs[0].shape, size.shape, output_size_dims(size)),
                  ctx.inputs[0].type);
    for (auto& w : output_size_warnings(ctx)) r.warnings.push_back(std::move(w));
    return r;
  } catch (const ValidationError& e) {
    throw LayerError("validation", e.what());
  }
}

InferResult infer_adaptive_max_pool_op(const OpAttrs& attrs, int, const InferContext& ctx) {
  require_typed_input(ctx, 0);
  const auto& a = std::get<PoolAttrs>(attrs);
  const auto& size = ctx.inputs[1];
  try {
    auto r = with_indices(to_result(infer_adaptive_max_pool(a, ctx.inputs[0].shape, size.shape,
                                                            output_size_dims(size)),
                                    ctx.inputs[0].type),
                          8, a.index_element_type);
    for (auto& w : output_size_warnings(ctx)) r.warnings.push_back(std::move(w));
    return r;
  } catch (const ValidationError& e) {
    throw LayerError("validation", e.what());
  }
}

constexpr std::array<OpEntry, 11> kOps{{
    {"Parameter", 1, 1, 16, OpKind::parameter, 0, kParameterAttrs, parse_parameter,
     infer_parameter},
    {"Constant", 1, 1, 15, OpKind::constant, 0, kConstAttrs, parse_const, infer_const},
    {"Result", 1, 1, 15, OpKind::result, 1, {}, parse_none, infer_result},
    {"AvgPool", 1, 1, 13, OpKind::avg_pool, 1, kAvgPoolAttrs, parse_avg_pool, infer_avg_pool_op},
    {"AvgPool", 14, 14, 15, OpKind::avg_pool, 1, kAvgPoolAttrs, parse_avg_pool, infer_avg_pool_op},
    {"AvgPool", 16, 16, 16, OpKind::avg_pool, 1, kAvgPool16Attrs, parse_avg_pool,
     infer_avg_pool_op},
    {"AdaptiveAvgPool",
     8,
     8,
     15,
     OpKind::adaptive_avg_pool,
     2,
     {},
     parse_none,
     infer_adaptive_avg_pool_op},
    {"MaxPool", 1, 1, 7, OpKind::max_pool, 1, kMaxPool1Attrs, parse_max_pool, infer_max_pool_op},
    {"MaxPool", 8, 8, 13, OpKind::max_pool, 1, kMaxPool8Attrs, parse_max_pool, infer_max_pool_op},
    {"MaxPool", 14, 14, 15, OpKind::max_pool, 1, kMaxPool8Attrs, parse_max_pool, infer_max_pool_op},
    {"AdaptiveMaxPool", 8, 8, 15, OpKind::adaptive_max_pool, 2, kAdaptiveMaxPoolAttrs,
     parse_adaptive_max_pool, infer_adaptive_max_pool_op},
}};

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::optional<int> opset_number(std::string_view version) {
  if (version.substr(0, 5) != "opset") return std::nullopt;
  int n = 0;
  const auto digits = version.substr(5);
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  // OpenVINO looks the name up as written: "opset08" is none of its opsets.
  if (digits.empty() || digits[0] == '0' || ec != std::errc() ||
      ptr != digits.data() + digits.size())
    return std::nullopt;
  return n;
}

// The name OpenVINO's IR reader looks a type up by (translate_type_name): four spellings, exactly
// so written, are renamed; "const" is not Const.
std::string_view reader_type_name(std::string_view type) {
  if (type == "Const") return "Constant";
  if (type == "PReLU") return "PRelu";
  if (type == "ReLU") return "Relu";
  if (type == "SoftMax") return "Softmax";
  return type;
}

}  // namespace

const OpEntry* resolve_op(const Layer& layer) {
  const std::string_view type = reader_type_name(layer.type);
  bool known = false;
  for (const auto& op : kOps) known = known || iequals(op.type, type);
  const auto opset = opset_number(layer.version);
  const bool valid_opset = opset && *opset >= 1 && *opset <= kLatestOpset;
  // Any other op may live in an opset an extension registers, but "opset<N>" names are
  // OpenVINO's own: one it does not have fails the read whatever the type.
  const bool opset_name = layer.version.starts_with("opset");
  if (!valid_opset && (known || opset_name))
    throw LayerError("unknown-opset", "Cannot create " + layer.type +
                                          " layer from unsupported opset: " + layer.version);
  if (!valid_opset) return nullptr;
  // OpenVINO's IR reader takes opset1's MVN, ROIPooling and ReorgYolo (so spelled) from opset2.
  const bool from_opset2 =
      *opset == 1 && (type == "MVN" || type == "ROIPooling" || type == "ReorgYolo");
  if (!opset_contains(from_opset2 ? 2 : *opset, type)) {
    std::string message =
        "Opset " + layer.version + " doesn't contain the operation with type: " + std::string(type);
    if (iequals(type, "Const"))
      message += " (did you mean Const? Only that spelling is Constant)";
    else if (const auto in = opsets_of(type); !in.empty())
      message += " (" + std::string(type) + " is in " + in + ")";
    else if (const auto near = nearest_op(*opset, type))
      message += " (did you mean " + std::string(*near) + "?" +
                 (type.find_first_of(" \t\n\r\f\v") != std::string_view::npos
                      ? " the type \"" + layer.type + "\" has whitespace"
                      : "") +
                 ")";
    throw LayerError("unknown-opset", message);
  }
  if (!known) return nullptr;  // an op of OpenVINO's that irrun does not implement: opaque
  for (const auto& op : kOps) {
    if (iequals(op.type, type) && *opset >= op.first_opset && *opset <= op.last_opset) return &op;
  }
  // kOps covers every opset the table gives an op irrun implements (tests/opset_ops_test.cpp).
  throw LayerError(
      "unknown-opset",
      "Opset " + layer.version + " doesn't contain the operation with type: " + std::string(type));
}

std::string op_label(const OpEntry& op) {
  return std::string(op.type) + "-" + std::to_string(op.version);
}

std::size_t output_count(const OpEntry& op) {
  if (op.kind == OpKind::result) return 0;
  if (op.kind == OpKind::adaptive_max_pool || (op.kind == OpKind::max_pool && op.version >= 8))
    return 2;
  return 1;
}

std::string v10_output_name(const Layer& producer, std::size_t output) {
  std::size_t outputs = producer.outputs.size();
  try {
    if (const auto* op = resolve_op(producer)) outputs = output_count(*op);
  } catch (const LayerError&) {
  }
  return outputs == 1 ? producer.name : producer.name + "." + std::to_string(output);
}

bool is_pool(OpKind kind) {
  return kind == OpKind::avg_pool || kind == OpKind::adaptive_avg_pool ||
         kind == OpKind::max_pool || kind == OpKind::adaptive_max_pool;
}

bool kernel_supports(ElementType type) {
  switch (type) {
    case ElementType::f32:
    case ElementType::f16:
    case ElementType::bf16:
    case ElementType::f64:
    case ElementType::i8:
    case ElementType::i16:
    case ElementType::i32:
    case ElementType::i64:
    case ElementType::u8:
    case ElementType::u16:
    case ElementType::u32:
    case ElementType::u64:
      return true;
    default:
      return false;
  }
}

}  // namespace irrun
