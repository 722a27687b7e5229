// The MaxPool / AdaptiveMaxPool reference kernel against OpenVINO's reference rules
// (docs/openvino-semantics.md section 6; openvino/reference/max_pool.hpp and
// adaptive_max_pool.hpp): hand-checked cases per rule, then a differential test against the
// naive oracle in tests/support on random geometries, every element type and 1/2/3 threads.
#include "irrun/kernels/max_pool.hpp"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include "irrun/error.hpp"
#include "support/naive_max_pool.hpp"
#include "support/split_mix.hpp"

namespace {

using irrun::ElementType;
using irrun::Parallel;
using irrun::PoolGeometry;
using irrun::Tensor;
using irrun::testing::NaiveMaxSpec;
using Spec = NaiveMaxSpec;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kLowest = -std::numeric_limits<double>::max();  // stands for T's lowest()

template <class T>
ElementType type_of() {
  if constexpr (std::is_same_v<T, float>) return ElementType::f32;
  if constexpr (std::is_same_v<T, double>) return ElementType::f64;
  if constexpr (std::is_same_v<T, Eigen::half>) return ElementType::f16;
  if constexpr (std::is_same_v<T, Eigen::bfloat16>) return ElementType::bf16;
  if constexpr (std::is_same_v<T, std::int8_t>) return ElementType::i8;
  if constexpr (std::is_same_v<T, std::uint8_t>) return ElementType::u8;
  if constexpr (std::is_same_v<T, std::int16_t>) return ElementType::i16;
  if constexpr (std::is_same_v<T, std::uint16_t>) return ElementType::u16;
  if constexpr (std::is_same_v<T, std::int32_t>) return ElementType::i32;
  if constexpr (std::is_same_v<T, std::uint32_t>) return ElementType::u32;
  if constexpr (std::is_same_v<T, std::uint64_t>) return ElementType::u64;
  return ElementType::i64;
}

// kLowest maps to the type's lowest(); other values must be exact in T.
template <class T>
T to_t(double v) {
  if (v == kLowest) return std::numeric_limits<T>::lowest();
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(v);
  if constexpr (std::is_integral_v<T>) return static_cast<T>(v);
  return T(static_cast<float>(v));
}

template <class T>
double to_double(T v) {
  if (v == std::numeric_limits<T>::lowest()) return kLowest;
  return static_cast<double>(static_cast<float>(v));
}

template <class T>
Tensor tensor_of(const std::vector<std::int64_t>& shape, const std::vector<T>& v) {
  Tensor t = Tensor::zeros(type_of<T>(), shape);
  REQUIRE(t.element_count() == v.size());
  if (!v.empty()) std::memcpy(t.mutable_data<T>(), v.data(), v.size() * sizeof(T));
  return t;
}

PoolGeometry geometry_of(const Spec& s) {
  PoolGeometry g;
  g.batch = s.in[0];
  g.channels = s.in[1];
  g.spatial_rank = s.in.size() - 2;
  g.adaptive = s.adaptive;
  g.index_axis = static_cast<std::size_t>(s.axis);
  const std::size_t lead = 3 - g.spatial_rank;
  for (std::size_t a = 0; a < g.spatial_rank; ++a) {
    g.in[lead + a] = s.in[a + 2];
    g.out[lead + a] = s.out[a + 2];
    if (s.adaptive) continue;
    g.kernel[lead + a] = s.kernel[a];
    g.stride[lead + a] = s.stride[a];
    g.dilation[lead + a] = s.dilation[a];
    g.pad_begin[lead + a] = s.pads_begin[a];
  }
  return g;
}

template <class T, class I>
std::pair<std::vector<T>, std::vector<std::int64_t>> run(const Spec& s, const std::vector<T>& input,
                                                         const Parallel& par) {
  const Tensor in = tensor_of(s.in, input);
  Tensor values = Tensor::zeros(type_of<T>(), s.out);
  Tensor indices =
      Tensor::zeros(std::is_same_v<I, std::int32_t> ? ElementType::i32 : ElementType::i64, s.out);
  // Poison the outputs: an element the kernel forgets stays visibly wrong.
  std::memset(values.buffer.mutable_data(), 0x5A, values.byte_size());
  std::memset(indices.buffer.mutable_data(), 0x5A, indices.byte_size());
  irrun::kernels::max_pool(in, values, &indices, geometry_of(s), par);
  const T* v = values.data<T>();
  const I* i = indices.data<I>();
  return {std::vector<T>(v, v + values.element_count()),
          std::vector<std::int64_t>(i, i + indices.element_count())};
}

// ---- Hand-checkable cases, one per rule ----

struct HandCase {
  std::string name;
  Spec spec;
  std::vector<double> input;
  std::vector<double> values;
  std::vector<std::int64_t> indices;
};

// 1-D window pooling on [1, 1, in].
Spec window1d(std::int64_t in, std::int64_t out, std::int64_t k, std::int64_t s = 1,
              std::int64_t pb = 0, std::int64_t d = 1) {
  return {{1, 1, in}, {1, 1, out}, {k}, {s}, {d}, {pb}};
}

std::vector<HandCase> hand_cases() {
  // clang-format off
  return {
      {"ties keep the first tap", window1d(4, 3, 2), {3, 1, 3, 2}, {3, 3, 3}, {0, 2, 2}},
      {"equal taps: the first wins", window1d(3, 2, 2), {5, 5, 1}, {5, 5}, {0, 1}},
      {"NaN never wins", window1d(3, 1, 3), {kNaN, 1, 2}, {2}, {2}},
      {"NaN after the max is skipped", window1d(3, 1, 3), {1, kNaN, 0}, {1}, {0}},
      {"all NaN: lowest at index 0", window1d(2, 1, 2), {kNaN, kNaN}, {kLowest}, {0}},
      {"all -inf: lowest at index 0", window1d(2, 1, 2), {-kInf, -kInf}, {kLowest}, {0}},
      // Padding is -inf, not 0: a window of negatives over padding keeps the negative.
      {"padding acts as -inf", {{1, 1, 2}, {1, 1, 3}, {2}, {1}, {1}, {1}}, {-5, -7},
       {-5, -5, -7}, {0, 0, 1}},
      {"window entirely in padding: lowest at index 0",
       {{1, 1, 2}, {1, 1, 4}, {1}, {1}, {1}, {2}}, {1, 2}, {kLowest, kLowest, 1, 2},
       {0, 0, 0, 1}},
      // D=0 with pads 1/1 and K=2 is valid: one window, all padding.
      {"empty input axis", {{1, 1, 0}, {1, 1, 1}, {2}, {1}, {1}, {1}}, {}, {kLowest}, {0}},
      // Taps 0,2,4 / 1,3,5 / 2,4,6.
      {"dilation 2", window1d(7, 3, 3, 1, 0, 2), {7, 1, 6, 2, 5, 3, 4}, {7, 3, 6}, {0, 5, 2}},
      {"ceil overhang reads only the real cell", window1d(5, 3, 2, 2), {1, 2, 3, 4, 5},
       {2, 4, 5}, {1, 3, 4}},
      // D=3, K=2, s=2, p=1/1: ceil gives 3 windows, ceil_torch 2 (starts -1 and 1).
      {"ceil_torch geometry", window1d(3, 2, 2, 2, 1), {1, 3, 2}, {1, 3}, {0, 1}},
      // The third window starts at 3, in pads_end: no tap inside.
      {"ceil geometry (last window starts in pads_end)", window1d(3, 3, 2, 2, 1), {1, 3, 2},
       {1, 3, kLowest}, {0, 1, 0}},
      // N=2, C=2, W=2, one window per plane: positions in plane 1, 0, 1, 0.
      {"axis 0: over the whole tensor", {{2, 2, 2}, {2, 2, 1}, {2}, {2}, {1}, {0}, false, 0},
       {1, 2, 4, 3, 5, 6, 8, 7}, {2, 4, 6, 8}, {1, 2, 5, 6}},
      {"axis 1: per batch item", {{2, 2, 2}, {2, 2, 1}, {2}, {2}, {1}, {0}, false, 1},
       {1, 2, 4, 3, 5, 6, 8, 7}, {2, 4, 6, 8}, {1, 2, 1, 2}},
      {"axis 2: per plane", {{2, 2, 2}, {2, 2, 1}, {2}, {2}, {1}, {0}, false, 2},
       {1, 2, 4, 3, 5, 6, 8, 7}, {2, 4, 6, 8}, {1, 0, 1, 0}},
      // Identity 1x1 pooling on [1,1,2,3]: axis 3 counts within a row.
      {"axis 3: per row", {{1, 1, 2, 3}, {1, 1, 2, 3}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, false, 3},
       {1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6}, {0, 1, 2, 0, 1, 2}},
      // 2x2 windows, stride 2 over a 3x3 plane with pads 0/1 (ceil): row-major positions.
      {"2-D positions", {{1, 1, 3, 3}, {1, 1, 2, 2}, {2, 2}, {2, 2}, {1, 1}, {0, 0}},
       {1, 9, 2, 3, 4, 5, 8, 6, 7}, {9, 5, 8, 7}, {1, 5, 6, 8}},
      {"3-D window", {{1, 1, 2, 2, 2}, {1, 1, 1, 1, 1}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}},
       {1, 2, 3, 4, 8, 6, 7, 8}, {8}, {4}},
      // Bins [0,2) [1,4) [3,5).
      {"adaptive uneven bins", {{1, 1, 5}, {1, 1, 3}, {}, {}, {}, {}, true, 2},
       {3, 1, 4, 1, 5}, {3, 4, 5}, {0, 2, 4}},
      {"adaptive tie across rows keeps the earlier row",
       {{1, 1, 2, 2}, {1, 1, 1, 1}, {}, {}, {}, {}, true, 2}, {1, 2, 2, 1}, {2}, {1}},
      {"adaptive NaN at the bin's start wins", {{1, 1, 2}, {1, 1, 1}, {}, {}, {}, {}, true, 2},
       {kNaN, 5}, {kNaN}, {0}},
      {"adaptive NaN later is skipped", {{1, 1, 2}, {1, 1, 1}, {}, {}, {}, {}, true, 2},
       {5, kNaN}, {5}, {0}},
      // Row 1 starts with NaN, so its max_element is NaN and the row loses: 9 is not taken.
      {"adaptive NaN at a later row's start hides that row",
       {{1, 1, 2, 2}, {1, 1, 1, 1}, {}, {}, {}, {}, true, 2}, {1, 2, kNaN, 9}, {2}, {1}},
      // Indices are per (n, c) plane.
      {"adaptive indices restart per plane", {{1, 2, 3}, {1, 2, 1}, {}, {}, {}, {}, true, 2},
       {1, 3, 2, 6, 5, 4}, {3, 6}, {1, 0}},
  };
  // clang-format on
}

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || a == b;
}

}  // namespace

TEST_CASE("max_pool hand-checked cases", "[kernels][max_pool]") {
  const auto c = GENERATE(from_range(hand_cases()));
  INFO(c.name);
  std::vector<float> input;
  for (double v : c.input) input.push_back(to_t<float>(v));

  // The oracle must agree with the hand-written values too, or the random test means nothing.
  const auto oracle = irrun::testing::naive_max_pool(c.spec, input);
  CHECK(oracle.indices == c.indices);
  Parallel serial(1), threaded(3);
  for (const Parallel* par : {&serial, &threaded}) {
    const auto [values, indices] = run<float, std::int64_t>(c.spec, input, *par);
    const auto [values32, indices32] = run<float, std::int32_t>(c.spec, input, *par);
    REQUIRE(values.size() == c.values.size());
    for (std::size_t i = 0; i < values.size(); ++i) {
      INFO("output " << i);
      CHECK(same(to_double(values[i]), c.values[i]));
      CHECK(same(to_double(oracle.values[i]), c.values[i]));
      CHECK(same(to_double(values32[i]), c.values[i]));
    }
    CHECK(indices == c.indices);
    CHECK(indices32 == c.indices);
  }
}

TEMPLATE_TEST_CASE("max_pool element types: ties, padding and lowest", "[kernels][max_pool]", float,
                   double, Eigen::half, Eigen::bfloat16, std::int8_t, std::uint8_t, std::int16_t,
                   std::uint16_t, std::int32_t, std::uint32_t, std::int64_t, std::uint64_t) {
  using T = TestType;
  Parallel par(2);
  // Pads 1/1, K=2: {pad,3} {3,1} {1,3} {3,2} {2,pad}; then a window entirely in padding.
  const Spec s = {{1, 1, 4}, {1, 1, 6}, {2}, {1}, {1}, {1}};
  const auto [values, indices] = run<T, std::int64_t>(s, {T(3), T(1), T(3), T(2)}, par);
  const std::vector<double> expected = {3, 3, 3, 3, 2, kLowest};
  for (std::size_t i = 0; i < expected.size(); ++i) CHECK(to_double(values[i]) == expected[i]);
  CHECK(indices == std::vector<std::int64_t>{0, 0, 2, 2, 3, 0});
  // Equal taps: the first one.
  const auto tie = run<T, std::int32_t>(window1d(3, 1, 3), {T(1), T(5), T(5)}, par);
  CHECK(tie.second == std::vector<std::int64_t>{1});
  // lowest() itself never beats the initial lowest(): the second window (K=1 at position 2)
  // reports index 0 of its plane, as OpenVINO's reference does.
  const auto all_lowest = run<T, std::int32_t>(
      window1d(3, 2, 1, 2), {to_t<T>(kLowest), to_t<T>(kLowest), to_t<T>(kLowest)}, par);
  CHECK(to_double(all_lowest.first[1]) == kLowest);
  CHECK(all_lowest.second == std::vector<std::int64_t>{0, 0});
}

TEST_CASE("max_pool without indices writes only the values", "[kernels][max_pool]") {
  Parallel par(1);
  const Spec s = window1d(4, 2, 2, 2);
  const Tensor in = tensor_of<float>(s.in, {1, 4, 3, 2});
  Tensor values = Tensor::zeros(ElementType::f32, s.out);
  irrun::kernels::max_pool(in, values, nullptr, geometry_of(s), par);
  CHECK(values.data<float>()[0] == 4);
  CHECK(values.data<float>()[1] == 3);
}

TEST_CASE("max_pool rejects bad arguments", "[kernels][max_pool]") {
  Parallel par(1);
  const Spec s = window1d(4, 2, 2, 2);
  const PoolGeometry g = geometry_of(s);
  const Tensor in = tensor_of<float>(s.in, {1, 2, 3, 4});
  Tensor values = Tensor::zeros(ElementType::f32, s.out);
  Tensor wrong_shape = Tensor::zeros(ElementType::i64, {1, 1, 3});
  CHECK_THROWS_WITH(irrun::kernels::max_pool(in, values, &wrong_shape, g, par),
                    Catch::Contains("max_pool: indices shape [1,1,3] does not match"));
  Tensor f32_indices = Tensor::zeros(ElementType::f32, s.out);
  CHECK_THROWS_WITH(irrun::kernels::max_pool(in, values, &f32_indices, g, par),
                    Catch::Contains("indices are f32, not i32 or i64"));
  Tensor f64_values = Tensor::zeros(ElementType::f64, s.out);
  CHECK_THROWS_WITH(irrun::kernels::max_pool(in, f64_values, nullptr, g, par),
                    Catch::Contains("max_pool: input is f32 but output is f64"));
  const Tensor i4_in = Tensor::zeros(ElementType::i4, s.in);
  Tensor i4_out = Tensor::zeros(ElementType::i4, s.out);
  CHECK_THROWS_AS(irrun::kernels::max_pool(i4_in, i4_out, nullptr, g, par), irrun::Error);
}

// ---- Differential test against the naive oracle ----

namespace {

using Rng = irrun::testing::SplitMix64;

Spec random_spec(Rng& rng) {
  const auto rank = static_cast<std::size_t>(rng.range(1, 3));
  Spec s;
  s.adaptive = rng.range(0, 3) == 0;
  s.in = {rng.range(1, 2), rng.range(1, 3)};
  s.out = s.in;
  const std::int64_t max_in = rank == 3 ? 5 : rank == 2 ? 8 : 14;
  for (std::size_t a = 0; a < rank; ++a) {
    const std::int64_t in = rng.range(1, max_in);
    s.in.push_back(in);
    if (s.adaptive) {
      s.out.push_back(rng.range(1, max_in + 2));
      continue;
    }
    std::int64_t k = 0, d = 0, pb = 0, pe = 0;
    do {
      k = rng.range(1, 4), d = rng.range(1, 3), pb = rng.range(0, 3), pe = rng.range(0, 3);
    } while (d * (k - 1) + 1 > in + pb + pe);
    const std::int64_t stride = rng.range(1, 4);
    const std::int64_t span = in + pb + pe - (d * (k - 1) + 1);
    s.kernel.push_back(k);
    s.stride.push_back(stride);
    s.dilation.push_back(d);
    s.pads_begin.push_back(pb);
    s.out.push_back((rng.range(0, 1) ? (span + stride - 1) / stride : span / stride) + 1);
  }
  s.axis = s.adaptive ? 2 : rng.range(0, static_cast<std::int64_t>(rank) + 1);
  return s;
}

// Small values so that ties are common, plus NaN, -inf and lowest() for the float types.
template <class T>
std::vector<T> random_values(Rng& rng, std::size_t n) {
  std::vector<T> v(n);
  for (auto& x : v) {
    const auto r = rng.range(0, 19);
    if constexpr (!std::is_integral_v<T>) {
      if (r == 0)
        x = to_t<T>(kNaN);
      else if (r == 1)
        x = to_t<T>(-kInf);
      else if (r == 2)
        x = std::numeric_limits<T>::lowest();
      else
        x = to_t<T>(static_cast<double>(rng.range(-4, 4)));
    } else {
      if (r == 0)
        x = std::numeric_limits<T>::lowest();
      else
        x = static_cast<T>(std::is_signed_v<T> ? rng.range(-4, 4) : rng.range(0, 8));
    }
  }
  return v;
}

std::string describe(const Spec& s) {
  std::ostringstream os;
  auto list = [&](const char* name, const std::vector<std::int64_t>& v) {
    os << ' ' << name << '=';
    for (auto x : v) os << x << ',';
  };
  os << (s.adaptive ? "adaptive" : "window");
  list("in", s.in);
  list("out", s.out);
  list("kernel", s.kernel);
  list("stride", s.stride);
  list("dilation", s.dilation);
  list("pads_begin", s.pads_begin);
  os << " axis=" << s.axis;
  return os.str();
}

// Bit patterns, so NaN == NaN and -0 != +0 would both show.
template <class T>
bool same_bits(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

}  // namespace

TEMPLATE_TEST_CASE("max_pool matches the naive oracle on random geometries", "[kernels][max_pool]",
                   float, double, Eigen::half, Eigen::bfloat16, std::int8_t, std::uint8_t,
                   std::int16_t, std::uint16_t, std::int32_t, std::uint32_t, std::int64_t,
                   std::uint64_t) {
  using T = TestType;
  Rng rng(0x4D4158 + sizeof(T));
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(3)};
  for (int iter = 0; iter < 150; ++iter) {
    const Spec s = random_spec(rng);
    INFO(describe(s));
    std::size_t n = 1;
    for (auto d : s.in) n *= static_cast<std::size_t>(d);
    const auto input = random_values<T>(rng, n);
    const auto oracle = irrun::testing::naive_max_pool(s, input);
    for (const Parallel& par : pools) {
      INFO("threads " << par.threads());
      const auto [values, indices] = run<T, std::int64_t>(s, input, par);
      CHECK(same_bits(values, oracle.values));
      CHECK(indices == oracle.indices);
      const auto [values32, indices32] = run<T, std::int32_t>(s, input, par);
      CHECK(same_bits(values32, oracle.values));
      CHECK(indices32 == oracle.indices);
    }
  }
}

// max_pool runs a first spatial axis of more than 2^14 output rows in bands (bands.hpp), and
// wide rows in tiles, each counting its indices over its own input: moved to the whole tensor's
// count, they must be the oracle's, with ties, NaN and lowest() (an output that took no tap keeps
// position 0 of its plane, whatever band it is in), windows past the end (bands of no input rows),
// every index axis, i32 and i64, the fast kernels and the reference.
TEMPLATE_TEST_CASE(
    "max_pool in bands and tiles along long axes gives the oracle's values and indices",
    "[kernels][max_pool]", float, Eigen::half, std::int32_t, std::uint8_t) {
  using T = TestType;
  using irrun::kernels::Kernels;
  // in, kernel, stride, dilation, pads_begin (spatial); outputs: floor mode and three past the
  // long axis' end
  const std::vector<Spec> specs = {
      {{1, 2, 40003}, {}, {3}, {1}, {1}, {1}},
      {{2, 1, 70001}, {}, {5}, {2}, {2}, {4}},
      {{1, 1, 40001, 3}, {}, {3, 2}, {2, 1}, {1, 1}, {1, 0}},
      {{1, 1, 20000, 2, 3}, {}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}},
      // A long W under 1 x K windows: rows of a 1-D pooling (indices from the tensor, a batch
      // item or the row), in bands along W.
      {{1, 2, 3, 40001}, {}, {1, 3}, {1, 2}, {1, 1}, {0, 1}},
      {{2, 1, 2, 2, 20000}, {}, {1, 1, 2}, {1, 1, 1}, {1, 1, 2}, {0, 0, 1}},
      // Wide rows under windows that pool H too: tiles (copied) past 2^16 input columns, 2^18
      // in f32.
      {{1, 2, 3, 66000}, {}, {3, 3}, {1, 2}, {1, 1}, {1, 1}},
      // Outputs given: a pads_end of whole bands past the input (found by a review: a negative
      // band pad), and an empty input axis (a division by its 0 rows).
      {{1, 1, 10}, {1, 1, 40009}, {2}, {1}, {1}, {0}},
      {{1, 2, 0}, {1, 2, 19999}, {2}, {1}, {1}, {10000}},
  };
  Rng rng(0xBA4D5 + sizeof(T));
  const Parallel par(2);
  for (Spec s : specs) {
    if (s.out.empty()) s.out = {s.in[0], s.in[1]};
    for (std::size_t a = 0; s.out.size() < s.in.size(); ++a)
      s.out.push_back((s.in[a + 2] + s.pads_begin[a] - (s.kernel[a] - 1) * s.dilation[a] - 1) /
                          s.stride[a] +
                      1 + (s.in[a + 2] > (1 << 14) ? 3 : 0));
    std::size_t n = 1;
    for (auto d : s.in) n *= static_cast<std::size_t>(d);
    const auto input = random_values<T>(rng, n);
    for (std::int64_t axis = 0; axis < static_cast<std::int64_t>(s.in.size()); ++axis) {
      s.axis = axis;
      INFO(describe(s));
      const auto oracle = irrun::testing::naive_max_pool(s, input);
      const Tensor in = tensor_of(s.in, input);
      for (const Kernels k : {Kernels::best, Kernels::reference}) {
        for (const ElementType it : {ElementType::i32, ElementType::i64}) {
          INFO("kernels " << static_cast<int>(k) << " indices " << irrun::to_string(it));
          Tensor values = Tensor::zeros(type_of<T>(), s.out);
          Tensor indices = Tensor::zeros(it, s.out);
          std::memset(values.buffer.mutable_data(), 0x5A, values.byte_size());
          std::memset(indices.buffer.mutable_data(), 0x5A, indices.byte_size());
          irrun::kernels::max_pool(in, values, &indices, geometry_of(s), par, k);
          const T* v = values.data<T>();
          CHECK(same_bits(std::vector<T>(v, v + values.element_count()), oracle.values));
          std::vector<std::int64_t> got(indices.element_count());
          for (std::size_t i = 0; i < got.size(); ++i)
            got[i] = it == ElementType::i32 ? indices.data<std::int32_t>()[i]
                                            : indices.data<std::int64_t>()[i];
          std::size_t first = 0;
          while (first < got.size() && got[first] == oracle.indices[first]) ++first;
          INFO("first index mismatch at " << first << ": got "
                                          << (first < got.size() ? got[first] : -1) << ", expected "
                                          << (first < got.size() ? oracle.indices[first] : -1));
          CHECK(first == got.size());
        }
      }
    }
  }
}
