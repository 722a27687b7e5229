#include "scratch.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>

namespace irrun::kernels::detail {
namespace {

struct Kept {
  std::unique_ptr<std::byte[]> data;
  std::size_t size = 0;
  bool busy = false;
};

thread_local std::array<Kept, static_cast<std::size_t>(Slot::count)> kept;

}  // namespace

Scratch::Scratch(Slot slot, std::size_t bytes) : left_(bytes) {
  Kept& k = kept[static_cast<std::size_t>(slot)];
  if (k.busy || bytes > kKeptMost) {
    own_ = std::make_unique_for_overwrite<std::byte[]>(bytes);
    at_ = own_.get();
    return;
  }
  if (k.size < bytes) {
    k.data.reset();  // before the new one: not both at once
    k.size = 0;      // and nothing kept if that one throws
    k.data = std::make_unique_for_overwrite<std::byte[]>(bytes);
    k.size = bytes;
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
