// Whether this CPU runs the kernels' AVX2 path, and their AVX-512 one (lib/src/kernels/simd.hpp
// makes the same checks), for tests whose expectations depend on the path taken.
#pragma once

#include <cpuid.h>

namespace irrun::testing {

inline bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

// AVX2, FMA and F16C: MaxPool's AVX2 path (it converts f16 rows as it loads them).
inline bool cpu_has_f16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  return cpu_has_avx2() && __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) != 0;
}

inline bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
}

}  // namespace irrun::testing
