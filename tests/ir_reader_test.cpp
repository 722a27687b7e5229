// Table-driven tests of the IR XML reader: one case per construct of docs/openvino-semantics.md
// section 1 (document, layers, <data>, ports, <dim>, rt_info, edges), with the exception type,
// the message and the line it names.
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "irrun/error.hpp"
#include "irrun/ir_reader.hpp"

using irrun::ElementType;
using irrun::IrModel;
using irrun::ModelError;
using irrun::parse_ir;

namespace {

// A whole IR around `layers` and `edges`; line 1 is the XML declaration, line 2 <net>, line 3
// <layers>, so the first line of `layers` is line 4.
std::string ir(const std::string& layers, const std::string& edges = "",
               const std::string& version = "10") {
  return "<?xml version=\"1.0\"?>\n<net name=\"m\" version=\"" + version + "\">\n<layers>\n" +
         layers + "</layers>\n<edges>\n" + edges + "</edges>\n</net>\n";
}

// 1-based line of the first occurrence of `needle`.
std::size_t line_of(const std::string& text, const std::string& needle) {
  const auto pos = text.find(needle);
  REQUIRE(pos != std::string::npos);
  std::size_t line = 1;
  for (std::size_t i = 0; i < pos; ++i) line += text[i] == '\n';
  return line;
}

std::optional<ModelError> parse_error(const std::string& xml) {
  try {
    parse_ir(xml, "m.xml");
  } catch (const ModelError& e) {
    return e;
  }
  return std::nullopt;
}

const std::string kParameter =
    "<layer id=\"0\" name=\"in\" type=\"Parameter\" version=\"opset1\">\n"
    "<data shape=\"1,3,4,4\" element_type=\"f32\"/>\n"
    "<output><port id=\"0\" precision=\"FP32\"><dim>1</dim><dim>3</dim><dim>4</dim><dim>4</dim>"
    "</port></output>\n"
    "</layer>\n";

const std::string kResult =
    "<layer id=\"1\" name=\"out\" type=\"Result\" version=\"opset1\">\n"
    "<input><port id=\"0\"><dim>1</dim><dim>3</dim><dim>4</dim><dim>4</dim></port></input>\n"
    "</layer>\n";

const std::string kEdge = "<edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>\n";

// A Parameter whose single output port has the given attributes and <dim>s.
std::string parameter_with_port(const std::string& port_attrs, const std::string& dims) {
  return "<layer id=\"0\" name=\"in\" type=\"Parameter\" version=\"opset1\">\n"
         "<data shape=\"1\" element_type=\"f32\"/>\n"
         "<output><port id=\"0\" " +
         port_attrs + ">" + dims + "</port></output>\n</layer>\n";
}

// A Result whose single input port has the given attributes.
std::string result_with_port(const std::string& port_attrs) {
  return "<layer id=\"1\" name=\"out\" type=\"Result\" version=\"opset1\">\n"
         "<input><port id=\"0\" " +
         port_attrs + "><dim>1</dim></port></input>\n</layer>\n";
}

struct ErrorCase {
  const char* name;
  std::string xml;
  const char* message;  // substring of what()
  const char* marker;   // the error names the line of this text; nullptr: no line (0)
};

std::vector<ErrorCase> error_cases() {
  return {
      {"IR version 9", ir(kParameter + kResult, kEdge, "9"), "IR version '9' is not supported",
       "<net"},
      {"IR version 12", ir(kParameter + kResult, kEdge, "12"), "IR version '12' is not supported",
       "<net"},
      {"IR version missing",
       "<?xml version=\"1.0\"?>\n<net name=\"m\">\n<layers/>\n<edges/>\n</net>\n",
       "is not supported", "<net"},
      {"IR version not a number", ir("", "", "ten"), "IR version 'ten' is not supported", "<net"},
      {"root is not net", "<?xml version=\"1.0\"?>\n<model version=\"10\"><layers/></model>\n",
       "the root element is <model>, expected <net>", "<model"},
      {"missing layer id", ir("<layer name=\"a\" type=\"Parameter\" version=\"opset1\"/>\n"),
       "missing mandatory attribute 'id'", "<layer name=\"a\""},
      {"missing layer name", ir("<layer id=\"0\" type=\"Parameter\" version=\"opset1\"/>\n"),
       "missing mandatory attribute 'name'", "<layer id=\"0\""},
      {"missing layer type", ir("<layer id=\"0\" name=\"a\" version=\"opset1\"/>\n"),
       "missing mandatory attribute 'type'", "<layer id=\"0\""},
      {"missing layer version", ir("<layer id=\"0\" name=\"a\" type=\"Parameter\"/>\n"),
       "missing mandatory attribute 'version'", "<layer id=\"0\""},
      {"non-numeric layer id",
       ir("<layer id=\"x1\" name=\"a\" type=\"Parameter\" version=\"opset1\"/>\n"),
       "attribute 'id' of <layer> is 'x1', expected a non-negative integer", "<layer id=\"x1\""},
      {"negative layer id",
       ir("<layer id=\"-1\" name=\"a\" type=\"Parameter\" version=\"opset1\"/>\n"),
       "attribute 'id' of <layer> is '-1'", "<layer id=\"-1\""},
      {"duplicate layer id",
       ir(kParameter + "<layer id=\"0\" name=\"dup\" type=\"Result\" version=\"opset1\"/>\n"),
       "duplicate layer id 0", "name=\"dup\""},
      {"duplicate port id",
       ir("<layer id=\"0\" name=\"a\" type=\"Foo\" version=\"extension\">\n"
          "<input><port id=\"0\"/></input>\n"
          "<output><port id=\"0\" precision=\"FP32\"/></output>\n</layer>\n"),
       "duplicate port id 0", "<output>"},
      {"missing port id",
       ir("<layer id=\"0\" name=\"a\" type=\"Foo\" version=\"extension\">\n"
          "<output><port precision=\"FP32\"/></output>\n</layer>\n"),
       "missing mandatory attribute 'id'", "<output>"},
      {"missing output precision", ir(parameter_with_port("", "<dim>1</dim>")),
       "output port 0: missing mandatory attribute 'precision'", "<output>"},
      {"bad output precision F32", ir(parameter_with_port("precision=\"F32\"", "<dim>1</dim>")),
       "precision 'F32' is not an element type", "<output>"},
      {"bad output precision bool", ir(parameter_with_port("precision=\"bool\"", "<dim>1</dim>")),
       "precision 'bool' is not an element type", "<output>"},
      {"dim ?", ir(parameter_with_port("precision=\"FP32\"", "<dim>?</dim>")),
       "<dim>?</dim> is not a dimension", "<output>"},
      {"dim -2", ir(parameter_with_port("precision=\"FP32\"", "<dim>-2</dim>")),
       "<dim>-2</dim> is not a dimension", "<output>"},
      {"dim empty", ir(parameter_with_port("precision=\"FP32\"", "<dim></dim>")),
       "is not a dimension", "<output>"},
      {"dim overflow",
       ir(parameter_with_port("precision=\"FP32\"", "<dim>99999999999999999999</dim>")),
       "is not a dimension", "<output>"},
      {"dim on an input port",
       ir("<layer id=\"1\" name=\"out\" type=\"Result\" version=\"opset1\">\n"
          "<input><port id=\"0\"><dim>x</dim></port></input>\n</layer>\n"),
       "<dim>x</dim> is not a dimension", "<input>"},
      {"duplicate v11 layer rt_info attribute",
       ir("<layer id=\"0\" name=\"a\" type=\"Foo\" version=\"extension\">\n"
          "<rt_info>\n<attribute name=\"fused_names\" version=\"0\" value=\"a\"/>\n"
          "<attribute name=\"fused_names\" version=\"0\" value=\"b\"/>\n</rt_info>\n</layer>\n",
          "", "11"),
       "multiple rt_info attributes are detected: fused_names", "value=\"b\""},
      {"duplicate v11 port rt_info attribute",
       ir("<layer id=\"0\" name=\"a\" type=\"Foo\" version=\"extension\">\n"
          "<output><port id=\"0\" precision=\"FP32\"><dim>1</dim>\n<rt_info>\n"
          "<attribute name=\"layout\" version=\"0\" layout=\"[N]\"/>\n"
          "<attribute name=\"layout\" version=\"0\" layout=\"[C]\"/>\n"
          "</rt_info>\n</port></output>\n</layer>\n",
          "", "11"),
       "multiple rt_info attributes are detected: layout", "layout=\"[C]\""},
      {"edge without from-layer",
       ir(kParameter + kResult, "<edge from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>\n"),
       "missing mandatory attribute 'from-layer'", "<edge "},
      {"edge without from-port",
       ir(kParameter + kResult, "<edge from-layer=\"0\" to-layer=\"1\" to-port=\"0\"/>\n"),
       "missing mandatory attribute 'from-port'", "<edge "},
      {"edge without to-layer",
       ir(kParameter + kResult, "<edge from-layer=\"0\" from-port=\"0\" to-port=\"0\"/>\n"),
       "missing mandatory attribute 'to-layer'", "<edge "},
      {"edge without to-port",
       ir(kParameter + kResult, "<edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\"/>\n"),
       "missing mandatory attribute 'to-port'", "<edge "},
      // get_uint64_attr refuses trailing text, blanks included, and negative values.
      {"layer id with a trailing blank",
       ir("<layer id=\"0 \" name=\"a\" type=\"Parameter\" version=\"opset1\"/>\n"),
       "attribute 'id' of <layer> is '0 ', expected a non-negative integer", "<layer id=\"0 \""},
      {"port id past 2^63 - 1",
       ir("<layer id=\"0\" name=\"a\" type=\"Foo\" version=\"extension\">\n"
          "<output><port id=\"9223372036854775808\" precision=\"FP32\"/></output>\n</layer>\n"),
       "attribute 'id' of <port> is '9223372036854775808'", "<output>"},
      {"edge with a signed negative port",
       ir(kParameter + kResult,
          "<edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"-1\"/>\n"),
       "attribute 'to-port' of <edge> is '-1'", "<edge "},
      {"edge with two signs",
       ir(kParameter + kResult,
          "<edge from-layer=\"+-0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>\n"),
       "attribute 'from-layer' of <edge> is '+-0'", "<edge "},
      {"IR version with a trailing blank", ir(kParameter + kResult, kEdge, "11 "),
       "IR version '11 ' is not supported", "<net"},
      {"IR version 1e1", ir(kParameter + kResult, kEdge, "1e1"),
       "IR version '1e1' is not supported", "<net"},
      {"edge with a non-numeric port",
       ir(kParameter + kResult,
          "<edge from-layer=\"0\" from-port=\"a\" to-layer=\"1\" to-port=\"0\"/>\n"),
       "attribute 'from-port' of <edge> is 'a'", "<edge "},
  };
}

}  // namespace

TEST_CASE("IR versions 10 and 11 are read", "[ir_reader]") {
  for (const std::string version : {"10", "11"}) {
    CAPTURE(version);
    const auto m = parse_ir(ir(kParameter + kResult, kEdge, version), "m.xml");
    CHECK(m.ir_version == std::stoi(version));
    CHECK(m.name == "m");
    CHECK(m.path == "m.xml");
    REQUIRE(m.layers.size() == 2);
    CHECK(m.layers[0].id == 0);
    CHECK(m.layers[0].name == "in");
    CHECK(m.layers[0].type == "Parameter");
    CHECK(m.layers[0].version == "opset1");
    CHECK(m.layers[0].line == 4);
    CHECK(m.layers[1].line == line_of(ir(kParameter + kResult, kEdge, version), "name=\"out\""));
    REQUIRE(m.edges.size() == 1);
    CHECK(m.edges[0].from_layer == 0);
    CHECK(m.edges[0].from_port == 0);
    CHECK(m.edges[0].to_layer == 1);
    CHECK(m.edges[0].to_port == 0);
    CHECK(m.diagnostics.empty());
  }
}

TEST_CASE("lines end with LF, CRLF or a lone CR, as XML 1.0 says", "[ir_reader]") {
  const auto text = ir(kParameter + kResult, kEdge, "11");
  const auto out_line = line_of(text, "name=\"out\"");
  REQUIRE(out_line > 4);
  std::string crlf, cr;
  for (const char c : text) {
    crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
    cr += c == '\n' ? '\r' : c;
  }
  for (const auto& [name, xml] : {std::pair{"CRLF", crlf}, std::pair{"CR", cr}}) {
    CAPTURE(name);
    const auto m = parse_ir(xml, "m.xml");
    REQUIRE(m.layers.size() == 2);
    CHECK(m.layers[0].line == 4);
    CHECK(m.layers[1].line == out_line);
    REQUIRE(m.edges.size() == 1);
    CHECK(m.edges[0].line == line_of(text, "<edge "));
  }
}

TEST_CASE("the root element name is compared case-insensitively", "[ir_reader]") {
  const auto m = parse_ir("<NET version=\"10\"><layers/><edges/></NET>", "m.xml");
  CHECK(m.ir_version == 10);
  CHECK(m.layers.empty());
  CHECK(m.edges.empty());
}

TEST_CASE("uint64 attributes: OpenVINO's get_uint64_attr spellings", "[ir_reader]") {
  // get_uint64_attr (src/common/util/src/xml_parse_utils.cpp): std::stoll in base 10 must consume
  // the whole text and give a value >= 0. stoll skips leading blanks, takes one sign and any
  // number of leading zeros, and fails past 2^63 - 1.
  using U = std::optional<std::uint64_t>;
  const std::vector<std::pair<std::string, U>> cases = {
      {"11", 11},
      {" 11", 11},
      {"  \t\n\v\f\r11", 11},
      {"+11", 11},
      {"011", 11},
      {"000000000000000000000000011", 11},
      {"0", 0},
      {"+0", 0},
      {"-0", 0},
      {"-000", 0},
      {" -0", 0},
      {"9223372036854775807", 9223372036854775807u},
      {"+09223372036854775807", 9223372036854775807u},
      {"9223372036854775808", std::nullopt},
      {"18446744073709551615", std::nullopt},
      {"99999999999999999999999", std::nullopt},
      {"11 ", std::nullopt},
      {"11\t", std::nullopt},
      {"1 1", std::nullopt},
      {"", std::nullopt},
      {" ", std::nullopt},
      {"+", std::nullopt},
      {"-", std::nullopt},
      {"-1", std::nullopt},
      {" -7", std::nullopt},
      {"+-1", std::nullopt},
      {"+-0", std::nullopt},
      {"--0", std::nullopt},
      {"-+0", std::nullopt},
      {"-+1", std::nullopt},
      {"--1", std::nullopt},
      {"++1", std::nullopt},
      {"+ 1", std::nullopt},
      {"0x1A", std::nullopt},
      {"1e2", std::nullopt},
      {"1.0", std::nullopt},
      {"11a", std::nullopt},
      {"a11", std::nullopt},
  };
  for (const auto& [text, expected] : cases) {
    CAPTURE(text);
    CHECK(irrun::uint64_attr(text) == expected);
  }

  // The reader takes those spellings in layer and port ids, edges and <net version>.
  const std::string xml =
      "<?xml version=\"1.0\"?>\n<net name=\"m\" version=\" +011\">\n<layers>\n"
      "<layer id=\" 7\" name=\"in\" type=\"Parameter\" version=\"opset1\">\n"
      "<data shape=\"1\" element_type=\"f32\"/>\n"
      "<output><port id=\"+03\" precision=\"FP32\"><dim>1</dim></port></output>\n</layer>\n"
      "<layer id=\"-0\" name=\"out\" type=\"Result\" version=\"opset1\">\n"
      "<input><port id=\"  00\"><dim>1</dim></port></input>\n</layer>\n"
      "</layers>\n<edges>\n"
      "<edge from-layer=\"007\" from-port=\" 3\" to-layer=\"+0\" to-port=\"-00\"/>\n"
      "</edges>\n</net>\n";
  const auto m = parse_ir(xml, "m.xml");
  CHECK(m.ir_version == 11);
  REQUIRE(m.layers.size() == 2);
  CHECK(m.layers[0].id == 7);
  CHECK(m.layers[1].id == 0);
  REQUIRE(m.layers[0].outputs.size() == 1);
  CHECK(m.layers[0].outputs[0].id == 3);
  REQUIRE(m.layers[1].inputs.size() == 1);
  CHECK(m.layers[1].inputs[0].id == 0);
  REQUIRE(m.edges.size() == 1);
  CHECK(m.edges[0].from_layer == 7);
  CHECK(m.edges[0].from_port == 3);
  CHECK(m.edges[0].to_layer == 0);
  CHECK(m.edges[0].to_port == 0);
}

TEST_CASE("a <net> starting past byte 512 is read", "[ir_reader]") {
  // Section 1 reads the version from the first 512 bytes; current OpenVINO (frontend.cpp
  // get_ir_version) parses the whole stream when those do not give one, as behind a long
  // comment or a long attribute before `version`.
  const std::string comment = "<!--" + std::string(600, 'c') + "-->\n";
  const std::string attr = "doc=\"" + std::string(600, 'a') + "\" ";
  const std::string body = ir(kParameter + kResult, kEdge, "11");
  const std::string declaration = "<?xml version=\"1.0\"?>\n";
  REQUIRE(body.rfind(declaration, 0) == 0);
  const std::string after_comment = declaration + comment + body.substr(declaration.size());
  std::string long_attr = body;
  long_attr.insert(long_attr.find("<net ") + 5, attr);
  for (const auto& [name, xml] :
       {std::pair{"comment", after_comment}, std::pair{"attribute", long_attr}}) {
    CAPTURE(name);
    REQUIRE(xml.find("version=\"11\"") > 512);
    const auto m = parse_ir(xml, "m.xml");
    CHECK(m.ir_version == 11);
    CHECK(m.layers.size() == 2);
    CHECK(m.edges.size() == 1);
    CHECK(m.diagnostics.empty());
  }
}

TEST_CASE("a net without layers and edges is an empty model", "[ir_reader]") {
  const auto m = parse_ir("<net version=\"11\"/>", "m.xml");
  CHECK(m.ir_version == 11);
  CHECK(m.name.empty());
  CHECK(m.layers.empty());
}

TEST_CASE("reader errors: ModelError with message and line", "[ir_reader]") {
  for (const auto& c : error_cases()) {
    CAPTURE(c.name);
    const auto e = parse_error(c.xml);
    REQUIRE(e.has_value());
    CHECK(e->code() == irrun::ExitCode::bad_model);
    CHECK(e->path() == "m.xml");
    CHECK_THAT(std::string(e->what()), Catch::Contains(c.message));
    CHECK_THAT(std::string(e->what()), Catch::StartsWith("m.xml"));
    const std::size_t line = c.marker ? line_of(c.xml, c.marker) : 0;
    CHECK(e->line() == line);
    if (line)
      CHECK_THAT(std::string(e->what()), Catch::StartsWith("m.xml:" + std::to_string(line) + ": "));
  }
}

TEST_CASE("not well-formed XML names line and offset", "[ir_reader]") {
  struct Case {
    const char* name;
    std::string xml;
    std::size_t line;
  };
  const std::vector<Case> cases = {
      {"unclosed tag", "<net version=\"10\">\n<layers>\n<layer id=\"0\" name=", 3},
      {"mismatched end tag", "<net version=\"10\">\n<layers>\n</edges>\n</net>\n", 3},
      {"bad attribute", "<net version=\"10\">\n<layers>\n<layer id=0/>\n</layers>\n</net>\n", 3},
      {"empty document", "", 1},
      {"text only", "hello", 1},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto e = parse_error(c.xml);
    REQUIRE(e.has_value());
    const std::string what = e->what();
    CHECK_THAT(what, Catch::Contains("not well-formed XML"));
    CHECK_THAT(what, Catch::Contains(" at offset "));
    if (std::string(c.name) != "empty document" && std::string(c.name) != "text only") {
      CHECK(e->line() == c.line);
      CHECK_THAT(what, Catch::StartsWith("m.xml:" + std::to_string(c.line) + ": "));
    }
  }
}

TEST_CASE("an IR's text must be UTF-8 unless it declares another encoding", "[ir_reader]") {
  auto named = [](const std::string& name) {
    return "<layer id=\"0\" name=\"" + name +
           "\" type=\"Parameter\" version=\"opset1\">\n"
           "<data shape=\"1\" element_type=\"f32\"/>\n</layer>\n";
  };
  struct Case {
    const char* what;
    std::string xml;
    const char* byte;  // the error's byte, or nullptr: read, with the name `name`
    std::string name;
  };
  const std::string latin1_decl = "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?>\n";
  const Case cases[] = {
      {"UTF-8 name", ir(named("pool\xC3\xA9")), nullptr, "pool\xC3\xA9"},
      {"a lone 0xFF", ir(named("p\xFF")), "0xFF", ""},
      {"an overlong form", ir(named("p\xC0\xAF")), "0xC0", ""},
      {"a surrogate", ir(named("p\xED\xA0\x80")), "0xED", ""},
      {"declared UTF-8, lower case",
       "<?xml version=\"1.0\" encoding='utf-8'?>\n" + ir(named("\xE9")).substr(22), "0xE9", ""},
      {"declared latin1: pugixml converts it", latin1_decl + ir(named("p\xE9")).substr(22), nullptr,
       "p\xC3\xA9"},
      {"declared latin1, by that name",
       "<?xml version=\"1.0\" encoding=\"LATIN1\"?>\n" + ir(named("p\xE9")).substr(22), nullptr,
       "p\xC3\xA9"},
      // pugixml converts no other encoding: the bytes would pass through as they are.
      {"declared windows-1252",
       "<?xml version=\"1.0\" encoding=\"windows-1252\"?>\n" + ir(named("p\x93")).substr(22),
       "0x93", ""},
      {"declared UTF-16 on 8-bit text",
       "<?xml version=\"1.0\" encoding=\"UTF-16\"?>\n" + ir(named("p\xE9")).substr(22), "0xE9", ""},
  };
  for (const auto& c : cases) {
    CAPTURE(c.what);
    const auto e = parse_error(c.xml);
    if (!c.byte) {
      REQUIRE_FALSE(e.has_value());
      const auto m = parse_ir(c.xml, "m.xml");
      REQUIRE(m.layers.size() == 1);
      CHECK(m.layers[0].name == c.name);
      continue;
    }
    REQUIRE(e.has_value());
    CHECK(e->line() == line_of(c.xml, "<layer id"));
    CHECK_THAT(std::string(e->what()),
               Catch::StartsWith("m.xml:" + std::to_string(e->line()) + ": not UTF-8: byte " +
                                 c.byte + " at offset "));
  }
}

TEST_CASE("a UTF-16 or UTF-32 IR with its byte-order mark reads as its UTF-8 form", "[ir_reader]") {
  // Two layers, the second with a wrong attribute line to find: lines count in the text itself.
  const std::string utf8 = ir(kParameter + kResult,
                              "<edge from-layer=\"0\" from-port=\"0\" "
                              "to-layer=\"1\" to-port=\"0\"/>\n");
  auto wide = [&](std::size_t width, bool little) {
    std::string out = width == 2 ? (little ? "\xFF\xFE" : "\xFE\xFF")
                                 : std::string(little ? "\xFF\xFE\0\0" : "\0\0\xFE\xFF", 4);
    for (char c : utf8) {  // ASCII only
      std::string unit(width, '\0');
      unit[little ? 0 : width - 1] = c;
      out += unit;
    }
    return out;
  };
  const auto want = parse_ir(utf8, "m.xml");
  for (const auto& [width, little] : {std::pair{2, true}, {2, false}, {4, true}, {4, false}}) {
    CAPTURE(width, little);
    const auto m = parse_ir(wide(width, little), "m.xml");
    REQUIRE(m.layers.size() == 2);
    CHECK(m.layers[1].name == "out");
    CHECK(m.layers[1].line == want.layers[1].line);
    CHECK(m.edges.size() == 1);
  }
}

TEST_CASE("precision: mandatory on output ports only, bad input precision is a warning",
          "[ir_reader]") {
  SECTION("missing precision on an input port is fine") {
    const auto m = parse_ir(ir(kParameter + result_with_port(""), kEdge), "m.xml");
    REQUIRE(m.layers[1].inputs.size() == 1);
    CHECK(m.layers[1].inputs[0].precision.empty());
    CHECK_FALSE(m.layers[1].inputs[0].type.has_value());
    CHECK(m.diagnostics.empty());
  }
  SECTION("a bad precision on an input port is a warning") {
    const auto xml = ir(kParameter + result_with_port("precision=\"Fp32\""), kEdge);
    const auto m = parse_ir(xml, "m.xml");
    CHECK(m.layers[1].inputs[0].precision == "Fp32");
    CHECK_FALSE(m.layers[1].inputs[0].type.has_value());
    REQUIRE(m.diagnostics.size() == 1);
    const auto& d = m.diagnostics[0];
    CHECK(d.severity == irrun::Severity::warning);
    CHECK(d.rule == "bad-precision");
    CHECK(d.layer == std::optional<std::size_t>(1));
    CHECK(d.port == "input port 0");
    CHECK_THAT(d.message, Catch::Contains("'Fp32'"));
    CHECK(d.line == line_of(xml, "precision=\"Fp32\""));
  }
  SECTION("a good precision on an input port is parsed") {
    const auto m =
        parse_ir(ir(kParameter + result_with_port("precision=\"FP16\""), kEdge), "m.xml");
    CHECK(m.layers[1].inputs[0].type == std::optional<ElementType>(ElementType::f16));
  }
  SECTION("output precisions: every port spelling") {
    for (const std::string p : {"FP32", "f32", "FP16", "f16", "I64", "i64", "I32", "U8", "BOOL",
                                "boolean", "BIN", "dynamic", "UNSPECIFIED"}) {
      CAPTURE(p);
      const auto m =
          parse_ir(ir(parameter_with_port("precision=\"" + p + "\"", "<dim>1</dim>")), "m.xml");
      CHECK(m.layers[0].outputs[0].precision == p);
      CHECK(m.layers[0].outputs[0].type == irrun::parse_precision(p));
      CHECK(m.layers[0].outputs[0].type.has_value());
    }
  }
}

TEST_CASE("<dim> values", "[ir_reader]") {
  struct Case {
    const char* dims;
    std::vector<std::int64_t> expected;
    bool warns;  // "dim-text"
  };
  const std::vector<Case> cases = {
      {"", {}, false},
      {"<dim>1</dim><dim>3</dim><dim>224</dim><dim>224</dim>", {1, 3, 224, 224}, false},
      {"<dim>-1</dim><dim>3</dim>", {-1, 3}, false},
      {"<dim>0</dim>", {0}, false},
      {"<dim> 7 </dim>", {7}, false},
      {"<dim>\n  12\n</dim>", {12}, false},
      {"<dim>+4</dim>", {4}, false},
      {"<dim>123456789012</dim>", {123456789012}, false},
      {"<dim>1..10</dim>", {1}, true},
      {"<dim>5abc</dim>", {5}, true},
      {"<dim>-1..3</dim>", {-1}, true},
      {"<dim>2 3</dim>", {2}, true},
  };
  for (const auto& c : cases) {
    CAPTURE(c.dims);
    const auto xml = ir(parameter_with_port("precision=\"FP32\"", c.dims));
    const auto m = parse_ir(xml, "m.xml");
    CHECK(m.layers[0].outputs[0].dims == c.expected);
    if (c.warns) {
      REQUIRE(m.diagnostics.size() == 1);
      CHECK(m.diagnostics[0].severity == irrun::Severity::warning);
      CHECK(m.diagnostics[0].rule == "dim-text");
      CHECK(m.diagnostics[0].layer == std::optional<std::size_t>(0));
      CHECK(m.diagnostics[0].port == "output port 0");
      CHECK(m.diagnostics[0].line == line_of(xml, "<output>"));
      CHECK_THAT(m.diagnostics[0].message,
                 Catch::Contains("read by OpenVINO as " + std::to_string(c.expected[0])));
    } else {
      CHECK(m.diagnostics.empty());
    }
  }
}

TEST_CASE("port names with \\, escapes", "[ir_reader]") {
  struct Case {
    const char* names;
    std::vector<std::string> expected;
  };
  const std::vector<Case> cases = {
      {"", {}},
      {"a", {"a"}},
      {"a,b", {"a", "b"}},
      {"a, b ,c", {"a", "b", "c"}},
      {R"(a\,b,c)", {"a,b", "c"}},
      {R"(x\,y\,z)", {"x,y,z"}},
      {"input:0,data", {"input:0", "data"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.names);
    const auto m =
        parse_ir(ir(parameter_with_port(std::string("precision=\"FP32\" names=\"") + c.names + "\"",
                                        "<dim>1</dim>")),
                 "m.xml");
    CHECK(m.layers[0].outputs[0].names == c.expected);
  }
}

TEST_CASE("port ids, order and lines", "[ir_reader]") {
  const auto xml = ir(
      "<layer id=\"7\" name=\"conv\" type=\"Convolution\" version=\"opset1\">\n"
      "<data strides=\"1,1\"/>\n"
      "<input>\n<port id=\"5\"><dim>1</dim></port>\n<port id=\"3\"><dim>2</dim></port>\n</input>\n"
      "<output>\n<port id=\"9\" precision=\"FP16\"><dim>4</dim></port>\n</output>\n</layer>\n");
  const auto m = parse_ir(xml, "m.xml");
  REQUIRE(m.layers.size() == 1);
  const auto& l = m.layers[0];
  CHECK(l.id == 7);
  REQUIRE(l.inputs.size() == 2);
  CHECK(l.inputs[0].id == 5);
  CHECK(l.inputs[0].dims == std::vector<std::int64_t>{1});
  CHECK(l.inputs[0].line == line_of(xml, "<port id=\"5\""));
  CHECK(l.inputs[1].id == 3);
  CHECK(l.inputs[1].line == line_of(xml, "<port id=\"3\""));
  REQUIRE(l.outputs.size() == 1);
  CHECK(l.outputs[0].id == 9);
  CHECK(l.outputs[0].type == std::optional<ElementType>(ElementType::f16));
  CHECK(l.outputs[0].line == line_of(xml, "<port id=\"9\""));
  CHECK(irrun::describe(l) == "layer 7 'conv' (Convolution opset1)");
}

TEST_CASE("<data> attributes are kept in file order", "[ir_reader]") {
  const auto m = parse_ir(
      ir("<layer id=\"0\" name=\"p\" type=\"AvgPool\" version=\"opset1\">\n"
         "<data strides=\"2,2\" kernel=\"3,3\" pads_begin=\"0,0\" exclude_pad=\"true\" "
         "pads_end=\"1,1\" rounding_type=\"ceil\" auto_pad=\"explicit\"/>\n</layer>\n"
         "<layer id=\"1\" name=\"q\" type=\"Foo\" version=\"extension\"/>\n"
         "<layer id=\"2\" name=\"r\" type=\"Foo\" version=\"extension\"><data/></layer>\n"),
      "m.xml");
  REQUIRE(m.layers.size() == 3);
  const std::vector<std::pair<std::string, std::string>> expected = {
      {"strides", "2,2"},      {"kernel", "3,3"},   {"pads_begin", "0,0"},
      {"exclude_pad", "true"}, {"pads_end", "1,1"}, {"rounding_type", "ceil"},
      {"auto_pad", "explicit"}};
  CHECK(m.layers[0].has_data);
  CHECK(m.layers[0].data == expected);
  REQUIRE(m.layers[0].attribute("kernel") != nullptr);
  CHECK(*m.layers[0].attribute("kernel") == "3,3");
  CHECK(m.layers[0].attribute("exclude-pad") == nullptr);
  CHECK_FALSE(m.layers[1].has_data);
  CHECK(m.layers[1].data.empty());
  CHECK(m.layers[2].has_data);
  CHECK(m.layers[2].data.empty());
}

TEST_CASE("rt_info, meta_data and quantization_parameters blocks are accepted", "[ir_reader]") {
  const std::string layers =
      "<layer id=\"0\" name=\"in\" type=\"Parameter\" version=\"opset1\">\n"
      "<data shape=\"1\" element_type=\"f32\"/>\n"
      "<rt_info>\n<attribute name=\"fused_names\" version=\"0\" value=\"in\"/>\n"
      "<attribute name=\"old_api_map_order\" version=\"0\" value=\"0\"/>\n</rt_info>\n"
      "<output><port id=\"0\" precision=\"FP32\" names=\"in\"><dim>1</dim>\n"
      "<rt_info><attribute name=\"layout\" version=\"0\" layout=\"[N]\"/></rt_info>\n"
      "</port></output>\n</layer>\n";
  const std::string tail =
      "<rt_info>\n<info name=\"framework\"><info name=\"a\" value=\"1\"/></info>\n"
      "<info name=\"conversion_parameters\" value=\"x\"/>\n</rt_info>\n"
      "<meta_data>\n<MO_version value=\"2022.1\"/>\n<cli_parameters>\n"
      "<input_shape value=\"[1]\"/>\n</cli_parameters>\n</meta_data>\n"
      "<quantization_parameters>\n<config>{}</config>\n<version value=\"1\"/>\n"
      "</quantization_parameters>\n";
  for (const std::string version : {"10", "11"}) {
    CAPTURE(version);
    const std::string xml = "<?xml version=\"1.0\"?>\n<net name=\"m\" version=\"" + version +
                            "\">\n<layers>\n" + layers + "</layers>\n<edges/>\n" + tail +
                            "</net>\n";
    const auto m = parse_ir(xml, "m.xml");
    REQUIRE(m.layers.size() == 1);
    CHECK(m.layers[0].outputs[0].dims == std::vector<std::int64_t>{1});
    CHECK(m.layers[0].outputs[0].names == std::vector<std::string>{"in"});
    CHECK(m.diagnostics.empty());
  }
}

TEST_CASE("duplicate rt_info attributes are not read in v10", "[ir_reader]") {
  // Per-layer and per-port rt_info is read only for v11+ (section 1).
  const std::string layer =
      "<layer id=\"0\" name=\"a\" type=\"Foo\" version=\"extension\">\n"
      "<rt_info>\n<attribute name=\"fused_names\" version=\"0\" value=\"a\"/>\n"
      "<attribute name=\"fused_names\" version=\"0\" value=\"b\"/>\n</rt_info>\n</layer>\n";
  CHECK_NOTHROW(parse_ir(ir(layer, "", "10"), "m.xml"));
  CHECK_THROWS_AS(parse_ir(ir(layer, "", "11"), "m.xml"), ModelError);
  // Different names are fine in v11.
  const std::string distinct =
      "<layer id=\"0\" name=\"a\" type=\"Foo\" version=\"extension\">\n"
      "<rt_info>\n<attribute name=\"fused_names\" version=\"0\" value=\"a\"/>\n"
      "<attribute name=\"primitives_priority\" version=\"0\" value=\"b\"/>\n</rt_info>\n"
      "</layer>\n";
  CHECK_NOTHROW(parse_ir(ir(distinct, "", "11"), "m.xml"));
  // OpenVINO skips attributes its factory does not know (another name or version, or none):
  // those may repeat.
  for (const std::string attr : {"name=\"foo\" version=\"0\"", "name=\"fused_names\" version=\"1\"",
                                 "name=\"fused_names\"", "version=\"0\""}) {
    CAPTURE(attr);
    const std::string twice =
        "<layer id=\"0\" name=\"a\" type=\"Foo\" version=\"extension\">\n"
        "<rt_info>\n<attribute " +
        attr + "/>\n<attribute " + attr + "/>\n</rt_info>\n</layer>\n";
    CHECK_NOTHROW(parse_ir(ir(twice, "", "11"), "m.xml"));
  }
}

TEST_CASE("edges keep their lines and file order", "[ir_reader]") {
  const std::string edges =
      "<edge from-layer=\"0\" from-port=\"0\" to-layer=\"1\" to-port=\"0\"/>\n"
      "<edge from-layer=\"10\" from-port=\"20\" to-layer=\"30\" to-port=\"40\"/>\n";
  const auto xml = ir(kParameter + kResult, edges);
  const auto m = parse_ir(xml, "m.xml");
  REQUIRE(m.edges.size() == 2);
  CHECK(m.edges[1].from_layer == 10);
  CHECK(m.edges[1].from_port == 20);
  CHECK(m.edges[1].to_layer == 30);
  CHECK(m.edges[1].to_port == 40);
  CHECK(m.edges[0].line == line_of(xml, "<edge from-layer=\"0\""));
  CHECK(m.edges[1].line == line_of(xml, "<edge from-layer=\"10\""));
}

TEST_CASE("where() and describe() format locations", "[ir_reader]") {
  IrModel m;
  m.path = "dir/m.xml";
  CHECK(irrun::where(m, 0) == "dir/m.xml: ");
  CHECK(irrun::where(m, 12) == "dir/m.xml:12: ");
  irrun::Layer l;
  l.id = 3;
  l.name = "pool1";
  l.type = "AvgPool";
  l.version = "opset1";
  CHECK(irrun::describe(l) == "layer 3 'pool1' (AvgPool-1 opset1)");
}

TEST_CASE("default_weights_path replaces the extension", "[ir_reader]") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"model.xml", "model.bin"},
      {"dir/model.xml", "dir/model.bin"},
      {"/abs/dir/m.v2.xml", "/abs/dir/m.v2.bin"},
      {"model", "model.bin"},
  };
  for (const auto& [xml, bin] : cases) {
    CAPTURE(xml);
    CHECK(irrun::default_weights_path(xml) == bin);
  }
}
