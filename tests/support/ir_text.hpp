// Test-only helpers for writing small IR v11 models inline and for making and reading small
// tensors by hand: a port, a layer, an edge and the <net> around them, then parse_ir + build_graph
// into an irrun::Model (weights, when needed, as an in-memory Buffer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "irrun/blob.hpp"
#include "irrun/float16.hpp"
#include "irrun/graph.hpp"
#include "irrun/ir_reader.hpp"
#include "irrun/model.hpp"
#include "irrun/tensor.hpp"

namespace irrun::testing {

// <port id=.. precision=.. names=..><dim>..</dim>...</port>; empty precision/names are omitted.
inline std::string port(int id, const std::vector<std::int64_t>& dims,
                        const std::string& precision = "FP32", const std::string& names = "") {
  std::string s = "<port id=\"" + std::to_string(id) + "\"";
  if (!precision.empty()) s += " precision=\"" + precision + "\"";
  if (!names.empty()) s += " names=\"" + names + "\"";
  s += ">";
  for (auto d : dims) s += "<dim>" + std::to_string(d) + "</dim>";
  return s + "</port>";
}

inline std::string layer(int id, const std::string& name, const std::string& type,
                         const std::string& version, const std::string& data,
                         const std::string& inputs, const std::string& outputs) {
  std::string s = "<layer id=\"" + std::to_string(id) + "\" name=\"" + name + "\" type=\"" + type +
                  "\" version=\"" + version + "\">\n";
  if (!data.empty()) s += "<data " + data + "/>\n";
  if (!inputs.empty()) s += "<input>" + inputs + "</input>\n";
  if (!outputs.empty()) s += "<output>" + outputs + "</output>\n";
  return s + "</layer>\n";
}

// A Parameter with `shape` as written in its data (e.g. "1,1,?,?") and `dims` on its port.
inline std::string parameter(int id, const std::string& name, const std::string& shape,
                             const std::vector<std::int64_t>& dims,
                             const std::string& element_type = "f32",
                             const std::string& precision = "FP32", const std::string& names = "") {
  return layer(id, name, "Parameter", "opset1",
               "shape=\"" + shape + "\" element_type=\"" + element_type + "\"", "",
               port(0, dims, precision, names));
}

inline std::string result(int id, const std::string& name, const std::vector<std::int64_t>& dims,
                          const std::string& precision = "FP32") {
  return layer(id, name, "Result", "opset1", "", port(0, dims, precision), "");
}

// An AvgPool with data input port 0 and output port 1.
inline std::string avg_pool(int id, const std::string& name, const std::string& version,
                            const std::string& data, const std::vector<std::int64_t>& in_dims,
                            const std::vector<std::int64_t>& out_dims,
                            const std::string& precision = "FP32", const std::string& names = "") {
  return layer(id, name, "AvgPool", version, data, port(0, in_dims, precision),
               port(1, out_dims, precision, names));
}

inline std::string edge(int from_layer, int from_port, int to_layer, int to_port) {
  return "<edge from-layer=\"" + std::to_string(from_layer) + "\" from-port=\"" +
         std::to_string(from_port) + "\" to-layer=\"" + std::to_string(to_layer) + "\" to-port=\"" +
         std::to_string(to_port) + "\"/>\n";
}

inline std::string net(const std::string& layers, const std::string& edges) {
  return "<?xml version=\"1.0\"?>\n<net name=\"test\" version=\"11\">\n<layers>\n" + layers +
         "</layers>\n<edges>\n" + edges + "</edges>\n</net>\n";
}

// parse_ir + build_graph; `weights` plays the part of the mapped .bin.
inline Model model_from_xml(const std::string& xml, std::optional<Buffer> weights = {}) {
  Model m;
  m.ir = parse_ir(xml, "test.xml");
  m.graph = build_graph(m.ir);
  m.weights_path = "test.bin";
  m.weights = std::move(weights);
  return m;
}

// A weights buffer holding `values` as little-endian i64 at byte `offset` (bytes before it are
// filled with 0xAB, so reading from the wrong place shows).
inline Buffer i64_weights(std::size_t offset, const std::vector<std::int64_t>& values) {
  Buffer b = Buffer::allocate(offset + values.size() * sizeof(std::int64_t));
  std::memset(b.mutable_data(), 0xAB, offset);
  std::memcpy(b.mutable_data() + offset, values.data(), values.size() * sizeof(std::int64_t));
  return b;
}

// A tensor of `type` (f32, f64, f16 or bf16) holding `values` (each rounded once to `type`).
inline Tensor make_tensor(ElementType type, std::vector<std::int64_t> shape,
                          const std::vector<double>& values) {
  Tensor t = Tensor::zeros(type, std::move(shape));
  for (std::size_t i = 0; i < values.size() && i < t.element_count(); ++i) {
    switch (type) {
      case ElementType::f32:
        t.mutable_data<float>()[i] = static_cast<float>(values[i]);
        break;
      case ElementType::f64:
        t.mutable_data<double>()[i] = values[i];
        break;
      case ElementType::f16:
        t.mutable_data<std::uint16_t>()[i] = f16_bits_from_double(values[i]);
        break;
      case ElementType::bf16:
        t.mutable_data<std::uint16_t>()[i] = bf16_bits_from_double(values[i]);
        break;
      case ElementType::i8:
        t.mutable_data<std::int8_t>()[i] = static_cast<std::int8_t>(values[i]);
        break;
      case ElementType::u8:
        t.mutable_data<std::uint8_t>()[i] = static_cast<std::uint8_t>(values[i]);
        break;
      case ElementType::i32:
        t.mutable_data<std::int32_t>()[i] = static_cast<std::int32_t>(values[i]);
        break;
      case ElementType::i64:
        t.mutable_data<std::int64_t>()[i] = static_cast<std::int64_t>(values[i]);
        break;
      default:
        break;
    }
  }
  return t;
}

// 0, 1, 2, ... in `type`.
inline Tensor iota_tensor(ElementType type, std::vector<std::int64_t> shape) {
  std::size_t n = 1;
  for (auto d : shape) n *= static_cast<std::size_t>(d);
  std::vector<double> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return make_tensor(type, std::move(shape), v);
}

// Every element as double.
inline std::vector<double> values_of(const Tensor& t) {
  return first_values(t, t.element_count());
}

// The raw 16-bit patterns of an f16/bf16 tensor.
inline std::vector<std::uint16_t> bits16_of(const Tensor& t) {
  const auto* p = t.data<std::uint16_t>();
  return {p, p + t.element_count()};
}

}  // namespace irrun::testing
