// A peer's outputs against irrun's reference kernel (itself within one ulp of the exact average),
// shared by the peers' rows of irrun_bench (bench.cpp, torch_peer.cpp). In an unnamed namespace
// like shapes.hpp, whose Shape it takes.
#pragma once
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>

#include "irrun/blob.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "irrun/kernels/max_pool.hpp"
#include "irrun/parallel.hpp"
#include "shapes.hpp"

namespace {

// The benchmark's input of a shape: random f32 in [-1, 1), the same for every row.
inline irrun::Tensor bench_input(const Shape& s) {
  return irrun::random_tensor(irrun::ElementType::f32, s.in, 1);
}

// irrun's reference kernel on the benchmark's input: the values a peer is compared with.
inline irrun::Tensor reference_output(const Shape& s, const irrun::Tensor& in) {
  const auto g = *infer(s).geometry;
  irrun::Tensor ref = irrun::Tensor::zeros(irrun::ElementType::f32, out_dims(s));
  irrun::Tensor idx = irrun::Tensor::zeros(irrun::ElementType::i64, out_dims(s));
  const irrun::Parallel par(2);
  if (s.max)
    irrun::kernels::max_pool_reference(in, ref, &idx, g, par);
  else
    irrun::kernels::avg_pool_reference(in, ref, g, par);
  return ref;
}

// Ordered distance of two finite floats in ulps.
inline std::int64_t ulps(float a, float b) {
  const auto key = [](float f) {
    std::int32_t i;
    std::memcpy(&i, &f, sizeof i);
    return i < 0 ? std::int64_t{INT32_MIN} - i : std::int64_t{i};
  };
  const std::int64_t d = key(a) - key(b);
  return d < 0 ? -d : d;
}

// Compares the peer's n outputs with the reference's. A value 1e-5 or more off (a wrong layout
// or op: f32 sums of these windows stay well within that) skips the row with an error and returns
// false; else the row's label gets `what` and the share of outputs more than one ulp from the
// reference's, and the counter over_1ulp_pct that share.
inline bool report_accuracy(benchmark::State& state, const std::string& what, const float* peer,
                            const irrun::Tensor& ref) {
  const auto* r = reinterpret_cast<const float*>(ref.buffer.data());
  const auto n = static_cast<std::int64_t>(ref.buffer.size() / sizeof(float));
  std::int64_t over = 0;
  for (std::int64_t k = 0; k < n; ++k) {
    if (!(std::fabs(peer[k] - r[k]) < 1e-5f)) {
      state.SkipWithError((what + ": output " + std::to_string(k) + " is " +
                           std::to_string(peer[k]) + ", irrun's reference " + std::to_string(r[k]))
                              .c_str());
      return false;
    }
    over += ulps(peer[k], r[k]) > 1;
  }
  const double share = 100.0 * static_cast<double>(over) / static_cast<double>(n);
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.2f%%", share);
  state.SetLabel(what + ", " + pct + " of outputs over 1 ulp from irrun's");
  state.counters["over_1ulp_pct"] = share;
  return true;
}

}  // namespace
