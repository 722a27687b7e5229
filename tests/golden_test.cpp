#include "irrun/golden.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "irrun/error.hpp"
#include "irrun/npy.hpp"
#include "support/error_of.hpp"
#include "support/scratch_dir.hpp"

TEST_CASE("file_stem: safe characters kept, the rest '_', long names cut with a digest",
          "[golden]") {
  struct Case {
    std::string name, stem;
  };
  const Case cases[] = {
      {"pool", "pool"},
      {"pool5/sink_port_0", "pool5_sink_port_0"},
      {"a b:c\\d", "a_b_c_d"},
      {"v1.2-x", "v1.2-x"},
      {"", "output"},
      {".", "output"},
      {"..", "output"},
      {"...", "..."},
      {std::string(200, 'n'), std::string(200, 'n')},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    CHECK(irrun::file_stem(c.name) == c.stem);
  }
  // Over kMaxStem: the first 183 characters, '-', 16 hex digits of the name's sha256.
  const std::string a = std::string(252, 'n'), b = std::string(251, 'n') + "m";
  const auto sa = irrun::file_stem(a), sb = irrun::file_stem(b);
  CHECK(sa.size() == irrun::kMaxStem);
  CHECK(sa.substr(0, 184) == std::string(183, 'n') + "-");
  CHECK(sa.find_first_not_of("0123456789abcdef", 184) == std::string::npos);
  CHECK(sb.size() == irrun::kMaxStem);
  CHECK(sa != sb);  // same start, different names: different files
  CHECK(irrun::file_stem(a) == sa);
}

using irrun::testing::error_of;

// A bf16 input is saved widened to f32: the .npy irrun wrote for it is the same bytes again (a
// refresh replaying a golden that recorded its own saved input as the source), its raw bf16
// bytes are not.
TEST_CASE("write_golden: a saved input replaces its own file only with the same bytes",
          "[golden]") {
  irrun::testing::ScratchDir dir("golden-own");
  auto t = irrun::Tensor::zeros(irrun::ElementType::bf16, {1, 2, 3});
  for (std::size_t i = 0; i < 6; ++i) {
    const std::uint16_t b = static_cast<std::uint16_t>(0x3f80 + 0x11 * i);  // 1.0 and up
    std::memcpy(t.buffer.mutable_data() + 2 * i, &b, 2);
  }
  const auto own = dir.file("g/inputs/x.npy");
  std::filesystem::create_directories(dir.file("g/inputs"));
  irrun::write_npy(own, t);
  const auto widened = irrun::testing::read_text(own);
  irrun::Manifest m;
  m.model_xml = {dir.file("m.xml"), ""};
  const std::vector<irrun::RunInput> inputs{{"x", &t, own}};
  const auto written = irrun::write_golden(dir.file("g"), m, inputs, {}, true, true);
  CHECK(irrun::testing::read_text(own) == widened);
  CHECK(written.inputs.at(0).file == "inputs/x.npy");

  const std::string raw(reinterpret_cast<const char*>(t.buffer.data()), t.byte_size());
  dir.write("g/inputs/x.npy", raw);
  const auto msg = error_of([&] { irrun::write_golden(dir.file("g"), m, inputs, {}, true, true); },
                            irrun::ExitCode::usage);
  CHECK(msg.find("saved input 'x' would replace its --input file") != std::string::npos);
  CHECK(msg.find("the f32 [1,2,3] .npy") != std::string::npos);
  CHECK(irrun::testing::read_text(own) == raw);
}

TEST_CASE("write_golden: the manifest never replaces an input file", "[golden]") {
  irrun::testing::ScratchDir dir("golden-own");
  const auto t = irrun::Tensor::zeros(irrun::ElementType::f32, {2});
  const auto input = dir.write("manifest.json", std::string(8, '\0'));
  irrun::Manifest m;
  m.model_xml = {dir.file("m.xml"), ""};
  const auto msg = error_of(
      [&] {
        irrun::write_golden(dir.path().string(), m, {{"x", &t, input}}, {}, true, false);
      },
      irrun::ExitCode::usage);
  CHECK(msg.find("the manifest would replace the file of input 'x'") != std::string::npos);
  CHECK(irrun::testing::read_text(input) == std::string(8, '\0'));
}
