// Internal to the kernels: scratch memory kept for the calling thread from one kernel call to
// the next. Fresh pages fault on first touch and the OS zeroes each (some 0.1 ms a MiB on this
// VM): on small f16 layers that cost more than the kernels themselves (bench/HISTORY.md, round
// 59). Each kernel takes a slot of its own, so that kernels run within others (avg_pool_half on
// a piece of avg_pool_half_f32) keep theirs. A slot already taken (a kernel re-entered), a
// request past kKeptMost, or one that would take what all threads keep past kKeptTotal gets
// memory of its own, freed after: a run's 64 MiB above its tensors holds the kept memory of any
// number of threads. The memory is on cache lines of its own (own_line_bytes).
#pragma once

#include <cstddef>
#include <memory>

#include "lines.hpp"

namespace irrun::kernels::detail {

enum class Slot { avg_half_f32, avg_half_sums, max_half, count };

inline constexpr std::size_t kKeptMost = std::size_t{16} << 20, kKeptTotal = std::size_t{32} << 20;

class Scratch {
 public:
  // Room for parts of `bytes` in all, each counted with part_bytes.
  Scratch(Slot slot, std::size_t bytes);
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  // The bytes a part of n values of T takes (its alignment included).
  template <class T>
  static constexpr std::size_t part_bytes(std::size_t n) {
    return n * sizeof(T) + kAlign;
  }
  // The bytes all threads keep now.
  static std::size_t kept_bytes();

  // The next part: n values of T, not initialised, 64-byte aligned.
  template <class T>
  T* take(std::size_t n) {
    return static_cast<T*>(take_bytes(n * sizeof(T)));
  }

 private:
  static constexpr std::size_t kAlign = 64;
  void* take_bytes(std::size_t bytes);

  bool* busy_ = nullptr;  // the slot's flag, when the memory is the slot's
  LineBytes own_;
  std::byte* at_;
  std::size_t left_;
};

}  // namespace irrun::kernels::detail
