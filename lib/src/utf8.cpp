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

void append_utf8(std::string& out, std::uint32_t cp) {
  const auto byte = [&](std::uint32_t b) { out += static_cast<char>(b); };
  if (cp < 0x80) {
    byte(cp);
  } else if (cp < 0x800) {
    byte(0xC0 | cp >> 6), byte(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    byte(0xE0 | cp >> 12), byte(0x80 | (cp >> 6 & 0x3F)), byte(0x80 | (cp & 0x3F));
  } else {
    byte(0xF0 | cp >> 18), byte(0x80 | (cp >> 12 & 0x3F)), byte(0x80 | (cp >> 6 & 0x3F));
    byte(0x80 | (cp & 0x3F));
  }
}

constexpr std::uint32_t kReplacement = 0xFFFD;

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
      append_utf8(out, kReplacement);
      i += n == 0 ? 1 : n;
    } else {
      out.append(s.substr(i, n));
      i += n;
    }
  }
  return out;
}

std::string escape_controls(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  const auto byte = [&](std::size_t i) {
    return i < s.size() ? static_cast<unsigned char>(s[i]) : 0;
  };
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    const auto u = static_cast<unsigned char>(c);
    // C1 controls (NEL, CSI...) and the line and paragraph separators, which terminals or
    // line splitters (Python's splitlines, JavaScript) take as line breaks or escapes.
    if (u == 0xC2 && byte(i + 1) >= 0x80 && byte(i + 1) <= 0x9F) {
      out += "\\u00";
      out += kHex[byte(i + 1) >> 4];
      out += kHex[byte(i + 1) & 15];
      ++i;
    } else if (u == 0xE2 && byte(i + 1) == 0x80 && (byte(i + 2) == 0xA8 || byte(i + 2) == 0xA9)) {
      out += byte(i + 2) == 0xA8 ? "\\u2028" : "\\u2029";
      i += 2;
    } else if (u >= 0x20 && u != 0x7F) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    }
  }
  return out;
}

std::size_t display_width(std::string_view s) {
  std::size_t n = 0;
  for (const char c : s) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::optional<std::string> utf8_from_wide(std::string_view s) {
  const auto u8 = [&](std::size_t i) {
    return static_cast<std::uint32_t>(static_cast<std::uint8_t>(s[i]));
  };
  std::size_t width;
  bool little;
  if (s.starts_with(std::string_view("\xFF\xFE\0\0", 4)))
    width = 4, little = true;
  else if (s.starts_with(std::string_view("\0\0\xFE\xFF", 4)))
    width = 4, little = false;
  else if (s.starts_with("\xFF\xFE"))
    width = 2, little = true;
  else if (s.starts_with("\xFE\xFF"))
    width = 2, little = false;
  else
    return std::nullopt;
  const auto unit = [&](std::size_t i) {
    std::uint32_t v = 0;
    for (std::size_t k = 0; k < width; ++k) v |= u8(i + k) << 8 * (little ? k : width - 1 - k);
    return v;
  };
  std::string out;
  out.reserve(s.size());
  std::size_t i = width;
  for (; i + width <= s.size(); i += width) {
    std::uint32_t cp = unit(i);
    if (width == 2 && cp >= 0xD800 && cp <= 0xDBFF && i + 2 * width <= s.size() &&
        unit(i + width) >= 0xDC00 && unit(i + width) <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (unit(i + width) - 0xDC00);
      i += width;
    } else if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) {
      cp = kReplacement;
    }
    append_utf8(out, cp);
  }
  if (i < s.size()) append_utf8(out, kReplacement);
  return out;
}

}  // namespace irrun
