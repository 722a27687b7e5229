#include "irrun/utf8.hpp"

#include <cstdint>

namespace irrun {
namespace {

// Length of the well-formed character at the front of `s` (1-4), or 0 if its first byte starts
// none; `cp` receives its code point.
std::size_t char_length(std::string_view s, std::uint32_t& cp) {
  const auto b = [&](std::size_t i) { return static_cast<std::uint8_t>(s[i]); };
  const std::uint8_t lead = b(0);
  if (lead < 0x80) {
    cp = lead;
    return 1;
  }
  std::size_t n;
  std::uint32_t min;
  if (lead >= 0xC2 && lead <= 0xDF)
    n = 2, min = 0x80, cp = lead & 0x1Fu;
  else if (lead >= 0xE0 && lead <= 0xEF)
    n = 3, min = 0x800, cp = lead & 0x0Fu;
  else if (lead >= 0xF0 && lead <= 0xF4)
    n = 4, min = 0x10000, cp = lead & 0x07u;
  else
    return 0;
  if (s.size() < n) return 0;
  for (std::size_t i = 1; i < n; ++i) {
    if ((b(i) & 0xC0u) != 0x80u) return 0;
    cp = cp << 6 | (b(i) & 0x3Fu);
  }
  const bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
  return cp < min || cp > 0x10FFFF || surrogate ? 0 : n;
}

}  // namespace

std::size_t valid_utf8_prefix(std::string_view s) {
  std::size_t i = 0;
  std::uint32_t cp = 0;
  while (i < s.size()) {
    const auto n = char_length(s.substr(i), cp);
    if (n == 0) return i;
    i += n;
  }
  return i;
}

std::string to_valid_utf8(std::string_view s, bool xml) {
  std::string out;
  out.reserve(s.size());
  std::uint32_t cp = 0;
  for (std::size_t i = 0; i < s.size();) {
    const auto n = char_length(s.substr(i), cp);
    const bool forbidden = xml && ((cp < 0x20 && cp != '\t' && cp != '\n' && cp != '\r') ||
                                   cp == 0xFFFE || cp == 0xFFFF);
    if (n == 0 || forbidden) {
      out += "\xEF\xBF\xBD";
      i += n == 0 ? 1 : n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

}  // namespace irrun
