#include "irrun/network.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <new>
#include <optional>
#include <system_error>
#include <tuple>

#include "irrun/analysis.hpp"
#include "irrun/api_boundary.hpp"
#include "irrun/blob.hpp"
#include "irrun/check.hpp"
#include "irrun/checked.hpp"
#include "irrun/dim.hpp"
#include "irrun/error.hpp"
#include "irrun/executor.hpp"
#include "irrun/inputs.hpp"
#include "irrun/model.hpp"
#include "irrun/parallel.hpp"

namespace irrun {

struct Network::Impl {
  Model model;
  std::vector<PortInfo> inputs, outputs;
  std::vector<PartialShape> input_shapes;  // parallel to inputs (intervals kept for checking)
  std::vector<ElementType> input_types;    // the graph's own (a v10 IR's f16 is f32 in inputs)
  std::unique_ptr<Parallel> parallel;
  kernels::Kernels kernels = kernels::Kernels::best;
  // The last run's preparation, taken again while the inputs keep their shapes (run() is const;
  // a Network does not run on several threads at once).
  mutable std::optional<PreparedRun> prepared;
  // The buffers of the last run's intermediate tensors, for the next run of the same shapes.
  mutable TensorRecycler recycler;
};

namespace {

// The public choice as the executor's (kernels::Kernels, internal).
kernels::Kernels executor_kernels(Kernels k) {
  switch (k) {
    case Kernels::avx2:
      return kernels::Kernels::avx2;
    case Kernels::portable:
      return kernels::Kernels::portable;
    case Kernels::reference:
      return kernels::Kernels::reference;
    case Kernels::best:
      break;
  }
  return kernels::Kernels::best;
}

PortInfo port_info(std::string name, const ValueInfo& v) {
  PortInfo p;
  p.name = std::move(name);
  p.type = v.type;
  p.dynamic_rank = !v.shape.rank_is_static();
  for (std::size_t i = 0; i < v.shape.rank(); ++i)
    p.shape.push_back(v.shape[i].is_static() ? v.shape[i].min : -1);
  return p;
}

std::string describe(const char* kind, const PortInfo& p) {
  std::string s = std::string(kind) + " '" + p.name + "' (" + std::string(to_string(p.type)) + " [";
  if (p.dynamic_rank) s += "...";
  for (std::size_t i = 0; i < p.shape.size(); ++i) {
    if (i) s += ',';
    s += p.shape[i] < 0 ? std::string("?") : std::to_string(p.shape[i]);
  }
  return s + "])";
}

std::string names(const std::vector<PortInfo>& ports) {
  std::string s;
  for (const auto& p : ports) s += (s.empty() ? "'" : ", '") + p.name + "'";
  return s.empty() ? "none" : s;
}

// The caller's tensor is large enough for its own shape (a short buffer would be read or written
// past its end).
void require_buffer(const std::string& what, const Tensor& t) {
  if (t.type == ElementType::undefined || bit_width(t.type) == 0)
    throw input_error(what + ": the tensor has no element type with a fixed size");
  const auto count = checked_product(t.shape);
  if (!count || !checked_mul(*count, bit_width(t.type)))
    throw input_error(what + ": the tensor's shape " + to_string(t.shape) +
                      " has a negative dim or overflows");
  if (t.buffer.size() < t.byte_size() || (t.byte_size() && !t.buffer.data()))
    throw input_error(what + ": the tensor's buffer holds " + std::to_string(t.buffer.size()) +
                      " bytes, its shape needs " + std::to_string(t.byte_size()));
  // Kernels access elements as their type: misaligned ones would be undefined behaviour.
  const std::size_t item = bit_width(t.type) / 8;
  if (t.byte_size() && item > 1 && reinterpret_cast<std::uintptr_t>(t.buffer.data()) % item != 0)
    throw input_error(what + ": the tensor's data is not aligned to its " + std::to_string(item) +
                      "-byte elements");
}

}  // namespace

void rethrow_at_api_boundary(const std::string& path, const char* action) {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    throw Error(ExitCode::limit, path + ": out of memory " + action + " (" +
                                     format_bytes(memory_in_use()) + " in irrun's buffers)");
  } catch (const std::system_error& e) {
    // The thread pool's first dispatch starts threads; a process or cgroup limit refuses them.
    throw Error(ExitCode::limit, path + ": " + action + ": " + e.what());
  }
}

std::size_t CheckResult::errors() const {
  return static_cast<std::size_t>(
      std::count_if(diagnostics.begin(), diagnostics.end(),
                    [](const Diagnostic& d) { return d.severity == Severity::error; }));
}

std::size_t CheckResult::warnings() const {
  return diagnostics.size() - errors();
}

Network::Network(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Network::Network(Network&&) noexcept = default;
Network& Network::operator=(Network&&) noexcept = default;
Network::~Network() = default;

Network Network::load(const std::string& xml_path, const NetworkOptions& options) try {
  auto impl = std::make_unique<Impl>();
  // Before reading the model: a bad thread count is the caller's mistake (Error(usage)).
  impl->parallel = std::make_unique<Parallel>(options.threads);
  impl->model = load_model(xml_path, options.weights);
  const Model& m = impl->model;
  // Declared-shape inference: Parameters from their attributes, outputs as far as it gets (a
  // layer that fails falls back to its declared dims; check() and run() report the failure).
  const auto a = analyze(m.ir, m.graph, m.weights ? &*m.weights : nullptr);
  // A v10 IR's I/O in the types OpenVINO's read_model hands out (update_v10_model), as run()
  // takes and gives them: f16 inputs as f32, outputs in v10_output_type.
  const bool v10 = m.ir.ir_version == 10;
  for (auto n : m.graph.parameters) {
    const auto& outs = a.nodes[n].outputs;
    ValueInfo v = outs.empty() ? ValueInfo{} : outs[0];
    impl->input_types.push_back(v.type);
    impl->input_shapes.push_back(v.shape);
    if (v10 && v.type == ElementType::f16) v.type = ElementType::f32;
    impl->inputs.push_back(port_info(m.ir.layers[n].name, v));
  }
  const auto names = output_names(m);
  for (std::size_t i = 0; i < m.graph.results.size(); ++i) {
    const auto n = m.graph.results[i];
    ValueInfo v;
    const auto& node = m.graph.nodes[n];
    if (!node.inputs.empty() && node.inputs[0].output < a.nodes[node.inputs[0].node].outputs.size())
      v = a.nodes[node.inputs[0].node].outputs[node.inputs[0].output];
    if (v10 && v.type != ElementType::undefined) v.type = v10_output_type(v.type);
    impl->outputs.push_back(port_info(names[i], v));
  }
  impl->kernels = executor_kernels(options.kernels);
  return Network(std::move(impl));
} catch (...) {
  rethrow_at_api_boundary(xml_path, "loading the model");
}

const std::string& Network::path() const {
  return impl_->model.ir.path;
}

const std::vector<PortInfo>& Network::inputs() const {
  return impl_->inputs;
}

const std::vector<PortInfo>& Network::outputs() const {
  return impl_->outputs;
}

CheckResult Network::check(bool strict) const try {
  const Model& m = impl_->model;
  CheckResult r;
  std::vector<std::size_t> checked;
  r.diagnostics = check_model(m, strict, &checked);
  r.checked_layers = checked.size();
  for (const auto& d : r.diagnostics) r.messages.push_back(format(m.ir, d));
  return r;
} catch (...) {
  rethrow_at_api_boundary(path(), "checking the model");
}

void Network::run(const std::map<std::string, Tensor>& inputs,
                  std::map<std::string, Tensor>& outputs) const try {
  const Model& m = impl_->model;
  const auto& params = m.graph.parameters;
  std::map<std::size_t, Tensor> bound;
  std::map<std::size_t, std::string> given_as;
  for (const auto& [name, tensor] : inputs) {
    const auto n = find_parameter(m, name);
    if (!n)
      throw input_error(m.ir.path + ": no input named '" + name +
                        "' (inputs: " + names(impl_->inputs) + ")");
    const auto i =
        static_cast<std::size_t>(std::find(params.begin(), params.end(), *n) - params.begin());
    const PortInfo& p = impl_->inputs[i];
    const std::string what = m.ir.path + ": " + describe("input", p);
    if (!given_as.emplace(*n, name).second)
      throw input_error(what + " is given twice, as '" + given_as[*n] + "' and '" + name + "'");
    require_buffer(what, tensor);
    const auto& declared = impl_->input_shapes[i];
    const ElementType own = impl_->input_types[i];
    // An unreadable Parameter (no type) is left to run_model, which reports the model's error. A
    // v10 IR's f16 input takes f32 (rounded to f16 once, as OpenVINO's conversion does) or f16.
    if ((p.type != ElementType::undefined && tensor.type != p.type && tensor.type != own) ||
        !declared_matches(PartialShape::from_static(tensor.shape), declared) ||
        (declared.rank_is_static() && declared.rank() != tensor.shape.size()))
      throw input_error(what + ": given " + std::string(to_string(tensor.type)) + " " +
                        to_string(tensor.shape));
    bound.emplace(*n, tensor.type == p.type && p.type != own ? convert_float(tensor, own) : tensor);
  }
  for (std::size_t i = 0; i < params.size(); ++i) {
    if (!bound.count(params[i]))
      throw input_error(m.ir.path + ": no tensor for " + describe("input", impl_->inputs[i]));
  }
  // The given outputs with the tensor each Result reads (layer, output port).
  std::vector<std::tuple<const std::string*, const Tensor*, std::pair<std::size_t, std::size_t>>>
      given;
  for (const auto& entry : outputs) {
    // Not a structured binding: clang 14 cannot capture those in the lambda.
    const std::string& name = entry.first;
    const Tensor& tensor = entry.second;
    const auto it = std::find_if(impl_->outputs.begin(), impl_->outputs.end(),
                                 [&](const PortInfo& p) { return p.name == name; });
    if (it == impl_->outputs.end())
      throw input_error(m.ir.path + ": no output named '" + name +
                        "' (outputs: " + names(impl_->outputs) + ")");
    const std::string what = m.ir.path + ": " + describe("output", *it);
    require_buffer(what, tensor);
    if (!tensor.buffer.writable()) throw input_error(what + ": the tensor given is read-only");
    const auto r = m.graph.results[static_cast<std::size_t>(it - impl_->outputs.begin())];
    const auto& src = m.graph.nodes[r].inputs.at(0);
    given.emplace_back(&name, &tensor, std::pair{src.node, src.output});
  }
  // Two outputs in overlapping memory would overwrite each other, unless they are the same bytes
  // for the same values: two Results of one tensor, as a run hands them out.
  for (std::size_t a = 0; a < given.size(); ++a) {
    for (std::size_t b = a + 1; b < given.size(); ++b) {
      const auto& [x_name, x, x_source] = given[a];
      const auto& [y_name, y, y_source] = given[b];
      const std::byte *xd = x->buffer.data(), *yd = y->buffer.data();
      if (!x->byte_size() || !y->byte_size() || xd + x->byte_size() <= yd ||
          yd + y->byte_size() <= xd)
        continue;
      if (xd == yd && x->byte_size() == y->byte_size() && x_source == y_source) continue;
      throw input_error(m.ir.path + ": outputs '" + *x_name + "' and '" + *y_name +
                        "' are given overlapping memory");
    }
  }

  // Caller tensors by Result layer: pooling outputs are computed straight into them.
  const auto& result_layers = m.graph.results;
  std::map<std::size_t, Tensor> write_into;
  for (std::size_t i = 0; i < result_layers.size(); ++i) {
    const auto it = outputs.find(impl_->outputs[i].name);
    if (it != outputs.end()) write_into.emplace(result_layers[i], it->second);
  }
  auto& prepared = impl_->prepared;
  if (!prepared || !prepared_for(*prepared, bound)) {
    prepared.reset();      // a failed preparation leaves none behind
    impl_->recycler = {};  // buffers sized for other shapes
    prepared = prepare_run(m, bound);
  }
  // Under a memory limit, buffers kept idle here would count against every other allocation
  // (another Network's run, the caller's tensors), which only this Network's runs can free: the
  // run keeps none, whether it returns or throws.
  struct KeepNoneUnderLimit {
    TensorRecycler& recycler;
    ~KeepNoneUnderLimit() {
      if (memory_limit() != 0) recycler = {};
    }
  } keep_none{impl_->recycler};
  if (memory_limit() != 0) impl_->recycler = {};  // a limit set since the last run
  const auto results = run_model(m, *prepared, bound, *impl_->parallel, {}, write_into,
                                 impl_->kernels, &impl_->recycler);

  std::map<std::size_t, const Tensor*> computed;
  for (const auto& o : results) computed[o.result_layer] = &o.tensor;
  for (std::size_t i = 0; i < result_layers.size(); ++i) {
    const Tensor& src = *computed.at(result_layers[i]);
    const auto it = outputs.find(impl_->outputs[i].name);
    if (it == outputs.end()) {
      outputs.emplace(impl_->outputs[i].name, src);
    } else if (src.byte_size() && src.buffer.data() != it->second.buffer.data()) {
      // Not computed in place (a pass-through, or memory shared with an input): copy once.
      // memmove: a pass-through output may be the caller's own input buffer.
      std::memmove(it->second.buffer.mutable_data(), src.buffer.data(), src.byte_size());
    }
  }
} catch (...) {
  rethrow_at_api_boundary(path(), "running the model");
}

std::map<std::string, Tensor> Network::run(const std::map<std::string, Tensor>& inputs) const {
  std::map<std::string, Tensor> outputs;
  run(inputs, outputs);
  return outputs;
}

}  // namespace irrun
