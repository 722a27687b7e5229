// `irrun check MODEL.xml [MORE.xml ...]`
#include <spdlog/spdlog.h>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.hpp"
#include "irrun/check.hpp"
#include "irrun/error.hpp"
#include "irrun/file_io.hpp"
#include "irrun/ir_reader.hpp"
#include "irrun/report.hpp"
#include "irrun/utf8.hpp"

namespace irrun::cli {

Command add_check(CLI::App& app, const Globals& globals) {
  struct Options {
    std::vector<std::string> models;
    CheckOptions check;
    std::string weights;
    std::string format = "text";
    std::string junit;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "check", "Infer every pooling layer's output shape and compare it with the declared <dim>s");
  cmd->add_option("models", opts->models, "IR .xml files")->required();
  cmd->add_flag("--strict", opts->check.strict,
                "Treat warnings (what OpenVINO silently ignores) as errors");
  cmd->add_option("--weights", opts->weights, "Weights file (default: MODEL.bin); one model only");
  cmd->add_option("--format", opts->format,
                  "text: one line per problem; json: one JSON document for all files")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--junit", opts->junit,
                  "Also write a JUnit XML report to FILE (a testsuite per file, a testcase per "
                  "checked layer)");
  cmd->footer(
      "One line per problem: FILE:LINE: error: layer ID 'NAME' (TYPE-VERSION opsetN) PORT: what\n"
      "Exit 0 when every file is clean, 1 when any file has a problem, 2 on usage errors,\n"
      "5 when the --junit file or the report on stdout cannot be written.");

  return {
      cmd, [opts, &globals]() {
        if (!opts->weights.empty()) {
          if (opts->models.size() != 1) {
            spdlog::error("--weights applies to one model, {} given", opts->models.size());
            return static_cast<int>(ExitCode::usage);
          }
          opts->check.weights = opts->weights;
        }
        for (const auto& path : opts->models) {
          const auto weights = opts->weights.empty() ? default_weights_path(path) : opts->weights;
          for (const auto& input : {path, weights}) {
            std::error_code ec;  // a missing file is check's own error, reported below
            if (!opts->junit.empty() && std::filesystem::equivalent(opts->junit, input, ec)) {
              spdlog::error(
                  "--junit {}: is {}, an input of the check; the report would overwrite "
                  "it",
                  opts->junit, input);
              return static_cast<int>(ExitCode::usage);
            }
          }
        }
        const bool text = opts->format == "text";
        bool all_passed = true;
        CheckJson json;
        CheckJunit junit;
        for (const auto& path : opts->models) {
          const auto start = std::chrono::steady_clock::now();
          auto report = check_file(path, opts->check);
          spdlog::debug(
              "{}: {} layer(s), {} checked, in {:.3f} ms", path,
              report.model ? report.model->ir.layers.size() : 0, report.checked.size(),
              std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                  .count());
          all_passed = all_passed && report.passed();
          if (text) {
            for (const auto& d : report.diagnostics) std::printf("%s\n", format(report, d).c_str());
            if (!globals.quiet)
              std::printf("%s: %s: %zu layer(s) checked, %zu error(s), %zu warning(s)\n",
                          escape_controls(path).c_str(), report.passed() ? "ok" : "FAILED",
                          report.checked.size(), report.errors(), report.warnings());
          }
          if (!text) json.add(report);
          if (!opts->junit.empty()) junit.add(report);
        }
        if (!text) std::fputs(json.str().c_str(), stdout);
        std::fflush(stdout);
        if (!opts->junit.empty()) {
          // As --output-dir: CI writes reports/irrun-check.xml on a fresh checkout.
          const auto parent = std::filesystem::path(opts->junit).parent_path();
          if (!parent.empty()) make_directories(parent, "the directory of --junit");
          junit.write(opts->junit);
        }
        return static_cast<int>(all_passed ? ExitCode::ok : ExitCode::check_failed);
      }};
}

}  // namespace irrun::cli
