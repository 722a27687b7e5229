// A dense row-major tensor: element type, static shape and a byte buffer that owns its memory,
// maps a file read-only or views memory the caller owns (Buffer::wrap, Tensor::wrap).
// Part of the public API (see irrun/irrun.hpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "irrun/element_type.hpp"

// Public API: exported from a shared libirrun, whose other symbols are hidden.
#pragma GCC visibility push(default)
namespace irrun {

// Memory limit: a process-wide cap on the bytes irrun holds in owned buffers (Buffer::allocate;
// file mappings do not count). An allocation that would take the bytes in use over the limit
// throws irrun::Error(ExitCode::limit) before allocating anything. 0 means no limit (the
// library's default; the irrun tool sets default_memory_limit() or --max-memory). `setting`
// names, in the errors, where the limit is set: a string that outlives every later allocation
// (a literal), "set_memory_limit" by default, "--max-memory" in the irrun tool.
void set_memory_limit(std::uint64_t bytes, const char* setting = "set_memory_limit");
std::uint64_t memory_limit();
// Bytes currently held by owned buffers.
std::uint64_t memory_in_use();
// Throws Error(limit) "<what> needs N bytes ..., over the memory limit of L" unless `bytes` more
// fit under the limit. `bytes` nullopt means the size overflowed 64 bits.
void require_memory(std::optional<std::uint64_t> bytes, const std::string& what);
// 75% of physical memory (sysconf), or 0 when it cannot be determined.
std::uint64_t default_memory_limit();
// "1048576", "512K", "512M", "8G", "1T" (binary multiples, optional trailing 'B' or 'iB', any
// case); nullopt for anything else or an overflowing value.
std::optional<std::uint64_t> parse_memory_size(std::string_view text);
// "512 MiB" style, for messages.
std::string format_bytes(std::uint64_t bytes);

class Buffer {
 public:
  Buffer() = default;
  // Zero-initialised, 64-byte aligned memory. Throws irrun::Error(limit) when `bytes` would
  // exceed the memory limit (see set_memory_limit) or cannot be allocated.
  static Buffer allocate(std::size_t bytes);
  // Read-only mapping of `size` bytes at `offset` of a file; throws std::system_error.
  static Buffer map_file(const std::string& path, std::size_t offset, std::size_t size);
  // A view of `size` bytes the caller owns: no copy, no ownership, not counted against the memory
  // limit. The caller keeps the memory alive while this Buffer, or any copy or slice of it, is in
  // use. Wrapping a const pointer gives a read-only buffer, a mutable pointer a writable one.
  // Throws irrun::Error(bad_input) for a null pointer with a nonzero size.
  static Buffer wrap(void* data, std::size_t size);
  static Buffer wrap(const void* data, std::size_t size);
  // wrap(nullptr, 0): an empty writable view (without this, nullptr fits both overloads).
  static Buffer wrap(std::nullptr_t, std::size_t size) {
    return wrap(static_cast<void*>(nullptr), size);
  }
  // A view into another buffer, sharing its lifetime. Throws irrun::Error(bad_input) when
  // [offset, offset + size) is not inside this buffer.
  Buffer slice(std::size_t offset, std::size_t size) const;

  const std::byte* data() const { return data_; }
  std::byte* mutable_data() { return writable_ ? data_ : nullptr; }
  std::size_t size() const { return size_; }
  bool writable() const { return writable_; }
  // Whether this is the only holder of memory it owns (not a view, a mapping's copy, a slice).
  bool sole_owner() const { return owner_ && owner_.use_count() == 1; }

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

  // Allocates a zeroed tensor; throws irrun::Error(limit) on an overflowing size or when it
  // would exceed the memory limit, irrun::Error(bad_input) on a negative dimension or an element
  // type without a fixed size (undefined, string).
  static Tensor zeros(ElementType type, std::vector<std::int64_t> shape);
  // A tensor over caller-owned memory of at least the packed byte size of `shape` (see
  // Buffer::wrap for the lifetime rule). Throws irrun::Error(limit) on an overflowing size and
  // irrun::Error(bad_input) on a negative dimension, an element type without a fixed size or a
  // null `data` for a nonzero size.
  static Tensor wrap(ElementType type, std::vector<std::int64_t> shape, void* data);
  static Tensor wrap(ElementType type, std::vector<std::int64_t> shape, const void* data);
  // An empty writable tensor, e.g. an output with a zero dimension, given no memory.
  static Tensor wrap(ElementType type, std::vector<std::int64_t> shape, std::nullptr_t) {
    return wrap(type, std::move(shape), static_cast<void*>(nullptr));
  }
  // The product of `shape` and the packed bytes it takes; for a shape set by hand, throw
  // irrun::Error(bad_input) on a negative dimension and irrun::Error(limit) on an overflow,
  // never a wrapped size.
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
#pragma GCC visibility pop
