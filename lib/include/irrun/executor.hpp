// Running a model's graph on input tensors: parse -> infer (on the actual input shapes) -> run,
// with the pool geometry from shape inference handed to the kernels.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "irrun/analysis.hpp"
#include "irrun/kernels/isa.hpp"
#include "irrun/model.hpp"
#include "irrun/parallel.hpp"
#include "irrun/pre_process.hpp"
#include "irrun/tensor.hpp"

namespace irrun {

struct Output {
  std::string name;          // output_name(): the name it is known by
  std::size_t result_layer;  // index into IrModel::layers
  Tensor tensor;
};

// Fails before any compute, naming every layer irrun cannot execute (unsupported_error), or the
// first layer whose shapes do not validate (ModelError).
void require_executable(const Model& model);

// Throws what running `model` throws for layer n, analysed as `analysis`: an op irrun does not
// implement, shapes not inferred, a Const without weights, a <pre-process> block in error (at a
// Parameter), and for a pooling layer an element type its kernels do not take, an adaptive
// output_size not from a Const, adaptive bins over an input dim 0, an output shape not static,
// an output past 2^64 bytes. With run_shapes false (`analysis` on the IR's own shapes, as
// `irrun info` takes it), a pool whose input shape is dynamic leaves the last three to the
// run's shapes. prepare_run checks every reachable layer so, in graph order (the first refusal
// is the one reported); `irrun info` shows the result as its run column.
void require_layer_runs(const Model& model, const Analysis& analysis, std::size_t n,
                        bool run_shapes = true);

// Runs every Result of `model`. `inputs` maps each Parameter (layer index) to its tensor, whose
// element type must be the Parameter's and whose shape must fit the Parameter's shape.
// `on_kernel`, when set, is told after every pooling kernel its layer index, its wall time in
// seconds and the bytes it read and wrote (benchmarks).
// `write_into` maps Result layers to caller tensors: a pooling layer whose output feeds such a
// Result computes straight into that tensor (which must be writable and have the output's type
// and shape: input_error before any compute otherwise), and a v10 IR's output handed out in
// another type is converted into it, unless the tensor overlaps an input or another such tensor.
// The Output then shares its memory; other Results are computed into irrun's memory as usual.
// `choice` picks the fast kernels' ISA or the reference kernels (kernels::Kernels).
using KernelTimer = std::function<void(std::size_t layer, double seconds, std::size_t bytes)>;
std::vector<Output> run_model(const Model& model, const std::map<std::size_t, Tensor>& inputs,
                              const Parallel& parallel, const KernelTimer& on_kernel = {},
                              const std::map<std::size_t, Tensor>& write_into = {},
                              kernels::Kernels choice = kernels::Kernels::best);

// What run_model works out before it computes, for inputs of given shapes: that the model runs
// and its shape inference on those shapes (the kernels' pool geometries). The memory check is
// run_model's, each run: what it allocates depends on the outputs given to compute into. A
// caller that runs a model many times on inputs of the same shapes (irrun bench, Network::run)
// prepares once, as an inference engine compiles a model once: the analysis of a three-layer
// model takes ~2.5 us, as long as a small pooling kernel.
struct PreparedRun {
  std::map<std::size_t, PartialShape> input_shapes;  // by Parameter layer index
  Analysis analysis;
  std::optional<MeanValues> means;  // the <pre-process> block's, subtracted from that input
  std::map<std::size_t, std::string> output_names;  // output_names(), by Result layer index
};
PreparedRun prepare_run(const Model& model, const std::map<std::size_t, Tensor>& inputs);
// Whether `prepared` holds the preparation for inputs of these shapes.
bool prepared_for(const PreparedRun& prepared, const std::map<std::size_t, Tensor>& inputs);

// Buffers kept from one run_model to the next (irrun bench, Network::run), as an inference request
// keeps its tensors: a pooling output no caller tensor receives takes a kept buffer of its exact
// size, neither zeroed nor first touched again (the kernels write every element), where a fresh one
// costs more than a small kernel. A released tensor's buffer is kept when nothing else holds it.
// Runs of the same shapes need the same sizes, so what is kept stays within one run's tensors;
// an allocation past the memory limit (--max-memory) drops what is kept and tries again.
class TensorRecycler {
 public:
  Tensor take(ElementType type, std::vector<std::int64_t> shape);
  void keep(Tensor&& tensor);
  bool empty() const { return kept_.empty(); }

 private:
  std::multimap<std::size_t, Buffer> kept_;  // by size in bytes
};

// run_model on a run prepared for inputs of these shapes (input_error otherwise); with
// `recycler`, tensors of layers are taken from and kept in it. Before any compute, the memory the
// run allocates (not the outputs computed into `write_into`'s tensors) must fit the memory limit
// (Error(limit)); not checked again while `recycler` holds the buffers of an earlier run.
std::vector<Output> run_model(const Model& model, const PreparedRun& prepared,
                              const std::map<std::size_t, Tensor>& inputs, const Parallel& parallel,
                              const KernelTimer& on_kernel = {},
                              const std::map<std::size_t, Tensor>& write_into = {},
                              kernels::Kernels choice = kernels::Kernels::best,
                              TensorRecycler* recycler = nullptr);

// Whether run_model with a recycler took this output's buffer from it, so that a caller done
// with the output may keep it there for the next run: a pooling layer's output, or a v10 IR's
// output converted to f32 or i32 (not an input or weights passed through).
bool taken_from_recycler(const Model& model, const PreparedRun& prepared, const Output& out);

// A model holding just the pooling layer named `layer_name` of `model`: a Parameter shaped like
// the layer's declared data input (named after the producing tensor or layer), the layer's Const
// inputs, the layer and a Result per output (MaxPool-8/14: values, then indices). Weights are
// shared with `model`.
Model extract_layer(const Model& model, const std::string& layer_name);

// The element type in which OpenVINO's read_model hands out an output of a v10 IR
// (update_v10_model: i64, u64, i32 and u32 as i32, every other type but f32 as f32). run_model
// returns a v10 IR's outputs so converted; a v11 IR's keep their types.
ElementType v10_output_type(ElementType type);

// The names outputs are known by (and saved under), one per Result in graph.results order: the
// first name of the tensor the Result reads; without one, v10_output_name() in a v10 IR (as
// update_v10_model adds it), else the Result layer's name. A name an earlier output took gets
// "_1", "_2"... appended (two Results of one tensor: "pool", "pool_1"), as Network::outputs().
std::vector<std::string> output_names(const Model& model);
// Result layer result_layer's name among those.
std::string output_name(const Model& model, std::size_t result_layer);

}  // namespace irrun
