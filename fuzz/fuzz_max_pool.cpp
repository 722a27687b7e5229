// libFuzzer target: the MaxPool / AdaptiveMaxPool kernels on arbitrary f32 or f64 data. The first
// bytes pick a geometry, built through shape inference (invalid attribute sets are skipped); the
// rest are the values, as raw bit patterns or from a small palette full of ties, +-0, NaN, +-inf
// and lowest(). The reference kernel must give the test oracle's bits (tests/support/
// naive_max_pool.hpp, written from OpenVINO's reference and sharing no code with irrun), values
// and indices; wherever max_pool_fast covers the case, every ISA path (portable, AVX2, AVX-512)
// on 1 and 2 threads must give the reference kernel's bits too (docs/openvino-semantics.md
// section 6). f32 values are also rounded to f16 and bf16, where max_pool_half must give the
// reference kernel's bits. Any difference prints the geometry and the first differing output
// and aborts.
//
// Input layout:
//   byte 0     bits 0-1 rank (0, 1: 2-D, 2: 3-D, 3: 1-D), bit 2 AdaptiveMaxPool, bit 3 f64,
//              bits 4-5 rounding (floor, ceil, ceil_torch, floor), bit 6 palette values,
//              bit 7 i32 indices (else i64)
//   byte 1     bit 0 batch 2, bits 1-4 channels - 1, bits 5-7 auto_pad (5 same_upper,
//              6 same_lower, 7 valid, else explicit)
//   byte 2     bits 0-2 index axis (0 .. rank + 1, larger values wrap), bit 3 no indices
//              output (MaxPool-1's form)
//   bytes 3-14 per spatial axis (innermost last, leading ones unused), four bytes: input size;
//              kernel (bit 7: global, plus bits 4-5) or adaptive output size; stride (bits 0-3,
//              1-16) and dilation (bits 4-5: 1, 1, 2, 3); pads begin (bits 0-2) and end (bits 3-5)
//   the rest   values, cycled when shorter than the input: raw little-endian bits (4 or 8 bytes
//              each), or 1 byte each from the palette
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>
#include <vector>

#include "irrun/float16.hpp"
#include "irrun/kernels/max_pool.hpp"
#include "irrun/parallel.hpp"
#include "irrun/pool_geometry.hpp"
#include "irrun/tensor.hpp"
#include "pool_attr_bytes.hpp"
#include "support/naive_max_pool.hpp"
#include "support/pool_shape.hpp"

namespace {

using irrun::ElementType;
using irrun::PoolGeometry;
using irrun::Tensor;
using irrun::kernels::Isa;
using irrun::testing::shape_of;
using i64 = std::int64_t;

constexpr std::size_t kHeader = 15;
constexpr i64 kMaxElements = 1 << 13;  // input or output elements per case
constexpr i64 kMaxTaps = 1 << 15;      // the oracle's taps over all outputs: a case stays ~1 ms

struct Case {
  PoolGeometry g;
  irrun::testing::NaiveMaxSpec spec;
  ElementType type = ElementType::f32, index_type = ElementType::i64;
  bool indices = true;
};

std::optional<Case> decode(const std::uint8_t* h) {
  static constexpr std::size_t kRanks[] = {2, 2, 3, 1};
  static constexpr i64 kMaxIn[] = {0, 250, 90, 24};  // per rank: 1-D rows long enough for
                                                     // several blocks of 32 and flat groups
  const std::size_t rank = kRanks[h[0] & 3];
  const bool adaptive = h[0] & 4;
  Case c;
  c.type = (h[0] & 8) ? ElementType::f64 : ElementType::f32;
  c.index_type = (h[0] & 0x80) ? ElementType::i32 : ElementType::i64;
  c.indices = !(h[2] & 8);
  std::vector<std::int64_t> shape{1 + (h[1] & 1), 1 + ((h[1] >> 1) & 15)};
  irrun::PoolAttrs attrs;
  std::vector<std::int64_t> out_size;
  for (std::size_t i = 3 - rank; i < 3; ++i) {
    const std::uint8_t* a = h + 3 + 4 * i;
    const i64 in = 1 + a[0] % kMaxIn[rank];
    shape.push_back(in);
    out_size.push_back(a[1] % (in + 3));  // 0 .. in + 2: empty outputs, more bins than inputs
    const i64 k = (a[1] & 0x80) ? in + ((a[1] >> 4) & 3) : 1 + (a[1] & 15);
    attrs.kernel.push_back(static_cast<std::uint64_t>(k));
    attrs.strides.push_back(1 + (a[2] & 15));
    static constexpr std::uint64_t kDilation[] = {1, 1, 2, 3};
    attrs.dilations.push_back(kDilation[(a[2] >> 4) & 3]);
    attrs.pads_begin.push_back(a[3] & 7);
    attrs.pads_end.push_back((a[3] >> 3) & 7);
  }
  irrun::fuzzing::decode_rounding_and_auto_pad(h[0] >> 4, h[1] >> 5, attrs);
  attrs.index_element_type = c.index_type;
  attrs.axis = (h[2] & 7) % static_cast<int>(rank + 2);
  try {
    const auto input = irrun::PartialShape::from_static(shape);
    const auto r =
        adaptive ? irrun::infer_adaptive_max_pool(
                       attrs, input, irrun::PartialShape::from_static({static_cast<i64>(rank)}),
                       out_size)
                 : irrun::infer_max_pool(
                       attrs, attrs.rounding == irrun::RoundingType::ceil_torch ? 14 : 8, input);
    if (!r.geometry) return std::nullopt;
    c.g = *r.geometry;
  } catch (const irrun::ValidationError&) {
    return std::nullopt;
  }
  // The oracle's spec, from the model's own rank.
  const PoolGeometry& g = c.g;
  c.spec.in = shape_of(g, g.in);
  c.spec.out = shape_of(g, g.out);
  c.spec.adaptive = g.adaptive;
  c.spec.axis = static_cast<i64>(g.index_axis);
  for (std::size_t a = 3 - rank; a < 3; ++a) {
    c.spec.kernel.push_back(g.kernel[a]);
    c.spec.stride.push_back(g.stride[a]);
    c.spec.dilation.push_back(g.dilation[a]);
    c.spec.pads_begin.push_back(g.pad_begin[a]);
  }
  return c;
}

// The palette: ties (few distinct values), both zeros, NaNs of both signs and payloads,
// infinities, the extremes and their neighbours.
template <class T>
T palette(std::uint8_t b) {
  using L = std::numeric_limits<T>;
  const T v[] = {T(0),
                 T(1),
                 T(2),
                 T(0.5),
                 T(3),
                 L::lowest(),
                 L::max(),
                 L::infinity(),
                 L::quiet_NaN(),
                 L::denorm_min(),
                 L::min(),
                 std::nextafter(T(1), T(2)),
                 std::nextafter(L::lowest(), T(0)),
                 T(1),
                 T(2),
                 T(0)};
  const T x = v[b & 15];
  return (b & 16) ? -x : x;
}

template <class T>
void fill(T* x, i64 n, const std::uint8_t* data, std::size_t size, bool compact) {
  const std::size_t count = compact ? size : size / sizeof(T);
  for (i64 i = 0; i < n; ++i) {
    if (count == 0) {
      x[i] = T(0);
      continue;
    }
    const std::size_t j = static_cast<std::size_t>(i) % count;
    if (compact) {
      x[i] = palette<T>(data[j]);
    } else {
      std::memcpy(x + i, data + sizeof(T) * j, sizeof(T));
    }
  }
}

void describe(const Case& c) {
  const PoolGeometry& g = c.g;
  auto l = [](const std::array<i64, 3>& a) {
    std::fprintf(stderr, "[%lld,%lld,%lld]", static_cast<long long>(a[0]),
                 static_cast<long long>(a[1]), static_cast<long long>(a[2]));
  };
  std::fprintf(stderr, "%s %s N=%lld C=%lld in=", g.adaptive ? "adaptive" : "window",
               c.type == ElementType::f64 ? "f64" : "f32", static_cast<long long>(g.batch),
               static_cast<long long>(g.channels));
  l(g.in), std::fprintf(stderr, " out="), l(g.out);
  if (!g.adaptive) {
    std::fprintf(stderr, " k="), l(g.kernel), std::fprintf(stderr, " s="), l(g.stride);
    std::fprintf(stderr, " d="), l(g.dilation), std::fprintf(stderr, " pb="), l(g.pad_begin);
  }
  std::fprintf(stderr, " axis=%zu indices=%s\n", g.index_axis,
               c.indices ? (c.index_type == ElementType::i32 ? "i32" : "i64") : "none");
}

// Index i of an i32 or i64 tensor, widened.
i64 index_at(const Tensor& t, std::size_t i) {
  return t.type == ElementType::i32 ? t.data<std::int32_t>()[i] : t.data<std::int64_t>()[i];
}

// Aborts at the first output where (values, indices) differ from (want, want_idx) in any bit.
template <class T>
void same_bits(const char* what, const Case& c, const Tensor& values, const Tensor* indices,
               const T* want, const std::vector<i64>& want_idx) {
  using U = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;
  for (std::size_t i = 0; i < values.element_count(); ++i) {
    const U a = std::bit_cast<U>(want[i]), b = std::bit_cast<U>(values.data<T>()[i]);
    const bool idx_ok = !indices || index_at(*indices, i) == want_idx[i];
    if (a == b && idx_ok) continue;
    std::fprintf(stderr,
                 "fuzz_max_pool: %s: output %zu: want %a (bits %llx, index %lld), got %a "
                 "(bits %llx, index %lld)\n  ",
                 what, i, static_cast<double>(want[i]), static_cast<unsigned long long>(a),
                 static_cast<long long>(want_idx[i]), static_cast<double>(values.data<T>()[i]),
                 static_cast<unsigned long long>(b),
                 static_cast<long long>(indices ? index_at(*indices, i) : -1));
    describe(c);
    std::abort();
  }
}

// The same values rounded to f16 and to bf16: wherever max_pool_half covers the case, every ISA
// path on 1 and 2 threads (the 16-bit rows where they run), in pieces of the default 8 MiB, bands
// of one output row or pieces of 400 bytes (bands of a few rows or a few planes), must give the
// reference kernel's bits.
void run_half(const Case& c, const Tensor& in32) {
  const PoolGeometry& g = c.g;
  if (g.adaptive || !irrun::kernels::max_pool_fast_covers(ElementType::f32, g)) return;
  static const irrun::Parallel one(1), two(2);
  for (const ElementType type : {ElementType::f16, ElementType::bf16}) {
    Tensor in = Tensor::zeros(type, c.spec.in);
    for (std::size_t i = 0; i < in.element_count(); ++i) {
      const double x = in32.data<float>()[i];
      in.mutable_data<std::uint16_t>()[i] = type == ElementType::f16
                                                ? irrun::f16_bits_from_double(x)
                                                : irrun::bf16_bits_from_double(x);
    }
    const auto poisoned = [&](std::uint8_t fill_byte) {
      Tensor v = Tensor::zeros(type, c.spec.out), ix = Tensor::zeros(c.index_type, c.spec.out);
      std::memset(v.mutable_data<std::uint8_t>(), fill_byte, v.byte_size());
      std::memset(ix.mutable_data<std::uint8_t>(), fill_byte, ix.byte_size());
      return std::pair{std::move(v), std::move(ix)};
    };
    auto [ref, ref_idx] = poisoned(0xFF);
    irrun::kernels::max_pool_reference(in, ref, c.indices ? &ref_idx : nullptr, g, one);
    for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable})
      for (const irrun::Parallel* par : {&one, &two})
        for (const i64 chunk : {0, 1, 400}) {
          auto [out, out_idx] = poisoned(0x7F);
          if (!irrun::kernels::max_pool_half(in, out, c.indices ? &out_idx : nullptr, g, *par, isa,
                                             chunk))
            std::abort();  // the f32 kernel covers it
          if (std::memcmp(out.buffer.data(), ref.buffer.data(), ref.byte_size()) == 0 &&
              (!c.indices ||
               std::memcmp(out_idx.buffer.data(), ref_idx.buffer.data(), ref_idx.byte_size()) == 0))
            continue;
          std::fprintf(stderr,
                       "fuzz_max_pool: max_pool_half (%s, isa %d, %d thread(s), chunk %lld) "
                       "differs from the reference kernel\n  ",
                       type == ElementType::f16 ? "f16" : "bf16", static_cast<int>(isa),
                       par->threads(), static_cast<long long>(chunk));
          describe(c);
          std::abort();
        }
  }
}

template <class T>
void run(const Case& c, const std::uint8_t* data, std::size_t size, bool compact) {
  const PoolGeometry& g = c.g;
  Tensor in = Tensor::zeros(c.type, c.spec.in);
  const i64 in_count = static_cast<i64>(in.element_count());
  fill(in.mutable_data<T>(), in_count, data, size, compact);

  const std::vector<T> x(in.data<T>(), in.data<T>() + in_count);
  const auto want = irrun::testing::naive_max_pool(c.spec, x);
  std::vector<i64> want_idx(want.indices.size());
  for (std::size_t i = 0; i < want_idx.size(); ++i)  // the cast an i32 output makes
    want_idx[i] = c.index_type == ElementType::i32 ? static_cast<std::int32_t>(want.indices[i])
                                                   : want.indices[i];

  // Outputs poisoned with a NaN payload that no input of the palette has.
  const auto poisoned = [&](std::uint8_t fill_byte) {
    Tensor v = Tensor::zeros(c.type, c.spec.out), ix = Tensor::zeros(c.index_type, c.spec.out);
    std::memset(v.mutable_data<T>(), fill_byte, v.byte_size());
    std::memset(ix.mutable_data<std::uint8_t>(), fill_byte, ix.byte_size());
    return std::pair{std::move(v), std::move(ix)};
  };
  static const irrun::Parallel one(1), two(2);
  auto [ref, ref_idx] = poisoned(0xFF);
  irrun::kernels::max_pool_reference(in, ref, c.indices ? &ref_idx : nullptr, g, one);
  same_bits<T>("reference", c, ref, c.indices ? &ref_idx : nullptr, want.values.data(), want_idx);
  if constexpr (std::is_same_v<T, float>) run_half(c, in);
  if (!irrun::kernels::max_pool_fast_covers(c.type, g)) return;
  for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable})
    for (const irrun::Parallel* par : {&one, &two}) {
      auto [out, out_idx] = poisoned(0x7F);
      if (!irrun::kernels::max_pool_fast(in, out, c.indices ? &out_idx : nullptr, g, *par, isa))
        std::abort();  // covers() said yes
      char what[64];
      std::snprintf(what, sizeof what, "fast, isa %d, %d thread(s)", static_cast<int>(isa),
                    par->threads());
      same_bits<T>(what, c, out, c.indices ? &out_idx : nullptr, want.values.data(), want_idx);
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kHeader) return 0;
  const auto c = decode(data);
  if (!c) return 0;
  const PoolGeometry& g = c->g;
  const i64 in_count = g.planes() * g.in_plane_size(), out_count = g.planes() * g.out_plane_size();
  if (in_count > kMaxElements || out_count > kMaxElements) return 0;
  // The oracle visits every kernel tap (padding included) or every bin element.
  i64 taps = out_count;
  for (std::size_t a = 0; a < 3; ++a)
    taps *= g.adaptive ? (g.in[a] + std::max<i64>(g.out[a], 1) - 1) / std::max<i64>(g.out[a], 1) + 1
                       : g.kernel[a];
  if (taps > kMaxTaps) return 0;
  const bool compact = data[0] & 0x40;
  if (c->type == ElementType::f64)
    run<double>(*c, data + kHeader, size - kHeader, compact);
  else
    run<float>(*c, data + kHeader, size - kHeader, compact);
  return 0;
}
