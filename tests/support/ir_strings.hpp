// Builders of IR XML text from string dims ("1,3,-1"), for tests that write models inline.
#pragma once

#include <string>

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

// A <layer>; `data` is the text of <data>'s attributes, empty for none.
inline std::string layer(int id, const std::string& name, const std::string& type,
                         const std::string& version, const std::string& data,
                         const std::string& inputs, const std::string& outputs) {
  std::string s = "<layer id=\"" + std::to_string(id) + "\" name=\"" + name + "\" type=\"" + type +
                  "\" version=\"" + version + "\">\n";
  if (!data.empty()) s += "<data " + data + "/>\n";
  if (!inputs.empty()) s += "<input>\n" + inputs + "\n</input>\n";
  if (!outputs.empty()) s += "<output>\n" + outputs + "\n</output>\n";
  return s + "</layer>\n";
}

}  // namespace irrun::testing
