// libFuzzer target: the whole `irrun check` path on files. The input is split after the first
// "</net>": the part up to it is model.xml, the rest (if any) model.bin, both written to a
// private temporary directory. check_file runs in normal and strict mode and every diagnostic
// is formatted. A model that passes and is small (every static shape of at most 4096 elements)
// is then run on random inputs, whole and each pooling layer alone (--layer), so the executor and
// kernels see hostile geometry too, and again prepared with kept buffers, which must give the
// same bytes. check's JSON and JUnit reports must parse. The only acceptable failure is
// irrun::Error.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <pugixml.hpp>
#include <string>
#include <string_view>

#include "irrun/analysis.hpp"
#include "irrun/blob.hpp"
#include "irrun/check.hpp"
#include "irrun/checked.hpp"
#include "irrun/error.hpp"
#include "irrun/executor.hpp"
#include "irrun/inputs.hpp"
#include "irrun/report.hpp"
#include "irrun/tensor.hpp"

namespace {

namespace fs = std::filesystem;

// A private directory that exists only while one input runs (libFuzzer's exit skips atexit).
const fs::path& work_dir() {
  static const fs::path dir =
      (fs::exists("/dev/shm") ? fs::path("/dev/shm") : fs::temp_directory_path()) /
      ("irrun-fuzz-check-" + std::to_string(::getpid()));
  return dir;
}

struct WorkDir {
  WorkDir() { fs::create_directories(work_dir()); }
  ~WorkDir() {
    std::error_code ec;
    fs::remove_all(work_dir(), ec);
  }
};

void write(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

bool small(const irrun::PartialShape& s) {
  if (!s.is_static()) return false;
  const auto n = irrun::checked_product(s.to_static());
  return n && *n <= 4096;
}

void run_if_small(const irrun::Model& m) {
  const auto a = irrun::analyze(m.ir, m.graph, m.weights ? &*m.weights : nullptr);
  for (const auto& node : a.nodes) {
    for (const auto& out : node.outputs) {
      if (!small(out.shape)) return;
    }
  }
  irrun::require_executable(m);
  irrun::InputOptions options;
  options.random_seed = 1;
  const auto bound = irrun::bind_inputs(m, options);
  const irrun::Parallel parallel(1);
  const auto fresh = irrun::run_model(m, bound.tensors, parallel);
  for (const auto& out : fresh) (void)irrun::stats(out.tensor);
  // Prepared runs with kept buffers (bench, Network::run) give a fresh run's bytes, run after run.
  const auto prepared = irrun::prepare_run(m, bound.tensors);
  irrun::TensorRecycler recycler;
  for (int run = 0; run < 2; ++run) {
    const auto kept = irrun::run_model(m, prepared, bound.tensors, parallel, {}, {},
                                       irrun::kernels::Kernels::best, &recycler);
    if (kept.size() != fresh.size()) __builtin_trap();
    for (std::size_t i = 0; i < kept.size(); ++i) {
      const auto &a = kept[i].tensor, &b = fresh[i].tensor;
      if (a.type != b.type || a.shape != b.shape ||
          std::memcmp(a.buffer.data(), b.buffer.data(), a.byte_size()) != 0)
        __builtin_trap();
    }
  }
}

// The whole model, then each pooling layer alone (`--layer`).
void try_run(const irrun::Model& m) {
  try {
    run_if_small(m);
  } catch (const irrun::Error&) {
  }
  for (const auto& layer : m.ir.layers) {
    if (!irrun::has_type(layer, "AvgPool") && !irrun::has_type(layer, "AdaptiveAvgPool") &&
        !irrun::has_type(layer, "MaxPool") && !irrun::has_type(layer, "AdaptiveMaxPool"))
      continue;
    try {
      run_if_small(irrun::extract_layer(m, layer.name));
    } catch (const irrun::Error&) {
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  irrun::set_memory_limit(std::uint64_t{64} << 20);
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const WorkDir scope;
  const auto xml_path = work_dir() / "model.xml";
  const auto bin_path = work_dir() / "model.bin";
  const auto end = input.find("</net>");
  if (end == std::string_view::npos) {
    write(xml_path, input);
  } else {
    write(xml_path, input.substr(0, end + 6));
    write(bin_path, input.substr(end + 6));
  }
  for (bool strict : {false, true}) {
    irrun::CheckOptions options;
    options.strict = strict;
    try {
      const auto report = irrun::check_file(xml_path.string(), options);
      for (const auto& d : report.diagnostics) (void)irrun::format(report, d);
      // The reports are valid JSON and XML whatever the model holds.
      irrun::CheckJson json;
      json.add(report);
      if (!nlohmann::json::accept(json.str())) __builtin_trap();
      irrun::CheckJunit junit;
      junit.add(report);
      pugi::xml_document doc;
      if (!doc.load_string(junit.str().c_str())) __builtin_trap();
      if (!strict && report.passed() && report.model) try_run(*report.model);
    } catch (const irrun::Error&) {
    }
  }
  return 0;
}
