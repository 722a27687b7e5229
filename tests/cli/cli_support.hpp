// Test-only helpers for the end-to-end CLI tests: run the built irrun binary (IRRUN_BINARY) with
// an argument vector (no shell, so no quoting), capture stdout, stderr and the exit code, and
// give paths into the samples directory (IRRUN_SAMPLES_DIR) and a scratch directory.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#ifndef IRRUN_BINARY
#error "tests/CMakeLists.txt defines IRRUN_BINARY as the path of the irrun executable"
#endif
#ifndef IRRUN_SAMPLES_DIR
#error "tests/CMakeLists.txt defines IRRUN_SAMPLES_DIR as the samples directory"
#endif

#include "support/scratch_dir.hpp"

namespace irrun::testing {

namespace fs = std::filesystem;

// Path of a file in samples/.
inline std::string sample(const std::string& name) {
  return (fs::path(IRRUN_SAMPLES_DIR) / name).string();
}

// What one run of the binary produced.
struct RunResult {
  int exit_code = -1;  // the process exit status, or 128 + signal if it was killed
  std::string out;     // stdout
  std::string err;     // stderr

  // stdout split into lines (without the '\n').
  std::vector<std::string> out_lines() const { return split_lines(out); }
  std::vector<std::string> err_lines() const { return split_lines(err); }

  static std::vector<std::string> split_lines(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    return lines;
  }
};

// Where a run's stdout goes: a file read back into RunResult::out, /dev/full, nowhere (closed),
// or a pipe whose reader is gone (`| head -1` once head has ended; SIGPIPE at its default).
enum class Stdout { captured, full_disk, closed, broken_pipe };

// Runs the executable at path `program` with `args` (argv[1..]); stdin is /dev/null, stdout and
// stderr go to files in a scratch directory and are read back once the process has exited. A run
// that hangs is killed by SIGALRM after `timeout_seconds` (exit code 128 + 14), so it fails its
// case, not the suite.
inline RunResult run_program(const std::string& program, const std::vector<std::string>& args,
                             unsigned timeout_seconds = 120, Stdout to = Stdout::captured) {
  ScratchDir dir("cli-run");
  const auto out_path = dir.file("stdout");
  const auto err_path = dir.file("stderr");

  std::vector<std::string> argv_store;
  argv_store.reserve(args.size() + 1);
  argv_store.emplace_back(program);
  argv_store.insert(argv_store.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_store) argv.push_back(a.data());
  argv.push_back(nullptr);

  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    const int in = ::open("/dev/null", O_RDONLY);
    const int out = ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (in < 0 || out < 0 || err < 0) ::_exit(126);
    const int full = to == Stdout::full_disk ? ::open("/dev/full", O_WRONLY) : out;
    if (full < 0) ::_exit(126);
    ::dup2(in, STDIN_FILENO);
    ::dup2(full, STDOUT_FILENO);
    ::dup2(err, STDERR_FILENO);
    if (to == Stdout::closed) ::close(STDOUT_FILENO);
    if (to == Stdout::broken_pipe) {
      int ends[2];
      if (::pipe(ends) != 0) ::_exit(126);
      ::close(ends[0]);
      ::dup2(ends[1], STDOUT_FILENO);
      ::signal(SIGPIPE, SIG_DFL);
    }
    ::alarm(timeout_seconds);  // survives exec; its default action terminates the process
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error("waitpid failed");
  }
  RunResult r;
  if (WIFEXITED(status))
    r.exit_code = WEXITSTATUS(status);
  else if (WIFSIGNALED(status))
    r.exit_code = 128 + WTERMSIG(status);
  r.out = read_text(out_path);
  r.err = read_text(err_path);
  return r;
}

// run_program on IRRUN_BINARY.
inline RunResult run_irrun(const std::vector<std::string>& args, unsigned timeout_seconds = 120,
                           Stdout to = Stdout::captured) {
  return run_program(IRRUN_BINARY, args, timeout_seconds, to);
}

inline RunResult run_irrun(std::initializer_list<std::string> args) {
  return run_irrun(std::vector<std::string>(args));
}

// True when some line of `lines` contains every one of `parts`.
inline bool any_line_has_all(const std::vector<std::string>& lines,
                             std::initializer_list<std::string> parts) {
  for (const auto& line : lines) {
    bool all = true;
    for (const auto& p : parts) all = all && line.find(p) != std::string::npos;
    if (all) return true;
  }
  return false;
}

// Number of lines of `lines` that contain `part`.
inline std::size_t count_lines_with(const std::vector<std::string>& lines,
                                    const std::string& part) {
  std::size_t n = 0;
  for (const auto& line : lines) n += line.find(part) != std::string::npos ? 1 : 0;
  return n;
}

}  // namespace irrun::testing
