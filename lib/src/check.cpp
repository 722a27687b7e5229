#include "irrun/check.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "irrun/error.hpp"
#include "irrun/pre_process.hpp"
#include "irrun/utf8.hpp"

namespace irrun {
namespace {

std::string port_label(const char* kind, const Port& port) {
  return std::string(kind) + " port " + std::to_string(port.id);
}

void compare_outputs(const Model& m, const Analysis& a, std::size_t n, Diagnostics& out) {
  const Layer& layer = m.ir.layers[n];
  const auto& inferred = a.nodes[n].outputs;
  for (std::size_t i = 0; i < layer.outputs.size() && i < inferred.size(); ++i) {
    const Port& port = layer.outputs[i];
    const auto declared = PartialShape::from_ir_dims(port.dims);
    Diagnostic d;
    d.layer = n;
    d.port = port_label("output", port);
    d.line = port.line;
    if (!declared_matches(declared, inferred[i].shape)) {
      d.rule = "dim-mismatch";
      d.declared = to_string(declared);
      d.inferred = to_string(inferred[i].shape);
      d.message = "declared " + d.declared + ", inferred " + d.inferred;
      out.push_back(d);
    }
    if (port.type && *port.type != inferred[i].type) {
      d.rule = "type-mismatch";
      d.declared = port.precision;
      d.inferred = std::string(to_string(inferred[i].type));
      d.message = "declared precision " + d.declared + ", inferred element type " + d.inferred;
      out.push_back(d);
    }
  }
}

void compare_edges(const Model& m, Diagnostics& out) {
  const auto& layers = m.ir.layers;
  for (std::size_t n = 0; n < layers.size(); ++n) {
    const auto& node = m.graph.nodes[n];
    for (std::size_t i = 0; i < node.inputs.size(); ++i) {
      const auto& src = node.inputs[i];
      const Port& from = layers[src.node].outputs[src.output];
      const Port& to = layers[n].inputs[i];
      const auto produced = PartialShape::from_ir_dims(from.dims);
      const auto consumed = PartialShape::from_ir_dims(to.dims);
      if (compatible(produced, consumed)) continue;
      const Edge& e = m.ir.edges[node.in_edges[i]];
      Diagnostic d;
      d.rule = "edge-mismatch";
      d.layer = n;
      d.port = port_label("input", to);
      d.line = e.line;
      d.declared = to_string(consumed);
      d.producer_declared = to_string(produced);  // not inferred: both ends are the file's
      d.message = "declared " + d.declared + ", but its producer " + describe(layers[src.node]) +
                  " " + port_label("output", from) + " declares " + d.producer_declared;
      out.push_back(std::move(d));
    }
  }
}

// A v10 IR's names as update_v10_model (OpenVINO's read_model) adds and checks them: the
// inputs' and outputs' tensor names must not collide, then each Result's producer name ("name",
// or "name.i" for a producer with several outputs) and each Parameter's name is added to its
// tensor, unless another tensor already has it. OpenVINO stops at the first collision; so does
// this (`collide` throws it to check_v10_names).
void v10_names(const Model& m) {
  std::map<std::string, std::optional<Source>> leaf;  // name -> its tensor; none: an op name
  std::map<Source, std::set<std::string>> names;      // each tensor's names, as they grow
  const auto names_of = [&](Source s) -> std::set<std::string>& {
    auto [it, fresh] = names.try_emplace(s);
    const auto& ports = m.ir.layers[s.node].outputs;
    if (fresh && s.output < ports.size())
      it->second.insert(ports[s.output].names.begin(), ports[s.output].names.end());
    return it->second;
  };
  const auto collide = [&](std::size_t n, const std::string& name, const char* what) {
    Diagnostic d;
    d.rule = "name-collision";
    d.layer = n;
    d.line = m.ir.layers[n].line;
    d.message = std::string(what) + " ('" + name +
                "'). Please use MO to generate new IR version, it should allow to avoid the issue";
    throw d;
  };
  constexpr const char* kTensors = "Model tensor names have collisions.";
  constexpr const char* kOps = "Model operation names have collisions with tensor names.";
  for (auto p : m.graph.parameters)
    for (const auto& name : names_of({p, 0})) {
      if (!leaf.emplace(name, Source{p, 0}).second) collide(p, name, kTensors);
    }
  // Results without an input are the analysis' errors.
  std::vector<std::size_t> results;
  for (auto r : m.graph.results)
    if (!m.graph.nodes[r].inputs.empty()) results.push_back(r);
  for (auto r : results) {
    const auto src = m.graph.nodes[r].inputs[0];
    for (const auto& name : names_of(src)) {
      const auto [it, fresh] = leaf.emplace(name, src);
      if (!fresh && it->second != src) collide(r, name, kTensors);
    }
  }
  const auto add_op_name = [&](std::size_t n, Source s, const std::string& name) {
    auto& own = names_of(s);
    if (leaf.count(name) && !own.count(name)) collide(n, name, kOps);
    leaf.emplace(name, std::nullopt);
    own.insert(name);
  };
  for (auto r : results) {
    const auto src = m.graph.nodes[r].inputs[0];
    add_op_name(r, src, v10_output_name(m.ir.layers[src.node], src.output));
  }
  for (auto p : m.graph.parameters) add_op_name(p, {p, 0}, m.ir.layers[p].name);
}

void check_v10_names(const Model& m, Diagnostics& out) {
  if (m.ir.ir_version != 10) return;
  try {
    v10_names(m);
  } catch (Diagnostic& d) {
    out.push_back(std::move(d));
  }
}

}  // namespace

std::size_t CheckReport::errors() const {
  return static_cast<std::size_t>(
      std::count_if(diagnostics.begin(), diagnostics.end(),
                    [](const auto& d) { return d.severity == Severity::error; }));
}

std::size_t CheckReport::warnings() const {
  return diagnostics.size() - errors();
}

Diagnostics check_model(const Model& m, bool strict, std::vector<std::size_t>* checked) {
  const auto analysis = analyze(m.ir, m.graph, m.weights ? &*m.weights : nullptr);

  Diagnostics all = m.ir.diagnostics;
  all.insert(all.end(), analysis.diagnostics.begin(), analysis.diagnostics.end());
  for (auto n : m.graph.order) {
    const auto& info = analysis.nodes[n];
    if (!info.inferred) continue;
    if (checked) checked->push_back(n);
    compare_outputs(m, analysis, n, all);
  }
  compare_edges(m, all);
  check_v10_names(m, all);
  try {
    mean_values(m, false);
  } catch (const ModelError& e) {
    // A Parameter that does not parse is the analysis' error already.
    if (e.detail().rfind("<pre-process>", 0) == 0) {
      Diagnostic d;
      d.rule = "pre-process";
      d.message = e.detail();
      d.line = e.line();
      all.push_back(std::move(d));
    }
  }
  if (checked) std::sort(checked->begin(), checked->end());
  std::stable_sort(all.begin(), all.end(),
                   [](const Diagnostic& a, const Diagnostic& b) { return a.line < b.line; });
  // Strict mode promotes what OpenVINO silently accepts; a missing .bin is not such a leniency
  // (shape validation does not need weights), so it stays a warning.
  if (strict) {
    for (auto& d : all) {
      if (d.rule != "no-weights") d.severity = Severity::error;
    }
  }
  return all;
}

CheckReport check_file(const std::string& xml_path, const CheckOptions& options) {
  CheckReport report;
  report.path = xml_path;
  try {
    report.model = load_model(xml_path, options.weights);
  } catch (const ModelError& e) {
    Diagnostic d;
    d.rule = "unreadable";
    d.message = e.detail();
    d.line = e.line();
    if (e.path() != xml_path) d.message = e.path() + ": " + d.message;
    report.diagnostics.push_back(std::move(d));
    return report;
  } catch (const Error& e) {
    // Over --max-memory: this file is not checked, the next ones still are.
    if (e.code() != ExitCode::limit) throw;
    Diagnostic d;
    d.rule = "memory-limit";
    d.message = e.what();
    if (d.message.starts_with(xml_path + ": ")) d.message.erase(0, xml_path.size() + 2);
    report.diagnostics.push_back(std::move(d));
    return report;
  }
  report.diagnostics = check_model(*report.model, options.strict, &report.checked);
  return report;
}

std::string format(const CheckReport& report, const Diagnostic& d) {
  if (report.model) return format(report.model->ir, d);
  std::string s = report.path + (d.line ? ":" + std::to_string(d.line) : "") +
                  ": error: " + d.message + " [" + d.rule + "]";
  return escape_controls(s);
}

}  // namespace irrun
