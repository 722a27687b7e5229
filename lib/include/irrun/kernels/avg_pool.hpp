// AvgPool-1/14/16 and AdaptiveAvgPool-8 kernels, exact to OpenVINO's window and divisor rules
// (docs/openvino-semantics.md sections 3, 4 and 7): a readable reference kernel, which is the
// oracle, a fast f32 kernel (avg_pool_fast.cpp) that keeps the same accuracy and determinism
// contract, and two f16 and bf16 kernels that give the reference's bits: through the f32 one
// (avg_pool_half_f32.cpp) and, where that declines, from exact double sums (avg_pool_half.cpp).
// avg_pool() picks the first fast one that covers the case (f16/bf16: the two in an order by
// window size, bench/HISTORY.md rounds 58-59).
#pragma once

#include <atomic>
#include <cstdint>

#include "irrun/kernels/isa.hpp"
#include "irrun/parallel.hpp"
#include "irrun/pool_geometry.hpp"
#include "irrun/tensor.hpp"

namespace irrun::kernels {

// Averages `in` (shape [N, C, spatial...] matching g.in) into `out` (matching g.out), both of the
// same element type: f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, u32 or u64 (anything else
// throws irrun::Error "unsupported").
// Window pooling (g.adaptive == false): tap j of output o on an axis reads input
// o*stride - pad_begin + j*dilation; taps outside the input on any axis are padding and add
// nothing. The divisor is prod(kernel) when g.pads_in_avg, else the number of in-bounds taps; a
// window without in-bounds taps yields 0. Adaptive pooling: bins adaptive_bin_start..end per
// axis, divided by the bin size.
// Accuracy: float sums are exact (two doubles, or a superaccumulator when those would round) and
// divided once; f32 and f64 results are within one ulp of the exact average and depend on the
// exact sum alone, f16/bf16 are the exact average rounded once (never through a double that
// could round it twice); inf and NaN propagate (a window's first NaN, or NaN for both
// infinities). Integers are summed and divided exactly (128-bit): i8/u8 round the exact
// average to nearest, ties to even; wider integers truncate it toward zero
// (docs/openvino-semantics.md section 7). Results are bit-identical for every thread count
// (planes are split across `par`, each output is computed by one fixed-order loop).
// Throws std::invalid_argument when the tensors do not match the geometry or the output is not
// writable. `kernels` picks the fast kernels' ISA, or the reference kernel alone.
void avg_pool(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par,
              Kernels kernels = Kernels::best);

// The readable reference kernel alone (same contract and checks as avg_pool).
void avg_pool_reference(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par);

// What the fast kernel's exact-first routes did: the bands, units of whole planes and chunks of
// planes whose sums it tried without a bound first, and how many of those tries failed (a sum
// rounded or was NaN) and ran again with their bound. A diagnostic for tests and benchmarks:
// a try fails silently, with the same outputs, only slower.
struct ExactRouteCounts {
  std::atomic<std::int64_t> tries{0}, misses{0};
  std::atomic<std::int64_t> lane_tries{0};  // of tries: chunks of eight small planes in lanes
};

// The fast f32 kernel. Returns false, touching nothing, when it does not cover the case (other
// element types, windows of more than 2^22 taps); the caller then uses the reference kernel.
// Tensors must already match the geometry (avg_pool checks that). Contract: every output is
// within one ulp of the exact average, a zero one has the exact average's sign (+0 for an exact
// zero sum; fuzz_avg_pool checks both), and bit-identical for any thread count. Each output's
// double sum carries a rigorous error bound; an output whose bound does not prove the one-ulp
// guarantee is recomputed with the reference kernel's exact sum. `counts`, if given, adds up
// the exact-first tries.
bool avg_pool_fast(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par,
                   Isa isa = Isa::best, ExactRouteCounts* counts = nullptr);

// The f16 and bf16 kernel (avg_pool_half.cpp): the reference kernel's bits, from exact double
// sums in a cheaper order. Returns false, touching nothing, when it does not cover the case
// (other element types, windows of more than 2^13 taps, rows past its buffers, an inf or NaN in
// a row it reads, bf16 values there whose exponents span too far for exact sums, and rows read
// so sparsely that its walk of the values would pass 16 of the reference's taps each, and 2^20
// in all). Isa::portable leaves out its AVX2 and F16C code (every path gives the same bits).
// `band_rows`, when not 0, makes it work in bands of at most that many output rows (tests).
bool avg_pool_half(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par,
                   Isa isa = Isa::best, std::int64_t band_rows = 0);

// f16 and bf16 AvgPool through avg_pool_fast (avg_pool_half_f32.cpp): widened to f32 a piece at
// a time (planes that fit `chunk_bytes` of scratch, 8 MiB when 0, go several at a time; larger
// planes a band of output rows at a time), narrowed back with the reference kernel's bits, the
// few outputs whose f32 value is too near a 16-bit midpoint to tell (or not finite) recomputed as
// the reference does. Where those are many (windows of 2^k taps; a piece with more than 1 in 32),
// pieces go to avg_pool_half instead when it covers them, unless `switch_to_sums` is false
// (tests). Returns false, touching nothing, when avg_pool_fast would not cover the f32 case, for
// adaptive pooling of planes past the scratch, and where max_pool_half declines for the pieces'
// sake (a band of one output row past 32 MiB, windows dilated or strided far).
bool avg_pool_half_f32(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par,
                       Isa isa = Isa::best, std::int64_t chunk_bytes = 0,
                       bool switch_to_sums = true);

// Whether avg_pool_fast covers this case (used by benchmarks and tests to report the path).
bool avg_pool_fast_covers(ElementType type, const PoolGeometry& g);

}  // namespace irrun::kernels
