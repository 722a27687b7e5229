// Peak memory of `irrun run` and `irrun bench` (the performance issue's budget): a run's peak RSS
// stays within its inputs + outputs + 64 MiB, so blobs are never copied needlessly. The model is
// 96 MiB in and 96 MiB out, so one extra copy of either (+96 MiB) breaks the budget, and the
// lower bound (in + out) shows that the measurement sees the tensors at all.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"
#include "support/ir_text.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define IRRUN_TEST_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define IRRUN_TEST_ASAN 1
#endif

namespace {

using irrun::testing::run_program;
using irrun::testing::RunResult;
using irrun::testing::ScratchDir;

constexpr std::int64_t kChannels = 24, kSide = 1024;  // f32 [1,24,1024,1024]: 96 MiB
constexpr long kTensorKiB = kChannels * kSide * kSide * 4 / 1024;

// x -> AvgPool with `data` (same shape) -> Result, written to dir/file.
std::string avg_model(const ScratchDir& dir, const std::string& file,
                      const std::vector<std::int64_t>& dims, const std::string& type,
                      const std::string& data) {
  using namespace irrun::testing;
  std::string shape;
  for (auto d : dims) {
    if (!shape.empty()) shape += ',';
    shape += std::to_string(d);
  }
  const std::string precision = type == "f32" ? "FP32" : type == "f16" ? "FP16" : "BF16";
  return dir.write(file,
                   net(parameter(0, "x", shape, dims, type, precision, "x") +
                           avg_pool(1, "pool", "opset1", data, dims, dims) + result(2, "r", dims),
                       edge(0, 0, 1, 0) + edge(1, 1, 2, 0)));
}

// AvgPool k3 s1 p1 over [1,24,1024,1024], in f32 or (element type "bf16") bf16.
std::string model(const ScratchDir& dir, const std::string& type = "f32") {
  return avg_model(dir, type + ".xml", {1, kChannels, kSide, kSide}, type,
                   "kernel=\"3,3\" strides=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\" "
                   "exclude-pad=\"false\" rounding_type=\"floor\"");
}

// AvgPool k3 s1 p1 exclude-pad over one long 1-D sequence of 96 MiB: f32 [1,1,24Mi] or f16
// [1,1,48Mi]. The kernels' per-row tables (16-45 bytes an output) took it past the budget until
// avg_pool ran such axes in bands.
std::string long_model(const ScratchDir& dir, const std::string& type) {
  return avg_model(dir, "long_" + type + ".xml",
                   {1, 1, kTensorKiB * 1024 / (type == "f32" ? 4 : 2)}, type,
                   "kernel=\"3\" strides=\"1\" pads_begin=\"1\" pads_end=\"1\" "
                   "exclude-pad=\"true\" rounding_type=\"floor\"");
}

// Wide rows under 3 x 3 windows (k3 s1 p1): f32 [1,1,3,8Mi] or f16 [1,1,3,16Mi], 96 MiB. Their
// per-column tables and V rows took the f32 run to 3.4 GB (inputs + outputs + 2.8 GB) until
// avg_pool and max_pool ran them in tiles.
std::vector<std::int64_t> wide_dims(const std::string& type) {
  return {1, 1, 3, kTensorKiB * 1024 / 3 / (type == "f32" ? 4 : 2)};
}
std::string wide_model(const ScratchDir& dir, const std::string& type) {
  return avg_model(dir, "wide_" + type + ".xml", wide_dims(type), type,
                   "kernel=\"3,3\" strides=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\" "
                   "exclude-pad=\"true\" rounding_type=\"floor\"");
}

// x -> MaxPool-8 k3 s1 p1 with i64 indices -> two Results, over f32 `dims` of 96 MiB: 96 MiB in,
// 96 MiB of values, 192 MiB of indices.
std::string max_model(const ScratchDir& dir, const std::string& file,
                      const std::vector<std::int64_t>& dims) {
  using namespace irrun::testing;
  std::string shape, ones, kernel;
  for (std::size_t a = 0; a < dims.size(); ++a) {
    if (a) shape += ',';
    shape += std::to_string(dims[a]);
    if (a < 2) continue;
    ones += a > 2 ? ",1" : "1";
    kernel += a > 2 ? ",3" : "3";
  }
  return dir.write(
      file, net(parameter(0, "x", shape, dims, "f32", "FP32", "x") +
                    layer(1, "pool", "MaxPool", "opset8",
                          "kernel=\"" + kernel + "\" strides=\"" + ones + "\" dilations=\"" + ones +
                              "\" pads_begin=\"" + ones + "\" pads_end=\"" + ones +
                              "\" rounding_type=\"floor\" index_element_type=\"i64\" axis=\"0\"",
                          port(0, dims), port(1, dims, "FP32", "v") + port(2, dims, "I64", "i")) +
                    result(2, "rv", dims) + result(3, "ri", dims, "I64"),
                edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(1, 2, 3, 0)));
}

// Runs irrun with `args` and returns the result with the run's peak RSS (KiB) as its stdout.
// wait4's ru_maxrss for a child of this process would not do: it includes the child's copy of
// this process from before exec, tens to hundreds of MiB once other tests have run. So irrun is
// started by a small python3 (already needed by the tests: make_cases.py --check), and its
// RUSAGE_CHILDREN gives irrun's own peak. irrun's stdout is dropped, its stderr kept.
RunResult run_measured(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"python3", "-c",
                                   "import resource, subprocess, sys\n"
                                   "r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)\n"
                                   "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
                                   "sys.exit(r.returncode)\n",
                                   IRRUN_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_program("/usr/bin/env", argv);
}

// `tensors`: how many 96 MiB tensors the run holds (input, output, and a golden output; a bf16
// one counts a half).
void check_budget(const RunResult& r, double tensors = 2) {
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  const long peak_kib = std::stol(r.out);
  const auto floor_kib = static_cast<long>(tensors * kTensorKiB);
  const long budget_kib = floor_kib + 64 * 1024;
  INFO("peak RSS " << peak_kib / 1024 << " MiB; tensors " << floor_kib / 1024 << " MiB, budget "
                   << budget_kib / 1024 << " MiB");
#ifdef IRRUN_TEST_ASAN
  WARN("AddressSanitizer build: its shadow memory and quarantine inflate RSS, budget not checked");
#else
  CHECK(peak_kib >= floor_kib);
  CHECK(peak_kib <= budget_kib);
#endif
}

}  // namespace

TEST_CASE("run and bench peak within inputs + outputs + 64 MiB", "[cli][run][bench][memory]") {
  ScratchDir dir;
  const auto xml = model(dir);

  SECTION("raw .bin input, .npy output") {
    std::string bytes(static_cast<std::size_t>(kTensorKiB) * 1024, '\0');
    for (std::size_t i = 0; i < bytes.size(); i += 4) bytes[i + 2] = static_cast<char>(i >> 10);
    const auto input = dir.write("x.bin", bytes);
    bytes = std::string();  // not needed while irrun runs
    check_budget(
        run_measured({xml, "--input", input, "--threads", "2", "--output-dir", dir.file("out")}));
  }
  SECTION("random input, .npy output, then --expect against it (the golden is a third tensor)") {
    check_budget(
        run_measured({xml, "--random-input", "--seed", "7", "--output-dir", dir.file("g")}));
    check_budget(run_measured({xml, "--expect", dir.file("g")}), 3);
  }
  SECTION("bf16: random input, .npy output (widened to f32 on the way out), --expect on it") {
    const auto bf16 = model(dir, "bf16");
    check_budget(
        run_measured({bf16, "--random-input", "--seed", "7", "--output-dir", dir.file("b")}), 1);
    check_budget(run_measured({bf16, "--expect", dir.file("b")}), 2);
  }
  SECTION("a long 1-D sequence and wide rows, f32 and f16, fast and reference kernels") {
    for (const char* type : {"f32", "f16"}) {
      for (const auto& xml_of : {long_model, wide_model}) {
        const auto long_xml = xml_of(dir, type);
        for (const char* kernels : {"best", "reference"}) {
          INFO(long_xml << " --kernels " << kernels);
          check_budget(
              run_measured({long_xml, "--random-input", "--threads", "2", "--kernels", kernels}));
        }
      }
    }
  }
  SECTION("a long 1-D sequence and wide rows through MaxPool with i64 indices") {
    const std::vector<std::int64_t> dims{1, 1, kTensorKiB * 1024 / 4};
    for (const auto& [file, shape] :
         {std::pair{"long_max.xml", dims}, {"wide_max.xml", wide_dims("f32")}}) {
      INFO(file);
      check_budget(run_measured({max_model(dir, file, shape), "--random-input", "--threads", "2"}),
                   4);
    }
  }
  SECTION("bench, random inputs") {
    check_budget(run_measured({"bench", xml, "--repeat", "3", "--warmup", "1", "--threads", "2"}));
  }
}
