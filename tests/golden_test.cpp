#include "irrun/golden.hpp"

#include <catch2/catch.hpp>
#include <string>

TEST_CASE("file_stem: safe characters kept, the rest '_', long names cut with a digest",
          "[golden]") {
  struct Case {
    std::string name, stem;
  };
  const Case cases[] = {
      {"pool", "pool"},
      {"pool5/sink_port_0", "pool5_sink_port_0"},
      {"a b:c\\d", "a_b_c_d"},
      {"v1.2-x", "v1.2-x"},
      {"", "output"},
      {".", "output"},
      {"..", "output"},
      {"...", "..."},
      {std::string(200, 'n'), std::string(200, 'n')},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(irrun::file_stem(c.name) == c.stem);
  }
  // Over kMaxStem: the first 183 characters, '-', 16 hex digits of the name's sha256.
  const std::string a = std::string(252, 'n'), b = std::string(251, 'n') + "m";
  const auto sa = irrun::file_stem(a), sb = irrun::file_stem(b);
  CHECK(sa.size() == irrun::kMaxStem);
  CHECK(sa.substr(0, 184) == std::string(183, 'n') + "-");
  CHECK(sa.find_first_not_of("0123456789abcdef", 184) == std::string::npos);
  CHECK(sb.size() == irrun::kMaxStem);
  CHECK(sa != sb);  // same start, different names: different files
  CHECK(irrun::file_stem(a) == sa);
}
