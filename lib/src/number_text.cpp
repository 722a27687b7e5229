#include "irrun/number_text.hpp"

#include <charconv>
#include <system_error>

namespace irrun {
namespace {

std::string to_text(long double v, std::chars_format format, int precision) {
  // Enough for any %g and most %f; %f of a long double up to 2^16384 needs ~4950 digits.
  char small[128];
  auto [end, ec] = std::to_chars(small, small + sizeof small, v, format, precision);
  if (ec == std::errc()) return std::string(small, end);
  std::string big(5200 + static_cast<std::size_t>(precision > 0 ? precision : 0), '\0');
  auto [big_end, big_ec] = std::to_chars(big.data(), big.data() + big.size(), v, format, precision);
  big.resize(big_ec == std::errc() ? static_cast<std::size_t>(big_end - big.data()) : 0);
  return big;
}

}  // namespace

std::string fixed_text(long double v, int precision) {
  return to_text(v, std::chars_format::fixed, precision);
}

std::string general_text(long double v, int precision) {
  return to_text(v, std::chars_format::general, precision);
}

}  // namespace irrun
