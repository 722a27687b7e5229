// Tests of running whole graphs (lib/src/executor.cpp) on small inline models and hand-made
// tensors: chains, branches, several Parameters and Results, AdaptiveAvgPool with its
// output_size from the weights, f16/bf16/f64, dynamic Parameters, unsupported ops and element
// types, --layer extraction, the output naming rule and MaxPool's two outputs. Every expected value
// is worked out by hand in a comment next to it (inputs are small iotas or short lists).
#include "irrun/executor.hpp"

#include <catch2/catch.hpp>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "irrun/check.hpp"
#include "irrun/error.hpp"
#include "support/ir_text.hpp"

using irrun::ElementType;
using irrun::ExitCode;
using irrun::Model;
using irrun::Output;
using irrun::Parallel;
using irrun::Tensor;
using irrun::testing::avg_pool;
using irrun::testing::bits16_of;
using irrun::testing::edge;
using irrun::testing::i64_weights;
using irrun::testing::iota_tensor;
using irrun::testing::layer;
using irrun::testing::make_tensor;
using irrun::testing::model_from_xml;
using irrun::testing::net;
using irrun::testing::parameter;
using irrun::testing::port;
using irrun::testing::result;
using irrun::testing::values_of;

namespace {

using Shape = std::vector<std::int64_t>;

const std::string kK2S2 =
    "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\" exclude-pad=\"true\" "
    "rounding_type=\"floor\" auto_pad=\"explicit\"";

// The one output named `name` (REQUIREs that there is exactly one).
const Output& output_named(const std::vector<Output>& outputs, const std::string& name) {
  const Output* found = nullptr;
  std::size_t count = 0;
  for (const auto& o : outputs) {
    if (o.name == name) found = &o, ++count;
  }
  INFO("output " << name);
  REQUIRE(count == 1);
  return *found;
}

std::size_t layer_index(const Model& m, const std::string& name) {
  for (std::size_t i = 0; i < m.ir.layers.size(); ++i)
    if (m.ir.layers[i].name == name) return i;
  FAIL("no layer " << name);
  return 0;
}

// Runs and returns the error the run throws (FAILs if it does not throw irrun::Error).
irrun::Error run_error(const Model& m, const std::map<std::size_t, Tensor>& inputs) {
  const Parallel par(1);
  try {
    run_model(m, inputs, par);
  } catch (const irrun::Error& e) {
    return e;
  }
  FAIL("run_model did not throw");
  return irrun::Error(ExitCode::ok, "");
}

// x (1x1x?x?) -> 2x2 s2 AvgPool "p" -> Result "r".
Model dynamic_k2s2_model() {
  return model_from_xml(net(parameter(0, "x", "1,1,?,?", {1, 1, -1, -1}) +
                                avg_pool(1, "p", "opset1", kK2S2, {1, 1, -1, -1}, {1, 1, -1, -1}) +
                                result(2, "r", {1, 1, -1, -1}),
                            edge(0, 0, 1, 0) + edge(1, 1, 2, 0)));
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a chain pool -> pool whose first pool also feeds a Result", "[executor]") {
  // x [1,1,4,4] -> p1 (k3 s1 p1/1 exclude-pad, size kept) -> p2 (AvgPool-14 k2 s2) -> Result;
  // p1 also feeds a second Result.
  const auto xml =
      net(parameter(0, "x", "1,1,4,4", {1, 1, 4, 4}, "f32", "FP32", "x") +
              avg_pool(1, "p1", "opset1",
                       "kernel=\"3,3\" strides=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\" "
                       "exclude-pad=\"true\"",
                       {1, 1, 4, 4}, {1, 1, 4, 4}, "FP32", "p1_out") +
              avg_pool(2, "p2", "opset14", kK2S2, {1, 1, 4, 4}, {1, 1, 2, 2}, "FP32", "p2_out") +
              result(3, "p2/sink", {1, 1, 2, 2}) + result(4, "p1/sink", {1, 1, 4, 4}),
          edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(2, 1, 3, 0) + edge(1, 1, 4, 0));
  const Model m = model_from_xml(xml);
  const Parallel par(2);
  const auto outputs = run_model(m, {{0, iota_tensor(ElementType::f32, {1, 1, 4, 4})}}, par);
  REQUIRE(outputs.size() == 2);

  // x is 4*h + w. Per axis, the in-bounds taps of output o are {o-1, o, o+1} within [0,3]:
  // o=0 {0,1} mean 0.5, o=1 {0,1,2} 1, o=2 {1,2,3} 2, o=3 {2,3} 2.5, and the window average of
  // 4*h + w is 4*mean_h + mean_w.
  const auto& p1 = output_named(outputs, "p1_out");
  CHECK(p1.tensor.type == ElementType::f32);
  CHECK(p1.tensor.shape == Shape{1, 1, 4, 4});
  CHECK(p1.result_layer == 4);
  CHECK(values_of(p1.tensor) == std::vector<double>{2.5, 3, 4, 4.5,    //
                                                    4.5, 5, 6, 6.5,    //
                                                    8.5, 9, 10, 10.5,  //
                                                    10.5, 11, 12, 12.5});
  // p2: 2x2 means of p1: (2.5+3+4.5+5)/4, (4+4.5+6+6.5)/4, (8.5+9+10.5+11)/4, (10+10.5+12+12.5)/4.
  const auto& p2 = output_named(outputs, "p2_out");
  CHECK(p2.tensor.shape == Shape{1, 1, 2, 2});
  CHECK(p2.result_layer == 3);
  CHECK(values_of(p2.tensor) == std::vector<double>{3.75, 5.25, 9.75, 11.25});
}

TEST_CASE("one pool feeding two Results, and a Parameter feeding a Result directly", "[executor]") {
  const auto xml = net(parameter(0, "x", "1,1,1,4", {1, 1, 1, 4}, "f32", "FP32", "x_t") +
                           avg_pool(1, "p", "opset1",
                                    "kernel=\"1,2\" strides=\"1,2\" pads_begin=\"0,0\" "
                                    "pads_end=\"0,0\"",
                                    {1, 1, 1, 4}, {1, 1, 1, 2}) +
                           result(2, "ra", {1, 1, 1, 2}) + result(3, "rb", {1, 1, 1, 2}) +
                           result(4, "rx", {1, 1, 1, 4}),
                       edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(1, 1, 3, 0) + edge(0, 0, 4, 0));
  const Model m = model_from_xml(xml);
  const Parallel par(1);
  const auto outputs =
      run_model(m, {{0, make_tensor(ElementType::f32, {1, 1, 1, 4}, {1, 2, 3, 4})}}, par);
  REQUIRE(outputs.size() == 3);
  // The pool's output port has no names: each Result is named after itself.
  CHECK(values_of(output_named(outputs, "ra").tensor) == std::vector<double>{1.5, 3.5});
  CHECK(values_of(output_named(outputs, "rb").tensor) == std::vector<double>{1.5, 3.5});
  CHECK(output_named(outputs, "ra").result_layer == 2);
  CHECK(output_named(outputs, "rb").result_layer == 3);
  // The Parameter's port is named x_t: the input comes back unchanged under that name.
  const auto& passthrough = output_named(outputs, "x_t");
  CHECK(passthrough.tensor.shape == Shape{1, 1, 1, 4});
  CHECK(values_of(passthrough.tensor) == std::vector<double>{1, 2, 3, 4});
}

TEST_CASE("several Parameters and Results, f32 and f64", "[executor]") {
  // a f32 [1,1,2,2] -> global 2x2 average; b f64 [1,2,3] -> AvgPool-16 k3 s1 p1/1 include-pad.
  const auto xml =
      net(parameter(0, "a", "1,1,2,2", {1, 1, 2, 2}, "f32", "FP32", "a") +
              parameter(1, "b", "1,2,3", {1, 2, 3}, "f64", "FP64", "b") +
              avg_pool(2, "pa", "opset1", kK2S2, {1, 1, 2, 2}, {1, 1, 1, 1}, "FP32", "pa") +
              avg_pool(3, "pb", "opset16",
                       "kernel=\"3\" strides=\"1\" pads_begin=\"1\" pads_end=\"1\" "
                       "exclude-pad=\"false\"",
                       {1, 2, 3}, {1, 2, 3}, "FP64", "pb") +
              result(4, "ra", {1, 1, 1, 1}) + result(5, "rb", {1, 2, 3}, "FP64"),
          edge(0, 0, 2, 0) + edge(1, 0, 3, 0) + edge(2, 1, 4, 0) + edge(3, 1, 5, 0));
  const Model m = model_from_xml(xml);
  const Parallel par(0);
  const auto outputs =
      run_model(m,
                {{0, make_tensor(ElementType::f32, {1, 1, 2, 2}, {1, 2, 3, 4})},
                 {1, make_tensor(ElementType::f64, {1, 2, 3}, {1, 2, 3, 10, 20, 30})}},
                par);
  REQUIRE(outputs.size() == 2);
  const auto& a = output_named(outputs, "pa");
  CHECK(a.tensor.type == ElementType::f32);
  CHECK(values_of(a.tensor) == std::vector<double>{2.5});  // (1+2+3+4)/4
  // Padding counts (exclude-pad=false, pads 1/1), so every window divides by 3:
  // (0+1+2)/3, (1+2+3)/3, (2+3+0)/3 and the same times 10 for the second channel.
  const auto& b = output_named(outputs, "pb");
  CHECK(b.tensor.type == ElementType::f64);
  CHECK(b.tensor.shape == Shape{1, 2, 3});
  CHECK(values_of(b.tensor) == std::vector<double>{1, 2, 5.0 / 3.0, 10, 20, 50.0 / 3.0});
}

TEST_CASE("AdaptiveAvgPool takes output_size from a Const in the weights", "[executor]") {
  // output_size {2,3} is an i64 Const at byte offset 8 of the weights.
  const auto xml = net(
      parameter(0, "x", "1,1,3,4", {1, 1, 3, 4}) +
          layer(1, "os", "Const", "opset1",
                "element_type=\"i64\" shape=\"2\" offset=\"8\" size=\"16\"", "",
                port(0, {2}, "I64", "os")) +
          layer(2, "ada", "AdaptiveAvgPool", "opset8", "",
                port(0, {1, 1, 3, 4}) + port(1, {2}, "I64"), port(2, {1, 1, 2, 3}, "FP32", "ada")) +
          result(3, "r", {1, 1, 2, 3}),
      edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0));
  const Model m = model_from_xml(xml, i64_weights(8, {2, 3}));
  const Parallel par(2);
  const auto outputs = run_model(m, {{0, iota_tensor(ElementType::f32, {1, 1, 3, 4})}}, par);
  REQUIRE(outputs.size() == 1);
  const auto& out = outputs[0];
  CHECK(out.name == "ada");
  CHECK(out.tensor.shape == Shape{1, 1, 2, 3});
  // x = 4*h + w. Bins [floor(i*I/O), ceil((i+1)*I/O)): rows (I=3, O=2) {0,1} and {1,2};
  // columns (I=4, O=3) {0,1}, {1,2}, {2,3}. Averages 4*mean_h + mean_w with mean_h 0.5 or 1.5
  // and mean_w 0.5, 1.5, 2.5.
  CHECK(values_of(out.tensor) == std::vector<double>{2.5, 3.5, 4.5, 6.5, 7.5, 8.5});
}

TEST_CASE("AdaptiveAvgPool of an input dim 0 into bins is inferred but does not run",
          "[executor]") {
  // OpenVINO infers [1,1,2,3] and its kernel asserts: a model error when the declared input has
  // the 0, the inputs' error when only their shape brings it.
  const auto model_of = [](const std::string& shape, const std::vector<std::int64_t>& dims) {
    return model_from_xml(
        net(parameter(0, "x", shape, dims) +
                layer(1, "os", "Const", "opset1",
                      "element_type=\"i64\" shape=\"2\" offset=\"0\" size=\"16\"", "",
                      port(0, {2}, "I64")) +
                layer(2, "ada", "AdaptiveAvgPool", "opset8", "",
                      port(0, dims) + port(1, {2}, "I64"), port(2, {1, 1, 2, 3})) +
                result(3, "r", {1, 1, 2, 3}),
            edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0)),
        i64_weights(0, {2, 3}));
  };
  const Parallel par(1);
  for (const auto& [m, code] :
       {std::pair{model_of("1,1,0,4", {1, 1, 0, 4}), ExitCode::bad_model},
        std::pair{model_of("1,1,?,4", {1, 1, -1, 4}), ExitCode::bad_input}}) {
    CAPTURE(code);
    CHECK(irrun::check_model(m, false).size() == (code == ExitCode::bad_model ? 1u : 0u));
    try {
      run_model(m, {{0, Tensor::zeros(ElementType::f32, {1, 1, 0, 4})}}, par);
      FAIL("ran");
    } catch (const irrun::Error& e) {
      CHECK(e.code() == code);
      CHECK_THAT(e.what(), Catch::Contains("every adaptive bin is empty"));
    }
  }
}

TEST_CASE("Adaptive pooling of an input dim 0 into an empty output runs", "[executor]") {
  // OpenVINO's kernels loop over the output and assert only on a bin they compute: none here.
  const auto model_of = [](const std::string& type, const Shape& in, const Shape& sizes,
                           const Shape& out) {
    const bool max = type == "AdaptiveMaxPool";
    std::string shape;
    for (auto d : in) {
      if (!shape.empty()) shape += ',';
      shape += std::to_string(d);
    }
    return model_from_xml(
        net(parameter(0, "x", shape, in) +
                layer(1, "os", "Const", "opset1",
                      "element_type=\"i64\" shape=\"2\" offset=\"0\" size=\"16\"", "",
                      port(0, {2}, "I64")) +
                layer(2, "ada", type, "opset8", max ? "index_element_type=\"i64\"" : "",
                      port(0, in) + port(1, {2}, "I64"),
                      port(2, out) + (max ? port(3, out, "I64") : "")) +
                result(3, "r", out) + (max ? result(4, "ri", out, "I64") : ""),
            edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0) + (max ? edge(2, 3, 4, 0) : "")),
        i64_weights(0, sizes));
  };
  const Parallel par(2);
  for (const std::string type : {"AdaptiveAvgPool", "AdaptiveMaxPool"}) {
    for (const auto& [in, sizes, out] :
         {std::tuple{Shape{0, 2, 0, 4}, Shape{2, 3}, Shape{0, 2, 2, 3}},
          std::tuple{Shape{1, 0, 0, 4}, Shape{2, 3}, Shape{1, 0, 2, 3}},
          std::tuple{Shape{1, 2, 0, 4}, Shape{2, 0}, Shape{1, 2, 2, 0}}}) {
      CAPTURE(type, in, sizes);
      const auto m = model_of(type, in, sizes, out);
      CHECK(irrun::check_model(m, false).empty());
      const auto outs = run_model(m, {{0, Tensor::zeros(ElementType::f32, in)}}, par);
      REQUIRE(!outs.empty());
      for (const auto& o : outs) CHECK(o.tensor.shape == out);
    }
  }
}

TEST_CASE("TensorRecycler keeps sole-owned buffers and hands them out by exact size",
          "[executor]") {
  irrun::TensorRecycler r;
  Tensor a = Tensor::zeros(ElementType::f32, {2, 3});
  const auto* a_data = a.buffer.data();
  r.keep(std::move(a));
  Tensor shared = Tensor::zeros(ElementType::f32, {2, 3});
  const Tensor holder = shared;  // held elsewhere: not kept
  r.keep(std::move(shared));
  std::vector<float> mine(6);
  r.keep(Tensor::wrap(ElementType::f32, {2, 3}, mine.data()));  // the caller's: not kept
  // Same bytes, another type and shape: the kept buffer, not zeroed again.
  const Tensor b = r.take(ElementType::i32, {6});
  CHECK(b.buffer.data() == a_data);
  CHECK(b.type == ElementType::i32);
  CHECK(b.shape == Shape{6});
  const Tensor c = r.take(ElementType::f32, {2, 3});  // nothing kept of that size any more
  CHECK(c.buffer.data() != a_data);
  CHECK(c.buffer.data() != holder.buffer.data());
  CHECK(c.buffer.data() != reinterpret_cast<const std::byte*>(mine.data()));

  // What is kept counts against the memory limit; an allocation it would block drops it first.
  r.keep(Tensor::zeros(ElementType::f32, {1024}));  // 4 KiB kept
  const auto saved = irrun::memory_limit();
  irrun::set_memory_limit(irrun::memory_in_use() + 6 * 1024);
  Tensor big;
  CHECK_NOTHROW(big = r.take(ElementType::f32, {2048}));  // 8 KiB: fits once the 4 KiB are gone
  CHECK_THROWS_AS(r.take(ElementType::f32, {4096}), irrun::Error);  // 16 KiB: never fits
  irrun::set_memory_limit(saved);
}

TEST_CASE("run_model with a TensorRecycler gives the same outputs run after run", "[executor]") {
  // A chain of pooling layers whose intermediate tensors are recycled: every output of a run on
  // new inputs must be that of a fresh run, whatever the buffers held before (include-pad
  // windows partly in padding, MaxPool indices, adaptive bins).
  const std::string pad =
      "kernel=\"3,3\" strides=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\" "
      "exclude-pad=\"false\"";
  const std::string mp =
      "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\" "
      "index_element_type=\"i64\"";
  const auto xml =
      net(parameter(0, "x", "1,2,6,6", {1, 2, 6, 6}) +
              avg_pool(1, "a", "opset1", pad, {1, 2, 6, 6}, {1, 2, 6, 6}) +
              layer(2, "m", "MaxPool", "opset8", mp, port(0, {1, 2, 6, 6}),
                    port(1, {1, 2, 3, 3}) + port(2, {1, 2, 3, 3}, "I64")) +
              layer(3, "os", "Const", "opset1",
                    "element_type=\"i64\" shape=\"2\" offset=\"0\" size=\"16\"", "",
                    port(0, {2}, "I64")) +
              layer(4, "ada", "AdaptiveAvgPool", "opset8", "",
                    port(0, {1, 2, 3, 3}) + port(1, {2}, "I64"), port(2, {1, 2, 2, 2})) +
              avg_pool(5, "b", "opset1", pad, {1, 2, 6, 6}, {1, 2, 6, 6}) +
              result(6, "r", {1, 2, 2, 2}) + result(7, "rb", {1, 2, 6, 6}),
          edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(2, 1, 4, 0) + edge(3, 0, 4, 1) +
              edge(4, 2, 6, 0) + edge(0, 0, 5, 0) + edge(5, 1, 7, 0));
  const Model m = model_from_xml(xml, i64_weights(0, {2, 2}));
  const Parallel par(2);
  irrun::TensorRecycler recycler;
  std::map<std::size_t, Tensor> inputs{{0, Tensor::zeros(ElementType::f32, {1, 2, 6, 6})}};
  const auto prepared = irrun::prepare_run(m, inputs);
  for (int run = 0; run < 4; ++run) {
    CAPTURE(run);
    Tensor x = Tensor::zeros(ElementType::f32, {1, 2, 6, 6});
    float* v = x.mutable_data<float>();
    for (int i = 0; i < 72; ++i) v[i] = static_cast<float>((i * (7 + run)) % 13) - 6.0f;
    inputs[0] = x;
    const auto fresh = run_model(m, inputs, par);
    const auto recycled =
        run_model(m, prepared, inputs, par, {}, {}, irrun::kernels::Kernels::best, &recycler);
    REQUIRE(recycled.size() == fresh.size());
    for (std::size_t k = 0; k < fresh.size(); ++k) {
      CHECK(recycled[k].name == fresh[k].name);
      CHECK(values_of(recycled[k].tensor) == values_of(fresh[k].tensor));
    }
  }
}

TEST_CASE("run_model with a TensorRecycler keeps no more than one run's tensors", "[executor]") {
  // Run after run with outputs dropped, the memory in use must not grow: a tensor a run makes
  // afresh (a mean-subtracted input, a misaligned Const's copy) is not kept, and a v10 IR's
  // converted output takes a kept buffer.
  const std::string pad =
      "kernel=\"3,3\" strides=\"1,1\" pads_begin=\"1,1\" pads_end=\"1,1\" "
      "exclude-pad=\"false\"";
  auto v10 = [](std::string xml) {
    return xml.replace(xml.find("version=\"11\""), 12, "version=\"10\"");
  };
  // x f16 -> a (k3 s1 p1) -> b (k2 s2) -> r: handed out as f32.
  const auto f16_chain =
      v10(net(parameter(0, "x", "1,2,6,6", {1, 2, 6, 6}, "f16", "FP16") +
                  avg_pool(1, "a", "opset1", pad, {1, 2, 6, 6}, {1, 2, 6, 6}, "FP16") +
                  avg_pool(2, "b", "opset1", kK2S2, {1, 2, 6, 6}, {1, 2, 3, 3}, "FP16") +
                  result(3, "r", {1, 2, 3, 3}, "FP16"),
              edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(2, 1, 3, 0)));
  // The mean of a v10 <pre-process> block, subtracted from x afresh on every run.
  auto means = v10(net(parameter(0, "x", "1,2,6,6", {1, 2, 6, 6}) +
                           avg_pool(1, "a", "opset1", kK2S2, {1, 2, 6, 6}, {1, 2, 3, 3}) +
                           result(2, "r", {1, 2, 3, 3}),
                       edge(0, 0, 1, 0) + edge(1, 1, 2, 0)));
  means.insert(means.find("<layers>"),
               "<pre-process reference-layer-name=\"x\"><channel id=\"0\"><mean value=\"1\"/>"
               "</channel><channel id=\"1\"><mean value=\"2\"/></channel></pre-process>\n");
  // output_size {2,2} at byte 4 of the weights: copied for aligned reads on every run.
  const auto misaligned =
      net(parameter(0, "x", "1,2,6,6", {1, 2, 6, 6}) +
              layer(1, "os", "Const", "opset1",
                    "element_type=\"i64\" shape=\"2\" offset=\"4\" size=\"16\"", "",
                    port(0, {2}, "I64")) +
              layer(2, "ada", "AdaptiveAvgPool", "opset8", "",
                    port(0, {1, 2, 6, 6}) + port(1, {2}, "I64"), port(2, {1, 2, 2, 2})) +
              result(3, "r", {1, 2, 2, 2}),
          edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0));
  for (const auto& [name, xml, type] :
       {std::tuple{"f16 chain", f16_chain, ElementType::f16},
        std::tuple{"means", means, ElementType::f32},
        std::tuple{"misaligned Const", misaligned, ElementType::f32}}) {
    CAPTURE(name);
    const Model m = model_from_xml(xml, i64_weights(4, {2, 2}));
    const Parallel par(1);
    std::map<std::size_t, Tensor> inputs{{0, iota_tensor(type, {1, 2, 6, 6})}};
    const auto prepared = irrun::prepare_run(m, inputs);
    irrun::TensorRecycler recycler;
    std::vector<std::uint64_t> in_use;
    for (int run = 0; run < 4; ++run) {
      const auto outs =
          run_model(m, prepared, inputs, par, {}, {}, irrun::kernels::Kernels::best, &recycler);
      REQUIRE(outs.size() == 1);
      CHECK(values_of(outs[0].tensor) == values_of(run_model(m, inputs, par)[0].tensor));
      in_use.push_back(irrun::memory_in_use());
    }
    CHECK(in_use == std::vector<std::uint64_t>(4, in_use[0]));
  }
}

TEST_CASE("f16 and bf16 models are accumulated wide and rounded once", "[executor]") {
  // x [1,1,1,7] -> k(1,4) s(1,4) ceil: windows {x0..x3} and {x4,x5,x6} (3 in bounds).
  const std::string data =
      "kernel=\"1,4\" strides=\"1,4\" pads_begin=\"0,0\" pads_end=\"0,0\" exclude-pad=\"true\" "
      "rounding_type=\"ceil\"";
  auto model_of = [&](const std::string& type, const std::string& precision) {
    return model_from_xml(
        net(parameter(0, "x", "1,1,1,7", {1, 1, 1, 7}, type, precision) +
                avg_pool(1, "p", "opset1", data, {1, 1, 1, 7}, {1, 1, 1, 2}, precision, "p") +
                result(2, "r", {1, 1, 1, 2}, precision),
            edge(0, 0, 1, 0) + edge(1, 1, 2, 0)));
  };
  const Parallel par(1);

  SECTION("f16") {
    const auto m = model_of("f16", "FP16");
    const auto out = run_model(
        m, {{0, make_tensor(ElementType::f16, {1, 1, 1, 7}, {2048, 1, 1, 0, 1, 2, 4})}}, par);
    REQUIRE(out.size() == 1);
    CHECK(out[0].tensor.type == ElementType::f16);
    // (2048+1+1+0)/4 = 512.5 exactly: f16 0x6001 (512 * (1 + 1/1024)). Rounding after every
    // add, as OpenVINO does, would lose both 1s (2049 is a tie that goes to 2048): 512.
    // (1+2+4)/3 = 2.333...: f16 ulp at 2 is 2^-9, 1/3 = 170.67 ulps -> 171: 0x4000 + 171.
    CHECK(bits16_of(out[0].tensor) == std::vector<std::uint16_t>{0x6001, 0x40AB});
  }
  SECTION("bf16") {
    const auto m = model_of("bf16", "BF16");
    const auto out = run_model(
        m, {{0, make_tensor(ElementType::bf16, {1, 1, 1, 7}, {256, 1, 1, 0, 1, 2, 4})}}, par);
    REQUIRE(out.size() == 1);
    CHECK(out[0].tensor.type == ElementType::bf16);
    // (256+1+1+0)/4 = 64.5: bf16 ulp at 64 is 0.5, exact: 0x4281. Per-add rounding gives 64.
    // 7/3: ulp at 2 is 2^-6, 1/3 = 21.33 ulps -> 21: 2 * (1 + 21/128) = 2.328125 = 0x4015.
    CHECK(bits16_of(out[0].tensor) == std::vector<std::uint16_t>{0x4281, 0x4015});
  }
  SECTION("f64") {
    const auto m = model_of("f64", "FP64");
    const auto out = run_model(
        m, {{0, make_tensor(ElementType::f64, {1, 1, 1, 7}, {2048, 1, 1, 0, 1, 2, 4})}}, par);
    REQUIRE(out.size() == 1);
    CHECK(out[0].tensor.type == ElementType::f64);
    CHECK(values_of(out[0].tensor) == std::vector<double>{512.5, 7.0 / 3.0});
  }
}

TEST_CASE("dynamic Parameter dims are resolved from the input tensor's shape", "[executor]") {
  const Model m = dynamic_k2s2_model();
  const Parallel par(2);

  // 2x4 iota: windows {0,1,4,5} and {2,3,6,7}.
  auto out = run_model(m, {{0, iota_tensor(ElementType::f32, {1, 1, 2, 4})}}, par);
  REQUIRE(out.size() == 1);
  CHECK(out[0].tensor.shape == Shape{1, 1, 1, 2});
  CHECK(values_of(out[0].tensor) == std::vector<double>{2.5, 4.5});

  // The same model on 4x2: windows {0,1,2,3} and {4,5,6,7}.
  out = run_model(m, {{0, iota_tensor(ElementType::f32, {1, 1, 4, 2})}}, par);
  REQUIRE(out.size() == 1);
  CHECK(out[0].tensor.shape == Shape{1, 1, 2, 1});
  CHECK(values_of(out[0].tensor) == std::vector<double>{1.5, 5.5});
}

TEST_CASE("a prepared run computes what run_model does, on inputs of its shapes only",
          "[executor]") {
  const Model m = dynamic_k2s2_model();
  const Parallel par(1);
  const auto x24 = iota_tensor(ElementType::f32, {1, 1, 2, 4});
  const irrun::PreparedRun prepared = irrun::prepare_run(m, {{0, x24}});
  CHECK(prepared.analysis.nodes[1].geometry.has_value());
  CHECK(irrun::prepared_for(prepared, {{0, iota_tensor(ElementType::f32, {1, 1, 2, 4})}}));
  CHECK_FALSE(irrun::prepared_for(prepared, {{0, iota_tensor(ElementType::f32, {1, 1, 4, 2})}}));
  CHECK_FALSE(irrun::prepared_for(prepared, {}));
  // 2x4 iota: windows {0,1,4,5} and {2,3,6,7}, run after run.
  for (int run = 0; run < 2; ++run) {
    const auto out = run_model(m, prepared, {{0, x24}}, par);
    REQUIRE(out.size() == 1);
    CHECK(out[0].tensor.shape == Shape{1, 1, 1, 2});
    CHECK(values_of(out[0].tensor) == std::vector<double>{2.5, 4.5});
  }
  // Another shape would run the kernel on the prepared geometry: refused before compute.
  try {
    run_model(m, prepared, {{0, iota_tensor(ElementType::f32, {1, 1, 4, 2})}}, par);
    FAIL("a run on inputs of other shapes did not throw");
  } catch (const irrun::Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    CHECK(contains(e.what(), "not those the run was prepared for"));
  }
  // Preparing makes run_model's checks before compute: without an input for the dynamic
  // Parameter, the pool's output shape is not static.
  try {
    irrun::prepare_run(m, {});
    FAIL("preparing without the input did not throw");
  } catch (const irrun::Error& e) {
    CHECK(contains(e.what(), "is not static, so it cannot run"));
  }
}

TEST_CASE("a model with ops irrun does not run fails before compute, naming them", "[executor]") {
  const auto xml = net(
      parameter(0, "x", "1,1,4,4", {1, 1, 4, 4}) +
          layer(1, "act", "Relu", "opset1", "", port(0, {1, 1, 4, 4}), port(1, {1, 1, 4, 4})) +
          layer(2, "sig", "Sigmoid", "opset1", "", port(0, {1, 1, 4, 4}), port(1, {1, 1, 4, 4})) +
          avg_pool(3, "pool", "opset1", kK2S2, {1, 1, 4, 4}, {1, 1, 2, 2}) +
          result(4, "r", {1, 1, 2, 2}),
      edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(2, 1, 3, 0) + edge(3, 1, 4, 0));
  const Model m = model_from_xml(xml);

  std::string message;
  try {
    irrun::require_executable(m);
    FAIL("require_executable accepted Relu and Sigmoid");
  } catch (const irrun::Error& e) {
    CHECK(e.code() == ExitCode::unsupported);
    message = e.what();
  }
  INFO(message);
  CHECK(contains(message, "test.xml"));
  CHECK(contains(message, "2 layer(s)"));
  CHECK(contains(message, "'act' (Relu)"));
  CHECK(contains(message, "'sig' (Sigmoid)"));
  CHECK_FALSE(contains(message, "'pool'"));
  CHECK(contains(message, "--layer"));

  // run_model checks the same first: no input is even looked at.
  const auto e = run_error(m, {});
  CHECK(e.code() == ExitCode::unsupported);
  CHECK(std::string(e.what()) == message);
}

// require_layer_runs, layer by layer on the IR's shapes (what `irrun info` shows): each refusal
// with its exit code, on the bad inputs that hold one; the layers of a model that runs pass.
TEST_CASE("require_layer_runs: each refusal, with its exit code", "[executor]") {
  struct Case {
    std::string file, layer;
    std::optional<ExitCode> code;  // none: the layer runs
  };
  const Case cases[] = {
      {"unsupported_op.xml", "pool", ExitCode::unsupported},  // a Relu
      {"run_i4_pool.xml", "pool", ExitCode::unsupported},
      {"run_output_size_dynamic.xml", "adaptive", ExitCode::unsupported},
      {"run_without_weights.xml", "output_size", ExitCode::bad_model},
      {"run_without_weights.xml", "adaptive", ExitCode::unsupported},
      {"pre_process_run.xml", "input", ExitCode::bad_model},
      {"pre_process_run.xml", "pool", std::nullopt},
      {"run_output_overflows.xml", "pool", ExitCode::limit},
      {"good.xml", "pool", std::nullopt},
      {"dynamic_input.xml", "pool", std::nullopt},          // [1,3,?,?]: the run's shapes decide
      {"kernel_too_big.xml", "pool", ExitCode::bad_model},  // not inferred
  };
  for (const auto& c : cases) {
    INFO(c.file << " layer " << c.layer);
    const Model m = irrun::load_model(std::string(IRRUN_TESTS_DIR) + "/bad_inputs/" + c.file);
    const auto a = irrun::analyze(m.ir, m.graph, m.weights ? &*m.weights : nullptr);
    const std::size_t n = layer_index(m, c.layer);
    try {
      irrun::require_layer_runs(m, a, n, false);
      CHECK(!c.code);
    } catch (const irrun::Error& e) {
      INFO(e.what());
      REQUIRE(c.code);
      CHECK(e.code() == *c.code);
      CHECK(std::string(e.what()).find(m.ir.layers[n].name) != std::string::npos);
    }
  }
  // On a run's shapes (run_shapes true, as prepare_run asks) a pool of a dynamic input is
  // refused: its output shape is not static.
  const Model d = irrun::load_model(std::string(IRRUN_TESTS_DIR) + "/bad_inputs/dynamic_input.xml");
  const auto da = irrun::analyze(d.ir, d.graph, nullptr);
  try {
    irrun::require_layer_runs(d, da, layer_index(d, "pool"));
    FAIL("a pool of a dynamic input passed on a run's shapes");
  } catch (const irrun::Error& e) {
    CHECK(e.code() == ExitCode::unsupported);
    CHECK(contains(e.what(), "is not static, so it cannot run"));
  }
}

TEST_CASE("an element type the kernels do not run is rejected before compute", "[executor]") {
  const auto xml = net(parameter(0, "x", "1,1,2,2", {1, 1, 2, 2}, "i4", "I4") +
                           avg_pool(1, "ipool", "opset1", kK2S2, {1, 1, 2, 2}, {1, 1, 1, 1}, "I4") +
                           result(2, "r", {1, 1, 1, 1}, "I4"),
                       edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
  const Model m = model_from_xml(xml);
  CHECK_NOTHROW(irrun::require_executable(m));  // the ops are fine; the type is not

  // Without any input: the type check comes before the Parameter is bound.
  auto e = run_error(m, {});
  CHECK(e.code() == ExitCode::unsupported);
  INFO(e.what());
  CHECK(contains(e.what(), "'ipool'"));
  CHECK(contains(e.what(), "element type i4 is not executed"));
  CHECK(contains(e.what(), "f32, f16, bf16, f64, i8, i16, i32, i64, u8, u16, u32 and u64"));

  Tensor in = Tensor::zeros(ElementType::i4, {1, 1, 2, 2});
  e = run_error(m, {{0, in}});
  CHECK(e.code() == ExitCode::unsupported);
}

TEST_CASE("integer models run: i8 rounds to nearest even, i64 truncates toward zero",
          "[executor][int]") {
  // a i8 [1,1,2,2] -> global 2x2 average; b i64 [1,2,3] -> AvgPool-16 k3 s1 p1/1 include-pad
  // (every window divides by 3).
  const auto xml =
      net(parameter(0, "a", "1,1,2,2", {1, 1, 2, 2}, "i8", "I8", "a") +
              parameter(1, "b", "1,2,3", {1, 2, 3}, "i64", "I64", "b") +
              avg_pool(2, "pa", "opset1", kK2S2, {1, 1, 2, 2}, {1, 1, 1, 1}, "I8", "pa") +
              avg_pool(3, "pb", "opset16",
                       "kernel=\"3\" strides=\"1\" pads_begin=\"1\" pads_end=\"1\" "
                       "exclude-pad=\"false\"",
                       {1, 2, 3}, {1, 2, 3}, "I64", "pb") +
              result(4, "ra", {1, 1, 1, 1}, "I8") + result(5, "rb", {1, 2, 3}, "I64"),
          edge(0, 0, 2, 0) + edge(1, 0, 3, 0) + edge(2, 1, 4, 0) + edge(3, 1, 5, 0));
  const Model m = model_from_xml(xml);
  const Parallel par(0);
  const auto outputs =
      run_model(m,
                {{0, make_tensor(ElementType::i8, {1, 1, 2, 2}, {-1, -2, -3, -4})},
                 {1, make_tensor(ElementType::i64, {1, 2, 3}, {-1, -2, -3, 10, 20, 31})}},
                par);
  REQUIRE(outputs.size() == 2);
  const auto& a = output_named(outputs, "pa");
  CHECK(a.tensor.type == ElementType::i8);
  CHECK(values_of(a.tensor) == std::vector<double>{-2});  // -10/4 = -2.5 -> -2 (even)
  // (0-1-2)/3 = -1, (-1-2-3)/3 = -2, (-2-3+0)/3 = -5/3 -> -1; 30/3, 61/3 -> 20, 51/3 = 17.
  const auto& b = output_named(outputs, "pb");
  CHECK(b.tensor.type == ElementType::i64);
  CHECK(values_of(b.tensor) == std::vector<double>{-1, -2, -1, 10, 20, 17});
}

TEST_CASE("a Parameter without a tensor is an input error", "[executor]") {
  const auto xml = net(parameter(0, "x", "1,1,2,2", {1, 1, 2, 2}) +
                           avg_pool(1, "p", "opset1", kK2S2, {1, 1, 2, 2}, {1, 1, 1, 1}) +
                           result(2, "r", {1, 1, 1, 1}),
                       edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
  const auto e = run_error(model_from_xml(xml), {});
  CHECK(e.code() == ExitCode::bad_input);
  CHECK(contains(e.what(), "'x'"));
}

namespace {

// x (dynamic H, W) -> act (Relu, declares 4x4, port named relu_out) -> ada (AdaptiveAvgPool,
// output_size Const {2,2}, port named ada_out) -> Result; act -> sig (Sigmoid, unnamed port) ->
// pool (AvgPool k2 s2, unnamed port) -> Result.
Model multi_op_model() {
  const auto xml = net(
      parameter(0, "x", "1,1,?,?", {1, 1, -1, -1}, "f32", "FP32", "x") +
          layer(1, "act", "Relu", "opset1", "", port(0, {1, 1, -1, -1}),
                port(1, {1, 1, 4, 4}, "FP32", "relu_out")) +
          layer(2, "os", "Const", "opset1",
                "element_type=\"i64\" shape=\"2\" offset=\"0\" size=\"16\"", "",
                port(0, {2}, "I64", "os")) +
          layer(3, "ada", "AdaptiveAvgPool", "opset8", "",
                port(0, {1, 1, 4, 4}) + port(1, {2}, "I64"),
                port(2, {1, 1, 2, 2}, "FP32", "ada_out")) +
          result(4, "ada/sink", {1, 1, 2, 2}) +
          layer(5, "sig", "Sigmoid", "opset1", "", port(0, {1, 1, 4, 4}), port(1, {1, 1, 4, 4})) +
          avg_pool(6, "pool", "opset1", kK2S2, {1, 1, 4, 4}, {1, 1, 2, 2}) +
          result(7, "pool/sink", {1, 1, 2, 2}),
      edge(0, 0, 1, 0) + edge(1, 1, 3, 0) + edge(2, 0, 3, 1) + edge(3, 2, 4, 0) + edge(1, 1, 5, 0) +
          edge(5, 1, 6, 0) + edge(6, 1, 7, 0));
  return model_from_xml(xml, i64_weights(0, {2, 2}));
}

}  // namespace

TEST_CASE("extract_layer runs one pooling layer of a model irrun cannot run", "[executor]") {
  const Model m = multi_op_model();
  CHECK_THROWS_AS(irrun::require_executable(m), irrun::Error);
  const Parallel par(1);

  SECTION("AdaptiveAvgPool: data from a named tensor, the Const kept") {
    const Model sub = irrun::extract_layer(m, "ada");
    CHECK_NOTHROW(irrun::require_executable(sub));
    REQUIRE(sub.graph.parameters.size() == 1);
    const auto& param = sub.ir.layers[sub.graph.parameters[0]];
    // Named after the tensor feeding the layer and shaped like the layer's declared input
    // port ([1,1,4,4]), not like the model's dynamic Parameter.
    CHECK(param.name == "relu_out");
    CHECK(param.type == "Parameter");
    REQUIRE(param.outputs.size() == 1);
    CHECK(param.outputs[0].dims == Shape{1, 1, 4, 4});
    REQUIRE(param.attribute("shape") != nullptr);
    CHECK(*param.attribute("shape") == "[1,1,4,4]");
    CHECK(*param.attribute("element_type") == "f32");
    const auto os = layer_index(sub, "os");
    CHECK(irrun::is_const(sub.ir.layers[os]));
    REQUIRE(sub.graph.results.size() == 1);

    // 4x4 iota, bins of 2 on both axes: {0,1,4,5}, {2,3,6,7}, {8,9,12,13}, {10,11,14,15}.
    const auto out = run_model(
        sub, {{sub.graph.parameters[0], iota_tensor(ElementType::f32, {1, 1, 4, 4})}}, par);
    REQUIRE(out.size() == 1);
    CHECK(out[0].name == "ada_out");  // the layer's output tensor name
    CHECK(out[0].tensor.shape == Shape{1, 1, 2, 2});
    CHECK(values_of(out[0].tensor) == std::vector<double>{2.5, 4.5, 10.5, 12.5});
  }
  SECTION("AvgPool: data from an unnamed port, output without tensor names") {
    const Model sub = irrun::extract_layer(m, "pool");
    REQUIRE(sub.graph.parameters.size() == 1);
    const auto& param = sub.ir.layers[sub.graph.parameters[0]];
    CHECK(param.name == "sig");  // the producing layer's name
    CHECK(param.outputs[0].dims == Shape{1, 1, 4, 4});
    const auto out = run_model(
        sub, {{sub.graph.parameters[0], iota_tensor(ElementType::f32, {1, 1, 4, 4})}}, par);
    REQUIRE(out.size() == 1);
    CHECK(out[0].name == "pool");  // the layer's name
    CHECK(values_of(out[0].tensor) == std::vector<double>{2.5, 4.5, 10.5, 12.5});
  }
  SECTION("an unknown layer or a layer that is not a pool") {
    try {
      irrun::extract_layer(m, "nope");
      FAIL("extract_layer accepted an unknown layer");
    } catch (const irrun::Error& e) {
      CHECK(e.code() == ExitCode::usage);
      CHECK(contains(e.what(), "no layer named 'nope'"));
    }
    try {
      irrun::extract_layer(m, "act");
      FAIL("extract_layer accepted a Relu");
    } catch (const irrun::Error& e) {
      CHECK(e.code() == ExitCode::unsupported);
      CHECK(contains(e.what(), "'act'"));
      CHECK(contains(e.what(), "not a pooling layer"));
    }
  }
}

TEST_CASE("extract_layer: a name two layers share is an error; an id selects", "[executor]") {
  // Two pools named "p" (ids 1 and 2; 2 keeps the 2x2 plane), one named "7" (id 3).
  const std::string k1 = "kernel=\"1,1\" strides=\"1,1\" pads_begin=\"0,0\" pads_end=\"0,0\"";
  const auto xml = net(parameter(0, "x", "1,1,2,2", {1, 1, 2, 2}) +
                           avg_pool(1, "p", "opset1", kK2S2, {1, 1, 2, 2}, {1, 1, 1, 1}) +
                           avg_pool(2, "p", "opset1", k1, {1, 1, 2, 2}, {1, 1, 2, 2}) +
                           avg_pool(3, "7", "opset1", kK2S2, {1, 1, 2, 2}, {1, 1, 1, 1}) +
                           result(4, "r1", {1, 1, 1, 1}) + result(5, "r2", {1, 1, 2, 2}) +
                           result(6, "r3", {1, 1, 1, 1}),
                       edge(0, 0, 1, 0) + edge(0, 0, 2, 0) + edge(0, 0, 3, 0) + edge(1, 1, 4, 0) +
                           edge(2, 1, 5, 0) + edge(3, 1, 6, 0));
  const Model m = model_from_xml(xml);
  try {
    irrun::extract_layer(m, "p");
    FAIL("an ambiguous name was accepted");
  } catch (const irrun::Error& e) {
    CHECK(e.code() == ExitCode::usage);
    CHECK(contains(e.what(), "--layer 'p' names 2 layers (ids 1, 2); give the id of one instead"));
  }
  const Parallel par(1);
  for (const auto& [id, plane] : {std::pair{"1", Shape{1, 1, 1, 1}}, {"2", Shape{1, 1, 2, 2}}}) {
    INFO(id);
    const Model sub = irrun::extract_layer(m, id);
    const auto out = run_model(
        sub, {{sub.graph.parameters[0], iota_tensor(ElementType::f32, {1, 1, 2, 2})}}, par);
    REQUIRE(out.size() == 1);
    CHECK(out[0].tensor.shape == plane);
  }
  // A name wins over an id: "7" is layer 3's name (layer 7 does not exist anyway).
  CHECK_NOTHROW(irrun::extract_layer(m, "7"));
  for (const char* bad : {"9", "", "-1", "1x"}) {
    INFO(bad);
    CHECK_THROWS_WITH(irrun::extract_layer(m, bad), Catch::Contains("(nor with that id)"));
  }
}

TEST_CASE("output_name: the Result's input tensor name, else (v11) the Result's name",
          "[executor]") {
  // pa's port has two names (the first wins, "\," is an escaped comma); pb's has none.
  const auto xml = net(
      parameter(0, "x", "1,1,2,2", {1, 1, 2, 2}) +
          avg_pool(1, "pa", "opset1", kK2S2, {1, 1, 2, 2}, {1, 1, 1, 1}, "FP32", "a\\,b,second") +
          avg_pool(2, "pb", "opset1", kK2S2, {1, 1, 2, 2}, {1, 1, 1, 1}) +
          result(3, "ra", {1, 1, 1, 1}) + result(4, "rb", {1, 1, 1, 1}),
      edge(0, 0, 1, 0) + edge(0, 0, 2, 0) + edge(1, 1, 3, 0) + edge(2, 1, 4, 0));
  const Model m = model_from_xml(xml);
  CHECK(irrun::output_name(m, 3) == "a,b");
  CHECK(irrun::output_name(m, 4) == "rb");

  const Parallel par(1);
  const auto out =
      run_model(m, {{0, make_tensor(ElementType::f32, {1, 1, 2, 2}, {1, 2, 3, 5})}}, par);
  REQUIRE(out.size() == 2);
  CHECK(values_of(output_named(out, "a,b").tensor) == std::vector<double>{2.75});
  CHECK(values_of(output_named(out, "rb").tensor) == std::vector<double>{2.75});

  // v10: update_v10_model names an unnamed output after its producer; declared names still win.
  auto v10 = xml;
  v10.replace(v10.find("version=\"11\""), 12, "version=\"10\"");
  const Model m10 = model_from_xml(v10);
  CHECK(irrun::output_name(m10, 3) == "a,b");
  CHECK(irrun::output_name(m10, 4) == "pb");
}

TEST_CASE("output_names: two Results of one tensor are told apart as Network::outputs does",
          "[executor]") {
  // Both Results read tensor "t"; a third output is named "t_1" already. Before, run_model
  // named both "t" (summaries and --expect lines could not say which), while Network::outputs()
  // said "t" and "t_1".
  const auto xml = net(
      parameter(0, "x", "1,1,2,2", {1, 1, 2, 2}) +
          avg_pool(1, "p", "opset1", kK2S2, {1, 1, 2, 2}, {1, 1, 1, 1}, "FP32", "t") +
          avg_pool(2, "q", "opset1", kK2S2, {1, 1, 2, 2}, {1, 1, 1, 1}, "FP32", "t_1") +
          result(3, "r1", {1, 1, 1, 1}) + result(4, "r2", {1, 1, 1, 1}) +
          result(5, "r3", {1, 1, 1, 1}),
      edge(0, 0, 1, 0) + edge(0, 0, 2, 0) + edge(1, 1, 3, 0) + edge(1, 1, 4, 0) + edge(2, 1, 5, 0));
  const Model m = model_from_xml(xml);
  CHECK(irrun::output_names(m) == std::vector<std::string>{"t", "t_1", "t_1_1"});
  CHECK(irrun::output_name(m, 4) == "t_1");
  const Parallel par(1);
  const auto out =
      run_model(m, {{0, make_tensor(ElementType::f32, {1, 1, 2, 2}, {1, 2, 3, 5})}}, par);
  REQUIRE(out.size() == 3);
  CHECK(output_named(out, "t").result_layer == 3);
  CHECK(output_named(out, "t_1").result_layer == 4);
  CHECK(output_named(out, "t_1_1").result_layer == 5);
}

TEST_CASE("output_name of a v10 producer with several outputs: name.i", "[executor]") {
  // The op's output count decides: MaxPool-8 has two even where one port is declared; an
  // opaque op has its ports'.
  const auto xml = [](const std::string& version) {
    return "<?xml version=\"1.0\"?>\n<net name=\"test\" version=\"" + version + "\">\n<layers>\n" +
           parameter(0, "x", "1,1,2,2", {1, 1, 2, 2}) +
           layer(1, "mp", "MaxPool", "opset8",
                 "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\"",
                 port(0, {1, 1, 2, 2}), port(1, {1, 1, 1, 1})) +
           layer(2, "op", "Custom", "extension", "", port(0, {1, 1, 2, 2}),
                 port(1, {1, 1, 2, 2}) + port(2, {1, 1, 2, 2})) +
           result(3, "r0", {1, 1, 1, 1}) + result(4, "r1", {1, 1, 2, 2}) +
           result(5, "r2", {1, 1, 2, 2}) + "</layers>\n<edges>\n" + edge(0, 0, 1, 0) +
           edge(0, 0, 2, 0) + edge(1, 1, 3, 0) + edge(2, 2, 4, 0) + edge(2, 1, 5, 0) +
           "</edges>\n</net>\n";
  };
  const Model m10 = model_from_xml(xml("10"));
  CHECK(irrun::output_name(m10, 3) == "mp.0");
  CHECK(irrun::output_name(m10, 4) == "op.1");
  CHECK(irrun::output_name(m10, 5) == "op.0");
  const Model m11 = model_from_xml(xml("11"));
  CHECK(irrun::output_name(m11, 3) == "r0");
  CHECK(irrun::output_name(m11, 4) == "r1");
}

namespace {

// Parameter x -> MaxPool `version` (values port 1, indices port 2 from v8) -> Results.
Model max_pool_model(const std::string& version, const std::string& data, const std::string& type,
                     const std::string& precision, const Shape& in, const Shape& out,
                     const std::string& index_precision = "I64") {
  const bool indices = version != "opset1";
  std::string shape;  // "1,1,4,4"
  for (auto d : in) {
    if (!shape.empty()) shape += ',';
    shape += std::to_string(d);
  }
  return model_from_xml(net(
      parameter(0, "x", shape, in, type, precision) +
          layer(1, "mp", "MaxPool", version, data, port(0, in, precision),
                port(1, out, precision, "values") +
                    (indices ? port(2, out, index_precision, "indices") : "")) +
          result(2, "r0", out, precision) + (indices ? result(3, "r1", out, index_precision) : ""),
      edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + (indices ? edge(1, 2, 3, 0) : "")));
}

const std::string kMaxK2S2 =
    "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\" rounding_type=\"floor\"";

}  // namespace

TEST_CASE("MaxPool-8 returns values and indices as two outputs", "[executor]") {
  // x = 0..15 over 4x4: the maxima of the 2x2 blocks are 5, 7, 13, 15 at those positions.
  const Model m =
      max_pool_model("opset8", kMaxK2S2 + " axis=\"0\"", "f32", "FP32", {1, 1, 4, 4}, {1, 1, 2, 2});
  const Parallel par(2);
  const auto outputs = run_model(m, {{0, iota_tensor(ElementType::f32, {1, 1, 4, 4})}}, par);
  REQUIRE(outputs.size() == 2);
  const auto& values = output_named(outputs, "values");
  const auto& indices = output_named(outputs, "indices");
  CHECK(values.tensor.type == ElementType::f32);
  CHECK(values_of(values.tensor) == std::vector<double>{5, 7, 13, 15});
  CHECK(indices.tensor.type == ElementType::i64);
  CHECK(indices.tensor.shape == Shape{1, 1, 2, 2});
  CHECK(values_of(indices.tensor) == std::vector<double>{5, 7, 13, 15});
}

TEST_CASE("MaxPool-8's indices that no layer reads are not computed", "[executor]") {
  // The indices port left unconnected (as IRs converted from ONNX leave it): the values are
  // those of the model that returns both, and the kernel writes the values alone (its bytes: the
  // input's and the values').
  const Shape in{1, 1, 4, 4}, out{1, 1, 2, 2};
  const Model m = model_from_xml(
      net(parameter(0, "x", "1,1,4,4", in, "f32", "FP32") +
              layer(1, "mp", "MaxPool", "opset8", kMaxK2S2, port(0, in, "FP32"),
                    port(1, out, "FP32", "values") + port(2, out, "I64", "indices")) +
              result(2, "r0", out, "FP32"),
          edge(0, 0, 1, 0) + edge(1, 1, 2, 0)));
  const Model both = max_pool_model("opset8", kMaxK2S2, "f32", "FP32", in, out);
  const Parallel par(1);
  std::size_t bytes = 0;
  const auto count = [&](std::size_t, double, std::size_t b) { bytes += b; };
  const auto outputs = run_model(m, {{0, iota_tensor(ElementType::f32, in)}}, par, count);
  REQUIRE(outputs.size() == 1);
  CHECK(bytes == (16 + 4) * sizeof(float));
  const auto want = run_model(both, {{0, iota_tensor(ElementType::f32, in)}}, par);
  CHECK(values_of(outputs[0].tensor) == values_of(output_named(want, "values").tensor));
  CHECK(values_of(outputs[0].tensor) == std::vector<double>{5, 7, 13, 15});
}

TEST_CASE("MaxPool-1 has one output; MaxPool runs integer types", "[executor]") {
  const Model m = max_pool_model("opset1", kMaxK2S2, "i32", "I32", {1, 2, 2, 2}, {1, 2, 1, 1});
  Tensor in = Tensor::zeros(ElementType::i32, {1, 2, 2, 2});
  const std::int32_t data[] = {-3, -1, -2, -4, 7, 9, 9, 8};
  for (std::size_t i = 0; i < 8; ++i) in.mutable_data<std::int32_t>()[i] = data[i];
  const Parallel par(1);
  const auto outputs = run_model(m, {{0, in}}, par);
  REQUIRE(outputs.size() == 1);
  CHECK(outputs[0].tensor.type == ElementType::i32);
  CHECK(values_of(outputs[0].tensor) == std::vector<double>{-1, 9});
}

TEST_CASE("MaxPool with an element type its kernel does not run", "[executor]") {
  const Model m = max_pool_model("opset8", kMaxK2S2, "i4", "I4", {1, 1, 2, 2}, {1, 1, 1, 1});
  const auto e = run_error(m, {});
  CHECK(e.code() == ExitCode::unsupported);
  INFO(e.what());
  CHECK(contains(e.what(), "'mp'"));
  CHECK(contains(e.what(), "element type i4 is not executed"));
  CHECK(contains(e.what(), "u8, u16, u32 and u64)"));
}

TEST_CASE("extract_layer on a MaxPool-8: one Result per output", "[executor]") {
  const Model m = max_pool_model("opset8", kMaxK2S2 + " index_element_type=\"i32\" axis=\"-2\"",
                                 "f32", "FP32", {1, 2, 2, 2}, {1, 2, 1, 1}, "I32");
  const Model sub = irrun::extract_layer(m, "mp");
  REQUIRE(sub.graph.results.size() == 2);
  const Parallel par(1);
  const auto outputs =
      run_model(sub, {{layer_index(sub, "x"), iota_tensor(ElementType::f32, {1, 2, 2, 2})}}, par);
  REQUIRE(outputs.size() == 2);
  CHECK(values_of(output_named(outputs, "values").tensor) == std::vector<double>{3, 7});
  // axis -2 is axis 2 of the rank-4 input: positions restart per (n, c) plane.
  const auto& indices = output_named(outputs, "indices").tensor;
  CHECK(indices.type == ElementType::i32);
  CHECK(values_of(indices) == std::vector<double>{3, 3});
}

TEST_CASE("a Const data input at an offset misaligned for its type is read aligned",
          "[executor][int]") {
  // The i64 Const starts at byte 3 of the weights: the kernel must not read it in place (a
  // misaligned typed load is undefined behaviour; scripts/test-sanitizers reports it).
  const std::string k12 =
      "kernel=\"1,2\" strides=\"1,2\" pads_begin=\"0,0\" pads_end=\"0,0\" exclude-pad=\"true\" "
      "rounding_type=\"floor\" auto_pad=\"explicit\"";
  const auto xml = net(layer(0, "c", "Const", "opset1",
                             "element_type=\"i64\" shape=\"1,1,1,4\" offset=\"3\" size=\"32\"", "",
                             port(0, {1, 1, 1, 4}, "I64", "c")) +
                           avg_pool(1, "p", "opset1", k12, {1, 1, 1, 4}, {1, 1, 1, 2}, "I64", "p") +
                           result(2, "r", {1, 1, 1, 2}, "I64"),
                       edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
  const Model m = model_from_xml(xml, i64_weights(3, {-7, 0, 9, 2}));
  const auto outputs = run_model(m, {}, Parallel(1));
  REQUIRE(outputs.size() == 1);
  const Tensor& t = outputs[0].tensor;
  REQUIRE(t.shape == Shape{1, 1, 1, 2});
  // -7/2 truncates to -3, 11/2 to 5.
  CHECK(t.data<std::int64_t>()[0] == -3);
  CHECK(t.data<std::int64_t>()[1] == 5);
}

TEST_CASE("run_model: a v10 IR's outputs come in OpenVINO's legacy types, a v11 IR's in theirs",
          "[executor]") {
  struct Case {
    const char* type;       // the Parameter's element type
    const char* precision;  // its port precision
    ElementType v10;        // update_v10_model: i64/u64/i32/u32 as i32, the rest but f32 as f32
  };
  const Case cases[] = {
      {"f32", "FP32", ElementType::f32},  {"f16", "FP16", ElementType::f32},
      {"bf16", "BF16", ElementType::f32}, {"f64", "FP64", ElementType::f32},
      {"i8", "I8", ElementType::f32},     {"u8", "U8", ElementType::f32},
      {"i16", "I16", ElementType::f32},   {"u16", "U16", ElementType::f32},
      {"i32", "I32", ElementType::i32},   {"u32", "U32", ElementType::i32},
      {"i64", "I64", ElementType::i32},   {"u64", "U64", ElementType::i32},
  };
  const Parallel par(1);
  for (const auto& c : cases) {
    INFO(c.type);
    const auto v11 =
        net(parameter(0, "x", "1,1,2,4", {1, 1, 2, 4}, c.type, c.precision) +
                avg_pool(1, "p", "opset1", kK2S2, {1, 1, 2, 4}, {1, 1, 1, 2}, c.precision) +
                result(2, "r", {1, 1, 1, 2}, c.precision),
            edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
    auto v10 = v11;
    v10.replace(v10.find("version=\"11\""), 12, "version=\"10\"");
    const auto type = irrun::parse_element_type_name(c.type).value();
    const auto in = iota_tensor(type, {1, 1, 2, 4});  // windows {0,1,4,5}, {2,3,6,7}
    const auto m11 = model_from_xml(v11), m10 = model_from_xml(v10);
    const auto out11 = run_model(m11, {{0, in}}, par);
    const auto out10 = run_model(m10, {{0, in}}, par);
    REQUIRE(out11.size() == 1);
    REQUIRE(out10.size() == 1);
    CHECK(out11[0].tensor.type == type);
    CHECK(out10[0].tensor.type == c.v10);
    CHECK(irrun::v10_output_type(type) == c.v10);
    CHECK(values_of(out10[0].tensor) == values_of(out11[0].tensor));  // exact here
  }
}
