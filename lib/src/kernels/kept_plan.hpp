// Internal to the fast kernels (avg_pool_fast.cpp, max_pool_fast.cpp, avg_pool_half.cpp): a
// thread keeps the plan of its last geometry. A plan's tables follow from the geometry and the
// ISA alone, and tiles and bands of long axes (bands.hpp) run one geometry many times:
// rebuilding them took 56-73% of those calls (bench/HISTORY.md, rounds 61 and 62). Only plans whose
// tables fit kKeptPlanBytes are kept, so that a thread holds little after a large call.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "irrun/kernels/isa.hpp"
#include "irrun/pool_geometry.hpp"

namespace irrun::kernels::detail {

constexpr std::size_t kKeptPlanBytes = std::size_t{1} << 20;

// The bytes of the vectors' elements.
template <class... V>
std::size_t vector_bytes(const V&... v) {
  return (std::size_t{0} + ... + (v.size() * sizeof(v[0])));
}

// The plan of (g, isa, variant): the calling thread's kept one when it was made for them, else a
// new one, which make(plan) fills after its g and isa (tables may point at that copy of g); none
// where make returns false. P has members g and isa and table_bytes(); each P keeps its own.
// variant: another input the tables follow from (avg_pool_half's test-only band rows).
template <class P, class Make>
std::shared_ptr<const P> kept_plan(const PoolGeometry& g, Isa isa, Make&& make,
                                   std::int64_t variant = 0) {
  thread_local std::shared_ptr<const P> kept;
  thread_local std::int64_t kept_variant = 0;
  if (kept && kept->isa == isa && kept_variant == variant && kept->g == g) return kept;
  auto p = std::make_shared<P>();
  p->g = g;
  p->isa = isa;
  if (!make(*p)) return nullptr;
  if (p->table_bytes() <= kKeptPlanBytes) kept = p, kept_variant = variant;
  return p;
}

}  // namespace irrun::kernels::detail
