#include "irrun/executor.hpp"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <set>
#include <utility>

#include "irrun/analysis.hpp"
#include "irrun/blob.hpp"
#include "irrun/checked.hpp"
#include "irrun/error.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "irrun/kernels/max_pool.hpp"

namespace irrun {
namespace {

std::map<std::size_t, PartialShape> input_shapes(const std::map<std::size_t, Tensor>& inputs) {
  std::map<std::size_t, PartialShape> shapes;
  for (const auto& [layer, tensor] : inputs)
    shapes[layer] = PartialShape::from_static(tensor.shape);
  return shapes;
}

// Analysis that must succeed: the first layer error aborts with its formatted line. An error
// that only the inputs' shapes bring (a batch of 0 for a dynamic batch) is the inputs' fault:
// exit 4, naming their shapes, where the model's own errors are exit 3.
Analysis analyze_or_throw(const Model& m, const std::map<std::size_t, PartialShape>& shapes) {
  const Buffer* weights = m.weights ? &*m.weights : nullptr;
  auto a = analyze(m.ir, m.graph, weights, shapes);
  for (const auto& d : a.diagnostics) {
    if (d.severity != Severity::error) continue;
    const auto what = describe(m.ir.layers[*d.layer]) + ": " + d.message + " [" + d.rule + "]";
    const auto& declared = analyze(m.ir, m.graph, weights).diagnostics;
    const bool model_fails = std::any_of(declared.begin(), declared.end(), [](const auto& e) {
      return e.severity == Severity::error;
    });
    if (shapes.empty() || model_fails) throw ModelError(m.ir.path, d.line, what);
    std::string given;
    for (const auto& [n, shape] : shapes)
      given += (given.empty() ? "" : ", ") + ("'" + m.ir.layers[n].name + "' ") + to_string(shape);
    throw input_error(where(m.ir, d.line) + what + " (with the inputs' shapes: " + given + ")");
  }
  return a;
}

ModelError no_weights_error(const Model& m, std::size_t n) {
  return ModelError(m.ir.path, m.ir.layers[n].line,
                    describe(m.ir.layers[n]) +
                        ": needs weights, but none were named and there is no " + m.weights_path);
}

Tensor const_tensor(const Model& m, std::size_t n, const ConstAttrs& c) {
  if (!m.weights) throw no_weights_error(m, n);
  Tensor t;
  t.type = c.type;
  t.shape = c.shape;
  t.buffer = m.weights->slice(c.offset, packed_byte_size(c.type, t.element_count()));
  // The .bin may place a Const at any byte offset; kernels read elements typed, and a misaligned
  // typed load is undefined behaviour, so such a Const is copied (as read_npy does).
  const std::size_t item = bit_width(c.type) / 8;
  if (item > 1 && reinterpret_cast<std::uintptr_t>(t.buffer.data()) % item != 0) {
    Buffer copy = Buffer::allocate(t.buffer.size());
    std::memcpy(copy.mutable_data(), t.buffer.data(), t.buffer.size());
    t.buffer = std::move(copy);
  }
  return t;
}

// How many inputs of other layers each layer's outputs feed.
std::vector<std::size_t> use_counts(const Model& m) {
  std::vector<std::size_t> uses(m.ir.layers.size(), 0);
  for (auto n : m.graph.order)
    for (const auto& src : m.graph.nodes[n].inputs) ++uses[src.node];
  return uses;
}

// The caller tensors of `write_into` that outputs are written straight into.
struct DirectOutputs {
  std::map<std::pair<std::size_t, std::size_t>, Tensor> computed;  // by pooling layer and port
  std::map<std::size_t, Tensor> converted;  // by Result layer: a v10 IR's output, converted
};

// The bytes a pooling layer of static output `shape` allocates: its outputs (MaxPool's indices
// too have the values' shape), but those computed into a caller's tensor, plus its kernel's
// per-axis window tables, 16 bytes per output index. None past 2^64.
std::optional<std::uint64_t> pool_bytes(const NodeInfo& info, std::size_t n,
                                        const std::vector<std::int64_t>& shape,
                                        const DirectOutputs* direct) {
  std::optional<std::uint64_t> bytes = 0;
  for (std::size_t i = 0; i < info.outputs.size(); ++i) {
    const auto count = checked_product(shape);
    const auto bits = count ? checked_mul(*count, bit_width(info.outputs[i].type)) : std::nullopt;
    const bool callers = direct && direct->computed.count({n, i});
    bytes = bits && bytes ? checked_add(*bytes, callers ? 0 : *bits / 8 + 1) : std::nullopt;
  }
  for (std::size_t i = 2; bytes && i < shape.size(); ++i) {
    const auto table = checked_mul(static_cast<std::uint64_t>(shape[i]), 16);
    bytes = table ? checked_add(*bytes, *table) : std::nullopt;
  }
  return bytes;
}

std::string output_what(const Model& m, std::size_t n, const NodeInfo& info,
                        const std::vector<std::int64_t>& shape) {
  return m.ir.path + ": " + describe(m.ir.layers[n]) + ": its output " +
         std::string(to_string(info.outputs[0].type)) + " " + to_string(shape);
}

// Before any compute (require_layer_runs having passed every layer): given the run's direct
// outputs, the peak of the memory the run allocates fits the memory limit. The peak follows
// run_model's schedule: a pooling output (plus its kernel's per-axis window tables, 16 bytes per
// output index) lives until its last consumer has run, or to the end when a Result returns it; one
// computed into a caller's tensor is not irrun's (it was counted, and a run on inputs of the shapes
// prepared before skipped the check).
void preflight(const Model& m, const Analysis& a, const DirectOutputs* direct) {
  std::vector<std::size_t> uses = use_counts(m);
  std::vector<std::uint64_t> held(m.ir.layers.size(), 0);
  std::vector<bool> returned(m.ir.layers.size(), false);
  std::uint64_t live = 0, peak = 0, largest = 0;
  std::size_t largest_layer = 0;
  for (auto n : m.graph.order) {
    if (!m.graph.nodes[n].reachable) continue;
    const auto& info = a.nodes[n];
    const auto kind = info.op->kind;
    if (is_pool(kind)) {
      const auto shape = info.outputs[0].shape.to_static();
      const auto bytes = pool_bytes(info, n, shape, direct);
      const auto total = bytes ? checked_add(live, *bytes) : std::nullopt;
      if (!total) require_memory(std::nullopt, output_what(m, n, info, shape));
      held[n] = *bytes;
      live = *total;
      peak = std::max(peak, live);
      if (*bytes > largest) largest = *bytes, largest_layer = n;
    }
    for (const auto& src : m.graph.nodes[n].inputs) {
      if (kind == OpKind::result) returned[src.node] = true;
      if (--uses[src.node] == 0 && !returned[src.node]) live -= held[src.node];
    }
  }
  if (direct && peak)
    require_memory(peak, m.ir.path + ": running the model (largest output: " +
                             describe(m.ir.layers[largest_layer]) + ", " +
                             std::string(to_string(a.nodes[largest_layer].outputs[0].type)) + " " +
                             to_string(a.nodes[largest_layer].outputs[0].shape) + ")");
}

// The type an output of the graph is handed out in (v10_output_type for a v10 IR).
ElementType exposed_type(const Model& m, ElementType type) {
  return m.ir.ir_version == 10 ? v10_output_type(type) : type;
}

// Each caller tensor is checked against its output. A pooling output is computed into it; one
// converted for a v10 IR is computed in its own type, then converted into it. One overlapping an
// input or another of them is left out (a kernel would overwrite what it or a later kernel still
// reads), and a layer output feeding two Results is computed into the first.
DirectOutputs direct_outputs(const Model& m, const Analysis& a,
                             const std::map<std::size_t, Tensor>& inputs,
                             const std::map<std::size_t, Tensor>& write_into) {
  const auto overlap = [](const Buffer& x, const Buffer& y) {
    return x.size() && y.size() && x.data() < y.data() + y.size() && y.data() < x.data() + x.size();
  };
  DirectOutputs direct;
  for (const auto& entry : write_into) {
    const std::size_t r = entry.first;
    const Tensor& t = entry.second;  // not a structured binding: clang 14 cannot capture those
    const auto& src = m.graph.nodes.at(r).inputs.at(0);
    const auto& out = a.nodes[src.node].outputs.at(src.output);
    const std::string what = m.ir.path + ": output '" + output_name(m, r) + "'";
    const auto type = exposed_type(m, out.type);
    if (!out.shape.is_static() || t.type != type || t.shape != out.shape.to_static())
      throw input_error(what + " is " + std::string(to_string(type)) + " " + to_string(out.shape) +
                        ", the tensor given for it is " + std::string(to_string(t.type)) + " " +
                        to_string(t.shape));
    if (!t.buffer.writable() || t.buffer.size() < t.byte_size())
      throw input_error(what + ": the tensor given is read-only or too small");
    const auto* op = a.nodes[src.node].op;
    const bool converted = type != out.type;
    if (!converted && (!op || !is_pool(op->kind) || direct.computed.count({src.node, src.output})))
      continue;
    const auto overlaps = [&](const auto& other) { return overlap(other.second.buffer, t.buffer); };
    if (std::any_of(inputs.begin(), inputs.end(), overlaps) ||
        std::any_of(direct.computed.begin(), direct.computed.end(), overlaps) ||
        std::any_of(direct.converted.begin(), direct.converted.end(), overlaps))
      continue;
    if (converted)
      direct.converted.emplace(r, t);
    else
      direct.computed.emplace(std::pair{src.node, src.output}, t);
  }
  return direct;
}

// Whether layer n's outputs were taken from a TensorRecycler (pooling outputs; the caller's
// tensors among them are not sole-owned, so never kept). Other owned tensors a run makes (a
// misaligned Const's copy, a mean-subtracted input) are made afresh every run: kept, they would
// pile up run after run.
bool taken_from_recycler(const Analysis& a, std::size_t n) {
  return a.nodes[n].op && is_pool(a.nodes[n].op->kind);
}

}  // namespace

bool taken_from_recycler(const Model& model, const PreparedRun& prepared, const Output& out) {
  const auto& src = model.graph.nodes.at(out.result_layer).inputs.at(0);
  const bool converted =
      out.tensor.type != prepared.analysis.nodes.at(src.node).outputs.at(src.output).type;
  return converted || taken_from_recycler(prepared.analysis, src.node);
}

namespace {

// The name a Result's output is known by, before names shared by two outputs are told apart.
std::string tensor_name(const Model& model, std::size_t result_layer) {
  const auto& node = model.graph.nodes[result_layer];
  if (!node.inputs.empty()) {
    const auto& src = node.inputs[0];
    const Layer& producer = model.ir.layers[src.node];
    const auto& names = producer.outputs[src.output].names;
    if (!names.empty()) return names.front();
    // OpenVINO names a v10 output after its producer; a v11 one has no name.
    if (model.ir.ir_version == 10) return v10_output_name(producer, src.output);
  }
  return model.ir.layers[result_layer].name;
}

}  // namespace

std::vector<std::string> output_names(const Model& model) {
  std::vector<std::string> names;
  std::set<std::string> used;
  for (auto r : model.graph.results) {
    const std::string base = tensor_name(model, r);
    std::string name = base;
    for (int k = 1; used.count(name); ++k) name = base + "_" + std::to_string(k);
    used.insert(name);
    names.push_back(std::move(name));
  }
  return names;
}

std::string output_name(const Model& model, std::size_t result_layer) {
  const auto& results = model.graph.results;
  const auto at = std::find(results.begin(), results.end(), result_layer);
  return at == results.end() ? tensor_name(model, result_layer)
                             : output_names(model)[static_cast<std::size_t>(at - results.begin())];
}
void require_executable(const Model& model) {
  std::vector<std::string> unsupported;
  for (auto n : model.graph.order) {
    if (!model.graph.nodes[n].reachable) continue;
    const Layer& layer = model.ir.layers[n];
    const OpEntry* op = nullptr;
    try {
      op = resolve_op(layer);
    } catch (const LayerError& e) {
      throw ModelError(model.ir.path, layer.line, describe(layer) + ": " + e.what());
    }
    if (!op) unsupported.push_back("'" + layer.name + "' (" + layer.type + ")");
  }
  if (unsupported.empty()) return;
  std::string list;
  for (std::size_t i = 0; i < unsupported.size() && i < 5; ++i)
    list += (i ? ", " : "") + unsupported[i];
  if (unsupported.size() > 5) list += " and " + std::to_string(unsupported.size() - 5) + " more";
  throw unsupported_error(
      model.ir.path + ": cannot execute " + std::to_string(unsupported.size()) +
      " layer(s) of ops irrun does not implement: " + list +
      "; irrun runs Parameter, Const, AvgPool, AdaptiveAvgPool, MaxPool, "
      "AdaptiveMaxPool and Result "
      "(--layer NAME, of irrun run and irrun bench, runs one pooling layer of such "
      "a model)");
}

void require_layer_runs(const Model& m, const Analysis& a, std::size_t n, bool run_shapes) {
  const Layer& layer = m.ir.layers[n];
  const NodeInfo& info = a.nodes[n];
  const std::string at = m.ir.path + ": " + describe(layer);
  if (!info.op)
    throw unsupported_error(at +
                            ": an op irrun does not implement (irrun runs Parameter, Const, "
                            "AvgPool, AdaptiveAvgPool, MaxPool, AdaptiveMaxPool and Result)");
  if (!info.inferred)
    throw ModelError(m.ir.path, layer.line, describe(layer) + ": its shapes are not inferred");
  const OpKind kind = info.op->kind;
  if (kind == OpKind::constant && !m.weights) throw no_weights_error(m, n);
  if (kind == OpKind::parameter) mean_values(m, false);  // a <pre-process> block in error
  if (!is_pool(kind)) return;
  const auto& out = info.outputs[0];
  if (!kernel_supports(out.type))
    throw unsupported_error(at + ": element type " + std::string(to_string(out.type)) +
                            " is not executed (irrun runs f32, f16, bf16, f64, i8, i16, i32, i64, "
                            "u8, u16, u32 and u64)");
  const auto not_static = [&] {
    return unsupported_error(at + ": output shape " + to_string(out.shape) +
                             " is not static, so it cannot run (adaptive pooling needs its "
                             "output_size from a Const, and none of its values -1, a dynamic dim)");
  };
  const auto& ins = m.graph.nodes[n].inputs;
  const bool adaptive = kind == OpKind::adaptive_avg_pool || kind == OpKind::adaptive_max_pool;
  if (adaptive && (ins.size() < 2 || !a.nodes[ins[1].node].op ||
                   a.nodes[ins[1].node].op->kind != OpKind::constant))
    throw not_static();
  // The rest depends on the input's shape: on the IR's shapes, a dynamic one leaves it to the
  // run's.
  if (!run_shapes &&
      (ins.empty() || !a.nodes[ins[0].node].outputs[ins[0].output].shape.is_static()))
    return;
  // Adaptive bins over an input dim 0: a shape OpenVINO infers, a kernel with nothing to average.
  if (!info.geometry && out.shape.is_static()) {
    const auto what = describe(layer) + ": an input spatial dimension is 0, so every " +
                      "adaptive bin is empty and there is nothing to average, as OpenVINO's " +
                      "kernel asserts";
    const auto declared = analyze(m.ir, m.graph, m.weights ? &*m.weights : nullptr).diagnostics;
    if (std::none_of(declared.begin(), declared.end(),
                     [&](const auto& d) { return d.rule == "empty-bins" && d.layer == n; }))
      throw input_error(where(m.ir, layer.line) + what + " (with the inputs' shapes)");
    throw ModelError(m.ir.path, layer.line, what);
  }
  if (!info.geometry || !out.shape.is_static()) throw not_static();
  const auto shape = out.shape.to_static();
  if (!pool_bytes(info, n, shape, nullptr))
    require_memory(std::nullopt, output_what(m, n, info, shape));
}

PreparedRun prepare_run(const Model& m, const std::map<std::size_t, Tensor>& inputs) {
  require_executable(m);
  PreparedRun p{input_shapes(inputs), {}, mean_values(m), {}};
  p.analysis = analyze_or_throw(m, p.input_shapes);
  const Analysis& a = p.analysis;
  // Named once here, not on every run, and all at once (each name looks at every Result's).
  const auto names = output_names(m);
  for (std::size_t i = 0; i < names.size(); ++i) p.output_names[m.graph.results[i]] = names[i];
  for (auto n : m.graph.order)
    if (a.nodes[n].op && a.nodes[n].op->kind == OpKind::result && !p.output_names.count(n))
      p.output_names[n] = output_name(m, n);
  if (p.means)
    if (const auto it = inputs.find(p.means->parameter); it != inputs.end())
      check_mean_input(it->second, p.means->mean);

  // Every layer runs (the refusals irrun info shows), then the memory check, before any compute.
  for (auto n : m.graph.order)
    if (m.graph.nodes[n].reachable) require_layer_runs(m, a, n);
  preflight(m, a, nullptr);
  return p;
}

bool prepared_for(const PreparedRun& prepared, const std::map<std::size_t, Tensor>& inputs) {
  return input_shapes(inputs) == prepared.input_shapes;
}

std::vector<Output> run_model(const Model& m, const std::map<std::size_t, Tensor>& inputs,
                              const Parallel& parallel, const KernelTimer& on_kernel,
                              const std::map<std::size_t, Tensor>& write_into,
                              kernels::Kernels choice) {
  return run_model(m, prepare_run(m, inputs), inputs, parallel, on_kernel, write_into, choice);
}

Tensor TensorRecycler::take(ElementType type, std::vector<std::int64_t> shape) {
  Tensor t;
  t.type = type;
  t.shape = std::move(shape);
  const auto it = kept_.find(t.byte_size());
  if (it == kept_.end()) {
    try {
      return Tensor::zeros(type, t.shape);
    } catch (const Error& e) {
      if (e.code() != ExitCode::limit || kept_.empty()) throw;
    }
    kept_.clear();  // past the memory limit: what is kept goes first, as a run without it fits
    return Tensor::zeros(type, std::move(t.shape));
  }
  t.buffer = std::move(it->second);
  kept_.erase(it);
  return t;
}

void TensorRecycler::keep(Tensor&& tensor) {
  if (tensor.buffer.writable() && tensor.buffer.sole_owner())
    kept_.emplace(tensor.buffer.size(), std::move(tensor.buffer));
}

std::vector<Output> run_model(const Model& m, const PreparedRun& prepared,
                              const std::map<std::size_t, Tensor>& inputs, const Parallel& parallel,
                              const KernelTimer& on_kernel,
                              const std::map<std::size_t, Tensor>& write_into,
                              kernels::Kernels choice, TensorRecycler* recycler) {
  if (!prepared_for(prepared, inputs))
    throw input_error(m.ir.path +
                      ": the inputs are not those the run was prepared for (their shapes differ)");
  const Analysis& a = prepared.analysis;
  // Tensors are released as soon as their last consumer has run.
  std::vector<std::vector<Tensor>> values(m.ir.layers.size());
  std::vector<std::size_t> uses = use_counts(m);
  const auto direct = direct_outputs(m, a, inputs, write_into);
  // The outputs some kept layer reads: MaxPool-8/14's indices that none reads (an IR converted
  // from ONNX leaves them unconnected) are not computed, which saves half a MaxPool's time.
  std::set<Source> read;
  for (auto n : m.graph.order)
    if (m.graph.nodes[n].reachable)
      read.insert(m.graph.nodes[n].inputs.begin(), m.graph.nodes[n].inputs.end());
  // A run on buffers kept by the last (irrun bench) allocates none of them again: the first was
  // checked.
  if (!recycler || recycler->empty()) preflight(m, a, &direct);
  std::vector<Output> outputs;
  for (auto n : m.graph.order) {
    const auto& info = a.nodes[n];
    if (!m.graph.nodes[n].reachable) continue;
    const auto& node = m.graph.nodes[n];
    std::vector<const Tensor*> in;
    for (const auto& src : node.inputs) in.push_back(&values[src.node].at(src.output));
    switch (info.op->kind) {
      case OpKind::parameter: {
        const auto it = inputs.find(n);
        if (it == inputs.end()) throw input_error("no input for " + describe(m.ir.layers[n]));
        // OpenVINO's frontend feeds every consumer of this input through the Subtract it adds.
        const bool pre = prepared.means && prepared.means->parameter == n;
        values[n].push_back(pre ? subtract_mean(it->second, prepared.means->mean) : it->second);
        break;
      }
      case OpKind::constant:
        values[n].push_back(const_tensor(m, n, std::get<ConstAttrs>(info.attrs)));
        break;
      case OpKind::result: {
        // OpenVINO's read_model hands out a v10 IR's outputs in its legacy types.
        const auto exposed = exposed_type(m, in[0]->type);
        if (exposed == in[0]->type) {
          outputs.push_back({prepared.output_names.at(n), n, *in[0]});
          break;
        }
        const auto into = direct.converted.find(n);
        Tensor t = into != direct.converted.end() ? into->second
                   : recycler                     ? recycler->take(exposed, in[0]->shape)
                                                  : Tensor::zeros(exposed, in[0]->shape);
        convert_to_f32_or_i32(*in[0], t);
        outputs.push_back({prepared.output_names.at(n), n, std::move(t)});
        break;
      }
      case OpKind::avg_pool:
      case OpKind::adaptive_avg_pool:
      case OpKind::max_pool:
      case OpKind::adaptive_max_pool: {
        // Every output (MaxPool-8/14's indices too) has the values' shape; an output the caller
        // gave a tensor for is computed straight into it. Indices that nothing reads are left out.
        const auto shape = info.outputs[0].shape.to_static();
        const bool indices = info.outputs.size() == 2 &&
                             (read.count({n, 1}) != 0 || direct.computed.count({n, 1}) != 0);
        std::vector<Tensor> out;
        for (std::size_t i = 0; i < (indices ? 2 : 1); ++i) {
          const auto into = direct.computed.find({n, i});
          out.push_back(into != direct.computed.end() ? into->second
                        : recycler                    ? recycler->take(info.outputs[i].type, shape)
                                                      : Tensor::zeros(info.outputs[i].type, shape));
        }
        const auto start = std::chrono::steady_clock::now();
        if (info.op->kind == OpKind::max_pool || info.op->kind == OpKind::adaptive_max_pool)
          kernels::max_pool(*in[0], out[0], indices ? &out[1] : nullptr, *info.geometry, parallel,
                            choice);
        else
          kernels::avg_pool(*in[0], out[0], *info.geometry, parallel, choice);
        if (on_kernel) {
          std::size_t bytes = in[0]->byte_size();
          for (const auto& t : out) bytes += t.byte_size();
          on_kernel(n,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
                    bytes);
        }
        values[n] = std::move(out);
        break;
      }
    }
    for (const auto& src : node.inputs) {
      if (--uses[src.node] != 0) continue;
      if (recycler && taken_from_recycler(a, src.node))
        for (auto& t : values[src.node]) recycler->keep(std::move(t));
      values[src.node].clear();
    }
  }
  // Outputs nothing consumed (an unused MaxPool index output).
  for (std::size_t n = 0; recycler && n < values.size(); ++n)
    if (taken_from_recycler(a, n))
      for (auto& t : values[n]) recycler->keep(std::move(t));
  return outputs;
}

namespace {

// The layer `--layer` names: by name, else (all digits) by id. A name two layers share is an
// error listing their ids, each of which selects one.
std::size_t find_layer(const Model& model, const std::string& name_or_id) {
  const auto& layers = model.ir.layers;
  std::vector<std::size_t> named;
  for (std::size_t n = 0; n < layers.size(); ++n)
    if (layers[n].name == name_or_id) named.push_back(n);
  if (named.size() == 1) return named[0];
  if (named.size() > 1) {
    std::string ids;
    for (auto n : named) ids += (ids.empty() ? "" : ", ") + std::to_string(layers[n].id);
    throw usage_error(model.ir.path + ": --layer '" + name_or_id + "' names " +
                      std::to_string(named.size()) + " layers (ids " + ids +
                      "); give the id of one instead");
  }
  std::uint64_t id = 0;
  const char* end = name_or_id.data() + name_or_id.size();
  const auto [p, ec] = std::from_chars(name_or_id.data(), end, id);
  if (!name_or_id.empty() && ec == std::errc() && p == end)
    for (std::size_t n = 0; n < layers.size(); ++n)
      if (layers[n].id == id) return n;
  throw usage_error(model.ir.path + ": no layer named '" + name_or_id + "' (nor with that id)");
}

}  // namespace

ElementType v10_output_type(ElementType type) {
  switch (type) {
    case ElementType::f32:
      return type;
    case ElementType::i64:
    case ElementType::u64:
    case ElementType::i32:
    case ElementType::u32:
      return ElementType::i32;
    default:
      return ElementType::f32;
  }
}

Model extract_layer(const Model& model, const std::string& layer_name) {
  const auto& layers = model.ir.layers;
  const auto n = find_layer(model, layer_name);
  const Layer& target = layers[n];
  const OpEntry* op = nullptr;
  try {
    op = resolve_op(target);
  } catch (const LayerError& e) {
    throw ModelError(model.ir.path, target.line, describe(target) + ": " + e.what());
  }
  if (!op || !is_pool(op->kind))
    throw unsupported_error(model.ir.path + ": --layer: " + describe(target) +
                            " is not a pooling layer irrun runs (AvgPool, AdaptiveAvgPool, "
                            "MaxPool, AdaptiveMaxPool)");
  const std::size_t outputs = output_count(*op);
  if (target.outputs.size() != outputs)
    throw ModelError(model.ir.path, target.line,
                     describe(target) + ": " + op_label(*op) + " has " + std::to_string(outputs) +
                         " output(s), the layer declares " + std::to_string(target.outputs.size()) +
                         " output port(s)");

  Model sub;
  sub.ir.path = model.ir.path;
  sub.ir.ir_version = model.ir.ir_version;
  sub.ir.name = model.ir.name + ":" + layer_name;
  sub.weights_path = model.weights_path;
  sub.weights = model.weights;
  std::uint64_t next_id = 0;
  for (const auto& l : layers) next_id = std::max(next_id, l.id + 1);

  const auto& node = model.graph.nodes[n];
  Layer copy = target;
  for (std::size_t i = 0; i < node.inputs.size(); ++i) {
    const auto& src = node.inputs[i];
    const Layer& producer = layers[src.node];
    const Port& out_port = producer.outputs[src.output];
    Layer feed;
    if (i == 0) {
      // The data input becomes a Parameter shaped like the layer's declared input port.
      const Port& in_port = target.inputs[i];
      feed.id = producer.id;
      feed.name = out_port.names.empty() ? producer.name : out_port.names.front();
      feed.type = "Parameter";
      feed.version = "opset1";
      feed.has_data = true;
      const auto type = in_port.type ? in_port.type : out_port.type;
      feed.data = {{"shape", to_string(PartialShape::from_ir_dims(in_port.dims))},
                   {"element_type", std::string(to_string(type.value_or(ElementType::f32)))}};
      Port p = out_port;
      p.dims = in_port.dims;
      if (in_port.type) p.type = in_port.type, p.precision = in_port.precision;
      feed.outputs = {p};
    } else {
      if (!is_const(producer))
        throw unsupported_error(model.ir.path + ": --layer: input " + std::to_string(i) + " of " +
                                describe(target) + " comes from " + describe(producer) +
                                ", not a Const; irrun cannot compute it");
      feed = producer;
      feed.inputs.clear();
    }
    feed.line = producer.line;
    sub.ir.edges.push_back(
        {feed.id, feed.outputs[0].id, target.id, target.inputs[i].id, target.line});
    // A producer may feed several inputs; add it once.
    if (std::none_of(sub.ir.layers.begin(), sub.ir.layers.end(),
                     [&](const Layer& l) { return l.id == feed.id; }))
      sub.ir.layers.push_back(std::move(feed));
  }
  sub.ir.layers.push_back(copy);
  // One Result per output. Outputs are named after the layer unless their port has names; a
  // second output (MaxPool's indices) as "layer.1", OpenVINO's v10 convention.
  for (std::size_t i = 0; i < outputs; ++i) {
    Layer result;
    result.id = next_id + i;
    result.name = i == 0 ? target.name : target.name + "." + std::to_string(i);
    result.type = "Result";
    result.version = "opset1";
    Port rp = target.outputs[i];
    rp.id = 0;
    result.inputs = {rp};
    result.line = target.line;
    sub.ir.edges.push_back({target.id, target.outputs[i].id, result.id, 0, target.line});
    sub.ir.layers.push_back(std::move(result));
  }
  sub.graph = build_graph(sub.ir);
  return sub;
}

}  // namespace irrun
