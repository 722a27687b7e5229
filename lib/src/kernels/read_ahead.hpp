// Internal to the fast kernels: which layers run from far in the memory hierarchy, and a
// prefetcher that reads (or writes) their tensors ahead of a thread.
#pragma once

#include <xmmintrin.h>

#include <cstdint>

namespace irrun::kernels::detail {

// A layer that reads and writes this much or more runs from far in the L3 or from DRAM: half
// the L3 of the hosts measured (the Zen 3, this Zen 5).
constexpr std::int64_t kFarLayerBytes = std::int64_t{16} << 20;

// Whether a layer that reads and writes `bytes` is far. (In double: a geometry that is only
// asked about may hold more than 2^63 bytes.)
inline bool far_layer(double bytes) {
  return bytes >= static_cast<double>(kFarLayerBytes);
}

// Prefetches the lines up to `ahead` bytes past what a thread reads (Write: writes, by
// `prefetchw`, which every AVX-512 CPU has), each line once, for a thread that goes up through
// memory. Masked loads, which the hardware prefetchers do not follow on this Zen 5, then stream
// from DRAM as fast as plain loads (a probe: 11-12 GB/s without, 40-48 with, plain loads 34-38;
// masked stores of part of a vector: 20 GB/s without, 44 with).
template <bool Write = false>
class Ahead {
 public:
  explicit Ahead(std::int64_t ahead) : ahead_(static_cast<std::uintptr_t>(ahead)) {}

  // The thread reads (writes) [lo, hi) next. (Addresses as integers: past the end of an array
  // they are only prefetched, which never faults.)
  __attribute__((target("prfchw"))) void next(const void* lo, const void* hi) {
    const auto l = reinterpret_cast<std::uintptr_t>(lo), h = reinterpret_cast<std::uintptr_t>(hi);
    if (next_ < l) next_ = l & ~std::uintptr_t{63};  // the first access, or a gap
    for (; next_ < h + ahead_; next_ += 64) {
      const auto* p = reinterpret_cast<const char*>(next_);
      if constexpr (Write)
        __builtin_prefetch(p, 1, 3);
      else
        _mm_prefetch(p, _MM_HINT_T0);
    }
  }

 private:
  std::uintptr_t next_ = 0;
  std::uintptr_t ahead_;
};

}  // namespace irrun::kernels::detail
