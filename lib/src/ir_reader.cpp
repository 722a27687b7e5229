#include "irrun/ir_reader.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <pugixml.hpp>
#include <set>
#include <sstream>

#include "irrun/checked.hpp"
#include "irrun/error.hpp"
#include "irrun/ops.hpp"
#include "irrun/tensor.hpp"
#include "irrun/utf8.hpp"

namespace irrun {
namespace {

// Maps pugixml byte offsets to 1-based line numbers. A line ends with LF, CRLF or a lone CR,
// the three ends XML 1.0 (2.11) knows: a file saved with CR line ends has lines too.
class LineIndex {
 public:
  explicit LineIndex(std::string_view text) {
    for (std::size_t i = 0; i < text.size(); ++i) {
      const bool lone_cr = text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n');
      if (text[i] == '\n' || lone_cr) newlines_.push_back(i);
    }
  }
  std::size_t line(std::ptrdiff_t offset) const {
    if (offset < 0) return 0;
    return static_cast<std::size_t>(std::lower_bound(newlines_.begin(), newlines_.end(),
                                                     static_cast<std::size_t>(offset)) -
                                    newlines_.begin()) +
           1;
  }

 private:
  std::vector<std::size_t> newlines_;
};

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  const auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

// `names` attribute: comma-separated, `\,` escapes a comma.
std::vector<std::string> split_names(std::string_view text) {
  std::vector<std::string> names;
  std::string current;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == ',') {
      current += ',';
      ++i;
    } else if (text[i] == ',') {
      names.emplace_back(trim(current));
      current.clear();
    } else {
      current += text[i];
    }
  }
  names.emplace_back(trim(current));
  names.erase(std::remove(names.begin(), names.end(), std::string()), names.end());
  return names;
}

// The encoding the XML declaration names, or "" (UTF-8, XML's default) when there is none.
std::string_view declared_encoding(std::string_view xml) {
  if (!xml.starts_with("<?xml")) return {};
  const auto decl = xml.substr(0, xml.find("?>"));
  const auto at = decl.find("encoding");
  if (at == std::string_view::npos) return {};
  const auto open = decl.find_first_of("\"'", at);
  if (open == std::string_view::npos) return {};
  const auto close = decl.find(decl[open], open + 1);
  return close == std::string_view::npos ? std::string_view()
                                         : decl.substr(open + 1, close - open - 1);
}

class Reader {
 public:
  Reader(std::string_view xml, const std::string& path) : xml_(xml), lines_(xml) {
    model_.path = path;
  }

  IrModel read() {
    // pugixml passes ill-formed UTF-8 through into names, where it would break every JSON and
    // XML report. The one declared encoding it converts is latin1; any other it reads as UTF-8.
    if (const auto enc = declared_encoding(xml_);
        !iequals(enc, "ISO-8859-1") && !iequals(enc, "latin1")) {
      const auto ok = valid_utf8_prefix(xml_);
      if (ok != xml_.size()) {
        char byte[8];
        std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned char>(xml_[ok]));
        throw ModelError(model_.path, lines_.line(static_cast<std::ptrdiff_t>(ok)),
                         std::string("not UTF-8: byte ") + byte + " at offset " +
                             std::to_string(ok) + "; an IR .xml is UTF-8 text");
      }
    }
    pugi::xml_document doc;
    // Default options: no DOCTYPE nodes, and pugixml never expands custom entities.
    const auto parsed = doc.load_buffer(xml_.data(), xml_.size(), pugi::parse_default);
    if (!parsed)
      throw ModelError(model_.path, lines_.line(parsed.offset),
                       std::string("not well-formed XML: ") + parsed.description() + " at offset " +
                           std::to_string(parsed.offset));
    const auto net = doc.document_element();
    if (!net || !iequals(net.name(), "net"))
      throw ModelError(model_.path, net ? line(net) : 0,
                       "not an OpenVINO IR: the root element is <" +
                           std::string(net ? net.name() : "") + ">, expected <net>");
    // get_uint64_attr(root, "version", 0): " 11" and "011" are 11, "11 " is refused.
    const std::string version = net.attribute("version").as_string();
    const std::optional<std::uint64_t> number =
        net.attribute("version") ? uint64_attr(version) : std::uint64_t{0};
    if (number != 10u && number != 11u)
      throw ModelError(
          model_.path, line(net),
          "IR version '" + version + "' is not supported: OpenVINO reads IR versions 10 and 11");
    model_.ir_version = static_cast<int>(*number);
    model_.name = net.attribute("name").as_string();

    for (auto layer : net.child("layers").children("layer")) read_layer(layer);
    for (auto edge : net.child("edges").children("edge")) read_edge(edge);
    if (auto pre = net.child("pre-process")) read_pre_process(pre);
    return std::move(model_);
  }

 private:
  std::size_t line(const pugi::xml_node& node) const { return lines_.line(node.offset_debug()); }

  [[noreturn]] void fail(const pugi::xml_node& node, const std::string& what) const {
    throw ModelError(model_.path, line(node), what);
  }

  void warn(const pugi::xml_node& node, std::size_t layer, std::string rule, std::string port,
            std::string message) {
    Diagnostic d;
    d.severity = Severity::warning;
    d.rule = std::move(rule);
    d.layer = layer;
    d.port = std::move(port);
    d.message = std::move(message);
    d.line = line(node);
    model_.diagnostics.push_back(std::move(d));
  }

  std::string mandatory(const pugi::xml_node& node, const char* attr, const std::string& context) {
    const auto a = node.attribute(attr);
    if (!a)
      fail(node, context + "<" + node.name() + "> is missing mandatory attribute '" + attr + "'");
    return a.value();
  }

  std::uint64_t mandatory_u64(const pugi::xml_node& node, const char* attr,
                              const std::string& context) {
    const auto text = mandatory(node, attr, context);
    const auto v = uint64_attr(text);
    if (!v)
      fail(node, context + "attribute '" + attr + "' of <" + node.name() + "> is '" + text +
                     "', expected a non-negative integer");
    return *v;
  }

  void read_layer(const pugi::xml_node& node) {
    Layer layer;
    layer.line = line(node);
    layer.id = mandatory_u64(node, "id", "");
    const std::string ctx = "layer " + std::to_string(layer.id) + ": ";
    layer.name = mandatory(node, "name", ctx);
    layer.type = mandatory(node, "type", ctx);
    layer.version = mandatory(
        node, "version",
        "layer " + std::to_string(layer.id) + " '" + layer.name + "' (" + layer.type + "): ");
    if (!ids_.insert(layer.id).second)
      fail(node, describe(layer) + ": duplicate layer id " + std::to_string(layer.id));
    const std::size_t index = model_.layers.size();

    if (auto data = node.child("data")) {
      layer.has_data = true;
      layer.data_line = line(data);
      for (auto a : data.attributes()) layer.data.emplace_back(a.name(), a.value());
    }
    std::set<std::uint64_t> port_ids;
    for (auto port : node.child("input").children("port"))
      layer.inputs.push_back(read_port(port, layer, index, port_ids, false));
    for (auto port : node.child("output").children("port"))
      layer.outputs.push_back(read_port(port, layer, index, port_ids, true));
    if (model_.ir_version >= 11) check_rt_info(node.child("rt_info"), layer);
    model_.layers.push_back(std::move(layer));
  }

  Port read_port(const pugi::xml_node& node, const Layer& layer, std::size_t index,
                 std::set<std::uint64_t>& ids, bool is_output) {
    Port port;
    port.line = line(node);
    const std::string ctx = describe(layer) + ": ";
    port.id = mandatory_u64(node, "id", ctx);
    const std::string label =
        std::string(is_output ? "output" : "input") + " port " + std::to_string(port.id);
    if (!ids.insert(port.id).second)
      fail(node, ctx + "duplicate port id " + std::to_string(port.id));

    if (const auto precision = node.attribute("precision")) {
      port.precision = precision.value();
      port.type = parse_precision(port.precision);
      if (!port.type) {
        if (is_output)
          fail(node, ctx + label + ": precision '" + port.precision +
                         "' is not an element type (e.g. FP32, f32, FP16, I64)");
        warn(node, index, "bad-precision", label,
             "precision '" + port.precision +
                 "' is not an element type (ignored by OpenVINO on "
                 "input ports)");
      }
    } else if (is_output) {
      fail(node, ctx + label + ": missing mandatory attribute 'precision'");
    }
    if (const auto names = node.attribute("names")) port.names = split_names(names.value());

    for (auto dim : node.children("dim")) port.dims.push_back(read_dim(dim, index, ctx, label));
    if (model_.ir_version >= 11) check_rt_info(node.child("rt_info"), layer);
    return port;
  }

  // <dim> is read like `int64 >>`: leading space, optional sign, digits; the rest is ignored.
  std::int64_t read_dim(const pugi::xml_node& node, std::size_t index, const std::string& ctx,
                        const std::string& label) {
    const std::string text = node.child_value();
    std::size_t pos = text.find_first_not_of(" \t\r\n");
    std::size_t end = pos == std::string::npos ? text.size() : pos;
    if (end < text.size() && (text[end] == '-' || text[end] == '+')) ++end;
    const std::size_t digits = end;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    std::int64_t value = -2;
    if (end > digits) {
      const char* first = text.data() + (text[pos] == '+' ? pos + 1 : pos);
      auto [ptr, ec] = std::from_chars(first, text.data() + end, value);
      if (ec != std::errc()) value = -2;
    }
    if (value < -1)
      fail(node, ctx + label + ": <dim>" + text +
                     "</dim> is not a dimension: expected an integer "
                     ">= -1 (-1 for a dynamic dim)");
    if (trim(std::string_view(text).substr(end)).size() > 0)
      warn(node, index, "dim-text", label,
           "<dim>" + text + "</dim> is read by OpenVINO as " + std::to_string(value) +
               " (the rest is ignored); write a plain integer, -1 for a dynamic dim");
    return value;
  }

  // OpenVINO keeps the rt_info attributes its factory knows (ov::pass::Attributes, all version
  // "0") and skips the rest, and those without a name or version: only a known one given twice
  // is an error.
  void check_rt_info(const pugi::xml_node& rt_info, const Layer& layer) {
    if (!rt_info) return;
    static const std::set<std::string, std::less<>> known{"fused_names",
                                                          "primitives_priority",
                                                          "DisableConstantFolding",
                                                          "disable_fp16_compression",
                                                          "nms_selected_indices",
                                                          "old_api_map_order",
                                                          "old_api_map_element_type",
                                                          "layout",
                                                          "decompression",
                                                          "memory_type",
                                                          "strides_propagation",
                                                          "preprocessing"};
    std::set<std::string> seen;
    for (auto a : rt_info.children("attribute")) {
      const auto name = a.attribute("name");
      const auto version = a.attribute("version");
      if (!name || !version || !known.count(name.value()) ||
          std::string_view(version.value()) != "0")
        continue;
      if (!seen.insert(name.value()).second)
        fail(a, describe(layer) + ": multiple rt_info attributes are detected: " + name.value());
    }
  }

  // The block as written; pre_process.cpp applies OpenVINO's rules to it.
  void read_pre_process(const pugi::xml_node& node) {
    PreProcess pre;
    pre.line = line(node);
    pre.reference = std::string(trim(node.attribute("reference-layer-name").as_string()));
    const auto text = [](const pugi::xml_attribute& a) {
      return a ? std::optional<std::string>(a.value()) : std::nullopt;
    };
    for (auto channel : node.children("channel")) {
      MeanChannel c;
      c.line = line(channel);
      c.id = text(channel.attribute("id"));
      if (const auto mean = channel.child("mean")) {
        c.has_mean = true;
        c.line = line(mean);
        c.value = text(mean.attribute("value"));
        c.offset = text(mean.attribute("offset"));
        c.size = text(mean.attribute("size"));
      }
      pre.channels.push_back(std::move(c));
    }
    model_.pre_process = std::move(pre);
  }

  void read_edge(const pugi::xml_node& node) {
    Edge e;
    e.line = line(node);
    e.from_layer = mandatory_u64(node, "from-layer", "edge: ");
    e.from_port = mandatory_u64(node, "from-port", "edge: ");
    e.to_layer = mandatory_u64(node, "to-layer", "edge: ");
    e.to_port = mandatory_u64(node, "to-port", "edge: ");
    model_.edges.push_back(e);
  }

  std::string_view xml_;
  LineIndex lines_;
  IrModel model_;
  std::set<std::uint64_t> ids_;
};

}  // namespace

const std::string* Layer::attribute(std::string_view key) const {
  for (const auto& [k, v] : data) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool has_type(const Layer& layer, std::string_view type) {
  return iequals(layer.type, type);
}

bool is_const(const Layer& layer) {
  return has_type(layer, "Const") || has_type(layer, "Constant");
}

std::string describe(const Layer& layer) {
  std::string kind = layer.type + " " + layer.version;
  try {
    if (const auto* op = resolve_op(layer)) kind = op_label(*op) + " " + layer.version;
  } catch (const LayerError&) {  // a version whose opset lacks the type: as written
  }
  return "layer " + std::to_string(layer.id) + " '" + layer.name + "' (" + kind + ")";
}

std::string where(const IrModel& model, std::size_t line) {
  return model.path + (line ? ":" + std::to_string(line) : std::string()) + ": ";
}

IrModel parse_ir(std::string_view xml, const std::string& path) {
  // A UTF-16 or UTF-32 text with its byte-order mark, which OpenVINO's pugixml reads too, is
  // read as UTF-8 so that offsets and lines are those of the text itself.
  if (const auto utf8 = utf8_from_wide(xml)) return Reader(*utf8, path).read();
  return Reader(xml, path).read();
}

IrModel read_ir(const std::string& xml_path) {
  struct stat st {};
  if (::stat(xml_path.c_str(), &st) != 0)
    throw ModelError(xml_path, 0, std::string("cannot open: ") + std::strerror(errno));
  if (S_ISDIR(st.st_mode))
    throw ModelError(xml_path, 0, "is a directory, expected an IR .xml file");
  // A FIFO would block (or never end) and a device such as /dev/zero never ends.
  if (!S_ISREG(st.st_mode))
    throw ModelError(xml_path, 0, "not a regular file, expected an IR .xml file");
  // pugixml's DOM takes a few times the text's size; refuse what cannot fit the memory limit.
  const auto size = static_cast<std::uint64_t>(st.st_size);
  require_memory(checked_mul(size, 4), xml_path + ": parsing this " + format_bytes(size) + " IR");
  std::ifstream in(xml_path, std::ios::binary);
  if (!in) {
    const int err = errno;
    throw ModelError(xml_path, 0, std::string("cannot open: ") + std::strerror(err));
  }
  std::string text(static_cast<std::size_t>(size), '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  if (in.bad()) throw ModelError(xml_path, 0, "cannot read");
  text.resize(static_cast<std::size_t>(in.gcount()));  // the file may have shrunk meanwhile
  if (text.empty()) throw ModelError(xml_path, 0, "empty file, expected an IR .xml file");
  if (!utf8_from_wide(text.substr(0, 4)) && text.substr(0, 512).find('\0') != std::string::npos)
    throw ModelError(xml_path, 0, "binary data, not an IR .xml file");
  return parse_ir(text, xml_path);
}

std::optional<std::uint64_t> uint64_attr(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  const bool negative = i < text.size() && text[i] == '-';
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  // from_chars would take a second '-' ("+-0", "--0"); strtoll wants a digit here.
  if (i == text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
  std::int64_t v = 0;
  const auto [ptr, ec] = std::from_chars(text.data() + i, text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size() || v < 0 || (negative && v != 0))
    return std::nullopt;
  return static_cast<std::uint64_t>(v);
}

std::string default_weights_path(const std::string& xml_path) {
  return std::filesystem::path(xml_path).replace_extension(".bin").string();
}

}  // namespace irrun
