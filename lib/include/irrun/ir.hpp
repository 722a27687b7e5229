// The IR XML as written: layers, ports and edges, before any graph or op semantics.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "irrun/diagnostic.hpp"
#include "irrun/element_type.hpp"

namespace irrun {

struct Port {
  std::uint64_t id = 0;
  std::string precision;            // as written; empty when absent (allowed on input ports)
  std::optional<ElementType> type;  // parsed precision
  std::vector<std::string> names;   // tensor names (`names`, with `\,` escaping a comma)
  std::vector<std::int64_t> dims;   // <dim> values; -1 is dynamic
  std::size_t line = 0;
};

struct Layer {
  std::uint64_t id = 0;
  std::string name;
  std::string type;
  std::string version;  // opset name as written, e.g. "opset1"
  bool has_data = false;
  std::vector<std::pair<std::string, std::string>> data;  // <data> attributes in file order
  std::vector<Port> inputs;
  std::vector<Port> outputs;
  std::size_t line = 0;
  std::size_t data_line = 0;  // line of <data>, 0 when absent

  const std::string* attribute(std::string_view key) const;
};

struct Edge {
  std::uint64_t from_layer = 0, from_port = 0, to_layer = 0, to_port = 0;
  std::size_t line = 0;
};

// A <channel> of the legacy <pre-process> block, as written (pre_process.cpp reads it as
// OpenVINO does, in its order, so that its errors are `check` diagnostics).
struct MeanChannel {
  std::optional<std::string> id;            // <channel id>
  bool has_mean = false;                    // a <mean> child
  std::optional<std::string> value;         // <mean value>
  std::optional<std::string> offset, size;  // <mean offset size>: bytes of the .bin
  std::size_t line = 0;                     // of the <mean>, else of the <channel>
};

// <net><pre-process reference-layer-name=..>: mean values OpenVINO's IR frontend subtracts from
// one input (v10 and v11 alike).
struct PreProcess {
  std::string reference;  // trimmed; empty: the first rank-4 Parameter, else the first
  std::vector<MeanChannel> channels;
  std::size_t line = 0;
};

struct IrModel {
  std::string path;           // the .xml, as given (used in every message)
  int ir_version = 0;         // 10 or 11
  std::string name;           // <net name>
  std::vector<Layer> layers;  // in file order
  std::vector<Edge> edges;
  std::optional<PreProcess> pre_process;
  Diagnostics diagnostics;  // reader warnings (e.g. `1..10` read as 1 in a <dim>)
};

// Layer types are compared case-insensitively, as OpenVINO looks them up.
bool has_type(const Layer& layer, std::string_view type);
// A Const layer ("Const" or "Constant", any case).
bool is_const(const Layer& layer);

// "layer 3 'pool1' (AvgPool-1 opset1)": how every message names a layer, with the op's version
// where irrun knows the op ("layer 7 'conv' (Convolution opset1)" where it does not).
std::string describe(const Layer& layer);

// "<path>:<line>: " prefix for messages about a place in the file.
std::string where(const IrModel& model, std::size_t line);

}  // namespace irrun
