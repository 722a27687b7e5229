// Overflow-checked integer arithmetic for sizes computed from untrusted files.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

namespace irrun {

inline std::optional<std::uint64_t> checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

inline std::optional<std::uint64_t> checked_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Product of non-negative dims; nullopt on overflow or a negative dim.
inline std::optional<std::uint64_t> checked_product(std::span<const std::int64_t> dims) {
  std::uint64_t r = 1;
  for (auto d : dims) {
    if (d < 0) return std::nullopt;
    auto next = checked_mul(r, static_cast<std::uint64_t>(d));
    if (!next) return std::nullopt;
    r = *next;
  }
  return r;
}

}  // namespace irrun
