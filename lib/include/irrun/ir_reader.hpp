// Reading IR v10/v11 XML as OpenVINO's IR frontend does (docs/openvino-semantics.md section 1).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "irrun/ir.hpp"

namespace irrun {

// Reads and parses an .xml file. Throws irrun::Error (bad_model) with "<path>[:line]: <what>".
IrModel read_ir(const std::string& xml_path);

// Parses IR text; `path` is only used in messages.
IrModel parse_ir(std::string_view xml, const std::string& path);

// An unsigned 64-bit IR attribute as OpenVINO's get_uint64_attr reads it (layer and port ids,
// edges, <net version>, Const offset/size, pre-process channel ids): std::stoll that must reach
// the end of the text, then not negative. So leading blanks, one sign and leading zeros are
// taken (" 11", "+11", "011", "-0"), trailing text or blanks are not, and neither is a value
// past 2^63 - 1. nullopt where OpenVINO throws.
std::optional<std::uint64_t> uint64_attr(std::string_view text);

// The weights file OpenVINO looks for: the model path with its extension replaced by ".bin".
std::string default_weights_path(const std::string& xml_path);

}  // namespace irrun
