#include "irrun/utf8.hpp"

#include <catch2/catch.hpp>
#include <string>

namespace {

struct Case {
  const char* what;
  std::string text;
  std::size_t prefix;  // valid_utf8_prefix
  std::string valid;   // to_valid_utf8
  std::string xml;     // to_valid_utf8(.., true)
};

const std::string R = "\xEF\xBF\xBD";  // U+FFFD

}  // namespace

TEST_CASE("utf8: well-formed prefixes and replacements (RFC 3629)", "[utf8]") {
  const Case cases[] = {
      {"ASCII", "pool_1", 6, "pool_1", "pool_1"},
      {"empty", "", 0, "", ""},
      {"2-, 3- and 4-byte characters", "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", 9,
       "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80", "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"},
      {"a lone 0xFF",
       "a\xFF"
       "b",
       1, "a" + R + "b", "a" + R + "b"},
      {"a stray continuation byte", "\x80x", 0, R + "x", R + "x"},
      {"overlong '/' (C0 AF)", "\xC0\xAF", 0, R + R, R + R},
      {"overlong 3-byte (E0 80 AF)", "\xE0\x80\xAF", 0, R + R + R, R + R + R},
      {"a surrogate (ED A0 80)", "\xED\xA0\x80", 0, R + R + R, R + R + R},
      {"past U+10FFFF (F4 90 80 80)", "\xF4\x90\x80\x80", 0, R + R + R + R, R + R + R + R},
      {"U+10FFFF itself", "\xF4\x8F\xBF\xBF", 4, "\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF"},
      {"truncated at the end", "ab\xE2\x82", 2, "ab" + R + R, "ab" + R + R},
      {"C0 controls: only XML replaces them", "a\x01\tb\n", 5, "a\x01\tb\n", "a" + R + "\tb\n"},
      {"U+FFFE: only XML replaces it", "\xEF\xBF\xBE", 3, "\xEF\xBF\xBE", R},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    CHECK(irrun::valid_utf8_prefix(c.text) == c.prefix);
    CHECK(irrun::to_valid_utf8(c.text) == c.valid);
    CHECK(irrun::to_valid_utf8(c.text, true) == c.xml);
    CHECK(irrun::valid_utf8_prefix(irrun::to_valid_utf8(c.text)) == c.valid.size());
  }
}

TEST_CASE("utf8: UTF-16 and UTF-32 with a byte-order mark become UTF-8", "[utf8]") {
  using namespace std::string_literals;
  const std::string euro = "\xE2\x82\xAC", smile = "\xF0\x9F\x98\x80";
  struct Case {
    const char* what;
    std::string wide;
    std::string utf8;
  };
  const Case cases[] = {
      {"UTF-16 LE", "\xFF\xFE<\0\xAC\x20"s, "<" + euro},
      {"UTF-16 BE", "\xFE\xFF\0<\x20\xAC"s, "<" + euro},
      {"UTF-16 LE surrogate pair", "\xFF\xFE\x3D\xD8\x00\xDE"s, smile},
      {"UTF-16 BE surrogate pair", "\xFE\xFF\xD8\x3D\xDE\x00"s, smile},
      {"UTF-16 unpaired high surrogate", "\xFF\xFE\x3D\xD8<\0"s, R + "<"},
      {"UTF-16 lone low surrogate", "\xFF\xFE\x00\xDE"s, R},
      {"UTF-16 trailing odd byte", "\xFF\xFE<\0>"s, "<" + R},
      {"UTF-32 LE", "\xFF\xFE\0\0<\0\0\0\x00\xF6\x01\0"s, "<" + smile},
      {"UTF-32 BE", "\0\0\xFE\xFF\0\0\0<\0\x01\xF6\x00"s, "<" + smile},
      {"UTF-32 past U+10FFFF", "\xFF\xFE\0\0\0\0\x11\0"s, R},
      {"only the mark", "\xFE\xFF"s, ""},
  };
  for (const auto& c : cases) {
    INFO(c.what);
    const auto got = irrun::utf8_from_wide(c.wide);
    REQUIRE(got.has_value());
    CHECK(*got == c.utf8);
  }
  CHECK_FALSE(irrun::utf8_from_wide("<net/>").has_value());
  CHECK_FALSE(irrun::utf8_from_wide("\xEF\xBB\xBF<net/>").has_value());  // UTF-8's mark
  CHECK_FALSE(irrun::utf8_from_wide("").has_value());
}

TEST_CASE("utf8: control characters escaped for one line; widths count characters", "[utf8]") {
  using namespace std::string_literals;
  struct Case {
    std::string text, escaped;
    std::size_t width;  // display_width(text)
  };
  const Case cases[] = {
      {"pool", "pool", 4},
      {"a\nb", "a\\nb", 3},
      {"a\r\tb", "a\\r\\tb", 4},
      {"\x01\x1F\x7F"s, "\\x01\\x1f\\x7f", 3},
      {"nul\0!"s, "nul\\x00!", 5},
      {"\xC3\xA9t\xC3\xA9", "\xC3\xA9t\xC3\xA9", 3},  // UTF-8 left as it is
      {"back\\slash", "back\\slash", 10},
      // C1 controls and U+2028/2029 (line breaks to Python's splitlines and JavaScript).
      {"a\xC2\x85"
       "b\xC2\x9B\xC2\x80"s,
       "a\\u0085b\\u009b\\u0080", 5},
      {"a\xE2\x80\xA8"
       "b\xE2\x80\xA9"s,
       "a\\u2028b\\u2029", 4},
      {"\xC2\xA0\xE2\x80\xA7\xE2\x80\xAA"s, "\xC2\xA0\xE2\x80\xA7\xE2\x80\xAA", 3},  // not these
      {"\xC2"s, "\xC2", 1},                                                          // cut short
  };
  for (const auto& c : cases) {
    INFO(c.escaped);
    CHECK(irrun::escape_controls(c.text) == c.escaped);
    CHECK(irrun::display_width(c.text) == c.width);
  }
}
