// Builders of IR XML text from string dims ("1,3,-1"), beside ir_text.hpp's vector-dims ones.
#pragma once

#include <string>

#include "support/ir_text.hpp"

namespace irrun::testing {

// "1,3,-1" -> <dim>1</dim><dim>3</dim><dim>-1</dim>
inline std::string dims_xml(const std::string& dims) {
  std::string s;
  std::size_t start = 0;
  while (start < dims.size()) {
    auto comma = dims.find(',', start);
    if (comma == std::string::npos) comma = dims.size();
    s += "<dim>" + dims.substr(start, comma - start) + "</dim>";
    start = comma + 1;
  }
  return s;
}

inline std::string in_port(int id, const std::string& dims) {
  return "<port id=\"" + std::to_string(id) + "\">" + dims_xml(dims) + "</port>";
}

inline std::string out_port(int id, const std::string& precision, const std::string& dims) {
  return "<port id=\"" + std::to_string(id) + "\" precision=\"" + precision + "\">" +
         dims_xml(dims) + "</port>";
}

// A Parameter of `shape` as written in its data ("1,3,?,?"); each "?" is -1 on its port.
inline std::string parameter_text(int id, const std::string& name, const std::string& shape,
                                  const std::string& element_type = "f32",
                                  const std::string& precision = "FP32") {
  std::string dims;
  for (const char c : shape) dims += c == '?' ? std::string("-1") : std::string(1, c);
  return layer(id, name, "Parameter", "opset1",
               "shape=\"" + shape + "\" element_type=\"" + element_type + "\"", "",
               out_port(0, precision, dims));
}

// A Result reading dims given as text.
inline std::string result(int id, const std::string& name, const std::string& dims) {
  return layer(id, name, "Result", "opset1", "", in_port(0, dims), "");
}

}  // namespace irrun::testing
