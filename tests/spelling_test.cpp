#include "irrun/spelling.hpp"

#include <catch2/catch.hpp>

TEST_CASE("spelling: optimal string alignment distance, ignoring ASCII case", "[spelling]") {
  struct Case {
    const char* a;
    const char* b;
    std::size_t distance;
  };
  const Case cases[] = {
      {"", "", 0},
      {"", "abc", 3},
      {"AvgPool", "AvgPool", 0},
      {"avgpool", "AvgPool", 0},    // case is ignored
      {"AvgPol", "AvgPool", 1},     // a deletion
      {"AvgPoool", "AvgPool", 1},   // an insertion
      {"AvgPoal", "AvgPool", 1},    // a substitution
      {"--strcit", "--strict", 1},  // two neighbours swapped: one edit, not two
      {"--threds", "--threads", 1},
      {"ca", "abc", 3},  // OSA, not Damerau: a swapped pair is not edited again
      {"kitten", "sitting", 3},
      {"\xC3\xA9", "\xC3\x89", 1},  // bytes past ASCII compare exactly
  };
  for (const auto& c : cases) {
    INFO(c.a << " / " << c.b);
    CHECK(irrun::edit_distance(c.a, c.b) == c.distance);
    CHECK(irrun::edit_distance(c.b, c.a) == c.distance);
  }
}
