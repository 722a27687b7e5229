// Raw little-endian blobs, float conversions, reproducible random inputs and summaries.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "irrun/file_io.hpp"
#include "irrun/tensor.hpp"

namespace irrun {

// Maps a raw blob (dense, row-major, little-endian) without copying. Its size must equal the
// size of `shape` in `type` exactly, else irrun::input_error
// "<path>: expected 602112 bytes (f32 [1,3,224,224]), found 602100".
Tensor read_raw(const std::string& path, ElementType type, std::vector<std::int64_t> shape);

// Writes the tensor's bytes atomically (see write_file_atomically; `batch`: renamed with the
// batch's other files).
void write_raw(const std::string& path, const Tensor& t, FileBatch* batch = nullptr);

// What a conversion to a narrower type lost beyond a rounding: finite values past the type's
// range, now infinities, and non-zero values below half its least subnormal, now zeros.
struct Narrowed {
  std::size_t to_infinity = 0;
  std::size_t to_zero = 0;
};

// Converts between f16, bf16, f32 and f64 with one round-to-nearest-even step from the exact
// source value, counting into `narrowed` what it lost. Always returns a new tensor. Throws
// irrun::Error(unsupported) for other types.
Tensor convert_float(const Tensor& t, ElementType to, Narrowed* narrowed = nullptr);
// f16, bf16, f32 or f64: the types convert_float and store_float take.
bool is_convertible_float(ElementType t);
// Stores a double into element i of a tensor of one of those types (bytes at `p`), rounding once
// to nearest-even.
void store_float(ElementType type, std::byte* p, std::size_t i, double v);

// Converts any readable element type to f32 (one round-to-nearest-even step from the exact
// value), or an integer type to i32 (the low 32 bits, as C++'s conversion wraps): the Converts
// OpenVINO adds for a v10 IR's outputs (executor.hpp). Throws Error(unsupported) otherwise.
Tensor convert_to_f32_or_i32(const Tensor& t, ElementType to);
// The same into `out`, of type f32 or i32 and t's shape, every element written (a caller's
// tensor or a kept buffer: no fresh allocation).
void convert_to_f32_or_i32(const Tensor& t, Tensor& out);

// Deterministic pseudo-random tensor, identical on every platform and compiler. Element i takes
// the i-th output x of splitmix64 seeded with `seed`:
//   floats:   v = (x >> 11) * 2^-52 - 1, uniform in [-1, 1), rounded to nearest-even in `type`
//             (a value that rounds up to 1.0 becomes the largest value below 1)
//   integers: by the top 3 bits of x: 0: the type's min or max (x & 1); 1: the low bits of the
//             next output, any value of the type; 2..7: s = (x >> 56) & 31 gives s - 16 in
//             [-16, 16) signed, s in [0, 32) unsigned (negatives, rounding ties and extremes)
//   boolean:  x >> 63
// Supports f16, bf16, f32, f64, i8..i64, u8..u64 and boolean; others throw Error(unsupported).
// Throws Error(limit) on an overflowing size.
Tensor random_tensor(ElementType type, std::vector<std::int64_t> shape, std::uint64_t seed);

struct TensorStats {
  double min;   // NaN when there is no non-NaN element
  double max;   // NaN when there is no non-NaN element
  double mean;  // over non-NaN elements; NaN when there are none
  std::size_t nan_count;
  long double exact_min;  // min and max exactly, 64-bit integers included
  long double exact_max;
};

// Summary over all elements, in double. Supports the types random_tensor supports.
TensorStats stats(const Tensor& t);

// The first min(n, element_count) elements converted to double.
std::vector<double> first_values(const Tensor& t, std::size_t n);

// The same as long double, which holds every value exactly (64-bit integers included).
std::vector<long double> exact_values(const Tensor& t, std::size_t n);

// Elements [begin, begin + n), clamped to the tensor: a window at a time, for whole-tensor passes
// that must not hold a converted copy of the whole tensor (compare_tensors).
std::vector<double> values_at(const Tensor& t, std::size_t begin, std::size_t n);
std::vector<long double> exact_values_at(const Tensor& t, std::size_t begin, std::size_t n);

}  // namespace irrun
