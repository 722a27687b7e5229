// Reading IR v10/v11 XML as OpenVINO's IR frontend does (docs/openvino-semantics.md section 1).
#pragma once

#include <string>
#include <string_view>

#include "irrun/ir.hpp"

namespace irrun {

// Reads and parses an .xml file. Throws irrun::Error (bad_model) with "<path>[:line]: <what>".
IrModel read_ir(const std::string& xml_path);

// Parses IR text; `path` is only used in messages.
IrModel parse_ir(std::string_view xml, const std::string& path);

// The weights file OpenVINO looks for: the model path with its extension replaced by ".bin".
std::string default_weights_path(const std::string& xml_path);

}  // namespace irrun
