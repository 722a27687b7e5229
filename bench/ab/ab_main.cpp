// A/B harness: the same benchmark shapes run by two builds of irrun in one process (see
// scripts/ab). The two sides alternate call by call on the same input and output memory, the
// order flipped every pair, so both sample the same moments of this noisy machine and the same
// cache state; a shape's ratio is the median of its pairs' ratios. The outputs of both sides
// must be the same bits.
// --base-avx2 caps the base side alone at AVX2 (with both sides one build: the ISAs compared).
//   ab_main [--avx2] [--base-avx2] [--reps N] [--warmup N] SHAPE...
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define AB_SIDE_DECLS(side)                                           \
  int side##_has(const char*);                                        \
  void* side##_make(const char*, int, float*, float*, std::int64_t*); \
  void side##_run(void*);                                             \
  float* side##_in(void*);                                            \
  float* side##_out(void*);                                           \
  std::int64_t* side##_indices(void*);                                \
  std::int64_t side##_out_count(void*);                               \
  void side##_free(void*);

extern "C" {
AB_SIDE_DECLS(base)
AB_SIDE_DECLS(new)
}

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double time_ms(void (*run)(void*), void* c) {
  const auto t0 = std::chrono::steady_clock::now();
  run(c);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int avx2 = 0, base_avx2 = 0, reps = 200, warmup = 10;
  std::vector<std::string> ids;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--avx2") {
      avx2 = 1;
    } else if (a == "--base-avx2") {
      base_avx2 = 1;
    } else if ((a == "--reps" || a == "--warmup") && i + 1 < argc) {
      (a == "--reps" ? reps : warmup) = std::atoi(argv[++i]);
    } else {
      ids.push_back(a);
    }
  }
  if (ids.empty() || reps < 1 || warmup < 0) {
    std::fprintf(stderr,
                 "usage: ab_main [--avx2] [--base-avx2] [--reps N] [--warmup N] SHAPE...\n");
    return 2;
  }
  for (const std::string& id : ids) {  // every name first: no half table for a typo
    if (!new_has(id.c_str())) {
      std::fprintf(stderr, "ab: no shape %s (S1-S9, M1, M1v, M2, M2v, M3, M4)\n", id.c_str());
      return 2;
    }
  }
  std::printf("%-5s %10s %10s %9s %9s  %s\n", "shape", "base ms", "new ms", "new/base", "spread",
              "outputs");
  bool all_same = true;
  for (const std::string& id : ids) {
    void* n = new_make(id.c_str(), avx2, nullptr, nullptr, nullptr);
    void* b = base_make(id.c_str(), avx2 | base_avx2, new_in(n), new_out(n), new_indices(n));
    const auto count = static_cast<std::size_t>(new_out_count(n));
    // Each side's outputs from a zeroed buffer, then compared.
    std::vector<float> base_values(count);
    std::vector<std::int64_t> base_indices(new_indices(n) ? count : 0);
    std::memset(new_out(n), 0, count * sizeof(float));
    base_run(b);
    std::memcpy(base_values.data(), new_out(n), count * sizeof(float));
    if (!base_indices.empty())
      std::memcpy(base_indices.data(), new_indices(n), count * sizeof(std::int64_t));
    std::memset(new_out(n), 0, count * sizeof(float));
    new_run(n);
    const bool same = std::memcmp(base_values.data(), new_out(n), count * sizeof(float)) == 0 &&
                      (base_indices.empty() || std::memcmp(base_indices.data(), new_indices(n),
                                                           count * sizeof(std::int64_t)) == 0);
    all_same = all_same && same;

    for (int w = 0; w < warmup; ++w) base_run(b), new_run(n);
    std::vector<double> tb, tn, ratio;
    for (int r = 0; r < reps; ++r) {
      double x, y;
      if (r % 2 == 0) {
        x = time_ms(base_run, b);
        y = time_ms(new_run, n);
      } else {
        y = time_ms(new_run, n);
        x = time_ms(base_run, b);
      }
      tb.push_back(x), tn.push_back(y), ratio.push_back(y / x);
    }
    // The spread: the middle half of the pairs' ratios (quartiles), as "q1-q3".
    std::vector<double> sorted = ratio;
    std::sort(sorted.begin(), sorted.end());
    char spread[32];
    std::snprintf(spread, sizeof spread, "%.2f-%.2f", sorted[sorted.size() / 4],
                  sorted[sorted.size() * 3 / 4]);
    std::printf("%-5s %10.4f %10.4f %9.3f %9s  %s\n", id.c_str(), median(tb), median(tn),
                median(ratio), spread, same ? "same bits" : "DIFFERENT");
    base_free(b);
    new_free(n);
  }
  return all_same ? 0 : 1;
}
