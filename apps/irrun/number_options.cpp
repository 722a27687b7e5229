// Validators for numeric options: one clear message each (CLI11's ranges print DBL_MAX in full),
// and no silent wrap or saturation (std::strtoull takes "-5" and clamps 2^64).
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>

#include "commands.hpp"

namespace irrun::cli {
namespace {

template <class T>
bool parse_whole(const std::string& v, T& out) {
  const char* end = v.data() + v.size();
  const auto [p, ec] = std::from_chars(v.data(), end, out);
  return ec == std::errc() && p == end;
}

}  // namespace

CLI::Validator whole_number(std::int64_t min, std::int64_t max) {
  const std::string range = std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& v) {
        std::int64_t n = 0;
        return parse_whole(v, n) && n >= min && n <= max
                   ? std::string()
                   : "expected a whole number from " + range + ", got '" + v + "'";
      },
      "INT in " + range);
}

CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& v) {
        std::uint64_t n = 0;
        return parse_whole(v, n) ? std::string()
                                 : "expected a whole number from 0 to 18446744073709551615 "
                                   "(2^64 - 1), got '" +
                                       v + "'";
      },
      "UINT64");
}

CLI::Validator tolerance_number() {
  return CLI::Validator(
      [](std::string& v) {
        double x = 0;
        const char* end = v.data() + v.size();
        const auto [p, ec] = std::from_chars(v.data(), end, x);
        return ec == std::errc() && p == end && std::isfinite(x) && x >= 0
                   ? std::string()
                   : "expected a finite number >= 0, got '" + v + "'";
      },
      "FLOAT >= 0");
}

}  // namespace irrun::cli
