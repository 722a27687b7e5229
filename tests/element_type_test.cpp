// Table-driven tests of irrun's element types: the two spellings the IR uses (port `precision`
// through element::Type(string), `element_type` data attributes through the enum adapter), bit
// widths and packed byte sizes (docs/openvino-semantics.md, section 1 "Element-type spellings").
#include <catch2/catch.hpp>

#include <cctype>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "irrun/element_type.hpp"

using irrun::ElementType;

namespace {

struct SpellingCase {
  const char* text;
  ElementType expected;
};

// Every spelling element::Type(std::string) accepts.
const std::vector<SpellingCase> kPrecisionAccepted = {
    {"f16", ElementType::f16},
    {"FP16", ElementType::f16},
    {"f32", ElementType::f32},
    {"FP32", ElementType::f32},
    {"bf16", ElementType::bf16},
    {"BF16", ElementType::bf16},
    {"f64", ElementType::f64},
    {"FP64", ElementType::f64},
    {"i4", ElementType::i4},
    {"I4", ElementType::i4},
    {"i8", ElementType::i8},
    {"I8", ElementType::i8},
    {"i16", ElementType::i16},
    {"I16", ElementType::i16},
    {"i32", ElementType::i32},
    {"I32", ElementType::i32},
    {"i64", ElementType::i64},
    {"I64", ElementType::i64},
    {"u1", ElementType::u1},
    {"U1", ElementType::u1},
    {"BIN", ElementType::u1},
    {"bin", ElementType::u1},
    {"u2", ElementType::u2},
    {"U2", ElementType::u2},
    {"u3", ElementType::u3},
    {"U3", ElementType::u3},
    {"u4", ElementType::u4},
    {"U4", ElementType::u4},
    {"u6", ElementType::u6},
    {"U6", ElementType::u6},
    {"u8", ElementType::u8},
    {"U8", ElementType::u8},
    {"u16", ElementType::u16},
    {"U16", ElementType::u16},
    {"u32", ElementType::u32},
    {"U32", ElementType::u32},
    {"u64", ElementType::u64},
    {"U64", ElementType::u64},
    {"boolean", ElementType::boolean},
    {"BOOL", ElementType::boolean},
    {"string", ElementType::string},
    {"STRING", ElementType::string},
    {"undefined", ElementType::undefined},
    {"UNSPECIFIED", ElementType::undefined},
    {"dynamic", ElementType::dynamic},
    {"nf4", ElementType::nf4},
    {"NF4", ElementType::nf4},
    {"f8e4m3", ElementType::f8e4m3},
    {"F8E4M3", ElementType::f8e4m3},
    {"f8e5m2", ElementType::f8e5m2},
    {"F8E5M2", ElementType::f8e5m2},
    {"f4e2m1", ElementType::f4e2m1},
    {"F4E2M1", ElementType::f4e2m1},
    {"f8e8m0", ElementType::f8e8m0},
    {"F8E8M0", ElementType::f8e8m0},
};

// Spellings element::Type(std::string) rejects: exact spellings only, no case folding.
const std::vector<const char*> kPrecisionRejected = {
    "F32", "Fp32", "fp32", "bool", "Bool", "FP8",       "F16",     "int32", "float", "Boolean",
    "",    " f32", "f32 ", "I4 ",  "Bf16", "Undefined", "DYNAMIC", "Bin",   "u5",    "i1",
};

// Every spelling the `element_type` enum adapter accepts (case-insensitive canonical names).
const std::vector<SpellingCase> kEnumAccepted = {
    {"undefined", ElementType::undefined},
    {"dynamic", ElementType::dynamic},
    {"boolean", ElementType::boolean},
    {"bf16", ElementType::bf16},
    {"f16", ElementType::f16},
    {"f32", ElementType::f32},
    {"f64", ElementType::f64},
    {"i4", ElementType::i4},
    {"i8", ElementType::i8},
    {"i16", ElementType::i16},
    {"i32", ElementType::i32},
    {"i64", ElementType::i64},
    {"u1", ElementType::u1},
    {"u2", ElementType::u2},
    {"u3", ElementType::u3},
    {"u4", ElementType::u4},
    {"u6", ElementType::u6},
    {"u8", ElementType::u8},
    {"u16", ElementType::u16},
    {"u32", ElementType::u32},
    {"u64", ElementType::u64},
    {"nf4", ElementType::nf4},
    {"f8e4m3", ElementType::f8e4m3},
    {"f8e5m2", ElementType::f8e5m2},
    {"string", ElementType::string},
    {"f4e2m1", ElementType::f4e2m1},
    {"f8e8m0", ElementType::f8e8m0},
    // Case-insensitive.
    {"F32", ElementType::f32},
    {"Boolean", ElementType::boolean},
    {"I64", ElementType::i64},
    {"NF4", ElementType::nf4},
    {"F8E4M3", ElementType::f8e4m3},
    {"Dynamic", ElementType::dynamic},
};

// The enum adapter knows only the canonical names: the precision-only spellings are rejected.
const std::vector<const char*> kEnumRejected = {
    "FP32", "FP16", "fp64", "BOOL", "bool", "BIN", "bin", "UNSPECIFIED", "", "f32 ", "float32",
};

struct WidthCase {
  ElementType type;
  std::size_t bits;
  const char* name;
};

const std::vector<WidthCase> kWidths = {
    {ElementType::undefined, 0, "undefined"},
    {ElementType::dynamic, 0, "dynamic"},
    {ElementType::boolean, 8, "boolean"},
    {ElementType::bf16, 16, "bf16"},
    {ElementType::f16, 16, "f16"},
    {ElementType::f32, 32, "f32"},
    {ElementType::f64, 64, "f64"},
    {ElementType::i4, 4, "i4"},
    {ElementType::i8, 8, "i8"},
    {ElementType::i16, 16, "i16"},
    {ElementType::i32, 32, "i32"},
    {ElementType::i64, 64, "i64"},
    {ElementType::u1, 1, "u1"},
    {ElementType::u2, 2, "u2"},
    {ElementType::u3, 3, "u3"},
    {ElementType::u4, 4, "u4"},
    {ElementType::u6, 6, "u6"},
    {ElementType::u8, 8, "u8"},
    {ElementType::u16, 16, "u16"},
    {ElementType::u32, 32, "u32"},
    {ElementType::u64, 64, "u64"},
    {ElementType::nf4, 4, "nf4"},
    {ElementType::f8e4m3, 8, "f8e4m3"},
    {ElementType::f8e5m2, 8, "f8e5m2"},
    {ElementType::string, 0, "string"},
    {ElementType::f4e2m1, 4, "f4e2m1"},
    {ElementType::f8e8m0, 8, "f8e8m0"},
};

struct PackedCase {
  ElementType type;
  std::size_t count;
  std::size_t bytes;
};

// ceil(count * bits / 8): sub-byte types are bit-packed.
const std::vector<PackedCase> kPacked = {
    {ElementType::f32, 0, 0},
    {ElementType::f32, 1, 4},
    {ElementType::f32, 6, 24},
    {ElementType::f16, 3, 6},
    {ElementType::bf16, 5, 10},
    {ElementType::f64, 2, 16},
    {ElementType::i64, 3, 24},
    {ElementType::i8, 7, 7},
    {ElementType::boolean, 9, 9},
    {ElementType::u1, 0, 0},
    {ElementType::u1, 1, 1},
    {ElementType::u1, 8, 1},
    {ElementType::u1, 9, 2},
    {ElementType::u1, 17, 3},
    {ElementType::u2, 3, 1},
    {ElementType::u2, 4, 1},
    {ElementType::u2, 5, 2},
    {ElementType::u3, 1, 1},
    {ElementType::u3, 3, 2},
    {ElementType::u3, 8, 3},
    {ElementType::u3, 9, 4},
    {ElementType::i4, 1, 1},
    {ElementType::i4, 2, 1},
    {ElementType::u4, 3, 2},
    {ElementType::nf4, 5, 3},
    {ElementType::f4e2m1, 4, 2},
    {ElementType::u6, 1, 1},
    {ElementType::u6, 4, 3},
    {ElementType::u6, 5, 4},
    {ElementType::u6, 16, 12},
    {ElementType::u4, 1000001, 500001},
};

}  // namespace

TEST_CASE("parse_precision accepts every element::Type(string) spelling", "[element_type]") {
  for (const auto& c : kPrecisionAccepted) {
    CAPTURE(c.text);
    const auto parsed = irrun::parse_precision(c.text);
    REQUIRE(parsed.has_value());
    CHECK(*parsed == c.expected);
  }
}

TEST_CASE("parse_precision rejects spellings element::Type(string) rejects", "[element_type]") {
  for (const auto* text : kPrecisionRejected) {
    CAPTURE(text);
    CHECK_FALSE(irrun::parse_precision(text).has_value());
  }
}

TEST_CASE("parse_element_type_name accepts the enum names case-insensitively", "[element_type]") {
  for (const auto& c : kEnumAccepted) {
    CAPTURE(c.text);
    const auto parsed = irrun::parse_element_type_name(c.text);
    REQUIRE(parsed.has_value());
    CHECK(*parsed == c.expected);
  }
  // Mixed and upper case of every canonical name.
  for (const auto& w : kWidths) {
    std::string upper(w.name);
    for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    CAPTURE(upper);
    const auto parsed = irrun::parse_element_type_name(upper);
    REQUIRE(parsed.has_value());
    CHECK(*parsed == w.type);
  }
}

TEST_CASE("parse_element_type_name rejects precision-only spellings", "[element_type]") {
  for (const auto* text : kEnumRejected) {
    CAPTURE(text);
    CHECK_FALSE(irrun::parse_element_type_name(text).has_value());
  }
}

TEST_CASE("F32 is an element_type but not a precision; FP32 the reverse", "[element_type]") {
  CHECK(irrun::parse_element_type_name("F32") == std::optional<ElementType>(ElementType::f32));
  CHECK_FALSE(irrun::parse_precision("F32").has_value());
  CHECK(irrun::parse_precision("FP32") == std::optional<ElementType>(ElementType::f32));
  CHECK_FALSE(irrun::parse_element_type_name("FP32").has_value());
}

TEST_CASE("bit widths and canonical names", "[element_type]") {
  for (const auto& w : kWidths) {
    CAPTURE(w.name);
    CHECK(irrun::bit_width(w.type) == w.bits);
    CHECK(irrun::to_string(w.type) == w.name);
    // The canonical name round-trips through both parsers.
    CHECK(irrun::parse_element_type_name(w.name) == std::optional<ElementType>(w.type));
    CHECK(irrun::parse_precision(w.name) == std::optional<ElementType>(w.type));
  }
}

TEST_CASE("packed byte sizes", "[element_type]") {
  for (const auto& c : kPacked) {
    CAPTURE(irrun::to_string(c.type), c.count);
    CHECK(irrun::packed_byte_size(c.type, c.count) == c.bytes);
  }
  // Against ceil(count * bits / 8) for every type with a width and a range of counts.
  for (const auto& w : kWidths) {
    if (w.bits == 0) continue;
    for (std::size_t count = 0; count < 40; ++count) {
      CAPTURE(w.name, count);
      CHECK(irrun::packed_byte_size(w.type, count) == (count * w.bits + 7) / 8);
    }
  }
}

TEST_CASE("floating types", "[element_type]") {
  const std::vector<ElementType> floating = {
      ElementType::bf16,   ElementType::f16,    ElementType::f32,    ElementType::f64,
      ElementType::f8e4m3, ElementType::f8e5m2, ElementType::f4e2m1, ElementType::f8e8m0};
  const std::vector<ElementType> not_floating = {
      ElementType::undefined, ElementType::dynamic, ElementType::boolean, ElementType::i4,
      ElementType::i8,        ElementType::i16,     ElementType::i32,     ElementType::i64,
      ElementType::u1,        ElementType::u2,      ElementType::u3,      ElementType::u4,
      ElementType::u6,        ElementType::u8,      ElementType::u16,     ElementType::u32,
      ElementType::u64,       ElementType::string};
  for (auto t : floating) {
    CAPTURE(irrun::to_string(t));
    CHECK(irrun::is_floating(t));
  }
  for (auto t : not_floating) {
    CAPTURE(irrun::to_string(t));
    CHECK_FALSE(irrun::is_floating(t));
  }
}
