// Tests of binding input blobs to a model's Parameters (lib/src/inputs.cpp): `FILE` and
// `NAME=FILE` (Parameter or tensor name), raw .bin and .npy files, float .npy conversion,
// `--shape` for dynamic Parameters, `--random-input --seed`, and every kind of mistake, each an
// irrun::Error with ExitCode::bad_input whose message names the input, what was expected and what
// was found.
#include "irrun/inputs.hpp"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "irrun/dim.hpp"
#include "irrun/error.hpp"
#include "irrun/npy.hpp"
#include "support/ir_text.hpp"

using irrun::BoundInputs;
using irrun::ElementType;
using irrun::ExitCode;
using irrun::InputOptions;
using irrun::Model;
using irrun::Tensor;
using irrun::testing::bits16_of;
using irrun::testing::edge;
using irrun::testing::make_tensor;
using irrun::testing::model_from_xml;
using irrun::testing::net;
using irrun::testing::parameter;
using irrun::testing::result;
using irrun::testing::values_of;

namespace {

namespace fs = std::filesystem;
using Shape = std::vector<std::int64_t>;

struct TempDir {
  fs::path path;
  TempDir() {
    std::random_device rd;
    path = fs::temp_directory_path() /
           ("irrun-inputs-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path / name).string(); }

  // Writes the bytes of `values` (native = little-endian on the test machines) to `name`.
  template <class T>
  std::string raw(const std::string& name, const std::vector<T>& values) const {
    const auto p = file(name);
    std::ofstream out(p, std::ios::binary);
    out.write(reinterpret_cast<const char*>(values.data()),
              static_cast<std::streamsize>(values.size() * sizeof(T)));
    return p;
  }
  std::string npy(const std::string& name, const Tensor& t) const {
    const auto p = file(name);
    irrun::write_npy(p, t);
    return p;
  }
};

// image: f32 [1,1,2,3], tensor names "image_t" and "img"; mask: f16 [1,1,2,2], tensor "mask".
Model two_inputs() {
  return model_from_xml(
      net(parameter(0, "image", "1,1,2,3", {1, 1, 2, 3}, "f32", "FP32", "image_t,img") +
              parameter(1, "mask", "1,1,2,2", {1, 1, 2, 2}, "f16", "FP16", "mask") +
              result(2, "r_image", {1, 1, 2, 3}) + result(3, "r_mask", {1, 1, 2, 2}, "FP16"),
          edge(0, 0, 2, 0) + edge(1, 0, 3, 0)));
}

// x: f32 [1,1,2,2].
Model one_input() {
  return model_from_xml(net(
      parameter(0, "x", "1,1,2,2", {1, 1, 2, 2}) + result(1, "r", {1, 1, 2, 2}), edge(0, 0, 1, 0)));
}

// d: f32 [1,1,?,?].
Model dynamic_input() {
  return model_from_xml(
      net(parameter(0, "d", "1,1,?,?", {1, 1, -1, -1}) + result(1, "r", {1, 1, -1, -1}),
          edge(0, 0, 1, 0)));
}

InputOptions files(std::initializer_list<std::string> inputs) {
  InputOptions o;
  o.inputs = inputs;
  return o;
}

// The message of the bad_input error bind_inputs throws (FAILs on success or another error).
std::string bind_error(const Model& m, const InputOptions& options) {
  try {
    bind_inputs(m, options);
  } catch (const irrun::Error& e) {
    CHECK(e.code() == ExitCode::bad_input);
    return e.what();
  }
  FAIL("bind_inputs accepted the inputs");
  return "";
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST_CASE("a bare FILE feeds the only input", "[inputs]") {
  TempDir dir;
  const auto bin = dir.raw<float>("x.bin", {1, 2, 3, 4});
  const auto bound = bind_inputs(one_input(), files({bin}));
  REQUIRE(bound.tensors.size() == 1);
  const Tensor& t = bound.tensors.at(0);
  CHECK(t.type == ElementType::f32);
  CHECK(t.shape == Shape{1, 1, 2, 2});
  CHECK(values_of(t) == std::vector<double>{1, 2, 3, 4});
  CHECK(bound.notes.empty());
}

TEST_CASE("NAME=FILE by Parameter name and by tensor name", "[inputs]") {
  TempDir dir;
  const Model m = two_inputs();
  const auto image = dir.raw<float>("image.bin", {1, 2, 3, 4, 5, 6});
  // f16 1, 2, 0.5, -3.
  const auto mask = dir.raw<std::uint16_t>("mask.bin", {0x3C00, 0x4000, 0x3800, 0xC200});

  for (const auto& image_name : {"image", "image_t", "img"}) {
    CAPTURE(image_name);
    const auto bound =
        bind_inputs(m, files({std::string(image_name) + "=" + image, "mask=" + mask}));
    REQUIRE(bound.tensors.size() == 2);
    CHECK(bound.tensors.at(0).type == ElementType::f32);
    CHECK(bound.tensors.at(0).shape == Shape{1, 1, 2, 3});
    CHECK(values_of(bound.tensors.at(0)) == std::vector<double>{1, 2, 3, 4, 5, 6});
    CHECK(bound.tensors.at(1).type == ElementType::f16);
    CHECK(values_of(bound.tensors.at(1)) == std::vector<double>{1, 2, 0.5, -3});
  }
  CHECK(irrun::find_parameter(m, "img") == std::optional<std::size_t>(0));
  CHECK(irrun::find_parameter(m, "mask") == std::optional<std::size_t>(1));
  CHECK_FALSE(irrun::find_parameter(m, "r_image").has_value());

  // An .npy file by name, in the Parameter's own dtype: no note.
  const auto npy =
      dir.npy("image.npy", make_tensor(ElementType::f32, {1, 1, 2, 3}, {6, 5, 4, 3, 2, 1}));
  const auto bound = bind_inputs(m, files({"img=" + npy, "mask=" + mask}));
  CHECK(values_of(bound.tensors.at(0)) == std::vector<double>{6, 5, 4, 3, 2, 1});
  CHECK(bound.notes.empty());
}

TEST_CASE("NAME=FILE: names with '=', and layer names before tensor names", "[inputs]") {
  TempDir dir;
  const auto image = dir.raw<float>("image.bin", {1, 2, 3, 4, 5, 6});
  const auto mask = dir.raw<std::uint16_t>("mask.bin", {0x3C00, 0x4000, 0x3800, 0xC200});
  // A Parameter named "a=b": the longest NAME that names a Parameter wins.
  const Model eq = model_from_xml(
      net(parameter(0, "a=b", "1,1,2,3", {1, 1, 2, 3}, "f32", "FP32", "a=b") +
              parameter(1, "m", "1,1,2,2", {1, 1, 2, 2}, "f16", "FP16", "m") +
              result(2, "r_image", {1, 1, 2, 3}) + result(3, "r_mask", {1, 1, 2, 2}, "FP16"),
          edge(0, 0, 2, 0) + edge(1, 0, 3, 0)));
  auto bound = bind_inputs(eq, files({"a=b=" + image, "m=" + mask}));
  CHECK(values_of(bound.tensors.at(0)) == std::vector<double>{1, 2, 3, 4, 5, 6});
  InputOptions shaped = files({"a=b=" + image, "m=" + mask});
  shaped.shapes = {"a=b=1,1,2,3"};
  CHECK(bind_inputs(eq, shaped).tensors.size() == 2);

  // "mask" is the layer name of one Parameter and a tensor name of the other: the layer wins
  // (a golden's manifest names its inputs by layer).
  const Model both = model_from_xml(
      net(parameter(0, "image", "1,1,2,3", {1, 1, 2, 3}, "f32", "FP32", "image,mask") +
              parameter(1, "mask", "1,1,2,2", {1, 1, 2, 2}, "f16", "FP16", "m2") +
              result(2, "r_image", {1, 1, 2, 3}) + result(3, "r_mask", {1, 1, 2, 2}, "FP16"),
          edge(0, 0, 2, 0) + edge(1, 0, 3, 0)));
  CHECK(irrun::find_parameter(both, "mask") == std::optional<std::size_t>(1));
  bound = bind_inputs(both, files({"image=" + image, "mask=" + mask}));
  CHECK(values_of(bound.tensors.at(1)) == std::vector<double>{1, 2, 0.5, -3});
}

TEST_CASE("an unknown NAME is rejected, listing the inputs", "[inputs]") {
  TempDir dir;
  const auto bin = dir.raw<float>("image.bin", {1, 2, 3, 4, 5, 6});
  const auto msg = bind_error(two_inputs(), files({"picture=" + bin}));
  INFO(msg);
  CHECK(has(msg, "'picture' is not an input"));
  CHECK(has(msg, "image, mask"));
}

TEST_CASE("a bare FILE is ambiguous when the model has several inputs", "[inputs]") {
  TempDir dir;
  const auto bin = dir.raw<float>("image.bin", {1, 2, 3, 4, 5, 6});
  const auto msg = bind_error(two_inputs(), files({bin}));
  INFO(msg);
  CHECK(has(msg, "2 inputs"));
  CHECK(has(msg, "NAME=FILE"));
}

TEST_CASE("a missing input needs --input or --random-input", "[inputs]") {
  TempDir dir;
  const auto image = dir.raw<float>("image.bin", {1, 2, 3, 4, 5, 6});
  const auto msg = bind_error(two_inputs(), files({"image=" + image}));
  INFO(msg);
  CHECK(has(msg, "no data for input 'mask' (f16 [1,1,2,2])"));
  CHECK(has(msg, "--input mask=FILE"));
  CHECK(has(msg, "--random-input"));
  // Nothing given at all: the first input is reported.
  CHECK(has(bind_error(two_inputs(), {}), "'image'"));
}

TEST_CASE("the same input given twice is rejected", "[inputs]") {
  TempDir dir;
  const auto image = dir.raw<float>("image.bin", {1, 2, 3, 4, 5, 6});
  const auto msg = bind_error(two_inputs(), files({"image=" + image, "img=" + image}));
  INFO(msg);
  CHECK(has(msg, "input 'image' (f32 [1,1,2,3]) is given twice"));
}

TEST_CASE("a raw .bin must have exactly the Parameter's byte size", "[inputs]") {
  TempDir dir;
  // image is f32 [1,1,2,3]: 24 bytes. 5 floats are 20, 7 are 28.
  for (std::size_t count : {5u, 7u}) {
    const auto bin = dir.raw<float>("image.bin", std::vector<float>(count, 1.0f));
    const auto mask = dir.raw<std::uint16_t>("mask.bin", {0, 0, 0, 0});
    const auto msg = bind_error(two_inputs(), files({"image=" + bin, "mask=" + mask}));
    INFO(msg);
    CHECK(has(msg, "'image'"));
    CHECK(has(msg, bin));
    CHECK(has(msg, "expected 24 bytes (f32 [1,1,2,3])"));
    CHECK(has(msg, "found " + std::to_string(count * 4)));
  }
  // The mask in f32 instead of f16: 16 bytes where 8 are expected.
  const auto image = dir.raw<float>("image.bin", {1, 2, 3, 4, 5, 6});
  const auto mask32 = dir.raw<float>("mask32.bin", {1, 2, 3, 4});
  const auto msg = bind_error(two_inputs(), files({"image=" + image, "mask=" + mask32}));
  INFO(msg);
  CHECK(has(msg, "'mask'"));
  CHECK(has(msg, "expected 8 bytes (f16 [1,1,2,2]), found 16"));
}

TEST_CASE(".npy dtypes: integers are rejected, other floats converted with a note", "[inputs]") {
  TempDir dir;
  const Model m = two_inputs();
  const auto mask = dir.raw<std::uint16_t>("mask.bin", {0, 0, 0, 0});

  SECTION("an int .npy for a float input") {
    Tensor ints = Tensor::zeros(ElementType::i32, {1, 1, 2, 3});
    const auto npy = dir.npy("ints.npy", ints);
    const auto msg = bind_error(m, files({"image=" + npy, "mask=" + mask}));
    INFO(msg);
    CHECK(has(msg, npy));
    CHECK(has(msg, "dtype i32 does not match input 'image' (f32 [1,1,2,3])"));
  }
  SECTION("an f64 .npy for an f32 input: round to nearest even") {
    // 1 + 2^-24 is halfway between 1 and 1 + 2^-23: ties to the even 1.
    // 1 + 3*2^-24 is halfway between 1 + 2^-23 and 1 + 2^-22: ties to the even 1 + 2^-22.
    // 1 + 2^-24 + 2^-40 is just above the halfway point: rounds up to 1 + 2^-23.
    const double u = 0x1p-24;
    const auto npy =
        dir.npy("f64.npy", make_tensor(ElementType::f64, {1, 1, 2, 3},
                                       {1 + u, 1 + 3 * u, 1 + u + 0x1p-40, 0.5, -2, 1e300}));
    const auto bound = bind_inputs(m, files({"image=" + npy, "mask=" + mask}));
    const Tensor& t = bound.tensors.at(0);
    CHECK(t.type == ElementType::f32);
    CHECK(t.shape == Shape{1, 1, 2, 3});
    CHECK(values_of(t) == std::vector<double>{1, 1 + 0x1p-22, 1 + 0x1p-23, 0.5, -2,
                                              std::numeric_limits<double>::infinity()});
    REQUIRE(bound.notes.size() == 1);
    INFO(bound.notes[0]);
    CHECK(has(bound.notes[0], npy));
    CHECK(has(bound.notes[0], "converted f64 to f32 (round to nearest even)"));
    CHECK(has(bound.notes[0], "'image'"));
    // 1e300 became inf: more than a rounding, so a warning says so.
    CHECK(bound.warnings ==
          std::vector<std::string>{npy + ": 1 finite value(s) past f32's range became infinite"});
  }
  SECTION("an f16 .npy for an f32 input is exact; values lost narrowing are counted") {
    const auto image = dir.npy("image16.npy", make_tensor(ElementType::f16, {1, 1, 2, 3},
                                                          {1, 65504, -0.5, 0x1p-24, 0, 3}));
    const auto wide = bind_inputs(m, files({"image=" + image, "mask=" + mask}));
    CHECK(values_of(wide.tensors.at(0)) == std::vector<double>{1, 65504, -0.5, 0x1p-24, 0, 3});
    REQUIRE(wide.notes.size() == 1);
    CHECK(has(wide.notes[0], "converted f16 to f32 (exact)"));
    CHECK(wide.warnings.empty());
    // f64 into f16: 1e5 becomes inf, -1e-30 and 2^-26 become -0 and +0; a 0 is not counted.
    const auto narrow = dir.npy(
        "mask64.npy", make_tensor(ElementType::f64, {1, 1, 2, 2}, {1e5, -1e-30, 0x1p-26, 0}));
    const auto image32 = dir.raw<float>("image.bin", {1, 2, 3, 4, 5, 6});
    const auto bound = bind_inputs(m, files({"image=" + image32, "mask=" + narrow}));
    CHECK(bits16_of(bound.tensors.at(1)) == std::vector<std::uint16_t>{0x7C00, 0x8000, 0, 0});
    CHECK(bound.warnings ==
          std::vector<std::string>{narrow + ": 1 finite value(s) past f16's range became infinite",
                                   narrow + ": 2 non-zero value(s) below f16's least subnormal "
                                            "became zero"});
    const auto specials =
        dir.npy("special.npy", make_tensor(ElementType::f64, {1, 1, 2, 2},
                                           {std::numeric_limits<double>::infinity(),
                                            -std::numeric_limits<double>::infinity(),
                                            std::numeric_limits<double>::quiet_NaN(), 0x1p-24}));
    CHECK(bind_inputs(m, files({"image=" + image32, "mask=" + specials})).warnings.empty());
  }
  SECTION("an f32 .npy for an f16 input") {
    // f16 ulp at 1 is 2^-10: 1 + 2^-11 ties to 1 (0x3C00), 1 + 3*2^-11 ties to 1 + 2^-9
    // (0x3C02). Near 2048 the ulp is 2: 2049 ties to 2048 (0x6800), 2051 to 2052 (0x6802).
    const auto image = dir.raw<float>("image.bin", {1, 2, 3, 4, 5, 6});
    const auto npy = dir.npy("mask.npy", make_tensor(ElementType::f32, {1, 1, 2, 2},
                                                     {1 + 0x1p-11, 1 + 3 * 0x1p-11, 2049, 2051}));
    const auto bound = bind_inputs(m, files({"image=" + image, "mask=" + npy}));
    const Tensor& t = bound.tensors.at(1);
    CHECK(t.type == ElementType::f16);
    CHECK(bits16_of(t) == std::vector<std::uint16_t>{0x3C00, 0x3C02, 0x6800, 0x6802});
    REQUIRE(bound.notes.size() == 1);
    CHECK(has(bound.notes[0], "converted f32 to f16"));
  }
}

TEST_CASE("integer Parameters: matching .npy and raw .bin load, other dtypes are rejected",
          "[inputs][int]") {
  TempDir dir;
  // q: i8 [1,1,2,2] (v10 spelling I8 on the port), w: i64 [1,1,2].
  const Model m = model_from_xml(net(parameter(0, "q", "1,1,2,2", {1, 1, 2, 2}, "i8", "I8") +
                                         parameter(1, "w", "1,1,2", {1, 1, 2}, "i64", "I64") +
                                         result(2, "rq", {1, 1, 2, 2}, "I8") +
                                         result(3, "rw", {1, 1, 2}, "I64"),
                                     edge(0, 0, 2, 0) + edge(1, 0, 3, 0)));
  const auto w = dir.raw<std::int64_t>("w.bin", {std::numeric_limits<std::int64_t>::min(), 7});

  SECTION("an int8 .npy and a raw i64 .bin") {
    const auto q = dir.npy("q.npy", make_tensor(ElementType::i8, {1, 1, 2, 2}, {-128, 127, -3, 0}));
    const auto bound = bind_inputs(m, files({"q=" + q, "w=" + w}));
    CHECK(bound.notes.empty());
    CHECK(bound.tensors.at(0).type == ElementType::i8);
    CHECK(values_of(bound.tensors.at(0)) == std::vector<double>{-128, 127, -3, 0});
    const Tensor& t = bound.tensors.at(1);
    CHECK(t.type == ElementType::i64);
    CHECK(t.data<std::int64_t>()[0] == std::numeric_limits<std::int64_t>::min());
    CHECK(t.data<std::int64_t>()[1] == 7);
  }
  SECTION("a float .npy for an integer input is an error, not a conversion") {
    const auto q = dir.npy("q.npy", make_tensor(ElementType::f32, {1, 1, 2, 2}, {1, 2, 3, 4}));
    const auto msg = bind_error(m, files({"q=" + q, "w=" + w}));
    INFO(msg);
    CHECK(msg.find('\n') == std::string::npos);
    CHECK(has(msg, q + ": dtype f32 does not match input 'q' (i8 [1,1,2,2])"));
    CHECK(has(msg, "numpy dtype int8"));
  }
  SECTION("another integer dtype is not converted either") {
    const auto q = dir.npy("q.npy", make_tensor(ElementType::i32, {1, 1, 2, 2}, {1, 2, 3, 4}));
    CHECK(has(bind_error(m, files({"q=" + q, "w=" + w})), "dtype i32 does not match input 'q'"));
    const auto u = dir.npy("u.npy", make_tensor(ElementType::u8, {1, 1, 2, 2}, {1, 2, 3, 4}));
    CHECK(has(bind_error(m, files({"q=" + u, "w=" + w})), "dtype u8 does not match input 'q'"));
  }
  SECTION("a raw .bin of the wrong byte size") {
    const auto q = dir.raw<std::int16_t>("q.bin", {1, 2, 3, 4});
    CHECK(has(bind_error(m, files({"q=" + q, "w=" + w})),
              "expected 4 bytes (i8 [1,1,2,2]), found 8"));
  }
  SECTION("random integer inputs: reproducible, with negatives, small values and extremes") {
    const Model big = model_from_xml(
        net(parameter(0, "q", "1,1,64,64", {1, 1, 64, 64}, "i8", "I8") +
                parameter(1, "w", "1,1,64,64", {1, 1, 64, 64}, "i64", "I64") +
                result(2, "rq", {1, 1, 64, 64}, "I8") + result(3, "rw", {1, 1, 64, 64}, "I64"),
            edge(0, 0, 2, 0) + edge(1, 0, 3, 0)));
    InputOptions o;
    o.random_seed = 3;
    const auto a = bind_inputs(big, o);
    const auto b = bind_inputs(big, o);
    for (std::size_t layer : {0u, 1u}) {
      const Tensor& t = a.tensors.at(layer);
      INFO(irrun::to_string(t.type));
      CHECK(std::memcmp(t.buffer.data(), b.tensors.at(layer).buffer.data(), t.byte_size()) == 0);
      const auto v = values_of(t);
      const double lo = t.type == ElementType::i8 ? -128.0 : -0x1p63;
      const double hi = t.type == ElementType::i8 ? 127.0 : 0x1p63;  // INT64_MAX as a double
      CHECK(std::count(v.begin(), v.end(), lo) > 0);
      CHECK(std::count(v.begin(), v.end(), hi) > 0);
      CHECK(std::count_if(v.begin(), v.end(), [](double x) { return x < 0 && x >= -16; }) > 1000);
      CHECK(std::count_if(v.begin(), v.end(), [](double x) { return x > 0 && x < 16; }) > 1000);
      if (t.type == ElementType::i64) {  // full-range values: far beyond the small ones
        CHECK(std::count_if(v.begin(), v.end(), [&](double x) {
                return std::abs(x) > 1e6 && x != lo && x != hi;
              }) > 100);
      }
    }
  }
}

TEST_CASE("an .npy whose shape does not fit the Parameter is rejected", "[inputs]") {
  TempDir dir;
  const auto mask = dir.raw<std::uint16_t>("mask.bin", {0, 0, 0, 0});
  for (const Shape& shape : {Shape{1, 1, 3, 2}, Shape{1, 2, 3}, Shape{2, 1, 2, 3}}) {
    const auto npy = dir.npy("image.npy", Tensor::zeros(ElementType::f32, shape));
    const auto msg = bind_error(two_inputs(), files({"image=" + npy, "mask=" + mask}));
    INFO(msg);
    CHECK(has(msg, "shape " + irrun::to_string(shape) +
                       " does not fit input 'image' (f32 "
                       "[1,1,2,3])"));
  }
}

TEST_CASE("a dynamic Parameter: .npy brings its shape, a raw .bin needs --shape", "[inputs]") {
  TempDir dir;
  const Model m = dynamic_input();
  const auto bin = dir.raw<float>("d.bin", {1, 2, 3, 4, 5, 6});

  // Without --shape.
  auto msg = bind_error(m, files({bin}));
  INFO(msg);
  CHECK(has(msg, "input 'd' (f32 [1,1,?,?]) has a dynamic shape"));
  CHECK(has(msg, "--shape d="));

  // With --shape, named or not (one input).
  for (const std::string shape : {"d=1,1,2,3", "1,1,3,2"}) {
    InputOptions o = files({bin});
    o.shapes = {shape};
    const auto bound = bind_inputs(m, o);
    const Tensor& t = bound.tensors.at(0);
    CHECK(t.shape == (shape[0] == 'd' ? Shape{1, 1, 2, 3} : Shape{1, 1, 3, 2}));
    CHECK(values_of(t) == std::vector<double>{1, 2, 3, 4, 5, 6});
  }
  // --shape and the file disagree on the byte size.
  InputOptions o = files({bin});
  o.shapes = {"d=1,1,2,2"};
  msg = bind_error(m, o);
  CHECK(has(msg, "expected 16 bytes (f32 [1,1,2,2]), found 24"));

  // An .npy needs no --shape, but must agree with one if given.
  const auto npy = dir.npy("d.npy", Tensor::zeros(ElementType::f32, {1, 1, 5, 7}));
  CHECK(bind_inputs(m, files({npy})).tensors.at(0).shape == Shape{1, 1, 5, 7});
  o = files({npy});
  o.shapes = {"d=1,1,7,5"};
  msg = bind_error(m, o);
  CHECK(has(msg, "shape [1,1,5,7] differs from --shape [1,1,7,5] for input 'd'"));
}

TEST_CASE("--shape must be static and fit the Parameter", "[inputs]") {
  TempDir dir;
  const Model m = dynamic_input();
  const auto bin = dir.raw<float>("d.bin", {1, 2, 3, 4});
  struct Case {
    std::string shape, expected;
  };
  for (const Case& c :
       {Case{"d=2,1,2,2", "[2,1,2,2] does not fit the input's shape [1,1,?,?]"},
        Case{"d=1,1,4", "[1,1,4] does not fit the input's shape [1,1,?,?]"},
        Case{"d=1,1,?,2", "'1,1,?,2' is not a static shape"},
        Case{"d=1,x,2,2", "--shape for input 'd'"}, Case{"e=1,1,2,2", "'e' is not an input"}}) {
    InputOptions o = files({bin});
    o.shapes = {c.shape};
    const auto msg = bind_error(m, o);
    INFO(c.shape << ": " << msg);
    CHECK(has(msg, c.expected));
    if (c.shape[0] == 'd') CHECK(has(msg, "input 'd' (f32 [1,1,?,?])"));
  }
  // A static Parameter: --shape must equal its shape.
  InputOptions o = files({dir.raw<float>("x.bin", {1, 2, 3, 4})});
  o.shapes = {"x=1,1,4,1"};
  const auto msg = bind_error(one_input(), o);
  CHECK(has(msg, "[1,1,4,1] does not fit the input's shape [1,1,2,2]"));
}

TEST_CASE("random inputs are reproducible, seed-dependent and differ between inputs", "[inputs]") {
  // Two f32 inputs of the same shape.
  const Model m = model_from_xml(
      net(parameter(0, "a", "1,1,4,4", {1, 1, 4, 4}) + parameter(1, "b", "1,1,4,4", {1, 1, 4, 4}) +
              result(2, "ra", {1, 1, 4, 4}) + result(3, "rb", {1, 1, 4, 4}),
          edge(0, 0, 2, 0) + edge(1, 0, 3, 0)));
  auto bytes = [](const Tensor& t) {
    return std::string(reinterpret_cast<const char*>(t.buffer.data()), t.byte_size());
  };
  auto random = [&](std::uint64_t seed) {
    InputOptions o;
    o.random_seed = seed;
    const auto bound = bind_inputs(m, o);
    REQUIRE(bound.tensors.size() == 2);
    return std::pair{bytes(bound.tensors.at(0)), bytes(bound.tensors.at(1))};
  };
  const auto s7 = random(7);
  CHECK(random(7) == s7);
  const auto s8 = random(8);
  CHECK(s8.first != s7.first);
  CHECK(s8.second != s7.second);
  CHECK(s7.first != s7.second);

  // Values in [-1, 1).
  InputOptions o;
  o.random_seed = 0;
  for (const auto& [layer, t] : bind_inputs(m, o).tensors) {
    CHECK(t.type == ElementType::f32);
    CHECK(t.shape == Shape{1, 1, 4, 4});
    for (double v : values_of(t)) CHECK((v >= -1 && v < 1));
  }

  // A given input is kept; only the other one is generated.
  TempDir dir;
  o = files({"b=" + dir.raw<float>("b.bin", std::vector<float>(16, 0.25f))});
  o.random_seed = 7;
  const auto bound = bind_inputs(m, o);
  CHECK(bytes(bound.tensors.at(0)) == s7.first);
  CHECK(values_of(bound.tensors.at(1)) == std::vector<double>(16, 0.25));
}

TEST_CASE("a random dynamic input needs --shape", "[inputs]") {
  const Model m = dynamic_input();
  InputOptions o;
  o.random_seed = 1;
  const auto msg = bind_error(m, o);
  INFO(msg);
  CHECK(has(msg, "input 'd' (f32 [1,1,?,?]) has a dynamic shape"));
  o.shapes = {"d=1,1,3,5"};
  CHECK(bind_inputs(m, o).tensors.at(0).shape == Shape{1, 1, 3, 5});
}

TEST_CASE("an unreadable input file or a directory is rejected", "[inputs]") {
  TempDir dir;
  const Model m = one_input();
  for (const auto& path : {dir.file("missing.bin"), dir.file("missing.npy")}) {
    const auto msg = bind_error(m, files({path}));
    INFO(msg);
    CHECK(has(msg, "'x'"));
    CHECK(has(msg, path));
    CHECK(has(msg, "cannot open"));
  }
  fs::create_directories(dir.file("sub.npy"));
  for (const auto& path : {dir.path.string(), dir.file("sub.npy")}) {
    const auto msg = bind_error(m, files({"x=" + path}));
    INFO(msg);
    CHECK(has(msg, "'x'"));
    CHECK(has(msg, "is a directory"));
  }
  // Not an .npy at all.
  const auto fake = dir.raw<float>("fake.npy", {1, 2, 3, 4});
  const auto msg = bind_error(m, files({fake}));
  INFO(msg);
  CHECK(has(msg, "'x'"));
  CHECK(has(msg, fake));
}

TEST_CASE("a v10 IR's f16 input takes a raw blob in f32, as OpenVINO exposes it", "[inputs]") {
  TempDir dir;
  auto v10 = [](Model m) {
    m.ir.ir_version = 10;
    return m;
  };
  const auto f32 = dir.raw<float>("m32.bin", {1.0f, 2.5f, 1.0f + 0x1p-11f, 65520.0f});
  const auto f16 = dir.raw<std::uint16_t>("m16.bin", {0x3C00, 0x4100, 0x3C00, 0x7BFF});
  const auto image = dir.raw<float>("image.bin", {1, 2, 3, 4, 5, 6});
  // v10: f32's size is read as f32 and rounded to f16 (1 + 2^-11 is a tie: to even, 1;
  // 65520 rounds to infinity), with a note; f16's size is read as f16.
  const auto b = bind_inputs(v10(two_inputs()), files({"image=" + image, "mask=" + f32}));
  CHECK(bits16_of(b.tensors.at(1)) == std::vector<std::uint16_t>{0x3C00, 0x4100, 0x3C00, 0x7C00});
  REQUIRE(b.notes.size() == 1);
  CHECK(has(b.notes[0], "read as f32, as OpenVINO takes a v10 IR's f16 inputs"));
  const auto h = bind_inputs(v10(two_inputs()), files({"image=" + image, "mask=" + f16}));
  CHECK(bits16_of(h.tensors.at(1)) == std::vector<std::uint16_t>{0x3C00, 0x4100, 0x3C00, 0x7BFF});
  CHECK(h.notes.empty());
  // 65520 became inf: the warning says so.
  CHECK(b.warnings ==
        std::vector<std::string>{f32 + ": 1 finite value(s) past f16's range became infinite"});
  // A size that is neither names both.
  const auto odd = dir.raw<std::uint16_t>("m12.bin", {1, 2, 3, 4, 5, 6});
  CHECK(bind_error(v10(two_inputs()), files({"image=" + image, "mask=" + odd})) ==
        odd +
            ": expected 8 bytes (f16 [1,1,2,2]) or 16 (f32, as OpenVINO takes a v10 IR's f16 "
            "inputs), found 12");
  // v11: only the Parameter's own type.
  CHECK(has(bind_error(two_inputs(), files({"image=" + image, "mask=" + f32})),
            "expected 8 bytes (f16 [1,1,2,2]), found 16"));
}
