// Binding input blobs to a model's Parameters: `--input [NAME=]FILE`, `--shape NAME=dims`,
// `--random-input --seed N`.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "irrun/model.hpp"
#include "irrun/tensor.hpp"

namespace irrun {

struct InputOptions {
  std::vector<std::string> inputs;           // "FILE" or "NAME=FILE"
  std::vector<std::string> shapes;           // "NAME=1,3,224,224"
  std::optional<std::uint64_t> random_seed;  // set: generate every input not given
};

struct BoundInputs {
  std::map<std::size_t, Tensor> tensors;     // by Parameter layer index
  std::vector<std::string> notes;            // e.g. a float .npy converted to the Parameter's type
  std::vector<std::string> warnings;         // values such a conversion lost: to inf or to 0
  std::map<std::size_t, std::string> files;  // the file each loaded (not generated) input came from
};

// Loads or generates one tensor per Parameter. Every mistake (unknown or missing NAME, wrong
// byte size, dtype or shape, unreadable file) throws input_error naming the Parameter, what was
// expected and what was found.
BoundInputs bind_inputs(const Model& model, const InputOptions& options);

// The Parameter an input NAME refers to: its layer name or one of its tensor names.
std::optional<std::size_t> find_parameter(const Model& model, const std::string& name);

}  // namespace irrun
