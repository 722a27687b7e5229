// The node graph of an IR: input slots resolved from edges, a topological order and the layers
// OpenVINO would keep (those reachable from a Result or Assign, plus every Parameter).
#pragma once

#include <compare>
#include <cstddef>
#include <optional>
#include <vector>

#include "irrun/ir.hpp"

namespace irrun {

struct Source {
  std::size_t node = 0;    // producer's index (== its index in IrModel::layers)
  std::size_t output = 0;  // index among the producer's output ports
  auto operator<=>(const Source&) const = default;
};

struct Node {
  std::vector<Source> inputs;         // by input index (position of the port among <input>)
  std::vector<std::size_t> in_edges;  // index into IrModel::edges, parallel to `inputs`
  bool reachable = false;             // kept by OpenVINO
};

struct Graph {
  std::vector<Node> nodes;  // parallel to IrModel::layers
  // Topological order of all nodes; layers on or after a cycle OpenVINO drops come last.
  std::vector<std::size_t> order;
  std::vector<std::size_t> parameters;  // Parameter layers in file order (the model inputs)
  std::vector<std::size_t> results;     // Result layers in file order
};

// Resolves edges and orders the graph without recursion. Throws irrun::Error (bad_model) for
// dangling edges, unknown port ids, inconsistent inputs and cycles OpenVINO keeps, naming the
// layer; adds an "unreachable-layer" warning for each layer OpenVINO would drop.
Graph build_graph(IrModel& model);

}  // namespace irrun
