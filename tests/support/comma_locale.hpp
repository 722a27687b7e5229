// While in scope, the global C++ locale groups digits by three with '.' and writes ',' as the
// decimal point (de_DE's numbers), built from a numpunct facet so that no system locale need be
// installed. An std::ostringstream not imbued with the classic locale then writes 1557 as
// "1.557"; the C locale (printf) is left alone (the locale has no name).
#pragma once

#include <locale>
#include <sstream>
#include <string>

namespace irrun::testing {

class CommaLocale {
 public:
  CommaLocale() : previous_(std::locale::global(std::locale(std::locale::classic(), new Punct))) {}
  ~CommaLocale() { std::locale::global(previous_); }
  CommaLocale(const CommaLocale&) = delete;
  CommaLocale& operator=(const CommaLocale&) = delete;

  // What a default stream now makes of 1557 and 1.5 ("1.557" and "1,5"): proof the locale acts.
  static std::string probe() {
    std::ostringstream s;
    s << 1557 << ' ' << 1.5;
    return s.str();
  }

 private:
  struct Punct : std::numpunct<char> {
    char do_decimal_point() const override { return ','; }
    char do_thousands_sep() const override { return '.'; }
    std::string do_grouping() const override { return "\3"; }
  };
  std::locale previous_;
};

}  // namespace irrun::testing
