#include "irrun/parallel.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <thread>
#include <vector>

// With NDEBUG, Eigen's ThreadPool leaves assertion-only parameters unused; that is its business,
// not ours, when its headers are not included as system headers.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define EIGEN_USE_THREADS
#include <unsupported/Eigen/CXX11/ThreadPool>
#pragma GCC diagnostic pop

namespace irrun {

struct Parallel::Pool {
  explicit Pool(int workers) : pool(workers) {}
  Eigen::ThreadPool pool;
};

Parallel::Parallel(int threads) : threads_(threads) {
  if (threads < 0) throw std::invalid_argument("Parallel: thread count must be >= 0");
  if (threads_ == 0) threads_ = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // The caller works on chunk 0, so the pool needs one thread fewer than the total.
  if (threads_ > 1) pool_ = std::make_unique<Pool>(threads_ - 1);
}

Parallel::~Parallel() = default;

void Parallel::for_range(std::int64_t n,
                         const std::function<void(std::int64_t, std::int64_t)>& fn) const {
  if (n <= 0) return;
  const std::int64_t chunks = std::min<std::int64_t>(n, threads_);
  // Nested calls from a worker would block that worker waiting for tasks queued behind it.
  if (chunks == 1 || !pool_ || pool_->pool.CurrentThreadId() != -1) {
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

  Eigen::Barrier done(static_cast<unsigned>(chunks - 1));
  for (std::int64_t i = 1; i < chunks; ++i) {
    pool_->pool.Schedule([&run, &done, i] {
      run(i);
      done.Notify();
    });
  }
  run(0);
  done.Wait();

  for (const auto& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace irrun
