// AttrReader: <data> values read as OpenVINO's AttributeVisitor reads them (`>>` per field).
#include "irrun/attrs.hpp"

#include <catch2/catch.hpp>

namespace {

using irrun::AttrReader;
using irrun::Diagnostics;
using irrun::Layer;
using irrun::LayerError;

Layer with_data(const std::string& key, const std::string& value) {
  Layer layer;
  layer.name = "pool";
  layer.type = "AvgPool";
  layer.version = "opset1";
  layer.has_data = true;
  layer.data = {{key, value}};
  return layer;
}

}  // namespace

TEST_CASE("uint_list reads each field as `>>` does", "[attrs]") {
  struct Case {
    const char* value;
    std::vector<std::uint64_t> expected;
    const char* warning;  // substring of the one "bad-number" warning, or nullptr
  };
  const std::vector<Case> cases = {
      {"", {}, nullptr},
      {"2", {2}, nullptr},
      {"1,2,3", {1, 2, 3}, nullptr},
      {" 1 , 2 ", {1, 2}, nullptr},
      {"2,", {2}, nullptr},
      {"+2,+3", {2, 3}, nullptr},
      {"-0", {0}, nullptr},
      {"-0,4", {0, 4}, nullptr},
      {"18446744073709551615", {18446744073709551615u}, nullptr},
      {"x", {0}, "field 'x' is read by OpenVINO as 0"},
      {"2x", {2}, "field '2x' is read by OpenVINO as 2"},
      {"+", {0}, "field '+' is read by OpenVINO as 0"},
      {"++2", {0}, "field '++2' is read by OpenVINO as 0"},
      {"+-2", {0}, "field '+-2' is read by OpenVINO as 0"},
      {"-x", {0}, "field '-x' is read by OpenVINO as 0"},
      {"1.5", {1}, "field '1.5' is read by OpenVINO as 1"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.value);
    const auto layer = with_data("kernel", c.value);
    Diagnostics diagnostics;
    AttrReader reader(layer, 0, "AvgPool-1", diagnostics);
    CHECK(reader.uint_list("kernel") == c.expected);
    if (c.warning) {
      REQUIRE(diagnostics.size() == 1);
      CHECK(diagnostics[0].rule == "bad-number");
      CHECK_THAT(diagnostics[0].message, Catch::Contains(c.warning));
    } else {
      CHECK(diagnostics.empty());
    }
  }
}

TEST_CASE("uint_list errors: empty fields, negative and too large values", "[attrs]") {
  struct Case {
    const char* value;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"1,,2", "Cannot get vector of parameters! \"1,,2\" is incorrect"},
      {",1", "Cannot get vector of parameters!"},
      {"-1", "negative value -1 in an unsigned list (OpenVINO wraps it to 18446744073709551615)"},
      {"2,-3x",
       "negative value -3 in an unsigned list (OpenVINO wraps it to 18446744073709551613)"},
      {"18446744073709551616", "value 18446744073709551616 is too large"},
      {"-18446744073709551616", "value -18446744073709551616 is too large"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.value);
    const auto layer = with_data("kernel", c.value);
    Diagnostics diagnostics;
    AttrReader reader(layer, 0, "AvgPool-1", diagnostics);
    try {
      reader.uint_list("kernel");
      FAIL("accepted");
    } catch (const LayerError& e) {
      CHECK(e.rule() == "bad-attribute");
      CHECK_THAT(e.what(), Catch::Contains(c.message));
    }
  }
}

TEST_CASE("int64 reads the value as `>>` does", "[attrs]") {
  struct Case {
    const char* value;
    std::int64_t expected;
    bool warns;
  };
  const std::vector<Case> cases = {
      {"2", 2, false},     {"+2", 2, false}, {"-2", -2, false},
      {" -1 ", -1, false}, {"-0", 0, false}, {"+-2", 0, true},
      {"--2", 0, true},    {"x", 0, true},   {"3abc", 3, true},
      {"+", 0, true},      {"", 0, true},    {"-9223372036854775808", INT64_MIN, false},
  };
  for (const auto& c : cases) {
    CAPTURE(c.value);
    const auto layer = with_data("axis", c.value);
    Diagnostics diagnostics;
    AttrReader reader(layer, 0, "MaxPool-8", diagnostics);
    CHECK(reader.int64("axis", 7) == c.expected);
    CHECK(diagnostics.size() == (c.warns ? 1u : 0u));
  }
  const auto absent = with_data("other", "1");
  Diagnostics diagnostics;
  AttrReader reader(absent, 0, "MaxPool-8", diagnostics);
  CHECK(reader.int64("axis", 7) == 7);
  const auto huge = with_data("axis", "9223372036854775808");
  AttrReader too_large(huge, 0, "MaxPool-8", diagnostics);
  CHECK_THROWS_WITH(too_large.int64("axis", 0), Catch::Contains("out of the 64-bit range"));
}
