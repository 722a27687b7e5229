#include "irrun/element_type.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string>

namespace irrun {
namespace {

struct TypeInfo {
  ElementType type;
  std::string_view name;       // canonical lowercase name (enum spelling)
  std::string_view precision;  // extra upper-case spelling accepted by element::Type(string)
  std::size_t bits;
};

constexpr std::array<TypeInfo, 27> kTypes{{
    {ElementType::undefined, "undefined", "UNSPECIFIED", 0},
    {ElementType::dynamic, "dynamic", "", 0},
    {ElementType::boolean, "boolean", "BOOL", 8},
    {ElementType::bf16, "bf16", "BF16", 16},
    {ElementType::f16, "f16", "FP16", 16},
    {ElementType::f32, "f32", "FP32", 32},
    {ElementType::f64, "f64", "FP64", 64},
    {ElementType::i4, "i4", "I4", 4},
    {ElementType::i8, "i8", "I8", 8},
    {ElementType::i16, "i16", "I16", 16},
    {ElementType::i32, "i32", "I32", 32},
    {ElementType::i64, "i64", "I64", 64},
    {ElementType::u1, "u1", "U1", 1},
    {ElementType::u2, "u2", "U2", 2},
    {ElementType::u3, "u3", "U3", 3},
    {ElementType::u4, "u4", "U4", 4},
    {ElementType::u6, "u6", "U6", 6},
    {ElementType::u8, "u8", "U8", 8},
    {ElementType::u16, "u16", "U16", 16},
    {ElementType::u32, "u32", "U32", 32},
    {ElementType::u64, "u64", "U64", 64},
    {ElementType::nf4, "nf4", "NF4", 4},
    {ElementType::f8e4m3, "f8e4m3", "F8E4M3", 8},
    {ElementType::f8e5m2, "f8e5m2", "F8E5M2", 8},
    {ElementType::string, "string", "STRING", 0},
    {ElementType::f4e2m1, "f4e2m1", "F4E2M1", 4},
    {ElementType::f8e8m0, "f8e8m0", "F8E8M0", 8},
}};

const TypeInfo& info(ElementType type) {
  return *std::find_if(kTypes.begin(), kTypes.end(),
                       [type](const TypeInfo& t) { return t.type == type; });
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::optional<ElementType> parse_precision(std::string_view text) {
  // u1 is also spelled BIN/bin.
  if (text == "BIN" || text == "bin") return ElementType::u1;
  for (const auto& t : kTypes) {
    if (text == t.name || (!t.precision.empty() && text == t.precision)) return t.type;
  }
  return std::nullopt;
}

std::optional<ElementType> parse_element_type_name(std::string_view text) {
  for (const auto& t : kTypes) {
    if (iequals(text, t.name)) return t.type;
  }
  return std::nullopt;
}

std::string_view to_string(ElementType type) {
  return info(type).name;
}

std::size_t bit_width(ElementType type) {
  return info(type).bits;
}

std::size_t packed_byte_size(ElementType type, std::size_t count) {
  const std::size_t bits = bit_width(type);
  if (bits % 8 == 0) return count * (bits / 8);
  // Sub-byte types are bit-packed; round up (count * bits may not overflow for sane callers, who
  // check their element count against a limit first).
  return (count / 8) * bits + ((count % 8) * bits + 7) / 8;
}

bool is_floating(ElementType type) {
  switch (type) {
    case ElementType::bf16:
    case ElementType::f16:
    case ElementType::f32:
    case ElementType::f64:
    case ElementType::f8e4m3:
    case ElementType::f8e5m2:
    case ElementType::f4e2m1:
    case ElementType::f8e8m0:
    case ElementType::nf4:
      return true;
    default:
      return false;
  }
}

}  // namespace irrun
