#include "irrun/manifest.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli_support.hpp"
#include "irrun/error.hpp"

using namespace irrun;

namespace {

Manifest sample_manifest() {
  Manifest m;
  m.irrun_version = "0.1.0";
  m.model_xml = {"samples/adaptive_v11.xml", std::string(64, 'a')};
  m.model_bin = FileDigest{"samples/adaptive_v11.bin", std::string(64, 'b')};
  m.run.layer = "pool";
  m.run.shapes = {"x=1,2,7,9"};
  m.run.seed = 18446744073709551615ULL;  // the whole uint64 range survives JSON
  m.run.threads = 2;
  ManifestTensor in;
  in.name = "x";
  in.type = ElementType::f32;
  in.shape = {1, 2, 7, 9};
  in.file = "inputs/x.npy";
  in.sha256 = std::string(64, 'c');
  in.data_sha256 = std::string(64, 'd');
  in.source = "random";
  m.inputs.push_back(in);
  ManifestTensor out;
  out.name = "pool";
  out.type = ElementType::bf16;
  out.shape = {1, 2, 3, 4};
  out.file = "pool.npy";
  out.sha256 = std::string(64, 'e');
  out.data_sha256 = std::string(64, 'f');
  m.outputs.push_back(out);
  return m;
}

void require_input_error(const std::string& text, const std::string& part) {
  try {
    parse_manifest(text, "m.json");
    FAIL("no exception for " << text);
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    CHECK_THAT(e.what(), Catch::Contains("m.json: not an irrun manifest") && Catch::Contains(part));
  }
}

}  // namespace

TEST_CASE("manifest: round trip through JSON", "[manifest]") {
  const auto m = sample_manifest();
  const auto text = to_json(m);
  CHECK(text.back() == '\n');
  const auto back = parse_manifest(text, "m.json");
  CHECK(to_json(back) == text);
  CHECK(back.run.layer == std::optional<std::string>("pool"));
  CHECK(back.run.seed == m.run.seed);
  CHECK(back.outputs.at(0).type == ElementType::bf16);
  CHECK(back.inputs.at(0).file == "inputs/x.npy");
  CHECK(back.model_bin->path == "samples/adaptive_v11.bin");
}

TEST_CASE("manifest: the documented schema", "[manifest]") {
  const auto j = nlohmann::json::parse(to_json(sample_manifest()));
  CHECK(j["format"] == "irrun-golden");
  CHECK(j["format_version"] == 1);
  CHECK(j["model"]["xml"]["sha256"] == std::string(64, 'a'));
  CHECK(j["options"]["random_input"] == true);
  CHECK(j["options"]["layer"] == "pool");
  CHECK(j["options"]["output_format"] == "npy");
  CHECK(j["informational"]["threads"] == 2);
  CHECK(j["outputs"][0]["shape"] == nlohmann::json::array({1, 2, 3, 4}));
  CHECK(j["outputs"][0]["type"] == "bf16");
  CHECK(j["inputs"][0]["source"] == "random");
  CHECK(j["inputs"][0]["source_path"].is_null());

  Manifest plain;
  plain.model_xml = {"m.xml", "00"};
  const auto p = nlohmann::json::parse(to_json(plain));
  CHECK(p["model"]["bin"].is_null());
  CHECK(p["options"]["seed"].is_null());
  CHECK(p["options"]["random_input"] == false);
  CHECK_FALSE(parse_manifest(to_json(plain), "m.json").run.seed);
}

TEST_CASE("manifest: malformed manifests are input errors naming the problem", "[manifest]") {
  require_input_error("{", "parse error");
  require_input_error("[]", "\"format\"");
  require_input_error(R"({"format": "other"})", "\"format\"");
  auto j = nlohmann::json::parse(to_json(sample_manifest()));
  j["format_version"] = 2;
  require_input_error(j.dump(), "format_version 2");
  j = nlohmann::json::parse(to_json(sample_manifest()));
  j["outputs"][0]["type"] = "f128";
  require_input_error(j.dump(), "unknown element type 'f128'");
  j = nlohmann::json::parse(to_json(sample_manifest()));
  j["outputs"][0]["file"] = "../../etc/passwd";
  require_input_error(j.dump(), "not inside the golden directory");
  j = nlohmann::json::parse(to_json(sample_manifest()));
  j["outputs"][0].erase("shape");
  require_input_error(j.dump(), "shape");
}

TEST_CASE("manifest: numbers must be whole and in range, never truncated or wrapped",
          "[manifest]") {
  const auto with = [](const char* pointer, nlohmann::json value) {
    auto j = nlohmann::json::parse(to_json(sample_manifest()));
    j[nlohmann::json::json_pointer(pointer)] = std::move(value);
    return j.dump();
  };
  // nlohmann's get<> would read 7.9 as 7, -1 as 2^64 - 1, 2^32 + 1 as 1, and convert 2^64 + 5
  // (a double) to int64 with undefined behaviour.
  require_input_error(with("/options/seed", 7.9), "options.seed is 7.9");
  require_input_error(with("/options/seed", -1), "options.seed is -1");
  require_input_error(with("/options/seed", "7"), "options.seed is \"7\"");
  require_input_error(with("/format_version", 4294967297ULL), "format_version is 4294967297");
  require_input_error(with("/outputs/0/shape/2", 1.8446744073709552e19), "a dim of 'pool'");
  require_input_error(with("/outputs/0/shape/2", -5), "a dim of 'pool' is -5");
  require_input_error(with("/outputs/0/shape/2", 3.0), "a dim of 'pool' is 3.0");
  require_input_error(with("/inputs/0/shape", 3), "shape of 'x' is not an array");
  require_input_error(with("/informational/threads", 1e30), "informational.threads");
  // The extremes still round-trip.
  CHECK(parse_manifest(with("/options/seed", 18446744073709551615ULL), "m.json").run.seed ==
        18446744073709551615ULL);
  CHECK(parse_manifest(with("/outputs/0/shape/0", 0), "m.json").outputs[0].shape[0] == 0);
}

TEST_CASE("manifest: read and write DIR/manifest.json", "[manifest]") {
  testing::ScratchDir dir("manifest");
  const auto m = sample_manifest();
  write_manifest(dir.path().string(), m);
  CHECK(to_json(read_manifest(dir.path().string())) == to_json(m));
  testing::ScratchDir empty("manifest-empty");
  try {
    read_manifest(empty.path().string());
    FAIL("no exception");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    CHECK_THAT(e.what(), Catch::Contains("no golden manifest"));
  }
}
