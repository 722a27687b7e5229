// PyTorch (Debian's libtorch-dev, 1.13) on the benchmark shapes, the third peer, built
// into irrun_bench when CMake finds Torch. A translation unit of its own: ATen's headers take
// seconds to compile and bring their own warnings.
//
//   torch_nchw/<S>/threads:<t>  the op (avg_pool2d/3d, adaptive_avg_pool2d,
//                               max_pool2d_with_indices, adaptive_max_pool2d: PyTorch's max pools
//                               always write indices) on contiguous NCHW tensors, into
//                               preallocated outputs (the `_out` forms)
//   torch_cl/<S>/threads:<t>    the same on channels-last tensors (PyTorch's vectorised
//                               kernels), including the copies into and out of that layout
//   torch_mean/<S>/threads:<t>  at::mean over H and W, for windows or bins that cover the plane
//
// Each row's label carries the share of PyTorch's outputs more than one ulp from irrun's
// reference kernel (itself within one ulp of the exact average): PyTorch 1.13 sums f32 windows
// in f32, so averages near zero (inputs that cancel) lose most of their bits. A row whose values
// are wrong is skipped with an error. Threads: at::set_num_threads (OpenMP). The ISA cap is
// ATEN_CPU_CAPABILITY.
#include "torch_peer.hpp"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "accuracy.hpp"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wunused-parameter"
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#pragma GCC diagnostic pop

namespace {

enum class Variant { nchw, channels_last, mean };

const char* name(Variant v) {
  return v == Variant::nchw ? "nchw" : v == Variant::channels_last ? "cl" : "mean";
}

// Windows (or bins) that cover the whole plane: the op is a mean over H and W.
bool global(const Shape& s) {
  if (s.max) return false;
  if (s.adaptive)
    return std::all_of(s.out_size.begin(), s.out_size.end(), [](i64 o) { return o == 1; });
  for (std::size_t a = 0; a < s.kernel.size(); ++a)
    if (s.kernel[a] != s.in[a + 2] || s.pads_begin[a] != 0 || s.pads_end[a] != 0) return false;
  return true;
}

// PyTorch takes one pad per axis: every shape's pads are symmetric.
std::vector<i64> pads(const Shape& s) {
  return s.pads_begin;
}

// The op, from x into out (and indices where the op writes them).
void run(const Shape& s, Variant v, const at::Tensor& x, at::Tensor& out, at::Tensor& idx) {
  if (v == Variant::mean) {
    std::vector<i64> dims;
    for (std::size_t a = 2; a < s.in.size(); ++a) dims.push_back(static_cast<i64>(a));
    at::mean_out(out, x, dims, /*keepdim=*/true);
  } else if (s.adaptive) {
    if (s.max)
      at::adaptive_max_pool2d_out(out, idx, x, s.out_size);
    else
      at::adaptive_avg_pool2d_out(out, x, s.out_size);
  } else if (s.max && s.in.size() == 5) {
    at::max_pool3d_with_indices_out(out, idx, x, s.kernel, s.stride, pads(s), {1, 1, 1}, s.ceil);
  } else if (s.max) {
    at::max_pool2d_with_indices_out(out, idx, x, s.kernel, s.stride, pads(s), {1, 1}, s.ceil);
  } else if (s.in.size() == 5) {
    at::avg_pool3d_out(out, x, s.kernel, s.stride, pads(s), s.ceil, !s.exclude_pad);
  } else {
    at::avg_pool2d_out(out, x, s.kernel, s.stride, pads(s), s.ceil, !s.exclude_pad);
  }
}

void bm_torch(benchmark::State& state, const Shape& s, int threads, Variant v) {
  at::set_num_threads(threads);
  const auto dims = out_dims(s);
  const irrun::Tensor in = bench_input(s);
  const irrun::Tensor ref = reference_output(s, in);

  const auto f32 = at::TensorOptions().dtype(at::kFloat);
  const at::Tensor x = at::from_blob(const_cast<std::byte*>(in.buffer.data()), s.in, f32);
  const auto layout =
      s.in.size() == 5 ? at::MemoryFormat::ChannelsLast3d : at::MemoryFormat::ChannelsLast;
  // Max pooling writes i64 indices whether or not irrun's row does (M1v): PyTorch's kernels
  // have no values-only form.
  // The plain output in an irrun buffer, as the input (huge pages from 2 MiB, as irrun's rows).
  irrun::Buffer y_buffer = irrun::Buffer::allocate(4 * static_cast<std::size_t>(count(dims)));
  at::Tensor y = at::from_blob(y_buffer.mutable_data(), dims, f32),
             idx = at::empty(dims, f32.dtype(at::kLong));
  at::Tensor xc, yc, ic;
  if (v == Variant::channels_last) {
    xc = at::empty(s.in, f32.memory_format(layout));
    yc = at::empty(dims, f32.memory_format(layout));
    ic = at::empty(dims, f32.dtype(at::kLong).memory_format(layout));
  }
  const auto once = [&] {
    if (v == Variant::channels_last) {
      xc.copy_(x);
      run(s, v, xc, yc, ic);
      y.copy_(yc);
    } else {
      run(s, v, x, y, idx);
    }
  };
  once();
  if (y.sizes() != at::IntArrayRef(dims) || !y.is_contiguous() ||
      (v == Variant::channels_last && !yc.is_contiguous(layout))) {
    state.SkipWithError("PyTorch's output is not the expected shape or layout");
    return;
  }
  // A wrong layout shows as values far from the average: PyTorch 1.13's avg_pool3d_out wrote
  // NCDHW order into a channels-last output.
  if (!report_accuracy(
          state,
          std::string("pytorch ") + name(v) + (s.max && !has_indices(s) ? " (+ indices)" : ""),
          y.data_ptr<float>(), ref))
    return;
  for (auto _ : state) {
    once();
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] = benchmark::Counter(4.0 * static_cast<double>(count(s.in) + count(dims)),
                                              benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

void register_torch_benchmarks(const char* capability) {
  // Read by ATen at its first dispatch (default, avx2, avx512).
  if (capability != nullptr) setenv("ATEN_CPU_CAPABILITY", capability, 1);
  for (const auto& s : shapes()) {
    for (int t : {1, 2}) {
      const std::string suffix = std::string(s.id) + "/threads:" + std::to_string(t);
      for (Variant v : {Variant::nchw, Variant::channels_last, Variant::mean}) {
        if (v == Variant::mean && !global(s)) continue;
        // PyTorch 1.13 has no channels-last avg_pool3d (its output comes back NCDHW).
        if (v == Variant::channels_last && s.in.size() == 5) continue;
        benchmark::RegisterBenchmark(("torch_" + std::string(name(v)) + "/" + suffix).c_str(),
                                     bm_torch, s, t, v)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
      }
    }
  }
}
