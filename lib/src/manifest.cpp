#include "irrun/manifest.hpp"

#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>
#include <utility>

#include "irrun/error.hpp"
#include "irrun/file_io.hpp"

namespace irrun {
namespace {

using json = nlohmann::ordered_json;

json optional_string(const std::string& s) {
  return s.empty() ? json(nullptr) : json(s);
}

std::string string_or_empty(const json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return {};
  return j.at(key).get<std::string>();
}

json tensor_json(const ManifestTensor& t, bool input) {
  json j;
  j["name"] = t.name;
  j["type"] = std::string(to_string(t.type));
  j["shape"] = t.shape;
  j["file"] = optional_string(t.file);
  j["sha256"] = optional_string(t.sha256);
  j["data_sha256"] = t.data_sha256;
  if (input) {
    j["source"] = t.source;
    j["source_path"] = optional_string(t.source_path);
  }
  return j;
}

// A JSON whole number that fits T: a fraction, a string or an out-of-range value is malformed
// (nlohmann's get<T> would truncate 7.9 to 7, wrap -1 to 2^64 - 1, and convert 1e30 with
// undefined behaviour).
template <class T>
T whole(const json& j, const std::string& what, T min = std::numeric_limits<T>::min()) {
  const bool fits = j.is_number_unsigned()  ? std::in_range<T>(j.get<std::uint64_t>())
                    : j.is_number_integer() ? std::in_range<T>(j.get<std::int64_t>())
                                            : false;
  if (!fits || j.get<T>() < min)
    throw std::invalid_argument(what + " is " + j.dump() + ", not a whole number from " +
                                std::to_string(min) + " to " +
                                std::to_string(std::numeric_limits<T>::max()));
  return j.get<T>();
}

ManifestTensor tensor_from(const json& j) {
  ManifestTensor t;
  t.name = j.at("name").get<std::string>();
  const auto type = j.at("type").get<std::string>();
  const auto parsed = parse_element_type_name(type);
  if (!parsed) throw std::invalid_argument("unknown element type '" + type + "'");
  t.type = *parsed;
  const auto& shape = j.at("shape");
  if (!shape.is_array()) throw std::invalid_argument("shape of '" + t.name + "' is not an array");
  for (const auto& d : shape)
    t.shape.push_back(whole<std::int64_t>(d, "a dim of '" + t.name + "'", 0));
  t.file = string_or_empty(j, "file");
  t.sha256 = string_or_empty(j, "sha256");
  t.data_sha256 = string_or_empty(j, "data_sha256");
  t.source = string_or_empty(j, "source");
  t.source_path = string_or_empty(j, "source_path");
  const std::filesystem::path file(t.file);
  bool escapes = file.is_absolute();
  for (const auto& part : file) escapes = escapes || part == "..";
  if (escapes)
    throw std::invalid_argument("file '" + t.file + "' is not inside the golden directory");
  return t;
}

json digest_json(const FileDigest& d) {
  return json{{"path", d.path}, {"sha256", d.sha256}};
}

FileDigest digest_from(const json& j) {
  return {j.at("path").get<std::string>(), j.at("sha256").get<std::string>()};
}

}  // namespace

std::string to_json(const Manifest& m) {
  json j;
  j["format"] = kManifestFormat;
  j["format_version"] = m.format_version;
  j["irrun_version"] = m.irrun_version;
  j["model"] = json{{"xml", digest_json(m.model_xml)},
                    {"bin", m.model_bin ? digest_json(*m.model_bin) : json(nullptr)}};
  json options;
  options["layer"] = m.run.layer ? json(*m.run.layer) : json(nullptr);
  options["shapes"] = m.run.shapes;
  options["inputs"] = m.run.inputs;
  options["random_input"] = m.run.seed.has_value();
  options["seed"] = m.run.seed ? json(*m.run.seed) : json(nullptr);
  options["output_format"] = m.run.output_format;
  j["options"] = options;
  j["informational"] = json{{"threads", m.run.threads}, {"kernels", m.run.kernels}};
  j["inputs"] = json::array();
  for (const auto& t : m.inputs) j["inputs"].push_back(tensor_json(t, true));
  j["outputs"] = json::array();
  for (const auto& t : m.outputs) j["outputs"].push_back(tensor_json(t, false));
  // Paths may hold bytes that are not UTF-8: replaced (U+FFFD), not thrown.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

Manifest parse_manifest(const std::string& text, const std::string& origin) {
  try {
    const json j = json::parse(text);
    if (!j.is_object() || j.value("format", std::string()) != kManifestFormat)
      throw std::invalid_argument(std::string("\"format\" is not \"") + kManifestFormat + "\"");
    Manifest m;
    m.format_version = whole<int>(j.at("format_version"), "format_version");
    if (m.format_version != kManifestVersion)
      throw std::invalid_argument("format_version " + std::to_string(m.format_version) +
                                  " (this irrun reads " + std::to_string(kManifestVersion) + ")");
    m.irrun_version = j.at("irrun_version").get<std::string>();
    const auto& model = j.at("model");
    m.model_xml = digest_from(model.at("xml"));
    if (model.contains("bin") && !model.at("bin").is_null())
      m.model_bin = digest_from(model["bin"]);
    const auto& o = j.at("options");
    if (!o.at("layer").is_null()) m.run.layer = o.at("layer").get<std::string>();
    m.run.shapes = o.at("shapes").get<std::vector<std::string>>();
    m.run.inputs = o.at("inputs").get<std::vector<std::string>>();
    if (o.at("random_input").get<bool>())
      m.run.seed = whole<std::uint64_t>(o.at("seed"), "options.seed");
    m.run.output_format = o.at("output_format").get<std::string>();
    if (j.contains("informational")) {
      const auto& info = j.at("informational");
      if (info.contains("threads"))
        m.run.threads = whole<int>(info.at("threads"), "informational.threads", 0);
      m.run.kernels = j["informational"].value("kernels", std::string("best"));
    }
    for (const auto& t : j.at("inputs")) m.inputs.push_back(tensor_from(t));
    for (const auto& t : j.at("outputs")) m.outputs.push_back(tensor_from(t));
    return m;
  } catch (const std::exception& e) {
    throw input_error(origin + ": not an irrun manifest: " + e.what());
  }
}

Manifest read_manifest(const std::string& dir) {
  const auto path = (std::filesystem::path(dir) / kManifestFile).string();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw input_error(path + ": no golden manifest (write one with --output-dir " + dir + ")");
  const Buffer b = read_file(path);
  return parse_manifest(std::string(reinterpret_cast<const char*>(b.data()), b.size()), path);
}

void write_manifest(const std::string& dir, const Manifest& manifest) {
  const auto text = to_json(manifest);
  write_file_atomically((std::filesystem::path(dir) / kManifestFile).string(),
                        std::as_bytes(std::span<const char>(text.data(), text.size())));
}

}  // namespace irrun
