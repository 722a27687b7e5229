// Internal to the fast kernels: the x86 intrinsics, with GCC 12's header warnings silenced, and
// the run-time CPU feature checks of their ISA dispatch (each vector path is compiled with
// __attribute__((target(...))) and only called when these say so). Include it first.
#pragma once

#include <cpuid.h>
#include <immintrin.h>

// GCC 12's AVX-512 headers initialise results from _mm512_undefined_*(), which
// -Wmaybe-uninitialized reports at every inlined use; the warning is about the header, not us.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif

// The vector paths' target attributes (GCC 12's AVX-512 lambdas need their own). The AVX-512
// path uses DQ, VL and BW too (vrangeps on 256-bit registers, masked 16-bit loads of f16 rows),
// which every AVX-512 CPU but the Xeon Phi has; those run the AVX2 path.
#define IRRUN_AVX2 __attribute__((target("avx2,fma")))
// MaxPool's AVX2 path converts f16 rows as it loads them (F16C; called where cpu_has_f16c()).
#define IRRUN_AVX2_F16C __attribute__((target("avx2,fma,f16c")))
#define IRRUN_AVX512 __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw")))
#define IRRUN_AVX512_LAMBDA __attribute__((target("avx512f,avx512dq,avx512vl,avx512bw")))
// Helpers both vector paths inline: AVX2 alone is a subset of either path's target.
#define IRRUN_AVX2_COMMON __attribute__((target("avx2")))

namespace irrun::kernels::detail {

inline bool cpu_has_avx512() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
  }();
  return has;
}

inline bool cpu_has_avx2() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
}

// AVX2, FMA and F16C (the f16 kernels' conversions). F16C from cpuid: clang 14's
// __builtin_cpu_supports does not know it (the AVX2 check covers the OS's support of the
// registers).
inline bool cpu_has_f16c() {
  static const bool has = [] {
    unsigned a = 0, b = 0, c = 0, d = 0;
    return cpu_has_avx2() && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
  }();
  return has;
}

}  // namespace irrun::kernels::detail
