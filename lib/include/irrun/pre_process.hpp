// The legacy <pre-process> block: mean values OpenVINO's IR frontend subtracts from one input
// (`parse_pre_process` in its input_model.cpp), inserting a Subtract between the Parameter and
// all its consumers.
#pragma once

#include <cstddef>
#include <optional>

#include "irrun/model.hpp"
#include "irrun/tensor.hpp"

namespace irrun {

struct MeanValues {
  std::size_t parameter = 0;  // the Parameter's layer index
  // The Constant OpenVINO makes, in the input's element type: [C] for an NC input, [C,1,..] for
  // values, [C,spatial..] for planes of the .bin (rank 3 inputs are CHW).
  Tensor mean;
};

// The model's mean values, or nullopt when it has none. Throws ModelError (with OpenVINO's
// message, at the block's or the <mean>'s line) wherever OpenVINO's read_model fails, and for the
// few inputs where OpenVINO's own code has no defined behaviour (rank above 5, no .bin).
// With `build` false, the mean tensor has its type and shape but no data: the checks alone,
// which allocate nothing (`check`, `info`).
std::optional<MeanValues> mean_values(const Model& m, bool build = true);

// Throws what subtract_mean would for x, without computing anything.
void check_mean_input(const Tensor& x, const Tensor& mean);

// x - mean, broadcast as numpy does, in x's element type as OpenVINO's Subtract computes it
// (f16/bf16: in f32, rounded once). Throws Error(bad_input) when x's shape does not broadcast
// with the mean's and Error(unsupported) for element types other than f16, bf16, f32 and f64.
Tensor subtract_mean(const Tensor& x, const Tensor& mean);

}  // namespace irrun
