// The library facade: load an OpenVINO IR model, check it, and run its pooling graph on tensors
// the caller owns. Part of the public API (see irrun/irrun.hpp); it includes only public headers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "irrun/diagnostic.hpp"
#include "irrun/element_type.hpp"
#include "irrun/tensor.hpp"

// Public API: exported from a shared libirrun, whose other symbols are hidden.
#pragma GCC visibility push(default)
namespace irrun {

// A model input (a Parameter) or output (a Result), as shape inference sees it before any run.
struct PortInfo {
  std::string name;  // the key of this input or output in Network::run's maps
  ElementType type = ElementType::undefined;
  std::vector<std::int64_t> shape;  // -1 for a dynamic dim; empty for a scalar or a dynamic rank
  bool dynamic_rank = false;
};

// What `irrun check` reports for one file.
struct CheckResult {
  Diagnostics diagnostics;            // in file order; warnings already promoted under strict
  std::vector<std::string> messages;  // one line per diagnostic, as `irrun check` prints it
  std::size_t checked_layers = 0;     // layers whose outputs were inferred and compared

  std::size_t errors() const;
  std::size_t warnings() const;
  bool passed() const { return errors() == 0; }
};

// Which pooling kernels run() uses (the tool's --kernels): the fast kernels at the best ISA the
// CPU has, capped at AVX2, or in portable C++ (the same bits on every path), or the readable
// reference kernels, the oracle the fast ones are tested against (the same bits but on f32
// AvgPool, where an output may be one ulp from the fast kernel's; both are within one ulp of the
// exact average).
enum class Kernels { best, avx2, portable, reference };

struct NetworkOptions {
  // The weights file; by default the xml path with ".bin", which may be missing when the model
  // needs no Const data.
  std::optional<std::string> weights;
  // Threads each kernel of run() may use, including the caller's; 0 means one per core the
  // process may run on (its CPU affinity). Results are bit-identical for every count. A count
  // below 0 or above max_threads makes load() throw Error(usage). The threads start on the first
  // run() that splits a kernel over them, not in load().
  int threads = 0;
  static constexpr int max_threads = 1024;  // also the irrun tool's --threads bound
  Kernels kernels = Kernels::best;
};

// A loaded model. Errors are irrun::Error (irrun/error.hpp), whose code() is the exit code the
// irrun tool would give. Movable (a moved-from Network may only be assigned to or destroyed), not
// copyable. run() and check() are const, but one Network is not meant to run on several threads
// at once: it owns one thread pool.
class Network {
 public:
  // Reads the xml and its weights (mapped, not copied) and builds the graph. Throws ModelError
  // (bad_model) for an unreadable or malformed file, naming the file and line.
  static Network load(const std::string& xml_path, const NetworkOptions& options = {});

  Network(Network&&) noexcept;
  Network& operator=(Network&&) noexcept;
  ~Network();

  const std::string& path() const;
  // Parameters in file order, named by their layer name (run() also accepts their tensor names).
  const std::vector<PortInfo>& inputs() const;
  // Results in file order, named by their input tensor name, else (v10) their producer's name as
  // OpenVINO gives it ("layer" or "layer.i"), else the Result layer's name; a name already taken
  // by an earlier output gets "_1", "_2"... appended.
  const std::vector<PortInfo>& outputs() const;

  // `irrun check` on this model: infers every supported layer and compares it with the dims the
  // file declares. `strict` turns OpenVINO's silent leniencies into errors. Does not throw for
  // problems in the model; they are diagnostics.
  CheckResult check(bool strict = false) const;

  // Runs every Result. `inputs` holds one tensor per Parameter, keyed by its name; each must have
  // the Parameter's element type, a static shape that fits the Parameter's, and a buffer of at
  // least byte_size() bytes whose data is aligned to the element size (as is every tensor given
  // in `outputs`). Inputs are read in place, never copied: wrap caller memory with
  // Tensor::wrap. Throws Error before any compute for a missing, unknown or mismatching input
  // (bad_input), a layer irrun cannot execute (unsupported) or a shape that does not validate
  // (bad_model); also Error(limit) when the memory limit (set_memory_limit) would be exceeded.
  //
  // `outputs`: a tensor the caller puts under an output's name (e.g. Tensor::wrap of its own
  // array) receives that output: it must be writable and have the output's element type and
  // shape (checked before any compute; a mismatch throws bad_input, and so do two outputs given
  // overlapping memory, but for one tensor read by two Results given the same). A pooling output is
  // computed straight into it; an output that passes a Parameter or Const through, or whose tensor
  // overlaps an input, is copied into it once at the end. Outputs the
  // map does not name are added to it as irrun-owned tensors (a pass-through one shares the
  // input's or the weights' memory). Such an added entry is then a tensor "the caller put
  // there" on the next run with the same map, and may be a read-only view of an input: for
  // repeated runs, name every output with a writable tensor of your own, or pass a fresh map.
  //
  // The buffers of tensors between layers are kept for the next run on inputs of the same
  // shapes (as much memory as one run's intermediate tensors; none for a single pooling layer),
  // and released by a run on other shapes. Under a memory limit (set_memory_limit) none are
  // kept: idle in one Network, they would count against every other allocation.
  void run(const std::map<std::string, Tensor>& inputs,
           std::map<std::string, Tensor>& outputs) const;
  // The same with an empty `outputs`: returns every output in irrun-owned memory (see above).
  std::map<std::string, Tensor> run(const std::map<std::string, Tensor>& inputs) const;

 private:
  struct Impl;
  explicit Network(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace irrun
#pragma GCC visibility pop
