// A dense row-major tensor: element type, static shape and a byte buffer that either owns its
// memory or maps a file read-only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "irrun/element_type.hpp"

namespace irrun {

class Buffer {
 public:
  Buffer() = default;
  // Zero-initialised, 64-byte aligned memory.
  static Buffer allocate(std::size_t bytes);
  // Read-only mapping of `size` bytes at `offset` of a file; throws std::system_error.
  static Buffer map_file(const std::string& path, std::size_t offset, std::size_t size);
  // A view into another buffer, sharing its lifetime.
  Buffer slice(std::size_t offset, std::size_t size) const;

  const std::byte* data() const { return data_; }
  std::byte* mutable_data() { return writable_ ? data_ : nullptr; }
  std::size_t size() const { return size_; }
  bool writable() const { return writable_; }

 private:
  std::shared_ptr<void> owner_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
  bool writable_ = false;
};

struct Tensor {
  ElementType type = ElementType::undefined;
  std::vector<std::int64_t> shape;
  Buffer buffer;

  // Allocates a zeroed tensor; throws irrun::Error on an overflowing size.
  static Tensor zeros(ElementType type, std::vector<std::int64_t> shape);
  std::size_t element_count() const;
  std::size_t byte_size() const;
  template <class T>
  const T* data() const {
    return reinterpret_cast<const T*>(buffer.data());
  }
  template <class T>
  T* mutable_data() {
    return reinterpret_cast<T*>(buffer.mutable_data());
  }
};

}  // namespace irrun
