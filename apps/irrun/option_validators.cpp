// Validators for options: one clear message each (CLI11's ranges print DBL_MAX in full), no
// silent wrap or saturation of numbers (std::strtoull takes "-5" and clamps 2^64), and no empty
// --layer (which read as none given: the whole model ran).
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
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

// The value is written back in canonical decimal (use them with ->transform, which may modify
// it): CLI11 converts with strtoull(..., 0), which would read "010" as octal 8.
CLI::Validator whole_number(std::int64_t min, std::int64_t max) {
  const std::string range = std::to_string(min) + " to " + std::to_string(max);
  return CLI::Validator(
      [min, max, range](std::string& v) {
        std::int64_t n = 0;
        if (!parse_whole(v, n) || n < min || n > max)
          return "expected a whole number from " + range + ", got '" + v + "'";
        v = std::to_string(n);
        return std::string();
      },
      "INT in " + range);
}

CLI::Validator seed_number() {
  return CLI::Validator(
      [](std::string& v) {
        std::uint64_t n = 0;
        if (!parse_whole(v, n))
          return "expected a whole number from 0 to 18446744073709551615 (2^64 - 1), got '" + v +
                 "'";
        v = std::to_string(n);
        return std::string();
      },
      "UINT64");
}

CLI::Validator tolerance_number() {
  return CLI::Validator(
      [](std::string& v) {
        // strtod as CLI11 converts: "+1" and an underflow such as 1e-400 (0) are numbers too.
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        const bool whole = !v.empty() && !std::isspace(static_cast<unsigned char>(v[0])) &&
                           end == v.c_str() + v.size();
        return whole && std::isfinite(x) && x >= 0
                   ? std::string()
                   : "expected a finite number >= 0, got '" + v + "'";
      },
      "FLOAT >= 0");
}

CLI::Validator layer_name() {
  return CLI::Validator(
      [](std::string& v) {
        return v.empty() ? std::string("expected a layer name or id, got an empty string")
                         : std::string();
      },
      "NAME|ID");
}

}  // namespace irrun::cli
