#include "irrun/report.hpp"

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <sstream>

#include "irrun/blob.hpp"
#include "irrun/file_io.hpp"
#include "irrun/ops.hpp"
#include "irrun/utf8.hpp"

namespace irrun {
namespace {

using json = nlohmann::ordered_json;

// What JUnit consumers parse must be XML 1.0: a path or message may hold any bytes.
std::string xml_text(const std::string& s) {
  return to_valid_utf8(s, true);
}

// A path (or a name from a latin1 IR) may hold bytes that are not UTF-8: replaced, not thrown.
std::string dump(const json& j) {
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

const char* severity_name(Severity s) {
  return s == Severity::error ? "error" : "warning";
}

json layer_json(const IrModel& ir, std::size_t n) {
  const Layer& l = ir.layers[n];
  return json{{"id", l.id}, {"name", l.name}, {"type", l.type}, {"version", l.version}};
}

json diagnostic_json(const CheckReport& r, const Diagnostic& d) {
  json j;
  j["severity"] = severity_name(d.severity);
  j["rule"] = d.rule;
  j["layer"] = d.layer && r.model ? layer_json(r.model->ir, *d.layer) : json(nullptr);
  j["port"] = d.port;
  j["declared"] = d.declared;
  j["inferred"] = d.inferred;
  j["producer_declared"] = d.producer_declared;
  j["message"] = d.message;
  j["line"] = d.line;
  j["text"] = format(r, d);
  return j;
}

json shape_json(const std::vector<std::int64_t>& shape) {
  return json(shape);
}

// A value of a tensor of `type`: a double for floats (NaN is written as null), an exact JSON
// integer for integers (a 64-bit value does not fit a double).
json number_json(ElementType type, long double v) {
  if (is_floating(type) || std::isnan(v)) return static_cast<double>(v);
  if (v < 0) return static_cast<std::int64_t>(v);
  return static_cast<std::uint64_t>(v);
}

json comparison_json(const TensorComparison& c) {
  json j;
  j["name"] = c.name;
  j["status"] = to_string(c.status);
  j["passed"] = c.passed();
  j["detail"] = c.detail;
  j["count"] = c.count;
  j["out_of_tolerance"] = c.out_of_tolerance;
  j["max_abs_error"] = c.max_abs_error;  // inf is written as null
  j["max_rel_error"] = c.max_rel_error;
  j["first_mismatches"] = json::array();
  for (const auto& m : c.first)
    j["first_mismatches"].push_back(json{{"index", m.index},
                                         {"expected", number_json(c.type, m.expected)},
                                         {"actual", number_json(c.type, m.actual)}});
  return j;
}

json first_values_json(const Tensor& t, std::size_t n) {
  json values = json::array();
  for (long double v : exact_values(t, n)) values.push_back(number_json(t.type, v));
  return values;
}

}  // namespace

void CheckJson::add(const CheckReport& r) {
  json f;
  f["path"] = r.path;
  f["passed"] = r.passed();
  f["error_count"] = r.errors();
  f["warning_count"] = r.warnings();
  f["layers"] = json::array();
  if (r.model)
    for (auto n : r.checked) f["layers"].push_back(layer_json(r.model->ir, n));
  f["problems"] = json::array();
  f["warnings"] = json::array();
  for (const auto& d : r.diagnostics)
    f[d.severity == Severity::error ? "problems" : "warnings"].push_back(diagnostic_json(r, d));
  passed_ = passed_ && r.passed();
  // Indented as an element of "files": a JSON text holds no raw newline inside a string.
  std::string text = f.dump(2, ' ', false, json::error_handler_t::replace);
  files_ += files_.empty() ? "    " : ",\n    ";
  for (char c : text) {
    files_ += c;
    if (c == '\n') files_ += "    ";
  }
}

std::string CheckJson::str() const {
  return "{\n  \"irrun_version\": " + json(IRRUN_VERSION).dump() +
         ",\n  \"passed\": " + (passed_ ? "true" : "false") +
         ",\n  \"files\": " + (files_.empty() ? "[]" : "[\n" + files_ + "\n  ]") + "\n}\n";
}

void CheckJunit::add(const CheckReport& r) {
  pugi::xml_document doc;
  auto suite = doc.append_child("testsuite");
  suite.append_attribute("name") = xml_text(r.path).c_str();
  std::size_t tests = 0, failures = 0, errors = 0;

  auto add_case = [&](const std::string& name) {
    auto tc = suite.append_child("testcase");
    tc.append_attribute("classname") = xml_text(r.path).c_str();
    tc.append_attribute("name") = xml_text(name).c_str();
    ++tests;
    return tc;
  };
  // Every diagnostic goes to its layer's testcase when that layer was checked (edge
  // mismatches excepted: they are about the file's wiring), else to the file's testcase.
  auto file_case = add_case("(file)");
  std::map<std::size_t, pugi::xml_node> layer_cases;
  if (r.model)
    for (auto n : r.checked) layer_cases[n] = add_case(describe(r.model->ir.layers[n]));

  std::vector<std::pair<pugi::xml_node, std::string>> outs;
  for (const auto& d : r.diagnostics) {
    pugi::xml_node tc = file_case;
    if (d.layer && d.rule != "edge-mismatch") {
      auto it = layer_cases.find(*d.layer);
      // A layer whose error kept it from being checked (a validation failure) still fails
      // as itself, not as the file: a CI history then shows that layer failing.
      if (it == layer_cases.end() && d.severity == Severity::error && r.model)
        it = layer_cases.emplace(*d.layer, add_case(describe(r.model->ir.layers[*d.layer]))).first;
      if (it != layer_cases.end()) tc = it->second;
    }
    const auto text = format(r, d);
    if (d.severity == Severity::warning) {
      outs.emplace_back(tc, text);
      continue;
    }
    const bool error = d.rule == "unreadable" || d.rule == "memory-limit";
    auto f = tc.append_child(error ? "error" : "failure");
    f.append_attribute("message") = xml_text(d.message).c_str();
    f.append_attribute("type") = d.rule.c_str();
    f.text().set(xml_text(text).c_str());
  }
  // JUnit counts testcases, not their failure elements: a case with an error is an error, else
  // one with a failure a failure (a layer with two problems is one failed test).
  for (auto tc = suite.child("testcase"); tc; tc = tc.next_sibling("testcase"))
    tc.child("error") ? ++errors : tc.child("failure") ? ++failures : 0;
  for (auto& [tc, text] : outs) {
    auto out = tc.child("system-out");
    if (!out) out = tc.append_child("system-out");
    out.text().set((std::string(out.text().get()) + xml_text(text) + "\n").c_str());
  }
  suite.append_attribute("tests") = tests;
  suite.append_attribute("failures") = failures;
  suite.append_attribute("errors") = errors;
  suite.append_attribute("skipped") = 0;
  tests_ += tests;
  failures_ += failures;
  errors_ += errors;
  std::ostringstream s;
  suite.print(s, "  ", pugi::format_default, pugi::encoding_utf8, 1);
  suites_ += s.str();
}

std::string CheckJunit::str() const {
  // The root as pugixml writes it; its attributes are plain ASCII.
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"irrun check\" tests=\"" +
         std::to_string(tests_) + "\" failures=\"" + std::to_string(failures_) + "\" errors=\"" +
         std::to_string(errors_) + "\"" +
         (suites_.empty() ? " />\n" : ">\n" + suites_ + "</testsuites>\n");
}

void CheckJunit::write(const std::string& path) const {
  const auto text = str();
  write_file_atomically(path, std::as_bytes(std::span<const char>(text.data(), text.size())));
}

std::string check_json(const std::vector<CheckReport>& reports) {
  CheckJson j;
  for (const auto& r : reports) j.add(r);
  return j.str();
}

std::string check_junit(const std::vector<CheckReport>& reports) {
  CheckJunit j;
  for (const auto& r : reports) j.add(r);
  return j.str();
}

std::string run_json(const std::string& model_path, const std::vector<Output>& outputs,
                     const ExpectResult* expect, std::size_t first_n) {
  json j;
  j["irrun_version"] = IRRUN_VERSION;
  j["model"] = model_path;
  j["outputs"] = json::array();
  for (const auto& o : outputs) {
    const auto st = stats(o.tensor);
    json out;
    out["name"] = o.name;
    out["type"] = std::string(to_string(o.tensor.type));
    out["shape"] = shape_json(o.tensor.shape);
    out["count"] = o.tensor.element_count();
    out["min"] = number_json(o.tensor.type, st.exact_min);  // NaN (no value) is written as null
    out["max"] = number_json(o.tensor.type, st.exact_max);
    out["mean"] = st.mean;
    out["nan_count"] = st.nan_count;
    out["first_values"] = first_values_json(o.tensor, first_n);
    j["outputs"].push_back(std::move(out));
  }
  if (expect) {
    json e;
    e["golden"] = expect->golden;
    e["rtol"] = expect->tolerance.rtol;
    e["atol"] = expect->tolerance.atol;
    e["passed"] = expect->passed();
    e["notes"] = expect->notes;
    e["outputs"] = json::array();
    for (const auto& c : expect->outputs) e["outputs"].push_back(comparison_json(c));
    j["expect"] = std::move(e);
  }
  return dump(j);
}

}  // namespace irrun
