// One side of the A/B harness (ab_main.cpp): a benchmark shape set up and run against one build
// of irrun. scripts/ab compiles this file twice: against the base revision's library, built with
// -Dirrun=irrun_base so that both libraries link into one program, with AB_SIDE=base; and against
// the working tree's with AB_SIDE=new. Each side exports plain C functions named after its side.
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

#include "../shapes.hpp"
#include "irrun/blob.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "irrun/kernels/max_pool.hpp"
#include "irrun/parallel.hpp"

#define AB_CAT2(a, b) a##b
#define AB_CAT(a, b) AB_CAT2(a, b)
#define AB_FN(name) AB_CAT(AB_SIDE, AB_CAT(_, name))

namespace {

struct Case {
  Shape shape;
  irrun::PoolGeometry g;
  irrun::Tensor in, out;
  std::optional<irrun::Tensor> indices;
  irrun::Parallel par{1};  // two pools in one process would contend for the cores
  irrun::kernels::Isa isa = irrun::kernels::Isa::best;
};

}  // namespace

// Whether the benchmark table has a shape named `id`.
extern "C" int AB_FN(has)(const char* id) {
  for (const Shape& s : shapes())
    if (std::string(s.id) == id) return 1;
  return 0;
}

// The shape named `id` (nullptr when there is none). Without `in`, a random input (seed 1) and
// zeroed outputs of its own; with `in`, views of the other side's tensors, so that both sides
// read and write the same memory and share its cache state.
extern "C" void* AB_FN(make)(const char* id, int avx2, float* in, float* out, std::int64_t* idx) {
  for (const Shape& s : shapes()) {
    if (std::string(s.id) != id) continue;
    auto* c = new Case;
    c->shape = s;
    c->g = *infer(s).geometry;
    c->isa = avx2 != 0 ? irrun::kernels::Isa::avx2 : irrun::kernels::Isa::best;
    const auto od = out_dims(s);
    using irrun::ElementType;
    c->in = in ? irrun::Tensor::wrap(ElementType::f32, s.in, in)
               : irrun::random_tensor(ElementType::f32, s.in, 1);
    c->out = out ? irrun::Tensor::wrap(ElementType::f32, od, out)
                 : irrun::Tensor::zeros(ElementType::f32, od);
    if (has_indices(s))
      c->indices = idx ? irrun::Tensor::wrap(ElementType::i64, od, idx)
                       : irrun::Tensor::zeros(ElementType::i64, od);
    return c;
  }
  return nullptr;
}

// One call of the op, as irrun_bench's irrun rows make it.
extern "C" void AB_FN(run)(void* p) {
  auto& c = *static_cast<Case*>(p);
  namespace k = irrun::kernels;
  irrun::Tensor* idx = c.indices ? &*c.indices : nullptr;
  if (c.shape.max) {
    if (!k::max_pool_fast(c.in, c.out, idx, c.g, c.par, c.isa))
      k::max_pool(c.in, c.out, idx, c.g, c.par);
  } else if (!k::avg_pool_fast(c.in, c.out, c.g, c.par, c.isa)) {
    k::avg_pool(c.in, c.out, c.g, c.par);
  }
}

extern "C" float* AB_FN(in)(void* p) {
  return static_cast<Case*>(p)->in.mutable_data<float>();
}
extern "C" float* AB_FN(out)(void* p) {
  return static_cast<Case*>(p)->out.mutable_data<float>();
}
extern "C" std::int64_t* AB_FN(indices)(void* p) {
  auto& c = *static_cast<Case*>(p);
  return c.indices ? c.indices->mutable_data<std::int64_t>() : nullptr;
}
extern "C" std::int64_t AB_FN(out_count)(void* p) {
  return static_cast<std::int64_t>(static_cast<Case*>(p)->out.element_count());
}
extern "C" void AB_FN(free)(void* p) {
  delete static_cast<Case*>(p);
}
