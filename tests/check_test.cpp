// Table-driven tests of `irrun check` (check_file) on whole small models written to temporary
// files: declared vs inferred dims and types, edge consistency, attribute warnings and strict mode,
// opset resolution, AdaptiveAvgPool's output_size from weights, MaxPool's two outputs, Const errors
// (docs/openvino-semantics.md sections 1, 2, 4, 6 and 7), and unreadable files.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "irrun/check.hpp"
#include "support/ir_strings.hpp"
#include "support/scratch_dir.hpp"

namespace fs = std::filesystem;
using irrun::CheckOptions;
using irrun::CheckReport;
using irrun::Diagnostic;
using irrun::Severity;

namespace {

using TempDir = irrun::testing::ScratchDir;

template <class T>
std::string bytes_of(const std::vector<T>& values) {
  std::string s(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(s.data(), values.data(), s.size());
  return s;
}

// --- IR text builders ----------------------------------------------------------------------

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
std::string pool_model(const std::string& version, const std::string& data,
                       const std::string& in_dims, const std::string& out_dims,
                       const std::string& out_precision = "FP32",
                       const std::string& type = "AvgPool") {
  return ir(parameter_text(0, "in", in_dims) +
                layer(1, "pool", type, version, data, in_port(0, in_dims),
                      out_port(1, out_precision, out_dims)) +
                result(2, "out", out_dims),
            edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
}

// Parameter(0) of `element_type` -> `type`-`version`(1) -> Result(2), declared in `precision`.
std::string typed_pool_model(const std::string& element_type, const std::string& precision,
                             const std::string& type, const std::string& version) {
  return ir(parameter_text(0, "in", "1,1,8", element_type, precision) +
                layer(1, "pool", type, version, "kernel=\"2\" strides=\"2\"", in_port(0, "1,1,8"),
                      out_port(1, precision, "1,1,4")) +
                result(2, "out", "1,1,4"),
            edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
}

const std::string kPool2 = "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\"";

// Parameter(0) -> Convolution(1, opaque) -> AvgPool(2) -> Result(3).
std::string conv_model(const std::string& pool_in_dims) {
  return ir(parameter_text(0, "in", "1,3,8,8") +
                layer(1, "conv", "Convolution", "opset1",
                      "strides=\"1,1\" dilations=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\" "
                      "auto_pad=\"explicit\"",
                      in_port(0, "1,3,8,8"), out_port(1, "FP32", "1,8,8,8")) +
                layer(2, "pool", "AvgPool", "opset1", kPool2, in_port(0, pool_in_dims),
                      out_port(1, "FP32", "1,8,4,4")) +
                result(3, "out", "1,8,4,4"),
            edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(2, 1, 3, 0));
}

// Parameter(0) + output_size(1) -> AdaptiveAvgPool(2) -> Result(3). `size_layer` is layer 1.
std::string adaptive_model(const std::string& size_layer, const std::string& out_dims) {
  return ir(parameter_text(0, "in", "1,3,10,12") + size_layer +
                layer(2, "pool", "AdaptiveAvgPool", "opset8", "",
                      in_port(0, "1,3,10,12") + in_port(1, "2"), out_port(2, "FP32", out_dims)) +
                result(3, "out", out_dims),
            edge(0, 0, 2, 0) + edge(1, 1, 2, 1) + edge(2, 2, 3, 0));
}

std::string const_layer(const std::string& element_type, const std::string& precision,
                        std::uint64_t offset, std::uint64_t size) {
  return layer(1, "size", "Const", "opset1",
               "element_type=\"" + element_type + "\" shape=\"2\" offset=\"" +
                   std::to_string(offset) + "\" size=\"" + std::to_string(size) + "\"",
               "", out_port(1, precision, "2"));
}

std::string lower_case_const() {
  auto s = const_layer("i64", "I64", 0, 16);
  const std::string from = "type=\"Const\"";
  s.replace(s.find(from), from.size(), "type=\"const\"");
  return s;
}

std::string size_parameter() {
  return layer(1, "size", "Parameter", "opset1", "shape=\"2\" element_type=\"i64\"", "",
               out_port(1, "I64", "2"));
}

// Parameter(0) -> MaxPool(1) -> values Result(2) + indices Result(3). `index_precision` empty
// declares only the values port (MaxPool-1).
std::string max_model(const std::string& version, const std::string& data,
                      const std::string& in_dims, const std::string& values_dims,
                      const std::string& index_precision = "I64",
                      const std::string& index_dims = "") {
  const auto& idx_dims = index_dims.empty() ? values_dims : index_dims;
  const bool two = !index_precision.empty();
  return ir(parameter_text(0, "in", in_dims) +
                layer(1, "pool", "MaxPool", version, data, in_port(0, in_dims),
                      out_port(1, "FP32", values_dims) +
                          (two ? out_port(2, index_precision, idx_dims) : "")) +
                result(2, "values", values_dims) + (two ? result(3, "indices", idx_dims) : ""),
            edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + (two ? edge(1, 2, 3, 0) : ""));
}

// Parameter(0) + i64 Const output_size(1) -> AdaptiveMaxPool(2) -> Results(3, 4).
std::string adaptive_max_model(const std::string& data, const std::string& out_dims,
                               const std::string& index_precision) {
  return ir(parameter_text(0, "in", "1,3,10,12") + const_layer("i64", "I64", 0, 16) +
                layer(2, "pool", "AdaptiveMaxPool", "opset8", data,
                      in_port(0, "1,3,10,12") + in_port(1, "2"),
                      out_port(2, "FP32", out_dims) + out_port(3, index_precision, out_dims)) +
                result(3, "values", out_dims) + result(4, "indices", out_dims),
            edge(0, 0, 2, 0) + edge(1, 1, 2, 1) + edge(2, 2, 3, 0) + edge(2, 3, 4, 0));
}

const std::string kMax8 =
    "kernel=\"3,3\" strides=\"2,2\" pads_begin=\"1,1\" pads_end=\"1,1\" dilations=\"1,1\"";

// --- the table ----------------------------------------------------------------------------

struct Expected {
  const char* rule;
  Severity severity;
  std::optional<std::size_t> layer;
  std::vector<std::string> message;  // substrings
  const char* declared = nullptr;
  const char* inferred = nullptr;
};

struct Case {
  const char* name;
  std::string xml;
  std::optional<std::string> bin;  // written next to the xml as m.bin
  bool strict;
  std::vector<Expected> expected;  // exactly these diagnostics, in any order
  std::vector<std::size_t> checked;
};

constexpr auto W = Severity::warning;
constexpr auto E = Severity::error;

std::vector<Case> cases() {
  return {
      {"Parameter -> AvgPool -> Result with correct dims",
       pool_model("opset1", kPool2 + " exclude-pad=\"true\" rounding_type=\"floor\"", "1,3,8,8",
                  "1,3,4,4"),
       std::nullopt,
       false,
       {},
       {0, 1, 2}},
      {"wrong declared output dim",
       pool_model("opset1", kPool2, "1,3,8,8", "1,3,5,4"),
       std::nullopt,
       false,
       {{"dim-mismatch",
         E,
         1,
         {"declared [1,3,5,4], inferred [1,3,4,4]"},
         "[1,3,5,4]",
         "[1,3,4,4]"}},
       {0, 1, 2}},
      {"declared -1 matches anything",
       pool_model("opset1", kPool2, "1,3,8,8", "1,-1,4,-1"),
       std::nullopt,
       false,
       {},
       {0, 1, 2}},
      {"wrong declared rank",
       pool_model("opset1", kPool2, "1,3,8,8", "1,3,4"),
       std::nullopt,
       false,
       {{"dim-mismatch", E, 1, {}, "[1,3,4]", "[1,3,4,4]"}},
       {0, 1, 2}},
      {"wrong precision",
       pool_model("opset1", kPool2, "1,3,8,8", "1,3,4,4", "FP16"),
       std::nullopt,
       false,
       {{"type-mismatch",
         E,
         1,
         {"declared precision FP16, inferred element type f32"},
         "FP16",
         "f32"}},
       {0, 1, 2}},
      {"opaque Convolution keeps its declared outputs; the pool after it is checked",
       conv_model("1,8,8,8"),
       std::nullopt,
       false,
       {},
       {0, 2, 3}},
      {"edge mismatch between an opaque producer and a consumer",
       conv_model("1,8,7,7"),
       std::nullopt,
       false,
       {{"edge-mismatch",
         E,
         2,
         {"declared [1,8,7,7]", "layer 1 'conv'", "output port 1", "declares [1,8,8,8]"},
         "[1,8,7,7]",
         ""}},
       {0, 2, 3}},
      {"unknown attribute exclude_pad",
       pool_model("opset1", kPool2 + " exclude_pad=\"false\"", "1,3,8,8", "1,3,4,4"),
       std::nullopt,
       false,
       {{"unknown-attribute", W, 1, {"'exclude_pad'", "did you mean 'exclude-pad'"}}},
       {0, 1, 2}},
      {"unknown attribute exclude_pad, strict",
       pool_model("opset1", kPool2 + " exclude_pad=\"false\"", "1,3,8,8", "1,3,4,4"),
       std::nullopt,
       true,
       {{"unknown-attribute", E, 1, {"did you mean 'exclude-pad'"}}},
       {0, 1, 2}},
      {"unparsable bool",
       pool_model("opset1", kPool2 + " exclude-pad=\"ture\"", "1,3,8,8", "1,3,4,4"),
       std::nullopt,
       false,
       {{"bad-bool", W, 1, {"'exclude-pad'", "\"ture\""}}},
       {0, 1, 2}},
      {"unparsable bool, strict",
       pool_model("opset1", kPool2 + " exclude-pad=\"ture\"", "1,3,8,8", "1,3,4,4"),
       std::nullopt,
       true,
       {{"bad-bool", E, 1, {}}},
       {0, 1, 2}},
      {"1..10 in <dim>, strict",
       pool_model("opset1", kPool2, "1,3,8,8", "1,3,4,4..10"),
       std::nullopt,
       true,
       {{"dim-text", E, 1, {"read by OpenVINO as 4"}}, {"dim-text", E, 2, {}}},
       {0, 1, 2}},
      {"bad enum value",
       pool_model("opset1", kPool2 + " rounding_type=\"xyz\"", "1,3,8,8", "1,3,4,4"),
       std::nullopt,
       false,
       {{"bad-attribute", E, 1, {"\"xyz\" is not a member of enum ov::op::RoundingType"}}},
       {0, 2}},
      {"AvgPool opset14 accepts ceil_torch",
       pool_model("opset14",
                  "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"1,1\" pads_end=\"1,1\" "
                  "rounding_type=\"ceil_torch\"",
                  "1,3,9,3", "1,3,5,2"),
       std::nullopt,
       false,
       {},
       {0, 1, 2}},
      {"AvgPool opset1 rejects ceil_torch",
       pool_model("opset1", kPool2 + " rounding_type=\"ceil_torch\"", "1,3,8,8", "1,3,4,4"),
       std::nullopt,
       false,
       {{"validation", E, 1, {"Rounding CEIL_TORCH is not supported."}}},
       {0, 2}},
      {"unsupported opset",
       pool_model("opset99", kPool2, "1,3,8,8", "1,3,4,4"),
       std::nullopt,
       false,
       {{"unknown-opset", E, 1, {"Cannot create AvgPool", "from unsupported opset: opset99"}}},
       {0, 2}},
      {"an op irrun does not implement, in an opset OpenVINO does not have",
       pool_model("opset17", "", "1,3,8,8", "1,3,8,8", "FP32", "Convolution"),
       std::nullopt,
       false,
       {{"unknown-opset", E, 1, {"Cannot create Convolution", "from unsupported opset: opset17"}}},
       {0, 2}},
      {"an op irrun does not implement, in an extension's opset",
       pool_model("my_extension", "", "1,3,8,8", "1,3,8,8", "FP32", "Convolution"),
       std::nullopt,
       false,
       {},
       {0, 2}},
      {"AdaptiveAvgPool not in opset5",
       adaptive_model(size_parameter(), "1,3,3,5")
           .replace(adaptive_model(size_parameter(), "1,3,3,5").find("opset8"), 6, "opset5"),
       std::nullopt,
       false,
       {{"unknown-opset",
         E,
         2,
         {"Opset opset5 doesn't contain the operation with type: AdaptiveAvgPool"}}},
       {0, 1, 3}},
      {"AdaptiveAvgPool output_size from an i64 Const",
       adaptive_model(const_layer("i64", "I64", 0, 16), "1,3,3,5"),
       bytes_of<std::int64_t>({3, 5}),
       false,
       {},
       {0, 1, 2, 3}},
      {"AdaptiveAvgPool output_size from an i64 Const at an offset, wrong declared dim",
       adaptive_model(const_layer("i64", "I64", 8, 16), "1,3,3,4"),
       bytes_of<std::int64_t>({99, 3, 5}),
       false,
       {{"dim-mismatch", E, 2, {}, "[1,3,3,4]", "[1,3,3,5]"}},
       {0, 1, 2, 3}},
      {"AdaptiveAvgPool output_size from an i32 Const",
       adaptive_model(const_layer("i32", "I32", 0, 8), "1,3,3,4"),
       bytes_of<std::int32_t>({3, 5}),
       false,
       {{"dim-mismatch", E, 2, {}, "[1,3,3,4]", "[1,3,3,5]"}},
       {0, 1, 2, 3}},
      // OpenVINO takes output_size in any element type: each value range-checked, then cast
      // toward zero (section 4); irrun warns that the specification allows i32/i64 only.
      {"AdaptiveAvgPool output_size from an f32 Const, fractions cut",
       adaptive_model(const_layer("f32", "FP32", 0, 8), "1,3,3,4"),
       bytes_of<float>({3.0f, 5.9f}),
       false,
       {{"bad-type", W, 2, {"output_size has element type f32"}},
        {"dim-mismatch", E, 2, {}, "[1,3,3,4]", "[1,3,3,5]"}},
       {0, 1, 2, 3}},
      {"AdaptiveAvgPool output_size from a u8 Const",
       adaptive_model(const_layer("u8", "U8", 0, 2), "1,3,3,5"),
       bytes_of<std::uint8_t>({3, 5}),
       false,
       {{"bad-type", W, 2, {"output_size has element type u8"}}},
       {0, 1, 2, 3}},
      {"AdaptiveAvgPool output_size from an f16 Const",
       adaptive_model(const_layer("f16", "FP16", 0, 4), "1,3,3,5"),
       bytes_of<std::uint16_t>({0x4200, 0x4500}),  // 3.0, 5.0
       false,
       {{"bad-type", W, 2, {"output_size has element type f16"}}},
       {0, 1, 2, 3}},
      {"AdaptiveAvgPool output_size NaN",
       adaptive_model(const_layer("f32", "FP32", 0, 8), "1,3,3,5"),
       bytes_of<float>({3.0f, std::numeric_limits<float>::quiet_NaN()}),
       false,
       {{"validation", E, 2, {"output_size value nan not in range [-9223372036854775808:"}}},
       {0, 1, 3}},
      {"AdaptiveAvgPool output_size 2^63, exactly",
       adaptive_model(const_layer("u64", "U64", 0, 16), "1,3,3,5"),
       bytes_of<std::uint64_t>({3, std::uint64_t{1} << 63}),
       false,
       {{"validation", E, 2, {"value 9223372036854775808 not in range"}}},
       {0, 1, 3}},
      {"AdaptiveAvgPool output_size -1: a dynamic dim",
       adaptive_model(const_layer("f32", "FP32", 0, 8), "1,3,3,-1"),
       bytes_of<float>({3.0f, -1.0f}),
       false,
       {{"bad-type", W, 2, {}}},
       {0, 1, 2, 3}},
      {"AdaptiveAvgPool output_size past int64",
       adaptive_model(const_layer("u64", "U64", 0, 16), "1,3,3,5"),
       bytes_of<std::uint64_t>({3, 18446744073709551615u}),
       false,
       {{"validation",
         E,
         2,
         {"value 18446744073709551615 not in range [-9223372036854775808:9223372036854775807]"}}},
       {0, 1, 3}},
      {"AdaptiveAvgPool output_size from a Parameter: a declared static dim matches",
       adaptive_model(size_parameter(), "1,3,3,5"),
       std::nullopt,
       false,
       {},
       {0, 1, 2, 3}},
      {"Const beyond the end of the .bin",
       adaptive_model(const_layer("i64", "I64", 8, 16), "1,3,3,5"),
       bytes_of<std::int64_t>({3, 5}),
       false,
       {{"bad-weights", E, 1, {"Incorrect weights in bin file!"}}},
       {0, 2, 3}},
      {"Const size too small",
       adaptive_model(const_layer("i64", "I64", 0, 8), "1,3,3,5"),
       bytes_of<std::int64_t>({3, 5}),
       false,
       {{"bad-weights", E, 1, {"Attribute and shape size are inconsistent"}}},
       {0, 2, 3}},
      // Section 1, Const: a larger size is fine when the .bin holds it...
      {"Const size larger than needed, .bin long enough",
       adaptive_model(const_layer("i64", "I64", 0, 24), "1,3,3,5"),
       bytes_of<std::int64_t>({3, 5, 99}),
       false,
       {},
       {0, 1, 2, 3}},
      // ... but offset + size must fit in it.
      {"Const size larger than needed, .bin too short",
       adaptive_model(const_layer("i64", "I64", 0, 24), "1,3,3,5"),
       bytes_of<std::int64_t>({3, 5}),
       false,
       {{"bad-weights", E, 1, {"Incorrect weights in bin file!"}}},
       {0, 2, 3}},
      {"Const without <data>",
       adaptive_model(layer(1, "size", "Const", "opset1", "", "", out_port(1, "I64", "2")),
                      "1,3,3,5"),
       bytes_of<std::int64_t>({3, 5}),
       false,
       {{"bad-attribute", E, 1, {"No attributes defined for Const op!", "(no <data>)"}}},
       {0, 2, 3}},
      {"Const without offset",
       adaptive_model(
           layer(1, "size", "Const", "opset1", "element_type=\"i64\" shape=\"2\" size=\"16\"", "",
                 out_port(1, "I64", "2")),
           "1,3,3,5"),
       bytes_of<std::int64_t>({3, 5}),
       false,
       {{"bad-attribute", E, 1, {"missing mandatory attribute 'offset'"}}},
       {0, 2, 3}},
      {"Const without size",
       adaptive_model(
           layer(1, "size", "Const", "opset1", "element_type=\"i64\" shape=\"2\" offset=\"0\"", "",
                 out_port(1, "I64", "2")),
           "1,3,3,5"),
       bytes_of<std::int64_t>({3, 5}),
       false,
       {{"bad-attribute", E, 1, {"missing mandatory attribute 'size'"}}},
       {0, 2, 3}},
      // offset and size are read by get_uint64_attr (ir_reader.hpp, uint64_attr).
      {"Const offset and size spelled +0 and 016",
       adaptive_model(layer(1, "size", "Const", "opset1",
                            "element_type=\"i64\" shape=\"2\" offset=\"+0\" size=\" 016\"", "",
                            out_port(1, "I64", "2")),
                      "1,3,3,5"),
       bytes_of<std::int64_t>({3, 5}),
       false,
       {},
       {0, 1, 2, 3}},
      {"Const size with a trailing blank",
       adaptive_model(layer(1, "size", "Const", "opset1",
                            "element_type=\"i64\" shape=\"2\" offset=\"0\" size=\"16 \"", "",
                            out_port(1, "I64", "2")),
                      "1,3,3,5"),
       bytes_of<std::int64_t>({3, 5}),
       false,
       {{"bad-attribute", E, 1, {"'size' = \"16 \" is not a non-negative integer"}}},
       {0, 2, 3}},
      // Section 1, element types: the enum adapter takes F32 (case-insensitive) but
      // element::Type(string) does not; Type(string) takes FP32 but the enum does not. A Const
      // needs both. (The pool then reads the declared FP32 port: the usual output_size warning.)
      {"Const element_type F32",
       adaptive_model(const_layer("F32", "FP32", 0, 8), "1,3,3,5"),
       bytes_of<float>({3.0f, 5.0f}),
       false,
       {{"bad-attribute", E, 1, {"'element_type': \"F32\" is not an element type"}},
        {"bad-type", W, 2, {"output_size has element type f32"}}},
       {0, 2, 3}},
      {"Const element_type FP32",
       adaptive_model(const_layer("FP32", "FP32", 0, 8), "1,3,3,5"),
       bytes_of<float>({3.0f, 5.0f}),
       false,
       {{"bad-attribute", E, 1, {"'element_type': \"FP32\" is not an element type"}},
        {"bad-type", W, 2, {"output_size has element type f32"}}},
       {0, 2, 3}},
      // I64 is in both: the enum ignores case and Type(string) has the upper-case twin.
      {"Const element_type I64",
       adaptive_model(const_layer("I64", "I64", 0, 16), "1,3,3,5"),
       bytes_of<std::int64_t>({3, 5}),
       false,
       {},
       {0, 1, 2, 3}},
      {"missing .bin: a no-weights warning, output_size unknown",
       adaptive_model(const_layer("i64", "I64", 0, 16), "1,3,3,5"),
       std::nullopt,
       false,
       {{"no-weights", W, std::nullopt, {"no weights file"}}},
       {0, 1, 2, 3}},
      // The type is looked up case-insensitively, but only `Const` so spelled is renamed
      // Constant first (OpenVINO's translate_type_name): `const` is no op of opset1. It still
      // draws the no-weights warning (model.hpp: the model has a Const-like layer).
      {"missing .bin with a lower-case const layer",
       adaptive_model(lower_case_const(), "1,3,3,5"),
       std::nullopt,
       false,
       {{"no-weights", W, std::nullopt, {"no weights file"}},
        {"unknown-opset",
         E,
         1,
         {"Opset opset1 doesn't contain the operation with type: const (did you mean Const?"}}},
       {0, 2, 3}},
      {"a validation failure does not stop the other layers",
       ir(parameter_text(0, "in", "1,3,8,8") +
              layer(1, "big", "AvgPool", "opset1", "kernel=\"10,2\" strides=\"1,1\"",
                    in_port(0, "1,3,8,8"), out_port(1, "FP32", "1,3,4,4")) +
              layer(2, "small", "AvgPool", "opset1", kPool2, in_port(0, "1,3,4,4"),
                    out_port(1, "FP32", "1,3,2,3")) +
              result(3, "out", "1,3,2,3"),
          edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(2, 1, 3, 0)),
       std::nullopt,
       false,
       {{"validation",
         E,
         1,
         {"Kernel after dilation has size (dim: 10) larger than the data shape after padding "
          "(dim: 8) at axis 0."}},
        {"dim-mismatch", E, 2, {}, "[1,3,2,3]", "[1,3,2,2]"}},
       {0, 2, 3}},
      {"an unreachable layer is a warning",
       ir(parameter_text(0, "in", "1,3,8,8") + result(1, "out", "1,3,8,8") +
              layer(2, "dead", "AvgPool", "opset1", kPool2, in_port(0, "1,3,8,8"),
                    out_port(1, "FP32", "1,3,4,4")),
          edge(0, 0, 1, 0) + edge(0, 0, 2, 0)),
       std::nullopt,
       false,
       {{"unreachable-layer", W, 2, {}}},
       {0, 1}},
      // --- MaxPool family: two outputs, both checked ---
      {"MaxPool-1 (opset7) with one output",
       max_model("opset7", kPool2 + " rounding_type=\"floor\" auto_pad=\"explicit\"", "1,3,8,8",
                 "1,3,4,4", ""),
       std::nullopt,
       false,
       {},
       {0, 1, 2}},
      {"MaxPool-8 values and i64 indices",
       max_model("opset8", kMax8 + " index_element_type=\"i64\" axis=\"0\"", "1,3,7,7", "1,3,4,4"),
       std::nullopt,
       false,
       {},
       {0, 1, 2, 3}},
      {"MaxPool-8 from opset13, i32 indices, negative axis",
       max_model("opset13", kMax8 + " index_element_type=\"I32\" axis=\"-2\"", "1,3,7,7", "1,3,4,4",
                 "I32"),
       std::nullopt,
       false,
       {},
       {0, 1, 2, 3}},
      {"MaxPool-8 indices port precision must be index_element_type",
       max_model("opset8", kMax8 + " index_element_type=\"i32\"", "1,3,7,7", "1,3,4,4", "I64"),
       std::nullopt,
       false,
       {{"type-mismatch",
         E,
         1,
         {"declared precision I64, inferred element type i32"},
         "I64",
         "i32"}},
       {0, 1, 2, 3}},
      {"MaxPool-8 wrong declared indices dims",
       max_model("opset8", kMax8, "1,3,7,7", "1,3,4,4", "I64", "1,3,3,3"),
       std::nullopt,
       false,
       {{"dim-mismatch",
         E,
         1,
         {"declared [1,3,3,3], inferred [1,3,4,4]"},
         "[1,3,3,3]",
         "[1,3,4,4]"}},
       {0, 1, 2, 3}},
      {"MaxPool-8 declaring one output",
       max_model("opset8", kMax8, "1,3,7,7", "1,3,4,4", ""),
       std::nullopt,
       false,
       {{"bad-outputs", E, 1, {"MaxPool-8 has 2 output(s), the layer declares 1 output port(s)"}}},
       {0, 2}},
      {"MaxPool-1 declaring two outputs",
       max_model("opset1", kPool2, "1,3,8,8", "1,3,4,4"),
       std::nullopt,
       false,
       {{"bad-outputs", E, 1, {"MaxPool-1 has 1 output(s), the layer declares 2 output port(s)"}}},
       {0, 2, 3}},
      {"MaxPool-1 warns about MaxPool-8 attributes",
       max_model("opset1", kPool2 + " dilations=\"2,2\" axis=\"1\"", "1,3,8,8", "1,3,4,4", ""),
       std::nullopt,
       false,
       {{"unknown-attribute", W, 1, {"'dilations' is not an attribute of MaxPool-1"}},
        {"unknown-attribute", W, 1, {"'axis'"}}},
       {0, 1, 2}},
      {"MaxPool has no exclude-pad",
       max_model("opset8", kMax8 + " exclude-pad=\"true\"", "1,3,7,7", "1,3,4,4"),
       std::nullopt,
       false,
       {{"unknown-attribute", W, 1, {"'exclude-pad' is not an attribute of MaxPool-8"}}},
       {0, 1, 2, 3}},
      {"MaxPool-14 (opset15) ceil_torch",
       max_model("opset15",
                 "kernel=\"2\" strides=\"2\" pads_begin=\"1\" pads_end=\"1\" "
                 "rounding_type=\"ceil_torch\"",
                 "1,3,9", "1,3,5"),
       std::nullopt,
       false,
       {},
       {0, 1, 2, 3}},
      {"MaxPool-8 rejects ceil_torch",
       max_model("opset8", kMax8 + " rounding_type=\"ceil_torch\"", "1,3,7,7", "1,3,4,4"),
       std::nullopt,
       false,
       {{"validation", E, 1, {"Rounding CEIL_TORCH is not supported."}}},
       {0, 2, 3}},
      {"MaxPool not in opset16",
       max_model("opset16", kMax8, "1,3,7,7", "1,3,4,4"),
       std::nullopt,
       false,
       {{"unknown-opset",
         E,
         1,
         {"Opset opset16 doesn't contain the operation with type: MaxPool"}}},
       {0, 2, 3}},
      {"MaxPool-8 axis out of range",
       max_model("opset8", kMax8 + " axis=\"4\"", "1,3,7,7", "1,3,4,4"),
       std::nullopt,
       false,
       {{"validation", E, 1, {"Axis 4 out of the tensor rank range [-4, 3]."}}},
       {0, 2, 3}},
      {"MaxPool-8 unparsable axis is read as 0",
       max_model("opset8", kMax8 + " axis=\"x\"", "1,3,7,7", "1,3,4,4"),
       std::nullopt,
       false,
       {{"bad-number", W, 1, {"'axis' = \"x\" is read by OpenVINO as 0"}}},
       {0, 1, 2, 3}},
      {"MaxPool-8 index_element_type not an element type",
       max_model("opset8", kMax8 + " index_element_type=\"int64\"", "1,3,7,7", "1,3,4,4"),
       std::nullopt,
       false,
       {{"bad-attribute", E, 1, {"\"int64\" is not a member of enum element::Type_t"}}},
       {0, 2, 3}},
      {"MaxPool-8 index_element_type f32",
       max_model("opset8", kMax8 + " index_element_type=\"f32\"", "1,3,7,7", "1,3,4,4", "FP32"),
       std::nullopt,
       false,
       {{"validation", E, 1, {"Index element type must be i32 or i64"}}},
       {0, 2, 3}},
      {"AdaptiveMaxPool-8 values and i32 indices",
       adaptive_max_model("index_element_type=\"i32\"", "1,3,3,5", "I32"),
       bytes_of<std::int64_t>({3, 5}),
       false,
       {},
       {0, 1, 2, 3, 4}},
      {"AdaptiveMaxPool-8 default i64 indices, wrong declared precision",
       adaptive_max_model("", "1,3,3,5", "I32"),
       bytes_of<std::int64_t>({3, 5}),
       false,
       {{"type-mismatch", E, 2, {"declared precision I32, inferred element type i64"}}},
       {0, 1, 2, 3, 4}},
      {"MaxPool-8 i32 indices that cannot hold every position",
       max_model("opset8",
                 "kernel=\"1,1\" strides=\"65536,65536\" axis=\"0\" "
                 "index_element_type=\"i32\"",
                 "2,1,32768,32769", "2,1,1,1", "I32"),
       std::nullopt,
       false,
       {{"index-overflow", W, 1, {"i32 indices range over 2147549184 positions"}}},
       {0, 1, 2, 3}},
      {"MaxPool-8 i32 indices over exactly 2^31 positions fit (0 to 2147483647)",
       max_model("opset8",
                 "kernel=\"1,1\" strides=\"65536,65536\" axis=\"0\" "
                 "index_element_type=\"i32\"",
                 "2,1,32768,32768", "2,1,1,1", "I32"),
       std::nullopt,
       false,
       {},
       {0, 1, 2, 3}},
      {"MaxPool-8 i32 indices per plane fit",
       max_model("opset8",
                 "kernel=\"1,1\" strides=\"65536,65536\" axis=\"2\" "
                 "index_element_type=\"i32\"",
                 "2,1,32768,32768", "2,1,1,1", "I32"),
       std::nullopt,
       false,
       {},
       {0, 1, 2, 3}},
      // OpenVINO's shape inference takes boolean and string inputs (its template plugin runs
      // boolean AvgPool-1): a warning, an error under --strict; no element type is an error.
      {"AvgPool-1 over a boolean input",
       typed_pool_model("boolean", "BOOL", "AvgPool", "opset1"),
       std::nullopt,
       false,
       {{"bad-type", W, 1, {"input 0 has element type boolean, not a number"}}},
       {0, 1, 2}},
      {"AvgPool-1 over a boolean input, --strict",
       typed_pool_model("boolean", "BOOL", "AvgPool", "opset1"),
       std::nullopt,
       true,
       {{"bad-type", E, 1, {"input 0 has element type boolean, not a number"}}},
       {0, 1, 2}},
      {"MaxPool-1 over a string input",
       typed_pool_model("string", "STRING", "MaxPool", "opset1"),
       std::nullopt,
       false,
       {{"bad-type", W, 1, {"input 0 has element type string, not a number"}}},
       {0, 1, 2}},
      {"AvgPool-14 over an input of undefined element type",
       typed_pool_model("undefined", "UNSPECIFIED", "AvgPool", "opset14"),
       std::nullopt,
       false,
       {{"bad-type", E, 1, {"input 0 has element type undefined, expected a float or integer"}}},
       {0, 2}},
      {"AdaptiveMaxPool-8 index type u8",
       adaptive_max_model("index_element_type=\"u8\"", "1,3,3,5", "U8"),
       bytes_of<std::int64_t>({3, 5}),
       false,
       {{"validation", E, 2, {"Index element type must be i32 or i64"}}},
       {0, 1, 3, 4}},
  };
}

}  // namespace

TEST_CASE("check_file on whole models", "[check]") {
  for (const auto& c : cases()) {
    CAPTURE(c.name);
    TempDir dir("check");
    const auto xml = dir.write("m.xml", c.xml);
    if (c.bin) dir.write("m.bin", *c.bin);
    CheckOptions options;
    options.strict = c.strict;
    const CheckReport report = irrun::check_file(xml, options);
    REQUIRE(report.model.has_value());
    CHECK(report.path == xml);
    std::string all;
    for (const auto& d : report.diagnostics) all += irrun::format(report, d) + "\n";
    CAPTURE(all);

    CHECK(report.diagnostics.size() == c.expected.size());
    std::vector<bool> used(report.diagnostics.size(), false);
    std::size_t errors = 0;
    for (const auto& e : c.expected) {
      CAPTURE(e.rule);
      errors += e.severity == Severity::error;
      const Diagnostic* found = nullptr;
      for (std::size_t i = 0; i < report.diagnostics.size() && !found; ++i) {
        if (!used[i] && report.diagnostics[i].rule == e.rule) {
          used[i] = true;
          found = &report.diagnostics[i];
        }
      }
      CHECK(found != nullptr);
      if (!found) continue;
      CHECK(found->severity == e.severity);
      CHECK(found->layer == e.layer);
      for (const auto& s : e.message) CHECK_THAT(found->message, Catch::Contains(s));
      if (e.declared) CHECK(found->declared == e.declared);
      if (e.inferred) CHECK(found->inferred == e.inferred);
      if (found->layer) CHECK(found->line > 0);
    }
    CHECK(report.errors() == errors);
    CHECK(report.warnings() == c.expected.size() - errors);
    CHECK(report.passed() == (errors == 0));
    CHECK(report.checked == c.checked);
    // Diagnostics come in file order.
    CHECK(std::is_sorted(report.diagnostics.begin(), report.diagnostics.end(),
                         [](const Diagnostic& a, const Diagnostic& b) { return a.line < b.line; }));
  }
}

TEST_CASE("v10 IRs: the name checks of OpenVINO's update_v10_model", "[check]") {
  // in (tensor names `in_names`) -> pool -> out; a second Parameter `other` -> out2 when given.
  const auto model = [](const std::string& version, const std::string& in_names,
                        const std::string& pool_names, const std::string& other_names = "",
                        const std::string& other_layer = "other") {
    const auto port = [](int id, const std::string& names, const std::string& dims) {
      std::string p = "<port id=\"" + std::to_string(id) + "\" precision=\"FP32\"";
      if (!names.empty()) p += " names=\"" + names + "\"";
      return p + ">" + dims_xml(dims) + "</port>";
    };
    std::string layers =
        layer(0, "in", "Parameter", "opset1", "shape=\"1,1,4\" element_type=\"f32\"", "",
              port(0, in_names, "1,1,4")) +
        layer(1, "pool", "AvgPool", "opset1",
              "kernel=\"2\" strides=\"2\" pads_begin=\"0\" pads_end=\"0\"", in_port(0, "1,1,4"),
              port(1, pool_names, "1,1,2")) +
        result(2, "out", "1,1,2");
    std::string edges = edge(0, 0, 1, 0) + edge(1, 1, 2, 0);
    if (!other_names.empty() || other_layer != "other") {
      layers += layer(3, other_layer, "Parameter", "opset1", "shape=\"1\" element_type=\"f32\"", "",
                      port(0, other_names, "1")) +
                result(4, "out2", "1");
      edges += edge(3, 0, 4, 0);
    }
    auto xml = ir(layers, edges);
    xml.replace(xml.find("version=\"11\""), 12, "version=\"" + version + "\"");
    return xml;
  };
  constexpr const char* kTensors = "Model tensor names have collisions.";
  constexpr const char* kOps = "Model operation names have collisions with tensor names.";
  struct NameCase {
    const char* name;
    std::string xml;
    std::optional<std::size_t> layer;  // the one name-collision error's layer, or none
    std::string message;
  };
  const std::vector<NameCase> cases = {
      {"no tensor names", model("10", "", ""), std::nullopt, ""},
      {"tensor names of their own", model("10", "x", "y"), std::nullopt, ""},
      {"an output tensor already named after its producer", model("10", "x", "pool"), std::nullopt,
       ""},
      {"an input tensor named after the op feeding a Result", model("10", "pool", ""), 2,
       std::string(kOps) + " ('pool')"},
      {"two inputs' tensors share a name", model("10", "x", "", "x"), 3,
       std::string(kTensors) + " ('x')"},
      {"an output tensor has an input tensor's name", model("10", "x", "x"), 2,
       std::string(kTensors) + " ('x')"},
      {"a Parameter named like another input's tensor", model("10", "", "", "in", "other"), 0,
       std::string(kOps) + " ('in')"},
      {"v11 has none of this", model("11", "pool", "x", "x"), std::nullopt, ""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    TempDir dir;
    const auto path = dir.write("m.xml", c.xml);
    const auto report = irrun::check_file(path, CheckOptions{});
    std::vector<const Diagnostic*> found;
    for (const auto& d : report.diagnostics)
      if (d.rule == "name-collision") found.push_back(&d);
    if (!c.layer) {
      CHECK(found.empty());
      continue;
    }
    REQUIRE(found.size() == 1);
    CHECK(found[0]->severity == E);
    CHECK(found[0]->layer == c.layer);
    CHECK_THAT(found[0]->message, Catch::StartsWith(c.message));
    CHECK_THAT(found[0]->message, Catch::EndsWith("Please use MO to generate new IR version, it "
                                                  "should allow to avoid the issue"));
  }
}

TEST_CASE("check diagnostics name the port and line", "[check]") {
  TempDir dir("check");
  const std::string text = pool_model("opset1", kPool2, "1,3,8,8", "1,3,5,4");
  const auto xml = dir.write("m.xml", text);
  const auto report = irrun::check_file(xml, {});
  REQUIRE(report.diagnostics.size() == 1);
  const auto& d = report.diagnostics[0];
  CHECK(d.port == "output port 1");
  // The pool's output port is the only `<port id="1" precision` in the file.
  const auto pos = text.find("<port id=\"1\" precision=");
  REQUIRE(pos != std::string::npos);
  const auto line = static_cast<std::size_t>(std::count(
                        text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n')) +
                    1;
  CHECK(d.line == line);
  CHECK(irrun::format(report, d) ==
        xml + ":" + std::to_string(line) +
            ": error: layer 1 'pool' (AvgPool-1 opset1) output port 1: declared [1,3,5,4], "
            "inferred [1,3,4,4] [dim-mismatch]");
}

TEST_CASE("a malformed <data> value is reported at the <data> line, as attribute warnings are",
          "[check]") {
  TempDir dir("check");
  const auto line_at = [](const std::string& text, const std::string& needle) {
    const auto pos = text.find(needle);
    REQUIRE(pos != std::string::npos);
    return static_cast<std::size_t>(
               std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n')) +
           1;
  };
  for (const std::string attr : {"rounding_type=\"xyz\"", "exclude_pad=\"true\""}) {
    CAPTURE(attr);
    const std::string text = pool_model("opset1", kPool2 + " " + attr, "1,3,8,8", "1,3,4,4");
    const auto data_line = line_at(text, attr);
    REQUIRE(data_line != line_at(text, "name=\"pool\""));
    const auto report = irrun::check_file(dir.write("m.xml", text), {});
    REQUIRE(report.diagnostics.size() == 1);
    const auto& d = report.diagnostics[0];
    INFO(irrun::format(report, d));
    CHECK((d.rule == "bad-attribute" || d.rule == "unknown-attribute"));
    CHECK(d.line == data_line);
  }
}

TEST_CASE("edge mismatches are reported at the edge's line", "[check]") {
  TempDir dir("check");
  const std::string text = conv_model("1,8,7,7");
  const auto report = irrun::check_file(dir.write("m.xml", text), {});
  REQUIRE(report.diagnostics.size() == 1);
  const auto& d = report.diagnostics[0];
  CHECK(d.rule == "edge-mismatch");
  CHECK(d.port == "input port 0");
  CHECK(d.declared == "[1,8,7,7]");
  CHECK(d.inferred.empty());  // nothing was inferred: both ends are what the file declares
  CHECK(d.producer_declared == "[1,8,8,8]");
  const auto pos = text.find("<edge from-layer=\"1\"");
  REQUIRE(pos != std::string::npos);
  CHECK(d.line == static_cast<std::size_t>(std::count(
                      text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n')) +
                      1);
}

TEST_CASE("an explicit weights file", "[check]") {
  TempDir dir("check");
  const auto xml = dir.write("m.xml", adaptive_model(const_layer("i64", "I64", 0, 16), "1,3,3,4"));
  const auto bin = dir.write("other.bin", bytes_of<std::int64_t>({3, 4}));
  CheckOptions options;
  options.weights = bin;
  const auto report = irrun::check_file(xml, options);
  CHECK(report.diagnostics.empty());
  CHECK(report.passed());
  REQUIRE(report.model.has_value());
  CHECK(report.model->weights_path == bin);

  options.weights = dir.file("missing.bin");
  const auto missing = irrun::check_file(xml, options);
  REQUIRE(missing.diagnostics.size() == 1);
  CHECK(missing.diagnostics[0].rule == "unreadable");
  CHECK_THAT(missing.diagnostics[0].message, Catch::Contains("missing.bin"));
  CHECK_FALSE(missing.passed());
}

TEST_CASE("unreadable files give one unreadable diagnostic", "[check]") {
  TempDir dir("check");
  fs::create_directories(dir.file("sub.xml"));
  struct Case {
    const char* name;
    std::string path;
    const char* message;
    std::size_t line;
  };
  const std::vector<Case> unreadable = {
      {"does not exist", dir.file("nope.xml"), "cannot open", 0},
      {"a directory", dir.file("sub.xml"), "is a directory", 0},
      {"empty", dir.write("empty.xml", ""), "empty file", 0},
      {"not well-formed", dir.write("bad.xml", "<net version=\"10\">\n<layers>\n</net>\n"),
       "not well-formed XML", 3},
      {"IR version 9", dir.write("v9.xml", "<net version=\"9\"/>\n"), "IR version '9'", 1},
      {"dangling edge",
       dir.write("edge.xml", ir(parameter_text(0, "in", "1,1,4"), edge(5, 0, 0, 0))),
       "from-layer 5 does not exist", 0},
  };
  for (const auto& c : unreadable) {
    CAPTURE(c.name);
    const auto report = irrun::check_file(c.path, {});
    CHECK_FALSE(report.model.has_value());
    CHECK(report.checked.empty());
    REQUIRE(report.diagnostics.size() == 1);
    const auto& d = report.diagnostics[0];
    CHECK(d.rule == "unreadable");
    CHECK(d.severity == Severity::error);
    CHECK_FALSE(d.layer.has_value());
    CHECK_THAT(d.message, Catch::Contains(c.message));
    if (c.line) CHECK(d.line == c.line);
    CHECK(report.errors() == 1);
    CHECK_FALSE(report.passed());
    CHECK_THAT(irrun::format(report, d), Catch::StartsWith(c.path));
    CHECK_THAT(irrun::format(report, d), Catch::EndsWith("[unreadable]"));
  }
}

TEST_CASE("integer element types in both precision spellings pass check", "[check][int]") {
  struct Spelling {
    const char* element_type;
    const char* precision;
  };
  for (const auto& s : std::vector<Spelling>{{"i8", "I8"},
                                             {"i8", "i8"},
                                             {"u8", "U8"},
                                             {"u8", "u8"},
                                             {"i32", "I32"},
                                             {"I32", "i32"},
                                             {"i64", "I64"},
                                             {"i64", "i64"}}) {
    CAPTURE(s.element_type, s.precision);
    TempDir dir("check");
    const auto xml = dir.write(
        "m.xml", ir(parameter_text(0, "in", "1,3,8,8", s.element_type, s.precision) +
                        layer(1, "pool", "AvgPool", "opset1", kPool2, in_port(0, "1,3,8,8"),
                              out_port(1, s.precision, "1,3,4,4")) +
                        result(2, "out", "1,3,4,4"),
                    edge(0, 0, 1, 0) + edge(1, 1, 2, 0)));
    const CheckReport report = irrun::check_file(xml, CheckOptions{});
    std::string all;
    for (const auto& d : report.diagnostics) all += irrun::format(report, d) + "\n";
    INFO(all);
    CHECK(report.passed());
    CHECK(report.diagnostics.empty());
  }
  // An i8 input pooled into a port declared U8 is a type mismatch, as FP16 for f32 is.
  TempDir dir("check");
  const auto xml =
      dir.write("m.xml", ir(parameter_text(0, "in", "1,3,8,8", "i8", "I8") +
                                layer(1, "pool", "AvgPool", "opset1", kPool2, in_port(0, "1,3,8,8"),
                                      out_port(1, "U8", "1,3,4,4")) +
                                result(2, "out", "1,3,4,4"),
                            edge(0, 0, 1, 0) + edge(1, 1, 2, 0)));
  const CheckReport report = irrun::check_file(xml, CheckOptions{});
  REQUIRE(report.diagnostics.size() == 1);
  CHECK(report.diagnostics[0].rule == "type-mismatch");
  CHECK(report.diagnostics[0].message == "declared precision U8, inferred element type i8");
}
