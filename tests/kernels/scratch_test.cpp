// Tests of the kernels' kept scratch memory (lib/src/kernels/scratch.*): a slot's memory comes
// back on the next call of its thread, parts are aligned and apart, and what cannot share it (a
// slot taken, a request too large, another thread) gets memory of its own.
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <thread>

#include <catch2/catch.hpp>

#include "../../lib/src/kernels/scratch.hpp"

namespace {

using irrun::kernels::detail::kKeptMost;
using irrun::kernels::detail::kKeptTotal;
using irrun::kernels::detail::Scratch;
using irrun::kernels::detail::Slot;

bool aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 64 == 0;
}

const void* first_part(Slot slot, std::size_t bytes) {
  Scratch s(slot, Scratch::part_bytes<char>(bytes));
  return s.take<char>(bytes);
}

}  // namespace

TEST_CASE("scratch: parts are aligned, apart, and within the room asked for", "[kernels]") {
  Scratch s(Slot::max_half, Scratch::part_bytes<char>(3) + Scratch::part_bytes<double>(5) +
                                Scratch::part_bytes<std::int64_t>(0));
  const char* a = s.take<char>(3);
  const double* b = s.take<double>(5);
  const std::int64_t* c = s.take<std::int64_t>(0);
  CHECK((aligned(a) && aligned(b) && aligned(c)));
  CHECK(reinterpret_cast<const char*>(b) >= a + 3);
  CHECK(reinterpret_cast<const char*>(c) >= reinterpret_cast<const char*>(b + 5));
  CHECK_THROWS_AS(s.take<char>(3 * 64 + 1), std::logic_error);  // past all the padding too
}

TEST_CASE("scratch: a slot's memory comes back to its thread, grown when short", "[kernels]") {
  const void* first = first_part(Slot::avg_half_f32, 1000);
  CHECK(first_part(Slot::avg_half_f32, 1000) == first);
  CHECK(first_part(Slot::avg_half_f32, 10) == first);
  const void* grown = first_part(Slot::avg_half_f32, 1 << 20);
  CHECK(first_part(Slot::avg_half_f32, 1000) == grown);
  // Another thread has its own.
  const void* other = nullptr;
  std::thread([&] { other = first_part(Slot::avg_half_f32, 1000); }).join();
  CHECK(other != grown);
}

TEST_CASE("scratch: a slot taken, or a request past what is kept, gets memory of its own",
          "[kernels]") {
  const void* kept = first_part(Slot::avg_half_sums, 4096);
  {
    Scratch outer(Slot::avg_half_sums, Scratch::part_bytes<char>(4096));
    const char* a = outer.take<char>(4096);
    CHECK(a == kept);
    const void* inner = first_part(Slot::avg_half_sums, 4096);
    CHECK((inner < a || inner >= a + 4096));
    CHECK(first_part(Slot::max_half, 4096) != a);  // another slot
  }
  CHECK(first_part(Slot::avg_half_sums, 4096) == kept);
  const void* large = first_part(Slot::avg_half_sums, kKeptMost + 1);
  CHECK(large != kept);
  CHECK(first_part(Slot::avg_half_sums, 4096) == kept);  // not replaced by the large one
}

TEST_CASE("scratch: what all threads keep stays within kKeptTotal, and goes with its thread",
          "[kernels]") {
  const std::size_t before = Scratch::kept_bytes();
  REQUIRE(before <= kKeptTotal);
  std::thread([&] {
    // Slots of this new thread: kept while the total allows (two fill it), then a third's
    // memory is the call's own.
    for (const Slot slot : {Slot::avg_half_f32, Slot::avg_half_sums}) {
      const std::size_t left = kKeptTotal - Scratch::kept_bytes();
      const std::size_t ask = std::min(left, kKeptMost);
      if (ask <= 64) continue;
      first_part(slot, ask - 64);
      CHECK(Scratch::kept_bytes() == kKeptTotal - left + ask);
    }
    const std::size_t left = kKeptTotal - Scratch::kept_bytes();
    REQUIRE(left <= 64);
    first_part(Slot::max_half, 65 - 64 + left);  // one byte past the total
    CHECK(Scratch::kept_bytes() == kKeptTotal - left);
  }).join();
  CHECK(Scratch::kept_bytes() == before);  // the thread's slots freed at its end
}
