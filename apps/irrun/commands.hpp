// The irrun subcommands: each registers its options on a CLI11 subcommand and runs from there.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "irrun/kernels/isa.hpp"

namespace irrun::cli {

// Options of the top-level command, shared by every subcommand.
struct Globals {
  bool verbose = false;
  bool quiet = false;
};

// A registered subcommand and what runs it after parsing (returning the exit code).
struct Command {
  CLI::App* sub;
  std::function<int()> run;
};

// --kernels best|avx2|portable|reference (run and bench), and its names.
void add_kernels_option(CLI::App* cmd, kernels::Kernels& choice);
std::string kernels_name(kernels::Kernels choice);

// Option validators with one clear message each: a whole number in [min, max]; a --seed (any
// uint64, no sign, no wrap); a tolerance (finite, >= 0); a --layer (not empty). The first two
// rewrite the value in canonical decimal, so they go in ->transform(), not ->check() (which hands
// them a copy).
CLI::Validator whole_number(std::int64_t min, std::int64_t max);
CLI::Validator seed_number();
CLI::Validator tolerance_number();
CLI::Validator layer_name();

// The one-line error for arguments the parsed command did not take: the first of them, with the
// option it was likely meant to be, or the commands that take it; fallback when none was parsed.
// args: the command line as parsed, in order (for its "--").
std::string unexpected_argument(const CLI::App& top, const std::vector<std::string>& args,
                                const std::string& fallback);

Command add_check(CLI::App& app, const Globals& globals);
Command add_info(CLI::App& app, const Globals& globals);
Command add_run(CLI::App& app, const Globals& globals);
Command add_bench(CLI::App& app, const Globals& globals);

}  // namespace irrun::cli
