// Tests of the public facade (lib/src/network.cpp) through irrun/irrun.hpp alone: loading, port
// info, check, running on caller-owned memory (inputs read in place, outputs written into the
// caller's arrays), and every mistake a caller can make with its tensors. The sample
// avgpool_v11.xml pools 8x8 planes with k3 s2 p1 exclude-pad ceil into 5x5: on the iota
// 8*row+col, output (y, x) is 8 * mean(rows) + mean(cols) with means 0.5, 2, 4, 6, 7.
#include "irrun/irrun.hpp"

#include <catch2/catch.hpp>

#include <cstdint>
#include <fstream>
#include <map>
#include <new>
#include <numeric>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "irrun/api_boundary.hpp"  // internal: the boundary's own test, at the end
#include "irrun/float16.hpp"       // internal: f16 bits for the v10 test
#include "support/ir_text.hpp"
#include "support/scratch_dir.hpp"

using irrun::ElementType;
using irrun::ExitCode;
using irrun::Network;
using irrun::Tensor;

namespace {

using Shape = std::vector<std::int64_t>;
using Tensors = std::map<std::string, Tensor>;

#ifndef IRRUN_SAMPLES_DIR
#error "IRRUN_SAMPLES_DIR must be defined by the build"
#endif

std::string sample(const std::string& name) {
  return std::string(IRRUN_SAMPLES_DIR) + "/" + name;
}

std::vector<float> iota(std::size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 0.0f);
  return v;
}

// The first 5x5 plane of avgpool_v11 on the iota input (see the file comment).
std::vector<float> expected_plane0() {
  const float means[] = {0.5f, 2, 4, 6, 7};
  std::vector<float> v;
  for (float r : means)
    for (float c : means) v.push_back(8 * r + c);
  return v;
}

// x -> a (k3 s1 p1 include-pad) -> b (k2 s2) -> r into `path`: a's tensor is an intermediate.
void write_chain(const std::string& path, const std::string& x_text, const Shape& x,
                 const Shape& r) {
  using namespace irrun::testing;
  const std::string pad =
      "kernel=\"3,3\" strides=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\" "
      "exclude-pad=\"false\" rounding_type=\"floor\" auto_pad=\"explicit\"";
  const std::string k2 =
      "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\" "
      "rounding_type=\"floor\" auto_pad=\"explicit\"";
  std::ofstream(path) << net(parameter(0, "x", x_text, x) + avg_pool(1, "a", "opset1", pad, x, x) +
                                 avg_pool(2, "b", "opset1", k2, x, r) + result(3, "r", r),
                             edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(2, 1, 3, 0));
}

// Runs `net`, expecting Error with `code` whose message contains `text`.
void require_run_error(const Network& net, const Tensors& inputs, Tensors& outputs, ExitCode code,
                       const std::string& text) {
  try {
    net.run(inputs, outputs);
    FAIL("no error; expected: " << text);
  } catch (const irrun::Error& e) {
    INFO(e.what());
    CHECK(e.code() == code);
    CHECK_THAT(e.what(), Catch::Contains(text));
  }
}

}  // namespace

TEST_CASE("Buffer::wrap views caller memory without owning or counting it", "[network]") {
  float data[4] = {1, 2, 3, 4};
  const auto before = irrun::memory_in_use();
  auto b = irrun::Buffer::wrap(data, sizeof data);
  CHECK(b.data() == reinterpret_cast<const std::byte*>(data));
  CHECK(b.size() == sizeof data);
  CHECK(b.writable());
  CHECK(b.mutable_data() == reinterpret_cast<std::byte*>(data));
  CHECK(b.slice(4, 8).data() == reinterpret_cast<const std::byte*>(data + 1));
  auto r = irrun::Buffer::wrap(static_cast<const float*>(data), sizeof data);
  CHECK_FALSE(r.writable());
  CHECK(r.mutable_data() == nullptr);
  CHECK(irrun::memory_in_use() == before);

  const auto t = Tensor::wrap(ElementType::f32, {2, 2}, static_cast<const float*>(data));
  CHECK(t.buffer.size() == 16);
  CHECK(t.data<float>() == data);
  CHECK_FALSE(t.buffer.writable());
  try {
    Tensor::wrap(ElementType::f32, {INT64_MAX, 4}, data);
    FAIL("no error");
  } catch (const irrun::Error& e) {
    CHECK(e.code() == ExitCode::limit);
  }
}

TEST_CASE("Network::load describes inputs and outputs; version() matches the header", "[network]") {
  const Network net = Network::load(sample("avgpool_v11.xml"));
  CHECK(net.path() == sample("avgpool_v11.xml"));
  REQUIRE(net.inputs().size() == 1);
  CHECK(net.inputs()[0].name == "input");
  CHECK(net.inputs()[0].type == ElementType::f32);
  CHECK(net.inputs()[0].shape == Shape{1, 3, 8, 8});
  CHECK_FALSE(net.inputs()[0].dynamic_rank);
  REQUIRE(net.outputs().size() == 1);
  CHECK(net.outputs()[0].name == "pool");
  CHECK(net.outputs()[0].shape == Shape{1, 3, 5, 5});
  CHECK(std::string(irrun::version()) == IRRUN_VERSION_STRING);
}

TEST_CASE("Network::load throws ModelError for a missing or malformed file", "[network]") {
  irrun::testing::ScratchDir dir("network");
  for (const auto& [file, text] : std::vector<std::pair<std::string, std::string>>{
           {"missing.xml", ""}, {"bad.xml", "<net version=\"11\"><layers>"}}) {
    if (!text.empty()) std::ofstream(dir.file(file)) << text;
    try {
      Network::load(dir.file(file));
      FAIL("no error for " << file);
    } catch (const irrun::ModelError& e) {
      CHECK(e.code() == ExitCode::bad_model);
      CHECK_THAT(e.what(), Catch::Contains(file));
    }
  }
}

TEST_CASE("Network::load maps the weights, by default or as given", "[network]") {
  // AdaptiveAvgPool's output_size {3,4} comes from the .bin.
  const Network net = Network::load(sample("adaptive_v11.xml"));
  CHECK(net.outputs().at(0).shape == Shape{1, 2, 3, 4});
  const std::vector<float> x(2 * 7 * 9, 1.5f);
  const auto out =
      net.run({{net.inputs().at(0).name, Tensor::wrap(ElementType::f32, {1, 2, 7, 9}, x.data())}});
  const Tensor& t = out.at(net.outputs().at(0).name);
  REQUIRE(t.element_count() == 24);
  for (std::size_t i = 0; i < 24; ++i) CHECK(t.data<float>()[i] == 1.5f);

  irrun::NetworkOptions options;
  options.weights = sample("no_such.bin");
  try {
    Network::load(sample("adaptive_v11.xml"), options);
    FAIL("no error");
  } catch (const irrun::Error& e) {
    CHECK(e.code() == ExitCode::bad_model);
    CHECK_THAT(e.what(), Catch::Contains("no_such.bin"));
  }
}

TEST_CASE("Network::check reports like irrun check", "[network]") {
  const auto ok = Network::load(sample("avgpool_v11.xml")).check();
  CHECK(ok.passed());
  CHECK(ok.checked_layers == 3);
  CHECK(ok.diagnostics.empty());

  const auto bad = Network::load(sample("bad_dim_v11.xml")).check();
  CHECK_FALSE(bad.passed());
  CHECK(bad.errors() == 1);
  CHECK(bad.warnings() == 0);
  REQUIRE(bad.messages.size() == 1);
  CHECK(bad.diagnostics[0].rule == "dim-mismatch");
  CHECK(bad.diagnostics[0].layer == 1u);
  CHECK_THAT(bad.messages[0],
             Catch::Contains("bad_dim_v11.xml:29: error: layer 1 'pool'") &&
                 Catch::Contains("declared [1,3,4,4], inferred [1,3,5,5] [dim-mismatch]"));

  // A model irrun cannot run still checks.
  CHECK(Network::load(sample("multi_op_v11.xml")).check().passed());
}

TEST_CASE("Network::run reads caller inputs and writes caller outputs in place", "[network]") {
  const Network net = Network::load(sample("avgpool_v11.xml"), {{}, 2});
  const auto input = iota(3 * 8 * 8);
  std::vector<float> output(3 * 5 * 5, -1.0f);
  Tensors outputs{{"pool", Tensor::wrap(ElementType::f32, {1, 3, 5, 5}, output.data())}};
  net.run({{"input", Tensor::wrap(ElementType::f32, {1, 3, 8, 8}, input.data())}}, outputs);
  REQUIRE(outputs.size() == 1);
  CHECK(outputs.at("pool").data<float>() == output.data());
  CHECK(std::vector<float>(output.begin(), output.begin() + 25) == expected_plane0());
  // Planes are independent: plane 1 is plane 0 plus 64.
  for (std::size_t i = 0; i < 25; ++i) CHECK(output[25 + i] == output[i] + 64);

  // Without caller outputs: irrun-owned, the same bits, found by the port's tensor name too.
  const auto owned =
      net.run({{"input", Tensor::wrap(ElementType::f32, {1, 3, 8, 8}, input.data())}});
  REQUIRE(owned.count("pool"));
  const Tensor& t = owned.at("pool");
  CHECK(t.shape == Shape{1, 3, 5, 5});
  CHECK(std::vector<float>(t.data<float>(), t.data<float>() + 75) == output);
}

TEST_CASE("Network::run with the output array overlapping the input array", "[network]") {
  const Network net = Network::load(sample("avgpool_v11.xml"));
  auto data = iota(3 * 8 * 8);
  // The output takes the input's first 75 floats: computed aside, then copied over them.
  Tensors outputs{{"pool", Tensor::wrap(ElementType::f32, {1, 3, 5, 5}, data.data())}};
  net.run({{"input",
            Tensor::wrap(ElementType::f32, {1, 3, 8, 8}, static_cast<const float*>(data.data()))}},
          outputs);
  CHECK(std::vector<float>(data.begin(), data.begin() + 25) == expected_plane0());
  CHECK(data[75] == 75);
}

TEST_CASE("Network::run on two inputs, one of them f16", "[network]") {
  const Network net = Network::load(sample("two_inputs_v11.xml"));
  REQUIRE(net.inputs().size() == 2);
  CHECK(net.inputs()[1].type == ElementType::f16);
  const std::vector<float> image(3 * 12 * 12, 2.0f);
  const std::vector<std::uint16_t> mask(100, 0x3C00);  // f16 1.0
  Tensors in;
  for (const auto& p : net.inputs()) {
    if (p.type == ElementType::f32) in.emplace(p.name, Tensor::wrap(p.type, p.shape, image.data()));
    if (p.type == ElementType::f16) in.emplace(p.name, Tensor::wrap(p.type, p.shape, mask.data()));
  }
  const auto out = net.run(in);
  REQUIRE(out.size() == 2);
  for (const auto& p : net.outputs()) {
    const Tensor& t = out.at(p.name);
    CHECK(t.shape == p.shape);
    CHECK(t.type == p.type);
    if (t.type == ElementType::f32)
      for (std::size_t i = 0; i < t.element_count(); ++i) CHECK(t.data<float>()[i] == 2.0f);
    else
      for (std::size_t i = 0; i < t.element_count(); ++i)
        CHECK(t.data<std::uint16_t>()[i] == 0x3C00);
  }
}

// OpenVINO's read_model hands a v10 IR's I/O out in legacy types (update_v10_model): f16 inputs
// as f32, i64 indices as i32, f16 values as f32. inputs() and outputs() say so, and run() takes
// and gives those types: a caller that wraps its arrays as they describe runs (it did not:
// outputs() gave the graph's own types, which run() then refused).
TEST_CASE("Network on a v10 IR describes its I/O in the types run() takes and gives", "[network]") {
  using namespace irrun::testing;
  irrun::testing::ScratchDir dir;
  const Shape x{1, 1, 4, 4}, y{1, 1, 2, 2};
  std::string xml =
      net(parameter(0, "x", "1,1,4,4", x, "f16", "FP16") +
              layer(1, "max", "MaxPool", "opset8",
                    "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\" "
                    "index_element_type=\"i64\"",
                    port(0, x, "FP16"), port(1, y, "FP16") + port(2, y, "I64")) +
              result(2, "values", y, "FP16") + result(3, "indices", y, "I64"),
          edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(1, 2, 3, 0));
  const std::string v11 = "version=\"11\"";
  xml.replace(xml.find(v11), v11.size(), "version=\"10\"");
  const Network network = Network::load(dir.write("v10.xml", xml));
  REQUIRE(network.inputs().size() == 1);
  CHECK(network.inputs()[0].type == ElementType::f32);
  REQUIRE(network.outputs().size() == 2);
  CHECK(network.outputs()[0].type == ElementType::f32);
  CHECK(network.outputs()[1].type == ElementType::i32);
  // x = 0..15 as f32 (exact in f16): each 2x2 window's maximum is its bottom-right value.
  const std::vector<float> in = iota(16);
  std::vector<float> values(4, -1.0f);
  std::vector<std::int32_t> indices(4, -1);
  Tensors out{{"max.0", Tensor::wrap(network.outputs()[0].type, y, values.data())},
              {"max.1", Tensor::wrap(network.outputs()[1].type, y, indices.data())}};
  REQUIRE(network.outputs()[0].name == "max.0");
  REQUIRE(network.outputs()[1].name == "max.1");
  network.run({{"x", Tensor::wrap(ElementType::f32, x, in.data())}}, out);
  CHECK(values == std::vector<float>{5, 7, 13, 15});
  CHECK(indices == std::vector<std::int32_t>{5, 7, 13, 15});
  // The graph's own f16 is taken too, as the irrun tool takes an f16 blob.
  std::vector<std::uint16_t> halves(16);
  for (std::size_t i = 0; i < halves.size(); ++i)
    halves[i] = irrun::f16_bits_from_double(static_cast<double>(i));
  const auto again = network.run({{"x", Tensor::wrap(ElementType::f16, x, halves.data())}});
  REQUIRE(again.at("max.0").type == ElementType::f32);
  CHECK(std::vector<float>(again.at("max.0").data<float>(), again.at("max.0").data<float>() + 4) ==
        values);
  // A type that is neither is refused before any compute.
  const std::vector<double> wide(16, 1.0);
  Tensors none;
  require_run_error(network, {{"x", Tensor::wrap(ElementType::f64, x, wide.data())}}, none,
                    ExitCode::bad_input, "given f64 [1,1,4,4]");
}

TEST_CASE("Network::run on integer inputs into the caller's integer arrays", "[network]") {
  const Network net = Network::load(sample("avgpool_int_v11.xml"));
  const std::vector<std::int8_t> q(2 * 4 * 4, 3);
  const std::vector<std::int32_t> w(4 * 4, 9);
  std::vector<std::int8_t> q_out(2 * 2 * 2, 0);
  std::vector<std::int32_t> w_out(3 * 3, 0);
  Tensors in, out;
  for (const auto& p : net.inputs())
    in.emplace(p.name, p.type == ElementType::i8 ? Tensor::wrap(p.type, p.shape, q.data())
                                                 : Tensor::wrap(p.type, p.shape, w.data()));
  for (const auto& p : net.outputs())
    out.emplace(p.name, p.type == ElementType::i8 ? Tensor::wrap(p.type, p.shape, q_out.data())
                                                  : Tensor::wrap(p.type, p.shape, w_out.data()));
  REQUIRE(in.size() == 2);
  REQUIRE(out.size() == 2);
  net.run(in, out);
  CHECK(q_out == std::vector<std::int8_t>(8, 3));
  // w: k3 s2 p1/1 include-pad ceil divides every window by 9, so each output is the number of
  // in-bounds taps: 2, 3, 1 per axis.
  CHECK(w_out == std::vector<std::int32_t>{4, 6, 2, 6, 9, 3, 2, 3, 1});
}

TEST_CASE("Network::run: a dynamic Parameter, given by tensor name, takes the tensor's shape",
          "[network]") {
  using namespace irrun::testing;
  irrun::testing::ScratchDir dir("network");
  const std::string k2 =
      "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\" exclude-pad=\"true\" "
      "rounding_type=\"floor\" auto_pad=\"explicit\"";
  std::ofstream(dir.file("dyn.xml"))
      << net(parameter(0, "x", "1,1,?,?", {1, 1, -1, -1}, "f32", "FP32", "x_tensor") +
                 avg_pool(1, "p", "opset1", k2, {1, 1, -1, -1}, {1, 1, -1, -1}) +
                 result(2, "r", {1, 1, -1, -1}),
             edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
  const Network n = Network::load(dir.file("dyn.xml"));
  CHECK(n.inputs()[0].shape == Shape{1, 1, -1, -1});
  CHECK(n.outputs()[0].name == "r");
  CHECK(n.outputs()[0].shape == Shape{1, 1, -1, -1});
  // 2x4 iota: windows {0,1,4,5} and {2,3,6,7}.
  const auto x = iota(8);
  float out[2] = {};
  Tensors outputs{{"r", Tensor::wrap(ElementType::f32, {1, 1, 1, 2}, out)}};
  // The Parameter by its tensor name.
  n.run({{"x_tensor", Tensor::wrap(ElementType::f32, {1, 1, 2, 4}, x.data())}}, outputs);
  CHECK(out[0] == 2.5f);
  CHECK(out[1] == 4.5f);
  // A caller output of another shape (known once the input's is) is refused before compute.
  out[0] = out[1] = -1;
  outputs = {{"r", Tensor::wrap(ElementType::f32, {1, 1, 2, 1}, out)}};
  require_run_error(n, {{"x", Tensor::wrap(ElementType::f32, {1, 1, 2, 4}, x.data())}}, outputs,
                    ExitCode::bad_input, "output 'r' is f32 [1,1,1,2], the tensor given for it");
  CHECK(out[0] == -1);
  // The run is prepared again when the input's shape changes, and again when it changes back
  // (4x2 iota: windows {0,1,2,3} and {4,5,6,7}).
  outputs = {{"r", Tensor::wrap(ElementType::f32, {1, 1, 2, 1}, out)}};
  n.run({{"x", Tensor::wrap(ElementType::f32, {1, 1, 4, 2}, x.data())}}, outputs);
  CHECK(out[0] == 1.5f);
  CHECK(out[1] == 5.5f);
  outputs = {{"r", Tensor::wrap(ElementType::f32, {1, 1, 1, 2}, out)}};
  n.run({{"x", Tensor::wrap(ElementType::f32, {1, 1, 2, 4}, x.data())}}, outputs);
  CHECK(out[0] == 2.5f);
  CHECK(out[1] == 4.5f);
}

TEST_CASE("Network::run keeps the buffers between layers for the next run of the same shapes",
          "[network]") {
  // Each run on new data, on the same or other shapes, must give a freshly loaded Network's bits.
  irrun::testing::ScratchDir dir("network");
  const Shape dyn{1, 2, -1, -1};
  write_chain(dir.file("chain.xml"), "1,2,?,?", dyn, dyn);
  const Network n = Network::load(dir.file("chain.xml"), {{}, 2});
  const auto before = irrun::memory_in_use();
  int run = 0;
  for (const auto& [h, w] : {std::pair{6, 6}, {6, 6}, {8, 10}, {8, 10}, {6, 6}}) {
    CAPTURE(run, h, w);
    std::vector<float> x(2 * h * w);
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>((i * (7 + run)) % 13) - 6.0f;
    const Tensors in{{"x", Tensor::wrap(ElementType::f32, {1, 2, h, w}, x.data())}};
    std::vector<float> out(2 * (h / 2) * (w / 2), -1.0f);
    Tensors outputs{{"r", Tensor::wrap(ElementType::f32, {1, 2, h / 2, w / 2}, out.data())}};
    n.run(in, outputs);
    // Kept between runs: a's buffer of this run's shape only (allocations round up to 64 bytes).
    const auto kept = irrun::memory_in_use() - before;
    CHECK(kept >= x.size() * sizeof(float));
    CHECK(kept < x.size() * sizeof(float) + 64);
    const auto fresh = Network::load(dir.file("chain.xml")).run(in).at("r");
    CHECK(out == std::vector<float>(fresh.data<float>(), fresh.data<float>() + out.size()));
    ++run;
  }
}

TEST_CASE("Network::run under a memory limit keeps no buffers for the next run", "[network]") {
  // Buffers kept idle in one Network would count against the limit for every other allocation
  // (another Network's run, the caller's tensors), which only this Network's own run frees: a
  // second Network that fits on its own must still run, as it did before buffers were kept.
  irrun::testing::ScratchDir dir("network");
  const Shape x_shape{1, 4, 64, 64}, r_shape{1, 4, 32, 32};  // a's output: 64 KiB
  write_chain(dir.file("chain.xml"), "1,4,64,64", x_shape, r_shape);
  const Network first = Network::load(dir.file("chain.xml"), {{}, 1});
  const Network second = Network::load(dir.file("chain.xml"), {{}, 1});
  std::vector<float> x(4 * 64 * 64, 1.0f), r1(4 * 32 * 32), r2(r1.size());
  const Tensors in{{"x", Tensor::wrap(ElementType::f32, x_shape, x.data())}};
  Tensors out1{{"r", Tensor::wrap(ElementType::f32, r_shape, r1.data())}};
  Tensors out2{{"r", Tensor::wrap(ElementType::f32, r_shape, r2.data())}};
  // One run's peak (a's and b's outputs and their tables) fits, two runs' do not.
  const auto saved = irrun::memory_limit();
  irrun::set_memory_limit(irrun::memory_in_use() + 100 * 1024);
  const auto before = irrun::memory_in_use();
  CHECK_NOTHROW(first.run(in, out1));
  CHECK(irrun::memory_in_use() == before);
  CHECK_NOTHROW(second.run(in, out2));
  CHECK_NOTHROW(first.run(in, out1));
  irrun::set_memory_limit(saved);
  CHECK(r1 == r2);
  CHECK(r1[33] == 1.0f);  // b over a, away from the padding
}

// The memory check counts what a run allocates, each run: not the outputs computed into the
// caller's arrays (a fresh Network refused a run that allocates only window tables, over its
// wrapped 256 KiB output), and again for a map that names fewer outputs (a Network that had run
// skipped the check, computed the first output into the caller's array, then failed part way).
TEST_CASE("Network::run checks the memory it allocates, every run, before any compute",
          "[network]") {
  irrun::testing::ScratchDir dir("network");
  const Shape x_shape{1, 4, 64, 64}, r_shape{1, 4, 32, 32};  // a's output: 64 KiB, r's 16 KiB
  write_chain(dir.file("chain.xml"), "1,4,64,64", x_shape, r_shape);
  const Network net = Network::load(dir.file("chain.xml"), {{}, 1});
  std::vector<float> x(4 * 64 * 64, 1.0f), r(4 * 32 * 32, -1.0f);
  const Tensors in{{"x", Tensor::wrap(ElementType::f32, x_shape, x.data())}};
  Tensors out{{"r", Tensor::wrap(ElementType::f32, r_shape, r.data())}};
  const auto saved = irrun::memory_limit();
  // The limits count from here: the buffers a run without a limit keeps go at the next run.
  const auto base = irrun::memory_in_use();
  // a's output and the tables fit; with r's 16 KiB counted too, they do not.
  irrun::set_memory_limit(base + 72 * 1024);
  CHECK_NOTHROW(net.run(in, out));
  CHECK(r[33] == 1.0f);
  irrun::set_memory_limit(0);
  CHECK_NOTHROW(net.run(in, out));  // prepared for these shapes, without a limit
  Tensors fresh;                    // r now in irrun's memory: over the limit, before any compute
  irrun::set_memory_limit(base + 64 * 1024);
  require_run_error(net, in, fresh, ExitCode::limit, "chain.xml: running the model");
  CHECK(fresh.empty());
  irrun::set_memory_limit(saved);
}

TEST_CASE("Network::run refuses mismatching caller tensors before any compute", "[network]") {
  const Network net = Network::load(sample("avgpool_v11.xml"));
  const auto input = iota(3 * 8 * 8);
  std::vector<float> output(75, -1.0f);
  const auto in = [&](Shape shape, ElementType type = ElementType::f32) {
    return Tensors{{"input", Tensor::wrap(type, std::move(shape), input.data())}};
  };
  const Tensors good = in({1, 3, 8, 8});
  Tensors none;
  Tensors outputs;

  require_run_error(net, {}, none, ExitCode::bad_input,
                    "no tensor for input 'input' (f32 [1,3,8,8])");
  require_run_error(net, {{"nope", good.at("input")}}, none, ExitCode::bad_input,
                    "no input named 'nope' (inputs: 'input')");
  require_run_error(net, in({1, 3, 8, 8}, ElementType::f16), none, ExitCode::bad_input,
                    "given f16 [1,3,8,8]");
  require_run_error(net, in({1, 3, 8, 4}), none, ExitCode::bad_input, "given f32 [1,3,8,4]");
  require_run_error(net, in({3, 8, 8}), none, ExitCode::bad_input, "given f32 [3,8,8]");
  Tensors short_input{{"input", Tensor::wrap(ElementType::f32, {1, 3, 8, 8}, input.data())}};
  short_input.at("input").buffer = irrun::Buffer::wrap(input.data(), 100);
  require_run_error(net, short_input, none, ExitCode::bad_input,
                    "buffer holds 100 bytes, its shape needs 768");

  outputs = {{"other", Tensor::wrap(ElementType::f32, {1, 3, 5, 5}, output.data())}};
  require_run_error(net, good, outputs, ExitCode::bad_input,
                    "no output named 'other' (outputs: 'pool')");
  outputs = {{"pool", Tensor::wrap(ElementType::f32, {1, 3, 5, 5},
                                   static_cast<const float*>(output.data()))}};
  require_run_error(net, good, outputs, ExitCode::bad_input, "read-only");
  outputs = {{"pool", Tensor::wrap(ElementType::f64, {1, 3, 5, 5}, output.data())}};
  require_run_error(net, good, outputs, ExitCode::bad_input, "the tensor given for it is f64");
  CHECK(output == std::vector<float>(75, -1.0f));  // nothing written
}

TEST_CASE("Network::run refuses two outputs in overlapping memory", "[network]") {
  // Distinct outputs of two_inputs_v11 ([1,3,6,6] f32 and [1,1,4,4] f16) sharing bytes would
  // overwrite each other: refused before any compute.
  const Network two = Network::load(sample("two_inputs_v11.xml"));
  const std::vector<float> image(3 * 12 * 12, 2.0f);
  const std::vector<std::uint16_t> mask(100, 0x3C00);
  Tensors in;
  for (const auto& p : two.inputs())
    in.emplace(p.name, p.type == ElementType::f32 ? Tensor::wrap(p.type, p.shape, image.data())
                                                  : Tensor::wrap(p.type, p.shape, mask.data()));
  std::vector<float> shared(3 * 6 * 6, -1.0f);
  Tensors outputs;
  for (const auto& p : two.outputs())
    outputs.emplace(p.name, Tensor::wrap(p.type, p.shape, shared.data() + 10));
  require_run_error(two, in, outputs, ExitCode::bad_input, "are given overlapping memory");
  CHECK(shared == std::vector<float>(3 * 6 * 6, -1.0f));

  // One pooling output read by two Results: the same bytes for both are fine, as a run hands
  // them out (the map is then reused), and the values land there; bytes shifted by one are not.
  using namespace irrun::testing;
  irrun::testing::ScratchDir dir("network");
  const Shape x_shape{1, 1, 4, 4}, r_shape{1, 1, 2, 2};
  std::ofstream(dir.file("two_results.xml"))
      << net(parameter(0, "x", "1,1,4,4", x_shape) +
                 avg_pool(1, "p", "opset1",
                          "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\"",
                          x_shape, r_shape) +
                 result(2, "r1", r_shape) + result(3, "r2", r_shape),
             edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(1, 1, 3, 0));
  const Network one = Network::load(dir.file("two_results.xml"));
  REQUIRE(one.outputs().size() == 2);
  const auto x = iota(16);
  const Tensors x_in{{"x", Tensor::wrap(ElementType::f32, x_shape, x.data())}};
  auto reused = one.run(x_in);  // both names, one irrun-owned tensor
  CHECK(reused.at(one.outputs()[0].name).data<float>() ==
        reused.at(one.outputs()[1].name).data<float>());
  one.run(x_in, reused);
  std::vector<float> out(5, -1.0f);
  Tensors same, shifted;
  for (const auto& p : one.outputs()) {
    same.emplace(p.name, Tensor::wrap(ElementType::f32, r_shape, out.data()));
    shifted.emplace(p.name, Tensor::wrap(ElementType::f32, r_shape, out.data() + shifted.size()));
  }
  one.run(x_in, same);
  CHECK(std::vector<float>(out.begin(), out.begin() + 4) ==
        std::vector<float>{2.5f, 4.5f, 10.5f, 12.5f});
  CHECK(out[4] == -1.0f);
  require_run_error(one, x_in, shifted, ExitCode::bad_input, "are given overlapping memory");
}

TEST_CASE("Network::run names the ops it cannot execute", "[network]") {
  const Network net = Network::load(sample("multi_op_v11.xml"));
  const std::vector<float> x(3 * 16 * 16);
  Tensors none;
  require_run_error(
      net,
      {{net.inputs()[0].name, Tensor::wrap(net.inputs()[0].type, net.inputs()[0].shape, x.data())}},
      none, ExitCode::unsupported, "Convolution");
}

TEST_CASE("Network::run refuses caller memory misaligned for its element type", "[network]") {
  // Kernels access elements as their type: a misaligned pointer would be undefined behaviour.
  const Network net = Network::load(sample("avgpool_v11.xml"));
  alignas(64) static float storage[3 * 8 * 8 + 1];
  const auto* bytes = reinterpret_cast<const unsigned char*>(storage);
  const Tensors misaligned{
      {"input", Tensor::wrap(ElementType::f32, {1, 3, 8, 8}, static_cast<const void*>(bytes + 1))}};
  Tensors none;
  require_run_error(net, misaligned, none, ExitCode::bad_input,
                    "input 'input' (f32 [1,3,8,8]): the tensor's data is not aligned to its "
                    "4-byte elements");
  const Tensors good{{"input", Tensor::wrap(ElementType::f32, {1, 3, 8, 8}, storage)}};
  alignas(64) static unsigned char out[75 * 4 + 2];
  Tensors outputs{
      {"pool", Tensor::wrap(ElementType::f32, {1, 3, 5, 5}, static_cast<void*>(out + 2))}};
  require_run_error(net, good, outputs, ExitCode::bad_input,
                    "output 'pool' (f32 [1,3,5,5]): the tensor's data is not aligned to its "
                    "4-byte elements");
  // i8 has no alignment to keep.
  const Network q = Network::load(sample("avgpool_int_v11.xml"));
  alignas(64) static std::int8_t qin[2 * 16 + 1] = {};
  alignas(64) static std::int32_t win[16] = {};
  alignas(64) static std::int8_t qout[8 + 1];
  Tensors qo{{"q_pool", Tensor::wrap(ElementType::i8, {1, 2, 2, 2}, qout + 1)}};
  q.run({{"q", Tensor::wrap(ElementType::i8, {1, 2, 4, 4}, qin + 1)},
         {"w", Tensor::wrap(ElementType::i32, {1, 1, 4, 4}, win)}},
        qo);
  CHECK(qout[1] == 0);
}

// NetworkOptions::kernels: the 7x7 window of the kernel test "avg_pool and max_pool run the
// kernels asked for", whose average is an f32 midpoint: the fast kernels (every ISA) round it
// down, the reference kernels to even, one ulp apart.
TEST_CASE("NetworkOptions::kernels picks the fast kernels' ISA or the reference kernels",
          "[network]") {
  using namespace irrun::testing;
  irrun::testing::ScratchDir dir("network");
  std::ofstream(dir.file("k7.xml"))
      << net(parameter(0, "x", "1,1,7,8", {1, 1, 7, 8}) +
                 avg_pool(1, "p", "opset1",
                          "kernel=\"7,7\" strides=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\" "
                          "exclude-pad=\"true\"",
                          {1, 1, 7, 8}, {1, 1, 1, 2}) +
                 result(2, "r", {1, 1, 1, 2}),
             edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
  std::vector<float> x(56, 1.5f);
  x[0] = 2.5f;
  x[1] = 1.5f + 0x1p-17f + 0x1p-20f + 0x1p-23f;
  x[2] = 0.5f + 0x1p-24f;
  for (const auto k : {irrun::Kernels::best, irrun::Kernels::avx2, irrun::Kernels::portable,
                       irrun::Kernels::reference}) {
    irrun::NetworkOptions options;
    options.kernels = k;
    const Network n = Network::load(dir.file("k7.xml"), options);
    const auto out = n.run({{"x", Tensor::wrap(ElementType::f32, {1, 1, 7, 8}, x.data())}});
    INFO("kernels " << static_cast<int>(k));
    CHECK(out.at("r").data<float>()[0] ==
          (k == irrun::Kernels::reference ? 1.5f + 0x1p-22f : 1.5f + 0x1p-23f));
  }
}

TEST_CASE("NetworkOptions::threads beyond 0..max_threads is a usage error", "[network]") {
  for (const int threads : {-1, irrun::NetworkOptions::max_threads + 1, 20000}) {
    irrun::NetworkOptions options;
    options.threads = threads;
    INFO(threads);
    try {
      Network::load(sample("avgpool_v11.xml"), options);
      FAIL("no error");
    } catch (const irrun::Error& e) {
      CHECK(e.code() == ExitCode::usage);
      CHECK_THAT(e.what(), Catch::Contains("threads = " + std::to_string(threads)));
    }
  }
  irrun::NetworkOptions options;
  options.threads = irrun::NetworkOptions::max_threads;
  const Network net = Network::load(sample("avgpool_v11.xml"), options);
  CHECK(net.check().passed());
}

// The boundary Network's entry points share (irrun/api_boundary.hpp, internal): std::bad_alloc
// from inside (no memory limit to refuse the allocation first) leaves as Error(limit), anything
// else unchanged. Tested with thrown exceptions rather than gigabytes.
TEST_CASE("The API boundary turns std::bad_alloc into Error(limit)", "[network]") {
  const auto through_boundary = [](auto thrower) {
    try {
      thrower();
    } catch (...) {
      irrun::rethrow_at_api_boundary("m.xml", "running the model");
    }
  };
  try {
    through_boundary([] { throw std::bad_alloc(); });
    FAIL("no error");
  } catch (const irrun::Error& e) {
    CHECK(e.code() == ExitCode::limit);
    CHECK_THAT(e.what(), Catch::StartsWith("m.xml: out of memory running the model ("));
  }
  CHECK_THROWS_AS(through_boundary([] { throw std::bad_array_new_length(); }), irrun::Error);
  try {
    through_boundary([] { throw irrun::input_error("bad input"); });
    FAIL("no error");
  } catch (const irrun::Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    CHECK(std::string(e.what()) == "bad input");
  }
  CHECK_THROWS_AS(through_boundary([] { throw std::out_of_range("x"); }), std::out_of_range);
  try {
    through_boundary([] {
      throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                              "thread");
    });
    FAIL("no error");
  } catch (const irrun::Error& e) {
    CHECK(e.code() == ExitCode::limit);
    CHECK_THAT(e.what(), Catch::StartsWith("m.xml: running the model: thread"));
  }
}
