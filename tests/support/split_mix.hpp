// Test-only random numbers: SplitMix64, tiny, explicit and identical on every platform (std
// distributions are not), so randomized tests see the same cases everywhere.
#pragma once

#include <cstdint>

namespace irrun::testing {

class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform-enough integer in [lo, hi].
  std::int64_t range(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(hi - lo + 1));
  }
  bool coin() { return (next() & 1) != 0; }

 private:
  std::uint64_t state_;
};

}  // namespace irrun::testing
