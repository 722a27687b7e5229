#include "irrun/pre_process.hpp"

#include <cstring>
#include <map>
#include <set>
#include <utility>

#include "irrun/blob.hpp"
#include "irrun/error.hpp"
#include "irrun/float16.hpp"

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

bool executed(ElementType type) {
  return type == ElementType::f32 || type == ElementType::f64 || type == ElementType::f16 ||
         type == ElementType::bf16;
}

void store_value(Tensor& t, std::size_t i, float v) {
  switch (t.type) {
    case ElementType::f32:
      t.mutable_data<float>()[i] = v;
      break;
    case ElementType::f64:
      t.mutable_data<double>()[i] = v;
      break;
    case ElementType::f16:
      t.mutable_data<std::uint16_t>()[i] = f16_bits_from_double(v);
      break;
    default:
      t.mutable_data<std::uint16_t>()[i] = bf16_bits_from_double(v);
  }
}

[[noreturn]] void not_executed(ElementType type) {
  throw unsupported_error("mean values on a " + std::string(to_string(type)) +
                          " input are not executed (only f16, bf16, f32 and f64)");
}

}  // namespace

std::optional<MeanValues> mean_values(const Model& m) {
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
  std::uint64_t plane = 1;
  for (auto d : spatial) plane *= static_cast<std::uint64_t>(d);
  const std::uint64_t item = (bit_width(attrs.type) + 7) / 8;
  std::vector<std::int64_t> plane_shape{1};  // each channel's plane: [1] for NC, else [1,spatial..]
  if (dims.size() > 2) plane_shape.insert(plane_shape.end(), spatial.begin(), spatial.end());

  // OpenVINO collects them in sets: a repeated (channel, value) counts once.
  std::set<std::pair<std::uint64_t, float>> values;
  std::set<std::pair<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>>> planes;
  std::map<std::uint64_t, std::size_t> line_of;
  for (const auto& mean : pre.means) {
    line_of.emplace(mean.channel, mean.line);
    if (mean.value) values.insert({mean.channel, *mean.value});
    if (mean.size && mean.offset) {
      if (*mean.size != plane * item)
        fail(m, mean.line,
             "mean blob size mismatch expected input, got: " + std::to_string(*mean.size) +
                 " expecting " + to_string(plane_shape) + " x " + std::to_string(item));
      if (!m.weights)
        fail(m, mean.line, "mean values in the .bin, but there is no " + m.weights_path);
      if (*mean.offset > m.weights->size() || *mean.size > m.weights->size() - *mean.offset)
        fail(m, mean.line, "mean value offset and size are out of weights size range");
      planes.insert({mean.channel, {*mean.size, *mean.offset}});
    }
  }
  if (!values.empty() && !planes.empty()) fail(m, pre.line, "mean values have different types");
  if (values.empty() && planes.empty()) return std::nullopt;
  const std::size_t count = values.empty() ? planes.size() : values.size();
  if (count != channels)
    fail(m, pre.line,
         "Number of mean values (" + std::to_string(count) +
             ") is not equal to number of channels (" + std::to_string(channels) + ")");

  std::vector<std::int64_t> shape{static_cast<std::int64_t>(channels)};
  if (planes.empty()) {
    shape.resize(1 + spatial.size(), 1);
  } else {
    shape.insert(shape.end(), spatial.begin(), spatial.end());
  }
  // Checked whatever the type, computed (and run) for the floating-point ones only.
  MeanValues out{param, Tensor{attrs.type, shape, {}}};
  if (executed(attrs.type)) out.mean = Tensor::zeros(attrs.type, shape);
  // Channels OpenVINO never sets (a channel given twice hides one) keep 0; of two values given
  // for one channel, the greater wins, as in OpenVINO's ordered set.
  const auto check_channel = [&](std::uint64_t c) {
    if (c >= channels)
      fail(m, line_of.at(c),
           "Mean values channel index " + std::to_string(c) + " is out of range (" +
               std::to_string(channels) + ")");
  };
  for (const auto& [c, v] : values) {
    check_channel(c);
    if (executed(attrs.type)) store_value(out.mean, static_cast<std::size_t>(c), v);
  }
  for (const auto& [c, at] : planes) {
    check_channel(c);
    if (executed(attrs.type))
      std::memcpy(out.mean.buffer.mutable_data() + c * at.first, m.weights->data() + at.second,
                  static_cast<std::size_t>(at.first));
  }
  return out;
}

void check_mean_input(const Tensor& x, const Tensor& mean) {
  if (!executed(x.type)) not_executed(x.type);
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
