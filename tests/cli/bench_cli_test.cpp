// End-to-end tests of `irrun bench`: which layers it reports and the bytes it counts (never the
// timings themselves).
#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "cli/cli_support.hpp"
#include "support/ir_text.hpp"
#include "support/scratch_dir.hpp"

using irrun::testing::run_irrun;
using irrun::testing::sample;

TEST_CASE("irrun bench reports every pooling layer, MaxPool included", "[cli][bench]") {
  const auto r = run_irrun({"bench", sample("maxpool_chain_v10.xml"), "--format", "json",
                            "--repeat", "1", "--warmup", "0", "--threads", "1"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  const auto j = nlohmann::json::parse(r.out);
  std::map<std::string, std::pair<std::string, std::size_t>> layers;
  for (const auto& l : j["layers"])
    layers[l["name"].get<std::string>()] = {l["type"].get<std::string>(),
                                            l["bytes"].get<std::size_t>()};
  REQUIRE(layers.size() == 3);
  // Bytes read and written, f32 unless said: max1 reads [1,3,10,10] and writes [1,3,5,5];
  // max14 reads [1,3,5,5] and writes values [1,3,3,3] and i32 indices [1,3,3,3].
  CHECK(layers["max1"] == std::pair<std::string, std::size_t>{"MaxPool", 4 * (300 + 75)});
  CHECK(layers["max14"] == std::pair<std::string, std::size_t>{"MaxPool", 4 * (75 + 27 + 27)});
  CHECK(layers["avg"] == std::pair<std::string, std::size_t>{"AvgPool", 4 * (300 + 108)});

  const auto one = run_irrun(
      {"bench", sample("maxpool_v11.xml"), "--layer", "max", "--repeat", "1", "--warmup", "0"});
  CHECK(one.exit_code == 0);
  CHECK(one.out.find("max ") != std::string::npos);
  CHECK(one.out.find("MaxPool") != std::string::npos);
}

TEST_CASE("irrun bench's text table fits long layer names", "[cli][bench]") {
  // Converted models name layers by their scope (60+ characters): every column still lines up.
  std::ifstream src(sample("avgpool_v11.xml"));
  std::string xml((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
  const std::string long_name =
      "Model/Stage_5/Block_3/Branch_2/AvgPool_0a_3x3/AvgPool_with_a_long_scope";
  const auto at = xml.find("name=\"pool\"");
  REQUIRE(at != std::string::npos);
  xml.replace(at, 11, "name=\"" + long_name + "\"");
  irrun::testing::ScratchDir dir("bench_names");
  const auto path = dir.path() / "long_names.xml";
  std::ofstream(path) << xml;

  const auto r = run_irrun({"bench", path.string(), "--repeat", "1", "--warmup", "0"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> lines;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);)
    if (line.rfind("layer ", 0) == 0 || line.rfind(long_name, 0) == 0 ||
        line.rfind("total ", 0) == 0)
      lines.push_back(line);
  REQUIRE(lines.size() == 3);
  // The type column starts one space after the longest name, on every line.
  for (const auto& line : lines) {
    CHECK(line.size() > long_name.size() + 1);
    CHECK(line[long_name.size()] == ' ');
    CHECK(line[long_name.size() + 1] != ' ');
  }
}

// Each run computes into the outputs of the run before. A Result that passes an input through
// returns the input itself (read-only when the file is mapped), and one pooling output may feed
// two Results: runs after the first must still take every output, from a file input or a random
// one.
TEST_CASE("irrun bench reuses its outputs from run to run", "[cli][bench]") {
  std::ifstream src(sample("avgpool_v11.xml"));
  std::string xml((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
  const std::string results =
      "<layer id=\"3\" name=\"passthrough\" type=\"Result\" version=\"opset1\"><input><port "
      "id=\"0\" precision=\"FP32\"><dim>1</dim><dim>3</dim><dim>8</dim><dim>8</dim></port></input>"
      "</layer><layer id=\"4\" name=\"again\" type=\"Result\" version=\"opset1\"><input><port "
      "id=\"0\" precision=\"FP32\"><dim>1</dim><dim>3</dim><dim>5</dim><dim>5</dim></port></input>"
      "</layer>";
  const std::string edges =
      "<edge from-layer=\"0\" from-port=\"0\" to-layer=\"3\" to-port=\"0\" />"
      "<edge from-layer=\"1\" from-port=\"1\" to-layer=\"4\" to-port=\"0\" />";
  xml.insert(xml.find("</layers>"), results);
  xml.insert(xml.find("</edges>"), edges);
  irrun::testing::ScratchDir dir("bench_reuse");
  const auto model = dir.path() / "three_results.xml";
  std::ofstream(model) << xml;
  const auto input = dir.path() / "x.bin";
  std::ofstream(input, std::ios::binary) << std::string(4 * 192, '\0');

  for (const bool from_file : {true, false}) {
    std::vector<std::string> args = {"bench", model.string(), "--repeat", "3", "--warmup",
                                     "1",     "--format",     "json"};
    if (from_file) args.insert(args.end(), {"--input", input.string()});
    const auto r = run_irrun(args);
    INFO(r.out << r.err);
    REQUIRE(r.exit_code == 0);
    const auto j = nlohmann::json::parse(r.out);
    REQUIRE(j["layers"].size() == 1);
    CHECK(j["layers"][0]["name"] == "pool");
  }
}

// A v10 IR hands out an f16 output as f32, converted into a fresh tensor each run: run_model
// cannot compute into the last run's f32 tensor, so bench must not hold it (it had doubled the
// outputs' memory: over --max-memory where `run` fits, and over inputs + outputs + 64 MiB).
TEST_CASE("irrun bench holds no output it cannot compute into", "[cli][bench][memory]") {
  using namespace irrun::testing;
  const std::vector<std::int64_t> dims = {1, 4, 256, 256};  // f16 in 512 KiB, f32 out 1 MiB
  auto xml = net(parameter(0, "x", "1,4,256,256", dims, "f16", "FP16") +
                     avg_pool(1, "pool", "opset1",
                              "kernel=\"3,3\" strides=\"1,1\" pads_begin=\"1,1\" "
                              "pads_end=\"1,1\" exclude-pad=\"false\" rounding_type=\"floor\"",
                              dims, dims, "FP16") +
                     result(2, "r", dims, "FP16"),
                 edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
  xml.replace(xml.find("version=\"11\""), 12, "version=\"10\"");
  ScratchDir dir("bench_v10_memory");
  const auto model = dir.write("f16_v10.xml", xml);
  // One run holds the input, the f16 output and its f32 conversion: 2 MiB and the window tables.
  const auto one = run_irrun({"--max-memory", "2560K", "run", model, "--random-input"});
  INFO(one.err);
  REQUIRE(one.exit_code == 0);
  const auto r = run_irrun({"--max-memory", "2560K", "bench", model, "--repeat", "3", "--warmup",
                            "0", "--format", "json"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(nlohmann::json::parse(r.out)["layers"].size() == 1);
}

// The header line names the model with its control characters escaped, as check and info do: a
// path holding a newline must not split the table's first line.
TEST_CASE("irrun bench on a model it cannot run whole points to its --layer", "[cli][bench]") {
  // The hint had said "irrun run --layer NAME" to a bench user.
  const auto r = run_irrun({"bench", sample("multi_op_v11.xml")});
  INFO(r.err);
  CHECK(r.exit_code == 6);
  CHECK_THAT(r.err, Catch::Contains(
                        "(--layer NAME, of irrun run and irrun bench, runs one pooling layer"));
  CHECK(run_irrun({"bench", sample("multi_op_v11.xml"), "--layer", "pool", "--repeat", "1",
                   "--warmup", "0"})
            .exit_code == 0);
}

TEST_CASE("irrun bench's header is one line whatever the path holds", "[cli][bench]") {
  std::ifstream src(sample("avgpool_v11.xml"));
  std::string xml((std::istreambuf_iterator<char>(src)), std::istreambuf_iterator<char>());
  irrun::testing::ScratchDir dir("bench_path");
  const auto model = dir.write("a\nb.xml", xml);
  const auto r = run_irrun({"bench", model, "--repeat", "1", "--warmup", "0"});
  INFO(r.out << r.err);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> lines;
  std::istringstream out(r.out);
  for (std::string line; std::getline(out, line);) lines.push_back(line);
  REQUIRE(lines.size() == 4);  // header, column names, the layer, the total
  CHECK(lines[0].find("a\\nb.xml: ") != std::string::npos);
  CHECK(lines[1].rfind("layer ", 0) == 0);
}

// The timings' storage is checked against --max-memory before the first run: --repeat 10^9 is
// 8 GB per layer and the total, exit 7 at once rather than an allocation failure hours in.
TEST_CASE("irrun bench refuses a --repeat whose timings pass --max-memory", "[cli][bench]") {
  const auto r = run_irrun(
      {"--max-memory", "64M", "bench", sample("maxpool_chain_v10.xml"), "--repeat", "1000000000"});
  INFO(r.out << r.err);
  CHECK(r.exit_code == 7);
  CHECK(r.err.find("--repeat") != std::string::npos);
  CHECK(r.err.find("(--max-memory)") != std::string::npos);  // the tool's name for the limit
  CHECK(r.out.empty());
}
