#include "irrun/float16.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include <Eigen/Core>
#include <catch2/catch.hpp>

using irrun::bf16_bits_from_double;
using irrun::bf16_bits_to_double;
using irrun::f16_bits_from_double;
using irrun::f16_bits_to_double;

namespace {

bool is_f16_nan(std::uint16_t h) {
  return (h & 0x7C00) == 0x7C00 && (h & 0x03FF) != 0;
}
bool is_bf16_nan(std::uint16_t h) {
  return (h & 0x7F80) == 0x7F80 && (h & 0x007F) != 0;
}

// Independent decoding through Eigen (16-bit -> float is exact, float -> double too).
double eigen_f16(std::uint16_t h) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::half>(h));
}
double eigen_bf16(std::uint16_t h) {
  return static_cast<float>(Eigen::numext::bit_cast<Eigen::bfloat16>(h));
}

// Checks that `bits` is the nearest (ties to even) encoding of x among its finite neighbours,
// using only the decoder. Positive finite results below the largest finite are checked.
template <class ToDouble>
void check_nearest(double x, std::uint16_t bits, std::uint16_t max_finite, ToDouble to_double) {
  REQUIRE(x >= 0);
  REQUIRE(bits <= max_finite);
  const double v = to_double(bits);
  if (bits > 0) {
    const double below = to_double(static_cast<std::uint16_t>(bits - 1));
    const double d_here = std::abs(x - v), d_below = std::abs(x - below);
    CHECK((d_here < d_below || (d_here == d_below && (bits & 1) == 0)));
  }
  if (bits < max_finite) {
    const double above = to_double(static_cast<std::uint16_t>(bits + 1));
    const double d_here = std::abs(x - v), d_above = std::abs(x - above);
    CHECK((d_here < d_above || (d_here == d_above && (bits & 1) == 0)));
  }
}

}  // namespace

TEST_CASE("f16: every bit pattern round-trips through double", "[float16]") {
  int mismatches = 0;
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const double d = f16_bits_to_double(h);
    if (f16_bits_from_double(d) != h) ++mismatches;
    if (is_f16_nan(h)) {
      if (!std::isnan(d) || std::signbit(d) != ((h & 0x8000) != 0)) ++mismatches;
    } else if (std::bit_cast<std::uint64_t>(d) != std::bit_cast<std::uint64_t>(eigen_f16(h))) {
      ++mismatches;  // value (and sign of zero) must agree with Eigen's decoder
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("bf16: every bit pattern round-trips through double", "[float16]") {
  int mismatches = 0;
  for (std::uint32_t b = 0; b <= 0xFFFF; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const double d = bf16_bits_to_double(h);
    if (bf16_bits_from_double(d) != h) ++mismatches;
    if (is_bf16_nan(h)) {
      if (!std::isnan(d) || std::signbit(d) != ((h & 0x8000) != 0)) ++mismatches;
    } else if (std::bit_cast<std::uint64_t>(d) != std::bit_cast<std::uint64_t>(eigen_bf16(h))) {
      ++mismatches;
    }
  }
  CHECK(mismatches == 0);
}

TEST_CASE("f16: midpoints round to even, off-midpoints to nearest", "[float16]") {
  // Every pair of adjacent finite positives (subnormals and the normal boundary included).
  int mismatches = 0;
  for (std::uint16_t b = 0; b < 0x7BFF; ++b) {
    const double lo = f16_bits_to_double(b), hi = f16_bits_to_double(b + 1);
    const double mid = (lo + hi) / 2;  // exact in double
    const std::uint16_t even = (b & 1) ? b + 1 : b;
    if (f16_bits_from_double(mid) != even) ++mismatches;
    if (f16_bits_from_double(std::nextafter(mid, 0.0)) != b) ++mismatches;
    if (f16_bits_from_double(std::nextafter(mid, 1e9)) != b + 1) ++mismatches;
    if (f16_bits_from_double(-mid) != (even | 0x8000)) ++mismatches;
  }
  CHECK(mismatches == 0);
  CHECK(f16_bits_from_double(1.0 + 0x1p-11) == 0x3C00);      // tie, 0x3C00 is even
  CHECK(f16_bits_from_double(1.0 + 3 * 0x1p-11) == 0x3C02);  // tie, 0x3C02 is even
}

TEST_CASE("bf16: midpoints round to even, off-midpoints to nearest", "[float16]") {
  int mismatches = 0;
  for (std::uint16_t b = 0; b < 0x7F7F; ++b) {
    const double lo = bf16_bits_to_double(b), hi = bf16_bits_to_double(b + 1);
    const double mid = (lo + hi) / 2;
    const std::uint16_t even = (b & 1) ? b + 1 : b;
    if (bf16_bits_from_double(mid) != even) ++mismatches;
    if (bf16_bits_from_double(std::nextafter(mid, 0.0)) != b) ++mismatches;
    if (bf16_bits_from_double(std::nextafter(mid, 1e300)) != b + 1) ++mismatches;
    if (bf16_bits_from_double(-mid) != (even | 0x8000)) ++mismatches;
  }
  CHECK(mismatches == 0);
  CHECK(bf16_bits_from_double(1.0 + 0x1p-8) == 0x3F80);
  CHECK(bf16_bits_from_double(1.0 + 3 * 0x1p-8) == 0x3F82);
}

TEST_CASE("f16: subnormals", "[float16]") {
  CHECK(f16_bits_from_double(0x1p-24) == 0x0001);  // smallest subnormal
  CHECK(f16_bits_from_double(0x1p-25) == 0x0000);  // tie with 0 -> even (0)
  CHECK(f16_bits_from_double(std::nextafter(0x1p-25, 1.0)) == 0x0001);
  CHECK(f16_bits_from_double(3 * 0x1p-25) == 0x0002);       // tie 1|2 -> 2
  CHECK(f16_bits_from_double(1023 * 0x1p-24) == 0x03FF);    // largest subnormal
  CHECK(f16_bits_from_double(1023.5 * 0x1p-24) == 0x0400);  // tie rounds up into the normals
  CHECK(f16_bits_from_double(0x1p-14) == 0x0400);           // smallest normal
  CHECK(f16_bits_from_double(-0x1p-24) == 0x8001);
  CHECK(f16_bits_from_double(1e-30) == 0x0000);
  CHECK(f16_bits_from_double(-1e-30) == 0x8000);  // sign of an underflow kept
  CHECK(f16_bits_from_double(std::numeric_limits<double>::denorm_min()) == 0x0000);
  CHECK(f16_bits_to_double(0x0001) == 0x1p-24);
  CHECK(f16_bits_to_double(0x03FF) == 1023 * 0x1p-24);
}

TEST_CASE("bf16: subnormals", "[float16]") {
  CHECK(bf16_bits_from_double(0x1p-133) == 0x0001);
  CHECK(bf16_bits_from_double(0x1p-134) == 0x0000);
  CHECK(bf16_bits_from_double(3 * 0x1p-134) == 0x0002);
  CHECK(bf16_bits_from_double(127.5 * 0x1p-133) == 0x0080);  // into the smallest normal 2^-126
  CHECK(bf16_bits_from_double(-0x1p-133) == 0x8001);
  CHECK(bf16_bits_to_double(0x0001) == 0x1p-133);
}

TEST_CASE("f16/bf16: overflow, infinity, zero signs and NaN", "[float16]") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(f16_bits_from_double(65504.0) == 0x7BFF);
  CHECK(f16_bits_from_double(std::nextafter(65520.0, 0.0)) == 0x7BFF);
  CHECK(f16_bits_from_double(65520.0) == 0x7C00);  // tie between 65504 (odd) and 2^16 -> inf
  CHECK(f16_bits_from_double(1e300) == 0x7C00);
  CHECK(f16_bits_from_double(-1e300) == 0xFC00);
  CHECK(f16_bits_from_double(inf) == 0x7C00);
  CHECK(f16_bits_from_double(-inf) == 0xFC00);
  CHECK(f16_bits_from_double(0.0) == 0x0000);
  CHECK(f16_bits_from_double(-0.0) == 0x8000);
  CHECK(f16_bits_to_double(0x7C00) == inf);

  const double bf16_max = bf16_bits_to_double(0x7F7F);
  const double bf16_tie = bf16_max + 0x1p119;  // halfway to 2^128
  CHECK(bf16_bits_from_double(bf16_max) == 0x7F7F);
  CHECK(bf16_bits_from_double(std::nextafter(bf16_tie, 0.0)) == 0x7F7F);
  CHECK(bf16_bits_from_double(bf16_tie) == 0x7F80);
  CHECK(bf16_bits_from_double(1e300) == 0x7F80);
  CHECK(bf16_bits_from_double(-inf) == 0xFF80);
  CHECK(bf16_bits_from_double(-0.0) == 0x8000);

  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(is_f16_nan(f16_bits_from_double(nan)));
  CHECK(is_f16_nan(f16_bits_from_double(-nan)));
  CHECK((f16_bits_from_double(-nan) & 0x8000) != 0);
  CHECK(is_bf16_nan(bf16_bits_from_double(nan)));
  CHECK((bf16_bits_from_double(-nan) & 0x8000) != 0);
  // A NaN whose payload sits below the kept bits still becomes a NaN, not infinity.
  const double low_payload_nan = std::bit_cast<double>(0x7FF0000000000001ull);
  CHECK(is_f16_nan(f16_bits_from_double(low_payload_nan)));
  CHECK(is_bf16_nan(bf16_bits_from_double(low_payload_nan)));
  CHECK(std::isnan(f16_bits_to_double(0x7E00)));
  CHECK(std::isnan(bf16_bits_to_double(0x7FC0)));
}

TEST_CASE("f16/bf16: direct rounding avoids double rounding through float", "[float16]") {
  // Just above the f16 tie 1 + 2^-11: the nearest f16 is 1 + 2^-10. Through float the 2^-40 is
  // lost, the value becomes the tie itself and rounds to even, 1.0.
  const double x = 1.0 + 0x1p-11 + 0x1p-40;
  CHECK(f16_bits_from_double(x) == 0x3C01);
  CHECK(Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(static_cast<float>(x))) == 0x3C00);

  const double y = 1.0 + 0x1p-8 + 0x1p-40;  // same for bf16 around its tie 1 + 2^-8
  CHECK(bf16_bits_from_double(y) == 0x3F81);
  CHECK(Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(static_cast<float>(y))) == 0x3F80);
}

TEST_CASE("f16/bf16: random doubles round to the nearest encoding", "[float16]") {
  // Random magnitudes across the whole range of each format (splitmix64 for reproducibility).
  std::uint64_t state = 0x5EED;
  auto next = [&] {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  for (int i = 0; i < 20000; ++i) {
    const double mant = 1.0 + static_cast<double>(next() >> 12) * 0x1p-52;
    const double f16_x = std::ldexp(mant, static_cast<int>(next() % 41) - 26);     // 2^-26..2^15
    const double bf16_x = std::ldexp(mant, static_cast<int>(next() % 263) - 136);  // ..2^127
    INFO(f16_x << " / " << bf16_x);
    check_nearest(f16_x, f16_bits_from_double(f16_x), 0x7BFF, f16_bits_to_double);
    check_nearest(bf16_x, bf16_bits_from_double(bf16_x), 0x7F7F, bf16_bits_to_double);
    // Values that are floats: Eigen's float conversions are correctly rounded and must agree.
    const float f = static_cast<float>(f16_x);
    CHECK(f16_bits_from_double(f) == Eigen::numext::bit_cast<std::uint16_t>(Eigen::half(f)));
    const float g = static_cast<float>(bf16_x);
    CHECK(bf16_bits_from_double(g) == Eigen::numext::bit_cast<std::uint16_t>(Eigen::bfloat16(g)));
  }
}
