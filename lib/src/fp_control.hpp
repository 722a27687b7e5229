// Internal: the floating-point control state the kernels compute under. Their accuracy proofs
// and exact sums (TwoSum) hold under IEEE defaults only: round to nearest, subnormals kept, and
// an invalid operation (+inf + -inf among NaN-carrying inputs) giving NaN rather than a trap. A
// caller's thread may have set otherwise: flush-to-zero and denormals-are-zero (-ffast-math's
// start-up code, some inference runtimes), another rounding mode, unmasked exceptions.
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#else
#include <cfenv>
#endif

namespace irrun::detail {

#if defined(__x86_64__) || defined(__i386__)
// x86: the MXCSR's control bits (exception masks, rounding mode, FTZ, DAZ), its flags aside.
using FpControl = unsigned;
constexpr FpControl kFpFlags = 0x3F;
constexpr FpControl kIeeeDefaults = 0x1F80;  // every exception masked, to nearest, no FTZ/DAZ
inline unsigned fp_state() {
  return _mm_getcsr();
}
inline void set_fp_state(unsigned s) {
  _mm_setcsr(s);
}
inline FpControl fp_control(unsigned state) {
  return state & ~kFpFlags;
}
#else
// Elsewhere: the rounding mode (C's <cfenv> has no flush-to-zero).
using FpControl = int;
constexpr FpControl kIeeeDefaults = FE_TONEAREST;
inline int fp_state() {
  return std::fegetround();
}
inline void set_fp_state(int s) {
  std::fesetround(s);
}
inline FpControl fp_control(int state) {
  return state;
}
#endif

// The calling thread's control state, for threads that work on its behalf (Parallel).
inline FpControl current_fp_control() {
  return fp_control(fp_state());
}

// Sets the thread's control state for the scope's lifetime (on x86 with clear flags), then
// restores the thread's whole state, flags included: nothing the scope did shows to the caller.
// A scope whose control state is already in force changes nothing (one register read).
class FpScope {
 public:
  explicit FpScope(FpControl control = kIeeeDefaults)
      : saved_(fp_state()), changed_(fp_control(saved_) != control) {
    if (changed_) set_fp_state(control);
  }
  ~FpScope() {
    if (changed_) set_fp_state(saved_);
  }
  FpScope(const FpScope&) = delete;
  FpScope& operator=(const FpScope&) = delete;

 private:
  decltype(fp_state()) saved_;
  bool changed_;
};

}  // namespace irrun::detail
