#include "irrun/parallel.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

using irrun::Parallel;

namespace {

// The chunks for_range hands out, sorted by begin.
std::vector<std::pair<std::int64_t, std::int64_t>> chunks_of(const Parallel& par, std::int64_t n) {
  std::mutex mu;
  std::vector<std::pair<std::int64_t, std::int64_t>> chunks;
  par.for_range(n, [&](std::int64_t b, std::int64_t e) {
    std::lock_guard<std::mutex> lock(mu);
    chunks.emplace_back(b, e);
  });
  std::sort(chunks.begin(), chunks.end());
  return chunks;
}

}  // namespace

TEST_CASE("Parallel thread count", "[parallel]") {
  CHECK(Parallel(1).threads() == 1);
  CHECK(Parallel(3).threads() == 3);
  CHECK(Parallel(0).threads() ==
        static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  CHECK_THROWS_AS(Parallel(-1), std::invalid_argument);
}

TEST_CASE("Parallel::for_range covers [0, n) once in fixed contiguous chunks", "[parallel]") {
  const int threads = GENERATE(1, 2, 3, 7);
  const Parallel par(threads);
  for (std::int64_t n : {0, 1, 2, 3, 6, 7, 8, 100, 1001}) {
    INFO("threads=" << threads << " n=" << n);
    const auto chunks = chunks_of(par, n);
    if (n == 0) {
      CHECK(chunks.empty());
      continue;
    }
    // k = min(n, 4 * threads) chunks (one serial call with one thread), sizes differing by at
    // most one, larger ones first.
    const std::int64_t k =
        threads == 1 ? 1 : std::min<std::int64_t>(n, Parallel::kChunksPerThread * threads);
    REQUIRE(static_cast<std::int64_t>(chunks.size()) == k);
    std::int64_t next = 0;
    for (std::int64_t i = 0; i < k; ++i) {
      const auto [b, e] = chunks[static_cast<std::size_t>(i)];
      CHECK(b == next);
      CHECK(e - b == n / k + (i < n % k ? 1 : 0));
      next = e;
    }
    CHECK(next == n);
  }
}

TEST_CASE("Parallel::for_range runs chunks on several threads", "[parallel]") {
  const Parallel par(4);
  std::mutex mu;
  std::vector<std::thread::id> ids;
  std::atomic<int> arrived{0};
  par.for_range(4, [&](std::int64_t, std::int64_t) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ids.push_back(std::this_thread::get_id());
    }
    // Every chunk waits for all four, which can only finish if they run concurrently.
    ++arrived;
    while (arrived.load() < 4) std::this_thread::yield();
  });
  std::sort(ids.begin(), ids.end());
  CHECK(std::unique(ids.begin(), ids.end()) - ids.begin() == 4);
}

TEST_CASE("Parallel::for_range propagates worker exceptions", "[parallel]") {
  const int threads = GENERATE(1, 3);
  const Parallel par(threads);
  std::atomic<std::int64_t> done{0};
  // Every chunk but the first throws; the lowest-numbered throwing chunk wins.
  auto body = [&](std::int64_t b, std::int64_t e) {
    done += e - b;
    if (b > 0 || threads == 1) throw std::runtime_error("chunk " + std::to_string(b));
  };
  CHECK_THROWS_WITH(par.for_range(9, body), threads == 1 ? "chunk 0" : "chunk 1");
  CHECK(done == 9);  // all chunks ran to completion before the rethrow
  // The pool stays usable afterwards.
  std::atomic<std::int64_t> sum{0};
  par.for_range(10, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) sum += i;
  });
  CHECK(sum == 45);
}

TEST_CASE("Parallel::for_range nested inside a chunk runs serially", "[parallel]") {
  const Parallel par(3);
  std::atomic<std::int64_t> total{0};
  par.for_range(6, [&](std::int64_t b, std::int64_t e) {
    for (std::int64_t i = b; i < e; ++i) {
      par.for_range(100, [&](std::int64_t ib, std::int64_t ie) { total += ie - ib; });
    }
  });
  CHECK(total == 600);
}

TEST_CASE("Parallel::for_range runs a busy worker's chunk on the caller", "[parallel]") {
  // The pool's only worker is held inside a chunk of another call (its caller holds the other
  // chunk, so the worker must have taken one); a second call still finishes, its caller claiming
  // both of its chunks.
  const Parallel par(2);
  std::atomic<int> entered{0};
  std::atomic<bool> release{false};
  std::thread first([&] {
    par.for_range(2, [&](std::int64_t, std::int64_t) {
      ++entered;
      while (!release.load()) std::this_thread::yield();
    });
  });
  while (entered.load() < 2) std::this_thread::yield();
  std::atomic<std::int64_t> covered{0};
  std::atomic<bool> second_done{false};
  std::thread second([&] {
    par.for_range(10, [&](std::int64_t b, std::int64_t e) { covered += e - b; });
    second_done = true;
  });
  for (int ms = 0; ms < 10000 && !second_done.load(); ++ms)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  const bool done_while_worker_busy = second_done.load();
  release = true;
  first.join();
  second.join();
  CHECK(done_while_worker_busy);
  CHECK(covered == 10);
}
