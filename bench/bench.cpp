// irrun's benchmark suite (Google Benchmark).
//
//   irrun/<S>/threads:<t>          irrun's kernel (avg_pool / max_pool dispatch: the fast f32
//                                  kernels; the M shapes write the op's i64 indices output
//                                  when it has one)
//   dnnl_plain/<S>/threads:<t>     oneDNN pooling_forward on plain NCHW (abcd/abcde) in and out
//                                  (forward inference: pooling_max writes no indices, so the M
//                                  rows with indices are labelled "values only")
//   dnnl_blocked/<S>/threads:<t>   oneDNN on nChw8c/nCdhw8c, including the reorders in and out
//                                  (the label of an exact op gives the share of its outputs over
//                                  one ulp from irrun's reference: accuracy.hpp)
//   dnnl_blocked16/<S>/threads:<t> the same on nChw16c/nCdhw16c, only on an AVX-512 CPU with no
//                                  --irrun_isa cap: there 8c runs oneDNN's jit:avx2 kernel and
//                                  16c its jit:avx512_core one
//   torch_<variant>/<S>/threads:<t> PyTorch, when built with it (torch_peer.cpp)
//   mem_read/<MiB>, mem_copy/<MiB> bandwidth probes: L3-resident and DRAM-sized buffers
//   widen_sum/<MiB>/<bits>         each float of a buffer widened to double and added, in
//                                  512- or 256-bit vectors: the least work of a kernel that sums
//                                  its inputs in double
//   check_1MB_ir                   `irrun check` (check_file) on a generated ~1 MB network IR
//   dispatch/<us>                  one Parallel::for_range call on 2 threads whose bodies spin
//                                  <us> microseconds per thread: the time above <us> is the
//                                  pool's dispatch and wait
//
// Every benchmark reports "GB/s" (bytes read + written per second) and runs hot-cache: the
// same input again and again. `--irrun_write_models=DIR` writes the S1-S9 and M1-M4 (M1v and M2v
// too) IRs (for `irrun bench`) and exits; `--irrun_write_peer_ops=FILE` writes the peers' op of
// each shape as JSON (for bench/ort/ort_bench.js) and exits. `--irrun_isa=avx2` caps irrun's fast
// kernels, oneDNN (dnnl::set_max_cpu_isa) and PyTorch (ATEN_CPU_CAPABILITY) at AVX2+FMA: the
// issue's Zen 3 machine has no AVX-512. `--irrun_no_torch` leaves PyTorch's rows out.
//
// `--irrun_model=FILE.xml` (repeatable, or comma-separated) replaces all of the above with the
// irrun and dnnl_* rows of every pooling layer of that IR whose input shape is static, named
// L<layer id> (F<k>L<id> with several files), the layer's name, op and shapes in the labels:
// always f32 (as OpenVINO's CPU plugin runs an f16 or bf16 pool), MaxPool-8/14 as MaxPool-1
// (values only), no oneDNN rows for adaptive or 1-D pools. Layers left out (dynamic input
// shape, dilations, no geometry) are named on stderr.
#include <benchmark/benchmark.h>

#include <immintrin.h>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "accuracy.hpp"
#include "irrun/analysis.hpp"
#include "irrun/blob.hpp"
#include "irrun/check.hpp"
#include "irrun/dim.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "irrun/kernels/max_pool.hpp"
#include "irrun/model.hpp"
#include "irrun/parallel.hpp"
#include "irrun/pool_geometry.hpp"
#include "shapes.hpp"

#ifdef IRRUN_BENCH_TORCH
#include "torch_peer.hpp"
#endif

#ifdef IRRUN_BENCH_DNNL
#include <omp.h>

#include <dnnl.hpp>
#endif

namespace {

// The ISA irrun's fast kernels may use (--irrun_isa); oneDNN is capped to match.
irrun::kernels::Isa g_isa = irrun::kernels::Isa::best;

// f32 input and values, plus the i64 indices irrun writes when the op has them.
double bytes_moved(const Shape& s) {
  const auto out = static_cast<double>(count(out_dims(s)));
  return 4.0 * (static_cast<double>(count(s.in)) + out) + (has_indices(s) ? 8.0 * out : 0.0);
}

void set_counters(benchmark::State& state, double bytes) {
  state.counters["GB/s"] = benchmark::Counter(bytes, benchmark::Counter::kIsIterationInvariantRate);
}

// The layer of a --irrun_model row, after the row's own label (scripts/bench splits there).
std::string layer_label(const Shape& s) {
  return *s.layer ? std::string("; layer ") + s.layer : "";
}

// ---- irrun

void bm_irrun(benchmark::State& state, const Shape& s, int threads) {
  const auto g = *infer(s).geometry;
  const irrun::Tensor in = bench_input(s);
  irrun::Tensor out = irrun::Tensor::zeros(irrun::ElementType::f32, out_dims(s));
  std::optional<irrun::Tensor> indices;
  if (has_indices(s)) indices = irrun::Tensor::zeros(irrun::ElementType::i64, out_dims(s));
  const irrun::Parallel par(threads);
  using irrun::kernels::Isa;
  irrun::Tensor* idx = indices ? &*indices : nullptr;
  const bool fast = s.max ? irrun::kernels::max_pool_fast_covers(irrun::ElementType::f32, g)
                          : irrun::kernels::avg_pool_fast_covers(irrun::ElementType::f32, g);
  const char* isa = g_isa == Isa::best ? "" : g_isa == Isa::avx2 ? ", avx2" : ", portable";
  state.SetLabel(std::string(fast ? "fast" : "reference") + isa +
                 (!s.max    ? ""
                  : indices ? ", values + i64 indices"
                            : ", values only") +
                 layer_label(s));
  const auto once = [&] {
    // With a forced ISA the fast kernels are called directly (the dispatch always picks the best).
    if (s.max) {
      if (g_isa == Isa::best || !irrun::kernels::max_pool_fast(in, out, idx, g, par, g_isa))
        irrun::kernels::max_pool(in, out, idx, g, par);
    } else if (g_isa == Isa::best || !irrun::kernels::avg_pool_fast(in, out, g, par, g_isa)) {
      irrun::kernels::avg_pool(in, out, g, par);
    }
  };
  once();  // every row runs once before it is timed (see bm_dnnl)
  for (auto _ : state) {
    once();
    benchmark::DoNotOptimize(out.buffer.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, bytes_moved(s));
  // The input's size, for scripts/bench's widening floor.
  state.counters["in_MB"] = 4e-6 * static_cast<double>(count(s.in));
}

#ifdef IRRUN_BENCH_DNNL
// ---- oneDNN

// block: 0 plain NCHW, else nChw<block>c / nCdhw<block>c (8 or 16) with the reorders in and out.
void bm_dnnl(benchmark::State& state, const Shape& s, int threads, int block) {
  using namespace dnnl;
  omp_set_num_threads(threads);
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  const bool three_d = s.in.size() == 5;
  memory::dims src_dims(s.in.begin(), s.in.end());
  memory::dims dst_dims{s.in[0], s.in[1]};
  for (std::size_t a = 0; a < s.dk.size(); ++a)
    dst_dims.push_back((s.in[a + 2] + s.dpl[a] + s.dpr[a] - s.dk[a]) / s.ds[a] + 1);
  const auto plain = three_d ? memory::format_tag::abcde : memory::format_tag::abcd;
  const bool blocked = block != 0;
  const auto tag = block == 16
                       ? (three_d ? memory::format_tag::nCdhw16c : memory::format_tag::nChw16c)
                       : (three_d ? memory::format_tag::nCdhw8c : memory::format_tag::nChw8c);
  const memory::desc src_plain(src_dims, memory::data_type::f32, plain);
  const memory::desc dst_plain(dst_dims, memory::data_type::f32, plain);
  const memory::desc src_md =
      blocked ? memory::desc(src_dims, memory::data_type::f32, tag) : src_plain;
  const memory::desc dst_md =
      blocked ? memory::desc(dst_dims, memory::data_type::f32, tag) : dst_plain;
  const auto alg = s.max            ? algorithm::pooling_max
                   : s.dnnl_exclude ? algorithm::pooling_avg_exclude_padding
                                    : algorithm::pooling_avg_include_padding;
  std::optional<pooling_forward::primitive_desc> made;
  try {  // a model's layer (--irrun_model) may be one oneDNN does not take
    const pooling_forward::desc desc(
        prop_kind::forward_inference, alg, src_md, dst_md, memory::dims(s.ds.begin(), s.ds.end()),
        memory::dims(s.dk.begin(), s.dk.end()), memory::dims(s.dpl.begin(), s.dpl.end()),
        memory::dims(s.dpr.begin(), s.dpr.end()));
    made.emplace(desc, eng);
  } catch (const dnnl::error& e) {
    state.SkipWithError((std::string("oneDNN refuses the op: ") + e.what()).c_str());
    return;
  }
  const pooling_forward::primitive_desc& pd = *made;
  // Forward inference max pooling has no workspace: oneDNN writes the values only.
  const std::string label = std::string(pd.impl_info_str()) + (s.dnnl_exact ? "" : " (proxy op)") +
                            (has_indices(s) ? " (values only)" : "") + layer_label(s);
  state.SetLabel(label);

  // The plain input and output in irrun's buffers, as irrun's own rows have them (from 2 MiB on
  // huge pages where the system offers them); the blocked ones in oneDNN's.
  const irrun::Tensor in = bench_input(s);
  irrun::Buffer out = irrun::Buffer::allocate(dst_plain.get_size());
  memory src_user(src_plain, eng, const_cast<std::byte*>(in.buffer.data()));
  memory dst_user(dst_plain, eng, out.mutable_data());
  memory src(src_md, eng), dst(dst_md, eng);
  pooling_forward pool(pd);
  std::optional<reorder> to_blocked, to_plain;
  if (blocked) {
    to_blocked.emplace(src_user, src);
    to_plain.emplace(dst, dst_user);
  }
  const auto once = [&] {
    if (blocked) {
      to_blocked->execute(strm, src_user, src);
      pool.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_DST, dst}});
      to_plain->execute(strm, dst, dst_user);
    } else {
      pool.execute(strm, {{DNNL_ARG_SRC, src_user}, {DNNL_ARG_DST, dst_user}});
    }
    strm.wait();
  };
  // One run before the timed ones, as every row of this suite: it touches the freshly allocated
  // buffers (192 MB for S9's blocked row, its first touch 85 ms) and checks the op's values
  // against irrun's reference (not for a proxy op, which computes another one). Without it,
  // rows of few iterations took that first touch into their time (round 40: oneDNN's S9
  // blocked 113 ms instead of 27, S8 1.42 instead of 1.06).
  once();
  if (s.dnnl_exact &&
      !report_accuracy(state, label, static_cast<const float*>(dst_user.get_data_handle()),
                       reference_output(s, in)))
    return;
  for (auto _ : state) {
    once();
    benchmark::ClobberMemory();
  }
  set_counters(state, 4.0 * static_cast<double>(count(s.in) + count(dst_dims)));
}
#endif

// ---- memory bandwidth probe

// The probe reads with the widest vector loads the CPU has, into four independent accumulators:
// the compiler's loop (16-byte loads) measured itself, not the memory (64 GB/s from L3 on the
// EPYC VM, where 64-byte loads reach about 105 GB/s).
__attribute__((target("avx512f"))) std::uint64_t read_avx512(const std::uint64_t* p,
                                                             std::size_t n) {
  __m512i a = _mm512_setzero_si512(), b = a, c = a, d = a;
  for (std::size_t i = 0; i + 32 <= n; i += 32) {
    a = _mm512_or_si512(a, _mm512_loadu_si512(p + i));
    b = _mm512_or_si512(b, _mm512_loadu_si512(p + i + 8));
    c = _mm512_or_si512(c, _mm512_loadu_si512(p + i + 16));
    d = _mm512_or_si512(d, _mm512_loadu_si512(p + i + 24));
  }
  std::uint64_t lanes[8];  // (not _mm512_reduce_or_epi64: GCC 12 warns inside it)
  _mm512_storeu_si512(lanes, _mm512_or_si512(_mm512_or_si512(a, b), _mm512_or_si512(c, d)));
  return lanes[0] | lanes[1] | lanes[2] | lanes[3] | lanes[4] | lanes[5] | lanes[6] | lanes[7];
}

__attribute__((target("avx2"))) std::uint64_t read_avx2(const std::uint64_t* p, std::size_t n) {
  __m256i a = _mm256_setzero_si256(), b = a, c = a, d = a;
  for (std::size_t i = 0; i + 16 <= n; i += 16) {
    a = _mm256_or_si256(a, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i)));
    b = _mm256_or_si256(b, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 4)));
    c = _mm256_or_si256(c, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 8)));
    d = _mm256_or_si256(d, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + i + 12)));
  }
  const __m256i x = _mm256_or_si256(_mm256_or_si256(a, b), _mm256_or_si256(c, d));
  std::uint64_t lanes[4];
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes), x);
  return lanes[0] | lanes[1] | lanes[2] | lanes[3];
}

std::uint64_t read_scalar(const std::uint64_t* p, std::size_t n) {
  std::uint64_t a = 0, b = 0, c = 0, d = 0;
  for (std::size_t i = 0; i + 4 <= n; i += 4)
    a |= p[i], b |= p[i + 1], c |= p[i + 2], d |= p[i + 3];
  return a | b | c | d;
}

void bm_mem_read(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0)) << 20;
  std::vector<std::uint64_t> buf(bytes / 8, 1);
  const bool avx512 = __builtin_cpu_supports("avx512f"), avx2 = __builtin_cpu_supports("avx2");
  const auto read = avx512 ? read_avx512 : avx2 ? read_avx2 : read_scalar;
  for (auto _ : state) {
    benchmark::ClobberMemory();
    benchmark::DoNotOptimize(read(buf.data(), buf.size()));
  }
  state.SetLabel(avx512 ? "64-byte loads" : avx2 ? "32-byte loads" : "8-byte loads");
  set_counters(state, static_cast<double>(bytes));
}

void bm_mem_copy(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0)) << 20;
  std::vector<char> a(bytes / 2, 1), b(bytes / 2, 2);
  for (auto _ : state) {
    std::memcpy(b.data(), a.data(), a.size());
    benchmark::ClobberMemory();
  }
  set_counters(state, static_cast<double>(bytes));  // half read, half written
}

// ---- the widening probe: every float converted to double and added, as the fast kernels do
// (add_fma: the addition issued as an FMA), eight independent accumulators, in 512-bit vectors
// (the AVX-512 path's vcvtps2pd zmm) or 256-bit ones (the AVX2 path's). No kernel that sums its
// inputs in double reads them faster on one core. The two widths differ by CPU: Zen 4, which
// splits 512-bit operations in two, converts about four floats a cycle in 512-bit vectors and
// more than five in 256-bit ones.

// GCC 12's _mm512_cvtps_pd starts from _mm512_undefined_pd(), which -Wmaybe-uninitialized reports
// (as lib/src/kernels/simd.hpp explains).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
__attribute__((target("avx512f"))) double widen_avx512(const float* p, std::size_t n) {
  __m512d a[8];
  for (auto& v : a) v = _mm512_setzero_pd();
  const __m512d one = _mm512_set1_pd(1.0);
  for (std::size_t i = 0; i + 64 <= n; i += 64)
    for (int j = 0; j < 8; ++j)
      a[j] = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_loadu_ps(p + i + 8 * j)), one, a[j]);
  for (int j = 1; j < 8; ++j) a[0] = _mm512_add_pd(a[0], a[j]);
  double lanes[8];
  _mm512_storeu_pd(lanes, a[0]);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

__attribute__((target("avx2,fma"))) double widen_avx2(const float* p, std::size_t n) {
  __m256d a[8];
  for (auto& v : a) v = _mm256_setzero_pd();
  const __m256d one = _mm256_set1_pd(1.0);
  for (std::size_t i = 0; i + 32 <= n; i += 32)
    for (int j = 0; j < 8; ++j)
      a[j] = _mm256_fmadd_pd(_mm256_cvtps_pd(_mm_loadu_ps(p + i + 4 * j)), one, a[j]);
  for (int j = 1; j < 8; ++j) a[0] = _mm256_add_pd(a[0], a[j]);
  double lanes[4];
  _mm256_storeu_pd(lanes, a[0]);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

void bm_widen_sum(benchmark::State& state) {
  const auto bytes = static_cast<std::size_t>(state.range(0)) << 20;
  const bool wide = state.range(1) == 512;
  using irrun::kernels::Isa;
  const bool avx512 = g_isa == Isa::best && __builtin_cpu_supports("avx512f");
  const bool avx2 =
      g_isa != Isa::portable && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (wide ? !avx512 : !avx2) {
    state.SkipWithError(wide ? "no AVX-512 (or capped)" : "no AVX2+FMA (or capped)");
    return;
  }
  std::vector<float> buf(bytes / 4);
  for (std::size_t i = 0; i < buf.size(); ++i) buf[i] = static_cast<float>(i % 1000) - 500.0f;
  const auto widen = wide ? widen_avx512 : widen_avx2;
  for (auto _ : state) {
    benchmark::ClobberMemory();
    benchmark::DoNotOptimize(widen(buf.data(), buf.size()));
  }
  state.SetLabel(wide ? "vcvtps2pd zmm" : "vcvtps2pd ymm");
  set_counters(state, static_cast<double>(bytes));
}

// ---- `irrun check` on a ~1 MB network IR: a chain of opaque layers with a pool every 4th.

void port(std::ostringstream& x, int id, const char* prec, const std::vector<i64>& dims) {
  x << "\t\t\t\t<port id=\"" << id << "\" precision=\"" << prec << "\">\n";
  for (auto d : dims) x << "\t\t\t\t\t<dim>" << d << "</dim>\n";
  x << "\t\t\t\t</port>\n";
}

std::string network_ir(int layers) {
  std::ostringstream x;
  const std::vector<i64> dims{1, 64, 56, 56};
  x << "<?xml version=\"1.0\"?>\n<net name=\"synthetic\" version=\"11\">\n\t<layers>\n";
  x << "\t\t<layer id=\"0\" name=\"input\" type=\"Parameter\" version=\"opset1\">\n"
    << "\t\t\t<data shape=\"1,64,56,56\" element_type=\"f32\" />\n\t\t\t<output>\n";
  port(x, 0, "FP32", dims);
  x << "\t\t\t</output>\n\t\t</layer>\n";
  const char* opaque[] = {"Relu", "Sigmoid", "Clamp"};
  for (int i = 1; i <= layers; ++i) {
    const bool pool = i % 4 == 0;
    x << "\t\t<layer id=\"" << i << "\" name=\"layer_" << i << "\" type=\""
      << (pool ? "AvgPool" : opaque[i % 3]) << "\" version=\"opset1\">\n";
    if (pool)
      x << "\t\t\t<data kernel=\"3, 3\" strides=\"1, 1\" pads_begin=\"1, 1\" pads_end=\"1, 1\" "
           "exclude-pad=\"true\" auto_pad=\"explicit\" rounding_type=\"floor\" />\n";
    else if (i % 3 == 2)
      x << "\t\t\t<data min=\"0\" max=\"6\" />\n";
    x << "\t\t\t<input>\n";
    port(x, 0, "FP32", dims);
    x << "\t\t\t</input>\n\t\t\t<output>\n";
    port(x, 1, "FP32", dims);
    x << "\t\t\t</output>\n\t\t</layer>\n";
  }
  x << "\t\t<layer id=\"" << layers + 1
    << "\" name=\"output\" type=\"Result\" version=\"opset1\">\n\t\t\t<input>\n";
  port(x, 0, "FP32", dims);
  x << "\t\t\t</input>\n\t\t</layer>\n\t</layers>\n\t<edges>\n";
  for (int i = 1; i <= layers + 1; ++i)
    x << "\t\t<edge from-layer=\"" << i - 1 << "\" from-port=\"" << (i == 1 ? 0 : 1)
      << "\" to-layer=\"" << i << "\" to-port=\"0\" />\n";
  x << "\t</edges>\n</net>\n";
  return x.str();
}

void bm_check_1mb_ir(benchmark::State& state) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("irrun_bench_net_" + std::to_string(::getpid()) + ".xml");
  std::string xml;
  int layers = 1000;
  while ((xml = network_ir(layers)).size() < (1u << 20)) layers += 250;
  std::ofstream(path) << xml;
  std::size_t checked = 0;
  for (auto _ : state) {
    const auto report = irrun::check_file(path.string(), {});
    if (!report.passed()) state.SkipWithError("the synthetic IR does not pass check");
    checked = report.checked.size();
  }
  std::filesystem::remove(path);
  state.counters["ir_bytes"] = static_cast<double>(xml.size());
  state.counters["layers"] = layers;
  state.counters["checked"] = static_cast<double>(checked);
}

// ---- The thread pool's cost per call: 64 indices, each spinning 1/32 of `us` (2 threads).

void bm_dispatch(benchmark::State& state) {
  const irrun::Parallel par(2);
  const std::chrono::nanoseconds per_index(state.range(0) * 1000 / 32);
  for (auto _ : state) {
    par.for_range(64, [&](std::int64_t b, std::int64_t e) {
      const auto until = std::chrono::steady_clock::now() + (e - b) * per_index;
      while (std::chrono::steady_clock::now() < until) {
      }
    });
  }
  state.SetLabel(std::to_string(state.range(0)) + " us of work per thread");
}

// ---- IR files of S1-S9 and M1-M4 for `irrun bench`

// "1, 2, 3": an IR attribute's list, and a JSON array's items.
std::string join(const std::vector<i64>& v) {
  std::string r;
  for (std::size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
  return r;
}

void write_models(const std::string& dir) {
  std::filesystem::create_directories(dir);
  for (const auto& s : shapes()) {
    std::ostringstream x;
    const auto out = out_dims(s);
    const bool indices = has_indices(s);
    x << "<?xml version=\"1.0\"?>\n<net name=\"" << s.id << "\" version=\"11\">\n\t<layers>\n"
      << "\t\t<layer id=\"0\" name=\"input\" type=\"Parameter\" version=\"opset1\">\n"
      << "\t\t\t<data shape=\"";
    for (std::size_t i = 0; i < s.in.size(); ++i) x << (i ? "," : "") << s.in[i];
    x << "\" element_type=\"f32\" />\n\t\t\t<output>\n";
    port(x, 0, "FP32", s.in);
    x << "\t\t\t</output>\n\t\t</layer>\n";
    int pool_id = 1;
    if (s.adaptive) {
      const auto n = s.out_size.size();
      x << "\t\t<layer id=\"1\" name=\"output_size\" type=\"Const\" version=\"opset1\">\n"
        << "\t\t\t<data element_type=\"i64\" shape=\"" << n << "\" offset=\"0\" size=\"" << 8 * n
        << "\" />\n\t\t\t<output>\n";
      port(x, 0, "I64", {static_cast<i64>(n)});
      x << "\t\t\t</output>\n\t\t</layer>\n";
      pool_id = 2;
      std::ofstream bin(dir + "/" + s.id + ".bin", std::ios::binary);
      bin.write(reinterpret_cast<const char*>(s.out_size.data()),
                static_cast<std::streamsize>(8 * n));
    }
    std::string data;
    auto attr = [&data](const char* name, const std::string& value) {
      data += std::string(" ") + name + "=\"" + value + "\"";
    };
    if (!s.adaptive) {
      attr("kernel", join(s.kernel));
      attr("strides", join(s.stride));
      if (indices) attr("dilations", join(std::vector<i64>(s.kernel.size(), 1)));
      attr("pads_begin", join(s.pads_begin));
      attr("pads_end", join(s.pads_end));
      if (!s.max) attr("exclude-pad", s.exclude_pad ? "true" : "false");
      attr("auto_pad", "explicit");
      attr("rounding_type", s.ceil ? "ceil" : "floor");
    }
    if (indices) attr("index_element_type", "i64");
    if (indices && !s.adaptive) attr("axis", "0");
    const char* type = s.adaptive ? (s.max ? "AdaptiveMaxPool" : "AdaptiveAvgPool")
                                  : (s.max ? "MaxPool" : "AvgPool");
    x << "\t\t<layer id=\"" << pool_id << "\" name=\"pool\" type=\"" << type << "\" version=\"opset"
      << (s.adaptive ? 8 : s.version) << "\">\n";
    if (!data.empty()) x << "\t\t\t<data" << data << " />\n";
    x << "\t\t\t<input>\n";
    port(x, 0, "FP32", s.in);
    if (s.adaptive) port(x, 1, "I64", {static_cast<i64>(s.out_size.size())});
    // Output ports are numbered after the inputs: values, then indices.
    const int values_port = s.adaptive ? 2 : 1;
    x << "\t\t\t</input>\n\t\t\t<output>\n";
    port(x, values_port, "FP32", out);
    if (indices) port(x, values_port + 1, "I64", out);
    x << "\t\t\t</output>\n\t\t</layer>\n";
    const int results = indices ? 2 : 1;
    for (int r = 0; r < results; ++r) {
      x << "\t\t<layer id=\"" << pool_id + 1 + r << "\" name=\"result" << (r ? "_indices" : "")
        << "\" type=\"Result\" version=\"opset1\">\n\t\t\t<input>\n";
      port(x, 0, r ? "I64" : "FP32", out);
      x << "\t\t\t</input>\n\t\t</layer>\n";
    }
    x << "\t</layers>\n\t<edges>\n"
      << "\t\t<edge from-layer=\"0\" from-port=\"0\" to-layer=\"" << pool_id
      << "\" to-port=\"0\" />\n";
    if (s.adaptive)
      x << "\t\t<edge from-layer=\"1\" from-port=\"0\" to-layer=\"2\" to-port=\"1\" />\n";
    for (int r = 0; r < results; ++r)
      x << "\t\t<edge from-layer=\"" << pool_id << "\" from-port=\"" << values_port + r
        << "\" to-layer=\"" << pool_id + 1 + r << "\" to-port=\"0\" />\n";
    x << "\t</edges>\n</net>\n";
    std::ofstream(dir + "/" + s.id + ".xml") << x.str();
  }
}

// The peers' op of every shape as JSON, for bench/ort/ort_bench.js: the same kernel, strides,
// pads and padding mode as the oneDNN rows (so S8's proxy is the same op for both peers), and
// whether irrun's row writes indices too (then ONNX MaxPool writes its Indices output), and
// irrun's output shape (the peer's must be the same).
void write_peer_ops(const std::string& file) {
  auto list = [](const std::vector<i64>& v) {
    std::string r = "[";  // appended, not "[" + join(v): GCC 12 warns -Wrestrict on that
    return r.append(join(v)).append("]");
  };
  std::ostringstream j;
  j << "[\n";
  for (std::size_t k = 0; k < shapes().size(); ++k) {
    const Shape& s = shapes()[k];
    std::vector<i64> pads = s.dpl;
    pads.insert(pads.end(), s.dpr.begin(), s.dpr.end());
    j << "  {\"id\": \"" << s.id << "\", \"in\": " << list(s.in)
      << ", \"out\": " << list(out_dims(s)) << ", \"op\": \"" << (s.max ? "MaxPool" : "AveragePool")
      << "\", \"kernel\": " << list(s.dk) << ", \"strides\": " << list(s.ds)
      << ", \"pads\": " << list(pads)
      << ", \"count_include_pad\": " << (s.max || s.dnnl_exclude ? 0 : 1)
      << ", \"indices\": " << (has_indices(s) ? "true" : "false")
      << ", \"exact\": " << (s.dnnl_exact ? "true" : "false") << "}"
      << (k + 1 < shapes().size() ? "," : "") << "\n";
  }
  j << "]\n";
  std::ofstream(file) << j.str();
}

// The rows of one shape, both thread counts; oneDNN's unless `dnnl` is false.
void register_shape(const Shape& s, [[maybe_unused]] bool dnnl) {
  for (int t : {1, 2}) {
    const std::string suffix = std::string(s.id) + "/threads:" + std::to_string(t);
    benchmark::RegisterBenchmark(("irrun/" + suffix).c_str(), bm_irrun, s, t)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
#ifdef IRRUN_BENCH_DNNL
    if (!dnnl) continue;
    benchmark::RegisterBenchmark(("dnnl_plain/" + suffix).c_str(), bm_dnnl, s, t, 0)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    benchmark::RegisterBenchmark(("dnnl_blocked/" + suffix).c_str(), bm_dnnl, s, t, 8)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
    // On an AVX-512 CPU nChw8c runs oneDNN's jit:avx2 kernel, nChw16c its jit:avx512_core one.
    // Capped (--irrun_isa), oneDNN has no AVX-512 kernel to run.
    if (g_isa == irrun::kernels::Isa::best && __builtin_cpu_supports("avx512f"))
      benchmark::RegisterBenchmark(("dnnl_blocked16/" + suffix).c_str(), bm_dnnl, s, t, 16)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
#endif
  }
}

// ---- --irrun_model: the pooling layers of a network's IR

// Model rows' strings (Shape::id, Shape::layer), alive as long as the rows.
const char* keep(std::string text) {
  static std::deque<std::string> kept;
  return kept.emplace_back(std::move(text)).c_str();
}

std::string dims_text(const std::vector<i64>& d, const char* sep = "x") {
  std::string r;
  for (std::size_t i = 0; i < d.size(); ++i) r += (i ? sep : "") + std::to_string(d[i]);
  return r;
}

// The rows of every pooling layer of `xml` whose input shape is static, as Shapes like the fixed
// ones (so that bm_irrun and bm_dnnl run them unchanged), named <prefix>L<layer id>. Always f32:
// OpenVINO's CPU plugin runs an f16 or bf16 pool in f32 too. A layer left out is named on stderr.
void register_model(const std::string& xml, const std::string& prefix) {
  using irrun::OpKind;
  const irrun::Model m = irrun::load_model(xml);
  const auto a = irrun::analyze(m.ir, m.graph, m.weights ? &*m.weights : nullptr);
  bool any = false;
  for (auto n : m.graph.order) {
    const irrun::NodeInfo& info = a.nodes[n];
    if (!info.op || !irrun::is_pool(info.op->kind)) continue;
    any = true;
    const irrun::Layer& layer = m.ir.layers[n];
    const std::string op = irrun::op_label(*info.op);
    const auto skip = [&](const std::string& why) {
      std::fprintf(stderr, "irrun_bench: %s: layer %llu '%s' (%s) skipped: %s\n", xml.c_str(),
                   static_cast<unsigned long long>(layer.id), layer.name.c_str(), op.c_str(),
                   why.c_str());
    };
    const auto& node = m.graph.nodes[n];
    if (!node.reachable) {
      skip("not reachable from a Result (OpenVINO drops it)");
      continue;
    }
    const irrun::ValueInfo& input = a.nodes[node.inputs[0].node].outputs[node.inputs[0].output];
    if (!input.shape.is_static()) {
      skip("dynamic input shape " + irrun::to_string(input.shape));
      continue;
    }
    if (!info.geometry) {
      skip("shape inference gives no geometry (irrun check names why)");
      continue;
    }
    const irrun::PoolGeometry& g = *info.geometry;
    // AdaptiveAvgPool has no attributes: the defaults then.
    const auto* read = std::get_if<irrun::PoolAttrs>(&info.attrs);
    const irrun::PoolAttrs attrs = read ? *read : irrun::PoolAttrs{};
    const auto axes = [&g](const std::array<i64, 3>& v) {
      return std::vector<i64>(v.begin() + static_cast<std::ptrdiff_t>(3 - g.spatial_rank), v.end());
    };
    Shape s;
    s.in = input.shape.to_static();
    s.adaptive =
        info.op->kind == OpKind::adaptive_avg_pool || info.op->kind == OpKind::adaptive_max_pool;
    s.max = info.op->kind == OpKind::max_pool || info.op->kind == OpKind::adaptive_max_pool;
    // MaxPool-8/14 as MaxPool-1: the values, the op the CPU plugin runs when the indices go unused.
    s.version = s.adaptive ? 8 : s.max ? 1 : info.op->version;
    if (s.adaptive) {
      s.out_size = axes(g.out);
    } else {
      if (axes(g.dilation) != std::vector<i64>(g.spatial_rank, 1)) {
        skip("dilations " + dims_text(axes(g.dilation), ",") + " (the benchmark shapes have none)");
        continue;
      }
      s.kernel = axes(g.kernel);
      s.stride = axes(g.stride);
      s.pads_begin = axes(g.pad_begin);
      s.pads_end = axes(g.pad_end);
      s.exclude_pad = attrs.exclude_pad;
    }
    // The geometry from the explicit pads must be the layer's. Rounding only sets the output
    // size, so ceil_torch is whichever of ceil and floor gives the same one.
    bool same = false;
    for (bool ceil : {attrs.rounding != irrun::RoundingType::floor, false}) {
      s.ceil = ceil;
      std::optional<irrun::PoolGeometry> mine;
      try {
        mine = infer(s).geometry;
      } catch (const irrun::ValidationError&) {
      }
      if (mine) mine->index_axis = g.index_axis;  // no indices when measured as MaxPool-1
      if ((same = mine && *mine == g)) break;
    }
    if (!same) {
      skip("its pads and attributes as a benchmark shape give another geometry");
      continue;
    }
    // oneDNN: the same window; the least right pad that gives irrun's output size, (in + dpl +
    // dpr - dk) / ds + 1. OpenVINO's ceil may need more than pads_end, floor less; 0 where input
    // columns are left over (oneDNN's division floors too).
    bool dnnl = !s.adaptive && (g.spatial_rank == 2 || g.spatial_rank == 3);
    s.dk = s.kernel;
    s.ds = s.stride;
    s.dpl = s.pads_begin;
    const auto out = out_dims(s);
    for (std::size_t i = 0; dnnl && i < s.dk.size(); ++i) {
      const i64 pr =
          std::max<i64>(0, (out[i + 2] - 1) * s.ds[i] + s.dk[i] - s.in[i + 2] - s.dpl[i]);
      const i64 span = s.in[i + 2] + s.dpl[i] + pr - s.dk[i];
      dnnl = span >= 0 && span / s.ds[i] + 1 == out[i + 2];
      s.dpr.push_back(pr);
    }
    // Exact: bm_dnnl checks oneDNN's values against irrun's reference and fails the row if they
    // differ. Without pads OpenVINO divides by the window's in-bounds taps, whatever exclude-pad.
    s.dnnl_exact = true;
    s.dnnl_exclude = !g.pads_in_avg;
    const auto type = irrun::to_string(input.type);
    std::string what = "'" + layer.name + "' " + op;
    if (s.max && !s.adaptive && info.op->version != 1) what += " as MaxPool-1 (values only)";
    what += std::string(", ") + (type == "f32" ? "f32" : std::string(type) + " as f32") + ", " +
            dims_text(s.in) + " -> " + dims_text(out);
    if (!s.adaptive)
      what += ", kernel " + dims_text(s.kernel) + " stride " + dims_text(s.stride) + " pads " +
              dims_text(s.pads_begin, ",") + " / " + dims_text(s.pads_end, ",") +
              (s.max           ? ""
               : s.exclude_pad ? ", exclude-pad"
                               : ", include-pad");
    s.id = keep(prefix + "L" + std::to_string(layer.id));
    s.layer = keep(what);
    register_shape(s, dnnl);
  }
  if (!any) std::fprintf(stderr, "irrun_bench: %s has no pooling layer\n", xml.c_str());
}

void register_all(const std::vector<std::string>& models) {
  if (!models.empty()) {
    // Only the layers' rows: the probes and the fixed shapes' floors do not apply. Layer ids
    // repeat across files: F<k> tells them apart.
    for (std::size_t k = 0; k < models.size(); ++k) {
      std::string prefix;  // appended, not "F" + ...: GCC 12 warns -Wrestrict on that
      if (models.size() > 1) prefix.append("F").append(std::to_string(k + 1));
      register_model(models[k], prefix);
    }
    return;
  }
  for (const auto& s : shapes()) register_shape(s, true);
  benchmark::RegisterBenchmark("mem_read", bm_mem_read)
      ->Arg(8)
      ->Arg(13)  // about S4/S7's input
      ->Arg(25)  // about S3's input and output
      ->Arg(512)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("mem_copy", bm_mem_copy)
      ->Arg(8)
      ->Arg(25)  // about S3's input and output (12.25 MiB each)
      ->Arg(512)
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("widen_sum", bm_widen_sum)
      ->ArgsProduct({{1, 13}, {512, 256}})  // L2-resident; S4/S7's input, L3-resident
      ->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("check_1MB_ir", bm_check_1mb_ir)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("dispatch", bm_dispatch)
      ->Arg(0)
      ->Arg(20)
      ->Arg(80)
      ->Unit(benchmark::kMicrosecond)
      ->UseRealTime();
}

}  // namespace

int main(int argc, char** argv) {
  [[maybe_unused]] bool torch = true;
  std::vector<std::string> models;  // --irrun_model=A.xml,B.xml (repeatable)
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const std::string flag = "--irrun_write_models=";
    if (a.rfind(flag, 0) == 0) {
      write_models(a.substr(flag.size()));
      return 0;
    }
    const std::string ops_flag = "--irrun_write_peer_ops=";
    if (a.rfind(ops_flag, 0) == 0) {
      write_peer_ops(a.substr(ops_flag.size()));
      return 0;
    }
    if (a == "--irrun_isa=avx2" || a == "--irrun_isa=portable") {
      g_isa = a.back() == '2' ? irrun::kernels::Isa::avx2 : irrun::kernels::Isa::portable;
#ifdef IRRUN_BENCH_DNNL
      dnnl::set_max_cpu_isa(g_isa == irrun::kernels::Isa::avx2 ? dnnl::cpu_isa::avx2
                                                               : dnnl::cpu_isa::sse41);
#endif
      argv[i] = argv[argc - 1];  // not Google Benchmark's flag: drop it
      --argc;
      --i;
    } else if (a.rfind("--irrun_model=", 0) == 0) {
      std::stringstream files(a.substr(std::strlen("--irrun_model=")));
      for (std::string f; std::getline(files, f, ',');)
        if (!f.empty()) models.push_back(f);
      argv[i] = argv[argc - 1];
      --argc;
      --i;
    } else if (a == "--irrun_no_torch") {
      torch = false;
      argv[i] = argv[argc - 1];
      --argc;
      --i;
    }
  }
  try {
    register_all(models);
  } catch (const std::exception& e) {  // a model that does not load
    std::fprintf(stderr, "irrun_bench: %s\n", e.what());
    return 2;
  }
#ifdef IRRUN_BENCH_TORCH
  if (torch && models.empty())
    register_torch_benchmarks(g_isa == irrun::kernels::Isa::best   ? nullptr
                              : g_isa == irrun::kernels::Isa::avx2 ? "avx2"
                                                                   : "default");
#endif
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
