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
// The precision flag: raised by every operation whose result was rounded since it was cleared.
// A kernel can so learn that a run of additions was exact, with no test of its own per addition.
// Compilers do not model the flags, so each access is also a compiler barrier: operations that
// read their inputs from memory after the clear and store their results before the read stay
// between the two, inlined or not.
constexpr unsigned kInexactFlag = 0x20;
inline void clear_inexact() {
  const unsigned s = _mm_getcsr();
  if (s & kInexactFlag) _mm_setcsr(s & ~kInexactFlag);
  asm volatile("" ::: "memory");
}
inline bool inexact() {
  asm volatile("" ::: "memory");
  return (_mm_getcsr() & kInexactFlag) != 0;
}
// Whether this thread's flag behaves so: raised by a rounded division, not by an exact sum.
// Checked once, for what emulates the CPU (a binary translator or instrumenter that keeps no
// flags would otherwise pass every sum as exact).
inline bool inexact_flag_works() {
  static const bool works = [] {
    const unsigned saved = _mm_getcsr();
    _mm_setcsr(0x1F80);
    volatile double one = 1.0, three = 3.0;
    volatile double third = one / three;  // volatile: stored before the flag is read
    const bool raised = inexact();
    _mm_setcsr(0x1F80);
    volatile double two = one + one;
    const bool ok = raised && !inexact() && third < two;
    _mm_setcsr(saved);
    return ok;
  }();
  return works;
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
// restores the thread's whole state, flags included: nothing the scope did shows to the caller,
// neither the flags its operations raised nor one a kernel cleared to read it (clear_inexact).
// A scope whose control state is already in force sets nothing (a register read), and at its
// end restores the flags only if they changed.
class FpScope {
 public:
  explicit FpScope(FpControl control = kIeeeDefaults)
      : saved_(fp_state()), changed_(fp_control(saved_) != control) {
    if (changed_) set_fp_state(control);
  }
  ~FpScope() {
    if (changed_ || fp_state() != saved_) set_fp_state(saved_);
  }
  FpScope(const FpScope&) = delete;
  FpScope& operator=(const FpScope&) = delete;

 private:
  decltype(fp_state()) saved_;
  bool changed_;
};

}  // namespace irrun::detail
