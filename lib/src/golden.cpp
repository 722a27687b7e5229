#include "irrun/golden.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <locale>
#include <map>
#include <set>
#include <span>
#include <sstream>

#include "irrun/blob.hpp"
#include "irrun/dim.hpp"
#include "irrun/error.hpp"
#include "irrun/file_io.hpp"
#include "irrun/npy.hpp"
#include "irrun/sha256.hpp"

namespace irrun {
namespace fs = std::filesystem;
namespace {

std::string data_sha256(const Tensor& t) {
  return sha256_hex(std::span<const std::byte>(t.buffer.data(), t.byte_size()));
}

std::string describe(const std::string& name, ElementType type,
                     const std::vector<std::int64_t>& shape) {
  std::ostringstream s;
  s.imbue(std::locale::classic());
  s << "'" << name << "' (" << to_string(type) << " " << to_string(shape) << ")";
  return s.str();
}

// A file name unique within `used`: STEM.EXT, else STEM_1.EXT, STEM_2.EXT...
std::string unique_name(const std::string& name, const char* ext, std::set<std::string>& used) {
  std::string stem = file_stem(name);
  for (int k = 1; used.count(stem); ++k) stem = file_stem(name) + "_" + std::to_string(k);
  used.insert(stem);
  return stem + ext;
}

TensorComparison problem(const std::string& name, CompareStatus status, std::string detail) {
  TensorComparison c;
  c.name = name;
  c.status = status;
  c.detail = std::move(detail);
  return c;
}

// The golden's element type: the manifest's, unless the file holds another dtype than the one
// irrun writes for it (bf16 is stored widened to f32 in .npy).
ElementType golden_type(ElementType declared, ElementType stored) {
  if (stored == declared || (declared == ElementType::bf16 && stored == ElementType::f32))
    return declared;
  return stored;
}

// A golden file whose sha256 is not the manifest's was changed after it was written.
void note_if_edited(ExpectResult& r, const std::string& file, const std::string& sha256) {
  if (!sha256.empty() && sha256_file(file) != sha256)
    r.notes.push_back(file + ": sha256 differs from " + kManifestFile +
                      " (the golden file was changed after it was written)");
}

// Whether `path` holds the very bytes write_npy makes of `t`: a saved input that replaces its own
// --input file with them loses nothing.
bool npy_file_holds(const std::string& path, const Tensor& t) {
  try {
    const Buffer file = read_file(path);
    const std::string header = npy_header(t.type, t.shape);
    const bool bf16 = t.type == ElementType::bf16;  // written widened to f32
    const std::size_t body = bf16 ? 2 * t.byte_size() : t.byte_size();
    if (file.size() != header.size() + body ||
        std::memcmp(file.data(), header.data(), header.size()) != 0)
      return false;
    const std::byte* data = file.data() + header.size();
    if (!bf16) return std::memcmp(data, t.buffer.data(), body) == 0;
    for (std::size_t i = 0; i < t.element_count(); ++i) {
      std::uint16_t b;
      std::memcpy(&b, t.buffer.data() + 2 * i, 2);
      const std::uint32_t wide = std::uint32_t{b} << 16;
      if (std::memcmp(data + 4 * i, &wide, 4) != 0) return false;
    }
    return true;
  } catch (const Error&) {  // unreadable now: not known to be the same
    return false;
  }
}

// A file the run reads (the model, its weights, an input's file) is never replaced by one it
// writes: `-o .` beside an input named like an output destroyed the input (exit 0), and so did
// an input, model or weights file named manifest.json in DIR. A saved input (`self`) may
// replace its own file only with the same bytes (a golden's saved input given again, or
// replayed from a golden that recorded it as its source): an f64 or f16 .npy in DIR/inputs
// given with --input was replaced by its f32 copy.
void refuse_own_file(const std::string& path, const std::string& what, const Manifest& manifest,
                     const std::vector<RunInput>& inputs, const RunInput* self) {
  const auto same = [&](const std::string& file) {
    std::error_code ec;  // a file that is not there yet is not one of them
    return !file.empty() && fs::equivalent(path, file, ec);
  };
  const auto refuse = [&](const std::string& file, const std::string& role) {
    throw usage_error(path + ": " + what + " would replace " + role + " (" + file +
                      "); write the outputs to another directory");
  };
  if (same(manifest.model_xml.path)) refuse(manifest.model_xml.path, "the model");
  if (manifest.model_bin && same(manifest.model_bin->path))
    refuse(manifest.model_bin->path, "the model's weights");
  for (const auto& in : inputs) {
    if (!same(in.source_path)) continue;
    if (&in != self) refuse(in.source_path, "the file of input '" + in.name + "'");
    if (npy_file_holds(in.source_path, *in.tensor)) continue;
    const auto type = in.tensor->type == ElementType::bf16 ? ElementType::f32 : in.tensor->type;
    throw usage_error(path + ": " + what + " would replace its --input file (" + in.source_path +
                      "), which holds other bytes than the " + std::string(to_string(type)) + " " +
                      to_string(in.tensor->shape) +
                      " .npy it would write; write the outputs to another directory");
  }
}

// A file the run writes. The manifest's old file is removed first, so a symlink there is
// replaced, not followed.
struct WrittenFile {
  fs::path path;
  std::string what;
  bool follows_links = true;
};

// Two files of one run that are one file (DIR/out.npy a symlink to inputs/x.npy or to
// manifest.json) would leave the manifest describing bytes that the other write replaced.
void refuse_one_target(const std::vector<WrittenFile>& files) {
  std::map<fs::path, const WrittenFile*> written;
  for (const auto& file : files) {
    std::error_code ec;
    const auto target =
        fs::weakly_canonical(file.follows_links ? write_target(file.path) : file.path, ec);
    if (ec) continue;  // the write itself reports what is wrong
    const auto [other, fresh] = written.emplace(target, &file);
    if (!fresh)
      throw usage_error(file.path.string() + ": " + file.what + " and " + other->second->what +
                        " (" + other->second->path.string() + ") would be written to one file, " +
                        target.string() + "; write the outputs to another directory");
  }
}

}  // namespace

std::string file_stem(const std::string& name) {
  std::string s;
  for (char c : name)
    s += (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-') ? c : '_';
  if (s.empty() || s == "." || s == "..") s = "output";
  // File names end at 255 bytes: a longer name keeps its start and a digest of all of it.
  if (s.size() > kMaxStem) {
    const auto digest = sha256_hex(std::as_bytes(std::span<const char>(name.data(), name.size())));
    s = s.substr(0, kMaxStem - 17) + "-" + digest.substr(0, 16);
  }
  return s;
}

std::vector<RunInput> run_inputs(const Model& model, const BoundInputs& bound) {
  std::vector<RunInput> inputs;
  for (auto n : model.graph.parameters) {
    const auto t = bound.tensors.find(n);
    if (t == bound.tensors.end()) continue;
    const auto f = bound.files.find(n);
    inputs.push_back(
        {model.ir.layers[n].name, &t->second, f == bound.files.end() ? std::string() : f->second});
  }
  return inputs;
}

Manifest describe_run(const Model& model, const RunRecord& run) {
  Manifest m;
  m.irrun_version = IRRUN_VERSION;
  m.model_xml = {model.ir.path, sha256_file(model.ir.path)};
  if (model.weights) m.model_bin = FileDigest{model.weights_path, sha256_file(model.weights_path)};
  m.run = run;
  return m;
}

// flock on the directory itself: no lock file left behind; released by close.
GoldenLock::GoldenLock(const std::string& dir, bool exclusive)
    : fd_(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) {
  if (fd_ >= 0) ::flock(fd_, exclusive ? LOCK_EX : LOCK_SH);
}

GoldenLock::~GoldenLock() {
  if (fd_ >= 0) ::close(fd_);
}

Manifest write_golden(const std::string& dir, Manifest manifest,
                      const std::vector<RunInput>& inputs, const std::vector<Output>& outputs,
                      bool npy, bool save_inputs) {
  // The digests of unsaved input files are read before anything in DIR changes: a source that
  // is gone (a replayed golden's saved input whose original file was deleted) must leave the old
  // golden whole, not a directory without a manifest.
  std::vector<std::string> source_sha256(inputs.size());
  const auto saved = [&](const RunInput& in) { return save_inputs || in.save; };
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (inputs[k].source_path.empty() || saved(inputs[k])) continue;
    try {
      source_sha256[k] = sha256_file(inputs[k].source_path);
    } catch (const Error& e) {
      throw Error(e.code(), std::string(e.what()) + " (the source of input '" + inputs[k].name +
                                "', recorded in the golden; --save-inputs saves the input itself)");
    }
  }
  manifest.inputs.clear();
  manifest.outputs.clear();
  // Every file first, written to temporary files renamed together once all are complete (a
  // failure on the way leaves none of them), then their digests, then the manifest.
  FileBatch batch;
  std::vector<std::string> paths;
  std::set<std::string> used;
  for (const auto& o : outputs) {
    ManifestTensor t;
    t.name = o.name;
    t.type = o.tensor.type;
    t.shape = o.tensor.shape;
    t.file = unique_name(o.name, npy ? ".npy" : ".bin", used);
    t.data_sha256 = data_sha256(o.tensor);
    paths.push_back((fs::path(dir) / t.file).string());
    manifest.outputs.push_back(std::move(t));
  }
  std::set<std::string> used_inputs;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const auto& in = inputs[k];
    ManifestTensor t;
    t.name = in.name;
    t.type = in.tensor->type;
    t.shape = in.tensor->shape;
    t.source = in.source_path.empty() ? "random" : "file";
    t.source_path = in.source_path;
    t.data_sha256 = data_sha256(*in.tensor);
    if (saved(in)) {
      t.file = "inputs/" + unique_name(in.name, ".npy", used_inputs);
    } else {
      t.sha256 = source_sha256[k];
    }
    manifest.inputs.push_back(std::move(t));
  }
  for (std::size_t k = 0; k < outputs.size(); ++k)
    refuse_own_file(paths[k], "output '" + outputs[k].name + "'", manifest, inputs, nullptr);
  bool saves = false;
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (!manifest.inputs[k].file.empty()) {
      saves = true;
      refuse_own_file((fs::path(dir) / manifest.inputs[k].file).string(),
                      "saved input '" + inputs[k].name + "'", manifest, inputs, &inputs[k]);
    }
  // The manifest's old file is removed below, then rewritten.
  refuse_own_file((fs::path(dir) / kManifestFile).string(), "the manifest", manifest, inputs,
                  nullptr);
  std::vector<WrittenFile> files;
  for (std::size_t k = 0; k < outputs.size(); ++k)
    files.push_back({paths[k], "output '" + outputs[k].name + "'"});
  for (std::size_t k = 0; k < inputs.size(); ++k)
    if (!manifest.inputs[k].file.empty())
      files.push_back(
          {fs::path(dir) / manifest.inputs[k].file, "saved input '" + inputs[k].name + "'"});
  files.push_back({fs::path(dir) / kManifestFile, "the manifest", false});
  refuse_one_target(files);
  make_directories(dir, "--output-dir");
  // Before the old manifest goes: DIR/inputs taken by a file fails with DIR still whole.
  if (saves) make_directories(fs::path(dir) / "inputs", "the saved inputs' directory");
  // Runs writing the same directory at once take turns, so that the manifest describes the files
  // beside it.
  const GoldenLock lock(dir, true);
  // A write that fails half-way must not leave an old manifest describing a mix of old and new
  // files: remove it first, so the directory is either complete or has no manifest.
  std::error_code ec;
  fs::remove(fs::path(dir) / kManifestFile, ec);
  if (ec) throw output_error(dir + ": cannot replace " + kManifestFile + ": " + ec.message());
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    npy ? write_npy(paths[k], outputs[k].tensor, &batch)
        : write_raw(paths[k], outputs[k].tensor, &batch);
  }
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (manifest.inputs[k].file.empty()) continue;
    write_npy((fs::path(dir) / manifest.inputs[k].file).string(), *inputs[k].tensor, &batch);
  }
  batch.publish();
  for (std::size_t k = 0; k < outputs.size(); ++k)
    manifest.outputs[k].sha256 = sha256_file(paths[k]);
  for (auto& t : manifest.inputs)
    if (!t.file.empty()) t.sha256 = sha256_file((fs::path(dir) / t.file).string());
  write_manifest(dir, manifest);
  return manifest;
}

InputOptions replay_inputs(const Manifest& manifest, const std::string& dir) {
  InputOptions options;
  options.shapes = manifest.run.shapes;
  for (const auto& in : manifest.inputs) {
    if (!in.file.empty()) {
      options.inputs.push_back(in.name + "=" + (fs::path(dir) / in.file).string());
    } else if (in.source == "file") {
      if (in.source_path.empty())
        throw input_error((fs::path(dir) / kManifestFile).string() + ": input '" + in.name +
                          "' came from a file but the manifest records neither its saved file "
                          "nor its source_path");
      const auto sha = sha256_file(in.source_path);
      if (!in.sha256.empty() && sha != in.sha256)
        throw input_error(in.source_path + ": input '" + in.name +
                          "' changed since the golden was written (sha256 " + sha + ", manifest " +
                          in.sha256 + "); give --input or rewrite the golden");
      options.inputs.push_back(in.name + "=" + in.source_path);
    } else if (in.source == "random") {
      if (!manifest.run.seed)
        throw input_error((fs::path(dir) / kManifestFile).string() + ": input '" + in.name +
                          "' was generated but the manifest records no seed");
      options.random_seed = manifest.run.seed;
    } else {
      throw input_error((fs::path(dir) / kManifestFile).string() + ": input '" + in.name +
                        "' has no saved file and unknown source '" + in.source + "'");
    }
  }
  return options;
}

ExpectResult expect_golden(const std::string& path, const std::vector<Output>& outputs,
                           const Tolerance& tolerance) {
  ExpectResult r;
  r.golden = path;
  r.tolerance = tolerance;
  std::error_code ec;
  if (!fs::exists(path, ec)) throw input_error(path + ": --expect: no such file or directory");

  if (!fs::is_directory(path, ec)) {
    // A FIFO or device (/dev/zero) is no golden: its "size" is 0, and a read may never end.
    if (!fs::is_regular_file(path, ec))
      throw input_error(path +
                        ": --expect: not a regular file, expected a golden .npy or raw "
                        "file, or a golden directory");
    if (outputs.size() != 1)
      throw Error(ExitCode::usage,
                  "--expect " + path + ": a single golden file needs a model with one output; " +
                      "this one has " + std::to_string(outputs.size()) +
                      " (compare with a golden directory written by --output-dir)");
    const Output& o = outputs[0];
    if (is_npy_path(path)) {
      const Tensor golden = read_npy(path);
      r.outputs.push_back(compare_tensors(o.name, golden, golden_type(o.tensor.type, golden.type),
                                          o.tensor, tolerance));
    } else {
      const auto size = fs::file_size(path, ec);
      if (ec || size != o.tensor.byte_size()) {
        std::ostringstream s;
        s.imbue(std::locale::classic());
        s << "the raw golden " << path << " holds " << (ec ? 0 : size) << " byte(s), output "
          << describe(o.name, o.tensor.type, o.tensor.shape) << " has " << o.tensor.byte_size();
        r.outputs.push_back(problem(o.name, CompareStatus::shape_mismatch, s.str()));
      } else {
        const Tensor golden = read_raw(path, o.tensor.type, o.tensor.shape);
        r.outputs.push_back(compare_tensors(o.name, golden, golden.type, o.tensor, tolerance));
      }
    }
    return r;
  }

  const Manifest manifest = read_manifest(path);
  std::vector<bool> used(outputs.size(), false);
  for (const auto& g : manifest.outputs) {
    std::size_t k = 0;
    while (k < outputs.size() && (used[k] || outputs[k].name != g.name)) ++k;
    if (k == outputs.size()) {
      r.outputs.push_back(problem(g.name, CompareStatus::missing_in_run,
                                  "the golden has output " + describe(g.name, g.type, g.shape) +
                                      ", this run does not produce it"));
      continue;
    }
    used[k] = true;
    const Output& o = outputs[k];
    const auto file = (fs::path(path) / g.file).string();
    Tensor golden;
    try {
      if (g.file.empty()) throw input_error("the manifest lists no file for it");
      golden = is_npy_path(file) ? read_npy(file) : read_raw(file, g.type, g.shape);
    } catch (const Error& e) {
      r.outputs.push_back(problem(o.name, CompareStatus::missing_in_golden,
                                  std::string("golden file unreadable: ") + e.what()));
      continue;
    }
    note_if_edited(r, file, g.sha256);
    r.outputs.push_back(
        compare_tensors(o.name, golden, golden_type(g.type, golden.type), o.tensor, tolerance));
  }
  for (const auto& in : manifest.inputs) {  // a saved input edited: the replay's data changed
    std::error_code ec;
    const auto file = (fs::path(path) / in.file).string();
    if (!in.file.empty() && fs::is_regular_file(file, ec)) note_if_edited(r, file, in.sha256);
  }
  for (std::size_t k = 0; k < outputs.size(); ++k) {
    if (used[k]) continue;
    const auto& o = outputs[k];
    r.outputs.push_back(problem(o.name, CompareStatus::missing_in_golden,
                                "this run produced output " +
                                    describe(o.name, o.tensor.type, o.tensor.shape) +
                                    ", the golden has no such output"));
  }
  return r;
}

}  // namespace irrun
