#include "irrun/compare.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <locale>
#include <sstream>

#include "fp_control.hpp"
#include "irrun/blob.hpp"
#include "irrun/dim.hpp"
#include "irrun/number_text.hpp"

namespace irrun {
namespace {

// Whole numbers below 2^53 print in full, others as %.9g; `integer` values (exact in long double,
// 64-bit ones included) always in full.
std::string number(long double v, bool integer = false) {
  const bool whole = std::isfinite(v) && v == std::trunc(v) && (integer || std::fabs(v) < 0x1p53);
  return whole ? fixed_text(v, 0) : general_text(v, 9);
}

std::string index_text(const std::vector<std::int64_t>& index) {
  std::string s = "[";
  for (std::size_t i = 0; i < index.size(); ++i) {
    if (i) s += ',';
    s += std::to_string(index[i]);
  }
  return s + "]";
}

// |got - golden|, infinite where either is NaN: a NaN against a number is as far off as can be.
template <class V>
V abs_error(V got, V golden) {
  return std::isnan(got) || std::isnan(golden) ? std::numeric_limits<V>::infinity()
                                               : std::fabs(got - golden);
}

// Adds to c's error statistics and mismatches the values of elements offset .. offset + a.size()
// - 1, V = double or long double.
template <class V>
void compare_values(TensorComparison& c, const std::vector<V>& e, const std::vector<V>& a,
                    std::size_t offset, const std::vector<std::int64_t>& shape,
                    const Tolerance& tolerance, std::size_t max_reported) {
  const V inf = std::numeric_limits<V>::infinity();
  for (std::size_t i = 0; i < a.size(); ++i) {
    const V x = a[i], y = e[i];
    if (x == y || (std::isnan(x) && std::isnan(y))) continue;
    const V abs_err = abs_error(x, y);
    // An infinite error is infinitely far relatively too (inf / inf would be NaN, which max drops).
    const V rel_err = y == 0 || std::isinf(abs_err) ? inf : abs_err / std::fabs(y);
    c.max_abs_error = std::max(c.max_abs_error, static_cast<double>(abs_err));
    c.max_rel_error = std::max(c.max_rel_error, static_cast<double>(rel_err));
    // NaN against a number, and inf against anything else, never match. The bound is evaluated
    // in double for every type (as numpy.isclose does): integers, whose difference is exact, get
    // the same bound as floats (the double 0.3 times 10 is 3 in double, just below in long double).
    const double bound = tolerance.atol + tolerance.rtol * static_cast<double>(std::fabs(y));
    const bool ok = std::isfinite(abs_err) && abs_err <= static_cast<V>(bound);
    if (ok) continue;
    ++c.out_of_tolerance;
    if (c.first.size() < max_reported)
      c.first.push_back({unravel_index(offset + i, shape), static_cast<long double>(y),
                         static_cast<long double>(x)});
  }
}

}  // namespace

std::string to_string(CompareStatus status) {
  switch (status) {
    case CompareStatus::match:
      return "match";
    case CompareStatus::mismatch:
      return "mismatch";
    case CompareStatus::shape_mismatch:
      return "shape-mismatch";
    case CompareStatus::type_mismatch:
      return "type-mismatch";
    case CompareStatus::missing_in_run:
      return "missing-in-run";
    case CompareStatus::missing_in_golden:
      return "missing-in-golden";
  }
  return "mismatch";
}

std::vector<std::int64_t> unravel_index(std::size_t flat, const std::vector<std::int64_t>& shape) {
  std::vector<std::int64_t> index(shape.size(), 0);
  for (std::size_t k = shape.size(); k-- > 0;) {
    const auto extent = static_cast<std::size_t>(std::max<std::int64_t>(shape[k], 1));
    index[k] = static_cast<std::int64_t>(flat % extent);
    flat /= extent;
  }
  return index;
}

TensorComparison compare_tensors(const std::string& name, const Tensor& expected,
                                 ElementType expected_type, const Tensor& actual,
                                 const Tolerance& tolerance, std::size_t max_reported) {
  const detail::FpScope ieee;  // IEEE defaults (fp_control.hpp)
  TensorComparison c;
  c.name = name;
  if (expected_type != actual.type) {
    c.status = CompareStatus::type_mismatch;
    std::ostringstream s;
    s.imbue(std::locale::classic());
    s << "element type " << to_string(actual.type) << " differs from the golden's "
      << to_string(expected_type);
    c.detail = s.str();
    return c;
  }
  if (expected.shape != actual.shape) {
    c.status = CompareStatus::shape_mismatch;
    std::ostringstream s;
    s.imbue(std::locale::classic());
    s << "shape " << to_string(actual.shape) << " differs from the golden's "
      << to_string(expected.shape);
    c.detail = s.str();
    return c;
  }
  const std::size_t n = actual.element_count();
  c.count = n;
  c.type = actual.type;
  // Floats compare in double (exact for every float type); integers in long double, exact for
  // 64-bit values too, so a difference of 1 between two large i64 values is never lost. A window
  // of values at a time: a whole converted copy would be 2-16x the tensor's size.
  constexpr std::size_t kWindow = std::size_t{1} << 16;
  const auto windows = [&](auto values) {
    for (std::size_t k = 0; k < n; k += kWindow)
      compare_values(c, values(expected, k, kWindow), values(actual, k, kWindow), k, actual.shape,
                     tolerance, max_reported);
  };
  if (is_floating(actual.type))
    windows(values_at);
  else
    windows(exact_values_at);
  if (c.out_of_tolerance) c.status = CompareStatus::mismatch;
  return c;
}

bool ExpectResult::passed() const {
  return std::all_of(outputs.begin(), outputs.end(),
                     [](const TensorComparison& c) { return c.passed(); });
}

std::vector<std::string> format_lines(const ExpectResult& result, bool verbose_ok) {
  std::vector<std::string> lines;
  const std::string tol =
      "rtol " + number(result.tolerance.rtol) + ", atol " + number(result.tolerance.atol);
  std::size_t failed = 0;
  for (const auto& c : result.outputs) {
    std::string head = "expect '";
    head.append(c.name).append("': ");
    if (c.passed()) {
      if (verbose_ok)
        lines.push_back(head + "ok: " + std::to_string(c.count) + " value(s) within " + tol +
                        " (max abs error " + number(c.max_abs_error) + ", max rel error " +
                        number(c.max_rel_error) + ")");
      continue;
    }
    ++failed;
    if (c.status != CompareStatus::mismatch) {
      lines.push_back(head + "MISMATCH: " + c.detail + " [" + to_string(c.status) + "]");
      continue;
    }
    lines.push_back(head + "MISMATCH: " + std::to_string(c.out_of_tolerance) + " of " +
                    std::to_string(c.count) + " value(s) out of tolerance (" + tol +
                    "); max abs error " + number(c.max_abs_error) + ", max rel error " +
                    number(c.max_rel_error));
    const bool integer = !is_floating(c.type);
    for (const auto& m : c.first)
      lines.push_back("  at " + index_text(m.index) + ": golden " + number(m.expected, integer) +
                      ", got " + number(m.actual, integer) + " (abs error " +
                      number(abs_error(m.actual, m.expected), integer) + ")");
    if (c.out_of_tolerance > c.first.size())
      lines.push_back("  ... and " + std::to_string(c.out_of_tolerance - c.first.size()) + " more");
  }
  if (failed == 0 && !verbose_ok) return lines;
  std::string summary = "expect ";
  summary.append(result.golden).append(": ");
  if (failed == 0)
    summary += "ok: " + std::to_string(result.outputs.size()) + " output(s) match (" + tol + ")";
  else
    summary += "FAILED: " + std::to_string(failed) + " of " +
               std::to_string(result.outputs.size()) + " output(s) differ from the golden";
  lines.push_back(summary);
  return lines;
}

}  // namespace irrun
