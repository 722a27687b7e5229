// ModelError's "<path>[:<line>]: <detail>", whatever the process's locales.
#include "irrun/error.hpp"

#include <catch2/catch.hpp>
#include <string>

#include "support/comma_locale.hpp"

TEST_CASE("ModelError names path and line", "[error]") {
  const irrun::ModelError e("m.xml", 12, "bad layer");
  CHECK(std::string(e.what()) == "m.xml:12: bad layer");
  CHECK(e.code() == irrun::ExitCode::bad_model);
  CHECK(e.line() == 12);
  CHECK(std::string(irrun::ModelError("m.xml", 0, "unreadable").what()) == "m.xml: unreadable");
}

TEST_CASE("ModelError's line ignores the global locale's digit grouping", "[error]") {
  const irrun::testing::CommaLocale comma;
  REQUIRE(comma.probe() == "1.557 1,5");
  CHECK(std::string(irrun::ModelError("m.xml", 1557, "bad layer").what()) ==
        "m.xml:1557: bad layer");
}
