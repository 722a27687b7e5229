// How far apart two spellings are, for "did you mean ...?" hints (op types, command options).
#pragma once

#include <cstddef>
#include <string_view>

namespace irrun {

// Optimal string alignment distance, ignoring ASCII case: insertions, deletions, substitutions and
// swaps of two adjacent characters each count 1 ("AvgPol" is 1 from "AvgPool", "--strcit" 1 from
// "--strict").
std::size_t edit_distance(std::string_view a, std::string_view b);

}  // namespace irrun
