// `irrun run MODEL.xml [options]` (also `irrun MODEL.xml [options]`).
#include <spdlog/spdlog.h>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "irrun/blob.hpp"
#include "irrun/check.hpp"
#include "irrun/compare.hpp"
#include "irrun/dim.hpp"
#include "irrun/error.hpp"
#include "irrun/executor.hpp"
#include "irrun/golden.hpp"
#include "irrun/inputs.hpp"
#include "irrun/network.hpp"
#include "irrun/report.hpp"
#include "irrun/sha256.hpp"
#include "irrun/utf8.hpp"

namespace irrun::cli {
namespace {

std::string summary(const Output& o) {
  std::string s = "output '" + escape_controls(o.name) +
                  "': " + std::string(to_string(o.tensor.type)) + " " + to_string(o.tensor.shape);
  if (o.tensor.element_count() == 0) return s + "  no elements";  // no min, max or mean
  const auto st = stats(o.tensor);
  char buf[160];
  // Integers print as exact integers.
  const bool integer = !is_floating(o.tensor.type);
  if (integer)
    std::snprintf(buf, sizeof buf, "  min %.0Lf  max %.0Lf  mean %.6g", st.exact_min, st.exact_max,
                  st.mean);
  else
    std::snprintf(buf, sizeof buf, "  min %.6g  max %.6g  mean %.6g", st.min, st.max, st.mean);
  s += buf;
  if (st.nan_count) s += "  NaN " + std::to_string(st.nan_count);
  s += "\n  [";
  const auto values = exact_values(o.tensor, 8);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (integer)
      std::snprintf(buf, sizeof buf, "%s%.0Lf", i ? ", " : "", values[i]);
    else
      std::snprintf(buf, sizeof buf, "%s%.7g", i ? ", " : "", static_cast<double>(values[i]));
    s += buf;
  }
  if (o.tensor.element_count() > values.size()) s += ", ...";
  return s + "]";
}

}  // namespace

Command add_run(CLI::App& app, const Globals& globals) {
  struct Options {
    std::string model;
    std::string weights;
    InputOptions inputs;
    bool random = false;
    std::uint64_t seed = 0;
    int threads = 0;
    std::string output_dir;
    std::string output_format = "npy";
    bool save_inputs = false;
    std::string layer;
    std::string expect;
    Tolerance tolerance;
    std::string format = "text";
    kernels::Kernels kernels = kernels::Kernels::best;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("run", "Run the model's pooling graph on input blobs (default)");
  cmd->add_option("model", o->model, "IR .xml file")->required();
  cmd->add_option("--weights", o->weights, "Weights file (default: MODEL.bin)");
  cmd->add_option("-i,--input", o->inputs.inputs,
                  "[NAME=]FILE: raw little-endian .bin in the input's element type, or .npy");
  cmd->add_option("--shape", o->inputs.shapes,
                  "NAME=d0,d1,...: fixes dynamic dims for a raw .bin or a generated input");
  auto* random =
      cmd->add_flag("--random-input", o->random, "Generate every input not given (see --seed)");
  cmd->add_option("--seed", o->seed, "Seed for --random-input")
      ->capture_default_str()
      ->transform(seed_number())
      ->needs(random);  // else ignored: a seed that decides nothing is a mistake
  cmd->add_option("--threads", o->threads, "Threads (0: all cores); results never depend on it")
      ->capture_default_str()
      ->transform(whole_number(0, NetworkOptions::max_threads));
  auto* output_dir = cmd->add_option(
      "-o,--output-dir", o->output_dir,
      "Write one file per output into DIR, and DIR/manifest.json describing the run");
  cmd->add_option("--output-format", o->output_format, "npy or bin")
      ->capture_default_str()
      ->check(CLI::IsMember({"npy", "bin"}))
      ->needs(output_dir);
  cmd->add_flag("--save-inputs", o->save_inputs,
                "Also write every input (given or generated) as DIR/inputs/NAME.npy, so DIR "
                "alone replays the run with --expect DIR")
      ->needs(output_dir);
  cmd->add_option("--layer", o->layer,
                  "Run only this pooling layer; --input feeds its data input, Consts come from "
                  "the .bin")
      ->check(layer_name());
  auto* expect = cmd->add_option(
      "--expect", o->expect,
      "Compare the outputs with a golden DIR (written by --output-dir) or a single .npy/.bin; "
      "exit 1 on a mismatch. Without --input/--random-input/--shape the golden's inputs, "
      "--shape and --layer are replayed");
  cmd->add_option("--rtol", o->tolerance.rtol,
                  "Relative tolerance for --expect: |got - golden| <= atol + rtol*|golden|")
      ->capture_default_str()
      ->check(tolerance_number())
      ->needs(expect);
  cmd->add_option("--atol", o->tolerance.atol,
                  "Absolute tolerance for --expect (default 0 with rtol 0: exact, NaN == NaN)")
      ->capture_default_str()
      ->check(tolerance_number())
      ->needs(expect);
  cmd->add_option("--format", o->format, "Summary on stdout: text or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  add_kernels_option(cmd, o->kernels);

  return {
      cmd, [o, &globals]() {
        namespace fs = std::filesystem;
        std::error_code ec;
        std::optional<Manifest> golden;
        if (!o->expect.empty() && !fs::exists(o->expect, ec))
          throw input_error(o->expect + ": --expect: no such file or directory");
        // Shared from the manifest's read to the comparison's: a run rewriting the golden then
        // waits, and this one never reads it half written. Released before this run writes.
        std::optional<GoldenLock> reading;
        if (!o->expect.empty() && fs::is_directory(o->expect, ec)) {
          reading.emplace(o->expect, false);
          golden = read_manifest(o->expect);
        }
        const bool replay =
            golden && o->inputs.inputs.empty() && !o->random && o->inputs.shapes.empty();
        const bool replay_layer = replay && o->layer.empty() && golden->run.layer;
        if (replay_layer) {
          o->layer = *golden->run.layer;
          spdlog::info("--expect {}: running --layer {} as the golden did", o->expect, o->layer);
        }

        const auto full = load_model(
            o->model, o->weights.empty() ? std::nullopt : std::optional<std::string>(o->weights));
        spdlog::debug("{}: IR v{}, {} layers, {} edges, weights {}", full.ir.path,
                      full.ir.ir_version, full.ir.layers.size(), full.ir.edges.size(),
                      full.weights ? full.weights_path : std::string("none"));
        // OpenVINO runs a model whose declared dims are wrong; so does irrun, but says so.
        std::size_t wrong = 0;
        for (const auto& d : check_model(full, false)) {
          wrong +=
              d.rule == "dim-mismatch" || d.rule == "type-mismatch" || d.rule == "edge-mismatch";
          if (d.rule == "name-collision")
            spdlog::warn("{}{}: {} (OpenVINO's read_model refuses the model; irrun runs it)",
                         escape_controls(where(full.ir, d.line)),
                         escape_controls(describe(full.ir.layers[*d.layer])),
                         escape_controls(d.message));
        }
        if (wrong)
          spdlog::warn(
              "{}: {} declared shape(s) or type(s) differ from the inferred ones (irrun "
              "check lists them); the outputs have the inferred shapes",
              escape_controls(o->model), wrong);
        // A layer the golden recorded but the model no longer has is the golden's problem (exit
        // 4), not the command line's.
        const auto model = [&] {
          try {
            return o->layer.empty() ? full : extract_layer(full, o->layer);
          } catch (const Error& e) {
            if (!replay_layer || e.code() != ExitCode::usage) throw;
            throw input_error(o->expect + ": the golden's --layer: " + e.what());
          }
        }();
        require_executable(model);
        InputOptions inputs = o->inputs;
        if (replay) {
          inputs = replay_inputs(*golden, o->expect);
          spdlog::debug("--expect {}: replaying the golden's inputs", o->expect);
        } else if (o->random) {
          inputs.random_seed = o->seed;
        }
        const auto bound = bind_inputs(model, inputs);
        for (const auto& note : bound.notes) spdlog::info("{}", escape_controls(note));
        for (const auto& lost : bound.warnings) spdlog::warn("{}", escape_controls(lost));
        const Parallel parallel(o->threads);
        const auto start = std::chrono::steady_clock::now();
        const auto outputs = run_model(model, bound.tensors, parallel, {}, {}, o->kernels);
        spdlog::debug(
            "ran {} output(s) on {} thread(s) in {:.3f} ms", outputs.size(), parallel.threads(),
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count());

        // Compare before writing: --output-dir may be the --expect directory itself.
        std::optional<ExpectResult> result;
        if (!o->expect.empty()) {
          result = expect_golden(o->expect, outputs, o->tolerance);
          if (golden) {
            if (sha256_file(full.ir.path) != golden->model_xml.sha256)
              result->notes.push_back(o->model + ": the model differs from the one the " +
                                      "golden was written from (sha256 of the xml)");
            if (full.weights && golden->model_bin &&
                sha256_file(full.weights_path) != golden->model_bin->sha256)
              result->notes.push_back(full.weights_path + ": the weights differ from the ones " +
                                      "the golden was written from (sha256 of the bin)");
            // The fast kernels agree among themselves bit for bit, and with the reference
            // kernels everywhere but on f32 AvgPool (within one ulp there).
            const std::string kernels = kernels_name(o->kernels);
            if ((kernels == "reference") != (golden->run.kernels == "reference"))
              result->notes.push_back("the golden was written with --kernels " +
                                      golden->run.kernels + ", this run uses " + kernels +
                                      ": f32 AvgPool outputs may differ by one ulp");
          }
          for (const auto& note : result->notes) spdlog::warn("{}", escape_controls(note));
        }

        reading.reset();
        if (!o->output_dir.empty()) {
          RunRecord record;
          if (!o->layer.empty()) record.layer = o->layer;
          record.shapes = inputs.shapes;
          record.inputs = inputs.inputs;
          record.seed = inputs.random_seed;
          record.output_format = o->output_format;
          record.threads = o->threads;
          record.kernels = kernels_name(o->kernels);
          auto ins = run_inputs(model, bound);
          // A replay rewriting a golden records the golden's own options and input sources,
          // not the paths of its saved inputs it read them from, and saves again what the golden
          // saved (its source may have changed since): the new golden replays alone.
          if (replay) {
            record.inputs = golden->run.inputs;
            record.seed = golden->run.seed;
            for (auto& in : ins)
              for (const auto& g : golden->inputs)
                if (g.name == in.name) {
                  in.source_path = g.source == "file" ? g.source_path : "";
                  in.save = !g.file.empty();
                }
          }
          write_golden(o->output_dir, describe_run(full, record), ins, outputs,
                       o->output_format == "npy", o->save_inputs);
        }

        if (o->format == "json") {
          std::fputs(run_json(o->model, outputs, result ? &*result : nullptr).c_str(), stdout);
        } else {
          if (!globals.quiet) {
            for (const auto& out : outputs) std::printf("%s\n", summary(out).c_str());
          }
          if (result) {
            for (const auto& line : format_lines(*result, !globals.quiet))
              std::printf("%s\n", escape_controls(line).c_str());
          }
        }
        std::fflush(stdout);
        if (result && !result->passed()) return static_cast<int>(ExitCode::check_failed);
        return 0;
      }};
}

}  // namespace irrun::cli
