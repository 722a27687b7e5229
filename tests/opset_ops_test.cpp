// Tests of the table of OpenVINO's standard opsets (lib/src/opset_ops.cpp) and of the check rule
// built on it: a layer whose `version` is opset1..opset16 and whose `type` that opset does not
// register is an `unknown-opset` error, with OpenVINO's message ("Opset opset1 doesn't contain
// the operation with type: AvgPol") and a hint; other versions stay opaque.
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "irrun/analysis.hpp"
#include "irrun/attrs.hpp"
#include "irrun/ir_reader.hpp"
#include "irrun/ops.hpp"
#include "irrun/opset_ops.hpp"
#include "support/ir_strings.hpp"

namespace {

using irrun::testing::edge;
using irrun::testing::in_port;
using irrun::testing::layer;
using irrun::testing::out_port;
using irrun::testing::parameter_text;
using irrun::testing::result;

irrun::Layer make_layer(const std::string& type, const std::string& version) {
  irrun::Layer l;
  l.id = 1;
  l.name = "x";
  l.type = type;
  l.version = version;
  return l;
}

}  // namespace

TEST_CASE("each opset has OpenVINO's number of op types", "[opset_ops]") {
  // OpenVINO's own opset test (src/core/tests/opset.cpp) counts opset1..opset15; opset16 is the
  // partial opset of OpenVINO 2025.
  const std::vector<std::size_t> counts = {110, 112, 127, 137, 145, 152, 156, 167,
                                           173, 177, 177, 178, 186, 188, 199, 10};
  REQUIRE(counts.size() == irrun::kLatestOpset);
  for (int opset = 1; opset <= irrun::kLatestOpset; ++opset) {
    CAPTURE(opset);
    const auto names = irrun::opset_op_names(opset);
    CHECK(names.size() == counts[opset - 1]);
    // No name twice in one opset, and every name is found.
    auto sorted = names;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
    for (const auto name : names) CHECK(irrun::opset_contains(opset, name));
  }
  CHECK(irrun::opset_op_names(0).empty());
  CHECK(irrun::opset_op_names(17).empty());
}

TEST_CASE("opset membership", "[opset_ops]") {
  struct Case {
    const char* type;
    int opset;
    bool contained;
  };
  const std::vector<Case> cases = {
      {"AvgPool", 1, true},
      {"AvgPool", 16, true},
      {"avgpool", 1, true},  // OpenVINO's create_insensitive
      {"RELU", 1, true},
      {"AvgPool ", 1, false},  // nothing is trimmed
      {"AvgPol", 1, false},
      {"Const", 1, false},  // the IR reader's name for Constant, not an opset's
      {"Constant", 1, true},
      {"Constant", 16, false},
      {"Parameter", 16, true},
      {"Result", 15, true},
      {"Result", 16, false},
      {"Gelu", 1, false},  // added in opset2
      {"Gelu", 2, true},
      {"Gelu", 7, true},     // Gelu-7
      {"Reverse", 1, true},  // moved out of opset2 for good
      {"Reverse", 2, false},
      {"Xor", 2, false},
      {"ShuffleChannels", 2, false},  // out of opset2, back in opset3
      {"ShuffleChannels", 3, true},
      {"LSTMSequence", 3, true},  // LSTMSequence-0
      {"LSTMSequence", 4, false},
      {"LSTMSequence", 5, true},  // LSTMSequence-5
      {"MVN", 1, false},          // the IR reader takes it from opset2
      {"MVN", 2, true},
      {"ShapeOf", 16, true},
      {"Convolution", 15, true},
      {"Convolution", 16, false},
      {"AdaptiveAvgPool", 7, false},
      {"AdaptiveAvgPool", 8, true},
      {"ScaledDotProductAttention", 13, true},
      {"SearchSorted", 14, false},
      {"SearchSorted", 15, true},
      {"Identity", 16, true},
      {"AvgPool", 0, false},
      {"AvgPool", 17, false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.type, c.opset);
    CHECK(irrun::opset_contains(c.opset, c.type) == c.contained);
  }
}

TEST_CASE("opsets_of and nearest_op", "[opset_ops]") {
  CHECK(irrun::opsets_of("Gelu") == "opset2..opset15");
  CHECK(irrun::opsets_of("gelu") == "opset2..opset15");
  CHECK(irrun::opsets_of("Reverse") == "opset1");
  CHECK(irrun::opsets_of("LSTMSequence") == "opset1..opset3, opset5..opset15");
  CHECK(irrun::opsets_of("AvgPool") == "opset1..opset16");
  CHECK(irrun::opsets_of("AvgPol").empty());

  struct Case {
    const char* type;
    int opset;
    std::optional<std::string_view> nearest;
  };
  const std::vector<Case> cases = {
      {"AvgPol", 1, "AvgPool"},
      {"avgpol", 1, "AvgPool"},
      {"AvgPool ", 1, "AvgPool"},
      {"\tMaxPool\n", 8, "MaxPool"},
      {"MaxPool2", 1, "MaxPool"},
      {"Reul", 1, "Relu"},  // a swap of neighbours is one edit
      {"Convolutoin", 1, "Convolution"},
      {"Identiy", 16, "Identity"},
      {"Identiy", 15, std::nullopt},     // Identity is opset16's alone
      {"AveragePool", 1, std::nullopt},  // 4 edits
      {"Conv", 1, std::nullopt},         // short: 1 edit at most, and Cos is 2
      {"", 1, std::nullopt},
      {"   ", 1, std::nullopt},
  };
  for (const auto& c : cases) {
    CAPTURE(c.type, c.opset);
    CHECK(irrun::nearest_op(c.opset, c.type) == c.nearest);
  }
}

TEST_CASE("a type the opset does not register is an unknown-opset error", "[opset_ops]") {
  struct Case {
    const char* type;
    const char* version;
    std::optional<const char*> message;  // nullopt: no error
    bool opaque = true;                  // when no error: not an op irrun implements
  };
  const std::vector<Case> cases = {
      {"AvgPol", "opset1",
       "Opset opset1 doesn't contain the operation with type: AvgPol (did you mean AvgPool?)"},
      {"AvgPool ", "opset1",
       "Opset opset1 doesn't contain the operation with type: AvgPool  (did you mean AvgPool? "
       "the type \"AvgPool \" has whitespace)"},
      {"AveragePool", "opset1",
       "Opset opset1 doesn't contain the operation with type: AveragePool"},
      {"Convolutoin", "opset1",
       "Opset opset1 doesn't contain the operation with type: Convolutoin (did you mean "
       "Convolution?)"},
      // An op of a later opset, with an earlier version.
      {"Gelu", "opset1",
       "Opset opset1 doesn't contain the operation with type: Gelu (Gelu is in opset2..opset15)"},
      {"ScaledDotProductAttention", "opset12",
       "doesn't contain the operation with type: ScaledDotProductAttention "
       "(ScaledDotProductAttention is in opset13..opset15)"},
      {"Convolution", "opset16",
       "Opset opset16 doesn't contain the operation with type: Convolution (Convolution is in "
       "opset1..opset15)"},
      {"Xor", "opset5", "(Xor is in opset1)"},
      // Ops irrun implements get the same rule.
      {"AdaptiveAvgPool", "opset1",
       "Opset opset1 doesn't contain the operation with type: AdaptiveAvgPool (AdaptiveAvgPool "
       "is in opset8..opset15)"},
      {"MaxPool", "opset16", "(MaxPool is in opset1..opset15)"},
      {"Result", "opset16", "Opset opset16 doesn't contain the operation with type: Result"},
      // The IR reader renames Const, PReLU, ReLU and SoftMax, so spelled, before the lookup,
      // and its message names the new name; "const" is not renamed, and is no op.
      {"Const", "opset16",
       "Opset opset16 doesn't contain the operation with type: Constant (Constant is in "
       "opset1..opset15)"},
      {"SoftMax", "opset16",
       "Opset opset16 doesn't contain the operation with type: Softmax (Softmax is in "
       "opset1..opset15)"},
      {"const", "opset1",
       "Opset opset1 doesn't contain the operation with type: const (did you mean Const? Only "
       "that spelling is Constant)"},
      {"CONST", "opset1", "type: CONST (did you mean Const?"},
      // Valid: opaque ops of OpenVINO's opsets, in any case (OpenVINO ignores it).
      {"Convolution", "opset1", std::nullopt},
      {"ReLU", "opset1", std::nullopt},
      {"SoftMax", "opset8", std::nullopt},
      {"convolution", "opset1", std::nullopt},
      {"Gelu", "opset2", std::nullopt},
      {"Gelu", "opset7", std::nullopt},
      {"ShapeOf", "opset3", std::nullopt},
      {"Gather", "opset8", std::nullopt},
      {"MVN", "opset1", std::nullopt},  // taken from opset2 by the IR reader
      {"MVN", "opset6", std::nullopt},
      {"ROIPooling", "opset1", std::nullopt},
      {"ScaledDotProductAttention", "opset13", std::nullopt},
      {"Identity", "opset16", std::nullopt},
      {"Convert", "opset16", std::nullopt},
      {"AvgPool", "opset16", std::nullopt, false},
      {"Parameter", "opset16", std::nullopt, false},
      {"Const", "opset1", std::nullopt, false},
      {"CONSTANT", "opset1", std::nullopt, false},
      {"PReLU", "opset1", std::nullopt},
      {"Result", "opset15", std::nullopt, false},
      {"avgpool", "opset1", std::nullopt, false},
      // Other versions: an extension's, OpenVINO's internal opsets, a custom domain. Opaque.
      {"AvgPol", "extension", std::nullopt},
      {"MyOp", "custom_opset", std::nullopt},
      {"FullyConnected", "ie_internal_opset", std::nullopt},
      {"GRUCell", "experimental", std::nullopt},
      {"Gelu", "Opset1", std::nullopt},
  };
  for (const auto& c : cases) {
    CAPTURE(c.type, c.version);
    const auto l = make_layer(c.type, c.version);
    if (c.message) {
      try {
        irrun::resolve_op(l);
        FAIL("no error");
      } catch (const irrun::LayerError& e) {
        CHECK(e.rule() == "unknown-opset");
        CHECK_THAT(std::string(e.what()), Catch::Contains(*c.message));
      }
    } else {
      const irrun::OpEntry* op = nullptr;
      REQUIRE_NOTHROW(op = irrun::resolve_op(l));
      CHECK((op == nullptr) == c.opaque);
    }
  }
}

TEST_CASE("irrun's own ops resolve in exactly the opsets that register them", "[opset_ops]") {
  for (const char* type : {"Parameter", "Constant", "Result", "AvgPool", "MaxPool",
                           "AdaptiveAvgPool", "AdaptiveMaxPool"}) {
    for (int opset = 1; opset <= irrun::kLatestOpset; ++opset) {
      CAPTURE(type, opset);
      const auto l = make_layer(type, "opset" + std::to_string(opset));
      if (irrun::opset_contains(opset, type)) {
        const irrun::OpEntry* op = nullptr;
        REQUIRE_NOTHROW(op = irrun::resolve_op(l));
        CHECK(op != nullptr);
      } else {
        CHECK_THROWS_AS(irrun::resolve_op(l), irrun::LayerError);
      }
    }
  }
}

TEST_CASE("a misspelled type is one error line naming the layer; the others are analysed",
          "[opset_ops]") {
  const std::string xml = irrun::testing::net(
      parameter_text(0, "in", "1,3,8,8") +
          layer(1, "pool", "AvgPol", "opset1", "kernel=\"2,2\" strides=\"2,2\"",
                in_port(0, "1,3,8,8"), out_port(1, "FP32", "1,3,4,4")) +
          layer(2, "pool2", "AvgPool", "opset1", "kernel=\"2,2\" strides=\"2,2\"",
                in_port(0, "1,3,4,4"), out_port(1, "FP32", "1,3,2,2")) +
          result(3, "out", "1,3,2,2"),
      edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(2, 1, 3, 0));
  auto model = irrun::parse_ir(xml, "a.xml");
  const auto graph = irrun::build_graph(model);
  const auto analysis = irrun::analyze(model, graph, nullptr, {});
  REQUIRE(analysis.diagnostics.size() == 1);
  const auto& d = analysis.diagnostics[0];
  CHECK(d.severity == irrun::Severity::error);
  CHECK(irrun::format(model, d) ==
        "a.xml:" + std::to_string(model.layers[1].line) +
            ": error: layer 1 'pool' (AvgPol opset1): Opset opset1 doesn't contain the operation "
            "with type: AvgPol (did you mean AvgPool?) [unknown-opset]");
  // The layer keeps its declared outputs, and the pool after it is still inferred.
  CHECK_FALSE(analysis.nodes[1].inferred);
  CHECK(analysis.nodes[2].inferred);
  CHECK(analysis.nodes[3].inferred);
}
