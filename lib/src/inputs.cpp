#include "irrun/inputs.hpp"

#include <algorithm>
#include <filesystem>

#include "irrun/blob.hpp"
#include "irrun/checked.hpp"
#include "irrun/error.hpp"
#include "irrun/npy.hpp"
#include "irrun/ops.hpp"

namespace irrun {
namespace {

struct ParameterInfo {
  std::size_t layer;
  std::string name;
  ElementType type;
  PartialShape shape;
};

std::vector<ParameterInfo> parameters(const Model& m) {
  std::vector<ParameterInfo> out;
  for (auto n : m.graph.parameters) {
    const auto a = declared_parameter(m, n);
    // undefined, dynamic and string hold no tensor irrun could read or make: the model's error
    // (as `check` says at the pool), named here before any input is looked at.
    if (bit_width(a.type) == 0)
      throw ModelError(m.ir.path, m.ir.layers[n].line,
                       describe(m.ir.layers[n]) + ": element_type " +
                           std::string(to_string(a.type)) +
                           " has no fixed size; irrun's inputs are of a float or integer type");
    out.push_back({n, m.ir.layers[n].name, a.type, a.shape});
  }
  return out;
}

std::string describe_param(const ParameterInfo& p) {
  return "input '" + p.name + "' (" + std::string(to_string(p.type)) + " " + to_string(p.shape) +
         ")";
}

// Runs `read` (which reads or makes one input), naming the Parameter in any error it throws.
template <class Read>
Tensor read_for(const ParameterInfo& p, Read&& read) {
  try {
    return read();
  } catch (const Error& e) {
    throw Error(e.code(), describe_param(p) + ": " + e.what());
  }
}

bool fits(const PartialShape& declared, const std::vector<std::int64_t>& shape) {
  return declared_matches(PartialShape::from_static(shape), declared) &&
         (!declared.rank_is_static() || declared.rank() == shape.size());
}

std::vector<std::int64_t> parse_shape_list(const std::string& text, const std::string& what) {
  PartialShape s;
  try {
    s = parse_partial_shape(text);
  } catch (const std::invalid_argument& e) {
    throw input_error(what + ": " + e.what());
  }
  if (!s.is_static()) throw input_error(what + ": '" + text + "' is not a static shape");
  return s.to_static();
}

// Splits "NAME=VALUE" when NAME names a Parameter (file paths may contain '=' too, and so may
// names: the longest NAME that names a Parameter wins, so "a=b=x.npy" feeds Parameter "a=b").
std::pair<std::optional<std::size_t>, std::string> split_named(const Model& m,
                                                               const std::string& arg,
                                                               bool value_is_path) {
  const auto eq = arg.find('=');
  if (eq != std::string::npos) {
    for (auto at = arg.rfind('='); at != std::string::npos;
         at = at == 0 ? std::string::npos : arg.rfind('=', at - 1))
      if (auto p = find_parameter(m, arg.substr(0, at))) return {p, arg.substr(at + 1)};
    if (!value_is_path || !std::filesystem::exists(arg)) {
      std::string names;
      for (auto n : m.graph.parameters) names += (names.empty() ? "" : ", ") + m.ir.layers[n].name;
      throw input_error("'" + arg.substr(0, eq) + "' is not an input of " + m.ir.path +
                        "; its inputs are: " + names);
    }
  }
  return {std::nullopt, arg};
}

// What a mismatching .npy should have been, in numpy's words.
std::string dtype_hint(ElementType type) {
  if (is_floating(type)) return "give a float .npy (float dtypes are converted, others are not)";
  const auto name = std::string(to_string(type));
  const auto bits = std::to_string(bit_width(type));
  std::string numpy = type == ElementType::boolean ? "bool" : name[0] == 'u' ? "uint" : "int";
  if (type != ElementType::boolean) numpy += bits;
  return "give an .npy of numpy dtype " + numpy + " (integer dtypes are never converted)";
}

// t converted to `to`, with a warning for values it lost past rounding: 1e300 in an f64 .npy
// is inf in f32, 1e-10 is 0 in f16.
Tensor converted(const std::string& path, const Tensor& t, ElementType to,
                 std::vector<std::string>& warnings) {
  Narrowed lost;
  Tensor out = convert_float(t, to, &lost);
  const auto name = std::string(to_string(to));
  if (lost.to_infinity > 0)
    warnings.push_back(path + ": " + std::to_string(lost.to_infinity) + " finite value(s) past " +
                       name + "'s range became infinite");
  if (lost.to_zero > 0)
    warnings.push_back(path + ": " + std::to_string(lost.to_zero) + " non-zero value(s) below " +
                       name + "'s least subnormal became zero");
  return out;
}

}  // namespace

std::optional<std::size_t> find_parameter(const Model& m, const std::string& name) {
  // Layer names first: a golden's manifest names its inputs by layer, and one Parameter's tensor
  // name may be another's layer name.
  for (auto n : m.graph.parameters)
    if (m.ir.layers[n].name == name) return n;
  for (auto n : m.graph.parameters) {
    const Layer& layer = m.ir.layers[n];
    for (const auto& port : layer.outputs) {
      if (std::find(port.names.begin(), port.names.end(), name) != port.names.end()) return n;
    }
  }
  return std::nullopt;
}

BoundInputs bind_inputs(const Model& m, const InputOptions& options) {
  const auto params = parameters(m);
  auto info = [&](std::size_t layer) -> const ParameterInfo& {
    return *std::find_if(params.begin(), params.end(),
                         [&](const ParameterInfo& p) { return p.layer == layer; });
  };

  std::map<std::size_t, std::vector<std::int64_t>> shapes;
  for (const auto& s : options.shapes) {
    auto [param, value] = split_named(m, s, false);
    if (!param) {
      if (params.size() != 1)
        throw input_error("--shape " + s + ": name the input (NAME=dims); the model has " +
                          std::to_string(params.size()) + " inputs");
      param = params[0].layer;
    }
    const auto& p = info(*param);
    if (shapes.count(*param))
      throw input_error("--shape " + s + ": " + describe_param(p) + " is given twice");
    auto shape = parse_shape_list(value, "--shape for " + describe_param(p));
    if (!fits(p.shape, shape))
      throw input_error("--shape for " + describe_param(p) + ": " + to_string(shape) +
                        " does not fit the input's shape " + to_string(p.shape));
    shapes[*param] = std::move(shape);
  }

  BoundInputs bound;
  for (const auto& arg : options.inputs) {
    // Not a structured binding: clang 14 cannot capture those in the lambdas below.
    const auto named = split_named(m, arg, true);
    auto param = named.first;
    const std::string& path = named.second;
    if (!param) {
      if (params.size() != 1)
        throw input_error("--input " + arg + ": the model has " + std::to_string(params.size()) +
                          " inputs; name it as NAME=FILE");
      param = params[0].layer;
    }
    const auto& p = info(*param);
    if (bound.tensors.count(*param))
      throw input_error("--input " + arg + ": " + describe_param(p) + " is given twice");
    if (path.empty())
      throw input_error("--input " + arg + ": no file named for " + describe_param(p));
    Tensor t;
    const bool npy = is_npy_path(path);
    if (npy) {
      t = read_for(p, [&] { return read_npy(path); });
      if (t.type != p.type) {
        if (is_floating(t.type) && is_floating(p.type)) {
          const bool widens = p.type == ElementType::f64 ||
                              (p.type == ElementType::f32 && t.type != ElementType::f64);
          bound.notes.push_back(path + ": converted " + std::string(to_string(t.type)) + " to " +
                                std::string(to_string(p.type)) +
                                (widens ? " (exact)" : " (round to nearest even)") + " for " +
                                describe_param(p));
          t = converted(path, t, p.type, bound.warnings);
        } else {
          // Only float-to-float conversions are exact up to one rounding; anything touching an
          // integer would silently truncate or wrap, so the caller must convert explicitly.
          throw input_error(path + ": dtype " + std::string(to_string(t.type)) +
                            " does not match " + describe_param(p) + "; " + dtype_hint(p.type));
        }
      }
      if (shapes.count(*param) && shapes[*param] != t.shape)
        throw input_error(path + ": shape " + to_string(t.shape) + " differs from --shape " +
                          to_string(shapes[*param]) + " for " + describe_param(p));
    } else {
      std::vector<std::int64_t> shape;
      if (shapes.count(*param)) {
        shape = shapes[*param];
      } else if (p.shape.is_static()) {
        shape = p.shape.to_static();
      } else {
        throw input_error(path + ": " + describe_param(p) + " has a dynamic shape; give --shape " +
                          p.name + "=d0,d1,... for a raw blob, or use an .npy file");
      }
      // OpenVINO hands a v10 IR's f16 inputs out as f32 (update_v10_model), so a raw blob of
      // f32's size is read as f32 and rounded to f16, as its preprocessing does.
      std::error_code ec;
      const auto count = checked_product(shape);
      const bool v10_f16 = m.ir.ir_version == 10 && p.type == ElementType::f16 && count;
      const auto size = std::filesystem::file_size(path, ec);
      const bool v10_f32 = v10_f16 && !ec && size == *count * 4;
      if (v10_f16 && !ec && size != *count * 2 && !v10_f32)
        throw input_error(path + ": expected " + std::to_string(*count * 2) + " bytes (f16 " +
                          to_string(shape) + ") or " + std::to_string(*count * 4) +
                          " (f32, as OpenVINO takes a v10 IR's f16 inputs), found " +
                          std::to_string(size));
      t = read_for(p, [&] {
        return v10_f32 ? converted(path, read_raw(path, ElementType::f32, shape), ElementType::f16,
                                   bound.warnings)
                       : read_raw(path, p.type, shape);
      });
      if (v10_f32)
        bound.notes.push_back(path +
                              ": read as f32, as OpenVINO takes a v10 IR's f16 inputs, and "
                              "rounded to f16 (to nearest even) for " +
                              describe_param(p));
    }
    if (!fits(p.shape, t.shape))
      throw input_error(path + ": shape " + to_string(t.shape) + " does not fit " +
                        describe_param(p));
    bound.tensors[*param] = std::move(t);
    bound.files[*param] = path;
  }

  for (std::size_t i = 0; i < params.size(); ++i) {
    const auto& p = params[i];
    if (bound.tensors.count(p.layer)) continue;
    if (!options.random_seed)
      throw input_error("no data for " + describe_param(p) + "; give --input " + p.name +
                        "=FILE or --random-input");
    std::vector<std::int64_t> shape;
    if (shapes.count(p.layer)) {
      shape = shapes[p.layer];
    } else if (p.shape.is_static()) {
      shape = p.shape.to_static();
    } else {
      throw input_error(describe_param(p) + " has a dynamic shape; give --shape " + p.name +
                        "=d0,d1,... to generate it");
    }
    // Each input gets its own stream: the seed mixed with the input's position.
    const std::uint64_t seed = *options.random_seed * 0x9E3779B97F4A7C15ULL + i;
    // Named as a file's input is: a tensor too large or of a type with no random values.
    bound.tensors[p.layer] = read_for(p, [&] { return random_tensor(p.type, shape, seed); });
  }
  return bound;
}

}  // namespace irrun
