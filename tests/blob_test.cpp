#include "irrun/blob.hpp"

#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <string>

#include "irrun/error.hpp"
#include "irrun/float16.hpp"
#include "support/scratch_dir.hpp"
#include "support/tensor_of.hpp"

namespace {

namespace fs = std::filesystem;
using irrun::ElementType;
using irrun::Tensor;

using TempDir = irrun::testing::ScratchDir;

std::string bytes_of(const Tensor& t) {
  return std::string(reinterpret_cast<const char*>(t.buffer.data()), t.byte_size());
}

template <class T>
Tensor make(ElementType type, std::vector<T> values) {
  Tensor t = Tensor::zeros(type, {static_cast<std::int64_t>(values.size())});
  std::memcpy(t.buffer.mutable_data(), values.data(), values.size() * sizeof(T));
  return t;
}

// Converts one value of a float tensor type and returns the result's bit pattern (as uint64).
std::uint64_t convert_bits(ElementType from, double value, ElementType to) {
  Tensor src = Tensor::zeros(from, {1});
  std::byte* p = src.buffer.mutable_data();
  switch (from) {
    case ElementType::f64:
      std::memcpy(p, &value, 8);
      break;
    case ElementType::f32: {
      const auto f = static_cast<float>(value);
      REQUIRE(static_cast<double>(f) == value);  // test inputs must be exact in the source
      std::memcpy(p, &f, 4);
      break;
    }
    case ElementType::f16: {
      const std::uint16_t b = irrun::f16_bits_from_double(value);
      REQUIRE(irrun::f16_bits_to_double(b) == value);
      std::memcpy(p, &b, 2);
      break;
    }
    default:
      FAIL("unexpected source type");
  }
  const Tensor out = irrun::convert_float(src, to);
  REQUIRE(out.type == to);
  std::uint64_t bits = 0;
  std::memcpy(&bits, out.buffer.data(), out.byte_size());
  return bits;
}

std::uint64_t f32_bits(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

}  // namespace

TEST_CASE("raw round trip for every element type", "[blob]") {
  TempDir dir("blob");
  const std::vector<std::int64_t> shape{3, 1, 7};
  for (auto type : {ElementType::f32, ElementType::f16, ElementType::bf16, ElementType::f64,
                    ElementType::i8, ElementType::u8, ElementType::i32, ElementType::i64,
                    ElementType::u16, ElementType::boolean}) {
    INFO(irrun::to_string(type));
    const Tensor t = irrun::random_tensor(type, shape, 99);
    const auto path = dir.file(std::string(irrun::to_string(type)) + ".bin");
    irrun::write_raw(path, t);
    CHECK(fs::file_size(path) == t.byte_size());
    const Tensor r = irrun::read_raw(path, type, shape);
    CHECK(r.type == type);
    CHECK(r.shape == shape);
    CHECK(bytes_of(r) == bytes_of(t));
    CHECK_FALSE(r.buffer.writable());  // mapped, not copied
  }
  // Sub-byte types are bit-packed.
  Tensor packed = Tensor::zeros(ElementType::u4, {5});
  packed.buffer.mutable_data()[0] = std::byte{0x21};
  irrun::write_raw(dir.file("u4.bin"), packed);
  CHECK(fs::file_size(dir.file("u4.bin")) == 3);
  CHECK(bytes_of(irrun::read_raw(dir.file("u4.bin"), ElementType::u4, {5})) == bytes_of(packed));
}

TEST_CASE("raw size mismatch names expected and found sizes", "[blob]") {
  TempDir dir("blob");
  const auto path = dir.file("in.bin");
  std::ofstream(path, std::ios::binary) << std::string(602100, '\0');
  try {
    irrun::read_raw(path, ElementType::f32, {1, 3, 224, 224});
    FAIL("accepted");
  } catch (const irrun::Error& e) {
    CHECK(e.code() == irrun::ExitCode::bad_input);
    CHECK(std::string(e.what()) ==
          path + ": expected 602112 bytes (f32 [1,3,224,224]), found 602100");
  }
  CHECK_THROWS_WITH(irrun::read_raw(path, ElementType::u8, {602101}),
                    path + ": expected 602101 bytes (u8 [602101]), found 602100");
  CHECK_THROWS_WITH(irrun::read_raw(dir.file("none.bin"), ElementType::u8, {1}),
                    dir.file("none.bin") + ": cannot open: No such file or directory");
  try {
    irrun::read_raw(path, ElementType::f32, {std::int64_t{1} << 62, 4});
    FAIL("accepted");
  } catch (const irrun::Error& e) {
    CHECK(e.code() == irrun::ExitCode::limit);
  }
}

TEST_CASE("convert_float rounds once to nearest even", "[blob]") {
  using E = ElementType;
  // f32 -> f16: exact ties go to the even mantissa.
  CHECK(convert_bits(E::f32, 1.0 + 0x1p-11, E::f16) == 0x3c00);
  CHECK(convert_bits(E::f32, 1.0 + 3 * 0x1p-11, E::f16) == 0x3c02);
  CHECK(convert_bits(E::f32, 1.0 + 0x1p-11 + 0x1p-23, E::f16) == 0x3c01);
  CHECK(convert_bits(E::f32, -(1.0 + 0x1p-11), E::f16) == 0xbc00);
  CHECK(convert_bits(E::f32, 65504.0, E::f16) == 0x7bff);
  CHECK(convert_bits(E::f32, 65519.0, E::f16) == 0x7bff);
  CHECK(convert_bits(E::f32, 65520.0, E::f16) == 0x7c00);  // tie with 2^16 -> infinity
  CHECK(convert_bits(E::f32, 0x1p-25, E::f16) == 0x0000);  // half the smallest subnormal: even
  CHECK(convert_bits(E::f32, 3 * 0x1p-25, E::f16) == 0x0002);
  // f64 -> f16 directly: via float this would be the tie 1 + 2^-11 and round to 0x3c00.
  CHECK(convert_bits(E::f64, 1.0 + 0x1p-11 + 0x1p-40, E::f16) == 0x3c01);
  // f32 -> bf16.
  CHECK(convert_bits(E::f32, 1.0 + 0x1p-8, E::bf16) == 0x3f80);
  CHECK(convert_bits(E::f32, 1.0 + 3 * 0x1p-8, E::bf16) == 0x3f82);
  CHECK(convert_bits(E::f32, 1.0 + 0x1p-8 + 0x1p-23, E::bf16) == 0x3f81);
  // f16 -> bf16.
  CHECK(convert_bits(E::f16, 1.0 + 0x1p-8, E::bf16) == 0x3f80);
  CHECK(convert_bits(E::f16, 1.0 + 3 * 0x1p-8, E::bf16) == 0x3f82);
  // f64 -> f32, including the range edge (a plain cast would be undefined there).
  CHECK(convert_bits(E::f64, 1.0 + 0x1p-24, E::f32) == f32_bits(1.0f));
  CHECK(convert_bits(E::f64, 1.0 + 3 * 0x1p-24, E::f32) == f32_bits(1.0f + 0x1p-22f));
  CHECK(convert_bits(E::f64, 1.0 + 0x1p-24 + 0x1p-50, E::f32) == f32_bits(1.0f + 0x1p-23f));
  CHECK(convert_bits(E::f64, 0x1.fffffefffffffp127, E::f32) ==
        f32_bits(std::numeric_limits<float>::max()));
  CHECK(convert_bits(E::f64, 0x1.ffffffp127, E::f32) == 0x7f800000);
  CHECK(convert_bits(E::f64, -1e300, E::f32) == 0xff800000);
  // Widening is exact.
  CHECK(convert_bits(E::f16, 1.0 + 0x1p-10, E::f32) == f32_bits(1.0f + 0x1p-10f));
  CHECK(convert_bits(E::f16, 0x1p-24, E::f64) == 0x3e70000000000000);
  // Infinities and NaNs survive.
  CHECK(convert_bits(E::f64, std::numeric_limits<double>::infinity(), E::f16) == 0x7c00);
  CHECK((convert_bits(E::f32, 0, E::f16) & 0x7fff) == 0);
  const std::uint64_t nan16 =
      convert_bits(E::f64, std::numeric_limits<double>::quiet_NaN(), E::f16);
  CHECK((nan16 & 0x7c00) == 0x7c00);
  CHECK((nan16 & 0x03ff) != 0);

  // Same-type conversion copies.
  const Tensor t = irrun::random_tensor(E::f32, {4}, 1);
  const Tensor c = irrun::convert_float(t, E::f32);
  CHECK(bytes_of(c) == bytes_of(t));
  CHECK(c.buffer.data() != t.buffer.data());

  CHECK_THROWS_AS(irrun::convert_float(irrun::random_tensor(E::i32, {2}, 1), E::f32), irrun::Error);
  CHECK_THROWS_AS(irrun::convert_float(t, E::i8), irrun::Error);
}

TEST_CASE("random_tensor is reproducible and seed-dependent", "[blob]") {
  // splitmix64(seed 0) first output is 0xe220a8397b1dcdaf, so the first f64 is
  // (0xe220a8397b1dcdaf >> 11) * 2^-52 - 1.
  const Tensor d = irrun::random_tensor(ElementType::f64, {1000}, 0);
  CHECK(d.data<double>()[0] == 0x1.8882a0e5ec772p-1);
  const Tensor f = irrun::random_tensor(ElementType::f32, {1000}, 0);
  CHECK(f.data<float>()[0] == 0x1.8882ap-1f);  // bits 0x3f444150
  const Tensor h = irrun::random_tensor(ElementType::f16, {3}, 0);
  CHECK(h.data<std::uint16_t>()[0] == 0x3a22);
  // Top 3 bits 7: a small value, bits 56..60 = 0x02.
  const Tensor i = irrun::random_tensor(ElementType::i32, {1}, 0);
  CHECK(i.data<std::int32_t>()[0] == 0x02 - 16);
  const Tensor u = irrun::random_tensor(ElementType::u8, {1}, 0);
  CHECK(u.data<std::uint8_t>()[0] == 0x02);

  for (auto type : {ElementType::f32, ElementType::f16, ElementType::bf16, ElementType::f64,
                    ElementType::i8, ElementType::i16, ElementType::i64, ElementType::u32,
                    ElementType::u64, ElementType::boolean}) {
    INFO(irrun::to_string(type));
    const Tensor a = irrun::random_tensor(type, {2, 50}, 12345);
    const Tensor b = irrun::random_tensor(type, {2, 50}, 12345);
    const Tensor c = irrun::random_tensor(type, {2, 50}, 12346);
    CHECK(bytes_of(a) == bytes_of(b));
    CHECK(bytes_of(a) != bytes_of(c));
    const auto s = irrun::stats(a);
    CHECK(s.nan_count == 0);
    if (irrun::is_floating(type)) {
      CHECK(s.min >= -1.0);
      CHECK(s.max < 1.0);
    } else if (type == ElementType::boolean) {
      CHECK(s.min >= 0.0);
      CHECK(s.max <= 1.0);
    } else if (type == ElementType::u32 || type == ElementType::u64) {
      CHECK(s.min == 0.0);
    }
  }
  // Values are spread over the range, not clustered.
  const auto s = irrun::stats(irrun::random_tensor(ElementType::f32, {100000}, 5));
  CHECK(s.min < -0.999);
  CHECK(s.max > 0.999);
  CHECK(std::fabs(s.mean) < 0.01);
  CHECK_THROWS_AS(irrun::random_tensor(ElementType::i4, {2}, 0), irrun::Error);
}

TEST_CASE("stats and first_values convert any numeric type to double", "[blob]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor f = make<float>(ElementType::f32, {1.5f, static_cast<float>(nan), -2.5f, 4.0f});
  auto s = irrun::stats(f);
  CHECK(s.min == -2.5);
  CHECK(s.max == 4.0);
  CHECK(s.mean == 1.0);
  CHECK(s.nan_count == 1);
  auto v = irrun::first_values(f, 3);
  REQUIRE(v.size() == 3);
  CHECK(v[0] == 1.5);
  CHECK(std::isnan(v[1]));
  CHECK(v[2] == -2.5);
  CHECK(irrun::first_values(f, 100).size() == 4);

  const Tensor h = make<std::uint16_t>(ElementType::f16, {0x3c00, 0xc000, 0x7e00});
  s = irrun::stats(h);
  CHECK(s.min == -2.0);
  CHECK(s.max == 1.0);
  CHECK(s.nan_count == 1);
  CHECK(irrun::first_values(make<std::uint16_t>(ElementType::bf16, {0x3fc0}), 1)[0] == 1.5);
  CHECK(irrun::first_values(make<std::int8_t>(ElementType::i8, {-128, 127}), 2) ==
        std::vector<double>{-128, 127});
  CHECK(irrun::first_values(make<std::uint64_t>(ElementType::u64, {1ull << 40}), 1)[0] == 0x1p40);
  CHECK(irrun::first_values(make<std::int64_t>(ElementType::i64, {-5}), 1)[0] == -5.0);

  const auto empty = irrun::stats(Tensor::zeros(ElementType::f32, {0}));
  CHECK(std::isnan(empty.min));
  CHECK(std::isnan(empty.mean));
  CHECK(empty.nan_count == 0);
  CHECK_THROWS_AS(irrun::stats(Tensor::zeros(ElementType::u4, {2})), irrun::Error);
}

TEST_CASE("stats keeps 64-bit integer extremes exactly", "[blob][int]") {
  Tensor t = Tensor::zeros(ElementType::i64, {3});
  t.mutable_data<std::int64_t>()[0] = std::numeric_limits<std::int64_t>::max();
  t.mutable_data<std::int64_t>()[1] = std::numeric_limits<std::int64_t>::min() + 1;
  t.mutable_data<std::int64_t>()[2] = 0;
  const auto s = irrun::stats(t);
  CHECK(s.exact_max == static_cast<long double>(std::numeric_limits<std::int64_t>::max()));
  CHECK(s.exact_min == static_cast<long double>(std::numeric_limits<std::int64_t>::min() + 1));
  CHECK(s.max == 0x1p63);  // the double rounds
  const auto v = irrun::exact_values(t, 2);
  REQUIRE(v.size() == 2);
  CHECK(static_cast<std::int64_t>(v[0]) == std::numeric_limits<std::int64_t>::max());
  CHECK(static_cast<std::int64_t>(v[1]) == std::numeric_limits<std::int64_t>::min() + 1);
}

TEST_CASE("random integers: extremes, full-range values and small values with ties",
          "[blob][int]") {
  for (auto type : {ElementType::i8, ElementType::u8, ElementType::i16, ElementType::u16,
                    ElementType::i32, ElementType::u32, ElementType::i64, ElementType::u64}) {
    INFO(irrun::to_string(type));
    const Tensor t = irrun::random_tensor(type, {4096}, 11);
    const auto s = irrun::stats(t);
    const bool is_signed = irrun::to_string(type)[0] == 'i';
    const long double top =
        std::ldexp(1.0L, static_cast<int>(irrun::bit_width(type)) - (is_signed ? 1 : 0)) - 1;
    const long double bottom = is_signed ? -top - 1 : 0;
    CHECK(s.exact_max == top);  // 1 in 16 values is the max, 1 in 16 the min
    CHECK(s.exact_min == bottom);
    const auto v = irrun::exact_values(t, 4096);
    const long double lo = is_signed ? -16 : 0, hi = is_signed ? 15 : 31;
    const auto small =
        std::count_if(v.begin(), v.end(), [&](long double x) { return x >= lo && x <= hi; });
    CHECK(small > 2800);  // about 3/4 of 4096, plus full-range values that happen to be small
    const auto negative = std::count_if(v.begin(), v.end(), [](long double x) { return x < 0; });
    if (is_signed) CHECK(negative > 1500);
    if (irrun::bit_width(type) >= 32) {  // full-range values are far from the small ones
      const auto large = std::count_if(v.begin(), v.end(), [&](long double x) {
        return x != top && x != bottom && (x > 1000 || x < -1000);
      });
      CHECK(large > 400);
    }
  }
}

TEST_CASE("convert_to_f32_or_i32: f32 rounds once, i32 keeps the low 32 bits", "[blob]") {
  using irrun::convert_to_f32_or_i32;
  using irrun::testing::tensor_of;
  // f64 to f32: nearest, ties to even; beyond f32's range, infinity.
  const double tie = 1.0 + std::ldexp(1.0, -24);  // halfway between 1 and the next float
  const auto f = convert_to_f32_or_i32(
      tensor_of<double>(ElementType::f64, {tie, 1.0 + std::ldexp(3.0, -24), -0.0, 1e300}),
      ElementType::f32);
  CHECK(f.data<float>()[0] == 1.0f);
  CHECK(f.data<float>()[1] == 1.0f + std::ldexp(1.0f, -22));  // 1 + 1.5 ulp: to the even 1 + 2 ulp
  CHECK(std::signbit(f.data<float>()[2]));
  CHECK(std::isinf(f.data<float>()[3]));
  // Integers to f32 exactly up to 2^24; to i32 by their low 32 bits.
  const auto i = convert_to_f32_or_i32(
      tensor_of<std::int64_t>(ElementType::i64, {-5, (std::int64_t{1} << 32) + 7,
                                                 std::numeric_limits<std::int64_t>::min()}),
      ElementType::i32);
  CHECK(std::vector<std::int32_t>(i.data<std::int32_t>(), i.data<std::int32_t>() + 3) ==
        std::vector<std::int32_t>{-5, 7, 0});
  const auto u = convert_to_f32_or_i32(
      tensor_of<std::uint64_t>(ElementType::u64, {std::numeric_limits<std::uint64_t>::max(), 3}),
      ElementType::i32);
  CHECK(u.data<std::int32_t>()[0] == -1);
  CHECK(u.data<std::int32_t>()[1] == 3);
  const auto b =
      convert_to_f32_or_i32(tensor_of<std::uint8_t>(ElementType::u8, {0, 255}), ElementType::f32);
  CHECK(b.data<float>()[1] == 255.0f);
  CHECK_THROWS_AS(convert_to_f32_or_i32(f, ElementType::i32), irrun::Error);  // float to i32
  CHECK_THROWS_AS(convert_to_f32_or_i32(b, ElementType::f16), irrun::Error);
}
