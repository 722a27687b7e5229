// A tensor's copy placed against a page that cannot be read (PROT_NONE): its first byte right
// after one, or its last byte right before one. A kernel that reads a byte outside the tensor
// then faults and kills the test, where next to other memory it would read it unnoticed (and
// use it only in lanes it never stores). Masked vector loads may span the page: their lanes
// that are masked off are not read.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "irrun/tensor.hpp"

namespace irrun::testing {

class GuardedCopy {
 public:
  enum class Side { before, after };  // where the unreadable page is

  GuardedCopy(const Tensor& t, Side side) {
    const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
    const std::size_t bytes = t.byte_size(), pages = (bytes + page - 1) / page;
    length_ = (pages + 2) * page;
    void* p = ::mmap(nullptr, length_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::runtime_error("GuardedCopy: mmap failed");
    base_ = static_cast<std::byte*>(p);
    if (::mprotect(base_, page, PROT_NONE) != 0 ||
        ::mprotect(base_ + (pages + 1) * page, page, PROT_NONE) != 0)
      throw std::runtime_error("GuardedCopy: mprotect failed");
    std::byte* data = side == Side::before ? base_ + page : base_ + (pages + 1) * page - bytes;
    std::memcpy(data, t.buffer.data(), bytes);
    tensor_ = Tensor::wrap(t.type, t.shape, static_cast<const void*>(data));
  }
  GuardedCopy(const GuardedCopy&) = delete;
  GuardedCopy& operator=(const GuardedCopy&) = delete;
  ~GuardedCopy() { ::munmap(base_, length_); }

  const Tensor& tensor() const { return tensor_; }

 private:
  std::byte* base_ = nullptr;
  std::size_t length_ = 0;
  Tensor tensor_;
};

// Calls f(copy, where) with a GuardedCopy of t against the unreadable page before it, then
// against the one after it ("page before", "page after").
template <class F>
void with_guarded_copies(const Tensor& t, F&& f) {
  for (const auto side : {GuardedCopy::Side::before, GuardedCopy::Side::after}) {
    const GuardedCopy copy(t, side);
    f(copy.tensor(), side == GuardedCopy::Side::before ? "page before" : "page after");
  }
}

}  // namespace irrun::testing
