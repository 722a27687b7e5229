// Internal to the kernels: memory on whole cache lines.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
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

// Memory a thread writes while the others run: n values of `value` on whole cache lines of
// their own. A line it shared with another allocation, such as a plan's table that the other
// threads read, moved between the cores on each write (false sharing: AdaptiveMaxPool
// 1x512x28x28 -> 7x7 with indices took 0.93 of its one-thread time at two threads on AVX2,
// its column scratch beside the plan's tables). A plain allocation a line longer at each end,
// the values from its first line boundary on (aligned operator new takes a slower path of the
// allocator, and kernels make their scratch per chunk of a thread's range).
template <class T>
class OwnLines {
 public:
  static_assert(std::is_trivially_copyable_v<T> && kLineBytes % sizeof(T) == 0);
  explicit OwnLines(std::size_t n, T value = T{}) : v_(n + 2 * kPerLine, value) {
    const auto at = reinterpret_cast<std::uintptr_t>(v_.data()) % kLineBytes;
    data_ = v_.data() + (kLineBytes - at) % kLineBytes / sizeof(T);
  }
  // A copy would point into the original's memory.
  OwnLines(const OwnLines&) = delete;
  OwnLines& operator=(const OwnLines&) = delete;
  T* data() { return data_; }
  T& operator[](std::size_t i) { return data_[i]; }

 private:
  static constexpr std::size_t kPerLine = kLineBytes / sizeof(T);
  std::vector<T> v_;
  T* data_;
};

// n bytes, not initialised, on whole cache lines of their own (as OwnLines).
struct LineFree {
  void operator()(std::byte* p) const noexcept {
    ::operator delete[](p, std::align_val_t{kLineBytes});
  }
};
using LineBytes = std::unique_ptr<std::byte[], LineFree>;
inline LineBytes own_line_bytes(std::size_t n) {
  const std::size_t bytes =
      std::max<std::size_t>(1, (n + kLineBytes - 1) / kLineBytes) * kLineBytes;
  return LineBytes(static_cast<std::byte*>(::operator new[](bytes, std::align_val_t{kLineBytes})));
}

}  // namespace irrun::kernels::detail
