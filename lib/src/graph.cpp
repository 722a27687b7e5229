#include "irrun/graph.hpp"

#include <algorithm>
#include <unordered_map>

#include "irrun/error.hpp"

namespace irrun {
namespace {

// Port id -> index among a layer's ports, built once per layer on first use so that a layer
// with many ports and many edges is not scanned once per edge.
class PortIndex {
 public:
  explicit PortIndex(std::size_t layers) : maps_(layers) {}
  std::optional<std::size_t> find(std::size_t layer, const std::vector<Port>& ports,
                                  std::uint64_t id) {
    auto& map = maps_[layer];
    if (!map) {
      map.emplace();
      for (std::size_t i = 0; i < ports.size(); ++i) map->emplace(ports[i].id, i);
    }
    const auto it = map->find(id);
    if (it == map->end()) return std::nullopt;
    return it->second;
  }

 private:
  std::vector<std::optional<std::unordered_map<std::uint64_t, std::size_t>>> maps_;
};

[[noreturn]] void fail(const IrModel& model, std::size_t line, const std::string& what) {
  throw ModelError(model.path, line, what);
}

std::string edge_text(const Edge& e) {
  return "edge " + std::to_string(e.from_layer) + ":" + std::to_string(e.from_port) + " -> " +
         std::to_string(e.to_layer) + ":" + std::to_string(e.to_port);
}

}  // namespace

Graph build_graph(IrModel& model) {
  const auto& layers = model.layers;
  Graph g;
  g.nodes.resize(layers.size());
  std::unordered_map<std::uint64_t, std::size_t> by_id;
  for (std::size_t i = 0; i < layers.size(); ++i) by_id.emplace(layers[i].id, i);

  // Reachability from Results and Assigns over the edges as written: OpenVINO walks from those
  // and never reads the edges of a layer it drops. Iterative (a cycle ends the walk where it
  // meets a layer already seen).
  std::vector<std::vector<std::size_t>> producers(layers.size());
  for (const auto& e : model.edges) {
    const auto to = by_id.find(e.to_layer), from = by_id.find(e.from_layer);
    if (to != by_id.end() && from != by_id.end()) producers[to->second].push_back(from->second);
  }
  std::vector<std::size_t> stack;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (has_type(layers[i], "Result") || has_type(layers[i], "Assign")) stack.push_back(i);
    if (has_type(layers[i], "Parameter")) g.parameters.push_back(i);
    if (has_type(layers[i], "Result")) g.results.push_back(i);
  }
  while (!stack.empty()) {
    const auto n = stack.back();
    stack.pop_back();
    if (g.nodes[n].reachable) continue;
    g.nodes[n].reachable = true;
    for (auto p : producers[n]) stack.push_back(p);
  }
  for (auto p : g.parameters) g.nodes[p].reachable = true;

  // Input slots: the number of inputs is the number of incoming edges (as in OpenVINO), and an
  // edge's slot is the position of its port among the layer's <input> ports.
  std::vector<std::vector<std::optional<std::pair<Source, std::size_t>>>> slots(layers.size());
  std::vector<std::size_t> incoming(layers.size(), 0);
  for (const auto& e : model.edges) {
    auto to = by_id.find(e.to_layer);
    if (to != by_id.end()) ++incoming[to->second];
  }
  for (std::size_t i = 0; i < layers.size(); ++i) slots[i].resize(incoming[i]);
  // Edges to layers that do not exist, named where a layer then lacks an incoming edge: such an
  // edge is the likely culprit, but OpenVINO (and so irrun) fails at the layer's other edge.
  std::string to_missing;
  for (const auto& e : model.edges)
    if (!by_id.count(e.to_layer))
      to_missing +=
          (to_missing.empty() ? "; an edge meant for it may name a missing layer: " : ", ") +
          std::string("line ") + std::to_string(e.line) + " " + edge_text(e);

  PortIndex outputs(layers.size()), inputs(layers.size());
  for (std::size_t k = 0; k < model.edges.size(); ++k) {
    const Edge& e = model.edges[k];
    const auto to = by_id.find(e.to_layer);
    // OpenVINO reads a layer's inputs from the edges to it, and only for layers it keeps: a
    // broken edge to no layer or to a dropped one is never read.
    const auto broken = [&](const std::string& what) {
      if (to != by_id.end() && g.nodes[to->second].reachable)
        fail(model, e.line, edge_text(e) + ": " + what);
      Diagnostic d;
      d.severity = Severity::warning;
      d.rule = "unused-edge";
      d.port = edge_text(e);
      d.message = what + "; OpenVINO never reads this edge";
      d.line = e.line;
      model.diagnostics.push_back(std::move(d));
    };
    if (to == by_id.end()) {
      broken("to-layer " + std::to_string(e.to_layer) + " does not exist");
      continue;
    }
    const auto from = by_id.find(e.from_layer);
    if (from == by_id.end()) {
      broken("from-layer " + std::to_string(e.from_layer) + " does not exist");
      continue;
    }
    const Layer& src = layers[from->second];
    const Layer& dst = layers[to->second];
    const auto out = outputs.find(from->second, src.outputs, e.from_port);
    if (!out) {
      broken("Can not find output port with id " + std::to_string(e.from_port) + " in " +
             describe(src));
      continue;
    }
    const auto in = inputs.find(to->second, dst.inputs, e.to_port);
    if (!in) {
      broken("Can not find input port with id " + std::to_string(e.to_port) + " in " +
             describe(dst));
      continue;
    }
    auto& dst_slots = slots[to->second];
    if (*in >= dst_slots.size()) {
      broken(describe(dst) + " is inconsistent: the edge goes to input index " +
             std::to_string(*in) + " but the layer has " + std::to_string(dst_slots.size()) +
             " incoming edge(s)" + to_missing);
      continue;
    }
    if (dst_slots[*in]) {
      broken(describe(dst) + ": input port " + std::to_string(e.to_port) +
             " has more than one incoming edge");
      continue;
    }
    dst_slots[*in] = std::make_pair(Source{from->second, *out}, k);
  }
  for (std::size_t i = 0; i < layers.size(); ++i) {
    // A dropped layer with a slot left empty (a broken edge OpenVINO never reads) gets no
    // inputs: each input index must stay its port's.
    const bool gap =
        std::any_of(slots[i].begin(), slots[i].end(), [](const auto& slot) { return !slot; });
    if (gap && !g.nodes[i].reachable) continue;
    for (std::size_t s = 0; s < slots[i].size(); ++s) {
      if (!slots[i][s])
        fail(model, layers[i].line,
             describe(layers[i]) + " has incorrect input with index " + std::to_string(s) +
                 ": no edge reaches input port " +
                 (s < layers[i].inputs.size() ? std::to_string(layers[i].inputs[s].id)
                                              : std::string("?")));
      g.nodes[i].inputs.push_back(slots[i][s]->first);
      g.nodes[i].in_edges.push_back(slots[i][s]->second);
    }
  }

  // Kahn's algorithm: iterative, so a 100,000-layer chain needs no deep stack.
  std::vector<std::vector<std::size_t>> consumers(layers.size());
  std::vector<std::size_t> pending(layers.size(), 0);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    pending[i] = g.nodes[i].inputs.size();
    for (const auto& src : g.nodes[i].inputs) consumers[src.node].push_back(i);
  }
  std::vector<std::size_t> ready;
  for (std::size_t i = layers.size(); i-- > 0;) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    const auto n = ready.back();
    ready.pop_back();
    g.order.push_back(n);
    for (auto c : consumers[n]) {
      if (--pending[c] == 0) ready.push_back(c);
    }
  }
  // OpenVINO creates only what its walk from the Results reaches, so a cycle among dropped
  // layers is no error: those left unordered come last, in file order, never analysed or run.
  std::size_t n = 0;
  while (n < layers.size() && !(pending[n] > 0 && g.nodes[n].reachable)) ++n;
  if (n < layers.size()) {
    // Walk back through unfinished producers until a layer repeats: that layer is on a cycle.
    std::vector<bool> seen(layers.size(), false);
    while (!seen[n]) {
      seen[n] = true;
      for (const auto& src : g.nodes[n].inputs) {
        if (pending[src.node] > 0) {
          n = src.node;
          break;
        }
      }
    }
    fail(model, layers[n].line, describe(layers[n]) + " is on a cycle");
  }
  for (std::size_t i = 0; i < layers.size(); ++i)
    if (pending[i] > 0) g.order.push_back(i);

  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (g.nodes[i].reachable) continue;
    Diagnostic d;
    d.severity = Severity::warning;
    d.rule = "unreachable-layer";
    d.layer = i;
    d.message = "not connected to any Result; OpenVINO drops it";
    d.line = layers[i].line;
    model.diagnostics.push_back(std::move(d));
  }
  return g;
}

}  // namespace irrun
