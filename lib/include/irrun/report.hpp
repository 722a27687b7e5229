// Machine-readable reports: `irrun check --format json`, `irrun check --junit FILE` and
// `irrun run --format json`. The schemas are documented in README.md.
#pragma once

#include <string>
#include <vector>

#include "irrun/check.hpp"
#include "irrun/compare.hpp"
#include "irrun/executor.hpp"

namespace irrun {

// `check`'s JSON and JUnit reports, built file by file: a check over many files holds each
// file's part of the document as text, not its model.
class CheckJson {
 public:
  void add(const CheckReport& report);
  std::string str() const;  // one pretty-printed document for all files, trailing newline

 private:
  std::string files_;  // the "files" array's elements, indented, comma-separated
  bool passed_ = true;
};

// JUnit XML: <testsuites> with a <testsuite> per file, a <testcase> per checked layer
// (classname = the file, name = the layer) with a <failure> per error on it, and a testcase
// named "(file)" for the file itself, holding problems that belong to no checked layer
// (unreadable file, edge mismatches, opaque layers). Warnings go to <system-out>.
class CheckJunit {
 public:
  void add(const CheckReport& report);
  std::string str() const;
  void write(const std::string& path) const;  // atomically (irrun::output_error on failure)

 private:
  std::string suites_;  // the <testsuite> elements
  std::size_t tests_ = 0, failures_ = 0, errors_ = 0;
};

// CheckJson / CheckJunit of several reports at once.
std::string check_json(const std::vector<CheckReport>& reports);
std::string check_junit(const std::vector<CheckReport>& reports);

// One JSON document for a run: per output name, type, shape, min/max/mean, NaN count and the
// first `first_n` values, plus the comparison when `expect` is given.
std::string run_json(const std::string& model_path, const std::vector<Output>& outputs,
                     const ExpectResult* expect, std::size_t first_n = 8);

}  // namespace irrun
