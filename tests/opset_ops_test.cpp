// Tests of the table of OpenVINO's standard opsets (lib/src/opset_ops.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "irrun/opset_ops.hpp"

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
