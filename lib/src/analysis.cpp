#include "irrun/analysis.hpp"

#include "irrun/utf8.hpp"

namespace irrun {

std::vector<ValueInfo> declared_outputs(const Layer& layer) {
  std::vector<ValueInfo> out;
  for (const auto& port : layer.outputs)
    out.push_back({PartialShape::from_ir_dims(port.dims),
                   port.type.value_or(ElementType::undefined), std::nullopt});
  return out;
}

std::string format(const IrModel& model, const Diagnostic& d) {
  std::string s = where(model, d.line);
  s += d.severity == Severity::error ? "error: " : "warning: ";
  if (d.layer) s += describe(model.layers[*d.layer]);
  if (!d.port.empty()) s += (d.layer ? " " : "") + d.port;
  if (d.layer || !d.port.empty()) s += ": ";
  s += d.message;
  s += " [" + d.rule + "]";
  return escape_controls(s);  // one line, whatever a name holds
}

Analysis analyze(const IrModel& model, const Graph& graph, const Buffer* weights,
                 const std::map<std::size_t, PartialShape>& parameter_shapes) {
  Analysis a;
  a.nodes.resize(model.layers.size());
  auto error = [&](std::size_t n, const std::string& rule, const std::string& message) {
    Diagnostic d;
    d.rule = rule;
    d.layer = n;
    d.message = message;
    d.line = model.layers[n].line;
    a.diagnostics.push_back(std::move(d));
  };

  for (auto n : graph.order) {
    const Layer& layer = model.layers[n];
    NodeInfo& info = a.nodes[n];
    info.outputs = declared_outputs(layer);
    if (!graph.nodes[n].reachable) continue;  // OpenVINO drops it; a warning says so
    try {
      info.op = resolve_op(layer);
      if (!info.op) continue;
      const OpEntry& op = *info.op;
      const auto& inputs = graph.nodes[n].inputs;
      if (inputs.size() != op.inputs)
        throw LayerError("bad-inputs", op_label(op) + " takes " + std::to_string(op.inputs) +
                                           " input(s), the layer has " +
                                           std::to_string(inputs.size()) + " incoming edge(s)");
      const std::size_t outputs = output_count(op);
      if (layer.outputs.size() != outputs)
        throw LayerError("bad-outputs", op_label(op) + " has " + std::to_string(outputs) +
                                            " output(s), the layer declares " +
                                            std::to_string(layer.outputs.size()) +
                                            " output port(s)");
      AttrReader reader(layer, n, op_label(op), a.diagnostics);
      if (op.kind == OpKind::constant && !layer.has_data)
        throw LayerError("bad-attribute", "No attributes defined for Const op! (no <data>)");
      info.attrs = op.parse(reader, op.version);
      if (auto* p = std::get_if<ParameterAttrs>(&info.attrs)) {
        if (auto it = parameter_shapes.find(n); it != parameter_shapes.end()) p->shape = it->second;
      }
      std::vector<ValueInfo> in;
      for (const auto& src : inputs) in.push_back(a.nodes[src.node].outputs.at(src.output));
      auto result = op.infer(info.attrs, op.version, InferContext{layer, in, weights});
      for (auto& w : result.warnings) {
        w.layer = n;
        w.line = layer.line;
        a.diagnostics.push_back(std::move(w));
      }
      if (op.kind != OpKind::result) info.outputs = std::move(result.outputs);
      info.geometry = result.geometry;
      info.inferred = true;
    } catch (const LayerError& e) {
      error(n, e.rule(), e.what());
      // A malformed <data> value points at <data>, as the attribute warnings do.
      if (e.rule() == "bad-attribute" && layer.data_line)
        a.diagnostics.back().line = layer.data_line;
    }
  }
  return a;
}

}  // namespace irrun
