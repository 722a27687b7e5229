#include "irrun/parallel.hpp"

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <catch2/catch.hpp>

#include "irrun/error.hpp"
#include "irrun/network.hpp"

using irrun::Parallel;

namespace {

// The chunks for_range hands out, sorted by begin.
std::vector<std::pair<std::int64_t, std::int64_t>> chunks_of(const Parallel& par, std::int64_t n,
                                                             std::int64_t grain = 1) {
  std::mutex mu;
  std::vector<std::pair<std::int64_t, std::int64_t>> chunks;
  par.for_range(
      n,
      [&](std::int64_t b, std::int64_t e) {
        std::lock_guard<std::mutex> lock(mu);
        chunks.emplace_back(b, e);
      },
      grain);
  std::sort(chunks.begin(), chunks.end());
  return chunks;
}

}  // namespace

TEST_CASE("Parallel thread count", "[parallel]") {
  CHECK(Parallel(1).threads() == 1);
  CHECK(Parallel(3).threads() == 3);
  CHECK(Parallel(0).threads() == Parallel::default_threads());
  CHECK(Parallel(irrun::NetworkOptions::max_threads).threads() == 1024);
  for (int bad : {-1, 1025, std::numeric_limits<int>::max()}) {
    INFO(bad);
    try {
      const Parallel par(bad);
      FAIL("no error");
    } catch (const irrun::Error& e) {
      CHECK(e.code() == irrun::ExitCode::usage);
      CHECK_THAT(e.what(), Catch::Contains("from 0 (one per core) to 1024"));
    }
  }
}

TEST_CASE("Parallel's default thread count follows the CPU affinity", "[parallel]") {
  cpu_set_t all;
  REQUIRE(sched_getaffinity(0, sizeof all, &all) == 0);
  CHECK(Parallel::default_threads() == std::min(CPU_COUNT(&all), 1024));
  // Restricted to one CPU (this thread only; sched_getaffinity(0) reads the calling thread's
  // mask), one thread: hardware_concurrency() would still count them all.
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  const int restricted = Parallel(0).threads();
  REQUIRE(sched_setaffinity(0, sizeof all, &all) == 0);
  CHECK(restricted == 1);
}

// The threads of this process, from /proc/self/task.
static std::size_t process_threads() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

TEST_CASE("Parallel starts its pool on the first split for_range, not before", "[parallel]") {
  const std::size_t before = process_threads();
  const Parallel par(8);
  CHECK_FALSE(par.started());
  CHECK(process_threads() == before);
  par.for_range(1, [](std::int64_t, std::int64_t) {});  // one chunk: runs on the caller
  CHECK_FALSE(par.started());
  const Parallel one(1);
  one.for_range(100, [](std::int64_t, std::int64_t) {});
  CHECK_FALSE(one.started());
  CHECK(process_threads() == before);
  std::atomic<std::int64_t> covered{0};
  par.for_range(100, [&](std::int64_t b, std::int64_t e) { covered += e - b; });
  CHECK(par.started());
  CHECK(covered == 100);
  CHECK(process_threads() == before + 7);
}

TEST_CASE("Parallel's first for_range on several threads at once starts one pool", "[parallel]") {
  const Parallel par(3);
  std::atomic<std::int64_t> covered{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t)
    callers.emplace_back(
        [&] { par.for_range(50, [&](std::int64_t b, std::int64_t e) { covered += e - b; }); });
  for (auto& c : callers) c.join();
  CHECK(par.started());
  CHECK(covered == 200);
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

// A grain of g: at most n / g chunks (at least one), as even as without; a range of fewer bytes
// than kForkBytes in all runs as one chunk (on the caller).
TEST_CASE("Parallel::for_range takes chunks of its grain at least", "[parallel]") {
  const Parallel par(3);
  for (const std::int64_t n : {1, 5, 12, 100})
    for (const std::int64_t grain : {0, 1, 2, 5, 13, 1000}) {
      INFO("n=" << n << " grain=" << grain);
      const auto chunks = chunks_of(par, n, grain);
      const std::int64_t k =
          std::min<std::int64_t>(std::max<std::int64_t>(1, n / std::max<std::int64_t>(1, grain)),
                                 Parallel::kChunksPerThread * 3);
      REQUIRE(static_cast<std::int64_t>(chunks.size()) == k);
      std::int64_t next = 0;
      for (const auto& [b, e] : chunks) {
        CHECK(b == next);
        CHECK(e - b >= n / k);
        next = e;
      }
      CHECK(next == n);
    }
  // The runner (tests/main.cpp) sets fork_bytes to 0: every grain 1.
  CHECK(Parallel::fork_grain(100, 10) == 1);
  Parallel::fork_bytes = Parallel::kForkBytes;
  CHECK(Parallel::fork_grain(100, Parallel::kForkBytes - 1) == 100);
  CHECK(Parallel::fork_grain(100, 10 * Parallel::kForkBytes) == 10);
  CHECK(Parallel::fork_grain(100, 1000 * Parallel::kForkBytes) == 1);
  CHECK(Parallel::fork_grain(100, 0) == 1);
  Parallel::fork_bytes = 0;
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

TEST_CASE("Parallel::for_range runs each thread's own part first, then steals from the back",
          "[parallel]") {
  // Eight chunks on two threads: the caller owns 0-3, the worker 4-7. Each thread's first chunk
  // waits until the other has entered one, so neither can take the other's part before starting
  // its own; the rest of the order depends on timing.
  const Parallel par(2);
  const auto caller = std::this_thread::get_id();
  std::mutex mu;
  std::vector<std::int64_t> mine, theirs;  // chunks in the order each thread ran them
  std::atomic<int> entered_mine{0}, entered_theirs{0};
  std::atomic<int> wide{0};  // chunks of more than one index (Catch's CHECK is for one thread)
  par.for_range(8, [&](std::int64_t b, std::int64_t e) {
    if (e != b + 1) ++wide;
    const bool on_caller = std::this_thread::get_id() == caller;
    {
      std::lock_guard<std::mutex> lock(mu);
      (on_caller ? mine : theirs).push_back(b);
    }
    if ((on_caller ? entered_mine : entered_theirs)++ == 0)
      while ((on_caller ? entered_theirs : entered_mine).load() == 0) std::this_thread::yield();
  });
  CHECK(wide == 0);
  REQUIRE(!mine.empty());
  REQUIRE(!theirs.empty());
  CHECK(mine.front() == 0);
  CHECK(theirs.front() == 4);
  // Own chunks ascending, then stolen ones descending from the other part's back.
  for (const auto* run : {&mine, &theirs}) {
    const std::int64_t own = run == &mine ? 0 : 4, other_back = run == &mine ? 7 : 3;
    std::size_t i = 0;
    for (; i < run->size() && (*run)[i] >= own && (*run)[i] < own + 4; ++i)
      CHECK((*run)[i] == own + static_cast<std::int64_t>(i));
    for (std::int64_t next = other_back; i < run->size(); ++i, --next) CHECK((*run)[i] == next);
  }
  std::vector<std::int64_t> all(mine);
  all.insert(all.end(), theirs.begin(), theirs.end());
  std::sort(all.begin(), all.end());
  CHECK(all == std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7});
}
