#include "irrun/compare.hpp"

#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "irrun/blob.hpp"
#include "support/tensor_of.hpp"

using namespace irrun;

namespace {

Tensor f32(std::vector<std::int64_t> shape, const std::vector<float>& values) {
  Tensor t = Tensor::zeros(ElementType::f32, std::move(shape));
  REQUIRE(t.element_count() == values.size());
  std::memcpy(t.mutable_data<float>(), values.data(), values.size() * sizeof(float));
  return t;
}

TensorComparison cmp(const Tensor& e, const Tensor& a, Tolerance tol = {}) {
  return compare_tensors("out", e, e.type, a, tol);
}

}  // namespace

TEST_CASE("compare: identical tensors match with the exact defaults", "[compare]") {
  const auto t = f32({2, 2}, {1.f, -2.f, 0.5f, 3.f});
  const auto c = cmp(t, t);
  CHECK(c.passed());
  CHECK(c.count == 4);
  CHECK(c.out_of_tolerance == 0);
  CHECK(c.max_abs_error == 0);
  CHECK(c.max_rel_error == 0);
}

TEST_CASE("compare: one ulp fails the default, passes a loose atol or rtol", "[compare]") {
  const auto e = f32({3}, {1.f, 2.f, 4.f});
  const auto a = f32({3}, {1.f, std::nextafter(2.f, 3.f), 4.f});
  const auto strict = cmp(e, a);
  CHECK(strict.status == CompareStatus::mismatch);
  CHECK(strict.out_of_tolerance == 1);
  CHECK(strict.max_abs_error == Approx(std::nextafter(2.f, 3.f) - 2.0));
  CHECK(cmp(e, a, {0.0, 1e-6}).passed());
  CHECK(cmp(e, a, {1e-6, 0.0}).passed());
  CHECK_FALSE(cmp(e, a, {1e-9, 1e-9}).passed());
}

TEST_CASE("compare: atol + rtol * |golden|, asymmetric like numpy.isclose", "[compare]") {
  const auto e = f32({2}, {10.f, 0.f});
  const auto a = f32({2}, {11.f, 0.5f});
  // 1 <= 0.5 + 0.1 * 10 holds; 0.5 <= 0.5 + 0.1 * 0 holds.
  CHECK(cmp(e, a, {0.1, 0.5}).passed());
  const auto c = cmp(e, a, {0.1, 0.4});
  CHECK(c.out_of_tolerance == 1);
  REQUIRE(c.first.size() == 1);
  CHECK(c.first[0].index == std::vector<std::int64_t>{1});
  CHECK(std::isinf(c.max_rel_error));  // golden 0, got 0.5
}

TEST_CASE("compare: NaN equals NaN, but not a number; inf only equals itself", "[compare]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(cmp(f32({3}, {nan, inf, -0.f}), f32({3}, {nan, inf, 0.f})).passed());
  const auto c = cmp(f32({3}, {nan, 1.f, inf}), f32({3}, {1.f, nan, -inf}), {1e9, 1e9});
  CHECK(c.out_of_tolerance == 3);
  CHECK(std::isinf(c.max_abs_error));
  CHECK(std::isinf(c.max_rel_error));
}

TEST_CASE("compare: NaN and inf mismatches are infinitely far, in the summary and each line",
          "[compare]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    float golden, got;
    std::string line;  // the mismatch's line
  };
  const Case cases[] = {
      {nan, 1.f, "  at [0]: golden nan, got 1 (abs error inf)"},
      {1.f, nan, "  at [0]: golden 1, got nan (abs error inf)"},
      {inf, 4.f, "  at [0]: golden inf, got 4 (abs error inf)"},
      {4.f, -inf, "  at [0]: golden 4, got -inf (abs error inf)"},
      {inf, -inf, "  at [0]: golden inf, got -inf (abs error inf)"},
  };
  for (const auto& c : cases) {
    INFO(c.line);
    ExpectResult r;
    r.golden = "g";
    r.tolerance = {1.0, 0.0};  // rtol 1 accepts 4 against 3, nothing against inf or NaN
    r.outputs.push_back(cmp(f32({1}, {c.golden}), f32({1}, {c.got}), r.tolerance));
    const auto& t = r.outputs[0];
    CHECK(t.out_of_tolerance == 1);
    CHECK(std::isinf(t.max_abs_error));
    CHECK(std::isinf(t.max_rel_error));
    const auto lines = format_lines(r);
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] ==
          "expect 'out': MISMATCH: 1 of 1 value(s) out of tolerance (rtol 1, atol 0); max abs "
          "error inf, max rel error inf");
    CHECK(lines[1] == c.line);
  }
}

TEST_CASE("compare: shape and element type must match", "[compare]") {
  const auto e = f32({2, 2}, {1, 2, 3, 4});
  const auto c = cmp(e, f32({4}, {1, 2, 3, 4}));
  CHECK(c.status == CompareStatus::shape_mismatch);
  CHECK(c.detail == "shape [4] differs from the golden's [2,2]");
  const auto d = compare_tensors("out", e, e.type, convert_float(e, ElementType::f16), {});
  CHECK(d.status == CompareStatus::type_mismatch);
  CHECK(d.detail == "element type f16 differs from the golden's f32");
  // A bf16 golden stored widened as f32 compares against bf16 outputs by value.
  const auto bf = convert_float(e, ElementType::bf16);
  CHECK(compare_tensors("out", e, ElementType::bf16, bf, {}).passed());
}

TEST_CASE("compare: first mismatches carry their N-d coordinates in row-major order", "[compare]") {
  std::vector<float> values(2 * 3 * 4 * 5);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  const auto e = f32({2, 3, 4, 5}, values);
  auto changed = values;
  changed[1 * 60 + 2 * 20 + 3 * 5 + 4] += 1;  // [1,2,3,4]
  changed[0 * 60 + 1 * 20 + 0 * 5 + 2] -= 2;  // [0,1,0,2]
  for (std::size_t i = 0; i < 6; ++i) changed[i * 7 + 50] += 0.5f;
  const auto c = compare_tensors("out", e, e.type, f32({2, 3, 4, 5}, changed), {}, 3);
  CHECK(c.out_of_tolerance == 8);
  REQUIRE(c.first.size() == 3);
  CHECK(c.first[0].index == std::vector<std::int64_t>{0, 1, 0, 2});
  CHECK(c.first[0].expected == 22);
  CHECK(c.first[0].actual == 20);
  CHECK(c.first[1].index == std::vector<std::int64_t>{0, 2, 2, 0});  // flat 50
  CHECK(c.max_abs_error == 2);
  CHECK(unravel_index(119, {2, 3, 4, 5}) == std::vector<std::int64_t>{1, 2, 3, 4});
  CHECK(unravel_index(0, {}).empty());
}

TEST_CASE("compare: text lines name the output, the counts and the coordinates", "[compare]") {
  ExpectResult r;
  r.golden = "golden/";
  r.outputs.push_back(cmp(f32({1, 2}, {1, 2}), f32({1, 2}, {1, 2.5})));
  TensorComparison missing;
  missing.name = "extra";
  missing.status = CompareStatus::missing_in_golden;
  missing.detail = "this run produced output 'extra' (f32 [1]), the golden has no such output";
  r.outputs.push_back(missing);
  CHECK_FALSE(r.passed());
  const auto lines = format_lines(r);
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] ==
        "expect 'out': MISMATCH: 1 of 2 value(s) out of tolerance (rtol 0, atol 0); max abs "
        "error 0.5, max rel error 0.25");
  CHECK(lines[1] == "  at [0,1]: golden 2, got 2.5 (abs error 0.5)");
  CHECK(lines[2] ==
        "expect 'extra': MISMATCH: this run produced output 'extra' (f32 [1]), the golden has no "
        "such output [missing-in-golden]");
  CHECK(lines[3] == "expect golden/: FAILED: 2 of 2 output(s) differ from the golden");
}

using irrun::testing::tensor_of;

TEST_CASE("compare: integers compare exactly, 64-bit values included", "[compare][int]") {
  constexpr std::int64_t big = std::numeric_limits<std::int64_t>::max();
  // big and big - 1 are the same double: a double comparison would call them equal.
  const auto e = tensor_of<std::int64_t>(ElementType::i64, {big, -5, 0});
  const auto a = tensor_of<std::int64_t>(ElementType::i64, {big - 1, -5, 0});
  REQUIRE(static_cast<double>(big) == static_cast<double>(big - 1));
  const auto strict = cmp(e, a);
  CHECK(strict.status == CompareStatus::mismatch);
  CHECK(strict.out_of_tolerance == 1);
  CHECK(strict.max_abs_error == 1);
  REQUIRE(strict.first.size() == 1);
  CHECK(strict.first[0].index == std::vector<std::int64_t>{0});
  // --atol 1 accepts off-by-one, --atol 0.99 does not (|diff| <= floor(atol + rtol*|golden|)).
  CHECK(cmp(e, a, {0.0, 1.0}).passed());
  CHECK_FALSE(cmp(e, a, {0.0, 0.99}).passed());
  // rtol scales with the golden: 2^-62 * (2^63 - 1) is just below 2.
  CHECK(cmp(e, a, {0x1p-62, 0.0}).passed());

  const auto u =
      tensor_of<std::uint64_t>(ElementType::u64, {std::numeric_limits<std::uint64_t>::max()});
  const auto u1 =
      tensor_of<std::uint64_t>(ElementType::u64, {std::numeric_limits<std::uint64_t>::max() - 1});
  CHECK_FALSE(cmp(u, u1).passed());
  CHECK(cmp(u, u).passed());
}

TEST_CASE("compare: i8 rounding differences need --atol 1", "[compare][int]") {
  // irrun rounds i8 averages to nearest; OpenVINO's reference truncates: off by one at most.
  const auto irrun_out = tensor_of<std::int8_t>(ElementType::i8, {-2, 4, -128, 127});
  const auto openvino = tensor_of<std::int8_t>(ElementType::i8, {-2, 3, -127, 127});
  const auto c = cmp(openvino, irrun_out);
  CHECK(c.out_of_tolerance == 2);
  CHECK(c.max_abs_error == 1);
  CHECK(cmp(openvino, irrun_out, {0.0, 1.0}).passed());
  // Mismatch lines print whole numbers in full (an i32 value has up to 10 digits).
  const auto big = tensor_of<std::int32_t>(ElementType::i32, {2147483647});
  const auto big1 = tensor_of<std::int32_t>(ElementType::i32, {-2147483647});
  ExpectResult r;
  r.golden = "g";
  r.outputs.push_back(cmp(big, big1));
  const auto lines = format_lines(r);
  REQUIRE(lines.size() >= 2);
  CHECK(lines[1] == "  at [0]: golden 2147483647, got -2147483647 (abs error 4294967294)");
  // Different integer types never match, even with equal values.
  const auto u = tensor_of<std::uint8_t>(ElementType::u8, {0, 4, 0, 127});
  CHECK(cmp(u, irrun_out).status == CompareStatus::type_mismatch);
}

TEST_CASE("compare: mismatch lines give 64-bit integer values and their difference exactly",
          "[compare][int]") {
  // 2^62 + 1 and 2^62 + 2 are the same double: the line must still tell them apart.
  constexpr std::int64_t big = (std::int64_t{1} << 62) + 1;
  ExpectResult r;
  r.golden = "g";
  r.outputs.push_back(cmp(tensor_of<std::int64_t>(ElementType::i64, {big + 1, -big}),
                          tensor_of<std::int64_t>(ElementType::i64, {big, -big - 7})));
  r.outputs.push_back(cmp(tensor_of<std::uint64_t>(ElementType::u64, {UINT64_MAX}),
                          tensor_of<std::uint64_t>(ElementType::u64, {0})));
  const auto lines = format_lines(r);
  REQUIRE(lines.size() >= 6);
  CHECK(lines[1] == "  at [0]: golden 4611686018427387906, got 4611686018427387905 (abs error 1)");
  CHECK(lines[2] ==
        "  at [1]: golden -4611686018427387905, got -4611686018427387912 (abs error 7)");
  CHECK(lines[4] ==
        "  at [0]: golden 18446744073709551615, got 0 (abs error 18446744073709551615)");
  // Floats keep their format: whole numbers from 2^53 on in e-notation.
  ExpectResult f;
  f.golden = "g";
  f.outputs.push_back(cmp(f32({1}, {0x1p60f}), f32({1}, {0x1p61f})));
  const auto float_lines = format_lines(f);
  REQUIRE(float_lines.size() >= 2);
  CHECK(float_lines[1] ==
        "  at [0]: golden 1.1529215e+18, got 2.30584301e+18 (abs error 1.1529215e+18)");
}

TEST_CASE("compare: integers take the tolerance bound as floats do", "[compare][int]") {
  // The double 0.3 is just below 0.3; 0.3 * 10 still evaluates to 3 in double, as in numpy, so
  // --rtol 0.3 accepts 13 against 10 for f32. An i32 output must be judged the same.
  CHECK(cmp(f32({1}, {10}), f32({1}, {13}), {0.3, 0.0}).passed());
  CHECK(cmp(tensor_of<std::int32_t>(ElementType::i32, {10}),
            tensor_of<std::int32_t>(ElementType::i32, {13}), {0.3, 0.0})
            .passed());
  CHECK_FALSE(cmp(tensor_of<std::int32_t>(ElementType::i32, {10}),
                  tensor_of<std::int32_t>(ElementType::i32, {14}), {0.3, 0.0})
                  .passed());
  CHECK(cmp(tensor_of<std::int64_t>(ElementType::i64, {-10}),
            tensor_of<std::int64_t>(ElementType::i64, {-7}), {0.29, 0.1})
            .passed());
}

TEST_CASE("compare: tensors past one window of values keep global counts and coordinates",
          "[compare]") {
  // compare_tensors converts 65536 values at a time; mismatches in the first, a middle and the
  // last window, one right at a window boundary.
  const std::size_t n = 3 * 65536 + 5;
  std::vector<float> golden(n);
  for (std::size_t i = 0; i < n; ++i) golden[i] = static_cast<float>(i % 1000);
  std::vector<float> got = golden;
  for (std::size_t i : {std::size_t{7}, std::size_t{65536}, std::size_t{140000}, n - 1})
    got[i] += 0.5f;
  got[140000] += 2.0f;  // the largest error: 2.5
  const auto e = f32({static_cast<std::int64_t>(n)}, golden);
  const auto c = cmp(e, f32({static_cast<std::int64_t>(n)}, got));
  CHECK(c.count == n);
  CHECK(c.out_of_tolerance == 4);
  CHECK(c.max_abs_error == 2.5);
  REQUIRE(c.first.size() == 4);
  CHECK(c.first[1].index == std::vector<std::int64_t>{65536});
  CHECK(c.first[2].index == std::vector<std::int64_t>{140000});
  CHECK(c.first[2].actual - c.first[2].expected == 2.5);
  CHECK(c.first[3].index == std::vector<std::int64_t>{static_cast<std::int64_t>(n - 1)});

  // 64-bit integers (the long double path) in 2-D: the third window's element 9 is [2, 9].
  Tensor ei = Tensor::zeros(ElementType::i64, {4, 65536});
  Tensor ai = Tensor::zeros(ElementType::i64, {4, 65536});
  ai.mutable_data<std::int64_t>()[2 * 65536 + 9] = std::int64_t{1} << 62;
  const auto ci = compare_tensors("out", ei, ei.type, ai, {});
  CHECK(ci.out_of_tolerance == 1);
  REQUIRE(ci.first.size() == 1);
  CHECK(ci.first[0].index == std::vector<std::int64_t>{2, 9});
  CHECK(ci.first[0].actual == 0x1p62L);
}
