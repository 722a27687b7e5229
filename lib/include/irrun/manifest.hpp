// The golden manifest: DIR/manifest.json, written by `irrun MODEL --output-dir DIR` next to the
// outputs. It records what the numbers depend on (model digests, layer, shapes, inputs, seed)
// and every input and output (name, element type, shape, file, sha256), so that `--expect DIR`
// can replay the run and compare. The JSON schema is documented in README.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "irrun/element_type.hpp"

namespace irrun {

inline constexpr const char* kManifestFormat = "irrun-golden";
inline constexpr int kManifestVersion = 1;
inline constexpr const char* kManifestFile = "manifest.json";

struct FileDigest {
  std::string path;    // as given on the command line
  std::string sha256;  // of the file's bytes
};

struct ManifestTensor {
  std::string name;  // outputs: the output name; inputs: the Parameter's name
  ElementType type = ElementType::undefined;
  std::vector<std::int64_t> shape;
  std::string file;         // relative to the golden directory; empty when not saved there
  std::string sha256;       // of `file`, or of `source_path` for an input not saved; else empty
  std::string data_sha256;  // of the raw little-endian element bytes, whatever the file format
  std::string source;       // inputs only: "file" or "random"
  std::string source_path;  // inputs only: the --input path, for source "file"
};

// The command-line options that decide the numbers, plus informational ones.
struct RunRecord {
  std::optional<std::string> layer;   // --layer
  std::vector<std::string> shapes;    // --shape, as given
  std::vector<std::string> inputs;    // --input, as given
  std::optional<std::uint64_t> seed;  // --seed, when --random-input
  std::string output_format = "npy";  // --output-format
  int threads = 0;                    // informational: outputs never depend on it
  std::string kernels = "best";       // informational: --kernels (reference: f32 AvgPool may
                                      // differ by one ulp from the fast kernels)
};

struct Manifest {
  int format_version = kManifestVersion;
  std::string irrun_version;
  FileDigest model_xml;
  std::optional<FileDigest> model_bin;  // absent when the model has no weights file
  RunRecord run;
  std::vector<ManifestTensor> inputs;
  std::vector<ManifestTensor> outputs;
};

// Pretty-printed JSON (2-space indent, trailing newline).
std::string to_json(const Manifest& manifest);

// Parses a manifest; anything malformed or of another format version throws
// irrun::input_error("<origin>: not an irrun manifest: <what>").
Manifest parse_manifest(const std::string& text, const std::string& origin);

// DIR/manifest.json. Throws irrun::input_error when it is missing or malformed.
Manifest read_manifest(const std::string& dir);

// Writes DIR/manifest.json atomically.
void write_manifest(const std::string& dir, const Manifest& manifest);

}  // namespace irrun
