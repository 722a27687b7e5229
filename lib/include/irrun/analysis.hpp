// Shape inference over the whole graph: parse every known layer's attributes and infer its
// outputs in topological order. Opaque layers (and layers that fail) contribute their declared
// outputs, so one bad layer does not hide problems in the others.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "irrun/graph.hpp"
#include "irrun/ops.hpp"

namespace irrun {

struct NodeInfo {
  const OpEntry* op = nullptr;  // nullptr: an op irrun does not implement (opaque)
  OpAttrs attrs;
  std::vector<ValueInfo> outputs;        // inferred, or declared for opaque / failed nodes
  std::optional<PoolGeometry> geometry;  // pooling ops on static shapes
  bool inferred = false;                 // outputs come from shape inference
};

struct Analysis {
  std::vector<NodeInfo> nodes;  // parallel to IrModel::layers
  Diagnostics diagnostics;      // layer errors (attributes, validation) and warnings
};

// `parameter_shapes` replaces the shapes of the given Parameter layers (by layer index), e.g.
// with the static shapes of the actual inputs of a run.
Analysis analyze(const IrModel& model, const Graph& graph, const Buffer* weights,
                 const std::map<std::size_t, PartialShape>& parameter_shapes = {});

// The declared outputs of a layer: <dim>s (-1 dynamic) and precisions.
std::vector<ValueInfo> declared_outputs(const Layer& layer);

// A one-line message for a diagnostic: "<path>:<line>: error: layer ...: <message>".
std::string format(const IrModel& model, const Diagnostic& d);

}  // namespace irrun
