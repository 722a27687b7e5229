#include "irrun/pre_process.hpp"

#include <cctype>
#include <charconv>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "irrun/blob.hpp"
#include "irrun/checked.hpp"
#include "irrun/error.hpp"
#include "irrun/float16.hpp"
#include "irrun/ir_reader.hpp"

namespace irrun {
namespace {

[[noreturn]] void fail(const Model& m, std::size_t line, const std::string& what) {
  throw ModelError(m.ir.path, line, "<pre-process>: " + what);
}

// The Parameter the block names by its friendly (layer) name; without a name, the first
// Parameter of static rank 4, else the first Parameter (in XML order, the model's input order).
std::size_t target(const Model& m, const PreProcess& pre) {
  const auto& params = m.graph.parameters;
  if (pre.reference.empty()) {
    if (params.empty()) fail(m, pre.line, "the model has no input");
    for (auto n : params) {
      const auto shape = declared_parameter(m, n).shape;
      if (shape.rank_is_static() && shape.rank() == 4) return n;
    }
    return params.front();
  }
  for (auto n : params)
    if (m.ir.layers[n].name == pre.reference) return n;
  fail(m, pre.line, "pre-process name ref '" + pre.reference + "' refers to un-existing input");
}

[[noreturn]] void not_executed(ElementType type) {
  throw unsupported_error("mean values on an input of type " + std::string(to_string(type)) +
                          " are not executed (only f16, bf16, f32 and f64)");
}

// get_float_attr: `stream >> float` that must reach the end of the text (its failure is not
// checked): leading blanks, then what libstdc++ takes for a number ([sign] digits [. digits]
// [e [sign] digits]); a text it cannot convert ("1e", "-") is 0, an overflow the largest float,
// an underflow what strtof gives. Empty text has no defined value in OpenVINO: refused.
std::optional<float> float_attr(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  const std::size_t start = i;
  const auto digits = [&] {
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  };
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  digits();
  if (i < text.size() && text[i] == '.') ++i, digits();
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
    digits();
  }
  if (i != text.size() || start == text.size()) return std::nullopt;
  auto number = text.substr(start);
  const bool negative = number[0] == '-';
  if (number[0] == '+' || number[0] == '-') number.remove_prefix(1);
  float v = 0;
  const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (ec == std::errc::result_out_of_range) {
    // Overflow or underflow: the exponent's sign tells which.
    const auto e = number.find_first_of("eE");
    const bool tiny = e != std::string_view::npos && e + 1 < number.size() && number[e + 1] == '-';
    v = tiny ? 0.0f : std::numeric_limits<float>::max();
  } else if (ec != std::errc() || ptr != number.data() + number.size()) {
    v = 0;
  }
  return negative ? -v : v;
}

}  // namespace

std::optional<MeanValues> mean_values(const Model& m, bool build) {
  if (!m.ir.pre_process) return std::nullopt;
  const PreProcess& pre = *m.ir.pre_process;
  const std::size_t param = target(m, pre);
  const auto attrs = declared_parameter(m, param);
  const std::string name = m.ir.layers[param].name;
  if (!attrs.shape.is_static())
    fail(m, pre.line, "can not apply pre-process for '" + name + "' input");
  const auto dims = attrs.shape.to_static();
  if (dims.size() < 2) fail(m, pre.line, "network did not define input dimensions properly");
  if (dims.size() > 5)
    fail(m, pre.line,
         "a rank-" + std::to_string(dims.size()) +
             " input: OpenVINO applies mean values to ranks 2 to 5 only");

  // Per channel: one value ([C,1,..]) or a plane of the input's type ([1,spatial..] each).
  const std::size_t c_axis = dims.size() == 3 ? 0 : 1;
  const std::vector<std::int64_t> spatial(dims.begin() + static_cast<std::ptrdiff_t>(c_axis) + 1,
                                          dims.end());
  const auto channels = static_cast<std::uint64_t>(dims[c_axis]);
  const std::uint64_t item = (bit_width(attrs.type) + 7) / 8;
  std::vector<std::int64_t> plane_shape{1};  // each channel's plane: [1] for NC, else [1,spatial..]
  if (dims.size() > 2) plane_shape.insert(plane_shape.end(), spatial.begin(), spatial.end());
  const auto plane_elements = checked_product(plane_shape);  // none: beyond 64 bits
  const auto plane_bytes = plane_elements ? checked_mul(*plane_elements, item) : std::nullopt;

  // OpenVINO collects them in sets: a repeated (channel, value) counts once.
  std::set<std::pair<std::uint64_t, float>> values;
  std::set<std::pair<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>>> planes;
  std::map<std::uint64_t, std::size_t> line_of;
  std::uint64_t next = 0;
  for (const auto& c : pre.channels) {
    // get_uint64_attr(chan, "id", next_channel_id++): the counter moves on every <channel>.
    const std::uint64_t fallback = next++;
    const auto id = c.id ? uint64_attr(*c.id) : fallback;
    if (!id) fail(m, c.line, "<channel id=\"" + *c.id + "\"> is not an unsigned 64 bit integer");
    if (!c.has_mean) continue;
    line_of.emplace(*id, c.line);
    if (!c.value && !c.size)
      fail(m, c.line, "mean should have at least one of the following attribute: value, size");
    if (c.value) {
      const auto v = float_attr(*c.value);
      if (!v) fail(m, c.line, "<mean value=\"" + *c.value + "\"> is not a floating point");
      values.insert({*id, *v});
    }
    if (c.size && c.offset) {
      const auto size = uint64_attr(*c.size), offset = uint64_attr(*c.offset);
      if (!size || !offset)
        fail(m, c.line,
             "<mean offset=\"" + *c.offset + "\" size=\"" + *c.size +
                 "\">: not unsigned 64 bit integers");
      if (!plane_bytes || *size != *plane_bytes)
        fail(m, c.line,
             "mean blob size mismatch expected input, got: " + std::to_string(*size) +
                 " expecting " + to_string(plane_shape) + " x " + std::to_string(item));
      if (!m.weights) fail(m, c.line, "mean values in the .bin, but there is no " + m.weights_path);
      if (*offset > m.weights->size() || *size > m.weights->size() - *offset)
        fail(m, c.line, "mean value offset and size are out of weights size range");
      planes.insert({*id, {*size, *offset}});
    }
  }
  if (!values.empty() && !planes.empty()) fail(m, pre.line, "mean values have different types");
  if (values.empty() && planes.empty()) return std::nullopt;
  const std::size_t count = values.empty() ? planes.size() : values.size();
  if (count != channels)
    fail(m, pre.line,
         "Number of mean values (" + std::to_string(count) +
             ") is not equal to number of channels (" + std::to_string(channels) + ")");
  std::vector<bool> set(static_cast<std::size_t>(channels), false);
  const auto check_channel = [&](std::uint64_t c) {
    if (c >= channels)
      fail(m, line_of.at(c),
           "Mean values channel index " + std::to_string(c) + " is out of range (" +
               std::to_string(channels) + ")");
    set[static_cast<std::size_t>(c)] = true;
  };
  for (const auto& v : values) check_channel(v.first);
  for (const auto& p : planes) check_channel(p.first);
  // A value left unset stays 0; a plane left unset is a null input of OpenVINO's Concat, which
  // crashes read_model.
  if (!planes.empty())
    for (std::size_t c = 0; c < set.size(); ++c)
      if (!set[c])
        fail(m, pre.line,
             "channel " + std::to_string(c) +
                 " has no plane (another channel has two; OpenVINO's read_model crashes)");
  if (attrs.type == ElementType::boolean)
    fail(m, pre.line,
         "Arguments cannot have boolean element type (argument element type: boolean).");

  std::vector<std::int64_t> shape{static_cast<std::int64_t>(channels)};
  if (planes.empty()) {
    shape.resize(1 + spatial.size(), 1);
  } else {
    shape.insert(shape.end(), spatial.begin(), spatial.end());
  }
  // Checked whatever the type; built (and run) for the floating-point ones only.
  MeanValues out{param, Tensor{attrs.type, shape, {}}};
  if (!build || !is_convertible_float(attrs.type)) return out;
  out.mean = Tensor::zeros(attrs.type, shape);
  // Of two values given for one channel, the greater wins, as in OpenVINO's ordered set.
  for (const auto& [c, v] : values)
    store_float(attrs.type, out.mean.buffer.mutable_data(), static_cast<std::size_t>(c), v);
  for (const auto& [c, at] : planes)
    if (at.first)
      std::memcpy(out.mean.buffer.mutable_data() + c * at.first, m.weights->data() + at.second,
                  static_cast<std::size_t>(at.first));
  return out;
}

void check_mean_input(const Tensor& x, const Tensor& mean) {
  if (!is_convertible_float(x.type)) not_executed(x.type);
  if (x.type != mean.type)
    throw input_error("the input is " + std::string(to_string(x.type)) + ", its mean values " +
                      std::string(to_string(mean.type)));
  // Right-aligned broadcast: each of the mean's dims is 1 or x's.
  const auto fits = [&] {
    if (mean.shape.size() > x.shape.size()) return false;
    const std::size_t skip = x.shape.size() - mean.shape.size();
    for (std::size_t i = 0; i < mean.shape.size(); ++i)
      if (mean.shape[i] != 1 && mean.shape[i] != x.shape[skip + i]) return false;
    return true;
  };
  if (!fits())
    throw input_error("an input of shape " + to_string(x.shape) +
                      " does not broadcast with the <pre-process> mean values " +
                      to_string(mean.shape));
}

Tensor subtract_mean(const Tensor& x, const Tensor& mean) {
  check_mean_input(x, mean);
  const std::size_t rank = x.shape.size();
  std::vector<std::int64_t> mean_dims(rank - mean.shape.size(), 1);
  mean_dims.insert(mean_dims.end(), mean.shape.begin(), mean.shape.end());
  // The mean's element for each of x's: an odometer over x's index, moving the mean's offset
  // only along the axes where the mean is not broadcast.
  std::vector<std::size_t> mean_stride(rank, 0);
  for (std::size_t i = rank, s = 1; i-- > 0;) {
    if (mean_dims[i] != 1) mean_stride[i] = s;
    s *= static_cast<std::size_t>(mean_dims[i]);
  }
  Tensor out = Tensor::zeros(x.type, x.shape);
  const std::size_t n = x.element_count();
  std::vector<std::int64_t> index(rank, 0);
  std::size_t at = 0;
  const auto sub = [&](auto op) {
    for (std::size_t i = 0; i < n; ++i) {
      op(i, at);
      for (std::size_t k = rank; k-- > 0;) {
        at += mean_stride[k];
        if (++index[k] < x.shape[k]) break;
        at -= mean_stride[k] * static_cast<std::size_t>(x.shape[k]);
        index[k] = 0;
      }
    }
  };
  switch (x.type) {
    case ElementType::f32:
      sub([&](std::size_t i, std::size_t j) {
        out.mutable_data<float>()[i] = x.data<float>()[i] - mean.data<float>()[j];
      });
      break;
    case ElementType::f64:
      sub([&](std::size_t i, std::size_t j) {
        out.mutable_data<double>()[i] = x.data<double>()[i] - mean.data<double>()[j];
      });
      break;
    case ElementType::f16:
    case ElementType::bf16: {
      // ov::float16/bfloat16 subtract in float and round the difference once.
      const bool half = x.type == ElementType::f16;
      const auto to_float = [half](std::uint16_t b) {
        return static_cast<float>(half ? f16_bits_to_double(b) : bf16_bits_to_double(b));
      };
      sub([&](std::size_t i, std::size_t j) {
        const float d =
            to_float(x.data<std::uint16_t>()[i]) - to_float(mean.data<std::uint16_t>()[j]);
        out.mutable_data<std::uint16_t>()[i] =
            half ? f16_bits_from_double(d) : bf16_bits_from_double(d);
      });
      break;
    }
    default:
      not_executed(x.type);
  }
  return out;
}

}  // namespace irrun
