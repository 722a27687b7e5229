// Golden directories: writing a run's outputs (and optionally inputs) with their manifest, and
// comparing a run with a golden directory or a single golden .npy/.bin file (`--expect`).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "irrun/compare.hpp"
#include "irrun/executor.hpp"
#include "irrun/inputs.hpp"
#include "irrun/manifest.hpp"
#include "irrun/model.hpp"

namespace irrun {

// A file name from a tensor name: anything but [A-Za-z0-9._-] becomes '_'. A stem longer than
// kMaxStem is cut to its first kMaxStem - 17 characters, '-' and 16 hex digits of the name's
// sha256, so that a suffix and an extension still fit a file name (255 bytes).
inline constexpr std::size_t kMaxStem = 200;
std::string file_stem(const std::string& name);

// One input of a run, as bound to its Parameter.
struct RunInput {
  std::string name;         // the Parameter's name
  const Tensor* tensor;     // the bound tensor
  std::string source_path;  // the --input file it came from; empty when generated
  bool save = false;        // saved even without save_inputs (a golden that saved it, replayed)
};

// The inputs of a bound run, in Parameter order.
std::vector<RunInput> run_inputs(const Model& model, const BoundInputs& bound);

// A manifest describing the model (path and sha256 of the xml and, if present, the weights) and
// the run's options; inputs and outputs are filled in by write_golden.
Manifest describe_run(const Model& model, const RunRecord& run);

// An flock on a golden directory, held while this lives: write_golden holds it exclusive, and a
// comparison that reads a golden should hold it shared from its first read to its last, so that
// it never sees a directory half rewritten. A directory that cannot be opened is not locked.
class GoldenLock {
 public:
  GoldenLock(const std::string& dir, bool exclusive);
  ~GoldenLock();
  GoldenLock(const GoldenLock&) = delete;
  GoldenLock& operator=(const GoldenLock&) = delete;

 private:
  int fd_ = -1;
};

// Writes DIR/NAME.npy (or .bin) per output, DIR/inputs/NAME.npy per input when `save_inputs`
// or its `save`,
// then DIR/manifest.json, each file atomically. Returns the manifest written. Throws
// irrun::output_error when something cannot be written.
Manifest write_golden(const std::string& dir, Manifest manifest,
                      const std::vector<RunInput>& inputs, const std::vector<Output>& outputs,
                      bool npy, bool save_inputs);

// The input options that replay a golden run: its saved input files, else its recorded --input
// files (whose sha256 must still match) and --seed, and its --shape values.
InputOptions replay_inputs(const Manifest& manifest, const std::string& dir);

// Compares `outputs` with the golden at `path`: a directory holding manifest.json, or a single
// .npy/.bin file for a model with one output. A missing golden directory, manifest or file
// throws irrun::input_error; a golden file listed in the manifest but unreadable is a mismatch.
ExpectResult expect_golden(const std::string& path, const std::vector<Output>& outputs,
                           const Tolerance& tolerance);

}  // namespace irrun
