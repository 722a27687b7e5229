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

// One for_range call's chunks, split into one run of consecutive chunks per thread taking part
// (its part: the caller's is 0, a pool thread's its id + 1). A thread claims its own part's chunks
// from the front, then the other parts' from their backs; so it runs the same chunks call after
// call unless another is late, and a layer's data stays in its core's caches from one call to the
// next. Against chunks claimed in order by whichever thread came first, at two threads (round 81,
// alternating binaries): S1 and S2 (4 MB each) 0.94-0.95x and 0.86-1.00x the time, M2v
// 0.88-0.96x, SSD's and Inception's pools on 10x10 to 38x38 planes 0.78-1.01x; S5, S6, S8 and M3
// 0.95-1.01x; layers of 4-15 us 0.91-1.06x. A value shared with the tasks, which may outlive the
// call: one allocation of adjacent words (with a cache line of its own per part, a 5 us layer had
// taken 1.08x its time at two threads, in lines moved between the cores).
class Claims {
 public:
  Claims(std::int64_t chunks, std::int64_t parts)
      : parts_(parts),
        words_(std::make_shared_for_overwrite<Word[]>(static_cast<std::size_t>(parts) + 1)) {
    words_[0].store(static_cast<std::uint64_t>(chunks), std::memory_order_relaxed);
    for (std::int64_t p = 0; p < parts; ++p)
      part(p).store(pack(p * chunks / parts, (p + 1) * chunks / parts), std::memory_order_relaxed);
  }
  std::int64_t parts() const { return parts_; }
  // The next chunk of part p for its owner (from the front) or for another thread (from the
  // back), or -1 when the part has none left.
  std::int64_t claim(std::int64_t p, bool owner) const {
    Word& w = part(p);
    std::uint64_t cur = w.load(std::memory_order_relaxed);
    while (true) {
      const auto front = static_cast<std::int64_t>(cur & 0xFFFFFFFFu);
      const auto back = static_cast<std::int64_t>(cur >> 32);
      if (front >= back) return -1;
      const std::uint64_t next = owner ? pack(front + 1, back) : pack(front, back - 1);
      if (w.compare_exchange_weak(cur, next, std::memory_order_relaxed))
        return owner ? front : back - 1;
    }
  }
  // The chunks not yet finished; a thread finishing one subtracts it (release: its writes are
  // visible to the caller that sees 0).
  std::atomic<std::uint64_t>& left() const { return words_[0]; }

 private:
  using Word = std::atomic<std::uint64_t>;
  static std::uint64_t pack(std::int64_t front, std::int64_t back) {
    return static_cast<std::uint64_t>(front) | static_cast<std::uint64_t>(back) << 32;
  }
  Word& part(std::int64_t p) const { return words_[static_cast<std::size_t>(p) + 1]; }
  std::int64_t parts_;
  std::shared_ptr<Word[]> words_;  // the chunks left, then each part's front and back
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
  // caller's chunk) leaves its part to the others. The state is shared with the tasks, which may
  // start after this call has returned; they then find nothing to claim and touch nothing but
  // the state and the pool, which outlives its tasks.
  const std::int64_t helpers = std::min<std::int64_t>(chunks, threads_) - 1;
  const Claims claims(chunks, helpers + 1);
  auto work = [&run](const Claims& c, std::int64_t own) {
    const std::int64_t parts = c.parts();
    for (std::int64_t q = 0; q < parts; ++q) {
      const std::int64_t p = (own + q) % parts;
      for (std::int64_t i; (i = c.claim(p, q == 0 && own < parts)) >= 0;) {
        run(i);
        if (c.left().fetch_sub(1, std::memory_order_acq_rel) == 1) c.left().notify_all();
      }
    }
  };
  // The pool's threads run chunks under the caller's floating-point control state (rounding,
  // flush-to-zero, exception masks), as the caller's own chunks run: the kernels set theirs.
  const detail::FpControl control = detail::current_fp_control();
  for (std::int64_t i = 0; i < helpers; ++i)
    pool_->pool.Schedule([work, claims, control, pool = &pool_->pool] {
      const detail::FpScope scope(control);
      // A pool thread past the parts (fewer chunks than threads) owns none and only takes others'.
      work(claims, std::min<std::int64_t>(pool->CurrentThreadId() + 1, claims.parts()));
    });
  work(claims, 0);

  // The caller spins while the last chunks finish: a thread that blocks takes tens of
  // microseconds to wake in a VM (an interrupt to an idle vCPU), a tenth of a 0.2 ms kernel.
  // After kSpin it blocks.
  const auto spin_until = std::chrono::steady_clock::now() + kSpin;
  for (int k = 1;; ++k) {
    const std::uint64_t left = claims.left().load(std::memory_order_acquire);
    if (left == 0) break;
    if (k % 64 != 0 || std::chrono::steady_clock::now() < spin_until) {
      cpu_relax();
    } else {
      claims.left().wait(left, std::memory_order_acquire);
    }
  }

  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace irrun
