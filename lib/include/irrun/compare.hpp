// Comparing a run's outputs with golden tensors: tolerances, NaN == NaN, shape and element type
// checks, and the first values out of tolerance by their N-d coordinate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "irrun/tensor.hpp"

namespace irrun {

// A value `actual` matches its golden value `expected` when
//   actual == expected (so +0 == -0 and inf == inf), or both are NaN, or
//   |actual - expected| <= atol + rtol * |expected|   (numpy.isclose with the golden as b).
// The defaults (0, 0) demand exact equality. The bound atol + rtol * |expected| is evaluated in
// double for every type. Integer values and their differences are exact (64-bit ones included),
// so for integers the test is |actual - expected| <= floor(atol + rtol * |expected|): --atol 1
// accepts off-by-one results, e.g. OpenVINO's truncated i8/u8 averages against irrun's rounded
// ones.
struct Tolerance {
  double rtol = 0.0;
  double atol = 0.0;
};

struct ValueMismatch {
  std::vector<std::int64_t> index;  // N-d coordinate, row-major
  long double expected = 0;         // exact for every element type, 64-bit integers included
  long double actual = 0;
};

enum class CompareStatus {
  match,
  mismatch,          // same shape and type, values out of tolerance
  shape_mismatch,    // different shapes
  type_mismatch,     // different element types
  missing_in_run,    // the golden has an output this run does not produce
  missing_in_golden  // this run produced an output the golden does not have
};

// "match", "mismatch", "shape-mismatch", "type-mismatch", "missing-in-run", "missing-in-golden".
std::string to_string(CompareStatus status);

struct TensorComparison {
  std::string name;
  CompareStatus status = CompareStatus::match;
  ElementType type = ElementType::undefined;  // of the values compared (set when they are)
  std::string detail;     // one line for shape/type/missing problems; empty otherwise
  std::size_t count = 0;  // values compared
  std::size_t out_of_tolerance = 0;
  double max_abs_error = 0;          // over values that are not both NaN; inf when one is NaN/inf
  double max_rel_error = 0;          // |a - e| / |e|; inf where e == 0 and a != e
  std::vector<ValueMismatch> first;  // the first few values out of tolerance, in index order

  bool passed() const { return status == CompareStatus::match; }
};

// Compares `actual` with `expected`. `expected_type` is the golden's element type (usually
// expected.type; it differs for a bf16 golden stored widened in an f32 .npy). Values are
// compared exactly: floats in double, integers in long double. Keeps the first `max_reported`
// mismatches.
TensorComparison compare_tensors(const std::string& name, const Tensor& expected,
                                 ElementType expected_type, const Tensor& actual,
                                 const Tolerance& tolerance, std::size_t max_reported = 5);

// N-d coordinate of row-major flat index `flat` in `shape`.
std::vector<std::int64_t> unravel_index(std::size_t flat, const std::vector<std::int64_t>& shape);

// The comparison of a whole run against a golden directory or file.
struct ExpectResult {
  std::string golden;  // the --expect path
  Tolerance tolerance;
  std::vector<TensorComparison> outputs;  // golden order, then outputs missing from the golden
  std::vector<std::string> notes;  // e.g. a golden file whose sha256 differs from the manifest

  bool passed() const;
};

// Text lines: "expect 'NAME': ok ..." / "expect 'NAME': MISMATCH: ..." and "  at [i,j,k,l]: ..."
// lines, then one summary line. `verbose_ok`: include the lines of matching outputs (and the
// summary line when everything matches).
std::vector<std::string> format_lines(const ExpectResult& result, bool verbose_ok = true);

}  // namespace irrun
