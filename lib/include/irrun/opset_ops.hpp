// The operation types of OpenVINO's standard opsets, opset1..opset16, as its opset tables
// (openvino/opsets/opsetN_tbl.hpp) register them: the names an IR's `type` may take in a layer
// whose `version` is "opsetN". The table itself is data, in opset_ops.cpp.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace irrun {

inline constexpr int kLatestOpset = 16;

// Whether opset `opset` (1..kLatestOpset) registers an op named `type`, compared as OpenVINO's
// OpSet::create_insensitive does: ignoring ASCII case, nothing trimmed ("relu" is Relu,
// "Relu " is nothing). Any other opset number contains nothing.
bool opset_contains(int opset, std::string_view type);

// The names opset `opset` registers, in the table's order (alphabetical, case-insensitive).
std::vector<std::string_view> opset_op_names(int opset);

// The opsets that register `type` (case-insensitive), as ranges: "opset2..opset15",
// "opset1..opset3, opset5..opset15", "opset1"; empty when none does.
std::string opsets_of(std::string_view type);

// A name of opset `opset` that `type` likely misspells: the same once surrounding whitespace is
// removed, else the nearest within 2 single-character edits (1 for a type of up to 5
// characters; case ignored, a swap of neighbours is one edit), the first in the table's order on a
// tie; nullopt when there is none.
std::optional<std::string_view> nearest_op(int opset, std::string_view type);

}  // namespace irrun
