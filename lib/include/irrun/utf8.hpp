// UTF-8 well-formedness, for what irrun reads (an IR's text) and writes (JSON, JUnit XML).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace irrun {

// Length of the longest prefix of `s` that is well-formed UTF-8 (RFC 3629: no overlong forms,
// no surrogates, nothing past U+10FFFF); s.size() when all of it is.
std::size_t valid_utf8_prefix(std::string_view s);

// `s` with each ill-formed byte replaced by U+FFFD; with `xml`, so is each character XML 1.0
// forbids (C0 controls but tab, LF and CR; U+FFFE and U+FFFF).
std::string to_valid_utf8(std::string_view s, bool xml = false);

// `s` fit for one line of a terminal or log: each control character (below 0x20, and 0x7F) as
// \n, \r, \t or \xNN, and each C1 control (U+0080-U+009F, UTF-8) and U+2028/U+2029 as \uXXXX,
// so a name holding "&#10;" or "&#x85;" cannot break a diagnostic into two lines.
std::string escape_controls(std::string_view s);

// Columns `s` takes in a terminal, counting each UTF-8 character as one.
std::size_t display_width(std::string_view s);

// A UTF-16 or UTF-32 text that starts with its byte-order mark (either byte order), as UTF-8
// without the mark; an unpaired surrogate or a code unit past U+10FFFF becomes U+FFFD, and so
// does a trailing partial unit. std::nullopt when `s` starts with no such mark.
std::optional<std::string> utf8_from_wide(std::string_view s);

}  // namespace irrun
