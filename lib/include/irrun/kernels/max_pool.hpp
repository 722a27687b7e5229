// MaxPool-1/8/14 and AdaptiveMaxPool-8 reference kernel, exact to OpenVINO's reference kernels
// (openvino/reference/max_pool.hpp and adaptive_max_pool.hpp; docs/openvino-semantics.md
// section 6), on the same PoolGeometry and window enumeration as AvgPool.
#pragma once

#include "irrun/element_type.hpp"
#include "irrun/kernels/isa.hpp"
#include "irrun/parallel.hpp"
#include "irrun/pool_geometry.hpp"
#include "irrun/tensor.hpp"

namespace irrun::kernels {

// Maxima of `in` (shape [N, C, spatial...] matching g.in) into `values` (matching g.out, same
// element type) and, when `indices` is not null, the position each maximum was read from into
// `indices` (same shape as `values`, i32 or i64).
//
// Window pooling (g.adaptive == false), as OpenVINO's reference: taps outside the input are
// padding and never read. The running maximum starts at the type's lowest finite value with
// index 0 and takes a tap only when it is strictly greater, in D, H, W order: ties keep the
// first tap, NaN never wins, and a window with no in-bounds tap (or only taps equal to lowest
// or -inf) yields lowest with index 0 of its plane.
// Adaptive pooling: bins adaptive_bin_start..end per axis. Each row (along W) is reduced like
// std::max_element (first maximum; a NaN at the row's start sticks); rows are combined in order
// keeping the earlier one unless strictly greater, starting from the bin's first element (so a
// NaN there wins the bin).
// Indices: plane * prod(in spatial) + the flat position inside the plane, taken modulo
// g.index_range() (the elements from dimension g.index_axis on). i32 indices wrap like a cast
// when they do not fit.
//
// Element types: f32, f64, f16, bf16, i8, i16, i32, i64, u8, u16, u32, u64 (others throw
// irrun::Error "unsupported"). Results are bit-identical for any thread count. Throws
// std::invalid_argument when the tensors do not match the geometry or an output is not writable.
// max_pool() runs the fast kernel below when it covers the case, else the reference kernel;
// `kernels` picks the fast kernel's ISA, or the reference kernel alone (the same bits).
void max_pool(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
              const Parallel& par, Kernels kernels = Kernels::best);

// The readable reference kernel alone (same contract and checks as max_pool).
void max_pool_reference(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                        const Parallel& par);

// The fast kernel (max_pool_fast.cpp) for window pooling on f32 and f64: it vectorises across
// the outputs of a row (AVX-512 for f32, else AVX2 for f32, else portable C++) and visits the
// taps in the reference order, so values and indices are bit-identical to the reference kernel
// on every path and for any thread count. Returns false, touching nothing, when it does not
// cover the case (adaptive pooling, other element types, planes of 2^30 elements or more,
// kernels wider than 256 along W, a table of input rows per output row past 2^21 entries); the
// caller then uses the reference kernel. Tensors must already match the geometry (max_pool
// checks that).
bool max_pool_fast(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                   const Parallel& par, Isa isa = Isa::best);

// f16 and bf16 window pooling (max_pool_half.cpp): widened to f32 a piece at a time (planes that
// fit `chunk_bytes` of scratch, 8 MiB when 0, go several at a time; larger planes a band of
// output rows at a time), through max_pool_fast, and narrowed back, with the reference kernel's
// bits in values and indices. Returns false, touching nothing, when max_pool_fast would not cover
// the f32 case, for adaptive pooling, when a band of one output row would take more than 32 MiB
// of scratch (windows spanning most of a very large plane), and when it would widen more than
// 2^20 values and over 8 a reference tap (windows dilated or strided far along the band axis).
bool max_pool_half(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                   const Parallel& par, Isa isa = Isa::best, std::int64_t chunk_bytes = 0);

// f16 and bf16 window MaxPool without f32 copies (max_pool_fast.cpp): rows of more than 48
// columns or outputs with stride 1 or 2 on AVX-512 (and bf16's on AVX2), loading the 16-bit
// values and storing them, with the reference kernel's bits in values and indices (i32 or i64,
// or none). Returns false, touching nothing, for any other case (max_pool_half runs those) and
// on the portable path.
bool max_pool_half_rows(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                        const Parallel& par, Isa isa = Isa::best);

// Whether max_pool_fast covers this case (used by benchmarks and tests to report the path).
bool max_pool_fast_covers(ElementType type, const PoolGeometry& g);

}  // namespace irrun::kernels
