// fixed_text and general_text: printf's %.*Lf and %.*Lg as in the "C" locale (this test process
// never calls setlocale, so snprintf is the reference), whatever the global C++ locale is.
#include "irrun/number_text.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "support/comma_locale.hpp"

namespace {

std::string printf_text(const char* format, int precision, long double v) {
  char buf[6000];
  std::snprintf(buf, sizeof buf, format, precision, v);
  return buf;
}

}  // namespace

TEST_CASE("fixed_text and general_text print as printf in the C locale", "[number_text]") {
  const long double values[] = {0.0L,
                                -0.0L,
                                1.0L,
                                1.5L,
                                -2.25L,
                                1557.0L,
                                0.1L,
                                1e-300L,
                                123456789.125L,
                                0x1p63L,
                                18446744073709551615.0L,
                                1e30L,
                                std::numeric_limits<long double>::max(),
                                std::numeric_limits<long double>::denorm_min(),
                                std::numeric_limits<long double>::infinity(),
                                -std::numeric_limits<long double>::infinity(),
                                std::numeric_limits<long double>::quiet_NaN()};
  for (const long double v : values) {
    for (const int precision : {0, 1, 9, 21}) {
      INFO("value " << printf_text("%.*Lg", 21, v) << " precision " << precision);
      CHECK(irrun::fixed_text(v, precision) == printf_text("%.*Lf", precision, v));
      CHECK(irrun::general_text(v, precision) == printf_text("%.*Lg", precision, v));
    }
  }
}

TEST_CASE("fixed_text and general_text ignore the global C++ locale", "[number_text]") {
  const irrun::testing::CommaLocale comma;
  REQUIRE(comma.probe() == "1.557 1,5");
  CHECK(irrun::fixed_text(1557.25L, 1) == "1557.2");
  CHECK(irrun::general_text(1557.25L, 9) == "1557.25");
}
