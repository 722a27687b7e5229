// Internal to the kernels: memory on whole cache lines.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

namespace irrun::kernels::detail {

inline constexpr std::size_t kLineBytes = 64;

// An allocator of memory that starts on a cache line: tables that the vector loops load a whole
// register of (eight doubles, 64 bytes) at a time. With std::vector's 16-byte alignment three
// such loads in four split across two lines, and S3's group (two lane masks and a factor loaded
// per block) took ~15% longer, L1-hot.
template <class T>
struct LineAligned {
  using value_type = T;
  static constexpr std::align_val_t kLine{kLineBytes};
  LineAligned() = default;
  template <class U>
  explicit LineAligned(const LineAligned<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kLine)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kLine); }
  template <class U>
  bool operator==(const LineAligned<U>&) const noexcept {
    return true;
  }
};
template <class T>
using LineVector = std::vector<T, LineAligned<T>>;

// Memory a thread writes while the others run: at least n values of `value`, on whole cache
// lines of its own. A line it shared with another allocation, such as a plan's table that the
// other threads read, moved between the cores on each write (false sharing: AdaptiveMaxPool
// 1x512x28x28 -> 7x7 with indices took 0.93 of its one-thread time at two threads on AVX2,
// its column scratch beside the plan's tables).
template <class T>
LineVector<T> own_lines(std::size_t n, T value = T{}) {
  static_assert(std::is_trivially_copyable_v<T> && kLineBytes % sizeof(T) == 0);
  constexpr std::size_t per_line = kLineBytes / sizeof(T);
  return LineVector<T>(std::max<std::size_t>(1, (n + per_line - 1) / per_line) * per_line, value);
}

// n bytes, not initialised, on whole cache lines of their own (as own_lines).
struct LineFree {
  void operator()(std::byte* p) const noexcept {
    ::operator delete[](p, std::align_val_t{kLineBytes});
  }
};
using LineBytes = std::unique_ptr<std::byte[], LineFree>;
inline LineBytes own_line_bytes(std::size_t n) {
  const std::size_t lines = std::max<std::size_t>(1, (n + kLineBytes - 1) / kLineBytes);
  return LineBytes(
      static_cast<std::byte*>(::operator new[](lines* kLineBytes, std::align_val_t{kLineBytes})));
}

}  // namespace irrun::kernels::detail
