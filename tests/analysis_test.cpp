// Tests of whole-graph shape inference on small in-memory models: which ops are inferred and
// which stay opaque, attribute warnings and errors (docs/openvino-semantics.md section 1
// "<data> attributes"), opset resolution, AvgPool/AdaptiveAvgPool shapes and validation
// messages (sections 2 and 4), and that one failing layer does not hide the others.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "irrun/analysis.hpp"
#include "irrun/ir_reader.hpp"
#include "support/ir_strings.hpp"

using irrun::Analysis;
using irrun::Diagnostic;
using irrun::Dim;
using irrun::ElementType;
using irrun::PartialShape;
using irrun::Severity;

namespace {

using irrun::testing::dims_xml;
using irrun::testing::edge;
using irrun::testing::in_port;
using irrun::testing::layer;
using irrun::testing::out_port;
using irrun::testing::parameter_text;
using irrun::testing::result;

std::string ir(const std::string& layers, const std::string& edges) {
  return irrun::testing::net(layers, edges);
}

// Parameter(0) -> pool(1) -> Result(2).
std::string pool_model(const std::string& type, const std::string& version, const std::string& data,
                       const std::string& in_dims, const std::string& out_dims) {
  return ir(parameter_text(0, "in", in_dims) +
                layer(1, "pool", type, version, data, in_port(0, in_dims),
                      out_port(1, "FP32", out_dims)) +
                result(2, "out", out_dims),
            edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
}

struct Analyzed {
  irrun::IrModel model;
  irrun::Graph graph;
  Analysis analysis;
};

Analyzed analyze_xml(const std::string& xml,
                     const std::map<std::size_t, PartialShape>& shapes = {}) {
  Analyzed a;
  a.model = irrun::parse_ir(xml, "a.xml");
  a.graph = irrun::build_graph(a.model);
  a.analysis = irrun::analyze(a.model, a.graph, nullptr, shapes);
  return a;
}

std::vector<const Diagnostic*> with_rule(const Analysis& a, const std::string& rule) {
  std::vector<const Diagnostic*> out;
  for (const auto& d : a.diagnostics) {
    if (d.rule == rule) out.push_back(&d);
  }
  return out;
}

PartialShape shape(std::vector<Dim> dims) {
  return PartialShape(std::move(dims));
}
PartialShape fixed(const std::vector<std::int64_t>& dims) {
  return PartialShape::from_static(dims);
}

}  // namespace

TEST_CASE("Parameter -> AvgPool -> Result is inferred", "[analysis]") {
  const auto a = analyze_xml(pool_model("AvgPool", "opset1",
                                        "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" "
                                        "pads_end=\"0,0\" exclude-pad=\"true\"",
                                        "1,3,8,8", "1,3,4,4"));
  CHECK(a.analysis.diagnostics.empty());
  REQUIRE(a.analysis.nodes.size() == 3);
  for (const auto& n : a.analysis.nodes) {
    CHECK(n.inferred);
    REQUIRE(n.op != nullptr);
  }
  CHECK(a.analysis.nodes[0].op->kind == irrun::OpKind::parameter);
  CHECK(a.analysis.nodes[1].op->kind == irrun::OpKind::avg_pool);
  CHECK(irrun::op_label(*a.analysis.nodes[1].op) == "AvgPool-1");
  CHECK(a.analysis.nodes[2].op->kind == irrun::OpKind::result);
  REQUIRE(a.analysis.nodes[1].outputs.size() == 1);
  CHECK(a.analysis.nodes[1].outputs[0].shape == fixed({1, 3, 4, 4}));
  CHECK(a.analysis.nodes[1].outputs[0].type == ElementType::f32);
  REQUIRE(a.analysis.nodes[1].geometry.has_value());
  CHECK(a.analysis.nodes[1].geometry->out[2] == 4);
  CHECK(a.analysis.nodes[0].outputs[0].shape == fixed({1, 3, 8, 8}));
  CHECK(a.analysis.nodes[2].outputs.empty());
}

TEST_CASE("AvgPool output shapes", "[analysis]") {
  struct Case {
    const char* name;
    const char* version;
    std::string data;
    const char* in_dims;  // Parameter shape attribute
    PartialShape expected;
  };
  const std::vector<Case> cases = {
      {"floor", "opset1", "kernel=\"3,3\" strides=\"2,2\" rounding_type=\"floor\"", "1,3,8,8",
       fixed({1, 3, 3, 3})},
      {"ceil", "opset1", "kernel=\"3,3\" strides=\"2,2\" rounding_type=\"CEIL\"", "1,3,8,8",
       fixed({1, 3, 4, 4})},
      {"pads", "opset1", "kernel=\"3\" strides=\"1\" pads_begin=\"1\" pads_end=\"1\"", "2,4,10",
       fixed({2, 4, 10})},
      {"same_upper stride 2", "opset1", "kernel=\"2,2\" strides=\"2,2\" auto_pad=\"same_upper\"",
       "1,1,32,32", fixed({1, 1, 16, 16})},
      {"valid", "opset8", "kernel=\"2,2,2\" strides=\"1,1,1\" auto_pad=\"VALID\"", "1,1,4,5,6",
       fixed({1, 1, 3, 4, 5})},
      // Section 2: D=9, K=2, s=2, pb=pe=1 -> ceil 6, ceil_torch 5.
      {"ceil_torch opset14", "opset14",
       "kernel=\"2\" strides=\"2\" pads_begin=\"1\" pads_end=\"1\" rounding_type=\"ceil_torch\"",
       "1,1,9", fixed({1, 1, 5})},
      {"ceil opset14", "opset14",
       "kernel=\"2\" strides=\"2\" pads_begin=\"1\" pads_end=\"1\" rounding_type=\"ceil\"", "1,1,9",
       fixed({1, 1, 6})},
      {"ceil_torch opset15", "opset15",
       "kernel=\"2\" strides=\"2\" pads_begin=\"1\" pads_end=\"1\" rounding_type=\"ceil_torch\"",
       "1,1,3", fixed({1, 1, 2})},
      // Section 2, AvgPool-16: 100x150, K=(10,20), d=2, s=(2,3), ceil_torch -> 42x38.
      {"dilations opset16", "opset16",
       "kernel=\"10,20\" strides=\"2,3\" dilations=\"2,2\" rounding_type=\"ceil_torch\"",
       "1,1,100,150", fixed({1, 1, 42, 38})},
      // Section 2: `?` becomes `1..` ([-1,-1,-1], K=4, s=4, p=2/2, ceil -> [-1,-1,1..]).
      {"dynamic dims", "opset1",
       "kernel=\"4\" strides=\"4\" pads_begin=\"2\" pads_end=\"2\" rounding_type=\"ceil\"", "?,?,?",
       shape({Dim::dynamic(), Dim::dynamic(), Dim::interval(1, irrun::kInf)})},
      {"interval batch copied", "opset1", "kernel=\"2\" strides=\"2\"", "1..4,3,8",
       shape({Dim::interval(1, 4), Dim::fixed(3), Dim::fixed(4)})},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    std::string in_dims;
    const std::string sh = c.in_dims;
    // <dim> of the Parameter: -1 for anything not static.
    std::size_t start = 0;
    while (start <= sh.size()) {
      auto comma = sh.find(',', start);
      if (comma == std::string::npos) comma = sh.size();
      const auto field = sh.substr(start, comma - start);
      in_dims +=
          (in_dims.empty() ? "" : ",") +
          (field.find_first_not_of("0123456789") == std::string::npos ? field : std::string("-1"));
      start = comma + 1;
    }
    const std::string xml =
        ir(layer(0, "in", "Parameter", "opset1", "shape=\"" + sh + "\" element_type=\"f32\"", "",
                 out_port(0, "FP32", in_dims)) +
               layer(1, "pool", "AvgPool", c.version, c.data, in_port(0, in_dims),
                     out_port(1, "FP32", "")) +
               result(2, "out", ""),
           edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
    const auto a = analyze_xml(xml);
    CAPTURE(a.analysis.diagnostics.empty() ? std::string()
                                           : irrun::format(a.model, a.analysis.diagnostics[0]));
    CHECK(with_rule(a.analysis, "validation").empty());
    REQUIRE(a.analysis.nodes[1].inferred);
    CHECK(irrun::to_string(a.analysis.nodes[1].outputs[0].shape) == irrun::to_string(c.expected));
    CHECK(a.analysis.nodes[1].geometry.has_value() == c.expected.is_static());
  }
}

TEST_CASE("opaque ops keep their declared outputs and later pools are still inferred",
          "[analysis]") {
  const std::string xml =
      ir(parameter_text(0, "in", "1,3,8,8") +
             layer(1, "conv", "Convolution", "opset1",
                   "strides=\"1,1\" dilations=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\"",
                   in_port(0, "1,3,8,8"), out_port(1, "FP16", "1,16,-1,6")) +
             layer(2, "pool", "AvgPool", "opset1", "kernel=\"2,2\" strides=\"2,2\"",
                   in_port(0, "1,16,6,6"), out_port(1, "FP32", "1,16,3,3")) +
             result(3, "out", "1,16,3,3"),
         edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(2, 1, 3, 0));
  const auto a = analyze_xml(xml);
  CHECK(a.analysis.diagnostics.empty());
  const auto& conv = a.analysis.nodes[1];
  CHECK(conv.op == nullptr);
  CHECK_FALSE(conv.inferred);
  REQUIRE(conv.outputs.size() == 1);
  CHECK(conv.outputs[0].shape ==
        shape({Dim::fixed(1), Dim::fixed(16), Dim::dynamic(), Dim::fixed(6)}));
  CHECK(conv.outputs[0].type == ElementType::f16);
  const auto& pool = a.analysis.nodes[2];
  CHECK(pool.inferred);
  // Inferred from the Convolution's declared output, not from the pool's own input <dim>s.
  // A dynamic dim pools to `1..` (section 2, "Intervals / dynamic dims").
  CHECK(pool.outputs[0].shape ==
        shape({Dim::fixed(1), Dim::fixed(16), Dim::interval(1, irrun::kInf), Dim::fixed(3)}));
  CHECK(pool.outputs[0].type == ElementType::f16);
}

TEST_CASE("declared_outputs reads <dim>s and precisions", "[analysis]") {
  const auto m = irrun::parse_ir(ir(layer(0, "x", "Foo", "extension", "", "",
                                          out_port(3, "I64", "2,-1") + out_port(4, "FP16", "")),
                                    ""),
                                 "a.xml");
  const auto out = irrun::declared_outputs(m.layers[0]);
  REQUIRE(out.size() == 2);
  CHECK(out[0].shape == shape({Dim::fixed(2), Dim::dynamic()}));
  CHECK(out[0].type == ElementType::i64);
  CHECK(out[1].shape == fixed({}));
  CHECK(out[1].type == ElementType::f16);
}

TEST_CASE("attribute leniency: warnings where OpenVINO silently ignores", "[analysis]") {
  struct Case {
    const char* name;
    std::string data;
    const char* rule;
    std::vector<std::string> message;
  };
  const std::string base = "kernel=\"2,2\" strides=\"2,2\" ";
  const std::vector<Case> cases = {
      {"exclude_pad",
       base + "exclude_pad=\"false\"",
       "unknown-attribute",
       {"'exclude_pad'", "AvgPool-1", "did you mean 'exclude-pad'"}},
      {"Rounding_Type",
       base + "Rounding-Type=\"floor\"",
       "unknown-attribute",
       {"did you mean 'rounding_type'"}},
      {"data_format", base + "data_format=\"NXC\"", "unknown-attribute", {"'data_format'"}},
      {"dilations on AvgPool-1",
       base + "dilations=\"1,1\"",
       "unknown-attribute",
       {"'dilations'", "AvgPool-1"}},
      {"bool yes",
       base + "exclude-pad=\"yes\"",
       "bad-bool",
       {"'exclude-pad'", "\"yes\"", "keeps the default true"}},
      {"bool empty", base + "exclude-pad=\"\"", "bad-bool", {"'exclude-pad'"}},
      {"non-numeric list field",
       "kernel=\"2,x\" strides=\"2,2\"",
       "bad-number",
       {"'kernel'", "'x'", "read by OpenVINO as 0"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto a = analyze_xml(pool_model("AvgPool", "opset1", c.data, "1,3,8,8", "1,3,4,4"));
    const auto found = with_rule(a.analysis, c.rule);
    REQUIRE(found.size() == 1);
    CHECK(found[0]->severity == Severity::warning);
    CHECK(found[0]->layer == std::optional<std::size_t>(1));
    // Attribute warnings point at the <data> element that holds the attribute.
    CHECK(found[0]->line == a.model.layers[1].data_line);
    for (const auto& s : c.message) CHECK_THAT(found[0]->message, Catch::Contains(s));
  }
}

TEST_CASE("bad bool keeps the default exclude-pad=true", "[analysis]") {
  // With exclude-pad true a kernel entirely in the padding is a validation error; with false it
  // is accepted (section 2, validation step 7).
  const std::string data = "kernel=\"2\" strides=\"1\" pads_begin=\"2\" pads_end=\"0\" ";
  const auto rejected =
      analyze_xml(pool_model("AvgPool", "opset1", data + "exclude-pad=\"no\"", "1,1,4", "1,1,5"));
  CHECK(with_rule(rejected.analysis, "validation").size() == 1);
  const auto accepted = analyze_xml(
      pool_model("AvgPool", "opset1", data + "exclude-pad=\"FALSE\"", "1,1,4", "1,1,5"));
  CHECK(accepted.analysis.diagnostics.empty());
  CHECK(accepted.analysis.nodes[1].outputs[0].shape == fixed({1, 1, 5}));
}

TEST_CASE("exclude-pad spellings: OpenVINO's bool rules", "[analysis]") {
  // Section 1, bool: lowercased, then true/1 or false/0; any other value (no trimming) is
  // ignored, keeping the default true, which irrun warns about (bad-bool). The probe: a kernel
  // entirely in the padding is a validation error only when exclude-pad is true.
  struct Case {
    const char* value;
    bool exclude_pad;  // what the op ends up with
    bool warned;
  };
  const std::vector<Case> cases = {
      {"true", true, false},   {"True", true, false},   {"TRUE", true, false},
      {"1", true, false},      {"false", false, false}, {"False", false, false},
      {"fAlSe", false, false}, {"0", false, false},     {" false", true, true},
      {"false ", true, true},  {"0 ", true, true},      {"00", true, true},
      {"+0", true, true},      {"f", true, true},       {"off", true, true},
  };
  const std::string data = "kernel=\"2\" strides=\"1\" pads_begin=\"2\" pads_end=\"0\" ";
  for (const auto& c : cases) {
    CAPTURE(c.value);
    const auto a = analyze_xml(pool_model(
        "AvgPool", "opset1", data + "exclude-pad=\"" + c.value + "\"", "1,1,4", "1,1,5"));
    CHECK(with_rule(a.analysis, "validation").size() == (c.exclude_pad ? 1u : 0u));
    const auto warnings = with_rule(a.analysis, "bad-bool");
    CHECK(warnings.size() == (c.warned ? 1u : 0u));
    if (c.warned && warnings.size() == 1) {
      CHECK(warnings[0]->severity == Severity::warning);
      CHECK_THAT(warnings[0]->message, Catch::Contains("\"" + std::string(c.value) + "\"") &&
                                           Catch::Contains("keeps the default true"));
    }
    CHECK(a.analysis.diagnostics.size() == (c.exclude_pad ? 1u : 0u) + (c.warned ? 1u : 0u));
  }
}

TEST_CASE("attribute errors", "[analysis]") {
  struct Case {
    const char* name;
    const char* version;
    std::string data;
    const char* rule;
    std::vector<std::string> message;
  };
  const std::string base = "kernel=\"2,2\" strides=\"2,2\" ";
  const std::vector<Case> cases = {
      {"rounding_type xyz",
       "opset1",
       base + "rounding_type=\"xyz\"",
       "bad-attribute",
       {"\"xyz\" is not a member of enum ov::op::RoundingType"}},
      {"auto_pad xyz",
       "opset1",
       base + "auto_pad=\"xyz\"",
       "bad-attribute",
       {"\"xyz\" is not a member of enum ov::op::PadType"}},
      {"auto_pad notset",
       "opset1",
       base + "auto_pad=\"notset\"",
       "bad-attribute",
       {"\"notset\" is not a member of enum ov::op::PadType"}},
      {"auto_pad auto",
       "opset1",
       base + "auto_pad=\"auto\"",
       "bad-attribute",
       {"\"auto\" is not a member of enum ov::op::PadType"}},
      {"empty list field",
       "opset1",
       "kernel=\"2,,2\" strides=\"2,2\"",
       "bad-attribute",
       {"Cannot get vector of parameters! \"2,,2\" is incorrect"}},
      {"leading comma",
       "opset1",
       "kernel=\",2\" strides=\"2,2\"",
       "bad-attribute",
       {"Cannot get vector of parameters!"}},
      {"ceil_torch in AvgPool-1",
       "opset1",
       base + "rounding_type=\"ceil_torch\"",
       "validation",
       {"Rounding CEIL_TORCH is not supported."}},
      {"no strides",
       "opset1",
       "kernel=\"2,2\"",
       "validation",
       {"Expected strides size to be equal to input size - 2. Got: 0"}},
      {"zero stride",
       "opset1",
       "kernel=\"2,2\" strides=\"0,2\"",
       "validation",
       {"Strides has zero dimension(s)."}},
      // OpenVINO compares strides and pads with the kernel's length (num_spatial), although
      // the messages say "input size - 2"; the kernel is compared with the rank last.
      {"strides longer than the kernel",
       "opset1",
       "kernel=\"2\" strides=\"2,2\"",
       "validation",
       {"Expected strides size to be equal to input size - 2. Got: 2"}},
      {"pads longer than the kernel",
       "opset1",
       "kernel=\"2\" strides=\"2\" pads_begin=\"0,0\" pads_end=\"0,0\"",
       "validation",
       {"Expected pads_begin size to be equal to input size - 2. Got: 2"}},
      {"kernel rank",
       "opset1",
       "kernel=\"2\" strides=\"2\"",
       "validation",
       {"Expected kernel size to be equal to input size - 2. Got: 1"}},
      {"pads_begin rank",
       "opset1",
       base + "pads_begin=\"0\"",
       "validation",
       {"Expected pads_begin size to be equal to input size - 2. Got: 1"}},
      {"kernel larger than input",
       "opset1",
       "kernel=\"10,2\" strides=\"1,1\"",
       "validation",
       {"Kernel after dilation has size (dim: 10) larger than the data shape after padding "
        "(dim: 8) at axis 0."}},
      {"dilations rank opset16",
       "opset16",
       base + "dilations=\"1\"",
       "validation",
       {"Expected dilations size to be equal to kernel size. Got: 1"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto a = analyze_xml(pool_model("AvgPool", c.version, c.data, "1,3,8,8", "1,3,4,4"));
    const auto found = with_rule(a.analysis, c.rule);
    REQUIRE(found.size() == 1);
    CHECK(found[0]->severity == Severity::error);
    CHECK(found[0]->layer == std::optional<std::size_t>(1));
    for (const auto& s : c.message) CHECK_THAT(found[0]->message, Catch::Contains(s));
    // The failed layer contributes its declared outputs.
    CHECK_FALSE(a.analysis.nodes[1].inferred);
    CHECK(a.analysis.nodes[1].outputs[0].shape == fixed({1, 3, 4, 4}));
    // The Result after it is still analysed.
    CHECK(a.analysis.nodes[2].inferred);
  }
}

TEST_CASE("opset resolution", "[analysis]") {
  struct Case {
    const char* type;
    const char* version;
    std::optional<int> op_version;  // nullopt: an unknown-opset error; 0: opaque, not an irrun op
    const char* message;
  };
  const std::vector<Case> cases = {
      {"AvgPool", "opset1", 1, ""},
      {"AvgPool", "opset8", 1, ""},
      {"AvgPool", "opset13", 1, ""},
      {"avgpool", "opset13", 1, ""},  // case-insensitive type
      {"AvgPool", "opset14", 14, ""},
      {"AvgPool", "opset15", 14, ""},
      {"AvgPool", "opset16", 16, ""},
      {"AvgPool", "opset99", std::nullopt, "from unsupported opset: opset99"},
      {"AvgPool", "opset0", std::nullopt, "from unsupported opset: opset0"},
      {"AvgPool", "extension", std::nullopt, "from unsupported opset: extension"},
      {"AvgPool", "Opset1", std::nullopt, "from unsupported opset: Opset1"},
      // OpenVINO looks the name up as it is: "opset01" is no opset of its own.
      {"AvgPool", "opset01", std::nullopt, "from unsupported opset: opset01"},
      {"Parameter", "opset001", std::nullopt, "from unsupported opset: opset001"},
      {"AdaptiveAvgPool", "opset8", 8, ""},
      {"AdaptiveAvgPool", "opset15", 8, ""},
      {"AdaptiveAvgPool", "opset5", std::nullopt,
       "Opset opset5 doesn't contain the operation with type: AdaptiveAvgPool"},
      {"AdaptiveAvgPool", "opset16", std::nullopt,
       "Opset opset16 doesn't contain the operation with type: AdaptiveAvgPool"},
      {"Result", "opset16", std::nullopt,
       "Opset opset16 doesn't contain the operation with type: Result"},
      {"Const", "opset1", 1, ""},
      {"Constant", "opset15", 1, ""},
      {"Parameter", "opset16", 1, ""},
      // Ops irrun does not implement: opaque in an opset of OpenVINO's that registers them
      // (tests/opset_ops_test.cpp has the ones that do not), or in an extension's; a version
      // beginning with "opset" that is not one of OpenVINO's fails whatever the type.
      {"Convolution", "opset1", 0, ""},
      {"Convolution", "opset8", 0, ""},
      {"GRUCell", "experimental", 0, ""},
      {"MyOp", "custom_opset", 0, ""},
      {"Convolution", "opset99", std::nullopt,
       "Cannot create Convolution layer from unsupported opset: opset99"},
      {"Convolution", "opset0", std::nullopt, "from unsupported opset: opset0"},
      {"Convolution", "opset17", std::nullopt, "from unsupported opset: opset17"},
      {"Convolution", "opset", std::nullopt, "from unsupported opset: opset"},
      {"MyOp", "opset1x", std::nullopt, "from unsupported opset: opset1x"},
      {"Convolution", "opset08", std::nullopt, "from unsupported opset: opset08"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.type, c.version);
    irrun::Layer l;
    l.id = 4;
    l.name = "x";
    l.type = c.type;
    l.version = c.version;
    if (c.op_version == 0) {
      CHECK(irrun::resolve_op(l) == nullptr);
    } else if (c.op_version) {
      const auto* op = irrun::resolve_op(l);
      REQUIRE(op != nullptr);
      CHECK(op->version == *c.op_version);
      CHECK_THAT(irrun::describe(l),
                 Catch::Contains("-" + std::to_string(*c.op_version) + " " + c.version + ")"));
    } else {
      try {
        irrun::resolve_op(l);
        FAIL("no error");
      } catch (const irrun::LayerError& e) {
        CHECK(e.rule() == "unknown-opset");
        CHECK_THAT(std::string(e.what()), Catch::Contains(c.message));
      }
    }
  }
}

TEST_CASE("unsupported opset in a model is a layer error; other layers go on", "[analysis]") {
  const auto a = analyze_xml(
      pool_model("AvgPool", "opset99", "kernel=\"2,2\" strides=\"2,2\"", "1,3,8,8", "1,3,4,4"));
  const auto found = with_rule(a.analysis, "unknown-opset");
  REQUIRE(found.size() == 1);
  CHECK(found[0]->layer == std::optional<std::size_t>(1));
  CHECK_THAT(irrun::format(a.model, *found[0]),
             Catch::Contains("a.xml:" + std::to_string(a.model.layers[1].line) +
                             ": error: layer 1 'pool' (AvgPool opset99): Cannot create AvgPool"));
  CHECK(a.analysis.nodes[0].inferred);
  CHECK(a.analysis.nodes[2].inferred);
}

TEST_CASE("AdaptiveAvgPool with output_size from a Parameter has dynamic spatial dims",
          "[analysis]") {
  const std::string xml =
      ir(parameter_text(0, "in", "2,3,10,12") + parameter_text(1, "size", "2", "i64", "I64") +
             layer(2, "pool", "AdaptiveAvgPool", "opset8", "",
                   in_port(0, "2,3,10,12") + in_port(1, "2"), out_port(2, "FP32", "2,3,5,4")) +
             result(3, "out", "2,3,5,4"),
         edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0));
  const auto a = analyze_xml(xml);
  CHECK(a.analysis.diagnostics.empty());
  REQUIRE(a.analysis.nodes[2].inferred);
  CHECK(a.analysis.nodes[2].outputs[0].shape ==
        shape({Dim::fixed(2), Dim::fixed(3), Dim::dynamic(), Dim::dynamic()}));
  CHECK(a.analysis.nodes[2].outputs[0].type == ElementType::f32);
  CHECK_FALSE(a.analysis.nodes[2].geometry.has_value());
}

TEST_CASE("AdaptiveAvgPool validation", "[analysis]") {
  struct Case {
    const char* name;
    const char* data_shape;
    const char* data_dims;
    const char* size_shape;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"rank 2", "2,3", "2,3", "0", "Expected a 3D, 4D or 5D tensor for the input. Got:"},
      {"output_size length", "2,3,10,12", "2,3,10,12", "3",
       "Output shape for spatial dimension not compatible with data shape."},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const std::string xml =
        ir(parameter_text(0, "in", c.data_shape) +
               parameter_text(1, "size", c.size_shape, "i64", "I64") +
               layer(2, "pool", "AdaptiveAvgPool", "opset8", "",
                     in_port(0, c.data_dims) + in_port(1, c.size_shape), out_port(2, "FP32", "")) +
               result(3, "out", ""),
           edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0));
    const auto a = analyze_xml(xml);
    const auto found = with_rule(a.analysis, "validation");
    REQUIRE(found.size() == 1);
    CHECK_THAT(found[0]->message, Catch::Contains(c.message));
  }
}

TEST_CASE("input and output counts of known ops", "[analysis]") {
  const std::string two_inputs =
      ir(parameter_text(0, "in", "1,1,4") +
             layer(1, "pool", "AvgPool", "opset1", "kernel=\"2\" strides=\"2\"",
                   in_port(0, "1,1,4") + in_port(1, "1,1,4"), out_port(2, "FP32", "1,1,2")) +
             result(2, "out", "1,1,2"),
         edge(0, 0, 1, 0) + edge(0, 0, 1, 1) + edge(1, 2, 2, 0));
  const auto a = analyze_xml(two_inputs);
  const auto found = with_rule(a.analysis, "bad-inputs");
  REQUIRE(found.size() == 1);
  CHECK_THAT(found[0]->message, Catch::Contains("AvgPool-1 takes 1 input(s)"));

  const std::string two_outputs =
      ir(parameter_text(0, "in", "1,1,4") +
             layer(1, "pool", "AvgPool", "opset1", "kernel=\"2\" strides=\"2\"",
                   in_port(0, "1,1,4"), out_port(1, "FP32", "1,1,2") + out_port(2, "FP32", "")) +
             result(2, "out", "1,1,2"),
         edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
  CHECK(with_rule(analyze_xml(two_outputs).analysis, "bad-outputs").size() == 1);
}

TEST_CASE("Parameter attributes", "[analysis]") {
  struct Case {
    const char* name;
    std::string data;
    std::optional<PartialShape> shape;  // nullopt: a bad-attribute error
    ElementType type;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"f32", "shape=\"1,3,?,1..10\" element_type=\"f32\"",
       shape({Dim::fixed(1), Dim::fixed(3), Dim::dynamic(), Dim::interval(1, 10)}),
       ElementType::f32, ""},
      {"F16 upper case", "shape=\"[2,-1]\" element_type=\"F16\"",
       shape({Dim::fixed(2), Dim::dynamic()}), ElementType::f16, ""},
      {"FP32 rejected", "shape=\"1\" element_type=\"FP32\"", std::nullopt, ElementType::undefined,
       "\"FP32\" is not a member of enum element::Type_t"},
      {"no element_type", "shape=\"1\"", std::nullopt, ElementType::undefined, "element_type"},
      {"no shape: a scalar, with a warning", "element_type=\"i32\"", shape({}), ElementType::i32,
       "no attribute 'shape': OpenVINO makes the input a scalar"},
      {"bad shape", "shape=\"1,x\" element_type=\"f32\"", std::nullopt, ElementType::undefined,
       "Cannot parse dimension"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const std::string xml =
        ir(layer(0, "in", "Parameter", "opset1", c.data, "", out_port(0, "FP32", "")) +
               result(1, "out", ""),
           edge(0, 0, 1, 0));
    const auto a = analyze_xml(xml);
    if (c.shape) {
      const auto warned = with_rule(a.analysis, "missing-attribute");
      CHECK(a.analysis.diagnostics.size() == warned.size());
      CHECK(warned.size() == (*c.message ? 1u : 0u));
      for (const auto* d : warned) {
        CHECK(d->severity == irrun::Severity::warning);
        CHECK_THAT(d->message, Catch::Contains(c.message));
      }
      REQUIRE(a.analysis.nodes[0].inferred);
      CHECK(a.analysis.nodes[0].outputs[0].shape == *c.shape);
      CHECK(a.analysis.nodes[0].outputs[0].type == c.type);
    } else {
      const auto found = with_rule(a.analysis, "bad-attribute");
      REQUIRE(found.size() == 1);
      CHECK_THAT(found[0]->message, Catch::Contains(c.message));
      CHECK_FALSE(a.analysis.nodes[0].inferred);
    }
  }
}

TEST_CASE("parameter_shapes replaces Parameter shapes", "[analysis]") {
  const auto a = analyze_xml(
      pool_model("AvgPool", "opset1", "kernel=\"2,2\" strides=\"2,2\"", "1,3,8,8", "1,3,4,4"),
      {{0, fixed({2, 3, 16, 10})}});
  CHECK(a.analysis.nodes[0].outputs[0].shape == fixed({2, 3, 16, 10}));
  CHECK(a.analysis.nodes[1].outputs[0].shape == fixed({2, 3, 8, 5}));
}

TEST_CASE("unreachable layers are not analysed", "[analysis]") {
  const std::string xml = ir(parameter_text(0, "in", "1,1,4") + result(1, "out", "1,1,4") +
                                 layer(2, "dead", "AvgPool", "opset1", "kernel=\"9\" strides=\"1\"",
                                       in_port(0, "1,1,4"), out_port(1, "FP32", "1,1,1")),
                             edge(0, 0, 1, 0) + edge(0, 0, 2, 0));
  const auto a = analyze_xml(xml);
  CHECK(a.analysis.diagnostics.empty());  // no validation error for the dropped pool
  CHECK_FALSE(a.analysis.nodes[2].inferred);
  CHECK(a.analysis.nodes[2].outputs[0].shape == fixed({1, 1, 1}));
  REQUIRE(a.model.diagnostics.size() == 1);
  CHECK(a.model.diagnostics[0].rule == "unreachable-layer");
}
