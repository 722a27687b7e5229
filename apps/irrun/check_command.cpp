// `irrun check MODEL.xml [MORE.xml ...]`
#include <spdlog/spdlog.h>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "irrun/check.hpp"
#include "irrun/error.hpp"

namespace irrun::cli {

Command add_check(CLI::App& app, const Globals& globals) {
  struct Options {
    std::vector<std::string> models;
    CheckOptions check;
    std::string weights;
  };
  auto opts = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "check", "Infer every pooling layer's output shape and compare it with the declared <dim>s");
  cmd->add_option("models", opts->models, "IR .xml files")->required();
  cmd->add_flag("--strict", opts->check.strict,
                "Treat warnings (what OpenVINO silently ignores) as errors");
  cmd->add_option("--weights", opts->weights, "Weights file (default: MODEL.bin); one model only");
  cmd->footer(
      "One line per problem: FILE:LINE: error: layer ID 'NAME' (TYPE-VERSION opsetN) PORT: what\n"
      "Exit 0 when every file is clean, 1 when any file has a problem, 2 on usage errors.");

  return {cmd, [opts, &globals]() {
            if (!opts->weights.empty()) {
              if (opts->models.size() != 1) {
                spdlog::error("--weights applies to one model, {} given", opts->models.size());
                return static_cast<int>(ExitCode::usage);
              }
              opts->check.weights = opts->weights;
            }
            bool all_passed = true;
            for (const auto& path : opts->models) {
              const auto report = check_file(path, opts->check);
              for (const auto& d : report.diagnostics)
                std::printf("%s\n", format(report, d).c_str());
              all_passed = all_passed && report.passed();
              if (!globals.quiet)
                std::printf("%s: %s: %zu layer(s) checked, %zu error(s), %zu warning(s)\n",
                            path.c_str(), report.passed() ? "ok" : "FAILED", report.checked.size(),
                            report.errors(), report.warnings());
            }
            return static_cast<int>(all_passed ? ExitCode::ok : ExitCode::check_failed);
          }};
}

}  // namespace irrun::cli
