#include "irrun/parallel.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "fp_control.hpp"
#include "irrun/error.hpp"
#include "irrun/network.hpp"

// With NDEBUG, Eigen's ThreadPool leaves assertion-only parameters unused; that is its business,
// not ours, when its headers are not included as system headers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/ThreadPool>
#pragma GCC diagnostic pop

namespace irrun {
namespace {

constexpr std::chrono::microseconds kSpin{200};

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#else
  std::this_thread::yield();
#endif
}

// One for_range call: the next chunk to claim and the chunks not yet finished.
struct ClaimState {
  explicit ClaimState(std::int64_t k) : chunks(k), left(k) {}
  const std::int64_t chunks;
  std::atomic<std::int64_t> next{0};
  std::atomic<std::int64_t> left;
};

}  // namespace

struct Parallel::Pool {
  explicit Pool(int workers) : pool(workers) {}
  Eigen::ThreadPool pool;
};

int Parallel::default_threads() {
  int n = 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  // A mask of more than CPU_SETSIZE (1024) CPUs does not fit: the fallback below, capped anyway.
  if (::sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
  if (n <= 0) n = static_cast<int>(std::thread::hardware_concurrency());
  return std::clamp(n, 1, NetworkOptions::max_threads);
}

Parallel::Parallel(int threads) : threads_(threads) {
  if (threads < 0 || threads > NetworkOptions::max_threads)
    throw usage_error("threads = " + std::to_string(threads) +
                      ": expected a whole number from 0 (one per core) to " +
                      std::to_string(NetworkOptions::max_threads));
  if (threads_ == 0) threads_ = default_threads();
}

Parallel::~Parallel() = default;

void Parallel::for_range(std::int64_t n, const std::function<void(std::int64_t, std::int64_t)>& fn,
                         std::int64_t grain) const {
  if (n <= 0) return;
  const std::int64_t chunks =
      std::min<std::int64_t>(std::max<std::int64_t>(1, n / std::max<std::int64_t>(1, grain)),
                             std::int64_t{kChunksPerThread} * threads_);
  if (chunks == 1 || threads_ == 1) {
    fn(0, n);
    return;
  }
  // The caller works on chunks too, so the pool needs one thread fewer than the total.
  std::call_once(pool_once_, [this] {
    pool_ = std::make_unique<Pool>(threads_ - 1);
    started_.store(true, std::memory_order_release);
  });
  // Nested calls from a worker would block that worker waiting for tasks queued behind it.
  if (pool_->pool.CurrentThreadId() != -1) {
    fn(0, n);
    return;
  }

  const std::int64_t base = n / chunks;
  const std::int64_t extra = n % chunks;
  auto chunk_begin = [&](std::int64_t i) { return i * base + std::min(i, extra); };

  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(chunks));
  auto run = [&](std::int64_t i) {
    try {
      fn(chunk_begin(i), chunk_begin(i + 1));
    } catch (...) {
      errors[static_cast<std::size_t>(i)] = std::current_exception();
    }
  };

  // Chunks are claimed, not assigned: a worker that is late (asleep, or busy with another
  // caller's chunk) leaves its chunk to the caller. The state is shared with the tasks, which may
  // start after this call has returned; they then find nothing to claim and touch nothing else.
  auto st = std::make_shared<ClaimState>(chunks);
  auto work = [&run](ClaimState& c) {
    while (true) {
      const std::int64_t i = c.next.fetch_add(1, std::memory_order_relaxed);
      if (i >= c.chunks) return;
      run(i);
      if (c.left.fetch_sub(1, std::memory_order_acq_rel) == 1) c.left.notify_all();
    }
  };
  // The pool's threads run chunks under the caller's floating-point control state (rounding,
  // flush-to-zero, exception masks), as the caller's own chunks run: the kernels set theirs.
  const std::int64_t helpers = std::min<std::int64_t>(chunks, threads_) - 1;
  const detail::FpControl control = detail::current_fp_control();
  for (std::int64_t i = 0; i < helpers; ++i)
    pool_->pool.Schedule([work, st, control] {
      const detail::FpScope scope(control);
      work(*st);
    });
  work(*st);

  // The caller spins while the last chunks finish: a thread that blocks takes tens of
  // microseconds to wake in a VM (an interrupt to an idle vCPU), a tenth of a 0.2 ms kernel.
  // After kSpin it blocks.
  const auto spin_until = std::chrono::steady_clock::now() + kSpin;
  for (int k = 1;; ++k) {
    const std::int64_t left = st->left.load(std::memory_order_acquire);
    if (left == 0) break;
    if (k % 64 != 0 || std::chrono::steady_clock::now() < spin_until) {
      cpu_relax();
    } else {
      st->left.wait(left, std::memory_order_acquire);
    }
  }

  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace irrun
