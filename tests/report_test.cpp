#include "irrun/report.hpp"
#include "irrun/utf8.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <string>

#include "cli/cli_support.hpp"
#include "irrun/blob.hpp"

using namespace irrun;
using irrun::testing::sample;

namespace {

std::vector<CheckReport> sample_reports() {
  return {check_file(sample("avgpool_v11.xml"), {}), check_file(sample("bad_dim_v11.xml"), {}),
          check_file(sample("missing.xml"), {})};
}

std::size_t count(const pugi::xml_node& node, const char* name) {
  std::size_t n = 0;
  for (auto c = node.child(name); c; c = c.next_sibling(name)) ++n;
  return n;
}

}  // namespace

TEST_CASE("report: check JSON lists files, layers, problems and warnings", "[report]") {
  const auto j = nlohmann::json::parse(check_json(sample_reports()));
  CHECK(j["passed"] == false);
  REQUIRE(j["files"].size() == 3);
  const auto& ok = j["files"][0];
  CHECK(ok["path"] == sample("avgpool_v11.xml"));
  CHECK(ok["passed"] == true);
  REQUIRE(ok["layers"].size() == 3);
  CHECK(ok["layers"][1]["name"] == "pool");
  CHECK(ok["layers"][1]["type"] == "AvgPool");
  CHECK(ok["layers"][1]["id"] == 1);
  CHECK(ok["problems"].empty());

  const auto& bad = j["files"][1];
  CHECK(bad["passed"] == false);
  CHECK(bad["error_count"] == 1);
  REQUIRE(bad["problems"].size() == 1);
  const auto& p = bad["problems"][0];
  CHECK(p["severity"] == "error");
  CHECK(p["rule"] == "dim-mismatch");
  CHECK(p["layer"]["name"] == "pool");
  CHECK(p["port"] == "output port 1");
  CHECK(p["declared"] == "[1,3,4,4]");
  CHECK(p["inferred"] == "[1,3,5,5]");
  CHECK(p["line"].get<int>() > 0);
  CHECK(p["text"].get<std::string>().find("[dim-mismatch]") != std::string::npos);

  const auto& missing = j["files"][2];
  CHECK(missing["layers"].empty());
  REQUIRE(missing["problems"].size() == 1);
  CHECK(missing["problems"][0]["rule"] == "unreadable");
  CHECK(missing["problems"][0]["layer"].is_null());
}

TEST_CASE("report: JUnit has a suite per file, a case per layer, a failure per problem",
          "[report]") {
  const auto text = check_junit(sample_reports());
  pugi::xml_document doc;
  REQUIRE(doc.load_string(text.c_str()));
  const auto root = doc.child("testsuites");
  REQUIRE(root);
  CHECK(count(root, "testsuite") == 3);
  // 1 + 3 cases, 1 + 3 cases, 1 case; one failure (dim-mismatch), one error (unreadable)
  CHECK(root.attribute("tests").as_int() == 9);
  CHECK(root.attribute("failures").as_int() == 1);
  CHECK(root.attribute("errors").as_int() == 1);

  const auto bad =
      root.find_child_by_attribute("testsuite", "name", sample("bad_dim_v11.xml").c_str());
  REQUIRE(bad);
  CHECK(bad.attribute("tests").as_int() == 4);
  CHECK(bad.attribute("failures").as_int() == 1);
  const auto pool =
      bad.find_child_by_attribute("testcase", "name", "layer 1 'pool' (AvgPool-1 opset1)");
  REQUIRE(pool);
  CHECK(std::string(pool.attribute("classname").value()) == sample("bad_dim_v11.xml"));
  const auto failure = pool.child("failure");
  REQUIRE(failure);
  CHECK(std::string(failure.attribute("type").value()) == "dim-mismatch");
  CHECK(std::string(failure.text().get()).find("inferred [1,3,5,5]") != std::string::npos);

  const auto missing =
      root.find_child_by_attribute("testsuite", "name", sample("missing.xml").c_str());
  REQUIRE(missing);
  const auto file_case = missing.find_child_by_attribute("testcase", "name", "(file)");
  REQUIRE(file_case.child("error"));
  CHECK(std::string(file_case.child("error").attribute("type").value()) == "unreadable");
}

TEST_CASE("report: check reports are built file by file, without keeping the reports", "[report]") {
  CheckJson json;
  CheckJunit junit;
  auto totals = [&] {
    pugi::xml_document doc;
    REQUIRE(doc.load_string(junit.str().c_str()));
    const auto root = doc.child("testsuites");
    return std::vector<int>{root.attribute("tests").as_int(), root.attribute("failures").as_int(),
                            root.attribute("errors").as_int(), int(count(root, "testsuite"))};
  };
  CHECK(totals() == std::vector<int>{0, 0, 0, 0});
  CHECK(nlohmann::json::parse(json.str())["files"].empty());
  for (const char* name : {"avgpool_v11.xml", "bad_dim_v11.xml", "missing.xml"}) {
    const auto report = std::make_unique<CheckReport>(check_file(sample(name), {}));
    json.add(*report);
    junit.add(*report);
  }  // each report, and its model, is gone before the documents are written
  CHECK(totals() == std::vector<int>{9, 1, 1, 3});
  CHECK(totals() == std::vector<int>{9, 1, 1, 3});  // str() does not add the totals twice
  const auto j = nlohmann::json::parse(json.str());
  CHECK(j["passed"] == false);
  REQUIRE(j["files"].size() == 3);
  CHECK(j["files"][0]["path"] == sample("avgpool_v11.xml"));
  CHECK(j["files"][0]["layers"].size() == 3);
  CHECK(j["files"][1]["problems"][0]["rule"] == "dim-mismatch");
  CHECK(j["files"][2]["problems"][0]["rule"] == "unreadable");
  // The text around the files as pugixml and nlohmann write a whole document.
  CHECK(json.str().starts_with("{\n  \"irrun_version\": \""));
  CHECK(json.str().ends_with("\n    }\n  ]\n}\n"));
  CHECK(
      junit.str().starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "
                              "name=\"irrun check\" tests=\"9\" failures=\"1\" errors=\"1\">\n"
                              "  <testsuite name=\""));
  CHECK(junit.str().ends_with("  </testsuite>\n</testsuites>\n"));
}

TEST_CASE("report: JUnit gives a layer that failed validation a testcase of its own", "[report]") {
  const auto path = std::string(IRRUN_TESTS_DIR) + "/bad_inputs/kernel_too_big.xml";
  const auto text = check_junit({check_file(path, {})});
  pugi::xml_document doc;
  REQUIRE(doc.load_string(text.c_str()));
  const auto suite = doc.child("testsuites").child("testsuite");
  const auto pool =
      suite.find_child_by_attribute("testcase", "name", "layer 1 'pool' (AvgPool-1 opset1)");
  REQUIRE(pool);
  CHECK(std::string(pool.child("failure").attribute("type").value()) == "validation");
  CHECK_FALSE(suite.find_child_by_attribute("testcase", "name", "(file)").child("failure"));
  CHECK(suite.attribute("failures").as_int() == 1);
}

// A CI reporter shows passed = tests - failures - errors: those count testcases.
TEST_CASE("report: JUnit counts a layer with two problems as one failed test", "[report]") {
  testing::ScratchDir dir("report");
  auto text = testing::read_text(sample("avgpool_v11.xml"));
  const std::string port = "<port id=\"1\" precision=\"FP32\" names=\"pool\">";
  const auto at = text.find(port);
  REQUIRE(at != std::string::npos);
  text.replace(at, port.size(), "<port id=\"1\" precision=\"FP16\" names=\"pool\">");
  const auto five = text.find("<dim>5</dim>", at);
  REQUIRE(five != std::string::npos);
  text.replace(five, 12, "<dim>4</dim>");  // declared [1,3,4,5], and FP16: two failures
  const auto junit = check_junit({check_file(dir.write("two.xml", text), {})});
  pugi::xml_document doc;
  REQUIRE(doc.load_string(junit.c_str()));
  const auto suite = doc.child("testsuites").child("testsuite");
  const auto pool =
      suite.find_child_by_attribute("testcase", "name", "layer 1 'pool' (AvgPool-1 opset1)");
  REQUIRE(pool);
  CHECK(count(pool, "failure") >= 2);
  std::size_t failed = 0;
  for (auto tc = suite.child("testcase"); tc; tc = tc.next_sibling("testcase"))
    failed += tc.child("failure") ? 1 : 0;
  CHECK(suite.attribute("failures").as_int() == static_cast<int>(failed));
  CHECK(doc.child("testsuites").attribute("failures").as_int() == static_cast<int>(failed));
}

TEST_CASE("report: JUnit escapes what it quotes", "[report]") {
  testing::ScratchDir dir("report");
  const auto path = dir.write("a&b<\"c\">.xml", "<net");
  const auto text = check_junit({check_file(path, {})});
  pugi::xml_document doc;
  REQUIRE(doc.load_string(text.c_str()));
  CHECK(std::string(doc.child("testsuites").child("testsuite").attribute("name").value()) == path);
}

TEST_CASE("report: a path that is not UTF-8 gives valid JUnit and JSON", "[report]") {
  testing::ScratchDir dir("report");
  const auto path = dir.write("n\xFFm\x01.xml", "<net");
  const auto reports = std::vector<CheckReport>{check_file(path, {})};
  const auto text = check_junit(reports);
  CHECK(valid_utf8_prefix(text) == text.size());
  CHECK(text.find('\x01') == std::string::npos);  // XML 1.0 has no C0 controls but \t\n\r
  pugi::xml_document doc;
  REQUIRE(doc.load_string(text.c_str()));
  const auto fixed = dir.file("n\xEF\xBF\xBDm\xEF\xBF\xBD.xml");
  CHECK(std::string(doc.child("testsuites").child("testsuite").attribute("name").value()) == fixed);
  const auto j = nlohmann::json::parse(check_json(reports));  // no exception from dump
  CHECK(j["files"][0]["path"] == dir.file("n\xEF\xBF\xBDm\x01.xml"));
  CHECK(j["files"][0]["passed"] == false);
}

TEST_CASE("report: run JSON has the outputs and the comparison", "[report]") {
  Output o;
  o.name = "out";
  o.tensor = Tensor::zeros(ElementType::f32, {1, 2, 2});
  const float values[] = {1, 2, 3, 4};
  std::memcpy(o.tensor.mutable_data<float>(), values, sizeof values);
  ExpectResult r;
  r.golden = "g";
  r.tolerance = {0.5, 0.25};
  r.outputs.push_back(compare_tensors("out", o.tensor, o.tensor.type, o.tensor, r.tolerance));
  const auto j = nlohmann::json::parse(run_json("m.xml", {o}, &r, 3));
  CHECK(j["model"] == "m.xml");
  REQUIRE(j["outputs"].size() == 1);
  CHECK(j["outputs"][0]["shape"] == nlohmann::json::array({1, 2, 2}));
  CHECK(j["outputs"][0]["min"] == 1.0);
  CHECK(j["outputs"][0]["mean"] == 2.5);
  CHECK(j["outputs"][0]["first_values"].size() == 3);
  CHECK(j["expect"]["passed"] == true);
  CHECK(j["expect"]["rtol"] == 0.5);
  CHECK(j["expect"]["outputs"][0]["status"] == "match");
  CHECK_FALSE(nlohmann::json::parse(run_json("m.xml", {o}, nullptr)).contains("expect"));
}

TEST_CASE("report: run JSON writes integer values exactly", "[report][int]") {
  Output o;
  o.name = "out";
  o.tensor = Tensor::zeros(ElementType::i64, {3});
  const std::int64_t values[] = {INT64_MAX, INT64_MIN, -7};
  std::memcpy(o.tensor.mutable_data<std::int64_t>(), values, sizeof values);
  const auto j = nlohmann::json::parse(run_json("m.xml", {o}, nullptr));
  const auto& first = j["outputs"][0]["first_values"];
  REQUIRE(first.size() == 3);
  CHECK(first[0].get<std::int64_t>() == INT64_MAX);  // a double would say 2^63
  CHECK(first[1].get<std::int64_t>() == INT64_MIN);
  CHECK(first[2].get<std::int64_t>() == -7);
  CHECK(j["outputs"][0]["min"].get<std::int64_t>() == INT64_MIN);
  CHECK(j["outputs"][0]["max"].get<std::int64_t>() == INT64_MAX);
  Output u;
  u.name = "u";
  u.tensor = Tensor::zeros(ElementType::u64, {1});
  u.tensor.mutable_data<std::uint64_t>()[0] = UINT64_MAX;
  const auto ju = nlohmann::json::parse(run_json("m.xml", {u}, nullptr));
  CHECK(ju["outputs"][0]["first_values"][0].get<std::uint64_t>() == UINT64_MAX);
}

TEST_CASE("report: run JSON writes integer mismatches exactly", "[report][int]") {
  Output o;
  o.name = "out";
  o.tensor = Tensor::zeros(ElementType::i64, {1});
  o.tensor.mutable_data<std::int64_t>()[0] = INT64_MAX - 1;
  Tensor golden = Tensor::zeros(ElementType::i64, {1});
  golden.mutable_data<std::int64_t>()[0] = INT64_MAX;
  ExpectResult r;
  r.golden = "g";
  r.outputs.push_back(compare_tensors("out", golden, golden.type, o.tensor, r.tolerance));
  const auto j = nlohmann::json::parse(run_json("m.xml", {o}, &r));
  const auto& m = j["expect"]["outputs"][0]["first_mismatches"];
  REQUIRE(m.size() == 1);
  CHECK(m[0]["expected"].get<std::int64_t>() == INT64_MAX);  // a double would say 2^63
  CHECK(m[0]["actual"].get<std::int64_t>() == INT64_MAX - 1);
}
