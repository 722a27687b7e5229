// A small fork-join helper over an owned Eigen::ThreadPool: a fixed partition into chunks, each
// thread running its own part of them first and then taking what the others have not started.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>

namespace irrun {

class Parallel {
 public:
  // threads: how many threads a for_range may use, including the caller; 0 means one per CPU the
  // calling thread may run on (its affinity mask; at most NetworkOptions::max_threads). Throws
  // Error(usage) for a count below 0 or above NetworkOptions::max_threads. The pool (threads() - 1
  // threads) starts on the first for_range that splits its range, not here: a Parallel that never
  // runs anything in parallel costs no thread.
  explicit Parallel(int threads);
  ~Parallel();
  Parallel(const Parallel&) = delete;
  Parallel& operator=(const Parallel&) = delete;

  int threads() const { return threads_; }
  // Whether the pool's threads have been started (by a for_range).
  bool started() const { return started_.load(std::memory_order_acquire); }
  // One per CPU in the calling thread's affinity mask (hardware_concurrency() if it cannot be
  // read), capped at NetworkOptions::max_threads: what a count of 0 means.
  static int default_threads();

  // Chunks per thread: a thread that starts late or is preempted (a vCPU taken by the host) leaves
  // the rest of its share to the others.
  static constexpr int kChunksPerThread = 4;

  // The grain of a range of `n` indices over `bytes` of input and output: chunks of kForkBytes
  // at least. A layer of fewer bytes runs on the caller alone; at two threads such layers (the
  // person-attributes network's 70-150 KB pools, 5-12 us) had taken up to 1.8x their one-thread
  // time.
  static constexpr std::int64_t kForkBytes = 64 * 1024;
  static std::int64_t fork_grain(std::int64_t n, std::int64_t bytes) {
    const std::int64_t least = fork_bytes.load(std::memory_order_relaxed);
    return bytes <= 0 ? 1 : std::max<std::int64_t>(1, n * least / bytes);
  }
  // kForkBytes, but in the tests, which set 0 so that their small layers still split across
  // threads wherever their ranges allow (every chunk boundary of the kernels exercised).
  static inline std::atomic<std::int64_t> fork_bytes{kForkBytes};

  // Calls fn(begin, end) on contiguous, disjoint chunks covering [0, n) and returns when all are
  // done. With more than one thread, chunk i of k = min(n / grain, kChunksPerThread * threads()) is
  // [i*n/k, (i+1)*n/k) (remainder spread over the first chunks); callers that compute each index
  // independently get results that do not depend on the thread count. The chunks fall into one
  // part per thread taking part (t = min(k, threads())), part p holding chunks [p*k/t, (p+1)*k/t):
  // the caller owns part 0, the pool's thread of id j part j + 1. Each thread claims its own
  // part's chunks from the front, then the other parts' from their backs: a thread runs the same
  // chunks call after call (its share of a layer stays in its core's caches for the next call),
  // and one that is late or preempted leaves its chunks to the others. The caller spins briefly
  // before it blocks while the last chunks finish. If chunks throw, the exception of
  // the lowest-numbered throwing chunk is rethrown after all chunks have finished. A call made from
  // inside a chunk (nesting) runs serially to avoid waiting on the pool's own threads. Every chunk
  // runs under the caller's floating-point control state (on x86 its MXCSR: rounding mode,
  // flush-to-zero, denormals-are-zero, exception masks).
  // `grain`: the fewest indices a chunk holds (at least 1; k is then at most n / grain), for
  // callers whose indices are cheap: waking a pool thread takes microseconds in a VM, more than
  // a small layer's whole kernel (fork_grain).
  void for_range(std::int64_t n,
                 const std::function<void(std::int64_t begin, std::int64_t end)>& fn,
                 std::int64_t grain = 1) const;

 private:
  struct Pool;
  int threads_;
  mutable std::once_flag pool_once_;
  mutable std::unique_ptr<Pool> pool_;  // set once, under pool_once_
  mutable std::atomic<bool> started_{false};
};

}  // namespace irrun
