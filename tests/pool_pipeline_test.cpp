// The whole pooling path on random ops: AvgPool-1/14/16 and MaxPool-1/8/14 attributes written as
// IR <data> text (random case, defaults left out at random) go through the reader, the analysis
// (attribute parsing, validation, auto_pad, output shape, PoolGeometry) and the executor's
// kernels. Error or not, the error's rule, the output shape and every value (and MaxPool index)
// are compared with an oracle written here from docs/openvino-semantics.md alone (sections 2, 3
// and 6): its own validation order, pad derivation, output-size formulas, include-padding rule
// and a naive double loop. The kernel tests build PoolGeometry by hand; this checks the way to it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "irrun/analysis.hpp"
#include "irrun/executor.hpp"
#include "support/f32_ulps.hpp"
#include "support/ir_text.hpp"
#include "support/split_mix.hpp"

namespace {

using irrun::ElementType;
using irrun::Tensor;
using irrun::testing::SplitMix64;
using Ints = std::vector<std::int64_t>;

// One random op as written in the IR. Empty lists and strings are left out of <data>.
struct RandomOp {
  bool avg = true;
  int version = 1;    // the op's version
  std::string opset;  // the layer's version attribute
  Ints in;            // [N, C, spatial...]
  Ints kernel, strides, pads_begin, pads_end, dilations;
  std::string exclude_pad;  // "true", "0", "FALSE"...; empty: the default (true)
  std::string rounding;     // any case; empty: floor
  std::string auto_pad;     // any case; empty: explicit
  std::int64_t axis = 0;
  bool i32_indices = false;
  bool f64 = false;
};

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string list_text(const Ints& v) {
  std::string s;
  for (auto x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}

bool has_dilations(const RandomOp& r) {
  return r.avg ? r.version == 16 : r.version >= 8;
}
bool has_ceil_torch(const RandomOp& r) {
  return r.version >= 14;
}

// --- The oracle ---------------------------------------------------------------------------------

struct Expected {
  std::string error;  // a part of the validation message; empty when the op is valid
  Ints out;           // output shape
  Ints pb, pe;        // pads after auto_pad
  bool pads_in_avg = false;
};

Expected fail(std::string message) {
  return {std::move(message), {}, {}, {}, false};
}

std::string length_error(const std::string& what, std::size_t got) {
  return "Expected " + what + " size to be equal to input size - 2. Got: " + std::to_string(got);
}

// Section 2, "Validation order", "auto_pad" and "Output spatial size"; section 6 for MaxPool
// (no exclude-pad check, ceil_torch from v14, dilations from v8).
Expected infer(const RandomOp& r) {
  const std::size_t n = r.kernel.size();
  Ints pb = r.pads_begin.empty() ? Ints(n, 0) : r.pads_begin;
  Ints pe = r.pads_end.empty() ? Ints(n, 0) : r.pads_end;
  if (pb.size() != n) return fail(length_error("pads_begin", pb.size()));
  if (pe.size() != n) return fail(length_error("pads_end", pe.size()));
  if (r.strides.size() != n) return fail(length_error("strides", r.strides.size()));
  const bool dil = has_dilations(r);
  const Ints d = dil && !r.dilations.empty() ? r.dilations : Ints(n, 1);
  if (d.size() != n)
    return fail("Expected dilations size to be equal to kernel size. Got: " +
                std::to_string(d.size()));
  if (n != r.in.size() - 2) return fail(length_error("kernel", n));
  for (auto s : r.strides)
    if (s == 0) return fail("Strides has zero dimension(s).");
  for (auto v : d)
    if (v == 0) return fail("Kernel dilations has zero dimension(s).");
  const std::string rounding = lower(r.rounding);
  const std::string auto_pad = lower(r.auto_pad);
  if (rounding == "ceil_torch" && !has_ceil_torch(r))
    return fail("Rounding CEIL_TORCH is not supported.");

  const bool exclude =
      r.exclude_pad.empty() || lower(r.exclude_pad) == "true" || r.exclude_pad == "1";
  Expected e;
  e.out = {r.in[0], r.in[1]};
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t D = r.in[i + 2], s = r.strides[i], kd = d[i] * (r.kernel[i] - 1) + 1;
    if (auto_pad == "same_upper" || auto_pad == "same_lower") {
      const std::int64_t P = std::max<std::int64_t>(0, ((D + s - 1) / s - 1) * s + kd - D);
      const std::int64_t small = P / 2, big = P - small;
      pb[i] = auto_pad == "same_upper" ? small : big;
      pe[i] = auto_pad == "same_upper" ? big : small;
    } else if (auto_pad == "valid") {
      pb[i] = pe[i] = 0;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t D = r.in[i + 2], s = r.strides[i], kd = d[i] * (r.kernel[i] - 1) + 1;
    const std::string axis = " at axis " + std::to_string(i) + ".";
    if (kd > D + pb[i] + pe[i])
      return fail("Kernel after dilation has size (dim: " + std::to_string(kd) +
                  ") larger than the data shape after padding (dim: " +
                  std::to_string(D + pb[i] + pe[i]) + ")" + axis);
    if (r.avg && exclude && !(kd > pb[i] && kd > pe[i]))
      return fail("Kernel after dilation is sometimes entirely in the padding area for axis " +
                  std::to_string(i) + " (dilated kernel dimension: " + std::to_string(kd) +
                  ", padding below dimension: " + std::to_string(pb[i]) +
                  ", padding above dimension: " + std::to_string(pe[i]) + ")");
    const std::int64_t span = D + pb[i] + pe[i] - kd;
    std::int64_t out = span / s + 1;
    if (rounding == "ceil") out = (span + s - 1) / s + 1;
    if (rounding == "ceil_torch") {
      const std::int64_t q = (span + s - 1) / s;
      out = q * s <= D + pb[i] - 1 ? q + 1 : q;
    }
    e.out.push_back(out);
  }
  e.pb = pb;
  e.pe = pe;
  bool any_pad = false;
  for (std::size_t i = 0; i < n; ++i) any_pad = any_pad || pb[i] != 0 || pe[i] != 0;
  e.pads_in_avg = r.avg && !exclude && any_pad;
  return e;
}

struct Pooled {
  std::vector<double> values;
  Ints indices;
};

// Section 3 (AvgPool) and section 6 (MaxPool): tap j of output o reads o*s - pb + j*d; a tap off
// the input on any axis is padding. Average: sum of the in-bounds taps over prod(K) when padding
// counts, else over their number, 0 for none. Max: the largest in-bounds tap (inputs are
// distinct) and its position flattened from dimension `axis`; a window without in-bounds taps
// gives the type's lowest value at the plane's first position (irrun's kernel contract,
// kernels/max_pool.hpp: OpenVINO's running maximum starts there).
Pooled naive(const RandomOp& r, const Expected& e, const std::vector<double>& x) {
  const std::size_t n = r.kernel.size();
  const Ints d = has_dilations(r) && !r.dilations.empty() ? r.dilations : Ints(n, 1);
  Ints in_sp(r.in.begin() + 2, r.in.end()), out_sp(e.out.begin() + 2, e.out.end());
  const auto prod = [](const Ints& v) {
    return std::accumulate(v.begin(), v.end(), std::int64_t{1}, std::multiplies<>());
  };
  const std::int64_t in_plane = prod(in_sp), out_plane = prod(out_sp), taps = prod(r.kernel);
  const std::int64_t axis = r.axis < 0 ? r.axis + static_cast<std::int64_t>(r.in.size()) : r.axis;
  std::int64_t range = 1;
  for (std::size_t a = static_cast<std::size_t>(axis); a < r.in.size(); ++a) range *= r.in[a];
  const double lowest = r.f64 ? std::numeric_limits<double>::lowest()
                              : static_cast<double>(std::numeric_limits<float>::lowest());
  Pooled p;
  for (std::int64_t plane = 0; plane < r.in[0] * r.in[1]; ++plane) {
    for (std::int64_t o = 0; o < out_plane; ++o) {
      Ints opos(n);
      for (std::size_t a = n, rest = static_cast<std::size_t>(o); a-- > 0;) {
        opos[a] = static_cast<std::int64_t>(rest % static_cast<std::size_t>(out_sp[a]));
        rest /= static_cast<std::size_t>(out_sp[a]);
      }
      double sum = 0, best = lowest;
      std::int64_t count = 0, best_at = 0;
      for (std::int64_t t = 0; t < taps; ++t) {
        // Tap t's offsets j per axis (last axis fastest) and its input position.
        Ints pos(n);
        bool inside = true;
        for (std::size_t a = n, rest = static_cast<std::size_t>(t); a-- > 0;) {
          const auto j = static_cast<std::int64_t>(rest % static_cast<std::size_t>(r.kernel[a]));
          rest /= static_cast<std::size_t>(r.kernel[a]);
          pos[a] = opos[a] * r.strides[a] - e.pb[a] + j * d[a];
          inside = inside && pos[a] >= 0 && pos[a] < in_sp[a];
        }
        if (!inside) continue;
        std::int64_t flat = 0;
        for (std::size_t a = 0; a < n; ++a) flat = flat * in_sp[a] + pos[a];
        const double v = x[static_cast<std::size_t>(plane * in_plane + flat)];
        sum += v;
        ++count;
        if (v > best) best = v, best_at = flat;
      }
      if (r.avg) {
        const std::int64_t divisor = e.pads_in_avg ? taps : count;
        p.values.push_back(count == 0 ? 0.0 : sum / static_cast<double>(divisor));
      } else {
        p.values.push_back(best);
        p.indices.push_back((plane * in_plane + best_at) % range);
      }
    }
  }
  return p;
}

// --- Random ops ---------------------------------------------------------------------------------

// Random case: "same_UPPER", "Ceil"...
std::string spelling(SplitMix64& rng, std::string s) {
  const auto mode = rng.range(0, 3);
  for (auto& c : s) {
    if (mode == 1 || (mode == 2 && rng.coin()))
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return s;
}

template <class T>
const T& pick(SplitMix64& rng, const std::vector<T>& v) {
  return v[static_cast<std::size_t>(rng.range(0, static_cast<std::int64_t>(v.size()) - 1))];
}

RandomOp random_op(SplitMix64& rng) {
  RandomOp r;
  r.avg = rng.coin();
  if (r.avg) {
    // AvgPool is v1 in opset1..13, v14 in opset14..15, v16 in opset16 (section 1).
    const int opset = static_cast<int>(pick(rng, std::vector<std::int64_t>{1, 7, 13, 14, 15, 16}));
    r.opset = "opset" + std::to_string(opset);
    r.version = opset >= 16 ? 16 : opset >= 14 ? 14 : 1;
  } else {
    r.version = static_cast<int>(pick(rng, std::vector<std::int64_t>{1, 8, 14}));
    r.opset = "opset" + std::to_string(r.version);
  }
  const auto n = static_cast<std::size_t>(rng.range(1, 3));
  const std::int64_t max_in = n == 3 ? 5 : 7;
  r.in = {rng.range(1, 2), rng.range(1, 2)};
  for (std::size_t i = 0; i < n; ++i) r.in.push_back(rng.range(1, max_in));
  const Ints pads{0, 0, 1, 2, 3};
  const Ints dils{1, 1, 2, 3};
  for (std::size_t i = 0; i < n; ++i) {
    r.kernel.push_back(rng.range(1, 4));
    r.strides.push_back(rng.range(1, 4));
    r.pads_begin.push_back(pick(rng, pads));
    r.pads_end.push_back(pick(rng, pads));
    r.dilations.push_back(pick(rng, dils));
  }
  // Defaults left out: empty pads are zeros, no dilations are 1s.
  if (rng.range(0, 5) == 0) r.pads_begin.clear(), r.pads_end.clear();
  if (!has_dilations(r) || rng.range(0, 3) == 0) r.dilations.clear();
  r.exclude_pad =
      pick(rng, std::vector<std::string>{"", "true", "false", "1", "0", "False", "TRUE"});
  if (!r.avg) r.exclude_pad.clear();
  std::vector<std::string> roundings{"", "floor", "ceil"};
  if (has_ceil_torch(r) || rng.range(0, 9) == 0) roundings.push_back("ceil_torch");
  r.rounding = spelling(rng, pick(rng, roundings));
  r.auto_pad = spelling(rng, pick(rng, std::vector<std::string>{"", "explicit", "same_upper",
                                                                "same_lower", "valid"}));
  r.axis = rng.range(-static_cast<std::int64_t>(r.in.size()),
                     static_cast<std::int64_t>(r.in.size()) - 1);
  r.i32_indices = rng.coin();
  r.f64 = rng.coin();

  // One in eight breaks a list rule (the geometry rules break by themselves).
  if (rng.range(0, 7) == 0) {
    switch (rng.range(0, 6)) {
      case 0:
        r.strides.push_back(1);
        break;
      case 1:
        r.pads_begin.assign(n + 1, 0);
        break;
      case 2:
        r.pads_end.assign(n + 1, 1);
        break;
      case 3:
        if (has_dilations(r)) r.dilations.assign(n + 1, 1);
        break;
      case 4:  // a kernel of the wrong length, every other list agreeing with it
        r.kernel.push_back(2), r.strides.push_back(1);
        if (!r.pads_begin.empty()) r.pads_begin.push_back(0), r.pads_end.push_back(0);
        if (!r.dilations.empty()) r.dilations.push_back(1);
        break;
      case 5:
        r.strides[static_cast<std::size_t>(rng.range(0, static_cast<std::int64_t>(n) - 1))] = 0;
        break;
      default:
        if (!r.dilations.empty()) r.dilations.back() = 0;
        break;
    }
  }
  return r;
}

std::string describe(const RandomOp& r) {
  return std::string(r.avg ? "AvgPool" : "MaxPool") + " " + r.opset + " in=[" + list_text(r.in) +
         "] kernel=" + list_text(r.kernel) + " strides=" + list_text(r.strides) +
         " pads_begin=" + list_text(r.pads_begin) + " pads_end=" + list_text(r.pads_end) +
         " dilations=" + list_text(r.dilations) + " exclude-pad=" + r.exclude_pad +
         " rounding_type=" + r.rounding + " auto_pad=" + r.auto_pad +
         " axis=" + std::to_string(r.axis) + (r.f64 ? " f64" : " f32");
}

// Parameter(0) -> pool(1) -> Result(2) [-> Result(3) for MaxPool-8/14's indices]. Output ports
// declare -1 dims, which match any inferred shape.
irrun::Model model_of(const RandomOp& r) {
  using namespace irrun::testing;
  std::string data;
  const auto attr = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    if (!data.empty()) data += ' ';
    data.append(key).append("=\"").append(value).append("\"");
  };
  attr("kernel", list_text(r.kernel));
  attr("strides", list_text(r.strides));
  attr("pads_begin", list_text(r.pads_begin));
  attr("pads_end", list_text(r.pads_end));
  attr("dilations", list_text(r.dilations));
  attr("exclude-pad", r.exclude_pad);
  attr("rounding_type", r.rounding);
  attr("auto_pad", r.auto_pad);
  const bool indices = !r.avg && r.version >= 8;
  if (indices) {
    attr("axis", std::to_string(r.axis));
    attr("index_element_type", r.i32_indices ? "i32" : "i64");
  }
  const std::string precision = r.f64 ? "FP64" : "FP32";
  const std::string index_precision = r.i32_indices ? "I32" : "I64";
  const Ints any(r.in.size(), -1);
  return model_from_xml(net(
      parameter(0, "x", list_text(r.in), r.in, r.f64 ? "f64" : "f32", precision) +
          layer(1, "pool", r.avg ? "AvgPool" : "MaxPool", r.opset, data, port(0, r.in, precision),
                port(1, any, precision) + (indices ? port(2, any, index_precision) : "")) +
          result(2, "values", any, precision) +
          (indices ? result(3, "indices", any, index_precision) : ""),
      edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + (indices ? edge(1, 2, 3, 0) : "")));
}

bool within_one_ulp(double got, double want) {
  return got == want || std::nextafter(want, got) == got;
}

}  // namespace

TEST_CASE("random pooling ops: attributes -> shape inference -> kernel against an oracle",
          "[pool_pipeline]") {
  SplitMix64 rng(0x5EED'0062);
  const irrun::Parallel par(2);
  int valid = 0, invalid = 0;
  for (int iter = 0; iter < 3000; ++iter) {
    const RandomOp r = random_op(rng);
    const Expected e = infer(r);
    INFO("case " << iter << ": " << describe(r));
    const irrun::Model m = model_of(r);
    const irrun::Analysis a = irrun::analyze(m.ir, m.graph, nullptr);

    if (!e.error.empty()) {
      ++invalid;
      INFO("expected error: " << e.error);
      REQUIRE(a.diagnostics.size() == 1);
      CHECK(a.diagnostics[0].severity == irrun::Severity::error);
      CHECK(a.diagnostics[0].rule == "validation");
      CHECK_THAT(a.diagnostics[0].message, Catch::Contains(e.error));
      continue;
    }
    ++valid;
    INFO("expected output [" << list_text(e.out) << "]");
    for (const auto& d : a.diagnostics) FAIL_CHECK("diagnostic: " << d.message);
    REQUIRE(a.diagnostics.empty());
    const auto& pool = a.nodes[1];
    REQUIRE(pool.outputs.size() == (!r.avg && r.version >= 8 ? 2u : 1u));
    for (const auto& o : pool.outputs) CHECK(o.shape == irrun::PartialShape::from_static(e.out));
    REQUIRE(pool.geometry.has_value());
    CHECK(pool.geometry->pads_in_avg == e.pads_in_avg);

    // AvgPool: small integers, so the window sums are exact. MaxPool: distinct values, so the
    // maximum's position is unique.
    const std::size_t count = static_cast<std::size_t>(
        std::accumulate(r.in.begin(), r.in.end(), std::int64_t{1}, std::multiplies<>()));
    std::vector<double> x(count);
    for (std::size_t i = 0; i < count; ++i) x[i] = static_cast<double>(i) - double(count / 2);
    for (std::size_t i = count; i > 1; --i)
      std::swap(x[i - 1],
                x[static_cast<std::size_t>(rng.range(0, static_cast<std::int64_t>(i) - 1))]);
    if (r.avg)
      for (auto& v : x) v = static_cast<double>(rng.range(-9, 9));
    Tensor in = irrun::testing::make_tensor(r.f64 ? ElementType::f64 : ElementType::f32, r.in, x);
    const auto outputs = irrun::run_model(m, {{0, in}}, par);
    const Pooled want = naive(r, e, x);

    // Outputs by Result layer: values reach layer 2, MaxPool-8/14's indices layer 3.
    const auto output_of = [&](std::size_t result_layer) -> const Tensor& {
      for (const auto& o : outputs)
        if (o.result_layer == result_layer) return o.tensor;
      FAIL("no output from Result layer " << result_layer);
      return outputs[0].tensor;
    };
    const Tensor& values = output_of(2);
    REQUIRE(values.shape == e.out);
    const auto got = irrun::testing::values_of(values);
    REQUIRE(got.size() == want.values.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("output " << i << ": " << got[i] << ", expected " << want.values[i]);
      if (r.f64)
        CHECK(within_one_ulp(got[i], want.values[i]));
      else
        CHECK(irrun::testing::within_one_f32_ulp(static_cast<float>(got[i]),
                                                 static_cast<float>(want.values[i])));
    }
    if (r.avg || r.version == 1) {
      CHECK(outputs.size() == 1);
      continue;
    }
    REQUIRE(outputs.size() == 2);
    const Tensor& indices = output_of(3);
    CHECK(indices.type == (r.i32_indices ? ElementType::i32 : ElementType::i64));
    REQUIRE(indices.shape == e.out);
    const auto got_indices = irrun::testing::values_of(indices);
    REQUIRE(got_indices.size() == want.indices.size());
    for (std::size_t i = 0; i < got_indices.size(); ++i) {
      INFO("index " << i);
      CHECK(got_indices[i] == static_cast<double>(want.indices[i]));
    }
  }
  // The draw must keep both kinds common (it does: about two valid ops to one invalid).
  CHECK(valid > 1000);
  CHECK(invalid > 300);
}
