// The attribute bits fuzz_avg_pool and fuzz_max_pool decode alike: two bits of rounding type
// (floor, ceil, ceil_torch, floor) and three of auto_pad (5 same_upper, 6 same_lower, 7 valid,
// else explicit).
#pragma once

#include <cstdint>

#include "irrun/pool_geometry.hpp"

namespace irrun::fuzzing {

inline void decode_rounding_and_auto_pad(unsigned rounding_bits, unsigned auto_pad_bits,
                                         PoolAttrs& attrs) {
  static constexpr RoundingType kRounding[] = {RoundingType::floor, RoundingType::ceil,
                                               RoundingType::ceil_torch, RoundingType::floor};
  static constexpr AutoPad kAutoPad[] = {AutoPad::same_upper, AutoPad::same_lower, AutoPad::valid};
  attrs.rounding = kRounding[rounding_bits & 3];
  attrs.auto_pad =
      (auto_pad_bits & 7) >= 5 ? kAutoPad[(auto_pad_bits & 7) - 5] : AutoPad::explicit_;
}

}  // namespace irrun::fuzzing
