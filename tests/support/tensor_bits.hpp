// Tensors compared bit for bit, and outputs poisoned with a byte pattern so that any output a
// kernel leaves unwritten shows.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "irrun/tensor.hpp"

namespace irrun::testing {

inline bool same_bits(const Tensor& a, const Tensor& b) {
  return a.byte_size() == b.byte_size() &&
         std::memcmp(a.buffer.data(), b.buffer.data(), a.byte_size()) == 0;
}

inline Tensor poisoned(ElementType type, const std::vector<std::int64_t>& shape,
                       unsigned char byte = 0x5A) {
  Tensor t = Tensor::zeros(type, shape);
  std::memset(t.buffer.mutable_data(), byte, t.byte_size());
  return t;
}

}  // namespace irrun::testing
