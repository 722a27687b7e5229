// Test-only: the C++ type of an integer element type, for code written once for all eight.
#pragma once

#include <cstdint>
#include <stdexcept>

#include "irrun/element_type.hpp"

namespace irrun::testing {

// f(T{}) for the C++ type T of an integer element type; std::invalid_argument for any other.
template <class F>
decltype(auto) with_int_type(ElementType type, F&& f) {
  switch (type) {
    case ElementType::i8:
      return f(std::int8_t{});
    case ElementType::u8:
      return f(std::uint8_t{});
    case ElementType::i16:
      return f(std::int16_t{});
    case ElementType::u16:
      return f(std::uint16_t{});
    case ElementType::i32:
      return f(std::int32_t{});
    case ElementType::u32:
      return f(std::uint32_t{});
    case ElementType::i64:
      return f(std::int64_t{});
    case ElementType::u64:
      return f(std::uint64_t{});
    default:
      throw std::invalid_argument("not an integer element type");
  }
}

}  // namespace irrun::testing
