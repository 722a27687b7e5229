// Reference AvgPool-1/14/16 and AdaptiveAvgPool-8 kernel: readable, exact to OpenVINO's window
// and divisor rules (docs/openvino-semantics.md sections 3, 4 and 7), and the oracle for any
// faster path.
#pragma once

#include "irrun/parallel.hpp"
#include "irrun/pool_geometry.hpp"
#include "irrun/tensor.hpp"

namespace irrun::kernels {

// Averages `in` (shape [N, C, spatial...] matching g.in) into `out` (matching g.out), both of the
// same element type: f32, f64, f16 or bf16 (anything else throws irrun::Error "unsupported").
// Window pooling (g.adaptive == false): tap j of output o on an axis reads input
// o*stride - pad_begin + j*dilation; taps outside the input on any axis are padding and add
// nothing. The divisor is prod(kernel) when g.pads_in_avg, else the number of in-bounds taps; a
// window without in-bounds taps yields 0. Adaptive pooling: bins adaptive_bin_start..end per
// axis, divided by the bin size.
// Accuracy: sums are compensated in double and divided once; f32 and f64 results are within one
// ulp of the exact average, f16/bf16 are the double average rounded once. Results are
// bit-identical for every thread count (planes are split across `par`, each output is computed
// by one fixed-order loop).
// Throws std::invalid_argument when the tensors do not match the geometry or the output is not
// writable.
void avg_pool(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par);

}  // namespace irrun::kernels
