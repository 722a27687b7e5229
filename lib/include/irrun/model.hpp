// A model ready for analysis: the parsed IR, its graph and its weights.
#pragma once

#include <optional>
#include <string>

#include "irrun/graph.hpp"
#include "irrun/ir.hpp"
#include "irrun/ops.hpp"
#include "irrun/tensor.hpp"

namespace irrun {

struct Model {
  IrModel ir;
  Graph graph;
  std::string weights_path;
  std::optional<Buffer> weights;  // absent when there is no .bin
};

// Reads the xml, builds the graph and maps the weights: `weights_path` if given (it must
// exist), else the xml path with ".bin" (which may be missing: a "no-weights" warning then, if
// the model has Consts). Throws irrun::Error.
Model load_model(const std::string& xml_path, const std::optional<std::string>& weights_path = {});

// The attributes Parameter layer `n` declares (its element type and shape); throws ModelError
// naming the layer when they do not parse.
ParameterAttrs declared_parameter(const Model& m, std::size_t n);

}  // namespace irrun
