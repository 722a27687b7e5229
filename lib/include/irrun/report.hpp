// Machine-readable reports: `irrun check --format json`, `irrun check --junit FILE` and
// `irrun run --format json`. The schemas are documented in README.md.
#pragma once

#include <string>
#include <vector>

#include "irrun/check.hpp"
#include "irrun/compare.hpp"
#include "irrun/executor.hpp"

namespace irrun {

// One JSON document for a `check` over several files (pretty-printed, trailing newline).
std::string check_json(const std::vector<CheckReport>& reports);

// JUnit XML for a `check`: <testsuites> with a <testsuite> per file, a <testcase> per checked
// layer (classname = the file, name = the layer) with a <failure> per error on it, and a
// testcase named "(file)" for the file itself, holding problems that belong to no checked layer
// (unreadable file, edge mismatches, opaque layers). Warnings go to <system-out>.
std::string check_junit(const std::vector<CheckReport>& reports);

// Writes check_junit atomically to `path` (irrun::output_error on failure).
void write_check_junit(const std::string& path, const std::vector<CheckReport>& reports);

// One JSON document for a run: per output name, type, shape, min/max/mean, NaN count and the
// first `first_n` values, plus the comparison when `expect` is given.
std::string run_json(const std::string& model_path, const std::vector<Output>& outputs,
                     const ExpectResult* expect, std::size_t first_n = 8);

}  // namespace irrun
