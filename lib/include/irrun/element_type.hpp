// OpenVINO element types and the two spellings the IR uses for them.
// Part of the public API (see irrun/irrun.hpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

// Public API: exported from a shared libirrun, whose other symbols are hidden.
#pragma GCC visibility push(default)
namespace irrun {

enum class ElementType {
  undefined,
  dynamic,
  boolean,
  bf16,
  f16,
  f32,
  f64,
  i4,
  i8,
  i16,
  i32,
  i64,
  u1,
  u2,
  u3,
  u4,
  u6,
  u8,
  u16,
  u32,
  u64,
  nf4,
  f8e4m3,
  f8e5m2,
  string,
  f4e2m1,
  f8e8m0,
};

// Port `precision` attribute (`element::Type(string)`): exact spellings only, e.g. "f32" or "FP32";
// "F32", "Fp32" and "bool" are rejected.
std::optional<ElementType> parse_precision(std::string_view text);

// `element_type` data attribute (enum adapter): canonical names compared case-insensitively, so
// "F32" is accepted but "FP32" is not.
std::optional<ElementType> parse_element_type_name(std::string_view text);

// Canonical lowercase name ("f32", "boolean", ...).
std::string_view to_string(ElementType type);

// Bits per element; 0 for undefined, dynamic and string.
std::size_t bit_width(ElementType type);

// Bytes needed for `count` densely (bit-)packed elements.
std::size_t packed_byte_size(ElementType type, std::size_t count);

bool is_floating(ElementType type);

}  // namespace irrun
#pragma GCC visibility pop
