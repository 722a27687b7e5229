// Whether this CPU runs the kernels' AVX2 path, and their AVX-512 one (lib/src/kernels/simd.hpp
// makes the same checks), for tests whose expectations depend on the path taken.
#pragma once

namespace irrun::testing {

inline bool cpu_has_avx2() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

inline bool cpu_has_avx512() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw");
}

}  // namespace irrun::testing
