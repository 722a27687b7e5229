// `irrun bench MODEL.xml [options]`: times graph execution (not parsing, not file I/O).
#include <spdlog/spdlog.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "commands.hpp"
#include "irrun/checked.hpp"
#include "irrun/error.hpp"
#include "irrun/executor.hpp"
#include "irrun/inputs.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "irrun/network.hpp"
#include "irrun/ops.hpp"
#include "irrun/tensor.hpp"
#include "irrun/utf8.hpp"

namespace irrun::cli {
namespace {

struct Stats {
  double min = 0, median = 0, max = 0;
};

Stats stats_ms(std::vector<double> seconds) {
  Stats s;
  if (seconds.empty()) return s;
  std::sort(seconds.begin(), seconds.end());
  const std::size_t n = seconds.size();
  const double median = n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
  return {seconds.front() * 1e3, median * 1e3, seconds.back() * 1e3};
}

// Bytes per millisecond to GB/s.
double gbps(double bytes, double ms) {
  return ms > 0 ? bytes / (ms * 1e6) : 0.0;
}

struct LayerRecord {
  std::vector<double> seconds;
  std::size_t bytes = 0;
};

}  // namespace

Command add_bench(CLI::App& app, const Globals& globals) {
  struct Options {
    std::string model;
    std::string weights;
    InputOptions inputs;
    std::uint64_t seed = 0;
    int threads = 0;
    int repeat = 20;
    int warmup = 3;
    std::string format = "text";
    std::string layer;
    kernels::Kernels kernels = kernels::Kernels::best;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand(
      "bench", "Time the model's pooling graph: per layer and total min/median/max ms and GB/s");
  cmd->add_option("model", o->model, "IR .xml file")->required();
  cmd->add_option("--weights", o->weights, "Weights file (default: MODEL.bin)");
  cmd->add_option("-i,--input", o->inputs.inputs,
                  "[NAME=]FILE (.npy or raw .bin); inputs not given are random (see --seed)");
  cmd->add_option("--shape", o->inputs.shapes,
                  "NAME=d0,d1,...: fixes dynamic dims for a raw .bin or a generated input");
  cmd->add_option("--seed", o->seed, "Seed for the random inputs")
      ->capture_default_str()
      ->transform(seed_number());
  cmd->add_option("--threads", o->threads, "Threads (0: all cores)")
      ->capture_default_str()
      ->transform(whole_number(0, NetworkOptions::max_threads));
  cmd->add_option("--repeat", o->repeat, "Timed runs")
      ->capture_default_str()
      ->transform(whole_number(1, 1'000'000'000));
  cmd->add_option("--warmup", o->warmup, "Untimed runs first")
      ->capture_default_str()
      ->transform(whole_number(0, 1'000'000'000));
  cmd->add_option("--format", o->format, "text or json")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
  cmd->add_option("--layer", o->layer, "Time only this pooling layer")->check(layer_name());
  add_kernels_option(cmd, o->kernels);
  cmd->footer(
      "Times the graph's execution on inputs already in memory, each run into the outputs of the\n"
      "run before (allocated once), after its shape inference (done once, as an inference engine\n"
      "compiles a model once); per layer, the kernel alone. The total also counts converting a\n"
      "v10 IR's outputs (f16 as f32, ...) on every run, into the buffers of the run before.\n"
      "GB/s counts the bytes read and written.");

  return {
      cmd, [o, &globals]() {
        auto model = load_model(
            o->model, o->weights.empty() ? std::nullopt : std::optional<std::string>(o->weights));
        if (!o->layer.empty()) model = extract_layer(model, o->layer);
        require_executable(model);
        o->inputs.random_seed = o->seed;
        const auto bound = bind_inputs(model, o->inputs);
        for (const auto& note : bound.notes) spdlog::debug("{}", escape_controls(note));
        for (const auto& lost : bound.warnings) spdlog::warn("{}", escape_controls(lost));
        const Parallel parallel(o->threads);

        std::map<std::size_t, LayerRecord> layers;
        std::vector<double> totals;
        // Each run computes into the buffers of the run before, its outputs' and its intermediate
        // tensors', as an inference request keeps its tensors: allocating and first touching a
        // fresh 64 MB output took twice S9's kernel.
        TensorRecycler recycler;
        const PreparedRun prepared = prepare_run(model, bound.tensors);
        // Every sample's slot up front: a vector growing inside the timed region had put its copy
        // into that run's total (16 ms at 2 million runs), and --repeat 10^9 needs 8 GB per layer,
        // which must be exit 7 under --max-memory, not an allocation failure hours in.
        std::uint64_t timed_series = 1;  // the total's
        for (auto n : model.graph.order) {
          const auto* op = prepared.analysis.nodes[n].op;
          if (!model.graph.nodes[n].reachable || !op || !is_pool(op->kind)) continue;
          layers.emplace(n, LayerRecord{});
          ++timed_series;
        }
        require_memory(
            checked_mul(timed_series * sizeof(double), static_cast<std::uint64_t>(o->repeat)),
            "storing the timings of " + std::to_string(o->repeat) + " runs (--repeat)");
        totals.reserve(static_cast<std::size_t>(o->repeat));
        for (auto& entry : layers)
          entry.second.seconds.reserve(static_cast<std::size_t>(o->repeat));
        for (int run = 0; run < o->warmup + o->repeat; ++run) {
          const bool timed = run >= o->warmup;
          const auto start = std::chrono::steady_clock::now();
          auto outputs = run_model(
              model, prepared, bound.tensors, parallel,
              [&](std::size_t layer, double seconds, std::size_t bytes) {
                if (!timed) return;
                auto& rec = layers[layer];
                rec.seconds.push_back(seconds);
                rec.bytes = bytes;
              },
              {}, o->kernels, &recycler);
          const double seconds =
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
          if (timed) totals.push_back(seconds);
          for (auto& out : outputs)
            if (taken_from_recycler(model, prepared, out)) recycler.keep(std::move(out.tensor));
        }

        const Stats total = stats_ms(totals);
        std::size_t total_bytes = 0;
        for (const auto& [n, rec] : layers) total_bytes += rec.bytes;

        if (o->format == "json") {
          nlohmann::json j;
          j["model"] = o->model;
          j["threads"] = parallel.threads();
          j["kernels"] = kernels_name(o->kernels);
          j["repeat"] = o->repeat;
          j["warmup"] = o->warmup;
          j["total_ms"] = {{"min", total.min}, {"median", total.median}, {"max", total.max}};
          j["total_bytes"] = total_bytes;
          j["total_gbps"] = gbps(static_cast<double>(total_bytes), total.median);
          j["layers"] = nlohmann::json::array();
          for (const auto& [n, rec] : layers) {
            const Stats s = stats_ms(rec.seconds);
            j["layers"].push_back({{"name", model.ir.layers[n].name},
                                   {"type", model.ir.layers[n].type},
                                   {"min_ms", s.min},
                                   {"median_ms", s.median},
                                   {"max_ms", s.max},
                                   {"bytes", rec.bytes},
                                   {"gbps", gbps(static_cast<double>(rec.bytes), s.median)}});
          }
          // A path may hold bytes that are not UTF-8: replaced, not thrown.
          const auto text = j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
          std::printf("%s\n", text.c_str());
          return 0;
        }
        if (!globals.quiet)
          std::printf("%s: %d thread(s), kernels %s, %d timed run(s) after %d warm-up run(s)\n",
                      escape_controls(o->model).c_str(), parallel.threads(),
                      kernels_name(o->kernels).c_str(), o->repeat, o->warmup);
        // The name column fits the longest name (converted models have names of 60+ characters),
        // counted in characters, with control characters escaped.
        int w = 24;
        for (const auto& [n, rec] : layers)
          w = std::max(w,
                       static_cast<int>(display_width(escape_controls(model.ir.layers[n].name))));
        std::printf("%-*s %-16s %10s %10s %10s %9s\n", w, "layer", "type", "min ms", "median ms",
                    "max ms", "GB/s");
        for (const auto& [n, rec] : layers) {
          const Stats s = stats_ms(rec.seconds);
          const auto name = escape_controls(model.ir.layers[n].name);
          const auto pad = static_cast<std::size_t>(w) - display_width(name);
          std::printf("%s%*s %-16s %10.4f %10.4f %10.4f %9.2f\n", name.c_str(),
                      static_cast<int>(pad), "", model.ir.layers[n].type.c_str(), s.min, s.median,
                      s.max, gbps(static_cast<double>(rec.bytes), s.median));
        }
        std::printf("%-*s %-16s %10.4f %10.4f %10.4f %9.2f\n", w, "total", "(graph)", total.min,
                    total.median, total.max, gbps(static_cast<double>(total_bytes), total.median));
        return 0;
      }};
}

}  // namespace irrun::cli
