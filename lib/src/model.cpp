#include "irrun/model.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "irrun/attrs.hpp"
#include "irrun/error.hpp"
#include "irrun/ir_reader.hpp"

namespace irrun {

Model load_model(const std::string& xml_path, const std::optional<std::string>& weights_path) {
  Model m;
  m.ir = read_ir(xml_path);
  m.graph = build_graph(m.ir);
  m.weights_path = weights_path.value_or(default_weights_path(xml_path));
  std::error_code ec;
  const bool exists = std::filesystem::exists(m.weights_path, ec);
  if (!exists && weights_path)
    throw ModelError(m.weights_path, 0, "cannot open weights: No such file or directory");
  if (exists) {
    if (std::filesystem::is_directory(m.weights_path, ec))
      throw ModelError(m.weights_path, 0, "is a directory, expected a weights .bin file");
    if (!std::filesystem::is_regular_file(m.weights_path, ec))
      throw ModelError(m.weights_path, 0, "not a regular file, expected a weights .bin file");
    const auto size = std::filesystem::file_size(m.weights_path, ec);
    if (ec) throw ModelError(m.weights_path, 0, "cannot read weights: " + ec.message());
    try {
      m.weights = Buffer::map_file(m.weights_path, 0, size);
    } catch (const std::system_error& e) {
      throw ModelError(m.weights_path, 0, std::string("cannot read weights: ") + e.what());
    }
  } else {
    const bool has_const = std::any_of(m.ir.layers.begin(), m.ir.layers.end(), is_const);
    if (has_const) {
      Diagnostic d;
      d.severity = Severity::warning;
      d.rule = "no-weights";
      d.message = "no weights file " + m.weights_path +
                  ": Const values are unknown and their sizes are not checked";
      m.ir.diagnostics.push_back(std::move(d));
    }
  }
  return m;
}

ParameterAttrs declared_parameter(const Model& m, std::size_t n) {
  const Layer& layer = m.ir.layers[n];
  Diagnostics ignored;
  AttrReader reader(layer, n, "Parameter", ignored);
  try {
    const auto* op = resolve_op(layer);
    return std::get<ParameterAttrs>(op->parse(reader, op->version));
  } catch (const LayerError& e) {
    throw ModelError(m.ir.path, layer.line, describe(layer) + ": " + e.what());
  }
}

}  // namespace irrun
