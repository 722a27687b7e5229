// Tests of build_graph: input slots resolved from edges as OpenVINO does
// (docs/openvino-semantics.md section 1, "<edges>"), a valid topological order, Parameters in file
// order, the errors OpenVINO raises for malformed edges, cycles, unreachable layers and a very long
// chain.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "irrun/error.hpp"
#include "irrun/graph.hpp"
#include "irrun/ir_reader.hpp"

using irrun::build_graph;
using irrun::Graph;
using irrun::IrModel;
using irrun::ModelError;

namespace {

// One layer with the given input and output port ids (outputs FP32, one dim each).
std::string layer(std::uint64_t id, const std::string& name, const std::string& type,
                  const std::vector<std::uint64_t>& inputs,
                  const std::vector<std::uint64_t>& outputs) {
  std::string s = "<layer id=\"" + std::to_string(id) + "\" name=\"" + name + "\" type=\"" + type +
                  "\" version=\"" + (type == "Foo" ? "extension" : "opset1") + "\">\n";
  if (type == "Parameter") s += "<data shape=\"1\" element_type=\"f32\"/>\n";
  if (!inputs.empty()) {
    s += "<input>";
    for (auto p : inputs) s += "<port id=\"" + std::to_string(p) + "\"><dim>1</dim></port>";
    s += "</input>\n";
  }
  if (!outputs.empty()) {
    s += "<output>";
    for (auto p : outputs)
      s += "<port id=\"" + std::to_string(p) + "\" precision=\"FP32\"><dim>1</dim></port>";
    s += "</output>\n";
  }
  return s + "</layer>\n";
}

std::string edge(std::uint64_t from_layer, std::uint64_t from_port, std::uint64_t to_layer,
                 std::uint64_t to_port) {
  return "<edge from-layer=\"" + std::to_string(from_layer) + "\" from-port=\"" +
         std::to_string(from_port) + "\" to-layer=\"" + std::to_string(to_layer) + "\" to-port=\"" +
         std::to_string(to_port) + "\"/>\n";
}

std::string ir(const std::string& layers, const std::string& edges) {
  return "<?xml version=\"1.0\"?>\n<net name=\"g\" version=\"11\">\n<layers>\n" + layers +
         "</layers>\n<edges>\n" + edges + "</edges>\n</net>\n";
}

std::size_t line_of(const std::string& text, const std::string& needle) {
  const auto pos = text.find(needle);
  REQUIRE(pos != std::string::npos);
  return static_cast<std::size_t>(
             std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n')) +
         1;
}

std::size_t index_of(const IrModel& m, const std::string& name) {
  for (std::size_t i = 0; i < m.layers.size(); ++i) {
    if (m.layers[i].name == name) return i;
  }
  FAIL("no layer " << name);
  return 0;
}

// Every producer comes before its consumers, and `order` is a permutation of all nodes.
void require_topological(const Graph& g) {
  REQUIRE(g.order.size() == g.nodes.size());
  std::vector<std::size_t> position(g.nodes.size(), g.nodes.size());
  for (std::size_t i = 0; i < g.order.size(); ++i) {
    REQUIRE(g.order[i] < g.nodes.size());
    REQUIRE(position[g.order[i]] == g.nodes.size());  // no repeats
    position[g.order[i]] = i;
  }
  for (std::size_t n = 0; n < g.nodes.size(); ++n) {
    for (const auto& src : g.nodes[n].inputs) REQUIRE(position[src.node] < position[n]);
  }
}

std::optional<ModelError> graph_error(const std::string& xml) {
  auto m = irrun::parse_ir(xml, "g.xml");
  try {
    build_graph(m);
  } catch (const ModelError& e) {
    return e;
  }
  return std::nullopt;
}

struct ErrorCase {
  const char* name;
  std::string xml;
  std::vector<std::string> message;  // substrings of what()
  std::string marker;                // the error names the line of this text
};

std::vector<ErrorCase> error_cases() {
  const std::string param = layer(0, "in", "Parameter", {}, {0});
  const std::string result = layer(1, "out", "Result", {0}, {});
  const std::string two_in = layer(2, "add", "Foo", {0, 1}, {2});
  const std::string add_out = layer(3, "out", "Result", {0}, {});
  return {
      {"edge from a missing layer",
       ir(param + result, edge(42, 0, 1, 0)),
       {"edge 42:0 -> 1:0", "from-layer 42 does not exist"},
       "from-layer=\"42\""},
      {"unknown from-port",
       ir(param + result, edge(0, 5, 1, 0)),
       {"Can not find output port with id 5 in layer 0 'in' (Parameter-1 opset1)"},
       "from-port=\"5\""},
      {"from-port that is an input port",
       ir(param + two_in + add_out, edge(0, 0, 2, 0) + edge(0, 0, 2, 1) + edge(2, 0, 3, 0)),
       {"Can not find output port with id 0 in layer 2 'add'"},
       "from-layer=\"2\""},
      {"unknown to-port",
       ir(param + result, edge(0, 0, 1, 7)),
       {"Can not find input port with id 7 in layer 1 'out' (Result-1 opset1)"},
       "to-port=\"7\""},
      {"to-port that is an output port",
       ir(param + two_in + add_out, edge(0, 0, 2, 2) + edge(2, 2, 3, 0)),
       {"Can not find input port with id 2 in layer 2 'add'"},
       "to-layer=\"2\""},
      {"inconsistent input: edge to index >= number of incoming edges",
       ir(param + two_in + add_out, edge(0, 0, 2, 1) + edge(2, 2, 3, 0)),
       {"layer 2 'add' (Foo extension) is inconsistent", "input index 1", "1 incoming edge(s)"},
       "to-layer=\"2\""},
      {"two edges into one port",
       ir(param + two_in + add_out, edge(0, 0, 2, 0) + edge(0, 0, 2, 0) + edge(2, 2, 3, 0)),
       {"layer 2 'add'", "input port 0 has more than one incoming edge"},
       "to-layer=\"2\" to-port=\"0\"/>\n<edge from-layer=\"2\""},
  };
}

}  // namespace

TEST_CASE("input slots are port positions; ids and file order are arbitrary", "[graph]") {
  // Result first, ids not in topological order, input port ids 7 then 3, output port ids 4, 1.
  // (Port ids are unique only within a layer.)
  const std::string xml =
      ir(layer(0, "out", "Result", {9}, {}) + layer(5, "add", "Foo", {7, 3}, {2}) +
             layer(10, "p_b", "Parameter", {}, {0}) + layer(2, "split", "Foo", {0}, {4, 1}) +
             layer(1, "p_a", "Parameter", {}, {6}),
         edge(5, 2, 0, 9) + edge(2, 1, 5, 3) + edge(10, 0, 5, 7) + edge(1, 6, 2, 0));
  auto m = irrun::parse_ir(xml, "g.xml");
  const Graph g = build_graph(m);
  const auto out = index_of(m, "out"), add = index_of(m, "add"), p_b = index_of(m, "p_b"),
             split = index_of(m, "split"), p_a = index_of(m, "p_a");
  REQUIRE(g.nodes.size() == 5);

  REQUIRE(g.nodes[add].inputs.size() == 2);
  CHECK(g.nodes[add].inputs[0].node == p_b);  // port 7 is the first <input> port
  CHECK(g.nodes[add].inputs[0].output == 0);
  CHECK(g.nodes[add].in_edges[0] == 2);
  CHECK(g.nodes[add].inputs[1].node == split);  // port 3 is the second
  CHECK(g.nodes[add].inputs[1].output == 1);    // port 1 is split's second output
  CHECK(g.nodes[add].in_edges[1] == 1);

  REQUIRE(g.nodes[split].inputs.size() == 1);
  CHECK(g.nodes[split].inputs[0].node == p_a);
  CHECK(g.nodes[split].inputs[0].output == 0);
  REQUIRE(g.nodes[out].inputs.size() == 1);
  CHECK(g.nodes[out].inputs[0].node == add);
  CHECK(g.nodes[out].in_edges[0] == 0);
  CHECK(g.nodes[p_a].inputs.empty());
  CHECK(g.nodes[p_b].inputs.empty());

  require_topological(g);
  CHECK(g.parameters == std::vector<std::size_t>{p_b, p_a});  // file order
  CHECK(g.results == std::vector<std::size_t>{out});
  for (const auto& n : g.nodes) CHECK(n.reachable);
  CHECK(m.diagnostics.empty());
}

TEST_CASE("topological order of a diamond and of a layer with unused output", "[graph]") {
  const std::string xml = ir(
      layer(4, "join", "Foo", {0, 1}, {2}) + layer(3, "right", "Foo", {0}, {1}) +
          layer(2, "left", "Foo", {0}, {1}) + layer(1, "in", "Parameter", {}, {0}) +
          layer(5, "out", "Result", {0}, {}),
      edge(4, 2, 5, 0) + edge(3, 1, 4, 1) + edge(2, 1, 4, 0) + edge(1, 0, 2, 0) + edge(1, 0, 3, 0));
  auto m = irrun::parse_ir(xml, "g.xml");
  const Graph g = build_graph(m);
  require_topological(g);
  CHECK(g.order.front() == index_of(m, "in"));
  CHECK(g.order.back() == index_of(m, "out"));
  CHECK(g.nodes[index_of(m, "join")].inputs[0].node == index_of(m, "left"));
  CHECK(g.nodes[index_of(m, "join")].inputs[1].node == index_of(m, "right"));
}

TEST_CASE("Parameters in file order, Results in file order", "[graph]") {
  const std::string xml =
      ir(layer(9, "c", "Parameter", {}, {0}) + layer(1, "r2", "Result", {0}, {}) +
             layer(3, "a", "Parameter", {}, {0}) + layer(0, "r1", "Result", {0}, {}) +
             layer(7, "b", "parameter", {}, {0}),
         edge(9, 0, 1, 0) + edge(3, 0, 0, 0));
  auto m = irrun::parse_ir(xml, "g.xml");
  const Graph g = build_graph(m);
  CHECK(g.parameters == std::vector<std::size_t>{0, 2, 4});
  CHECK(g.results == std::vector<std::size_t>{1, 3});
  // An unconnected Parameter is still a model input and is not reported.
  CHECK(g.nodes[4].reachable);
  CHECK(m.diagnostics.empty());
}

TEST_CASE("malformed edges: OpenVINO's errors with the edge's line", "[graph]") {
  for (const auto& c : error_cases()) {
    CAPTURE(c.name);
    const auto e = graph_error(c.xml);
    REQUIRE(e.has_value());
    CHECK(e->code() == irrun::ExitCode::bad_model);
    for (const auto& s : c.message) CHECK_THAT(std::string(e->what()), Catch::Contains(s));
    const auto line = line_of(c.xml, c.marker);
    CHECK(e->line() == line);
    CHECK_THAT(std::string(e->what()), Catch::StartsWith("g.xml:" + std::to_string(line) + ": "));
  }
}

TEST_CASE("an input slot no edge fills", "[graph]") {
  // Two edges into port 0 of a two-input layer leave slot 1 empty. OpenVINO overwrites slot 0 and
  // then reports `has incorrect input with index 1!`; irrun may name the duplicate instead. Since
  // the number of slots is the number of incoming edges, any empty slot implies a duplicate.
  const std::string xml =
      ir(layer(0, "in", "Parameter", {}, {0}) + layer(2, "add", "Foo", {0, 1}, {2}) +
             layer(3, "out", "Result", {0}, {}),
         edge(0, 0, 2, 0) + edge(2, 2, 3, 0) + edge(0, 0, 2, 0));
  const auto e = graph_error(xml);
  REQUIRE(e.has_value());
  const std::string what = e->what();
  CHECK_THAT(what, Catch::Contains("layer 2 'add'"));
  CHECK_THAT(what, Catch::Contains("has incorrect input with index 1") ||
                       Catch::Contains("more than one incoming edge"));
}

TEST_CASE("a cycle is an error naming a layer on it", "[graph]") {
  struct Case {
    const char* name;
    std::string xml;
    std::vector<std::string> on_cycle;
  };
  const std::vector<Case> cases = {
      {"two-layer cycle",
       ir(layer(0, "in", "Parameter", {}, {0}) + layer(1, "mix", "Foo", {0, 1}, {2}) +
              layer(2, "loop", "Foo", {0}, {1}) + layer(3, "out", "Result", {0}, {}),
          edge(0, 0, 1, 0) + edge(2, 1, 1, 1) + edge(1, 2, 2, 0) + edge(2, 1, 3, 0)),
       {"'mix'", "'loop'"}},
      {"self loop",
       ir(layer(0, "in", "Parameter", {}, {0}) + layer(1, "self", "Foo", {0, 1}, {2}) +
              layer(3, "out", "Result", {0}, {}),
          edge(0, 0, 1, 0) + edge(1, 2, 1, 1) + edge(1, 2, 3, 0)),
       {"'self'"}},
      {"cycle behind a tail",
       ir(layer(0, "in", "Parameter", {}, {0}) + layer(1, "a", "Foo", {0, 1}, {2}) +
              layer(2, "b", "Foo", {0}, {1}) + layer(3, "c", "Foo", {0}, {1}) +
              layer(4, "tail", "Foo", {0}, {1}) + layer(5, "out", "Result", {0}, {}),
          edge(0, 0, 1, 0) + edge(3, 1, 1, 1) + edge(1, 2, 2, 0) + edge(2, 1, 3, 0) +
              edge(3, 1, 4, 0) + edge(4, 1, 5, 0)),
       {"'a'", "'b'", "'c'"}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto e = graph_error(c.xml);
    REQUIRE(e.has_value());
    const std::string what = e->what();
    CAPTURE(what);
    CHECK_THAT(what, Catch::Contains("is on a cycle"));
    const bool names_one = std::any_of(c.on_cycle.begin(), c.on_cycle.end(), [&](const auto& n) {
      return what.find(n) != std::string::npos;
    });
    CHECK(names_one);
    CHECK(e->line() > 0);
  }
}

TEST_CASE("layers OpenVINO drops get an unreachable-layer warning", "[graph]") {
  // in -> out; in -> dead1 -> dead2 (no Result); an Assign keeps its producers.
  const std::string xml = ir(
      layer(0, "in", "Parameter", {}, {0}) + layer(1, "out", "Result", {0}, {}) +
          layer(2, "dead1", "Foo", {0}, {1}) + layer(3, "dead2", "Foo", {0}, {1}) +
          layer(4, "kept", "Foo", {0}, {1}) + layer(5, "assign", "Assign", {0}, {}),
      edge(0, 0, 1, 0) + edge(0, 0, 2, 0) + edge(2, 1, 3, 0) + edge(0, 0, 4, 0) + edge(4, 1, 5, 0));
  auto m = irrun::parse_ir(xml, "g.xml");
  const Graph g = build_graph(m);
  require_topological(g);
  CHECK(g.nodes[0].reachable);
  CHECK(g.nodes[1].reachable);
  CHECK_FALSE(g.nodes[2].reachable);
  CHECK_FALSE(g.nodes[3].reachable);
  CHECK(g.nodes[4].reachable);
  CHECK(g.nodes[5].reachable);
  REQUIRE(m.diagnostics.size() == 2);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto& d = m.diagnostics[i];
    CHECK(d.severity == irrun::Severity::warning);
    CHECK(d.rule == "unreachable-layer");
    CHECK(d.line == m.layers[*d.layer].line);
  }
  CHECK(m.diagnostics[0].layer == std::optional<std::size_t>(2));
  CHECK(m.diagnostics[1].layer == std::optional<std::size_t>(3));
  CHECK(m.diagnostics[0].line == line_of(xml, "name=\"dead1\""));
}

TEST_CASE("an edge to a missing layer is an unused-edge warning", "[graph]") {
  // OpenVINO reads each layer's inputs from the edges to it, so it never reads this one.
  const std::string xml =
      ir(layer(0, "in", "Parameter", {}, {0}) + layer(1, "out", "Result", {0}, {}),
         edge(0, 0, 1, 0) + edge(0, 0, 43, 0));
  auto m = irrun::parse_ir(xml, "g.xml");
  const Graph g = build_graph(m);
  require_topological(g);
  REQUIRE(m.diagnostics.size() == 1);
  CHECK(m.diagnostics[0].severity == irrun::Severity::warning);
  CHECK(m.diagnostics[0].rule == "unused-edge");
  CHECK(m.diagnostics[0].port == "edge 0:0 -> 43:0");
  CHECK(m.diagnostics[0].message == "to-layer 43 does not exist; OpenVINO never reads this edge");
  CHECK(m.diagnostics[0].line == line_of(xml, "to-layer=\"43\""));
  CHECK(g.nodes[1].inputs.size() == 1);
}

TEST_CASE("broken edges into a layer OpenVINO drops are unused-edge warnings", "[graph]") {
  // in -> out; `dead` (no Result) gets an edge from a missing layer, one from a port `in` lacks,
  // one to a port it lacks, and two to its one port. Fed to `out`, each is an error.
  const std::string in = layer(0, "in", "Parameter", {}, {0});
  const std::string dead = layer(2, "dead", "Foo", {0, 1}, {2});
  const std::vector<std::pair<std::string, std::string>> broken = {
      {edge(42, 0, 2, 0) + edge(0, 0, 2, 1), "from-layer 42 does not exist"},
      {edge(0, 9, 2, 0) + edge(0, 0, 2, 1), "Can not find output port with id 9"},
      {edge(0, 0, 2, 7) + edge(0, 0, 2, 1), "Can not find input port with id 7"},
      {edge(0, 0, 2, 0) + edge(0, 0, 2, 0), "has more than one incoming edge"},
  };
  for (const auto& [edges, message] : broken) {
    CAPTURE(message);
    const auto xml = ir(in + layer(1, "out", "Result", {0}, {}) + dead, edge(0, 0, 1, 0) + edges);
    auto m = irrun::parse_ir(xml, "g.xml");
    const Graph g = build_graph(m);
    CHECK_FALSE(g.nodes[2].reachable);
    const auto unused = std::count_if(m.diagnostics.begin(), m.diagnostics.end(),
                                      [](const auto& d) { return d.rule == "unused-edge"; });
    CHECK(unused == 1);
    for (const auto& d : m.diagnostics)
      if (d.rule == "unused-edge") CHECK_THAT(d.message, Catch::Contains(message));
    // The same edges into a layer a Result keeps: the error.
    const auto kept =
        graph_error(ir(in + dead + layer(3, "out", "Result", {0}, {}), edges + edge(2, 2, 3, 0)));
    REQUIRE(kept.has_value());
    CHECK_THAT(kept->what(), Catch::Contains(message));
  }
}

TEST_CASE("a cycle among layers OpenVINO drops is no error", "[graph]") {
  // in -> out; in -> c1 <-> c2 -> after (no Result): OpenVINO's walk from `out` never meets
  // the cycle. Its layers and `after` come last in the order, in file order, all unreachable.
  const std::string xml = ir(
      layer(0, "in", "Parameter", {}, {0}) + layer(1, "after", "Foo", {0}, {1}) +
          layer(2, "c1", "Foo", {0, 1}, {2}) + layer(3, "c2", "Foo", {0}, {1}) +
          layer(4, "out", "Result", {0}, {}),
      edge(0, 0, 2, 0) + edge(3, 1, 2, 1) + edge(2, 2, 3, 0) + edge(3, 1, 1, 0) + edge(0, 0, 4, 0));
  auto m = irrun::parse_ir(xml, "g.xml");
  const Graph g = build_graph(m);
  CHECK(g.order == std::vector<std::size_t>{0, 4, 1, 2, 3});
  for (std::size_t n : {1, 2, 3}) CHECK_FALSE(g.nodes[n].reachable);
  REQUIRE(m.diagnostics.size() == 3);
  for (const auto& d : m.diagnostics) CHECK(d.rule == "unreachable-layer");
  // The same cycle feeding the Result is an error.
  const auto kept =
      graph_error(ir(layer(0, "in", "Parameter", {}, {0}) + layer(2, "c1", "Foo", {0, 1}, {2}) +
                         layer(3, "c2", "Foo", {0}, {1}) + layer(4, "out", "Result", {0}, {}),
                     edge(0, 0, 2, 0) + edge(3, 1, 2, 1) + edge(2, 2, 3, 0) + edge(3, 1, 4, 0)));
  REQUIRE(kept.has_value());
  CHECK_THAT(kept->what(), Catch::Contains("is on a cycle"));
}

TEST_CASE("a 100,000-layer chain needs no deep stack", "[graph][slow]") {
  constexpr std::uint64_t kChain = 100000;
  // Layers listed in reverse order with descending ids: Result first, Parameter last.
  std::string layers;
  std::string edges;
  layers.reserve(kChain * 180);
  const std::uint64_t result_id = 0;
  const std::uint64_t param_id = kChain + 1;
  layers += layer(result_id, "out", "Result", {0}, {});
  for (std::uint64_t k = kChain; k >= 1; --k)
    layers += layer(k, "op" + std::to_string(k), "Foo", {0}, {1});
  layers += layer(param_id, "in", "Parameter", {}, {0});
  // Chain: in -> op_N -> op_{N-1} -> ... -> op_1 -> out.
  edges += edge(param_id, 0, kChain, 0);
  for (std::uint64_t k = kChain; k > 1; --k) edges += edge(k, 1, k - 1, 0);
  edges += edge(1, 1, result_id, 0);

  auto m = irrun::parse_ir(ir(layers, edges), "chain.xml");
  REQUIRE(m.layers.size() == kChain + 2);
  const Graph g = build_graph(m);
  require_topological(g);
  CHECK(g.order.front() == m.layers.size() - 1);  // the Parameter
  CHECK(g.order.back() == 0);                     // the Result
  CHECK(std::all_of(g.nodes.begin(), g.nodes.end(), [](const auto& n) { return n.reachable; }));
  CHECK(m.diagnostics.empty());

  SECTION("and a cycle closing the chain is found without recursion") {
    // Replace the Parameter's edge by one from the last op: op_1 -> op_N (a 100,000-layer cycle).
    auto cyclic = irrun::parse_ir(
        ir(layers, edge(1, 1, kChain, 0) + edges.substr(edges.find('\n') + 1)), "chain.xml");
    try {
      build_graph(cyclic);
      FAIL("no error for a cycle");
    } catch (const ModelError& e) {
      CHECK_THAT(std::string(e.what()), Catch::Contains("is on a cycle"));
      CHECK_THAT(std::string(e.what()), Catch::Contains("'op"));
    }
  }
}
