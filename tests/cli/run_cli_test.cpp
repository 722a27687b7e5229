// End-to-end tests of `irrun [run] MODEL.xml`: they run the built binary on the samples with
// inputs written here (small iotas, so every expected value can be checked by hand), read the
// output .npy files back with the library's read_npy, and check exit codes, stdout summaries and
// that failed runs write nothing.
#include <signal.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/cli_support.hpp"
#include "irrun/npy.hpp"
#include "support/ir_text.hpp"

namespace {

namespace fs = std::filesystem;
using irrun::ElementType;
using irrun::Tensor;
using irrun::testing::read_text;
using irrun::testing::run_irrun;
using irrun::testing::RunResult;
using irrun::testing::sample;
using irrun::testing::ScratchDir;
using irrun::testing::values_of;
using Shape = std::vector<std::int64_t>;

// Writes the bytes of `values` (little-endian on the test machines) to `name` in `dir`.
template <class T>
std::string write_raw(const ScratchDir& dir, const std::string& name,
                      const std::vector<T>& values) {
  const auto p = dir.file(name);
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(T)));
  return p;
}

// 0, 1, ..., n-1 as f32 in a raw .bin.
std::string iota_bin(const ScratchDir& dir, const std::string& name, std::size_t n) {
  std::vector<float> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<float>(i);
  return write_raw(dir, name, v);
}

// The names of the output files in `dir` (sorted); empty when it does not exist. The
// manifest.json written beside them (which also records the thread count) is covered by
// golden_cli_test.cpp.
std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return names;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().filename() != "manifest.json") names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// samples/avgpool_v11.xml (k3 s2 p1/1 ceil exclude-pad, 8x8 -> 5x5) on iota input
// x = 64c + 8h + w. Per axis the in-bounds taps of output o are {2o-1, 2o, 2o+1} within [0,7]:
// {0,1}, {1,2,3}, {3,4,5}, {5,6,7}, {7}, with means 0.5, 2, 4, 6, 7. Each window is a rectangle,
// so its average is 64c + 8*mean_h + mean_w.
std::vector<double> avgpool_v11_iota_expected() {
  const std::vector<double> channel0 = {
      4.5,  6,  8,  10, 11,  //
      16.5, 18, 20, 22, 23,  //
      32.5, 34, 36, 38, 39,  //
      48.5, 50, 52, 54, 55,  //
      56.5, 58, 60, 62, 63,  //
  };
  std::vector<double> all;
  for (int c = 0; c < 3; ++c)
    for (double v : channel0) all.push_back(v + 64 * c);
  return all;
}

// The stdout of a run of avgpool_v11.xml on iota: min 4.5, max 128 + 63, and the mean is
// 64 (mean over c of 64c) + 9 * 3.9 (8*mean_h + mean_w with the mean of the 5 means 19.5/5).
const std::vector<std::string> kAvgpoolIotaSummary = {
    "output 'pool': f32 [1,3,5,5]  min 4.5  max 191  mean 99.1",
    "  [4.5, 6, 8, 10, 11, 16.5, 18, 20, ...]",
};

// A bf16 model: x bf16 [1,1,1,4] -> AvgPool k(1,2) s(1,2) -> [1,1,1,2], port named "half".
std::string bf16_model(const ScratchDir& dir) {
  using namespace irrun::testing;
  return dir.write(
      "bf16.xml",
      net(parameter(0, "x", "1,1,1,4", {1, 1, 1, 4}, "bf16", "BF16", "x") +
              avg_pool(1, "p", "opset1",
                       "kernel=\"1,2\" strides=\"1,2\" pads_begin=\"0,0\" pads_end=\"0,0\"",
                       {1, 1, 1, 4}, {1, 1, 1, 2}, "BF16", "half") +
              result(2, "r", {1, 1, 1, 2}, "BF16"),
          edge(0, 0, 1, 0) + edge(1, 1, 2, 0)));
}

}  // namespace

TEST_CASE("a v10 sample's <pre-process> mean values are subtracted before the pool", "[cli][run]") {
  // x = 0..47 in [1,3,4,4]; means 104, 117, 123 per channel; 2x2 windows average 2.5 over
  // channel c's first window (16c + {0,1,4,5}).
  ScratchDir dir;
  const auto in = iota_bin(dir, "in.bin", 3 * 4 * 4);
  const auto r = run_irrun({sample("mean_values_v10.xml"), "--input", in});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "[-101.5, -99.5, -93.5, -91.5, -98.5, -96.5, -90.5, -88.5, ...]"));
  const auto info = run_irrun({"info", sample("mean_values_v10.xml")});
  CHECK(has(info.out, "mean values [3,1,1] (<pre-process>) are subtracted from input 'image'"));
}

TEST_CASE("irrun MODEL and irrun run MODEL are the same command", "[cli][run]") {
  ScratchDir dir;
  const auto in = iota_bin(dir, "in.bin", 3 * 8 * 8);
  const auto a = run_irrun({sample("avgpool_v11.xml"), "--input", in, "-o", dir.file("a")});
  const auto b = run_irrun({"run", sample("avgpool_v11.xml"), "--input", in, "-o", dir.file("b")});
  INFO(a.out << a.err);
  CHECK(a.exit_code == 0);
  CHECK(b.exit_code == a.exit_code);
  CHECK(b.out == a.out);
  CHECK(b.err == a.err);
  CHECK(files_in(dir.file("a")) == std::vector<std::string>{"pool.npy"});
  CHECK(read_text(dir.file("b/pool.npy")) == read_text(dir.file("a/pool.npy")));

  // Global options before the model, and the failure path, are the same too.
  const auto c = run_irrun({"-q", sample("two_inputs_v11.xml")});
  const auto d = run_irrun({"-q", "run", sample("two_inputs_v11.xml")});
  CHECK(c.exit_code == 4);
  CHECK(d.exit_code == c.exit_code);
  CHECK(d.err == c.err);

  // Run options may come before the model, with or without global options around them.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--input", in, sample("avgpool_v11.xml")},
        std::vector<std::string>{"-q", "--max-memory", "1G", "--input", in,
                                 sample("avgpool_v11.xml")},
        std::vector<std::string>{"--max-memory=1G", "-o", dir.file("e"), "--input", in,
                                 sample("avgpool_v11.xml")}}) {
    const auto e = run_irrun(args);
    INFO(e.out << e.err);
    CHECK(e.exit_code == 0);
  }
  CHECK(read_text(dir.file("e/pool.npy")) == read_text(dir.file("a/pool.npy")));
}

TEST_CASE("a raw .bin input gives the hand-computed pooling and summary", "[cli][run]") {
  ScratchDir dir;
  const auto in = iota_bin(dir, "in.bin", 3 * 8 * 8);
  const auto out_dir = dir.file("out");
  const auto r = run_irrun({sample("avgpool_v11.xml"), "--input", in, "--output-dir", out_dir});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out_lines() == kAvgpoolIotaSummary);

  const Tensor t = irrun::read_npy(out_dir + "/pool.npy");
  CHECK(t.type == ElementType::f32);
  CHECK(t.shape == Shape{1, 3, 5, 5});
  CHECK(values_of(t) == avgpool_v11_iota_expected());
}

TEST_CASE("an .npy input, by name, and a converted float .npy", "[cli][run]") {
  ScratchDir dir;
  const auto model = sample("avgpool_v11.xml");
  for (auto type : {ElementType::f32, ElementType::f64, ElementType::f16}) {
    CAPTURE(irrun::to_string(type));
    // iota up to 191 is exact in f16 too.
    const auto npy = dir.file("in.npy");
    irrun::write_npy(npy, irrun::testing::iota_tensor(type, {1, 3, 8, 8}));
    const auto out_dir = dir.file(std::string("out_") + std::string(irrun::to_string(type)));
    const auto r = run_irrun({model, "-i", "input=" + npy, "-o", out_dir});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(r.out_lines() == kAvgpoolIotaSummary);
    if (type == ElementType::f32) {
      CHECK(r.err.empty());
    } else {
      // One note on stderr that the input was converted.
      REQUIRE(r.err_lines().size() == 1);
      CHECK(has(r.err, "converted " + std::string(irrun::to_string(type)) + " to f32"));
      CHECK(has(r.err, "'input'"));
    }
    CHECK(values_of(irrun::read_npy(out_dir + "/pool.npy")) == avgpool_v11_iota_expected());
  }
}

TEST_CASE("integer models: i8 rounds to nearest even, i32 truncates; raw and .npy outputs",
          "[cli][run][int]") {
  // samples/avgpool_int_v11.xml. q: i8 [1,2,4,4], AvgPool-1 k2 s2: each output averages a 2x2
  // block (sum/4). w: i32 [1,1,4,4], AvgPool-14 k3 s2 p1/1 include-pad ceil: every window
  // divides by 9; its rows and columns are {0,1}, {1,2,3}, {3}.
  ScratchDir dir;
  const std::vector<std::int8_t> q = {
      1,   2,   -1,   -2,    //
      0,   1,   -2,   -1,    // TL 4/4 = 1, TR -6/4 = -1.5 -> -2 (even)
      127, 127, -128, -128,  //
      127, 126, -128, -127,  // BL 507/4 = 126.75 -> 127, BR -511/4 = -127.75 -> -128
      2,   3,   5,    5,     //
      2,   3,   5,    5,     // TL 10/4 = 2.5 -> 2 (even), TR 20/4 = 5
      -2,  -3,  0,    0,     //
      -2,  -3,  0,    1,     // BL -10/4 = -2.5 -> -2 (even), BR 1/4 -> 0
  };
  const std::vector<std::int32_t> w = {
      -10, 20, 30,   40,  //
      5,   -7, 1,    2,   //
      0,   0,  -100, 9,   //
      3,   3,  3,    3,   //
  };
  // 8/9, 86/9, 42/9 / 4/9, -86/9 -> -9 (not -10), 14/9 / 6/9, 9/9, 3/9.
  const std::vector<double> w_expected = {0, 9, 4, 0, -9, 1, 0, 1, 0};
  const std::vector<double> q_expected = {1, -2, 127, -128, 2, 5, -2, 0};
  const auto model = sample("avgpool_int_v11.xml");
  const auto q_in = write_raw(dir, "q.bin", q);
  const auto w_in = write_raw(dir, "w.bin", w);

  const auto r = run_irrun({model, "-i", "q=" + q_in, "-i", "w=" + w_in, "-o", dir.file("out")});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.empty());
  CHECK(r.out_lines() == std::vector<std::string>{
                             "output 'q_pool': i8 [1,2,2,2]  min -128  max 127  mean 0.375",
                             "  [1, -2, 127, -128, 2, 5, -2, 0]",
                             "output 'w_pool': i32 [1,1,3,3]  min -9  max 9  mean 0.666667",
                             "  [0, 9, 4, 0, -9, 1, 0, 1, ...]",
                         });
  const Tensor qt = irrun::read_npy(dir.file("out") + "/q_pool.npy");
  CHECK(qt.type == ElementType::i8);
  CHECK(qt.shape == Shape{1, 2, 2, 2});
  CHECK(values_of(qt) == q_expected);
  const Tensor wt = irrun::read_npy(dir.file("out") + "/w_pool.npy");
  CHECK(wt.type == ElementType::i32);
  CHECK(values_of(wt) == w_expected);

  // The same through .npy inputs, raw outputs, and a golden of the first run.
  const auto q_npy = dir.file("q.npy");
  Tensor q_tensor = Tensor::zeros(ElementType::i8, {1, 2, 4, 4});
  std::copy(q.begin(), q.end(), q_tensor.mutable_data<std::int8_t>());
  irrun::write_npy(q_npy, q_tensor);
  const auto raw = run_irrun({model, "-i", "q=" + q_npy, "-i", "w=" + w_in, "--output-format",
                              "bin", "-o", dir.file("raw"), "--expect", dir.file("out")});
  INFO(raw.out << raw.err);
  CHECK(raw.exit_code == 0);
  CHECK(read_text(dir.file("raw") + "/q_pool.bin") ==
        std::string("\x01\xfe\x7f\x80\x02\x05\xfe\x00", 8));

  // --layer runs one integer pool alone.
  const auto layer = run_irrun({model, "--layer", "w_pool", "-i", w_in});
  INFO(layer.out << layer.err);
  CHECK(layer.exit_code == 0);
  CHECK(has(layer.out, "output 'w_pool': i32 [1,1,3,3]  min -9  max 9"));
  CHECK(has(layer.out, "[0, 9, 4, 0, -9, 1, 0, 1, ...]"));

  // A float .npy for the i8 input is a one-line error, exit 4, and nothing is written.
  const auto f = dir.file("f.npy");
  irrun::write_npy(f, irrun::testing::iota_tensor(ElementType::f32, {1, 2, 4, 4}));
  const auto bad = run_irrun({model, "-i", "q=" + f, "-i", "w=" + w_in, "-o", dir.file("bad")});
  CHECK(bad.exit_code == 4);
  CHECK(bad.err_lines().size() == 1);
  CHECK(has(bad.err, "dtype f32 does not match input 'q' (i8 [1,2,4,4])"));
  CHECK(files_in(dir.file("bad")).empty());
}

TEST_CASE("--output-dir writes one file per Result, named after its tensor", "[cli][run]") {
  ScratchDir dir;
  // image: f32 [1,3,12,12] iota; mask: f16 [1,1,10,10] iota (0..99, exact in f16).
  const auto image = iota_bin(dir, "image.bin", 3 * 12 * 12);
  std::vector<std::uint16_t> mask(100);
  for (std::size_t i = 0; i < mask.size(); ++i)
    mask[i] = irrun::f16_bits_from_double(static_cast<double>(i));
  const auto mask_bin = write_raw(dir, "mask.bin", mask);
  const auto model = sample("two_inputs_v11.xml");

  const auto out_dir = dir.file("npy");
  const auto r =
      run_irrun({model, "--input", "image=" + image, "--input", "mask=" + mask_bin, "-o", out_dir});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(files_in(out_dir) == std::vector<std::string>{"image_pool.npy", "mask_pool.npy"});

  // image_pool: k2 s2 on x = 144c + 12h + w: 144c + 12*(2i + 0.5) + (2j + 0.5).
  const Tensor image_pool = irrun::read_npy(out_dir + "/image_pool.npy");
  CHECK(image_pool.type == ElementType::f32);
  REQUIRE(image_pool.shape == Shape{1, 3, 6, 6});
  const auto iv = values_of(image_pool);
  CHECK(std::vector<double>(iv.begin(), iv.begin() + 6) ==
        std::vector<double>{6.5, 8.5, 10.5, 12.5, 14.5, 16.5});
  for (int c = 0; c < 3; ++c)
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 6; ++j)
        CHECK(iv[static_cast<std::size_t>((c * 6 + i) * 6 + j)] == 144 * c + 24 * i + 2 * j + 6.5);

  // mask_pool: AvgPool-14 k3 s3 ceil_torch exclude-pad on x = 10h + w: per axis the windows are
  // {0,1,2}, {3,4,5}, {6,7,8} and {9}, with means 1, 4, 7, 9; output 10*mean_h + mean_w.
  const Tensor mask_pool = irrun::read_npy(out_dir + "/mask_pool.npy");
  CHECK(mask_pool.type == ElementType::f16);
  CHECK(mask_pool.shape == Shape{1, 1, 4, 4});
  CHECK(values_of(mask_pool) == std::vector<double>{11, 14, 17, 19,  //
                                                    41, 44, 47, 49,  //
                                                    71, 74, 77, 79,  //
                                                    91, 94, 97, 99});

  // Both summaries on stdout.
  const auto lines = r.out_lines();
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "output 'image_pool': f32 [1,3,6,6]  min 6.5  max 424.5  mean 215.5");
  CHECK(lines[1] == "  [6.5, 8.5, 10.5, 12.5, 14.5, 16.5, 30.5, 32.5, ...]");
  CHECK(lines[2] == "output 'mask_pool': f16 [1,1,4,4]  min 11  max 99  mean 57.75");
  CHECK(lines[3] == "  [11, 14, 17, 19, 41, 44, 47, 49, ...]");

  // --output-format bin: the same data, raw.
  const auto bin_dir = dir.file("bin");
  const auto rb = run_irrun({model, "--input", "image=" + image, "--input", "mask=" + mask_bin,
                             "-o", bin_dir, "--output-format", "bin"});
  REQUIRE(rb.exit_code == 0);
  CHECK(files_in(bin_dir) == std::vector<std::string>{"image_pool.bin", "mask_pool.bin"});
  const auto image_raw = read_text(bin_dir + "/image_pool.bin");
  CHECK(image_raw.size() == 3 * 6 * 6 * 4);
  CHECK(image_raw == std::string(reinterpret_cast<const char*>(image_pool.buffer.data()),
                                 image_pool.byte_size()));
  const auto mask_raw = read_text(bin_dir + "/mask_pool.bin");
  CHECK(mask_raw.size() == 16 * 2);
  CHECK(mask_raw ==
        std::string(reinterpret_cast<const char*>(mask_pool.buffer.data()), mask_pool.byte_size()));
}

TEST_CASE("v10 outputs without tensor names are named after their producer", "[cli][run]") {
  // As update_v10_model names them: the producer's name, not the Result's
  // ("pool_dilated/sink_port_0").
  ScratchDir dir;
  const auto out_dir = dir.file("out");
  const auto r = run_irrun({sample("avgpool_chain_v10.xml"), "--random-input", "-o", out_dir});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(files_in(out_dir) == std::vector<std::string>{"pool_ceil_torch.npy", "pool_dilated.npy"});
  CHECK(has(r.out, "output 'pool_ceil_torch': f32 [1,4,5,6]"));
  CHECK(has(r.out, "output 'pool_dilated': f32 [1,4,5,5]"));
}

TEST_CASE("bf16 outputs are written as f32 .npy, and raw as bf16", "[cli][run]") {
  ScratchDir dir;
  const auto model = bf16_model(dir);
  // bf16 1, 2, 3, 4.
  const auto in = write_raw<std::uint16_t>(dir, "in.bin", {0x3F80, 0x4000, 0x4040, 0x4080});
  const auto r = run_irrun({model, "--input", in, "-o", dir.file("npy")});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out_lines() ==
        std::vector<std::string>{"output 'half': bf16 [1,1,1,2]  min 1.5  max 3.5  mean 2.5",
                                 "  [1.5, 3.5]"});
  const auto npy = dir.file("npy/half.npy");
  CHECK(has(read_text(npy), "'descr': '<f4'"));
  const Tensor t = irrun::read_npy(npy);
  CHECK(t.type == ElementType::f32);
  CHECK(t.shape == Shape{1, 1, 1, 2});
  CHECK(values_of(t) == std::vector<double>{1.5, 3.5});

  const auto rb =
      run_irrun({model, "--input", in, "-o", dir.file("bin"), "--output-format", "bin"});
  REQUIRE(rb.exit_code == 0);
  // 1.5 is bf16 0x3FC0, 3.5 is 0x4060 (little-endian bytes).
  CHECK(read_text(dir.file("bin/half.bin")) == std::string("\xC0\x3F\x60\x40", 4));
}

TEST_CASE("--threads 1, 2 and the default give byte-identical files", "[cli][run]") {
  ScratchDir dir;
  for (const auto& model :
       {"avgpool_chain_v10.xml", "two_inputs_v11.xml", "adaptive_v11.xml", "avgpool_int_v11.xml"}) {
    CAPTURE(model);
    std::vector<RunResult> runs;
    const std::vector<std::vector<std::string>> thread_args = {
        {"--threads", "1"}, {"--threads", "2"}, {"--threads", "0"}, {}};
    for (std::size_t k = 0; k < thread_args.size(); ++k) {
      std::vector<std::string> args = {
          sample(model), "--random-input",
          "--seed",      "5",
          "-o",          dir.file(std::string(model) + std::to_string(k))};
      args.insert(args.end(), thread_args[k].begin(), thread_args[k].end());
      runs.push_back(run_irrun(args));
      INFO(runs.back().err);
      REQUIRE(runs.back().exit_code == 0);
    }
    const auto first_dir = fs::path(dir.file(std::string(model) + "0"));
    const auto names = files_in(first_dir);
    REQUIRE_FALSE(names.empty());
    for (std::size_t k = 1; k < runs.size(); ++k) {
      const auto other = fs::path(dir.file(std::string(model) + std::to_string(k)));
      CHECK(runs[k].out == runs[0].out);
      REQUIRE(files_in(other) == names);
      for (const auto& name : names)
        CHECK(read_text((other / name).string()) == read_text((first_dir / name).string()));
    }
  }
}

TEST_CASE("--random-input --seed N is reproducible and seed-dependent", "[cli][run]") {
  ScratchDir dir;
  auto run_seed = [&](const std::string& seed, const std::string& out) {
    std::vector<std::string> args = {sample("two_inputs_v11.xml"), "--random-input", "-o",
                                     dir.file(out)};
    if (!seed.empty()) args.insert(args.end(), {"--seed", seed});
    const auto r = run_irrun(args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    return r;
  };
  const auto a = run_seed("11", "a");
  const auto b = run_seed("11", "b");
  const auto c = run_seed("12", "c");
  const auto d = run_seed("", "d");  // the default seed is 0
  const auto e = run_seed("0", "e");
  CHECK(a.out == b.out);
  CHECK(a.out != c.out);
  CHECK(d.out == e.out);
  CHECK(a.out != d.out);
  for (const auto& name : {"image_pool.npy", "mask_pool.npy"}) {
    const auto av = read_text(dir.file(std::string("a/") + name));
    CHECK(read_text(dir.file(std::string("b/") + name)) == av);
    CHECK(read_text(dir.file(std::string("c/") + name)) != av);
    CHECK(read_text(dir.file(std::string("d/") + name)) ==
          read_text(dir.file(std::string("e/") + name)));
  }
}

TEST_CASE("--layer pool runs the pool of a network irrun cannot run", "[cli][run]") {
  ScratchDir dir;
  const auto model = sample("multi_op_v11.xml");

  SECTION("without --layer: exit 6 naming the ops and suggesting --layer") {
    const auto r = run_irrun({model, "--random-input", "-o", dir.file("out")});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 6);
    CHECK(r.out.empty());
    REQUIRE(r.err_lines().size() == 1);
    CHECK(has(r.err, "'conv' (Convolution)"));
    CHECK(has(r.err, "'relu' (Relu)"));
    CHECK(has(r.err, "--layer"));
    CHECK_FALSE(fs::exists(dir.file("out")));
  }
  SECTION("--layer pool on an iota input") {
    // The pool's data input is relu's output, [1,8,16,16]: x = 256c + 16h + w. k2 s2 windows
    // average to 256c + 16*(2i + 0.5) + (2j + 0.5).
    const auto in = iota_bin(dir, "relu.bin", 8 * 16 * 16);
    for (const auto& input : {in, "relu_out=" + in}) {
      const auto out_dir = dir.file("out");
      fs::remove_all(out_dir);
      const auto r = run_irrun({model, "--layer", "pool", "--input", input, "-o", out_dir});
      INFO(r.out << r.err);
      REQUIRE(r.exit_code == 0);
      CHECK(r.err.empty());
      CHECK(r.out_lines() ==
            std::vector<std::string>{
                "output 'pool_out': f32 [1,8,8,8]  min 8.5  max 2038.5  mean 1023.5",
                "  [8.5, 10.5, 12.5, 14.5, 16.5, 18.5, 20.5, 22.5, ...]"});
      CHECK(files_in(out_dir) == std::vector<std::string>{"pool_out.npy"});
      const Tensor t = irrun::read_npy(out_dir + "/pool_out.npy");
      REQUIRE(t.shape == Shape{1, 8, 8, 8});
      const auto v = values_of(t);
      for (int c = 0; c < 8; ++c)
        for (int i = 0; i < 8; ++i)
          for (int j = 0; j < 8; ++j)
            CHECK(v[static_cast<std::size_t>((c * 8 + i) * 8 + j)] ==
                  256 * c + 32 * i + 2 * j + 8.5);
    }
  }
  SECTION("--layer with random input") {
    const auto r = run_irrun({model, "--layer", "pool", "--random-input", "--seed", "3"});
    CHECK(r.exit_code == 0);
    CHECK(has(r.out, "output 'pool_out': f32 [1,8,8,8]"));
  }
  SECTION("--layer naming a non-pool or unknown layer") {
    auto r = run_irrun({model, "--layer", "conv", "--random-input"});
    CHECK(r.exit_code == 6);
    CHECK(has(r.err, "not a pooling layer"));
    r = run_irrun({model, "--layer", "nope", "--random-input"});
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "no layer named 'nope'"));
    // An empty name read as no --layer: the whole model ran (here: exit 6 on the Convolution).
    for (const char* command : {"run", "bench"}) {
      r = run_irrun({command, model, "--layer", "", "--random-input"});
      CHECK(r.exit_code == 2);
      CHECK(has(r.err, "--layer: expected a layer name or id, got an empty string"));
    }
  }
}

TEST_CASE("every input mistake exits 4 with one line and writes nothing", "[cli][run]") {
  ScratchDir dir;
  const auto avgpool = sample("avgpool_v11.xml");
  const auto good = iota_bin(dir, "good.bin", 3 * 8 * 8);
  const auto image = iota_bin(dir, "image.bin", 3 * 12 * 12);
  const auto short_bin = write_raw(dir, "short.bin", std::vector<float>(25, 1.0f));
  const auto ints = dir.file("ints.npy");
  irrun::write_npy(ints, Tensor::zeros(ElementType::i32, {1, 3, 8, 8}));
  const auto wrong_shape = dir.file("wrong_shape.npy");
  irrun::write_npy(wrong_shape, Tensor::zeros(ElementType::f32, {1, 3, 8, 7}));
  fs::create_directories(dir.file("a_dir.bin"));

  struct Case {
    std::vector<std::string> args;
    std::vector<std::string> expected;  // parts of the one stderr line
  };
  const std::vector<Case> cases = {
      {{avgpool}, {"no data for input 'input' (f32 [1,3,8,8])", "--random-input"}},
      {{avgpool, "-i", dir.file("missing.bin")}, {"'input'", "missing.bin", "cannot open"}},
      {{avgpool, "-i", short_bin}, {"'input'", "expected 768 bytes", "found 100"}},
      {{avgpool, "-i", ints}, {"dtype i32 does not match input 'input' (f32 [1,3,8,8])"}},
      {{avgpool, "-i", wrong_shape}, {"shape [1,3,8,7] does not fit input 'input'"}},
      {{avgpool, "-i", "picture=" + good}, {"'picture' is not an input", "its inputs are: input"}},
      {{avgpool, "-i", good, "-i", "input=" + good}, {"'input'", "given twice"}},
      {{avgpool, "--random-input", "--shape", "input=1,3,8,8", "--shape", "1,3,8,8"},
       {"--shape 1,3,8,8: input 'input' (f32 [1,3,8,8]) is given twice"}},
      {{avgpool, "-i", dir.file("a_dir.bin")}, {"'input'", "is a directory"}},
      {{avgpool, "--random-input", "--shape", "input=1,3,8,9"},
       {"[1,3,8,9] does not fit the input's shape [1,3,8,8]"}},
      {{sample("two_inputs_v11.xml"), "-i", good}, {"2 inputs", "NAME=FILE"}},
      {{sample("two_inputs_v11.xml"), "-i", "image=" + image}, {"no data for input 'mask'"}},
      {{sample("multi_op_v11.xml"), "--layer", "pool", "-i", short_bin},
       {"'relu_out'", "expected 8192 bytes (f32 [1,8,16,16]), found 100"}},
  };
  for (const auto& c : cases) {
    for (bool existing_dir : {false, true}) {
      const auto out_dir = dir.file("out");
      fs::remove_all(out_dir);
      if (existing_dir) fs::create_directories(out_dir);
      auto args = c.args;
      args.insert(args.end(), {"-o", out_dir});
      const auto r = run_irrun(args);
      INFO(c.args.back() << " (existing output dir: " << existing_dir << "):\n" << r.out << r.err);
      CHECK(r.exit_code == 4);
      CHECK(r.out.empty());
      const auto lines = r.err_lines();
      REQUIRE(lines.size() == 1);
      CHECK(lines[0].rfind("irrun: error: ", 0) == 0);
      for (const auto& part : c.expected) CHECK(has(lines[0], part));
      CHECK(fs::exists(out_dir) == existing_dir);
      CHECK((!existing_dir || fs::is_empty(out_dir)));  // not even a manifest
    }
  }
}

TEST_CASE("an output directory that cannot be created exits 5 and writes nothing", "[cli][run]") {
  ScratchDir dir;
  const auto file = dir.write("not_a_dir", "keep me");
  for (const auto& out : {file, file + "/sub"}) {
    const auto r = run_irrun({sample("avgpool_v11.xml"), "--random-input", "-o", out});
    INFO(r.out << r.err);
    CHECK(r.exit_code == 5);
    CHECK(r.err_lines().size() == 1);
    CHECK(has(r.err, "not_a_dir"));
    CHECK(read_text(file) == "keep me");
    CHECK(files_in(dir.path()) == std::vector<std::string>{"not_a_dir"});
  }
}

TEST_CASE("a dynamic model: .npy shapes it, a raw .bin needs --shape; shared outputs get two files",
          "[cli][run]") {
  using namespace irrun::testing;
  ScratchDir dir;
  // x f32 [1,1,?,?] -> AvgPool k2 s2 (port named "p") -> two Results.
  const auto model = dir.write(
      "dyn.xml", net(parameter(0, "x", "1,1,?,?", {1, 1, -1, -1}, "f32", "FP32", "x") +
                         avg_pool(1, "pool", "opset1",
                                  "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" "
                                  "pads_end=\"0,0\"",
                                  {1, 1, -1, -1}, {1, 1, -1, -1}, "FP32", "p") +
                         result(2, "r1", {1, 1, -1, -1}) + result(3, "r2", {1, 1, -1, -1}),
                     edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(1, 1, 3, 0)));

  // 4x4 iota: windows {0,1,4,5}, {2,3,6,7}, {8,9,12,13}, {10,11,14,15}.
  const auto npy = dir.file("x.npy");
  irrun::write_npy(npy, iota_tensor(ElementType::f32, {1, 1, 4, 4}));
  auto r = run_irrun({model, "-i", npy, "-o", dir.file("a")});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // Both Results read tensor "p": the second file gets a suffix.
  CHECK(files_in(dir.file("a")) == std::vector<std::string>{"p.npy", "p_1.npy"});
  for (const auto& name : {"a/p.npy", "a/p_1.npy"}) {
    const Tensor t = irrun::read_npy(dir.file(name));
    CHECK(t.shape == Shape{1, 1, 2, 2});
    CHECK(values_of(t) == std::vector<double>{2.5, 4.5, 10.5, 12.5});
  }

  // The same 8 values raw: --shape decides between 2x4 and 4x2.
  const auto bin = iota_bin(dir, "x.bin", 8);
  r = run_irrun({model, "-i", bin, "-o", dir.file("b")});
  CHECK(r.exit_code == 4);
  CHECK(has(r.err, "input 'x' (f32 [1,1,?,?]) has a dynamic shape; give --shape x="));
  CHECK_FALSE(fs::exists(dir.file("b")));
  r = run_irrun({model, "-i", bin, "--shape", "x=1,1,2,4", "-o", dir.file("b")});
  REQUIRE(r.exit_code == 0);
  CHECK(values_of(irrun::read_npy(dir.file("b/p.npy"))) == std::vector<double>{2.5, 4.5});
  r = run_irrun({model, "-i", bin, "--shape", "x=1,1,4,2", "-o", dir.file("c")});
  REQUIRE(r.exit_code == 0);
  // 4x2: windows {0,1,2,3} and {4,5,6,7}.
  const Tensor t = irrun::read_npy(dir.file("c/p.npy"));
  CHECK(t.shape == Shape{1, 1, 2, 1});
  CHECK(values_of(t) == std::vector<double>{1.5, 5.5});

  // An input too small for the kernel fails the pool's validation: the input's fault (exit 4),
  // named with its shape, not the model's (exit 3).
  irrun::write_npy(dir.file("tiny.npy"), iota_tensor(ElementType::f32, {1, 1, 1, 4}));
  r = run_irrun({model, "-i", dir.file("tiny.npy"), "-o", dir.file("d")});
  CHECK(r.exit_code == 4);
  CHECK(has(r.err, "layer 1 'pool' (AvgPool-1 opset1): Kernel after dilation has size"));
  CHECK(has(r.err, "[validation] (with the inputs' shapes: 'x' [1,1,1,4])"));
  CHECK_FALSE(fs::exists(dir.file("d")));
}

TEST_CASE("MaxPool values and indices are two outputs, hand-computed", "[cli][run]") {
  ScratchDir dir;
  const auto model = sample("maxpool_chain_v10.xml");
  // Per channel c (of 3) the expected 3x3 maxima x(c, a, b) and their positions in the 5x5
  // plane (axis=2): MaxPool-14 k2 s2 p1/1 ceil_torch reads rows/cols {0}, {1,2}, {3,4} and the
  // largest is always the last, at 0, 2, 4.
  auto check_max14 = [](const std::string& out_dir, auto value) {
    const Tensor values = irrun::read_npy(out_dir + "/max14.0.npy");
    const Tensor indices = irrun::read_npy(out_dir + "/max14.1.npy");
    REQUIRE(values.shape == Shape{1, 3, 3, 3});
    CHECK(indices.type == ElementType::i32);
    const auto v = values_of(values);
    const auto i = values_of(indices);
    for (int c = 0; c < 3; ++c)
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) {
          const auto k = static_cast<std::size_t>((c * 3 + a) * 3 + b);
          CHECK(v[k] == value(c, a, b));
          CHECK(i[k] == 10 * a + 2 * b);
        }
  };
  SECTION("the whole model on an iota input") {
    // x = 100c + 10h + w; MaxPool-1 k2 s2 keeps (2i+1, 2j+1), MaxPool-14 then (2a, 2b) of that.
    const auto in = iota_bin(dir, "data.bin", 3 * 10 * 10);
    const auto out_dir = dir.file("out");
    const auto r = run_irrun({model, "--input", in, "-o", out_dir});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    // v10 outputs after their producer: "max14.0" and "max14.1" for MaxPool-14's two.
    CHECK(files_in(out_dir) == std::vector<std::string>{"avg.npy", "max14.0.npy", "max14.1.npy"});
    check_max14(out_dir, [](int c, int a, int b) { return 100 * c + 40 * a + 10 + 4 * b + 1; });
    CHECK(has(r.out, "output 'max14.1': i32 [1,3,3,3]  min 0  max 24"));
  }
  SECTION("--layer max14 alone: a Result per output") {
    const auto in = iota_bin(dir, "max1.bin", 3 * 5 * 5);
    const auto out_dir = dir.file("layer");
    const auto r = run_irrun({model, "--layer", "max14", "--input", in, "-o", out_dir});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(files_in(out_dir) == std::vector<std::string>{"max14.0.npy", "max14.1.npy"});
    check_max14(out_dir, [](int c, int a, int b) { return 25 * c + 10 * a + 2 * b; });
  }
  SECTION("--layer max1: MaxPool-1 has one output") {
    const auto r = run_irrun({model, "--layer", "max1", "--random-input"});
    CHECK(r.exit_code == 0);
    CHECK(has(r.out, "output 'max1': f32 [1,3,5,5]"));
  }
}

TEST_CASE("AdaptiveMaxPool on an iota input: each bin's last element, indices per plane",
          "[cli][run]") {
  ScratchDir dir;
  const auto in = iota_bin(dir, "in.bin", 2 * 7 * 9);
  const auto out_dir = dir.file("out");
  const auto r = run_irrun({sample("adaptive_max_v11.xml"), "--input", in, "-o", out_dir});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  // Bins: H 7 -> 3 ends at rows 2, 4, 6; W 9 -> 4 ends at columns 2, 4, 6, 8. x = 63c + 9h + w
  // grows along both, so the maximum is the bin's last element.
  const auto v = values_of(irrun::read_npy(out_dir + "/adaptive_max.npy"));
  const Tensor indices = irrun::read_npy(out_dir + "/adaptive_max.indices.npy");
  CHECK(indices.type == ElementType::i32);
  const auto i = values_of(indices);
  for (int c = 0; c < 2; ++c)
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 4; ++b) {
        const auto k = static_cast<std::size_t>((c * 3 + a) * 4 + b);
        const int pos = (2 + 2 * a) * 9 + 2 + 2 * b;
        CHECK(v[k] == 63 * c + pos);
        CHECK(i[k] == pos);
      }
}

// --kernels: the fast kernels at every ISA give the same bits; the reference kernels differ from
// them on f32 AvgPool by one ulp at most, and here by one (the window of the kernel test "avg_pool
// and max_pool run the kernels asked for": its average is an f32 midpoint, which the fast
// kernel's scaling puts just below).
TEST_CASE("--kernels picks the fast kernels' ISA or the reference kernels", "[cli][run]") {
  using namespace irrun::testing;
  ScratchDir dir;
  const auto model =
      dir.write("k7.xml", net(parameter(0, "x", "1,1,7,8", {1, 1, 7, 8}) +
                                  avg_pool(1, "p", "opset1",
                                           "kernel=\"7,7\" strides=\"1,1\" pads_begin=\"0,0\" "
                                           "pads_end=\"0,0\" exclude-pad=\"true\"",
                                           {1, 1, 7, 8}, {1, 1, 1, 2}) +
                                  result(2, "r", {1, 1, 1, 2}),
                              edge(0, 0, 1, 0) + edge(1, 1, 2, 0)));
  std::vector<float> x(56, 1.5f);
  x[0] = 2.5f;
  x[1] = 1.5f + 0x1p-17f + 0x1p-20f + 0x1p-23f;
  x[2] = 0.5f + 0x1p-24f;
  const auto in = write_raw(dir, "x.bin", x);
  const auto first = [&](const std::string& sub) {
    return irrun::read_npy(dir.file(sub + "/r.npy")).data<float>()[0];
  };
  for (const std::string k : {"best", "avx2", "portable", "reference"}) {
    const auto r = run_irrun({model, "--input", in, "--kernels", k, "-o", dir.file(k)});
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const auto m = nlohmann::json::parse(read_text(dir.file(k + "/manifest.json")));
    CHECK(m["informational"]["kernels"] == k);
    CHECK(first(k) == (k == "reference" ? 1.5f + 0x1p-22f : 1.5f + 0x1p-23f));
  }
  // The default is best; the fast kernels' goldens match each other exactly, with no note.
  const auto same =
      run_irrun({model, "--input", in, "--kernels", "PORTABLE", "--expect", dir.file("avx2")});
  CHECK(same.exit_code == 0);
  CHECK(same.err.empty());
  const auto plain = run_irrun({model, "--input", in, "--expect", dir.file("best")});
  CHECK(plain.exit_code == 0);
  // Against a reference golden: the one-ulp difference, and a note that says why.
  const auto diff = run_irrun({model, "--input", in, "--expect", dir.file("reference")});
  CHECK(diff.exit_code == 1);
  CHECK(diff.err.find("the golden was written with --kernels reference, this run uses best") !=
        std::string::npos);
  const auto bad = run_irrun({model, "--input", in, "--kernels", "fastest"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("fastest not in {best,avx2,portable,reference}") != std::string::npos);
  const auto bench = run_irrun({"bench", model, "--kernels", "reference", "--format", "json",
                                "--repeat", "1", "--warmup", "0"});
  REQUIRE(bench.exit_code == 0);
  CHECK(nlohmann::json::parse(bench.out)["kernels"] == "reference");
}

TEST_CASE("numeric options: one clear line for a bad value, no wrap or clamp", "[cli][run]") {
  const auto model = sample("avgpool_v11.xml");
  struct Case {
    std::vector<std::string> args;
    std::string message;  // a part of the error; empty: accepted
  };
  const std::string seed_range = "expected a whole number from 0 to 18446744073709551615";
  const std::vector<Case> cases = {
      {{model, "--random-input", "--seed", "18446744073709551615"}, ""},
      {{model, "--random-input", "--seed", "18446744073709551616"}, seed_range},
      {{model, "--random-input", "--seed", "-5"}, seed_range + " (2^64 - 1), got '-5'"},
      {{model, "--random-input", "--seed", "7x"}, seed_range},
      {{model, "--random-input", "--threads", "1025"},
       "--threads: expected a whole number from 0 to 1024, got '1025'"},
      {{model, "--random-input", "--threads", "-1"}, "from 0 to 1024"},
      {{model, "--random-input", "--expect", model, "--rtol", "nan"},
       "--rtol: expected a finite number >= 0, got 'nan'"},
      {{model, "--random-input", "--expect", model, "--atol", "inf"}, "got 'inf'"},
      {{model, "--random-input", "--expect", model, "--atol", "-1e-3"}, "got '-1e-3'"},
      {{"bench", model, "--repeat", "0"},
       "--repeat: expected a whole number from 1 to 1000000000, got '0'"},
      {{"bench", model, "--warmup", "-1"}, "--warmup: expected a whole number from 0"},
      {{"bench", model, "--seed", "-1"}, seed_range},
      {{"bench", model, "--repeat", "2", "--warmup", "0", "--threads", "1"}, ""},
      // Decimal, whatever CLI11's own conversion (base 0) would make of a leading zero.
      {{"bench", model, "--repeat", "02", "--warmup", "00", "--threads", "08"}, ""},
      {{model, "--random-input", "--expect", model, "--atol", "+1e-400", "--rtol", "nan"},
       "--rtol: expected a finite number >= 0, got 'nan'"},
      // Options that would decide nothing are refused, not ignored.
      {{model, "--seed", "3", "--input", model}, "--seed requires --random-input"},
      {{model, "--random-input", "--output-format", "bin"},
       "--output-format requires --output-dir"},
      // A mistyped command is not a model named "chek".
      {{"chek", model}, "unknown command 'chek': the commands are check, info, run and bench"},
      {{"-q", "bnech", model}, "unknown command 'bnech'"},
      // A command's option before the command word (CLI11 blamed the model's path).
      {{"--layer", "pool", "run", model}, "--layer comes before the command 'run': only -v"},
      {{"-q", "--threads", "2", "check", model}, "--threads comes before the command 'check'"},
      {{"--threads=2", "bench", model}, "--threads=2 comes before the command 'bench'"},
      // An argument no option took: the command, the first of them, and what it likely meant
      // (CLI11 said only "The following arguments were not expected", listed in reverse).
      {{"check", "--strcit", model},
       "irrun check: unknown option --strcit (did you mean --strict?)"},
      {{model, "--inptu", model}, "irrun run: unknown option --inptu (did you mean --input?)"},
      {{"bench", model, "--threds=2"},
       "irrun bench: unknown option --threds (did you mean --threads?)"},
      {{model, "--output", "x"},
       "irrun run: unknown option --output (did you mean --output-dir or --output-format?)"},
      {{"check", model, "--layer", "p"},
       "irrun check: unknown option --layer (an option of irrun run and bench)"},
      {{"info", model, "--frobnicate"},
       "irrun info: unknown option --frobnicate (irrun info --help)"},
      {{"info", "-Z", model}, "irrun info: unknown option -Z (irrun info --help)"},
      // After "--" an argument is positional, whatever it looks like.
      {{"run", model, "--", "--x"}, "irrun run: unexpected argument '--x' (irrun run --help)"},
      {{"run", model, model, model},
       "irrun run: unexpected argument '" + model + "', and 1 more (irrun run --help)"},
  };
  for (const auto& c : cases) {
    const auto r = run_irrun(c.args);
    INFO(c.args[c.args.size() - 2] << " " << c.args.back() << ":\n" << r.out << r.err);
    if (c.message.empty()) {
      CHECK(r.exit_code == 0);
      continue;
    }
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(has(r.err, c.message));
    CHECK(r.err.find("17976931348623157") == std::string::npos);  // no DBL_MAX in full
    // One line, as every error (CLI11's own output had a second, unprefixed).
    CHECK(r.err_lines().size() == 1);
    CHECK(r.err.starts_with("irrun: error: "));
  }
}

TEST_CASE("an output with no elements is summarised as such, not as NaN", "[cli][run]") {
  ScratchDir dir;
  // adaptive_v11 with output_size {0, 4}: an f32 [1,2,0,4] output.
  const auto weights = write_raw(dir, "zero.bin", std::vector<std::int64_t>{0, 4});
  const auto r = run_irrun({sample("adaptive_v11.xml"), "--weights", weights, "--random-input"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out_lines() ==
        std::vector<std::string>{"output 'adaptive_pool': f32 [1,2,0,4]  no elements"});
}

TEST_CASE("a model whose declared dims are wrong runs, with one warning", "[cli][run]") {
  const auto bad = sample("bad_dim_v11.xml");
  const auto r = run_irrun({bad, "--random-input"});
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "output 'pool': f32 [1,3,5,5]"));  // the inferred shape, not [1,3,4,4]
  CHECK(r.err_lines() ==
        std::vector<std::string>{"irrun: warning: " + bad +
                                 ": 1 declared shape(s) or type(s) differ from the inferred ones "
                                 "(irrun check lists them); the outputs have the inferred shapes"});
  CHECK(run_irrun({"-q", bad, "--random-input"}).err.empty());
  CHECK(run_irrun({sample("avgpool_v11.xml"), "--random-input"}).err.empty());
}

TEST_CASE("--seed 010 is the decimal seed 10, as recorded", "[cli][run]") {
  ScratchDir dir;
  const auto model = sample("avgpool_v11.xml");
  REQUIRE(run_irrun({model, "--random-input", "--seed", "010", "-o", dir.file("a")}).exit_code ==
          0);
  REQUIRE(run_irrun({model, "--random-input", "--seed", "10", "-o", dir.file("b")}).exit_code == 0);
  CHECK(irrun::testing::read_text(dir.file("a/pool.npy")) ==
        irrun::testing::read_text(dir.file("b/pool.npy")));
  CHECK(irrun::testing::read_text(dir.file("a/manifest.json")).find("\"seed\": 10,") !=
        std::string::npos);
}

namespace {

// Starts irrun with `args` (stdout and stderr to /dev/null), waits until a temporary file
// ".*.tmp.*" appears in `dir`, then sends `sig`. Returns whether the signal was sent while the
// file existed, and the run's wait status in `status`.
bool signal_during_write(const std::vector<std::string>& args, const std::string& dir, int sig,
                         int& status) {
  std::vector<std::string> store{IRRUN_BINARY};
  store.insert(store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : store) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const int null = ::open("/dev/null", O_RDWR);
    if (null < 0) ::_exit(126);
    ::dup2(null, STDIN_FILENO);
    ::dup2(null, STDOUT_FILENO);
    ::dup2(null, STDERR_FILENO);
    ::alarm(120);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  const auto writing = [&] {
    std::error_code ec;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().filename().string().find(".tmp.") != std::string::npos) return true;
    return false;
  };
  bool sent = false;
  while (::waitpid(pid, &status, WNOHANG) == 0) {
    if (writing()) {
      sent = ::kill(pid, sig) == 0;
      break;
    }
    ::usleep(100);
  }
  if (sent)
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  return sent;
}

}  // namespace

TEST_CASE("a run ended by a signal leaves no temporary file behind", "[cli][run]") {
  // 128 MiB out: its write and fsync take long enough to be caught in progress.
  ScratchDir dir;
  const Shape shape{1, 32, 1024, 1024};
  const std::string k1 =
      "kernel=\"1,1\" strides=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\" exclude-pad=\"true\"";
  using irrun::testing::avg_pool, irrun::testing::result;
  using irrun::testing::edge, irrun::testing::net, irrun::testing::parameter;
  const auto model = dir.write(
      "big.xml", net(parameter(0, "x", "1,32,1024,1024", shape) +
                         avg_pool(1, "p", "opset1", k1, shape, shape) + result(2, "r", shape),
                     edge(0, 0, 1, 0) + edge(1, 1, 2, 0)));
  for (const int sig : {SIGTERM, SIGINT}) {
    CAPTURE(sig);
    const auto out_dir = dir.file("out" + std::to_string(sig));
    int status = 0;
    bool caught = false;
    // A write too quick to catch is tried again (the run then ended by itself).
    for (int attempt = 0; attempt < 3 && !caught; ++attempt) {
      fs::remove_all(out_dir);
      caught = signal_during_write({model, "--random-input", "-o", out_dir}, out_dir, sig, status);
    }
    REQUIRE(caught);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);
    for (const auto& e : fs::directory_iterator(out_dir))
      CHECK(e.path().filename().string().find(".tmp.") == std::string::npos);
  }
}
