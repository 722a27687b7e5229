// Hostile inputs at the library level: deep nesting and entity tricks in the XML, graphs whose
// size would expose quadratic or recursive code, and the memory limit with its size arithmetic.
// (tests/cli/bad_inputs_test.cpp runs the catalogue of bad files through the binary.)
#include <sys/stat.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>

#include "irrun/analysis.hpp"
#include "irrun/blob.hpp"
#include "irrun/check.hpp"
#include "irrun/error.hpp"
#include "irrun/executor.hpp"
#include "irrun/graph.hpp"
#include "irrun/ir_reader.hpp"
#include "irrun/npy.hpp"
#include "irrun/pool_geometry.hpp"
#include "irrun/tensor.hpp"

namespace {

using irrun::ElementType;

// Restores the process-wide memory limit when a test ends.
struct MemoryLimit {
  std::uint64_t saved = irrun::memory_limit();
  explicit MemoryLimit(std::uint64_t bytes) { irrun::set_memory_limit(bytes); }
  ~MemoryLimit() { irrun::set_memory_limit(saved); }
};

std::string port(int id, const std::string& dims, const char* precision = "FP32") {
  std::string s = "<port id=\"" + std::to_string(id) + "\" precision=\"" + precision + "\">";
  std::string d;
  for (char c : dims + ",") {
    if (c == ',') {
      s += "<dim>" + d + "</dim>";
      d.clear();
    } else {
      d += c;
    }
  }
  return s + "</port>";
}

std::string pool_layer(std::uint64_t id, const std::string& data, const std::string& in,
                       const std::string& out, const char* version = "opset1") {
  return "<layer id=\"" + std::to_string(id) + "\" name=\"p" + std::to_string(id) +
         "\" type=\"AvgPool\" version=\"" + version + "\"><data " + data + "/><input>" +
         port(0, in) + "</input><output>" + port(1, out) + "</output></layer>\n";
}

std::string param_layer(std::uint64_t id, const std::string& dims) {
  return "<layer id=\"" + std::to_string(id) +
         "\" name=\"in\" type=\"Parameter\" version=\"opset1\"><data shape=\"" + dims +
         "\" element_type=\"f32\"/><output>" + port(0, dims) + "</output></layer>\n";
}

std::string result_layer(std::uint64_t id, const std::string& dims) {
  return "<layer id=\"" + std::to_string(id) +
         "\" name=\"out\" type=\"Result\" version=\"opset1\"><input>" + port(0, dims) +
         "</input></layer>\n";
}

std::string edge(std::uint64_t from, int from_port, std::uint64_t to, int to_port) {
  return "<edge from-layer=\"" + std::to_string(from) + "\" from-port=\"" +
         std::to_string(from_port) + "\" to-layer=\"" + std::to_string(to) + "\" to-port=\"" +
         std::to_string(to_port) + "\"/>\n";
}

std::string net(const std::string& layers, const std::string& edges,
                const std::string& extra = "") {
  return "<?xml version=\"1.0\"?>\n<net name=\"n\" version=\"11\"><layers>\n" + layers +
         "</layers><edges>\n" + edges + "</edges>" + extra + "</net>\n";
}

const std::string kPoolData =
    "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\" rounding_type=\"floor\"";

std::string small_model(const std::string& extra = "", const std::string& name_attr = "") {
  std::string layers = param_layer(0, "1,1,4,4") +
                       pool_layer(1, kPoolData + name_attr, "1,1,4,4", "1,1,2,2") +
                       result_layer(2, "1,1,2,2");
  return net(layers, edge(0, 0, 1, 0) + edge(1, 1, 2, 0), extra);
}

irrun::Model model_of(const std::string& xml) {
  irrun::Model m;
  m.ir = irrun::parse_ir(xml, "m.xml");
  m.graph = irrun::build_graph(m.ir);
  return m;
}

}  // namespace

TEST_CASE("1,000,000-deep element nesting parses and is destroyed without recursion",
          "[robustness][slow]") {
  constexpr std::size_t kDepth = 1000000;
  std::string nest = "<rt_info>";
  for (std::size_t i = 0; i < kDepth; ++i) nest += "<a>";
  SECTION("balanced: the model reads normally") {
    std::string balanced = nest;
    for (std::size_t i = 0; i < kDepth; ++i) balanced += "</a>";
    const auto m = irrun::parse_ir(small_model(balanced + "</rt_info>"), "deep.xml");
    CHECK(m.layers.size() == 3);
  }
  SECTION("never closed: a parse error") {
    CHECK_THROWS_AS(irrun::parse_ir(small_model(nest), "deep.xml"), irrun::ModelError);
  }
}

TEST_CASE("DOCTYPE entities are neither expanded nor fetched", "[robustness]") {
  std::string doctype = "<?xml version=\"1.0\"?>\n<!DOCTYPE net [\n<!ENTITY lol \"lol\">\n";
  std::string prev = "lol";
  for (int i = 1; i <= 9; ++i) {
    std::string body;
    for (int k = 0; k < 10; ++k) body += "&" + prev + ";";
    doctype += "<!ENTITY lol" + std::to_string(i) + " \"" + body + "\">\n";
    prev = "lol" + std::to_string(i);
  }
  doctype += "<!ENTITY xxe SYSTEM \"file:///etc/passwd\">\n]>\n";
  std::string xml = small_model();
  xml.replace(0, xml.find('\n') + 1, doctype);
  xml.replace(xml.find("name=\"in\""), 9, "name=\"&lol9;&xxe;\"");
  const auto m = irrun::parse_ir(xml, "laughs.xml");
  REQUIRE(m.layers.size() == 3);
  CHECK(m.layers[0].name == "&lol9;&xxe;");  // left as written, never expanded
}

TEST_CASE("a layer with 100,000 inputs builds without a quadratic port lookup",
          "[robustness][slow]") {
  constexpr int kInputs = 100000;
  std::string layers = param_layer(0, "1");
  std::string inputs;
  std::string edges;
  inputs.reserve(kInputs * 60);
  for (int i = 0; i < kInputs; ++i) {
    inputs += port(kInputs - i, "1");  // ids in reverse order: a linear scan is worst-case
    edges += edge(0, 0, 1, kInputs - i);
  }
  layers += "<layer id=\"1\" name=\"cat\" type=\"Concat\" version=\"opset1\"><input>" + inputs +
            "</input><output>" + port(0, "100000") + "</output></layer>\n" +
            result_layer(2, "100000");
  edges += edge(1, 0, 2, 0);
  const std::string xml = net(layers, edges);
  // Tests do not time things: the quadratic lookup this guards against made this case take
  // about 11 s instead of 0.02 s, which shows in the suite's run time, not in an assertion.
  auto ir = irrun::parse_ir(xml, "wide.xml");
  const auto g = irrun::build_graph(ir);
  CHECK(g.nodes[1].inputs.size() == kInputs);
  CHECK(g.nodes[1].inputs.back().node == 0);
}

TEST_CASE("a 100,000-layer AvgPool chain infers and runs", "[robustness][slow]") {
  constexpr std::uint64_t kChain = 100000;
  const std::string data =
      "kernel=\"1,1\" strides=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\" rounding_type=\"floor\"";
  std::string layers = param_layer(0, "1,1,2,2");
  std::string edges = edge(0, 0, 1, 0);
  layers.reserve(kChain * 400);
  for (std::uint64_t k = 1; k <= kChain; ++k) {
    layers += pool_layer(k, data, "1,1,2,2", "1,1,2,2");
    edges += edge(k, 1, k + 1, 0);
  }
  layers += result_layer(kChain + 1, "1,1,2,2");
  const auto m = model_of(net(layers, edges));
  const auto a = irrun::analyze(m.ir, m.graph, nullptr);
  CHECK(a.diagnostics.empty());
  std::map<std::size_t, irrun::Tensor> inputs{
      {0, irrun::random_tensor(ElementType::f32, {1, 1, 2, 2}, 3)}};
  const irrun::Parallel parallel(1);
  const auto out = irrun::run_model(m, inputs, parallel);
  REQUIRE(out.size() == 1);
  CHECK(out[0].tensor.shape == std::vector<std::int64_t>{1, 1, 2, 2});
}

TEST_CASE("memory sizes parse with binary suffixes", "[robustness][limits]") {
  CHECK(irrun::parse_memory_size("1048576") == 1048576u);
  CHECK(irrun::parse_memory_size("512M") == 512ull << 20);
  CHECK(irrun::parse_memory_size("8G") == 8ull << 30);
  CHECK(irrun::parse_memory_size("8g") == 8ull << 30);
  CHECK(irrun::parse_memory_size("2GiB") == 2ull << 30);
  CHECK(irrun::parse_memory_size("64KB") == 64ull << 10);
  CHECK(irrun::parse_memory_size("1T") == 1ull << 40);
  CHECK(irrun::parse_memory_size("100B") == 100u);
  CHECK_FALSE(irrun::parse_memory_size(""));
  CHECK_FALSE(irrun::parse_memory_size("M"));
  CHECK_FALSE(irrun::parse_memory_size("-1G"));
  CHECK_FALSE(irrun::parse_memory_size("1.5G"));
  CHECK_FALSE(irrun::parse_memory_size("12Q"));
  CHECK_FALSE(irrun::parse_memory_size("16E"));  // 2^64 overflows
  CHECK_FALSE(irrun::parse_memory_size("99999999999999999999"));
  CHECK(irrun::default_memory_limit() > 0);
}

TEST_CASE("allocations beyond the memory limit fail before allocating", "[robustness][limits]") {
  const MemoryLimit limit(1 << 20);
  const auto before = irrun::memory_in_use();
  try {
    (void)irrun::Tensor::zeros(ElementType::f32, {1024, 1024});
    FAIL("no error");
  } catch (const irrun::Error& e) {
    CHECK(e.code() == irrun::ExitCode::limit);
    CHECK_THAT(std::string(e.what()),
               Catch::Contains("f32 [1024,1024] tensor needs 4.0 MiB") &&
                   Catch::Contains("over the memory limit of 1.0 MiB (set_memory_limit)"));
  }
  CHECK(irrun::memory_in_use() == before);
  {
    const auto t = irrun::Tensor::zeros(ElementType::f32, {300, 256});  // 300 KiB fits
    CHECK(irrun::memory_in_use() >= before + 300 * 1024);
    // A second and third fit, a fourth does not: the limit counts what is held.
    const auto t2 = irrun::Tensor::zeros(ElementType::f32, {300, 256});
    const auto t3 = irrun::Tensor::zeros(ElementType::f32, {300, 256});
    CHECK_THROWS_AS(irrun::Tensor::zeros(ElementType::f32, {300, 256}), irrun::Error);
    CHECK_THROWS_AS(irrun::Buffer::allocate(200 * 1024), irrun::Error);
  }
  CHECK(irrun::memory_in_use() == before);
  // Overflowing sizes are limit errors too, never wrapped allocations.
  for (auto type : {ElementType::f32, ElementType::u1}) {
    try {
      (void)irrun::random_tensor(type, {INT64_MAX, 3}, 1);
      FAIL("no error");
    } catch (const irrun::Error& e) {
      CHECK(e.code() == irrun::ExitCode::limit);
    }
  }
  CHECK_THROWS_AS(irrun::Buffer::allocate(SIZE_MAX - 3), irrun::Error);
}

TEST_CASE("run_model checks its peak memory before computing", "[robustness][limits]") {
  // 4x4 -> pads_end 2000: a [1,1,2004,2004] f32 output (16 MB) from a 64-byte input.
  const std::string data =
      "kernel=\"1,1\" strides=\"1,1\" pads_begin=\"0,0\" pads_end=\"2000,2000\" "
      "exclude-pad=\"false\"";
  const auto m =
      model_of(net(param_layer(0, "1,1,4,4") + pool_layer(1, data, "1,1,4,4", "1,1,2004,2004") +
                       result_layer(2, "1,1,2004,2004"),
                   edge(0, 0, 1, 0) + edge(1, 1, 2, 0)));
  std::map<std::size_t, irrun::Tensor> inputs{
      {0, irrun::random_tensor(ElementType::f32, {1, 1, 4, 4}, 3)}};
  const irrun::Parallel parallel(1);
  {
    const MemoryLimit limit(8 << 20);
    const auto before = irrun::memory_in_use();
    try {
      (void)irrun::run_model(m, inputs, parallel);
      FAIL("no error");
    } catch (const irrun::Error& e) {
      CHECK(e.code() == irrun::ExitCode::limit);
      CHECK_THAT(std::string(e.what()),
                 Catch::Contains("m.xml: running the model (largest output: layer 1 'p1' "
                                 "(AvgPool-1 opset1), f32 [1,1,2004,2004]) needs 15.4 MiB"));
    }
    CHECK(irrun::memory_in_use() == before);
  }
  const MemoryLimit limit(64 << 20);
  CHECK(irrun::run_model(m, inputs, parallel).at(0).tensor.shape ==
        std::vector<std::int64_t>{1, 1, 2004, 2004});
}

TEST_CASE("AdaptiveAvgPool output_size is bounded", "[robustness][limits]") {
  const irrun::PartialShape in({irrun::Dim::fixed(1), irrun::Dim::fixed(2), irrun::Dim::fixed(4)});
  const irrun::PartialShape size_shape({irrun::Dim::fixed(1)});
  CHECK_THROWS_WITH(
      irrun::infer_adaptive_avg_pool(in, size_shape, std::vector<std::int64_t>{INT64_C(1) << 62}),
      Catch::Contains("output_size value 4611686018427387904 at axis 0 is out of "
                      "range (max 1099511627776)"));
  const irrun::PartialShape wide(
      {irrun::Dim::fixed(1), irrun::Dim::fixed(1), irrun::Dim::fixed(INT64_C(1) << 40)});
  CHECK_THROWS_WITH(
      irrun::infer_adaptive_avg_pool(wide, size_shape, std::vector<std::int64_t>{INT64_C(1) << 40}),
      Catch::Contains("overflows 64-bit bin arithmetic"));
  CHECK(irrun::infer_adaptive_avg_pool(in, size_shape, std::vector<std::int64_t>{INT64_C(1) << 40})
            .output == irrun::PartialShape::from_static({1, 2, INT64_C(1) << 40}));
}

TEST_CASE("read_ir refuses an IR whose parse would not fit the memory limit",
          "[robustness][limits]") {
  const std::string path = std::string(IRRUN_SAMPLES_DIR) + "/avgpool_v11.xml";
  {
    const MemoryLimit limit(1024);
    try {
      (void)irrun::read_ir(path);
      FAIL("no error");
    } catch (const irrun::Error& e) {
      CHECK(e.code() == irrun::ExitCode::limit);
      CHECK_THAT(std::string(e.what()), Catch::Contains("avgpool_v11.xml: parsing this") &&
                                            Catch::Contains("over the memory limit of 1.0 KiB"));
    }
  }
  const MemoryLimit limit(1 << 20);
  CHECK(irrun::read_ir(path).layers.size() == 3);
}

TEST_CASE("check_file reports a file over the memory limit as its own error",
          "[robustness][limits]") {
  const std::string path = std::string(IRRUN_SAMPLES_DIR) + "/avgpool_chain_v10.xml";
  const MemoryLimit limit(1024);
  const auto report = irrun::check_file(path, {});  // no throw: the next file is still checked
  CHECK_FALSE(report.passed());
  CHECK_FALSE(report.model.has_value());
  REQUIRE(report.diagnostics.size() == 1);
  const auto line = irrun::format(report, report.diagnostics[0]);
  CHECK_THAT(line, Catch::StartsWith(path + ": error: parsing this ") &&
                       Catch::EndsWith(
                           "over the memory limit of 1.0 KiB (set_memory_limit) [memory-limit]"));
}

TEST_CASE("Buffer::map_file refuses FIFOs and devices without blocking", "[robustness]") {
  const auto fifo = std::filesystem::temp_directory_path() /
                    ("irrun-robustness-fifo-" + std::to_string(::getpid()));
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Opening a FIFO without a writer blocked forever before O_NONBLOCK.
  CHECK_THROWS_AS(irrun::Buffer::map_file(fifo.string(), 0, 0), std::system_error);
  std::filesystem::remove(fifo);
  CHECK_THROWS_AS(irrun::Buffer::map_file("/dev/zero", 0, 16), std::system_error);
}
