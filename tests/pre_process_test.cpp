// The legacy <pre-process> block (docs/openvino-semantics.md section 1): OpenVINO's IR frontend
// subtracts per-channel mean values (or planes of the .bin) from one input, before any consumer.
#include "irrun/pre_process.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <limits>

#include "irrun/check.hpp"
#include "irrun/error.hpp"
#include "irrun/executor.hpp"
#include "support/ir_text.hpp"

using namespace irrun;
using namespace irrun::testing;

namespace {

// `pre` (the <pre-process> element) in a model: Parameter `in` of `shape` and `type` -> Result,
// plus a second Parameter `aux` [1,2,2,2] when `second` (the fallback's rank-4 candidate).
std::string pre_model(const std::string& pre, const std::vector<std::int64_t>& shape,
                      const std::string& type = "f32", bool second = false) {
  std::string dims;
  for (auto d : shape) {
    if (!dims.empty()) dims += ',';
    dims += std::to_string(d);
  }
  const std::string precision = type == "f16" ? "FP16" : type == "i32" ? "I32" : "FP32";
  std::string layers =
      parameter(0, "in", dims, shape, type, precision) + result(1, "out", shape, precision);
  std::string edges = edge(0, 0, 1, 0);
  if (second) {
    layers += parameter(2, "aux", "1,2,2,2", {1, 2, 2, 2}) + result(3, "aux_out", {1, 2, 2, 2});
    edges += edge(2, 0, 3, 0);
  }
  auto xml = net(layers, edges);
  xml.insert(xml.find("<layers>"), pre + "\n");
  return xml;
}

std::string means(const std::string& reference, const std::vector<std::string>& channels) {
  std::string s = "<pre-process mean-precision=\"FP32\"";
  if (!reference.empty()) s += " reference-layer-name=\"" + reference + "\"";
  s += ">";
  for (const auto& c : channels) s += "<channel" + c + "</channel>";
  return s + "</pre-process>";
}

Buffer f32_weights(const std::vector<float>& values) {
  Buffer b = Buffer::allocate(values.size() * sizeof(float));
  if (!values.empty()) std::memcpy(b.mutable_data(), values.data(), b.size());
  return b;
}

std::vector<float> floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.element_count());
}

}  // namespace

TEST_CASE("pre-process: the mean Constant OpenVINO makes", "[pre_process]") {
  struct Case {
    const char* name;
    std::string pre;
    std::vector<std::int64_t> shape;
    bool second;
    std::size_t parameter;
    std::vector<std::int64_t> mean_shape;
    std::vector<float> mean;
  };
  const std::vector<Case> cases = {
      {"NCHW values",
       means("in", {" id=\"0\"><mean value=\"1.5\"/>", " id=\"1\"><mean value=\"-2\"/>"}),
       {1, 2, 3, 3},
       false,
       0,
       {2, 1, 1},
       {1.5f, -2.0f}},
      {"ids default to one more than the channel before",
       means("in", {"><mean value=\"1\"/>", "><mean value=\"2\"/>"}),
       {1, 2, 3, 3},
       false,
       0,
       {2, 1, 1},
       {1, 2}},
      {"channels in any order",
       means("in", {" id=\"1\"><mean value=\"7\"/>", " id=\"0\"><mean value=\"5\"/>"}),
       {3, 2},
       false,
       0,
       {2},
       {5, 7}},
      {"CHW: the channel is the first axis",
       means("in", {"><mean value=\"3\"/>", "><mean value=\"4\"/>"}),
       {2, 3, 3},
       false,
       0,
       {2, 1, 1},
       {3, 4}},
      {"NCDHW",
       means("in", {"><mean value=\"0.25\"/>"}),
       {1, 1, 2, 2, 2},
       false,
       0,
       {1, 1, 1, 1},
       {0.25f}},
      {"no name: the first rank-4 input",
       means("", {"><mean value=\"1\"/>", "><mean value=\"2\"/>"}),
       {2, 2},
       true,
       2,
       {2, 1, 1},
       {1, 2}},
      {"no name, no rank-4 input: the first input",
       means("", {"><mean value=\"9\"/>", "><mean value=\"8\"/>"}),
       {3, 2},
       false,
       0,
       {2},
       {9, 8}},
      {"a value given twice counts once",
       means("in", {" id=\"0\"><mean value=\"1\"/>", " id=\"0\"><mean value=\"1\"/>",
                    " id=\"1\"><mean value=\"2\"/>"}),
       {1, 2, 2, 2},
       false,
       0,
       {2, 1, 1},
       {1, 2}},
      {"two values for one channel: the greater wins, the channel left out is 0",
       means("in", {" id=\"0\"><mean value=\"3\"/>", " id=\"0\"><mean value=\"1\"/>"}),
       {1, 2, 2, 2},
       false,
       0,
       {2, 1, 1},
       {3, 0}},
      {"a channel without <mean> is skipped",
       means("in", {" id=\"5\">", " id=\"0\"><mean value=\"6\"/>"}),
       {1, 1, 2, 2},
       false,
       0,
       {1, 1, 1},
       {6}},
      {"ids as std::stoll reads them",
       means("in", {" id=\" +1\"><mean value=\"1\"/>", " id=\"-0\"><mean value=\"2\"/>"}),
       {1, 2, 1, 1},
       false,
       0,
       {2, 1, 1},
       {2, 1}},
      {"values as get_float_attr reads them (its >> failing quietly)",
       means("in", {"><mean value=\" 1\"/>", "><mean value=\"1e40\"/>", "><mean value=\"-1e-50\"/>",
                    "><mean value=\"1e\"/>", "><mean value=\"-\"/>"}),
       {1, 5, 1, 1},
       false,
       0,
       {5, 1, 1},
       {1, std::numeric_limits<float>::max(), -0.0f, 0, 0}},
      {"values as `>>` reads them",
       means("in", {"><mean value=\"+1e-1\"/>", "><mean value=\"-.5\"/>"}),
       {1, 2, 1, 1},
       false,
       0,
       {2, 1, 1},
       {0.1f, -0.5f}},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto m = model_from_xml(pre_model(c.pre, c.shape, "f32", c.second));
    const auto mv = mean_values(m);
    REQUIRE(mv.has_value());
    CHECK(mv->parameter == c.parameter);
    CHECK(mv->mean.shape == c.mean_shape);
    CHECK(floats(mv->mean) == c.mean);
    CHECK(check_model(m, true).empty());
  }
}

TEST_CASE("pre-process: planes of the .bin", "[pre_process]") {
  // [1,2,2,2]: channel 1's plane at byte 0, channel 0's at byte 16 (the order of the file).
  const auto weights = f32_weights({10, 11, 12, 13, 0, 1, 2, 3});
  const auto pre = means("in", {" id=\"1\"><mean offset=\"0\" size=\"16\"/>",
                                " id=\"0\"><mean offset=\"16\" size=\"16\"/>"});
  const auto m = model_from_xml(pre_model(pre, {1, 2, 2, 2}), weights);
  const auto mv = mean_values(m);
  REQUIRE(mv.has_value());
  CHECK(mv->mean.shape == std::vector<std::int64_t>{2, 2, 2});
  CHECK(floats(mv->mean) == std::vector<float>{0, 1, 2, 3, 10, 11, 12, 13});
  // An NC input: one element per channel.
  const auto nc = model_from_xml(pre_model(means("in", {"><mean offset=\"4\" size=\"4\"/>",
                                                        "><mean offset=\"0\" size=\"4\"/>"}),
                                           {3, 2}),
                                 weights);
  CHECK(floats(mean_values(nc)->mean) == std::vector<float>{11, 10});
  // No block, or a block without means: nothing to subtract.
  CHECK_FALSE(mean_values(model_from_xml(pre_model("", {1, 2, 2, 2}))).has_value());
  CHECK_FALSE(mean_values(model_from_xml(pre_model(means("in", {">"}), {1, 1, 2, 2}))).has_value());
}

TEST_CASE("pre-process: where OpenVINO's read_model fails", "[pre_process]") {
  struct Case {
    const char* name;
    std::string pre;
    std::vector<std::int64_t> shape;
    std::string message;
  };
  const auto blob = [](const std::string& offset, const std::string& size) {
    std::string s = "><mean offset=\"";
    s += offset;
    s += "\" size=\"";
    s += size;
    return s + "\"/>";
  };

  const std::vector<Case> cases = {
      {"unknown input",
       means("nope", {"><mean value=\"1\"/>"}),
       {1, 1, 2, 2},
       "pre-process name ref 'nope' refers to un-existing input"},
      {"dynamic input",
       means("in", {"><mean value=\"1\"/>"}),
       {1, 1, -1, 2},
       "can not apply pre-process for 'in' input"},
      {"rank 1",
       means("in", {"><mean value=\"1\"/>"}),
       {4},
       "network did not define input dimensions properly"},
      {"rank 6",
       means("in", {"><mean value=\"1\"/>"}),
       {1, 1, 1, 1, 1, 1},
       "a rank-6 input: OpenVINO applies mean values to ranks 2 to 5 only"},
      {"too few values",
       means("in", {"><mean value=\"1\"/>"}),
       {1, 2, 2, 2},
       "Number of mean values (1) is not equal to number of channels (2)"},
      {"too many values",
       means("in", {"><mean value=\"1\"/>", "><mean value=\"2\"/>"}),
       {1, 1, 2, 2},
       "Number of mean values (2) is not equal to number of channels (1)"},
      {"channel out of range",
       means("in", {">", "><mean value=\"6\"/>"}),
       {1, 1, 2, 2},
       "Mean values channel index 1 is out of range (1)"},
      {"values and planes",
       means("in", {"><mean value=\"1\"/>", blob("0", "16")}),
       {1, 2, 2, 2},
       "mean values have different types"},
      {"plane of the wrong size",
       means("in", {blob("0", "12"), blob("16", "16")}),
       {1, 2, 2, 2},
       "mean blob size mismatch expected input, got: 12 expecting [1,2,2] x 4"},
      {"a plane left unset (another channel has two)",
       means("in", {" id=\"0\"" + blob("0", "16"), " id=\"0\"" + blob("16", "16")}),
       {1, 2, 2, 2},
       "channel 1 has no plane (another channel has two; OpenVINO's read_model crashes)"},
      {"plane beyond the .bin",
       means("in", {blob("0", "16"), blob("24", "16")}),
       {1, 2, 2, 2},
       "mean value offset and size are out of weights size range"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.name);
    const auto m = model_from_xml(pre_model(c.pre, c.shape), f32_weights(std::vector<float>(8)));
    try {
      mean_values(m);
      FAIL("accepted");
    } catch (const ModelError& e) {
      CHECK_THAT(e.detail(), Catch::Contains("<pre-process>: " + c.message));
      CHECK(e.line() > 0);
    }
    // check reports it as its own error and goes on.
    const auto found = check_model(m, false);
    REQUIRE(std::count_if(found.begin(), found.end(),
                          [](const auto& d) { return d.rule == "pre-process"; }) == 1);
  }
  // What get_uint64_attr and get_float_attr refuse: also `check` diagnostics.
  for (const auto& [pre, message] : std::vector<std::pair<std::string, std::string>>{
           {means("in", {"><mean/>"}),
            "mean should have at least one of the following attribute: value, size"},
           {means("in", {"><mean value=\"1,5\"/>"}),
            "<mean value=\"1,5\"> is not a floating point"},
           {means("in", {"><mean value=\"inf\"/>"}), "is not a floating point"},
           {means("in", {"><mean value=\"1 \"/>"}), "is not a floating point"},
           {means("in", {"><mean value=\"\"/>"}), "is not a floating point"},
           {means("in", {" id=\"x\"><mean value=\"1\"/>"}),
            "<channel id=\"x\"> is not an unsigned 64 bit integer"},
           {means("in", {" id=\"1 \"><mean value=\"1\"/>"}), "is not an unsigned 64 bit integer"},
           {means("in", {" id=\"-1\"><mean value=\"1\"/>"}), "is not an unsigned 64 bit integer"},
           // stoll takes one sign, then digits.
           {means("in", {" id=\"+-0\"><mean value=\"1\"/>"}), "is not an unsigned 64 bit integer"},
           {means("in", {" id=\"--0\"><mean value=\"1\"/>"}), "is not an unsigned 64 bit integer"},
           {means("in", {" id=\"9223372036854775808\"><mean value=\"1\"/>"}),
            "is not an unsigned 64 bit integer"},
           {means("in", {"><mean offset=\"+x\" size=\"16\"/>"}), "not unsigned 64 bit integers"},
       }) {
    CAPTURE(pre);
    const auto m = model_from_xml(pre_model(pre, {1, 1, 2, 2}));
    CHECK_THROWS_WITH(mean_values(m), Catch::Contains(message));
    const auto found = check_model(m, false);
    CHECK(std::count_if(found.begin(), found.end(),
                        [](const auto& d) { return d.rule == "pre-process"; }) == 1);
  }
  // A boolean input: OpenVINO's Subtract refuses it.
  const auto boolean =
      model_from_xml(pre_model(means("in", {"><mean value=\"1\"/>"}), {1, 1, 2, 2}, "boolean"));
  CHECK_THROWS_WITH(mean_values(boolean),
                    Catch::Contains("Arguments cannot have boolean element "
                                    "type (argument element type: boolean)."));
  // A plane whose byte size does not fit 64 bits (OpenVINO's size_t product wraps to 0): an
  // error, and `check` allocates nothing for it.
  const auto huge = model_from_xml(
      pre_model(means("in", {blob("0", "0"), blob("0", "0")}), {1, 2, 4294967296, 4294967296}),
      f32_weights({}));
  CHECK_THROWS_WITH(mean_values(huge, false),
                    Catch::Contains("mean blob size mismatch expected input, got: 0"));
  const auto found = check_model(huge, false);
  CHECK(std::count_if(found.begin(), found.end(),
                      [](const auto& d) { return d.rule == "pre-process"; }) == 1);
  // No .bin for a plane: an error (OpenVINO has no defined behaviour).
  const auto no_bin = model_from_xml(pre_model(means("in", {blob("0", "16")}), {1, 1, 2, 2}));
  CHECK_THROWS_WITH(mean_values(no_bin),
                    Catch::Contains("mean values in the .bin, but there is no"));
}

TEST_CASE("pre-process: every consumer of the input sees x - mean", "[pre_process]") {
  // in [1,2,2,2] -> AvgPool 2x2 -> out, and in -> Result directly.
  const std::string k2 = "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\"";
  auto xml = net(parameter(0, "in", "1,2,2,2", {1, 2, 2, 2}) +
                     avg_pool(1, "pool", "opset1", k2, {1, 2, 2, 2}, {1, 2, 1, 1}) +
                     result(2, "pooled", {1, 2, 1, 1}) + result(3, "raw", {1, 2, 2, 2}),
                 edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(0, 0, 3, 0));
  xml.insert(xml.find("<layers>"),
             means("in", {"><mean value=\"100\"/>", "><mean value=\"0.5\"/>"}));
  const auto m = model_from_xml(xml);
  const Parallel par(2);
  const auto x = make_tensor(ElementType::f32, {1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  const auto out = run_model(m, {{0, x}}, par);
  REQUIRE(out.size() == 2);
  for (const auto& o : out) {
    CAPTURE(o.name);
    CHECK(values_of(o.tensor) ==
          (o.name == "pooled" ? std::vector<double>{-97.5, 6}
                              : std::vector<double>{-99, -98, -97, -96, 4.5, 5.5, 6.5, 7.5}));
  }
  // The caller's input is left as it was.
  CHECK(values_of(x) == std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8});
  // A shape the mean does not broadcast with (3 channels) is the input's fault.
  try {
    run_model(m, {{0, make_tensor(ElementType::f32, {1, 3, 2, 2}, std::vector<double>(12, 1))}},
              par);
    FAIL("accepted");
  } catch (const Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    CHECK_THAT(e.what(),
               Catch::Contains("does not broadcast with the <pre-process> mean values [2,1,1]"));
  }
}

TEST_CASE("subtract_mean computes as OpenVINO's Subtract does", "[pre_process]") {
  SECTION("f32 and f64: one rounding of the exact difference") {
    for (auto type : {ElementType::f32, ElementType::f64}) {
      const auto x = make_tensor(type, {2, 2}, {0.1, 1e20, 3, -4});
      const auto mean = make_tensor(type, {2}, {0.3, 1});
      const auto d = values_of(subtract_mean(x, mean));
      // The mean [2] runs along the last axis.
      if (type == ElementType::f32) {
        CHECK(d[0] == static_cast<double>(0.1f - 0.3f));
        CHECK(d[1] == static_cast<double>(1e20f - 1.0f));
        CHECK(d[2] == static_cast<double>(3.0f - 0.3f));
      } else {
        CHECK(d[0] == 0.1 - 0.3);
        CHECK(d[1] == 1e20 - 1.0);
        CHECK(d[2] == 3.0 - 0.3);
      }
      CHECK(d[3] == -5);
    }
  }
  SECTION("f16 and bf16: the difference in f32, rounded once to the type") {
    // f16: 2049 is not an f16; 2048 - (-1) = 2049 in f32, rounded to even: 2048.
    // 0.1 - 0.3 in f16 values: the f32 difference of the two f16 values, rounded to f16.
    const auto x = make_tensor(ElementType::f16, {1, 2}, {2048, 0.1});
    const auto mean = make_tensor(ElementType::f16, {1, 2}, {-1, 0.3});
    const auto got = bits16_of(subtract_mean(x, mean));
    const float a = static_cast<float>(f16_bits_to_double(bits16_of(x)[1]));
    const float b = static_cast<float>(f16_bits_to_double(bits16_of(mean)[1]));
    CHECK(got[0] == f16_bits_from_double(2048));
    CHECK(got[1] == f16_bits_from_double(a - b));
    const auto xb = make_tensor(ElementType::bf16, {2}, {256, 1});
    const auto mb = make_tensor(ElementType::bf16, {2}, {-1, 1});
    CHECK(values_of(subtract_mean(xb, mb)) == std::vector<double>{256, 0});  // 257 rounds to 256
  }
  SECTION("integer inputs are not executed") {
    const auto x = iota_tensor(ElementType::i32, {1, 2});
    try {
      subtract_mean(x, iota_tensor(ElementType::i32, {2}));
      FAIL("accepted");
    } catch (const Error& e) {
      CHECK(e.code() == ExitCode::unsupported);
    }
  }
}
