// Tests of the kernels' memory on whole cache lines (lib/src/kernels/lines.hpp): OwnLines holds
// its values from a line boundary, and every line they touch is its own allocation's, to the
// line's end (written whole here, which AddressSanitizer's CI phase checks); own_line_bytes
// starts on a line.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include <catch2/catch.hpp>

#include "../../lib/src/kernels/lines.hpp"

namespace {

using irrun::kernels::detail::kLineBytes;
using irrun::kernels::detail::own_line_bytes;
using irrun::kernels::detail::OwnLines;

bool on_line(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % kLineBytes == 0;
}

template <class T>
void check_own_lines(T value) {
  for (std::size_t n = 0; n < 70; ++n) {
    INFO("n = " << n << ", " << sizeof(T) << "-byte values");
    OwnLines<T> o(n, value);
    CHECK(on_line(o.data()));
    bool all = true;
    for (std::size_t i = 0; i < n; ++i) all = all && o[i] == value;
    CHECK(all);
    // The last line the values touch, to its end: inside the allocation.
    const std::size_t per_line = kLineBytes / sizeof(T);
    const std::size_t whole = (n + per_line - 1) / per_line * per_line;
    for (std::size_t i = 0; i < whole; ++i) o.data()[i] = T{};
  }
}

}  // namespace

TEST_CASE("lines: OwnLines keeps its values on whole lines of its own", "[kernels]") {
  check_own_lines<float>(-3.5f);
  check_own_lines<double>(2.25);
  check_own_lines<std::int32_t>(-7);
  check_own_lines<std::uint8_t>(9);
}

TEST_CASE("lines: own_line_bytes starts on a line and holds whole lines, at least one",
          "[kernels]") {
  for (const std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{63}, std::size_t{64},
                              std::size_t{65}, std::size_t{1000}}) {
    INFO("n = " << n);
    const auto p = own_line_bytes(n);
    CHECK(on_line(p.get()));
    const std::size_t whole =
        std::max<std::size_t>(1, (n + kLineBytes - 1) / kLineBytes) * kLineBytes;
    for (std::size_t i = 0; i < whole; ++i) p[i] = std::byte{0x5A};
  }
}
