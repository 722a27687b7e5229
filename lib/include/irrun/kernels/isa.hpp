// Instruction set choice for the fast pooling kernels (avg_pool_fast, max_pool_fast).
#pragma once

namespace irrun::kernels {

// Instruction set of a fast kernel, chosen at run time: `best` uses AVX-512 (F, DQ, VL) or AVX2
// when the CPU has it, `avx2` at most AVX2, `portable` plain C++. All give bit-identical
// results (same operations in the same order).
enum class Isa { best, avx2, portable };

}  // namespace irrun::kernels
