// Internal to the kernels: exact integer window sums and irrun's integer average rule
// (docs/openvino-semantics.md section 7): i8/u8 round the exact average to nearest, ties to
// even; wider integers truncate it toward zero.
#pragma once

#include <cstdint>
#include <stdexcept>

namespace irrun::kernels::detail {

__extension__ typedef __int128 i128;

// Why the i128 sum cannot overflow. The taps of one window (or adaptive bin) are distinct
// elements of one input plane, so a window adds at most in_plane_size <= element_count values.
// The input lives in memory, so element_count * sizeof(T) < 2^64: for 64-bit types
// element_count < 2^61 and every |x| <= 2^64, hence |sum| < 2^125; for narrower types
// element_count < 2^64 and |x| <= 2^32, hence |sum| < 2^96. Both are below 2^127.
// The divisor n is a tap count (< 2^64) or prod(kernel), which exact_kernel_volume below caps at
// 2^120 (shape inference bounds each kernel dim by 2^40, so only hand-made geometries exceed it);
// so the rounding step's 2 * remainder < 2n <= 2^121 cannot overflow either.
template <bool kRoundToNearestEven>
class ExactIntSum {
 public:
  void add(i128 x) { sum_ += x; }

  // The exact average sum / n (n > 0), rounded by the type's rule. Its magnitude is at most
  // the largest |x| added, so it fits the element type.
  i128 mean(i128 n) const {
    const bool negative = sum_ < 0;
    const i128 magnitude = negative ? -sum_ : sum_;
    i128 q = magnitude / n;  // truncation toward zero, on the magnitude
    if constexpr (kRoundToNearestEven) {
      const i128 twice_rest = 2 * (magnitude - q * n);  // < 2n <= 2^121: no overflow
      if (twice_rest > n || (twice_rest == n && q % 2 != 0)) ++q;
    }
    return negative ? -q : q;
  }

 private:
  i128 sum_ = 0;
};

// prod(kernel) exactly; throws std::invalid_argument if it exceeds 2^120.
inline i128 exact_kernel_volume(const std::int64_t* kernel, int dims) {
  const i128 limit = i128{1} << 120;
  i128 volume = 1;
  for (int a = 0; a < dims; ++a) {
    if (__builtin_mul_overflow(volume, static_cast<i128>(kernel[a]), &volume) || volume > limit)
      throw std::invalid_argument("avg_pool: the kernel volume exceeds 2^120");
  }
  return volume;
}

}  // namespace irrun::kernels::detail
