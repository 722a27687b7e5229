#include "scratch.hpp"

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace irrun::kernels::detail {
namespace {

std::atomic<std::size_t> kept_total{0};

struct Kept {
  LineBytes data;
  std::size_t size = 0;
  bool busy = false;
  void release() {
    data.reset();
    kept_total -= size;
    size = 0;
  }
  ~Kept() { release(); }  // at the thread's end
};

thread_local std::array<Kept, static_cast<std::size_t>(Slot::count)> kept;

// Counts `bytes` more kept, unless that would pass kKeptTotal.
bool reserve(std::size_t bytes) {
  std::size_t now = kept_total.load();
  do
    if (now + bytes > kKeptTotal) return false;
  while (!kept_total.compare_exchange_weak(now, now + bytes));
  return true;
}

}  // namespace

std::size_t Scratch::kept_bytes() {
  return kept_total.load();
}

Scratch::Scratch(Slot slot, std::size_t bytes) : left_(bytes) {
  Kept& k = kept[static_cast<std::size_t>(slot)];
  if (!k.busy && k.size < bytes && bytes <= kKeptMost) {
    k.release();  // before the new one: not both at once
    if (reserve(bytes)) {
      try {
        k.data = own_line_bytes(bytes);
      } catch (...) {
        kept_total -= bytes;
        throw;
      }
      k.size = bytes;
    }
  }
  if (k.busy || k.size < bytes) {
    own_ = own_line_bytes(bytes);
    at_ = own_.get();
    return;
  }
  k.busy = true;
  busy_ = &k.busy;
  at_ = k.data.get();
}

Scratch::~Scratch() {
  if (busy_) *busy_ = false;
}

void* Scratch::take_bytes(std::size_t bytes) {
  const auto address = reinterpret_cast<std::uintptr_t>(at_);
  const std::size_t pad = (kAlign - address % kAlign) % kAlign;
  if (pad + bytes > left_) throw std::logic_error("Scratch: a part past the room asked for");
  std::byte* part = at_ + pad;
  at_ = part + bytes;
  left_ -= pad + bytes;
  return part;
}

}  // namespace irrun::kernels::detail
