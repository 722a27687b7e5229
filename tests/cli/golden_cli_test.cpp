// End-to-end tests of golden outputs: --output-dir manifests, --save-inputs, --expect with
// tolerances, reproducible seeds, and the JSON and JUnit reports.
#include <sys/stat.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli_support.hpp"
#include "irrun/npy.hpp"

using namespace irrun::testing;
using nlohmann::json;

namespace {

json manifest_of(const ScratchDir& dir, const std::string& sub) {
  return json::parse(read_text(dir.file(sub + "/manifest.json")));
}

// Adds `delta` to the f32 value at flat index `flat` of an .npy file, in place.
void nudge_npy(const std::string& path, std::size_t flat, float delta) {
  auto bytes = read_text(path);
  const auto header = irrun::parse_npy_header(
      std::as_bytes(std::span<const char>(bytes.data(), bytes.size())), path);
  REQUIRE(header.type == irrun::ElementType::f32);
  float v;
  std::memcpy(&v, bytes.data() + header.data_offset + flat * 4, 4);
  v += delta;
  std::memcpy(bytes.data() + header.data_offset + flat * 4, &v, 4);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

std::vector<std::string> output_hashes(const json& manifest) {
  std::vector<std::string> h;
  for (const auto& o : manifest["outputs"]) h.push_back(o["sha256"].get<std::string>());
  return h;
}

}  // namespace

TEST_CASE("golden: --output-dir writes a manifest describing the run", "[cli][golden]") {
  ScratchDir dir("golden");
  const auto r = run_irrun({sample("two_inputs_v11.xml"), "--random-input", "--seed", "7",
                            "--threads", "2", "-o", dir.file("g"), "--save-inputs"});
  REQUIRE(r.exit_code == 0);
  const auto m = manifest_of(dir, "g");
  CHECK(m["format"] == "irrun-golden");
  CHECK(m["format_version"] == 1);
  CHECK(m["model"]["xml"]["path"] == sample("two_inputs_v11.xml"));
  CHECK(m["model"]["xml"]["sha256"].get<std::string>().size() == 64);
  CHECK(m["model"]["bin"].is_null());
  CHECK(m["options"]["seed"] == 7);
  CHECK(m["options"]["random_input"] == true);
  CHECK(m["informational"]["threads"] == 2);
  REQUIRE(m["inputs"].size() == 2);
  CHECK(m["inputs"][0]["name"] == "image");
  CHECK(m["inputs"][0]["source"] == "random");
  CHECK(m["inputs"][1]["type"] == "f16");
  CHECK(m["inputs"][1]["shape"] == json::array({1, 1, 10, 10}));
  for (const auto& t : m["inputs"])
    CHECK(fs::exists(dir.file("g/" + t["file"].get<std::string>())));
  REQUIRE(m["outputs"].size() == 2);
  for (const auto& t : m["outputs"]) {
    const auto file = dir.file("g/" + t["file"].get<std::string>());
    CHECK(fs::exists(file));
    CHECK(t["sha256"].get<std::string>().size() == 64);
  }
  // The weights are recorded when the model has a .bin.
  const auto a = run_irrun({sample("adaptive_v11.xml"), "--random-input", "-o", dir.file("a")});
  REQUIRE(a.exit_code == 0);
  CHECK(manifest_of(dir, "a")["model"]["bin"]["path"] == sample("adaptive_v11.bin"));
}

TEST_CASE("golden: a seed's inputs and outputs are the same bytes in every version",
          "[cli][golden]") {
  // A golden written without --save-inputs replays by regenerating its inputs from the seed, so
  // the per-input seeds, the generator and the .npy writer must never change. The README's
  // manifest example shows these hashes.
  ScratchDir dir("golden");
  const auto r = run_irrun({sample("avgpool_v11.xml"), "--random-input", "--seed", "7", "-o",
                            dir.file("g"), "--save-inputs"});
  REQUIRE(r.exit_code == 0);
  const auto m = manifest_of(dir, "g");
  CHECK(m["model"]["xml"]["sha256"] ==
        "0caaa0445823f78ba393a578f142227955e09fda780b1d08c95528fc78be37c0");
  CHECK(m["inputs"][0]["sha256"] ==
        "144c70f31623d58e278c8a504d897134393846e7a5c5768acc050eaceb4dfcfe");
  CHECK(m["inputs"][0]["data_sha256"] ==
        "a5ebcc08568132bb349a3194fb9750f1805d8a4b7219531e062c23ebc8a7eac2");
  CHECK(m["outputs"][0]["sha256"] ==
        "71a4f5a93061c5d19fddd6e9a07f09b894b61ab5dba1f8e16abb969e7c00ebc3");
  CHECK(m["outputs"][0]["data_sha256"] ==
        "0be4f9d5b391ad0719b443ca6303433523df59efc541357eb8e4201e280d0766");
}

TEST_CASE("golden: round trip on the samples", "[cli][golden]") {
  for (const std::string model : {"avgpool_v11.xml", "avgpool_chain_v10.xml", "adaptive_v11.xml",
                                  "two_inputs_v11.xml", "avgpool_int_v11.xml", "maxpool_v11.xml",
                                  "maxpool_chain_v10.xml", "adaptive_max_v11.xml"}) {
    INFO(model);
    ScratchDir dir("golden");
    const auto w = run_irrun(
        {sample(model), "--random-input", "--seed", "3", "-o", dir.file("g"), "--save-inputs"});
    REQUIRE(w.exit_code == 0);
    // The golden directory alone replays the run: no --input, no --seed.
    const auto e = run_irrun({sample(model), "--expect", dir.file("g")});
    CHECK(e.exit_code == 0);
    CHECK(any_line_has_all(e.out_lines(), {"expect ", ": ok: ", "output(s) match"}));
    // Without saved inputs, the recorded seed regenerates them.
    const auto w2 =
        run_irrun({sample(model), "--random-input", "--seed", "3", "-o", dir.file("s")});
    REQUIRE(w2.exit_code == 0);
    CHECK(run_irrun({sample(model), "--expect", dir.file("s")}).exit_code == 0);
  }
}

TEST_CASE("golden: --layer and file inputs are replayed", "[cli][golden]") {
  ScratchDir dir("golden");
  REQUIRE(run_irrun({sample("multi_op_v11.xml"), "--layer", "pool", "--random-input", "-o",
                     dir.file("g"), "--save-inputs"})
              .exit_code == 0);
  CHECK(manifest_of(dir, "g")["options"]["layer"] == "pool");
  const auto e = run_irrun({sample("multi_op_v11.xml"), "--expect", dir.file("g")});
  CHECK(e.exit_code == 0);
  CHECK_THAT(e.err, Catch::Contains("--layer pool"));
  // The golden's layer renamed in the model: the golden no longer fits (exit 4, not 2).
  auto renamed = read_text(sample("multi_op_v11.xml"));
  renamed.replace(renamed.find("name=\"pool\""), 11, "name=\"pool2\"");
  const auto copy = dir.write("renamed.xml", renamed);
  const auto gone =
      run_irrun({copy, "--weights", sample("multi_op_v11.bin"), "--expect", dir.file("g")});
  CHECK(gone.exit_code == 4);
  CHECK_THAT(gone.err,
             Catch::Contains("the golden's --layer: ") && Catch::Contains("no layer named 'pool'"));
  // Given on the command line, an unknown layer is a usage error.
  CHECK(run_irrun(
            {copy, "--weights", sample("multi_op_v11.bin"), "--layer", "pool", "--random-input"})
            .exit_code == 2);

  // An --input file that is not saved is replayed from its path while its sha256 matches.
  const auto input = dir.file(
      "g/inputs/" + manifest_of(dir, "g")["inputs"][0]["file"].get<std::string>().substr(7));
  REQUIRE(run_irrun({sample("multi_op_v11.xml"), "--layer", "pool", "--input", input, "-o",
                     dir.file("f")})
              .exit_code == 0);
  CHECK(manifest_of(dir, "f")["inputs"][0]["source"] == "file");
  CHECK(run_irrun({sample("multi_op_v11.xml"), "--expect", dir.file("f")}).exit_code == 0);
  nudge_npy(input, 0, 1.0f);
  const auto changed = run_irrun({sample("multi_op_v11.xml"), "--expect", dir.file("f")});
  CHECK(changed.exit_code == 4);
  CHECK_THAT(changed.err, Catch::Contains("changed since the golden was written"));
}

TEST_CASE("golden: inputs named with '=' or after another input's tensor name replay",
          "[cli][golden]") {
  ScratchDir dir("golden");
  auto xml = read_text(sample("two_inputs_v11.xml"));
  // Parameter "image" is renamed "im=age"; its tensor names become "im=age" and "mask", the
  // layer name of the other Parameter (whose tensor is renamed "m2").
  for (const auto& [from, to] : std::vector<std::pair<std::string, std::string>>{
           {"name=\"image\" type", "name=\"im=age\" type"},
           {"names=\"image\"", "names=\"im=age,mask\""},
           {"names=\"mask\"", "names=\"m2\""}}) {
    const auto at = xml.find(from);
    REQUIRE(at != std::string::npos);
    xml.replace(at, from.size(), to);
  }
  const auto model = dir.write("renamed.xml", xml);
  REQUIRE(run_irrun({model, "--random-input", "--seed", "5", "-o", dir.file("g"), "--save-inputs"})
              .exit_code == 0);
  const auto e = run_irrun({model, "--expect", dir.file("g")});
  CHECK(e.exit_code == 0);
  CHECK(e.err.empty());

  // A file input whose manifest entry lost its source_path names the manifest and the input.
  auto m = manifest_of(dir, "g");
  m["inputs"][1]["file"] = nullptr;
  m["inputs"][1]["source"] = "file";
  dir.write("g/manifest.json", m.dump());
  const auto lost = run_irrun({model, "--expect", dir.file("g")});
  CHECK(lost.exit_code == 4);
  CHECK_THAT(lost.err, Catch::Contains("manifest.json: input 'mask' came from a file"));
}

TEST_CASE("golden: MaxPool's values and indices are both in the manifest", "[cli][golden]") {
  ScratchDir dir("golden");
  REQUIRE(run_irrun({sample("maxpool_v11.xml"), "--layer", "max", "--random-input", "-o",
                     dir.file("g"), "--save-inputs"})
              .exit_code == 0);
  const auto m = manifest_of(dir, "g");
  REQUIRE(m["outputs"].size() == 2);
  std::vector<std::string> names, types;
  for (const auto& o : m["outputs"]) {
    names.push_back(o["name"].get<std::string>());
    types.push_back(o["type"].get<std::string>());
  }
  CHECK(names == std::vector<std::string>{"max.indices", "max"});
  CHECK(types == std::vector<std::string>{"i64", "f32"});
  const auto e =
      run_irrun({sample("maxpool_v11.xml"), "--expect", dir.file("g"), "--threads", "3"});
  CHECK(e.exit_code == 0);
  CHECK_THAT(e.err, Catch::Contains("--layer max"));
  CHECK(any_line_has_all(e.out_lines(), {"expect ", ": ok: 2 output(s) match"}));
}

TEST_CASE("golden: a tampered golden value is caught at its N-d coordinate", "[cli][golden]") {
  ScratchDir dir("golden");
  REQUIRE(
      run_irrun({sample("avgpool_v11.xml"), "--random-input", "-o", dir.file("g"), "--save-inputs"})
          .exit_code == 0);
  const auto file = dir.file("g/" + manifest_of(dir, "g")["outputs"][0]["file"].get<std::string>());
  nudge_npy(file, 2 * 25 + 3 * 5 + 1, 0.5f);  // [0,2,3,1] of [1,3,5,5]
  const auto r = run_irrun({sample("avgpool_v11.xml"), "--expect", dir.file("g")});
  CHECK(r.exit_code == 1);
  CHECK(any_line_has_all(r.out_lines(), {"MISMATCH: 1 of 75 value(s) out of tolerance"}));
  CHECK(any_line_has_all(r.out_lines(), {"  at [0,2,3,1]: golden ", ", got ", "abs error 0.5"}));
  CHECK(any_line_has_all(r.out_lines(), {"FAILED: 1 of 1 output(s) differ"}));
  CHECK_THAT(r.err, Catch::Contains("sha256 differs from manifest.json"));
  // Under --quiet the mismatch is still printed.
  const auto q = run_irrun({"-q", sample("avgpool_v11.xml"), "--expect", dir.file("g")});
  CHECK(q.exit_code == 1);
  CHECK(any_line_has_all(q.out_lines(), {"at [0,2,3,1]"}));
}

TEST_CASE("golden: tolerances", "[cli][golden]") {
  ScratchDir dir("golden");
  REQUIRE(
      run_irrun({sample("avgpool_v11.xml"), "--random-input", "-o", dir.file("g"), "--save-inputs"})
          .exit_code == 0);
  const auto file = dir.file("g/" + manifest_of(dir, "g")["outputs"][0]["file"].get<std::string>());
  nudge_npy(file, 10, 1e-4f);
  const auto model = sample("avgpool_v11.xml");
  CHECK(run_irrun({model, "--expect", dir.file("g")}).exit_code == 1);
  CHECK(run_irrun({model, "--expect", dir.file("g"), "--atol", "1e-3"}).exit_code == 0);
  CHECK(run_irrun({model, "--expect", dir.file("g"), "--atol", "1e-6"}).exit_code == 1);
  CHECK(run_irrun({model, "--rtol", "0.1", "--random-input"}).exit_code == 2);
  CHECK(run_irrun({model, "--expect", dir.file("g"), "--atol", "-1"}).exit_code == 2);
}

TEST_CASE("golden: seeds are reproducible across runs and thread counts", "[cli][golden]") {
  ScratchDir dir("golden");
  const auto model = sample("avgpool_chain_v10.xml");
  auto write = [&](const std::string& sub, const std::string& seed, const std::string& threads) {
    REQUIRE(run_irrun({model, "--random-input", "--seed", seed, "--threads", threads, "-o",
                       dir.file(sub), "--save-inputs"})
                .exit_code == 0);
    return manifest_of(dir, sub);
  };
  const auto a = write("a", "42", "1");
  const auto b = write("b", "42", "2");
  const auto c = write("c", "43", "2");
  CHECK(output_hashes(a) == output_hashes(b));
  CHECK(a["inputs"][0]["sha256"] == b["inputs"][0]["sha256"]);
  for (const auto& o : a["outputs"])
    CHECK(read_text(dir.file("a/" + o["file"].get<std::string>())) ==
          read_text(dir.file("b/" + o["file"].get<std::string>())));
  CHECK(output_hashes(a) != output_hashes(c));
  CHECK(a["inputs"][0]["data_sha256"] != c["inputs"][0]["data_sha256"]);
  // --threads 2 compared with a golden written with --threads 1: bit-exact.
  CHECK(run_irrun({model, "--threads", "2", "--expect", dir.file("a")}).exit_code == 0);
  // Another seed on the command line instead of the golden's: a mismatch.
  CHECK(run_irrun({model, "--random-input", "--seed", "43", "--expect", dir.file("a")}).exit_code ==
        1);
}

TEST_CASE("golden: missing and extra outputs are mismatches", "[cli][golden]") {
  ScratchDir dir("golden");
  const auto model = sample("two_inputs_v11.xml");
  REQUIRE(run_irrun({model, "--random-input", "-o", dir.file("g"), "--save-inputs"}).exit_code ==
          0);
  auto m = manifest_of(dir, "g");
  const auto renamed = m["outputs"][1]["name"].get<std::string>();
  m["outputs"][1]["name"] = "gone";
  std::ofstream(dir.file("g/manifest.json"), std::ios::trunc) << m.dump(2);
  const auto r = run_irrun({model, "--expect", dir.file("g")});
  CHECK(r.exit_code == 1);
  CHECK(any_line_has_all(r.out_lines(), {"expect 'gone': MISMATCH: the golden has output 'gone'",
                                         "[missing-in-run]"}));
  CHECK(any_line_has_all(r.out_lines(), {"expect '" + renamed + "': MISMATCH: this run produced",
                                         "[missing-in-golden]"}));
  CHECK(any_line_has_all(r.out_lines(), {"FAILED: 2 of 3 output(s) differ"}));

  fs::remove(dir.file("g/" + m["outputs"][0]["file"].get<std::string>()));
  const auto gone = run_irrun({model, "--expect", dir.file("g")});
  CHECK(gone.exit_code == 1);
  CHECK(any_line_has_all(gone.out_lines(), {"golden file unreadable", "cannot open"}));
}

TEST_CASE("golden: --expect with a single .npy or .bin file", "[cli][golden]") {
  ScratchDir dir("golden");
  const auto model = sample("avgpool_v11.xml");
  REQUIRE(run_irrun({model, "--random-input", "-o", dir.file("n")}).exit_code == 0);
  REQUIRE(run_irrun({model, "--random-input", "-o", dir.file("b"), "--output-format", "bin"})
              .exit_code == 0);
  const auto npy = dir.file("n/" + manifest_of(dir, "n")["outputs"][0]["file"].get<std::string>());
  const auto bin = dir.file("b/" + manifest_of(dir, "b")["outputs"][0]["file"].get<std::string>());
  CHECK(run_irrun({model, "--random-input", "--expect", npy}).exit_code == 0);
  CHECK(run_irrun({model, "--random-input", "--expect", bin}).exit_code == 0);
  // The manifest of a bin golden directory carries the type and shape.
  CHECK(run_irrun({model, "--expect", dir.file("b")}).exit_code == 0);
  CHECK(run_irrun({model, "--random-input", "--seed", "1", "--expect", npy}).exit_code == 1);
  const auto short_bin = dir.write("short.bin", "1234");
  const auto s = run_irrun({model, "--random-input", "--expect", short_bin});
  CHECK(s.exit_code == 1);
  CHECK(any_line_has_all(s.out_lines(), {"holds 4 byte(s)", "[shape-mismatch]"}));
  // Two outputs cannot be compared with one file; a missing golden is a bad input.
  CHECK(run_irrun({sample("two_inputs_v11.xml"), "--random-input", "--expect", npy}).exit_code ==
        2);
  CHECK(run_irrun({model, "--random-input", "--expect", dir.file("nothing")}).exit_code == 4);
  // Replaying a missing golden says so, not that an input is missing.
  const auto missing = run_irrun({model, "--expect", dir.file("nothing")});
  CHECK(missing.exit_code == 4);
  CHECK(missing.err_lines() == std::vector<std::string>{"irrun: error: " + dir.file("nothing") +
                                                        ": --expect: no such file or directory"});
  // A device or FIFO is no golden (it was read as a raw file of 0 bytes: exit 1, a mismatch).
  ::mkfifo(dir.file("fifo").c_str(), 0600);
  for (const std::string& special :
       {std::string("/dev/zero"), std::string("/dev/null"), dir.file("fifo")}) {
    const auto r = run_irrun({model, "--random-input", "--expect", special});
    INFO(special << ": " << r.out << r.err);
    CHECK(r.exit_code == 4);
    CHECK(r.err_lines() ==
          std::vector<std::string>{"irrun: error: " + special +
                                   ": --expect: not a regular file, expected a golden .npy or "
                                   "raw file, or a golden directory"});
  }
  const auto no_manifest = run_irrun({model, "--random-input", "--expect", dir.path().string()});
  CHECK(no_manifest.exit_code == 4);
  CHECK_THAT(no_manifest.err, Catch::Contains("no golden manifest"));
  CHECK(run_irrun({model, "--save-inputs", "--random-input"}).exit_code == 2);
}

TEST_CASE("golden: run --format json parses, with the comparison", "[cli][golden]") {
  ScratchDir dir("golden");
  const auto model = sample("avgpool_v11.xml");
  REQUIRE(run_irrun({model, "--random-input", "-o", dir.file("g"), "--save-inputs"}).exit_code ==
          0);
  const auto r = run_irrun({model, "--expect", dir.file("g"), "--format", "json"});
  REQUIRE(r.exit_code == 0);
  const auto j = json::parse(r.out);
  REQUIRE(j["outputs"].size() == 1);
  CHECK(j["outputs"][0]["type"] == "f32");
  CHECK(j["outputs"][0]["shape"] == json::array({1, 3, 5, 5}));
  CHECK(j["outputs"][0]["first_values"].size() == 8);
  CHECK(j["expect"]["passed"] == true);
  CHECK(j["expect"]["outputs"][0]["status"] == "match");

  nudge_npy(dir.file("g/" + manifest_of(dir, "g")["outputs"][0]["file"].get<std::string>()), 74,
            1.0f);
  const auto bad = run_irrun({model, "--expect", dir.file("g"), "--format", "json"});
  CHECK(bad.exit_code == 1);
  const auto b = json::parse(bad.out);
  CHECK(b["expect"]["passed"] == false);
  CHECK(b["expect"]["outputs"][0]["first_mismatches"][0]["index"] == json::array({0, 2, 4, 4}));
  CHECK(b["expect"]["notes"].size() == 1);
}

TEST_CASE("golden: check --format json and --junit", "[cli][golden]") {
  ScratchDir dir("golden");
  const auto junit = dir.file("reports/junit.xml");
  fs::create_directories(dir.file("reports"));
  const auto r = run_irrun({"check", sample("avgpool_v11.xml"), sample("bad_dim_v11.xml"),
                            dir.file("missing.xml"), "--format", "json", "--junit", junit});
  CHECK(r.exit_code == 1);
  const auto j = json::parse(r.out);
  CHECK(j["passed"] == false);
  REQUIRE(j["files"].size() == 3);
  CHECK(j["files"][0]["passed"] == true);
  CHECK(j["files"][1]["problems"][0]["rule"] == "dim-mismatch");
  CHECK(j["files"][2]["problems"][0]["rule"] == "unreadable");

  pugi::xml_document doc;
  REQUIRE(doc.load_file(junit.c_str()));
  const auto root = doc.child("testsuites");
  std::size_t suites = 0, cases = 0, failures = 0, errors = 0;
  for (auto s = root.child("testsuite"); s; s = s.next_sibling("testsuite")) {
    ++suites;
    for (auto c = s.child("testcase"); c; c = c.next_sibling("testcase")) {
      ++cases;
      for (auto f = c.child("failure"); f; f = f.next_sibling("failure")) ++failures;
      for (auto f = c.child("error"); f; f = f.next_sibling("error")) ++errors;
    }
  }
  CHECK(suites == 3);
  CHECK(cases == 9);  // (file) + 3 layers, (file) + 3 layers, (file)
  CHECK(failures == 1);
  CHECK(errors == 1);
  CHECK(root.attribute("tests").as_uint() == cases);
  CHECK(root.attribute("failures").as_uint() == failures);

  const auto ok = run_irrun({"check", sample("avgpool_v11.xml"), "--junit", junit});
  CHECK(ok.exit_code == 0);
  CHECK(any_line_has_all(ok.out_lines(), {"ok: 3 layer(s) checked"}));
  REQUIRE(doc.load_file(junit.c_str()));
  CHECK(doc.child("testsuites").attribute("failures").as_int() == 0);

  // Its missing directories are made, as --output-dir's are (CI's reports/ on a fresh checkout).
  const auto deep =
      run_irrun({"check", sample("avgpool_v11.xml"), "--junit", dir.file("no/such/dir/junit.xml")});
  CHECK(deep.exit_code == 0);
  CHECK(doc.load_file(dir.file("no/such/dir/junit.xml").c_str()));
  dir.write("file", "not a directory\n");
  const auto unwritable =
      run_irrun({"check", sample("avgpool_v11.xml"), "--junit", dir.file("file/sub/junit.xml")});
  CHECK(unwritable.exit_code == 5);
  CHECK(unwritable.err_lines().size() == 1);
  CHECK(any_line_has_all(unwritable.err_lines(), {"cannot create the directory of --junit"}));

  // A report path that is one of the models is refused before anything is written.
  const auto model = dir.file("model.xml");
  fs::copy_file(sample("avgpool_v11.xml"), model);
  const auto onto_model = run_irrun({"check", model, "--junit", dir.file("./model.xml")});
  CHECK(onto_model.exit_code == 2);
  CHECK(
      any_line_has_all(onto_model.err_lines(), {"--junit", "an input of the check", "overwrite"}));
  CHECK(read_text(model) == read_text(sample("avgpool_v11.xml")));
  std::ofstream(dir.file("model.bin")) << "weights";  // its weights too
  CHECK(run_irrun({"check", model, "--junit", dir.file("model.bin")}).exit_code == 2);
  CHECK(read_text(dir.file("model.bin")) == "weights");
}

TEST_CASE("golden: reports to devices and symlinks keep them", "[cli][golden]") {
  ScratchDir dir("golden");
  // /dev/null is written, not replaced by a regular file (irrun may run as root).
  CHECK(run_irrun({"check", sample("avgpool_v11.xml"), "--junit", "/dev/null"}).exit_code == 0);
  CHECK(fs::is_character_file("/dev/null"));
  // /dev/stdout while stdout is a file (as here): the report follows the summary line in it.
  const auto to_stdout = run_irrun({"check", sample("avgpool_v11.xml"), "--junit", "/dev/stdout"});
  CHECK(to_stdout.exit_code == 0);
  CHECK(to_stdout.out.find("ok: 3 layer(s) checked") < to_stdout.out.find("<testsuites"));
  CHECK(to_stdout.out.find("</testsuites>") != std::string::npos);
  fs::create_directories(dir.file("reports"));
  fs::create_symlink("reports/junit.xml", dir.file("latest.xml"));
  CHECK(run_irrun({"check", sample("avgpool_v11.xml"), "--junit", dir.file("latest.xml")})
            .exit_code == 0);
  CHECK(fs::is_symlink(dir.file("latest.xml")));
  pugi::xml_document doc;
  CHECK(doc.load_file(dir.file("reports/junit.xml").c_str()));
}

TEST_CASE("golden: a summary that cannot reach stdout exits 5", "[cli][golden]") {
  ScratchDir dir("golden");
  const auto model = sample("avgpool_v11.xml");
  const std::vector<std::vector<std::string>> commands{
      {"check", model, "--format", "json"},
      {"check", sample("bad_dim_v11.xml")},  // a failed check too: its report is lost
      {"info", model},
      {model, "--random-input"},
      {"bench", model, "--repeat", "2", "--warmup", "0"},
      {"--help"},
  };
  for (const auto to : {Stdout::full_disk, Stdout::closed, Stdout::broken_pipe}) {
    for (const auto& args : commands) {
      INFO(args.front() << " " << args.back() << " to " << static_cast<int>(to));
      const auto r = run_irrun(args, 120, to);
      CHECK(r.exit_code == 5);
      CHECK(any_line_has_all(r.err_lines(), {"standard output: cannot write"}));
    }
  }
  // Nothing to write, nothing lost: -q with a closed stdout or a full disk is fine.
  for (const auto to : {Stdout::full_disk, Stdout::closed}) {
    CHECK(run_irrun({"-q", "check", model}, 120, to).exit_code == 0);
    CHECK(run_irrun({"-q", model, "--random-input", "-o", dir.file("q")}, 120, to).exit_code == 0);
  }
  // A pipe whose reader is gone killed irrun by SIGPIPE (exit 141) before its --junit report.
  const auto piped =
      run_irrun({"check", model, "--junit", dir.file("report.xml")}, 120, Stdout::broken_pipe);
  CHECK(piped.exit_code == 5);
  CHECK(read_text(dir.file("report.xml")).find("<testsuites") != std::string::npos);
  // With stdout closed, an output file opened first must not receive the summary.
  const auto r = run_irrun({model, "--random-input", "-o", dir.file("out")}, 120, Stdout::closed);
  CHECK(r.exit_code == 5);
  CHECK(run_irrun({model, "--random-input", "--expect", dir.file("out")}).exit_code == 0);
}

TEST_CASE("golden: --expect DIR --output-dir DIR compares before rewriting", "[cli][golden]") {
  ScratchDir dir("golden");
  const auto model = sample("avgpool_v11.xml");
  REQUIRE(run_irrun({model, "--random-input", "-o", dir.file("g"), "--save-inputs"}).exit_code ==
          0);
  // Another seed into the same directory: compared with the old golden (a mismatch), then the
  // directory holds the new run, which the next comparison accepts.
  CHECK(run_irrun({model, "--random-input", "--seed", "5", "--expect", dir.file("g"), "-o",
                   dir.file("g"), "--save-inputs"})
            .exit_code == 1);
  CHECK(manifest_of(dir, "g")["options"]["seed"] == 5);
  CHECK(run_irrun({model, "--expect", dir.file("g")}).exit_code == 0);
}

TEST_CASE("golden: a golden rewritten by its own replay still replays alone", "[cli][golden]") {
  ScratchDir dir("golden");
  const auto model = sample("avgpool_v11.xml");
  REQUIRE(run_irrun({model, "--random-input", "--seed", "7", "-o", dir.file("g"), "--save-inputs"})
              .exit_code == 0);
  const auto before = manifest_of(dir, "g");
  // Refreshed in place by replaying it, with and without its inputs saved again.
  for (const char* save : {"--save-inputs", ""}) {
    INFO(save);
    std::vector<std::string> args{model, "--expect", dir.file("g"), "-o", dir.file("g")};
    if (*save) args.push_back(save);
    REQUIRE(run_irrun(args).exit_code == 0);
    const auto m = manifest_of(dir, "g");
    CHECK(m["options"] == before["options"]);  // --random-input --seed 7, no --input paths
    CHECK(m["inputs"][0]["source"] == "random");
    CHECK(m["inputs"][0]["source_path"] == nullptr);
    CHECK(m["outputs"] == before["outputs"]);
  }
  // Moved elsewhere, it replays from its seed: nothing points into the old directory.
  fs::rename(dir.file("g"), dir.file("moved"));
  CHECK(run_irrun({model, "--expect", dir.file("moved")}).exit_code == 0);
}

TEST_CASE("golden: a refresh saves again the inputs the golden saved", "[cli][golden]") {
  ScratchDir dir("golden");
  const auto model = sample("avgpool_v11.xml");
  REQUIRE(
      run_irrun({model, "--random-input", "--seed", "3", "-o", dir.file("src"), "--save-inputs"})
          .exit_code == 0);
  const auto input = dir.file("x.npy");
  fs::copy_file(dir.file("src/inputs/input.npy"), input);
  REQUIRE(run_irrun({model, "--input", input, "-o", dir.file("g"), "--save-inputs"}).exit_code ==
          0);
  const auto saved = read_text(dir.file("g/inputs/input.npy"));

  // The source changed since: the refresh replays the saved copy, and so must its golden (it
  // recorded the changed file's sha256 beside outputs computed from the old data, and failed).
  REQUIRE(
      run_irrun({model, "--random-input", "--seed", "4", "-o", dir.file("other"), "--save-inputs"})
          .exit_code == 0);
  fs::copy_file(dir.file("other/inputs/input.npy"), input, fs::copy_options::overwrite_existing);
  const auto moved = run_irrun({model, "--expect", dir.file("g"), "-o", dir.file("g2")});
  INFO(moved.err);
  CHECK(moved.exit_code == 0);
  CHECK(read_text(dir.file("g2/inputs/input.npy")) == saved);
  CHECK(run_irrun({model, "--expect", dir.file("g2")}).exit_code == 0);

  // The source is gone: the refresh in place still replays and rewrites the golden whole.
  fs::remove(input);
  CHECK(run_irrun({model, "--expect", dir.file("g")}).exit_code == 0);  // from the saved copy
  const auto r = run_irrun({model, "--expect", dir.file("g"), "-o", dir.file("g")});
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(read_text(dir.file("g/inputs/input.npy")) == saved);
  CHECK(run_irrun({model, "--expect", dir.file("g")}).exit_code == 0);
}

TEST_CASE("golden: an edited saved input and changed weights are warned about", "[cli][golden]") {
  ScratchDir dir("golden");
  const auto model = dir.file("m.xml");
  fs::copy_file(sample("adaptive_v11.xml"), model);
  fs::copy_file(sample("adaptive_v11.bin"), dir.file("m.bin"));
  REQUIRE(run_irrun({model, "--random-input", "-o", dir.file("g"), "--save-inputs"}).exit_code ==
          0);
  CHECK(run_irrun({model, "--expect", dir.file("g")}).err.empty());

  const auto input = dir.file("g/" + manifest_of(dir, "g")["inputs"][0]["file"].get<std::string>());
  nudge_npy(input, 0, 0.0f);  // rewritten with the same values: no warning
  CHECK(run_irrun({model, "--expect", dir.file("g")}).err.empty());
  nudge_npy(input, 0, 0.25f);
  const auto edited = run_irrun({model, "--expect", dir.file("g")});
  CHECK(edited.exit_code == 1);
  CHECK(any_line_has_all(edited.err_lines(), {input, "sha256 differs from manifest.json"}));

  REQUIRE(run_irrun({model, "--random-input", "-o", dir.file("g"), "--save-inputs"}).exit_code ==
          0);
  auto weights = read_text(dir.file("m.bin"));
  weights += '\0';  // the same values, a different file
  std::ofstream(dir.file("m.bin"), std::ios::binary | std::ios::trunc) << weights;
  const auto changed = run_irrun({model, "--expect", dir.file("g")});
  CHECK(changed.exit_code == 0);
  CHECK(any_line_has_all(changed.err_lines(), {"m.bin", "weights differ", "sha256 of the bin"}));
}

// `-o .` beside the model or an input named like an output replaced it with the output (exit
// 0, the golden unreplayable): such a run is refused before anything changes.
TEST_CASE("golden: an output never replaces the model's weights or an input file",
          "[cli][golden]") {
  ScratchDir dir("golden_own");
  SECTION("the weights") {
    const auto xml = dir.write("model.xml", [] {
      auto text = read_text(sample("adaptive_v11.xml"));
      const std::string from = "names=\"adaptive_pool\"";
      const auto at = text.find(from);
      REQUIRE(at != std::string::npos);
      return text.replace(at, from.size(), "names=\"model\"");
    }());
    const auto weights = read_text(sample("adaptive_v11.bin"));
    dir.write("model.bin", weights);
    const auto r =
        run_irrun({xml, "--random-input", "-o", dir.file("."), "--output-format", "bin"});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("output 'model' would replace the model's weights") != std::string::npos);
    CHECK(read_text(dir.file("model.bin")) == weights);
  }
  SECTION("an input file, and a golden's manifest stays") {
    REQUIRE(run_irrun(
                {sample("avgpool_v11.xml"), "--random-input", "-o", dir.file("g"), "--save-inputs"})
                .exit_code == 0);
    const auto input = read_text(dir.file("g/inputs/input.npy"));
    const auto manifest = read_text(dir.file("g/manifest.json"));
    dir.write("g/pool.npy", input);  // the output's file, given as the input
    const auto r = run_irrun(
        {sample("avgpool_v11.xml"), "--input", dir.file("g/pool.npy"), "-o", dir.file("g")});
    CHECK(r.exit_code == 2);
    CHECK(r.err.find("output 'pool' would replace the file of input 'input'") != std::string::npos);
    CHECK(read_text(dir.file("g/pool.npy")) == input);
    CHECK(read_text(dir.file("g/manifest.json")) == manifest);
  }
}

// --save-inputs replaced an f64 (or f16) .npy given from DIR/inputs/ with its f32 copy, exit 0:
// a saved input may replace its own --input file only with the bytes it already holds.
TEST_CASE("golden: a saved input never rewrites its own --input file into other bytes",
          "[cli][golden]") {
  ScratchDir dir("golden_own");
  const auto model = sample("avgpool_v11.xml");
  const auto g = dir.file("g");
  REQUIRE(run_irrun({model, "--random-input", "--seed", "3", "-o", g, "--save-inputs"}).exit_code ==
          0);
  const auto saved = dir.file("g/inputs/input.npy");
  const auto f32 = read_text(saved);
  const auto manifest = read_text(dir.file("g/manifest.json"));

  // The same values as f64: bound (converted to f32), then refused before DIR changes.
  const auto t = irrun::read_npy(saved);
  REQUIRE(t.type == irrun::ElementType::f32);
  std::string f64 = irrun::npy_header(irrun::ElementType::f64, t.shape);
  for (std::size_t i = 0; i < t.element_count(); ++i) {
    float v;
    std::memcpy(&v, t.buffer.data() + 4 * i, 4);
    const double d = v;
    f64.append(reinterpret_cast<const char*>(&d), 8);
  }
  dir.write("g/inputs/input.npy", f64);
  const auto r = run_irrun({model, "-i", saved, "-o", g, "--save-inputs"});
  CHECK(r.exit_code == 2);
  CHECK(count_lines_with(r.err_lines(), "error:") == 1);  // after the conversion's note
  CHECK(any_line_has_all(r.err_lines(), {saved, "saved input 'input' would replace its --input",
                                         "other bytes than the f32 [1,3,8,8] .npy"}));
  CHECK(read_text(saved) == f64);
  CHECK(read_text(dir.file("g/manifest.json")) == manifest);

  // Through a hard link from outside DIR: the same file.
  fs::create_hard_link(saved, dir.file("linked.npy"));
  CHECK(run_irrun({model, "-i", dir.file("linked.npy"), "-o", g, "--save-inputs"}).exit_code == 2);
  CHECK(read_text(saved) == f64);

  // The very bytes it would write: nothing is lost, the run writes its golden (a golden's saved
  // input given again), and it replays.
  dir.write("g/inputs/input.npy", f32);
  const auto same = run_irrun({model, "-i", saved, "-o", g, "--save-inputs"});
  INFO(same.err);
  CHECK(same.exit_code == 0);
  CHECK(read_text(saved) == f32);
  CHECK(manifest_of(dir, "g")["inputs"][0]["source_path"] == saved);
  CHECK(run_irrun({model, "--expect", g}).exit_code == 0);
  // Its refresh replays that golden, whose recorded source is its own saved input.
  const auto refresh = run_irrun({model, "--expect", g, "-o", g});
  INFO(refresh.err);
  CHECK(refresh.exit_code == 0);
  CHECK(read_text(saved) == f32);
}

// DIR/manifest.json is removed, then rewritten: a model, weights or input file of that name in
// DIR was lost (exit 0). Refused like an output's file, before anything in DIR changes.
TEST_CASE("golden: the manifest never replaces the model, its weights or an input file",
          "[cli][golden]") {
  ScratchDir dir("golden_own");
  const auto in_dir = [&](const std::string& sub, const std::string& from) {
    fs::create_directories(dir.file(sub));
    const auto path = dir.file(sub + "/manifest.json");
    fs::copy_file(from, path);
    return path;
  };
  SECTION("the model") {
    const auto model = in_dir("m", sample("avgpool_v11.xml"));
    const auto r = run_irrun({model, "--random-input", "-o", dir.file("m")});
    CHECK(r.exit_code == 2);
    CHECK(any_line_has_all(r.err_lines(), {model, "the manifest would replace the model"}));
    CHECK(read_text(model) == read_text(sample("avgpool_v11.xml")));
  }
  SECTION("the weights") {
    const auto weights = in_dir("w", sample("adaptive_v11.bin"));
    const auto r = run_irrun(
        {sample("adaptive_v11.xml"), "--weights", weights, "--random-input", "-o", dir.file("w")});
    CHECK(r.exit_code == 2);
    CHECK(any_line_has_all(r.err_lines(), {"the manifest would replace the model's weights"}));
    CHECK(read_text(weights) == read_text(sample("adaptive_v11.bin")));
  }
  SECTION("an input file, also through a symlink") {
    REQUIRE(run_irrun({sample("avgpool_v11.xml"), "--random-input", "-o", dir.file("src"),
                       "--save-inputs"})
                .exit_code == 0);
    const auto t = irrun::read_npy(dir.file("src/inputs/input.npy"));
    const auto raw = dir.write(
        "raw.bin", std::string(reinterpret_cast<const char*>(t.buffer.data()), t.byte_size()));
    const auto input = in_dir("i", raw);
    const auto r = run_irrun({sample("avgpool_v11.xml"), "-i", input, "-o", dir.file("i")});
    CHECK(r.exit_code == 2);
    CHECK(any_line_has_all(r.err_lines(),
                           {input, "the manifest would replace the file of input 'input'"}));
    CHECK(read_text(input) == read_text(raw));
    CHECK(!fs::exists(dir.file("i/pool.npy")));

    fs::create_directories(dir.file("l"));
    fs::create_symlink(raw, dir.file("l/manifest.json"));
    CHECK(run_irrun({sample("avgpool_v11.xml"), "-i", raw, "-o", dir.file("l")}).exit_code == 2);
    CHECK(fs::is_symlink(dir.file("l/manifest.json")));
    CHECK(read_text(raw) == read_text(input));
  }
}

// DIR/inputs was created after the old manifest had gone: a file in its place failed the run
// with the golden left without a manifest.
TEST_CASE("golden: DIR/inputs taken by a file fails with the golden whole", "[cli][golden]") {
  ScratchDir dir("golden_own");
  const auto model = sample("avgpool_v11.xml");
  REQUIRE(run_irrun({model, "--random-input", "-o", dir.file("g")}).exit_code == 0);
  const auto manifest = read_text(dir.file("g/manifest.json"));
  dir.write("g/inputs", "a file\n");
  const auto r = run_irrun({model, "--random-input", "-o", dir.file("g"), "--save-inputs"});
  CHECK(r.exit_code == 5);
  CHECK(
      any_line_has_all(r.err_lines(), {"inputs: the saved inputs' directory is not a directory"}));
  CHECK(read_text(dir.file("g/manifest.json")) == manifest);
  CHECK(run_irrun({model, "--random-input", "--expect", dir.file("g")}).exit_code == 0);
}

// Two files of one run that are one file: an output symlinked to the saved input's file or to
// the manifest replaced the other's bytes, and the manifest then described what was not there.
TEST_CASE("golden: two of a run's files through one symlinked file are refused", "[cli][golden]") {
  ScratchDir dir("golden_one_target");
  const auto model = sample("avgpool_v11.xml");
  for (const auto& [link, to] :
       {std::pair<std::string, std::string>{"pool.npy", "inputs/input.npy"},
        {"pool.npy", "manifest.json"},
        {"inputs/input.npy", "../pool.npy"}}) {
    INFO(link << " -> " << to);
    const auto g = dir.file("g_" + std::to_string(link.size() + to.size()));
    REQUIRE(run_irrun({model, "--random-input", "-o", g, "--save-inputs"}).exit_code == 0);
    const auto manifest = read_text(g + "/manifest.json");
    fs::remove(g + "/" + link);
    fs::create_symlink(to, g + "/" + link);
    const auto r = run_irrun({model, "--random-input", "--seed", "9", "-o", g, "--save-inputs"});
    CHECK(r.exit_code == 2);
    CHECK(any_line_has_all(r.err_lines(), {"would be written to one file", "output 'pool'"}));
    CHECK(read_text(g + "/manifest.json") == manifest);
    CHECK(fs::is_symlink(g + "/" + link));
  }
}

// A golden's files are renamed into place together once all are written: a run whose second
// file fails (here its name is a directory) leaves neither, nor a temporary file.
TEST_CASE("golden: a run that fails writing leaves none of its files", "[cli][golden]") {
  ScratchDir dir("golden_fail");
  std::filesystem::create_directories(dir.file("g/max.npy"));
  const auto r = run_irrun({sample("maxpool_v11.xml"), "--random-input", "-o", dir.file("g")});
  CHECK(r.exit_code == 5);
  CHECK(r.err.find("max.npy: cannot write: Is a directory") != std::string::npos);
  std::vector<std::string> left;
  for (const auto& e : std::filesystem::directory_iterator(dir.file("g")))
    left.push_back(e.path().filename().string());
  CHECK(left == std::vector<std::string>{"max.npy"});  // the directory alone
}

TEST_CASE("golden: runs writing one directory at once leave a consistent golden", "[cli][golden]") {
  ScratchDir dir("golden");
  const auto model = sample("avgpool_v11.xml");
  const auto g = dir.file("g");
  REQUIRE(run_irrun({model, "--random-input", "-o", g, "--save-inputs"}).exit_code == 0);
  // Writers of other seeds, and refreshes that replay the golden and rewrite it, all at once.
  std::vector<std::thread> runs;
  std::vector<int> codes(8, -1);
  for (int k = 0; k < 8; ++k)
    runs.emplace_back([&, k] {
      const auto args =
          k % 2
              ? std::vector<std::string>{model, "--expect", g, "-o", g, "--save-inputs"}
              : std::vector<std::string>{model, "--random-input", "--seed", std::to_string(k), "-o",
                                         g,     "--save-inputs"};
      codes[static_cast<std::size_t>(k)] = run_irrun(args).exit_code;
    });
  for (auto& t : runs) t.join();
  for (int k = 0; k < 8; ++k) {
    INFO(k);
    // A refresh compares first: 1 if a writer of another seed came between, never 4 (a
    // directory read half rewritten, with no manifest).
    CHECK((codes[static_cast<std::size_t>(k)] == 0 ||
           (k % 2 && codes[static_cast<std::size_t>(k)] == 1)));
  }
  // Whichever run wrote last, its manifest, inputs and outputs belong together: no file differs
  // from the manifest's sha256.
  const auto replay = run_irrun({model, "--expect", g});
  CHECK(replay.exit_code == 0);
  CHECK(replay.err.empty());
}
