#include "irrun/blob.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include "fp_control.hpp"
#include "irrun/checked.hpp"
#include "irrun/dim.hpp"
#include "irrun/error.hpp"
#include "irrun/file_io.hpp"
#include "irrun/float16.hpp"

namespace irrun {
namespace {

static_assert(std::numeric_limits<long double>::digits >= 64,
              "exact_values needs a 64-bit long double significand");
static_assert(std::endian::native == std::endian::little, "irrun assumes a little-endian host");

std::string describe(ElementType type, const std::vector<std::int64_t>& shape) {
  return std::string(to_string(type)) + " " + to_string(shape);
}

// Byte size of `shape` in `type`, or nullopt on overflow (or a type without a fixed size).
std::optional<std::uint64_t> checked_byte_size(ElementType type,
                                               const std::vector<std::int64_t>& shape) {
  const std::size_t bits = bit_width(type);
  const auto count = checked_product(shape);
  if (bits == 0 || !count) return std::nullopt;
  const auto total_bits = checked_mul(*count, bits);
  if (!total_bits || !checked_add(*total_bits, 7)) return std::nullopt;
  return packed_byte_size(type, *count);
}

void require_complete(const Tensor& t) {
  if (t.buffer.size() < t.byte_size()) {
    throw std::logic_error("tensor buffer holds " + std::to_string(t.buffer.size()) +
                           " bytes, its shape needs " + std::to_string(t.byte_size()));
  }
}

template <class T>
T load(const std::byte* base, std::size_t i) {
  T v;
  std::memcpy(&v, base + i * sizeof(T), sizeof(T));
  return v;
}

template <class T>
void store(std::byte* base, std::size_t i, T v) {
  std::memcpy(base + i * sizeof(T), &v, sizeof(T));
}

// double -> float with round-to-nearest-even, defined for out-of-range values too (a plain cast
// of a value beyond FLT_MAX is undefined behaviour in C++).
float round_to_f32(double v) {
  constexpr double kMax = std::numeric_limits<float>::max();
  constexpr double kHalfwayToInf = 0x1.ffffffp127;  // FLT_MAX + half an ulp: ties go to inf
  if (std::isnan(v)) return std::numeric_limits<float>::quiet_NaN() * (std::signbit(v) ? -1 : 1);
  if (std::fabs(v) >= kHalfwayToInf)
    return std::copysign(std::numeric_limits<float>::infinity(), v);
  if (std::fabs(v) > kMax) return static_cast<float>(std::copysign(kMax, v));
  return static_cast<float>(v);
}

// Calls f(i - begin, value-as-R) for the elements i in [begin, begin + n), switching on the type
// once. R = long double holds every value exactly, 64-bit integers included (64-bit significand).
template <class R = double, class F>
void for_each_value(const Tensor& t, std::size_t begin, std::size_t n, F&& f) {
  require_complete(t);
  const std::byte* p = t.buffer.data();
  auto loop = [&](auto conv) {
    for (std::size_t i = begin; i < begin + n; ++i) f(i - begin, conv(i));
  };
  switch (t.type) {
    case ElementType::f16:
      return loop([&](std::size_t i) {
        return static_cast<R>(f16_bits_to_double(load<std::uint16_t>(p, i)));
      });
    case ElementType::bf16:
      return loop([&](std::size_t i) {
        return static_cast<R>(bf16_bits_to_double(load<std::uint16_t>(p, i)));
      });
    case ElementType::f32:
      return loop([&](std::size_t i) { return static_cast<R>(load<float>(p, i)); });
    case ElementType::f64:
      return loop([&](std::size_t i) { return static_cast<R>(load<double>(p, i)); });
    case ElementType::i8:
      return loop([&](std::size_t i) { return static_cast<R>(load<std::int8_t>(p, i)); });
    case ElementType::i16:
      return loop([&](std::size_t i) { return static_cast<R>(load<std::int16_t>(p, i)); });
    case ElementType::i32:
      return loop([&](std::size_t i) { return static_cast<R>(load<std::int32_t>(p, i)); });
    case ElementType::i64:
      return loop([&](std::size_t i) { return static_cast<R>(load<std::int64_t>(p, i)); });
    case ElementType::boolean:
    case ElementType::u8:
      return loop([&](std::size_t i) { return static_cast<R>(load<std::uint8_t>(p, i)); });
    case ElementType::u16:
      return loop([&](std::size_t i) { return static_cast<R>(load<std::uint16_t>(p, i)); });
    case ElementType::u32:
      return loop([&](std::size_t i) { return static_cast<R>(load<std::uint32_t>(p, i)); });
    case ElementType::u64:
      return loop([&](std::size_t i) { return static_cast<R>(load<std::uint64_t>(p, i)); });
    default:
      throw unsupported_error("cannot read values of element type " +
                              std::string(to_string(t.type)));
  }
}

std::uint64_t splitmix64(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Integer elements, one splitmix64 output x each (plus one more for a full-range value): the
// top 3 bits of x pick the kind, so windows meet negatives, rounding ties and extremes alike:
//   0: the type's min or max (bit 0 of x);  1: the next output's low bits, any value of the type;
//   2..7: a small value, bits 56..60 of x: s - 16 in [-16, 16) signed, s in [0, 32) unsigned.
template <class T>
void random_ints(Tensor& t, std::uint64_t& state) {
  using Limits = std::numeric_limits<T>;
  std::byte* p = t.buffer.mutable_data();
  for (std::size_t i = 0, n = t.element_count(); i < n; ++i) {
    const std::uint64_t x = splitmix64(state);
    const auto small = static_cast<int>((x >> 56) & 31);
    T v = static_cast<T>(Limits::is_signed ? small - 16 : small);
    if (x >> 61 == 0) v = (x & 1) ? Limits::max() : Limits::min();
    if (x >> 61 == 1) v = static_cast<T>(splitmix64(state));
    store(p, i, v);
  }
}

}  // namespace

bool is_convertible_float(ElementType t) {
  return t == ElementType::f16 || t == ElementType::bf16 || t == ElementType::f32 ||
         t == ElementType::f64;
}

// Stores a double into element i of a float tensor, rounding once to nearest-even.
void store_float(ElementType type, std::byte* p, std::size_t i, double v) {
  switch (type) {
    case ElementType::f16:
      return store(p, i, f16_bits_from_double(v));
    case ElementType::bf16:
      return store(p, i, bf16_bits_from_double(v));
    case ElementType::f32:
      return store(p, i, round_to_f32(v));
    case ElementType::f64:
      return store(p, i, v);
    default:
      throw std::logic_error("store_float: not a float type");
  }
}

namespace {

// Element i of a tensor of one of store_float's types (bytes at `p`), exactly.
double load_float(ElementType type, const std::byte* p, std::size_t i) {
  switch (type) {
    case ElementType::f16:
      return f16_bits_to_double(load<std::uint16_t>(p, i));
    case ElementType::bf16:
      return bf16_bits_to_double(load<std::uint16_t>(p, i));
    case ElementType::f32:
      return load<float>(p, i);
    default:
      return load<double>(p, i);
  }
}

}  // namespace

Tensor read_raw(const std::string& path, ElementType type, std::vector<std::int64_t> shape) {
  if (bit_width(type) == 0) {
    throw unsupported_error(path + ": element type " + std::string(to_string(type)) +
                            " has no fixed size");
  }
  const auto expected = checked_byte_size(type, shape);
  if (!expected) {
    throw Error(ExitCode::limit, path + ": " + describe(type, shape) + " is too large");
  }
  Tensor t;
  t.buffer = read_file(path);
  if (t.buffer.size() != *expected) {
    throw input_error(path + ": expected " + std::to_string(*expected) + " bytes (" +
                      describe(type, shape) + "), found " + std::to_string(t.buffer.size()));
  }
  t.type = type;
  t.shape = std::move(shape);
  return t;
}

void write_raw(const std::string& path, const Tensor& t, FileBatch* batch) {
  require_complete(t);
  write_file_atomically(path, {t.buffer.data(), t.byte_size()}, {}, batch);
}

Tensor convert_float(const Tensor& t, ElementType to, Narrowed* narrowed) {
  const detail::FpScope ieee;  // IEEE defaults (fp_control.hpp)
  if (!is_convertible_float(t.type) || !is_convertible_float(to)) {
    throw unsupported_error("cannot convert " + std::string(to_string(t.type)) + " to " +
                            std::string(to_string(to)) + ": only f16, bf16, f32 and f64");
  }
  Tensor out = Tensor::zeros(to, t.shape);
  std::byte* dst = out.buffer.mutable_data();
  // f16, bf16 and f32 are all exact in double, so going through double rounds only once.
  for_each_value(t, 0, t.element_count(), [&](std::size_t i, double v) {
    store_float(to, dst, i, v);
    if (!narrowed) return;
    const double stored = load_float(to, dst, i);
    narrowed->to_infinity += std::isfinite(v) && std::isinf(stored);
    narrowed->to_zero += v != 0 && stored == 0;
  });
  return out;
}

Tensor convert_to_f32_or_i32(const Tensor& t, ElementType to) {
  Tensor out = Tensor::zeros(to, t.shape);
  convert_to_f32_or_i32(t, out);
  return out;
}

void convert_to_f32_or_i32(const Tensor& t, Tensor& out) {
  const detail::FpScope ieee;
  const bool to_i32 = out.type == ElementType::i32;
  if ((out.type != ElementType::f32 && !to_i32) || (to_i32 && is_floating(t.type)))
    throw unsupported_error("cannot convert " + std::string(to_string(t.type)) + " to " +
                            std::string(to_string(out.type)));
  if (out.shape != t.shape || out.buffer.size() < out.byte_size())
    throw unsupported_error("cannot convert " + to_string(t.shape) + " into " +
                            to_string(out.shape) + " (" + std::to_string(out.buffer.size()) +
                            " bytes)");
  // long double holds every value of every type exactly, 64-bit integers included.
  for_each_value<long double>(t, 0, t.element_count(), [&](std::size_t i, long double v) {
    if (!to_i32) {
      out.mutable_data<float>()[i] = static_cast<float>(v);
      return;
    }
    const auto bits = v < 0 ? static_cast<std::uint64_t>(static_cast<std::int64_t>(v))
                            : static_cast<std::uint64_t>(v);
    out.mutable_data<std::int32_t>()[i] =
        static_cast<std::int32_t>(static_cast<std::uint32_t>(bits));
  });
}

Tensor random_tensor(ElementType type, std::vector<std::int64_t> shape, std::uint64_t seed) {
  const detail::FpScope ieee;  // the same bits in any caller's state
  Tensor t = Tensor::zeros(type, std::move(shape));
  const std::size_t n = t.element_count();
  std::byte* p = t.buffer.mutable_data();
  std::uint64_t state = seed;
  auto next_unit = [&] {
    // 53 random bits scaled into [0, 2) then shifted: every step is exact in double.
    return static_cast<double>(splitmix64(state) >> 11) * 0x1p-52 - 1.0;
  };
  switch (type) {
    case ElementType::f16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t b = f16_bits_from_double(next_unit());
        if (b == 0x3c00) b = 0x3bff;  // rounded up to 1.0: keep the range half-open
        store(p, i, b);
      }
      break;
    case ElementType::bf16:
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t b = bf16_bits_from_double(next_unit());
        if (b == 0x3f80) b = 0x3f7f;
        store(p, i, b);
      }
      break;
    case ElementType::f32:
      for (std::size_t i = 0; i < n; ++i) {
        float f = round_to_f32(next_unit());
        if (f == 1.0f) f = std::nextafter(1.0f, 0.0f);
        store(p, i, f);
      }
      break;
    case ElementType::f64:
      for (std::size_t i = 0; i < n; ++i) store(p, i, next_unit());
      break;
    case ElementType::i8:
      random_ints<std::int8_t>(t, state);
      break;
    case ElementType::i16:
      random_ints<std::int16_t>(t, state);
      break;
    case ElementType::i32:
      random_ints<std::int32_t>(t, state);
      break;
    case ElementType::i64:
      random_ints<std::int64_t>(t, state);
      break;
    case ElementType::u8:
      random_ints<std::uint8_t>(t, state);
      break;
    case ElementType::u16:
      random_ints<std::uint16_t>(t, state);
      break;
    case ElementType::u32:
      random_ints<std::uint32_t>(t, state);
      break;
    case ElementType::u64:
      random_ints<std::uint64_t>(t, state);
      break;
    case ElementType::boolean:
      for (std::size_t i = 0; i < n; ++i)
        store(p, i, static_cast<std::uint8_t>(splitmix64(state) >> 63));
      break;
    default:
      throw unsupported_error("cannot generate random values of element type " +
                              std::string(to_string(type)));
  }
  return t;
}

TensorStats stats(const Tensor& t) {
  const detail::FpScope ieee;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  TensorStats s{nan, nan, nan, 0, nan, nan};
  double sum = 0;
  std::size_t counted = 0;
  for_each_value<long double>(t, 0, t.element_count(), [&](std::size_t, long double v) {
    if (std::isnan(v)) {
      ++s.nan_count;
      return;
    }
    if (counted == 0 || v < s.exact_min) s.exact_min = v;
    if (counted == 0 || v > s.exact_max) s.exact_max = v;
    sum += static_cast<double>(v);
    ++counted;
  });
  s.min = static_cast<double>(s.exact_min);
  s.max = static_cast<double>(s.exact_max);
  if (counted) s.mean = sum / static_cast<double>(counted);
  return s;
}

namespace {

template <class R>
std::vector<R> values_in(const Tensor& t, std::size_t begin, std::size_t n) {
  begin = std::min(begin, t.element_count());
  n = std::min(n, t.element_count() - begin);
  std::vector<R> out(n);
  for_each_value<R>(t, begin, n, [&](std::size_t i, R v) { out[i] = v; });
  return out;
}

}  // namespace

std::vector<double> values_at(const Tensor& t, std::size_t begin, std::size_t n) {
  return values_in<double>(t, begin, n);
}

std::vector<long double> exact_values_at(const Tensor& t, std::size_t begin, std::size_t n) {
  return values_in<long double>(t, begin, n);
}

std::vector<double> first_values(const Tensor& t, std::size_t n) {
  return values_at(t, 0, n);
}

std::vector<long double> exact_values(const Tensor& t, std::size_t n) {
  return exact_values_at(t, 0, n);
}

}  // namespace irrun
