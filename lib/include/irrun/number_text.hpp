// Floating-point numbers as text for messages, the same whatever the process's locales: printf's
// %.*Lf and %.*Lg as in the "C" locale (std::to_chars), never "1,0" for 1.0. Integers need no
// helper: std::to_string ignores the locales; an std::ostringstream does not (its digit
// grouping), so message streams are imbued with std::locale::classic().
#pragma once

#include <string>

namespace irrun {

// printf("%.*Lf", precision, v) in the "C" locale.
std::string fixed_text(long double v, int precision);
// printf("%.*Lg", precision, v) in the "C" locale.
std::string general_text(long double v, int precision);

}  // namespace irrun
