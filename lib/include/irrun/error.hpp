// Errors irrun reports: one exception type whose kind decides the process exit code.
// Part of the public API (see irrun/irrun.hpp).
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

// Public API: exported from a shared libirrun, whose other symbols are hidden.
#pragma GCC visibility push(default)
namespace irrun {

// Exit codes of the irrun tool (documented in README.md).
enum class ExitCode : int {
  ok = 0,
  check_failed = 1,   // `check` found a problem, or `--expect` found a mismatch
  usage = 2,          // bad command line
  bad_model = 3,      // model unreadable, malformed, or failing validation
  bad_input = 4,      // an input blob is missing, unreadable or does not match its Parameter
  output_failed = 5,  // an output file or directory cannot be written
  unsupported = 6,    // the model needs an op or element type irrun cannot execute
  limit = 7,          // a resource limit (e.g. --max-memory) would be exceeded
};

class Error : public std::runtime_error {
 public:
  Error(ExitCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ExitCode code() const { return code_; }

 private:
  ExitCode code_;
};

// A malformed or invalid IR file: what() is "<path>[:<line>]: <detail>".
class ModelError : public Error {
 public:
  ModelError(std::string path, std::size_t line, std::string detail);
  const std::string& path() const { return path_; }
  std::size_t line() const { return line_; }
  const std::string& detail() const { return detail_; }

 private:
  std::string path_;
  std::size_t line_;
  std::string detail_;
};

// A command line that does not fit the model (e.g. `--layer` naming no layer): exit 2.
inline Error usage_error(const std::string& message) {
  return Error(ExitCode::usage, message);
}
inline Error model_error(const std::string& message) {
  return Error(ExitCode::bad_model, message);
}
inline Error input_error(const std::string& message) {
  return Error(ExitCode::bad_input, message);
}
inline Error output_error(const std::string& message) {
  return Error(ExitCode::output_failed, message);
}
inline Error unsupported_error(const std::string& message) {
  return Error(ExitCode::unsupported, message);
}

}  // namespace irrun
#pragma GCC visibility pop
