// Tests of run_model's write_into (lib/src/executor.cpp): pooling outputs computed straight into
// caller tensors, and the cases that fall back to irrun's memory. (A file of its own so that
// branches adding ops to executor_test.cpp do not collide with it.)
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "irrun/error.hpp"
#include "irrun/executor.hpp"
#include "support/ir_text.hpp"

using irrun::ElementType;
using irrun::ExitCode;
using irrun::Model;
using irrun::Parallel;
using irrun::Tensor;
using namespace irrun::testing;

namespace {

using Shape = std::vector<std::int64_t>;

// x [1,1,4,4] -> p (k2 s2) -> r [1,1,2,2]; p also feeds a second Result r2.
Model two_results() {
  const std::string k2 =
      "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\" exclude-pad=\"true\" "
      "rounding_type=\"floor\" auto_pad=\"explicit\"";
  return model_from_xml(net(parameter(0, "x", "1,1,4,4", {1, 1, 4, 4}) +
                                avg_pool(1, "p", "opset1", k2, {1, 1, 4, 4}, {1, 1, 2, 2}) +
                                result(2, "r", {1, 1, 2, 2}) + result(3, "r2", {1, 1, 2, 2}),
                            edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + edge(1, 1, 3, 0)));
}

// 4x4 iota: windows {0,1,4,5}, {2,3,6,7}, {8,9,12,13}, {10,11,14,15}.
const std::vector<float> kPooled{2.5f, 4.5f, 10.5f, 12.5f};

std::vector<float> iota16() {
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>(i);
  return v;
}

}  // namespace

TEST_CASE("run_model computes a pooling output straight into the caller's tensor", "[executor]") {
  const Model m = two_results();
  const Parallel par(1);
  const auto x = iota16();
  std::vector<float> r(4, -1.0f), r2(4, -1.0f);
  const auto outs =
      run_model(m, {{0, Tensor::wrap(ElementType::f32, {1, 1, 4, 4}, x.data())}}, par, {},
                {{2, Tensor::wrap(ElementType::f32, {1, 1, 2, 2}, r.data())},
                 {3, Tensor::wrap(ElementType::f32, {1, 1, 2, 2}, r2.data())}});
  CHECK(r == kPooled);
  REQUIRE(outs.size() == 2);
  // Both Results return the one value, which lives in the first Result's tensor; r2 is untouched
  // (the caller copies it).
  for (const auto& o : outs) CHECK(o.tensor.data<float>() == r.data());
  CHECK(r2 == std::vector<float>(4, -1.0f));
}

TEST_CASE("run_model does not compute into a tensor overlapping an input", "[executor]") {
  const Model m = two_results();
  const Parallel par(1);
  auto x = iota16();
  const auto outs = run_model(m, {{0, Tensor::wrap(ElementType::f32, {1, 1, 4, 4}, x.data())}}, par,
                              {}, {{2, Tensor::wrap(ElementType::f32, {1, 1, 2, 2}, x.data())}});
  REQUIRE(outs.size() == 2);
  CHECK(outs[0].tensor.data<float>() != x.data());
  CHECK(std::vector<float>(outs[0].tensor.data<float>(), outs[0].tensor.data<float>() + 4) ==
        kPooled);
  CHECK(x == iota16());
}

TEST_CASE("run_model refuses a mismatching write_into tensor before compute", "[executor]") {
  const Model m = two_results();
  const Parallel par(1);
  const auto x = iota16();
  std::vector<double> r(4, -1.0);
  const auto error = [&](Tensor into) -> std::string {
    try {
      run_model(m, {{0, Tensor::wrap(ElementType::f32, {1, 1, 4, 4}, x.data())}}, par, {},
                {{2, into}});
    } catch (const irrun::Error& e) {
      CHECK(e.code() == ExitCode::bad_input);
      return e.what();
    }
    FAIL("no error");
    return "";
  };
  CHECK_THAT(error(Tensor::wrap(ElementType::f64, {1, 1, 2, 2}, r.data())),
             Catch::Contains("output 'r' is f32 [1,1,2,2], the tensor given for it is f64"));
  CHECK_THAT(error(Tensor::wrap(ElementType::f32, {1, 2, 2}, r.data())),
             Catch::Contains("the tensor given for it is f32 [1,2,2]"));
  CHECK_THAT(
      error(Tensor::wrap(ElementType::f32, {1, 1, 2, 2}, static_cast<const double*>(r.data()))),
      Catch::Contains("read-only"));
  CHECK(r == std::vector<double>(4, -1.0));
}

TEST_CASE("run_model takes a v10 IR's write_into tensors in the types it hands out", "[executor]") {
  // two_results() as f64 in a v10 IR: its outputs are handed out as f32.
  auto xml = net(parameter(0, "x", "1,1,4,4", {1, 1, 4, 4}, "f64", "FP64") +
                     avg_pool(1, "p", "opset1",
                              "kernel=\"2,2\" strides=\"2,2\" pads_begin=\"0,0\" pads_end=\"0,0\"",
                              {1, 1, 4, 4}, {1, 1, 2, 2}, "FP64") +
                     result(2, "r", {1, 1, 2, 2}, "FP64"),
                 edge(0, 0, 1, 0) + edge(1, 1, 2, 0));
  xml.replace(xml.find("version=\"11\""), 12, "version=\"10\"");
  const Model m = model_from_xml(xml);
  const Parallel par(1);
  std::vector<double> x(16);
  for (std::size_t i = 0; i < 16; ++i) x[i] = static_cast<double>(i);
  std::vector<float> r(4, -1.0f);
  const auto outs = run_model(m, {{0, Tensor::wrap(ElementType::f64, {1, 1, 4, 4}, x.data())}}, par,
                              {}, {{2, Tensor::wrap(ElementType::f32, {1, 1, 2, 2}, r.data())}});
  REQUIRE(outs.size() == 1);
  CHECK(outs[0].tensor.type == ElementType::f32);  // computed in f64, then converted into r
  CHECK(outs[0].tensor.data<float>() == r.data());
  CHECK(r == kPooled);
  // A tensor overlapping the input is not converted into (x would change under a later layer).
  std::vector<double> xr(x);
  const auto aside =
      run_model(m, {{0, Tensor::wrap(ElementType::f64, {1, 1, 4, 4}, xr.data())}}, par, {},
                {{2, Tensor::wrap(ElementType::f32, {1, 1, 2, 2}, xr.data() + 14)}});
  CHECK(aside[0].tensor.data<float>() != static_cast<const void*>(xr.data() + 14));
  CHECK(std::vector<float>(aside[0].tensor.data<float>(), aside[0].tensor.data<float>() + 4) ==
        kPooled);
  CHECK(xr == x);
  std::vector<double> r64(4);
  CHECK_THROWS_WITH(run_model(m, {{0, Tensor::wrap(ElementType::f64, {1, 1, 4, 4}, x.data())}}, par,
                              {}, {{2, Tensor::wrap(ElementType::f64, {1, 1, 2, 2}, r64.data())}}),
                    Catch::Contains("output 'p' is f32 [1,1,2,2], the tensor given for it is f64"));
}
