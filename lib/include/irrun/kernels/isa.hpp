// Instruction set choice for the fast pooling kernels (avg_pool_fast, max_pool_fast).
#pragma once

namespace irrun::kernels {

// Instruction set of a fast kernel, chosen at run time: `best` uses AVX-512 (F, DQ, VL) or AVX2
// when the CPU has it, `avx2` at most AVX2, `portable` plain C++. All give bit-identical
// results (same operations in the same order).
enum class Isa { best, avx2, portable };

// Which kernels a run uses (`irrun run/bench --kernels`): the fast kernels at an ISA (`best`,
// `avx2`, `portable`: the same bits on every path), or the readable reference kernels, the
// oracle the fast ones are tested against. They agree bit for bit but on f32 AvgPool, where a
// fast output may be one ulp from the reference's (both within one ulp of the exact average).
enum class Kernels { best, avx2, portable, reference };

inline Isa isa_of(Kernels k) {
  return k == Kernels::avx2 ? Isa::avx2 : k == Kernels::portable ? Isa::portable : Isa::best;
}

}  // namespace irrun::kernels
