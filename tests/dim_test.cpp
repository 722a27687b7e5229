// Table-driven tests of irrun's Dim / PartialShape: OpenVINO's PartialShape(std::string) parsing
// rules (docs/openvino-semantics.md, section 1), printing, interval arithmetic and irrun's
// declared-vs-inferred rule (section 7).
#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "irrun/dim.hpp"

using irrun::Dim;
using irrun::kInf;
using irrun::PartialShape;

namespace {

struct DimParseCase {
  const char* text;
  Dim expected;
};

const std::vector<DimParseCase> kDimParseCases = {
    {"3", Dim::fixed(3)},
    {"0", Dim::fixed(0)},
    {" 3 ", Dim::fixed(3)},
    {"\t12\n", Dim::fixed(12)},
    {"?", Dim::dynamic()},
    {" ? ", Dim::dynamic()},
    {"-1", Dim::dynamic()},
    {"1..10", Dim::interval(1, 10)},
    {"..10", Dim::interval(0, 10)},
    {"2..", Dim::interval(2, kInf)},
    {"0..", Dim::dynamic()},
    {"5..5", Dim::fixed(5)},
    {"..", Dim::dynamic()},
    {"123456789012", Dim::fixed(123456789012)},
    // OpenVINO's Dimension(string) trims each bound on its own (src/core/src/dimension.cpp).
    {"1 .. 10", Dim::interval(1, 10)},
    {" .. 7", Dim::interval(0, 7)},
    {"3 ..", Dim::interval(3, kInf)},
};

struct ParseErrorCase {
  const char* text;
  const char* message;
};

const std::vector<ParseErrorCase> kDimParseErrors = {
    {"x", "Cannot parse dimension"},    {"3x", "Cannot parse dimension"},
    {"a..5", "Cannot parse min bound"}, {"1..b", "Cannot parse max bound"},
    {"1..?", "Cannot parse max bound"},
};

struct ShapeParseCase {
  const char* text;
  const char* expected;  // to_string of the result
  std::size_t rank;      // ignored for a dynamic rank
  bool rank_static;
};

const std::vector<ShapeParseCase> kShapeParseCases = {
    {"1,3,?,1..10", "[1,3,?,1..10]", 4, true},
    {"[1,3,-1,..5]", "[1,3,?,..5]", 4, true},
    {" [ 1 , 2 ] ", "[1,2]", 2, true},
    {"[1, 2..]", "[1,2..]", 2, true},
    {"7", "[7]", 1, true},
    {"[7]", "[7]", 1, true},
    {"...", "[...]", 0, false},
    {" ... ", "[...]", 0, false},
    {"[...]", "[...]", 0, false},
    {"", "[]", 0, true},
    {"[]", "[]", 0, true},
    {"  ", "[]", 0, true},
    {"-1,-1,-1", "[?,?,?]", 3, true},
    {"?,..10,3..", "[?,..10,3..]", 3, true},
    {"[ ... ]", "[...]", 0, false},
    {"[1, 2 .. 5]", "[1,2..5]", 2, true},
    // OpenVINO splits with std::getline, which yields no field after a trailing comma.
    {"1,2,", "[1,2]", 2, true},
    {"[1,?,]", "[1,?]", 2, true},
};

const std::vector<ParseErrorCase> kShapeParseErrors = {
    {"1,,2", "Cannot get vector of dimensions!"},
    {",1", "Cannot get vector of dimensions!"},
    {"[1,,2]", "Cannot get vector of dimensions!"},
    {"1,x", "Cannot parse dimension"},
    {"[1,a..3]", "Cannot parse min bound"},
    {"1,2..z", "Cannot parse max bound"},
    {"1,...", "Cannot parse"},
    {"[1,2", "Cannot parse dimension"},
    {"1,2]", "Cannot parse dimension"},
};

}  // namespace

TEST_CASE("parse_dim table", "[dim]") {
  for (const auto& c : kDimParseCases) {
    INFO("text: \"" << c.text << "\"");
    try {
      const Dim d = irrun::parse_dim(c.text);
      CHECK(d.min == c.expected.min);
      CHECK(d.max == c.expected.max);
    } catch (const std::exception& e) {
      FAIL_CHECK("unexpected exception: " << e.what());
    }
  }
}

TEST_CASE("parse_dim errors", "[dim]") {
  for (const auto& c : kDimParseErrors) {
    INFO("text: \"" << c.text << "\"");
    CHECK_THROWS_AS(irrun::parse_dim(c.text), std::invalid_argument);
    CHECK_THROWS_WITH(irrun::parse_dim(c.text), Catch::Contains(c.message));
  }
}

TEST_CASE("parse_partial_shape table", "[dim]") {
  for (const auto& c : kShapeParseCases) {
    INFO("text: \"" << c.text << "\"");
    try {
      const PartialShape s = irrun::parse_partial_shape(c.text);
      CHECK(irrun::to_string(s) == c.expected);
      CHECK(s.rank_is_static() == c.rank_static);
      if (c.rank_static) CHECK(s.rank() == c.rank);
    } catch (const std::exception& e) {
      FAIL_CHECK("unexpected exception: " << e.what());
    }
  }
}

TEST_CASE("parse_partial_shape errors", "[dim]") {
  for (const auto& c : kShapeParseErrors) {
    INFO("text: \"" << c.text << "\"");
    CHECK_THROWS_AS(irrun::parse_partial_shape(c.text), std::invalid_argument);
    CHECK_THROWS_WITH(irrun::parse_partial_shape(c.text), Catch::Contains(c.message));
  }
}

TEST_CASE("parse_partial_shape values", "[dim]") {
  const PartialShape s = irrun::parse_partial_shape("[1, ?, 2..5, ..7, 4..]");
  REQUIRE(s.rank_is_static());
  REQUIRE(s.rank() == 5);
  CHECK(s[0] == Dim::fixed(1));
  CHECK(s[1] == Dim::dynamic());
  CHECK(s[2] == Dim::interval(2, 5));
  CHECK(s[3] == Dim::interval(0, 7));
  CHECK(s[4] == Dim::interval(4, kInf));
  CHECK_FALSE(s.is_static());

  const PartialShape t = irrun::parse_partial_shape("2,3,4");
  CHECK(t.is_static());
  CHECK(t.to_static() == std::vector<std::int64_t>{2, 3, 4});
  CHECK(t == PartialShape::from_static({2, 3, 4}));

  CHECK(irrun::parse_partial_shape("") == PartialShape(std::vector<Dim>{}));
  CHECK(irrun::parse_partial_shape("").is_static());
  CHECK(irrun::parse_partial_shape("...") == PartialShape::dynamic_rank());
  CHECK_FALSE(irrun::parse_partial_shape("...").is_static());
}

namespace {

struct DimPrintCase {
  Dim dim;
  const char* expected;
};

const std::vector<DimPrintCase> kDimPrintCases = {
    {Dim::fixed(3), "3"},
    {Dim::fixed(0), "0"},
    {Dim::dynamic(), "?"},
    {Dim::interval(1, 10), "1..10"},
    {Dim::interval(2, kInf), "2.."},
    {Dim::interval(0, 10), "..10"},
    {Dim::interval(1, kInf), "1.."},
};

}  // namespace

TEST_CASE("to_string", "[dim]") {
  for (const auto& c : kDimPrintCases) {
    INFO("expected " << c.expected);
    CHECK(irrun::to_string(c.dim) == c.expected);
  }
  CHECK(irrun::to_string(PartialShape::dynamic_rank()) == "[...]");
  CHECK(irrun::to_string(PartialShape(std::vector<Dim>{})) == "[]");
  CHECK(irrun::to_string(PartialShape(std::vector<Dim>{Dim::fixed(1), Dim::fixed(3), Dim::dynamic(),
                                                       Dim::interval(1, 10)})) == "[1,3,?,1..10]");
  CHECK(irrun::to_string(std::vector<std::int64_t>{1, 2, 3}) == "[1,2,3]");
  CHECK(irrun::to_string(std::vector<std::int64_t>{}) == "[]");
  CHECK(irrun::to_string(PartialShape::from_ir_dims({1, -1, 5})) == "[1,?,5]");
  CHECK(irrun::to_string(PartialShape::from_static({4, 0})) == "[4,0]");
}

namespace {

enum class Op { add, sub, floor_div, ceil_div };

struct ArithCase {
  const char* name;
  Dim in;
  Op op;
  std::int64_t v;
  Dim expected;
};

const std::vector<ArithCase> kArithCases = {
    {"static + v", Dim::fixed(3), Op::add, 2, Dim::fixed(5)},
    {"interval + v", Dim::interval(3, 5), Op::add, 2, Dim::interval(5, 7)},
    {"dynamic + v keeps unbounded max", Dim::dynamic(), Op::add, 2, Dim::interval(2, kInf)},
    {"+ 0", Dim::interval(1, 4), Op::add, 0, Dim::interval(1, 4)},
    {"static - v", Dim::fixed(10), Op::sub, 3, Dim::fixed(7)},
    {"interval - v clips min", Dim::interval(3, 5), Op::sub, 4, Dim::interval(0, 1)},
    {"interval - v clips both", Dim::interval(1, 2), Op::sub, 5, Dim::fixed(0)},
    {"static - v clips", Dim::fixed(3), Op::sub, 5, Dim::fixed(0)},
    {"unbounded - v", Dim::interval(3, kInf), Op::sub, 1, Dim::interval(2, kInf)},
    {"dynamic - v", Dim::dynamic(), Op::sub, 4, Dim::dynamic()},
    {"floor_div static", Dim::fixed(7), Op::floor_div, 2, Dim::fixed(3)},
    {"floor_div interval", Dim::interval(7, 17), Op::floor_div, 2, Dim::interval(3, 8)},
    {"floor_div dynamic", Dim::dynamic(), Op::floor_div, 3, Dim::dynamic()},
    {"floor_div unbounded", Dim::interval(9, kInf), Op::floor_div, 4, Dim::interval(2, kInf)},
    {"ceil_div static", Dim::fixed(7), Op::ceil_div, 2, Dim::fixed(4)},
    {"ceil_div exact", Dim::fixed(8), Op::ceil_div, 2, Dim::fixed(4)},
    {"ceil_div interval", Dim::interval(7, 17), Op::ceil_div, 2, Dim::interval(4, 9)},
    {"ceil_div unbounded", Dim::interval(5, kInf), Op::ceil_div, 2, Dim::interval(3, kInf)},
    {"ceil_div zero", Dim::fixed(0), Op::ceil_div, 3, Dim::fixed(0)},
    {"ceil_div dynamic", Dim::dynamic(), Op::ceil_div, 4, Dim::dynamic()},
};

Dim apply(const ArithCase& c) {
  switch (c.op) {
    case Op::add:
      return c.in + c.v;
    case Op::sub:
      return c.in - c.v;
    case Op::floor_div:
      return irrun::floor_div(c.in, c.v);
    case Op::ceil_div:
      return irrun::ceil_div(c.in, c.v);
  }
  return {};
}

}  // namespace

TEST_CASE("interval arithmetic", "[dim]") {
  for (const auto& c : kArithCases) {
    INFO("case: " << c.name);
    const Dim r = apply(c);
    CHECK(r.min == c.expected.min);
    CHECK(r.max == c.expected.max);
  }
}

TEST_CASE("Dim predicates", "[dim]") {
  CHECK(Dim::fixed(3).is_static());
  CHECK_FALSE(Dim::fixed(3).is_dynamic());
  CHECK(Dim::dynamic().is_fully_dynamic());
  CHECK_FALSE(Dim::interval(1, kInf).is_fully_dynamic());
  CHECK(Dim::interval(1, 10).is_dynamic());
  CHECK(Dim::interval(1, 10).contains(10));
  CHECK_FALSE(Dim::interval(1, 10).contains(0));
  CHECK(Dim::dynamic().contains(123456));
}

namespace {

struct MatchCase {
  const char* declared;  // IR-like: static or -1
  const char* inferred;
  bool expected;
};

const std::vector<MatchCase> kDimMatchCases = {
    {"-1", "5", true},    {"-1", "?", true},     {"-1", "1..3", true},   {"-1", "0", true},
    {"5", "5", true},     {"5", "6", false},     {"5", "1..10", true},   {"5", "6..10", false},
    {"5", "1..4", false}, {"5", "5..", true},    {"5", "6..", false},    {"5", "?", true},
    {"0", "..3", true},   {"10", "1..10", true}, {"11", "1..10", false},
};

struct ShapeMatchCase {
  const char* declared;
  const char* inferred;
  bool expected;
};

const std::vector<ShapeMatchCase> kShapeMatchCases = {
    {"[1,-1,5]", "[1,3,2..8]", true},
    {"[1,3,5]", "[1,3,5]", true},
    {"[1,3,5]", "[1,3,6]", false},
    {"[1,3]", "[1,3,1]", false},
    {"[1,3,1]", "[1,3]", false},
    {"[-1,-1,-1]", "[?,?,1..]", true},
    {"[2,3,4]", "[?,?,1..]", true},
    {"[2,3,0]", "[?,?,1..]", false},
    {"[]", "[]", true},
};

struct CompatibleCase {
  const char* a;
  const char* b;
  bool expected;
};

const std::vector<CompatibleCase> kCompatibleCases = {
    {"[1,-1,3]", "[1,5,3]", true}, {"[1,2]", "[1,2]", true},    {"[1,2]", "[1,3]", false},
    {"[1,2]", "[1,2,3]", false},   {"[-1,-1]", "[-1,7]", true}, {"[]", "[]", true},
    {"[]", "[1]", false},
};

}  // namespace

TEST_CASE("declared_matches", "[dim]") {
  for (const auto& c : kDimMatchCases) {
    INFO("declared " << c.declared << " inferred " << c.inferred);
    CHECK(irrun::declared_matches(irrun::parse_dim(c.declared), irrun::parse_dim(c.inferred)) ==
          c.expected);
  }
  for (const auto& c : kShapeMatchCases) {
    INFO("declared " << c.declared << " inferred " << c.inferred);
    CHECK(irrun::declared_matches(irrun::parse_partial_shape(c.declared),
                                  irrun::parse_partial_shape(c.inferred)) == c.expected);
  }
}

TEST_CASE("compatible", "[dim]") {
  for (const auto& c : kCompatibleCases) {
    INFO("a " << c.a << " b " << c.b);
    CHECK(irrun::compatible(irrun::parse_partial_shape(c.a), irrun::parse_partial_shape(c.b)) ==
          c.expected);
    CHECK(irrun::compatible(irrun::parse_partial_shape(c.b), irrun::parse_partial_shape(c.a)) ==
          c.expected);
  }
}
