// A 1-D tensor of `type` holding `values` bit for bit (64-bit integers too, which make_tensor's
// doubles cannot carry).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "irrun/tensor.hpp"

namespace irrun::testing {

template <class T>
Tensor tensor_of(ElementType type, const std::vector<T>& values) {
  Tensor t = Tensor::zeros(type, {static_cast<std::int64_t>(values.size())});
  std::memcpy(t.mutable_data<T>(), values.data(), values.size() * sizeof(T));
  return t;
}

}  // namespace irrun::testing
