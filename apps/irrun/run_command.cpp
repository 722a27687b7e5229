// `irrun run MODEL.xml [options]` (also `irrun MODEL.xml [options]`).
#include <spdlog/spdlog.h>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "commands.hpp"
#include "irrun/blob.hpp"
#include "irrun/dim.hpp"
#include "irrun/error.hpp"
#include "irrun/executor.hpp"
#include "irrun/inputs.hpp"
#include "irrun/npy.hpp"

namespace irrun::cli {
namespace {

// A file name from a tensor name: anything but [A-Za-z0-9._-] becomes '_'.
std::string file_stem(const std::string& name) {
  std::string s;
  for (char c : name)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  if (s.empty() || s == "." || s == "..") s = "output";
  return s;
}

std::string summary(const Output& o) {
  const auto st = stats(o.tensor);
  std::string s = "output '" + o.name + "': " + std::string(to_string(o.tensor.type)) + " " +
                  to_string(o.tensor.shape);
  char buf[160];
  std::snprintf(buf, sizeof buf, "  min %.6g  max %.6g  mean %.6g", st.min, st.max, st.mean);
  s += buf;
  if (st.nan_count) s += "  NaN " + std::to_string(st.nan_count);
  s += "\n  [";
  const auto values = first_values(o.tensor, 8);
  for (std::size_t i = 0; i < values.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%s%.7g", i ? ", " : "", values[i]);
    s += buf;
  }
  if (o.tensor.element_count() > values.size()) s += ", ...";
  return s + "]";
}

void write_outputs(const std::vector<Output>& outputs, const std::string& dir, bool npy) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
    throw output_error(dir + ": --output-dir is not a directory");
  fs::create_directories(dir, ec);
  if (ec) throw output_error(dir + ": cannot create the output directory: " + ec.message());
  std::set<std::string> used;
  for (const auto& o : outputs) {
    std::string stem = file_stem(o.name);
    for (int k = 1; used.count(stem); ++k) stem = file_stem(o.name) + "_" + std::to_string(k);
    used.insert(stem);
    const auto path = (fs::path(dir) / (stem + (npy ? ".npy" : ".bin"))).string();
    npy ? write_npy(path, o.tensor) : write_raw(path, o.tensor);
    spdlog::debug("wrote {}", path);
  }
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
    std::string layer;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("run", "Run the model's pooling graph on input blobs (default)");
  cmd->add_option("model", o->model, "IR .xml file")->required();
  cmd->add_option("--weights", o->weights, "Weights file (default: MODEL.bin)");
  cmd->add_option("-i,--input", o->inputs.inputs,
                  "[NAME=]FILE: raw little-endian .bin in the input's element type, or .npy");
  cmd->add_option("--shape", o->inputs.shapes, "NAME=d0,d1,...: fixes dynamic dims for a raw .bin");
  cmd->add_flag("--random-input", o->random, "Generate every input not given (see --seed)");
  cmd->add_option("--seed", o->seed, "Seed for --random-input")->capture_default_str();
  cmd->add_option("--threads", o->threads, "Threads (0: all cores); results never depend on it")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("-o,--output-dir", o->output_dir, "Write one file per output into DIR");
  cmd->add_option("--output-format", o->output_format, "npy or bin")
      ->capture_default_str()
      ->check(CLI::IsMember({"npy", "bin"}));
  cmd->add_option("--layer", o->layer,
                  "Run only this pooling layer; --input feeds its data input, Consts come from "
                  "the .bin");

  return {cmd, [o, &globals]() {
            auto model =
                load_model(o->model, o->weights.empty() ? std::nullopt
                                                        : std::optional<std::string>(o->weights));
            if (!o->layer.empty()) model = extract_layer(model, o->layer);
            require_executable(model);
            if (o->random) o->inputs.random_seed = o->seed;
            const auto bound = bind_inputs(model, o->inputs);
            for (const auto& note : bound.notes) spdlog::info("{}", note);
            const Parallel parallel(o->threads);
            const auto outputs = run_model(model, bound.tensors, parallel);
            if (!o->output_dir.empty())
              write_outputs(outputs, o->output_dir, o->output_format == "npy");
            if (!globals.quiet) {
              for (const auto& out : outputs) std::printf("%s\n", summary(out).c_str());
            }
            return 0;
          }};
}

}  // namespace irrun::cli
