// A small fork-join helper over an owned Eigen::ThreadPool: a fixed partition into chunks, claimed
// dynamically by the threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace irrun {

class Parallel {
 public:
  // threads: how many threads a for_range may use, including the caller; 0 means one per core.
  // A pool is created only when more than one thread is requested. Throws std::invalid_argument
  // for a negative count.
  explicit Parallel(int threads);
  ~Parallel();
  Parallel(const Parallel&) = delete;
  Parallel& operator=(const Parallel&) = delete;

  int threads() const { return threads_; }

  // Chunks per thread: a thread that starts late or is preempted (a vCPU taken by the host) leaves
  // the rest of its share to the others.
  static constexpr int kChunksPerThread = 4;

  // Calls fn(begin, end) on contiguous, disjoint chunks covering [0, n) and returns when all are
  // done. With more than one thread, chunk i of k = min(n, kChunksPerThread * threads()) is
  // [i*n/k, (i+1)*n/k) (remainder spread over the first chunks); callers that compute each index
  // independently get results that do not depend on the thread count. The caller and the pool's
  // threads claim chunks in order, so a chunk runs on whichever thread is free first; the caller
  // spins briefly before it blocks while the last chunks finish. If chunks throw, the exception of
  // the lowest-numbered throwing chunk is rethrown after all chunks have finished. A call made from
  // inside a chunk (nesting) runs serially to avoid waiting on the pool's own threads. Every chunk
  // runs under the caller's floating-point control state (on x86 its MXCSR: rounding mode,
  // flush-to-zero, denormals-are-zero, exception masks).
  void for_range(std::int64_t n,
                 const std::function<void(std::int64_t begin, std::int64_t end)>& fn) const;

 private:
  struct Pool;
  int threads_;
  std::unique_ptr<Pool> pool_;
};

}  // namespace irrun
