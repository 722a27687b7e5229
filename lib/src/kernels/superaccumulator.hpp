// Internal to the kernels: the exact sum of any finite doubles, held as one fixed-point integer in
// units of 2^-1074 (the smallest subnormal), so that no addition ever rounds. exact_mean
// (exact_sum.hpp) replays a window into it when its two-double sum would round.
#pragma once

#include <array>
#include <cstdint>

namespace irrun::kernels::detail {

class Superaccumulator {
 public:
  Superaccumulator() { limbs_.fill(0); }

  // Adds x * 2^shift exactly (x finite, 0 <= shift <= kMaxShift).
  void add(double x, int shift = 0);

  // The sum times 2^-scale as hi + lo: hi is it rounded to nearest (ties to even), lo the rest
  // rounded to nearest. hi is inf when the scaled sum overflows.
  struct Split {
    double hi, lo;
  };
  Split split(int scale = 0) const;

  static constexpr int kMaxShift = 128;

 private:
  // Limb i holds digit i (weight 2^(32 i - 1074)) in carry-save form: an add puts less than 2^32
  // into a limb, so 2^30 adds fit in an int64 between two carry passes. 72 limbs reach 2^1230,
  // above the largest sum (under 2^64 terms of at most 2^1024 * 2^kMaxShift) and its sign.
  static constexpr int kDigitBits = 32;
  static constexpr int kLimbs = 72;
  using Limbs = std::array<std::int64_t, kLimbs>;

  static void carry(Limbs& limbs);
  static double round_magnitude(const Limbs& digits, int scale);
  static double round_signed(Limbs limbs, int scale);

  Limbs limbs_;
  std::uint32_t adds_since_carry_ = 0;
};

}  // namespace irrun::kernels::detail
