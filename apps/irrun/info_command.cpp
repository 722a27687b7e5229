// `irrun info MODEL.xml`: the graph as a table.
#include <algorithm>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "irrun/analysis.hpp"
#include "irrun/attrs.hpp"
#include "irrun/check.hpp"
#include "irrun/error.hpp"
#include "irrun/executor.hpp"
#include "irrun/model.hpp"
#include "irrun/ops.hpp"
#include "irrun/pre_process.hpp"
#include "irrun/utf8.hpp"

namespace irrun::cli {
namespace {

template <class T>
std::string join(const std::vector<T>& v, const char* sep) {
  std::ostringstream s;
  for (std::size_t i = 0; i < v.size(); ++i) s << (i ? sep : "") << v[i];
  return s.str();
}

std::string key_attributes(const NodeInfo& info) {
  if (const auto* p = std::get_if<ParameterAttrs>(&info.attrs))
    return std::string(to_string(p->type)) + " " + to_string(p->shape);
  if (const auto* c = std::get_if<ConstAttrs>(&info.attrs))
    return std::string(to_string(c->type)) + " " + to_string(c->shape);
  const auto* a = std::get_if<PoolAttrs>(&info.attrs);
  if (!a || !info.op) return "";
  const auto kind = info.op->kind;
  const bool indices = output_count(*info.op) == 2;
  const std::string index_type = "indices=" + std::string(to_string(a->index_element_type));
  if (kind == OpKind::adaptive_max_pool) return index_type;
  std::string s = "k=" + join(a->kernel, "x") + " s=" + join(a->strides, "x");
  if (info.geometry) {
    const auto& g = *info.geometry;
    const auto first = 3 - g.spatial_rank;
    std::vector<std::int64_t> pb(g.pad_begin.begin() + first, g.pad_begin.end());
    std::vector<std::int64_t> pe(g.pad_end.begin() + first, g.pad_end.end());
    s += " pads=" + join(pb, ",") + "/" + join(pe, ",");
  } else if (!a->pads_begin.empty() || !a->pads_end.empty()) {
    s += " pads=" + join(a->pads_begin, ",") + "/" + join(a->pads_end, ",");
  }
  if (!a->dilations.empty()) s += " d=" + join(a->dilations, "x");
  if (kind == OpKind::avg_pool) s += a->exclude_pad ? " exclude-pad" : " include-pad";
  s += " " + to_string(a->rounding);
  if (a->auto_pad != AutoPad::explicit_) s += " " + to_string(a->auto_pad);
  if (indices) s += " axis=" + std::to_string(a->axis) + " " + index_type;
  return s;
}

// Long framework-generated names (100+ characters in TF models) are shortened in the middle
// so the table stays readable (--wide keeps them); the end of a name is usually the telling part.
// Cut at character boundaries, never inside a UTF-8 sequence.
std::string shorten(const std::string& name, std::size_t max = 48) {
  if (display_width(name) <= max) return name;
  const std::size_t tail = max / 2, head = max - tail - 3;
  // Byte offset of the character `chars` characters in.
  auto offset = [&](std::size_t chars) {
    std::size_t i = 0;
    for (; i < name.size(); ++i)
      if ((static_cast<unsigned char>(name[i]) & 0xC0) != 0x80 && chars-- == 0) break;
    return i;
  };
  return name.substr(0, offset(head)) + "..." + name.substr(offset(display_width(name) - tail));
}

// The op as "AvgPool-14", also for a layer OpenVINO drops (not analysed); an op irrun does not
// implement as its type and the IR's version string.
std::string type_label(const Layer& layer, const NodeInfo& info) {
  const OpEntry* op = info.op;
  try {
    if (!op) op = resolve_op(layer);
  } catch (const LayerError&) {  // an opset that lacks the type: check reports it
  }
  return op ? op_label(*op) : escape_controls(layer.type + " " + layer.version);
}

// "declared -> inferred" when they differ, else just the shape.
std::string shapes(const PartialShape& declared, const std::optional<PartialShape>& inferred) {
  const auto d = to_string(declared);
  if (!inferred || to_string(*inferred) == d) return d;
  return d + " -> " + to_string(*inferred);
}

}  // namespace

Command add_info(CLI::App& app, const Globals& globals) {
  struct Options {
    std::string model;
    std::string weights;
    bool wide = false;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("info", "Print the graph as a table of layers and shapes");
  cmd->add_option("model", opts->model, "IR .xml file")->required();
  cmd->add_option("--weights", opts->weights, "Weights file (default: MODEL.bin)");
  cmd->add_flag("--wide", opts->wide,
                "Print whole layer names (else names over 48 characters keep their start and end)");
  cmd->footer("Shapes read 'declared -> inferred' where shape inference disagrees with the file.");

  return {
      cmd, [opts, &globals]() {
        const auto m = load_model(opts->model, opts->weights.empty()
                                                   ? std::nullopt
                                                   : std::optional<std::string>(opts->weights));
        const auto a = analyze(m.ir, m.graph, m.weights ? &*m.weights : nullptr);
        const auto path = escape_controls(m.ir.path);  // one line, whatever the path holds
        const auto weights = escape_controls(m.weights_path);
        if (!globals.quiet)
          std::printf("%s: IR v%d '%s': %zu layers, %zu input(s), %zu output(s), weights %s\n",
                      path.c_str(), m.ir.ir_version, escape_controls(m.ir.name).c_str(),
                      m.ir.layers.size(), m.graph.parameters.size(), m.graph.results.size(),
                      m.weights
                          ? (weights + " (" + std::to_string(m.weights->size()) + " bytes)").c_str()
                          : "none");
        // The <pre-process> block's means (its errors are check_model's, below).
        std::optional<MeanValues> means;
        try {
          means = mean_values(m, false);
        } catch (const ModelError&) {
        }
        if (means && !globals.quiet)
          std::printf("mean values %s (<pre-process>) are subtracted from input '%s'\n",
                      to_string(means->mean.shape).c_str(),
                      escape_controls(m.ir.layers[means->parameter].name).c_str());
        // Whether `run` executes layer n: the executor's own refusals, on the IR's shapes
        // (asked once per layer: a refusal may analyse the model again).
        std::vector<bool> runs_at(m.ir.layers.size(), false);
        for (auto n : m.graph.order) {
          try {
            require_layer_runs(m, a, n, false);
            runs_at[n] = true;
          } catch (const Error&) {
          }
        }
        const bool whole_model_runs =
            std::all_of(m.graph.order.begin(), m.graph.order.end(),
                        [&](std::size_t n) { return !m.graph.nodes[n].reachable || runs_at[n]; });
        std::vector<std::vector<std::string>> rows{
            {"id", "name", "type", "attributes", "inputs", "outputs", "run"}};
        for (auto n : m.graph.order) {
          const Layer& layer = m.ir.layers[n];
          const NodeInfo& info = a.nodes[n];
          std::vector<std::string> ins, outs;
          const auto& node = m.graph.nodes[n];
          for (std::size_t i = 0; i < node.inputs.size(); ++i) {
            const auto& src = node.inputs[i];
            ins.push_back(shapes(PartialShape::from_ir_dims(layer.inputs[i].dims),
                                 a.nodes[src.node].outputs[src.output].shape));
          }
          for (std::size_t i = 0; i < layer.outputs.size(); ++i) {
            std::optional<PartialShape> inferred;
            if (info.inferred && i < info.outputs.size()) inferred = info.outputs[i].shape;
            outs.push_back(shapes(PartialShape::from_ir_dims(layer.outputs[i].dims), inferred));
          }
          const bool runs = runs_at[n];
          const bool pool = info.op && is_pool(info.op->kind);
          // In a model with ops irrun cannot run, a pooling layer still runs alone (--layer).
          const char* run = !node.reachable    ? "unused"
                            : !runs            ? "no"
                            : whole_model_runs ? "yes"
                            : pool             ? "--layer"
                                               : "no";
          rows.push_back(
              {std::to_string(layer.id),
               opts->wide ? escape_controls(layer.name) : shorten(escape_controls(layer.name)),
               type_label(layer, info), key_attributes(info), join(ins, " "), join(outs, " "),
               run});
        }
        std::vector<std::size_t> width(rows[0].size(), 0);
        for (const auto& r : rows)
          for (std::size_t c = 0; c < r.size(); ++c)
            width[c] = std::max(width[c], display_width(r[c]));
        for (const auto& r : rows) {
          std::string line;
          for (std::size_t c = 0; c < r.size(); ++c) {
            line += r[c];
            if (c + 1 < r.size()) line += std::string(width[c] - display_width(r[c]) + 2, ' ');
          }
          std::printf("%s\n", line.c_str());
        }
        // What `irrun check` finds, declared dims included; a model that fails it is exit 3.
        bool errors = false;
        for (const auto& d : check_model(m, false)) {
          std::printf("%s\n", format(m.ir, d).c_str());
          errors = errors || d.severity == Severity::error;
        }
        return static_cast<int>(errors ? ExitCode::bad_model : ExitCode::ok);
      }};
}

}  // namespace irrun::cli
