// libFuzzer target: the fast f32 AvgPool / AdaptiveAvgPool kernel (avg_pool_fast) against an
// exact oracle on arbitrary f32 data. The first bytes pick a geometry, built through shape
// inference (invalid attribute sets are skipped); the rest are the values, as raw bit patterns or
// from a small set of exponents that makes cancellation likely. Every output of every ISA path
// and thread count must be within one ulp of the exact average, NaN exactly where it is NaN,
// infinities equal, and all paths bit-identical (docs/openvino-semantics.md section 7). The
// reference kernel is held to the same oracle. Any miss prints the window and aborts. The same
// values as f16 and bf16 (check_half): the reference kernel's averages must be the exact ones
// rounded once to 16 bits, and the 16-bit kernels must give its bits on every path they do not
// decline.
// Its three findings, now fixed, are seeds (fuzz/seeds/avg_pool/exact_sum_*.bin,
// empty_output_rows.bin, s1_avx2_pad_column_found_by_fuzzer.bin) with regression tests, and so is
// half_double_rounding.bin (bf16 averages rounded twice, which a stress harness found first;
// this check finds it within a thousand random inputs when the fix is taken out); ctest
// replays every seed (fuzz/CMakeLists.txt).
//
// Input layout:
//   byte 0     bits 0-1 rank (0, 1: 2-D, 2: 3-D, 3: 1-D), bit 2 AdaptiveAvgPool, bit 3 exclude-pad,
//              bits 4-5 rounding (floor, ceil, ceil_torch, floor), bit 6 compact values,
//              bit 7 56 more channels (whole-plane units of 64 planes and a partial one)
//   byte 1     bit 0 batch 2, bits 1-4 channels - 1, bits 5-7 auto_pad (5 same_upper, 6 same_lower,
//              7 valid, else explicit)
//   bytes 2-10 per spatial axis (innermost last, leading ones unused): input size; kernel (or
//              adaptive output size); stride, dilation and pads
//   bytes 11-14 the compact mode's four exponents (-149..127)
//   the rest   values, cycled when shorter than the input: 4 bytes each (raw f32 bits,
//              little-endian), or 1 byte each in compact mode (exponent, sign, mantissa, specials)
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "irrun/float16.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "irrun/parallel.hpp"
#include "irrun/pool_geometry.hpp"
#include "irrun/tensor.hpp"
#include "pool_attr_bytes.hpp"
#include "support/f32_ulps.hpp"

namespace {

using irrun::PoolGeometry;
using irrun::Tensor;
using irrun::kernels::Isa;
using i64 = std::int64_t;

constexpr std::size_t kHeader = 15;
constexpr i64 kMaxElements = 1 << 14;    // input or output elements per case
constexpr i64 kMaxOracleTaps = 1 << 16;  // taps summed over all windows: a case stays ~1 ms

// ---- Geometry from the header, through the public shape inference.

std::optional<PoolGeometry> decode_geometry(const std::uint8_t* h) {
  static constexpr std::size_t kRanks[] = {2, 2, 3, 1};
  static constexpr i64 kMaxIn[] = {0, 70, 40, 14};  // per rank
  const std::size_t rank = kRanks[h[0] & 3];
  const bool adaptive = h[0] & 4;
  const i64 batch = 1 + (h[1] & 1);
  // 1-16 channels, or 57-72: whole-plane units of 64 planes and a partial one.
  const i64 channels = ((h[0] & 0x80) ? 57 : 1) + ((h[1] >> 1) & 15);
  std::vector<std::int64_t> shape{batch, channels};
  irrun::PoolAttrs attrs;
  std::vector<std::int64_t> out_size;
  for (std::size_t i = 3 - rank; i < 3; ++i) {
    const std::uint8_t* a = h + 2 + 3 * i;
    const i64 in = 1 + a[0] % kMaxIn[rank];
    shape.push_back(in);
    // Adaptive: output sizes 0 .. in + 2 (more bins than inputs, and empty outputs).
    out_size.push_back(a[1] % (in + 3));
    // Mostly small kernels; bit 7 a global one (plus 0-3, covered by pads).
    const i64 k = (a[1] & 0x80) ? in + ((a[1] >> 4) & 3) : 1 + (a[1] & 15);
    attrs.kernel.push_back(static_cast<std::uint64_t>(k));
    attrs.strides.push_back(1 + (a[2] & 3));
    // Dilation 2 one time in four.
    attrs.dilations.push_back(((a[2] >> 2) & 3) == 3 ? 2 : 1);
    attrs.pads_begin.push_back((a[2] >> 4) & 3);
    attrs.pads_end.push_back((a[2] >> 6) & 3);
  }
  attrs.exclude_pad = h[0] & 8;
  irrun::fuzzing::decode_rounding_and_auto_pad(h[0] >> 4, h[1] >> 5, attrs);
  try {
    const auto input = irrun::PartialShape::from_static(shape);
    const auto r =
        adaptive ? irrun::infer_adaptive_avg_pool(
                       input, irrun::PartialShape::from_static({static_cast<i64>(rank)}), out_size)
                 : irrun::infer_avg_pool(attrs, 16, input);
    return r.geometry;
  } catch (const irrun::ValidationError&) {
    return std::nullopt;
  }
}

// ---- Values.

float compact_value(std::uint8_t b, const std::uint8_t* exponents) {
  // Mantissas: mostly 1, so +-2^k pairs cancel exactly; then one-ulp neighbours and halves.
  static constexpr double kMantissa[] = {1.0, 1.0, 1.0, 1.5, 1.0 + 0x1p-23, 2.0 - 0x1p-23, 1.25};
  const bool negative = b & 4;
  const int m = (b >> 3) & 7;
  if (m == 7 && (b >> 6) == 3) {  // 1 in 32: a special
    static constexpr float kSpecial[] = {0.0f, std::numeric_limits<float>::infinity(),
                                         std::numeric_limits<float>::quiet_NaN(),
                                         std::numeric_limits<float>::signaling_NaN()};
    const float v = kSpecial[b & 3];
    return negative ? -v : v;
  }
  const int e = -149 + exponents[b & 3] * 276 / 255;
  const double v = std::ldexp(kMantissa[m == 7 ? b >> 6 : m], e);  // rounds below 2^-126
  return static_cast<float>(negative ? -v : v);
}

void fill_values(float* x, i64 n, const std::uint8_t* data, std::size_t size, bool compact,
                 const std::uint8_t* exponents) {
  const std::size_t count = compact ? size : size / 4;
  for (i64 i = 0; i < n; ++i) {
    if (count == 0) {
      x[i] = 0.0f;
      continue;
    }
    const std::size_t j = static_cast<std::size_t>(i) % count;
    if (compact) {
      x[i] = compact_value(data[j], exponents);
    } else {
      std::uint32_t bits;
      std::memcpy(&bits, data + 4 * j, 4);
      x[i] = std::bit_cast<float>(bits);
    }
  }
}

// ---- The exact oracle.

// A finite f32 is m * 2^(e - 149) with m < 2^24 and 0 <= e <= 253, so every window sum is an
// integer multiple of 2^-149 below 2^(24 + 253 + 17) for up to 2^17 taps. Positive and negative
// parts are summed separately as 320-bit magnitudes (carries stay short), then subtracted.
struct Big {
  static constexpr int kLimbs = 10;
  std::array<std::uint32_t, kLimbs> limb{};

  void add_shifted(std::uint64_t m, int shift) {  // += m * 2^shift, m < 2^24
    std::uint64_t carry = m << (shift % 32);
    for (int i = shift / 32; carry != 0; ++i) {
      const std::uint64_t t = limb[static_cast<std::size_t>(i)] + (carry & 0xFFFFFFFFu);
      limb[static_cast<std::size_t>(i)] = static_cast<std::uint32_t>(t);
      carry = (carry >> 32) + (t >> 32);
    }
  }
  bool less(const Big& o) const {
    for (int i = kLimbs - 1; i >= 0; --i) {
      const auto k = static_cast<std::size_t>(i);
      if (limb[k] != o.limb[k]) return limb[k] < o.limb[k];
    }
    return false;
  }
  void sub(const Big& o) {  // *this -= o, *this >= o
    std::int64_t borrow = 0;
    for (std::size_t i = 0; i < kLimbs; ++i) {
      std::int64_t t = std::int64_t{limb[i]} - o.limb[i] - borrow;
      borrow = t < 0;
      limb[i] = static_cast<std::uint32_t>(t + (borrow << 32));
    }
  }
  std::uint32_t divide(std::uint32_t d) {  // *this /= d, returns the remainder
    std::uint64_t r = 0;
    for (int i = kLimbs - 1; i >= 0; --i) {
      const auto k = static_cast<std::size_t>(i);
      const std::uint64_t cur = (r << 32) | limb[k];
      limb[k] = static_cast<std::uint32_t>(cur / d);
      r = cur % d;
    }
    return static_cast<std::uint32_t>(r);
  }
  int bit_length() const {
    for (int i = kLimbs - 1; i >= 0; --i) {
      const auto v = limb[static_cast<std::size_t>(i)];
      if (v) return 32 * i + std::bit_width(v);
    }
    return 0;
  }
  bool bit(int i) const { return (limb[static_cast<std::size_t>(i / 32)] >> (i % 32)) & 1; }
  bool any_below(int n) const {  // any of bits 0 .. n-1 set
    for (int i = 0; i < n; ++i)
      if (bit(i)) return true;
    return false;
  }
  std::uint64_t bits(int lo, int count) const {  // bits lo .. lo+count-1, count <= 32
    std::uint64_t v = 0;
    for (int i = count - 1; i >= 0; --i) v = (v << 1) | bit(lo + i);
    return v;
  }
};

// A format the average is rounded to: its significant bits and its quantum, 2^-quantum (the
// subnormals' step). f16 and bf16 values are floats, so their averages are returned as floats.
struct Format {
  int bits, quantum;
};
constexpr Format kF32{24, 149}, kF16{11, 24}, kBF16{8, 133};

// The exact average of one window, rounded once to a format (nearest, ties to even; overflow to
// infinity); NaN for a NaN input or inf + -inf.
struct Exact {
  Big pos, neg;
  bool nan = false, pos_inf = false, neg_inf = false;

  void add(float x) {
    if (std::isnan(x)) nan = true;
    if (std::isinf(x)) (x > 0 ? pos_inf : neg_inf) = true;
    if (!std::isfinite(x) || x == 0) return;
    const std::uint32_t b = std::bit_cast<std::uint32_t>(x);
    const int e = static_cast<int>((b >> 23) & 0xFF);
    const std::uint64_t m = (b & 0x7FFFFF) | (e ? 0x800000u : 0);
    (b >> 31 ? neg : pos).add_shifted(m, e ? e - 1 : 0);
  }

  float average(std::uint32_t divisor, Format f = kF32) const {
    if (nan || (pos_inf && neg_inf)) return std::numeric_limits<float>::quiet_NaN();
    if (pos_inf || neg_inf)
      return pos_inf ? std::numeric_limits<float>::infinity()
                     : -std::numeric_limits<float>::infinity();
    const bool negative = pos.less(neg);
    Big q = negative ? neg : pos;
    q.sub(negative ? pos : neg);
    const std::uint32_t rem = q.divide(divisor);
    // q + rem/divisor in units of 2^-149: keep the top f.bits bits (at least the format's
    // quantum, 2^-149 for f32), round on the rest.
    const int shift = std::max(149 - f.quantum, q.bit_length() - f.bits);
    std::uint64_t m = q.bits(shift, f.bits);
    bool up;
    if (shift == 0) {
      up = 2 * std::uint64_t{rem} > divisor || (2 * std::uint64_t{rem} == divisor && (m & 1));
    } else {
      const bool half = q.bit(shift - 1), sticky = q.any_below(shift - 1) || rem != 0;
      up = half && (sticky || (m & 1));
    }
    m += up;
    const float v = std::ldexp(static_cast<float>(m), shift - 149);  // exact, or overflow to inf
    return negative ? -v : v;
  }
};

struct Window {
  std::vector<i64> taps;  // flat indices in the plane
  std::uint32_t divisor = 0;
};

// Every output's window, straight from the definitions (docs/openvino-semantics.md sections 3, 4
// and 7), sharing nothing with the kernels: taps o*stride - pad_begin + j*dilation in bounds, or
// adaptive bins floor(o*I/O) .. ceil((o+1)*I/O); divisor prod(kernel) when padding counts, else
// the tap count.
std::vector<Window> windows(const PoolGeometry& g) {
  std::vector<Window> w;
  for (i64 od = 0; od < g.out[0]; ++od)
    for (i64 oh = 0; oh < g.out[1]; ++oh)
      for (i64 ow = 0; ow < g.out[2]; ++ow) {
        const i64 o[3] = {od, oh, ow};
        std::vector<i64> pos[3];
        for (int a = 0; a < 3; ++a) {
          const i64 in = g.in[a], out = g.out[a];
          if (g.adaptive) {
            const i64 end = ((o[a] + 1) * in + out - 1) / out;
            for (i64 i = o[a] * in / out; i < end; ++i) pos[a].push_back(i);
          } else {
            for (i64 j = 0; j < g.kernel[a]; ++j) {
              const i64 i = o[a] * g.stride[a] - g.pad_begin[a] + j * g.dilation[a];
              if (i >= 0 && i < in) pos[a].push_back(i);
            }
          }
        }
        Window win;
        for (i64 d : pos[0])
          for (i64 h : pos[1])
            for (i64 x : pos[2]) win.taps.push_back((d * g.in[1] + h) * g.in[2] + x);
        win.divisor = static_cast<std::uint32_t>(!g.adaptive && g.pads_in_avg
                                                     ? g.kernel[0] * g.kernel[1] * g.kernel[2]
                                                     : static_cast<i64>(win.taps.size()));
        w.push_back(std::move(win));
      }
  return w;
}

// The tap count over all windows without listing them (to skip slow cases up front).
i64 total_taps(const PoolGeometry& g) {
  i64 total = g.planes();
  for (int a = 0; a < 3; ++a) {
    i64 axis = 0;
    for (i64 o = 0; o < g.out[a]; ++o) {
      if (g.adaptive) {
        axis += ((o + 1) * g.in[a] + g.out[a] - 1) / g.out[a] - o * g.in[a] / g.out[a];
      } else {
        for (i64 j = 0; j < g.kernel[a]; ++j) {
          const i64 i = o * g.stride[a] - g.pad_begin[a] + j * g.dilation[a];
          axis += i >= 0 && i < g.in[a];
        }
      }
    }
    total *= axis;
  }
  return total;
}

// ---- Checks.

std::string text(const std::array<std::int64_t, 3>& a) {
  char s[72];  // (g++ 12 -O3 warns, falsely, on the same string built with operator+)
  std::snprintf(s, sizeof s, "[%lld,%lld,%lld]", static_cast<long long>(a[0]),
                static_cast<long long>(a[1]), static_cast<long long>(a[2]));
  return s;
}

[[noreturn]] void fail(const char* what, const PoolGeometry& g, const float* x, i64 plane, i64 o,
                       const Window& w, float want, float got) {
  std::fprintf(stderr, "fuzz_avg_pool: %s: %s N=%lld C=%lld in=%s out=%s", what,
               g.adaptive ? "adaptive" : "window", static_cast<long long>(g.batch),
               static_cast<long long>(g.channels), text(g.in).c_str(), text(g.out).c_str());
  if (!g.adaptive)
    std::fprintf(stderr, " k=%s s=%s d=%s pb=%s pe=%s pads_in_avg=%d", text(g.kernel).c_str(),
                 text(g.stride).c_str(), text(g.dilation).c_str(), text(g.pad_begin).c_str(),
                 text(g.pad_end).c_str(), g.pads_in_avg);
  std::fprintf(stderr,
               "\n  plane %lld output %lld: %zu taps, divisor %u: want %a (%.9g), got %a "
               "(%.9g)\n  window:",
               static_cast<long long>(plane), static_cast<long long>(o), w.taps.size(), w.divisor,
               static_cast<double>(want), static_cast<double>(want), static_cast<double>(got),
               static_cast<double>(got));
  for (i64 t : w.taps) std::fprintf(stderr, " %a", static_cast<double>(x[t]));
  std::fprintf(stderr, "\n");
  std::abort();
}

// The model's shape of a tensor with the spatial dims `dims` (g.in or g.out).
std::vector<std::int64_t> shape_of(const PoolGeometry& g, const std::array<std::int64_t, 3>& dims) {
  std::vector<std::int64_t> s{g.batch, g.channels};
  for (std::size_t a = 3 - g.spatial_rank; a < 3; ++a) s.push_back(dims[a]);
  return s;
}

// An output of element type `type` (T: float or the 16-bit patterns) filled with a NaN pattern.
template <class T>
Tensor poisoned(const PoolGeometry& g, T nan_bits, irrun::ElementType type) {
  Tensor t = Tensor::zeros(type, shape_of(g, g.out));
  std::fill_n(t.mutable_data<T>(), t.element_count(), nan_bits);
  return t;
}

void check_oracle(const char* what, const PoolGeometry& g, const Tensor& in, const Tensor& out,
                  const std::vector<Window>& w, const std::vector<float>& want) {
  const i64 n = static_cast<i64>(w.size());
  for (i64 p = 0; p < g.planes(); ++p)
    for (i64 o = 0; o < n; ++o) {
      const float got = out.data<float>()[p * n + o];
      if (!irrun::testing::within_one_f32_ulp(got, want[static_cast<std::size_t>(p * n + o)]))
        fail(what, g, in.data<float>() + p * g.in_plane_size(), p, o,
             w[static_cast<std::size_t>(o)], want[static_cast<std::size_t>(p * n + o)], got);
    }
}

// The reference kernel's f16 and bf16 averages are the exact ones rounded once (NaN where the
// oracle's is: its payload is the reference's choice), and the f16 and bf16 kernels
// (avg_pool_half, avg_pool_half_f32) must give its bits on every path and thread count, wherever
// they do not decline. Its values: the f32 ones
// rounded to f16 or bf16 in compact mode (the exponents that cancel); otherwise, for f16, the low
// 16 bits of each f32, as raw bits, made finite unless the f32 is inf or NaN (random bits would put
// an inf or NaN, which the kernel declines, in almost every input), and for bf16 the f32's top 16
// bits (spans of exponents past exact sums among them: declined).
void check_half(const PoolGeometry& g, const Tensor& in32, bool compact, irrun::ElementType type,
                const std::vector<Window>& w) {
  const bool f16 = type == irrun::ElementType::f16;
  Tensor in = Tensor::zeros(type, shape_of(g, g.in));
  const float* x = in32.data<float>();
  auto* h = in.mutable_data<std::uint16_t>();
  for (std::size_t i = 0; i < in.element_count(); ++i) {
    const auto bits = std::bit_cast<std::uint32_t>(x[i]);
    auto b = static_cast<std::uint16_t>(f16 ? bits : bits >> 16);
    if (f16 && (b & 0x7C00) == 0x7C00 && std::isfinite(x[i])) b ^= 0x4000;
    h[i] = !compact ? b
           : f16    ? irrun::f16_bits_from_double(x[i])
                    : irrun::bf16_bits_from_double(x[i]);
  }
  static const irrun::Parallel one(1), two(2);
  const std::uint16_t nan1 = f16 ? 0x7E01 : 0x7FC1, nan2 = f16 ? 0x7E02 : 0x7FC2;
  Tensor ref = poisoned<std::uint16_t>(g, nan1, type);
  irrun::kernels::avg_pool_reference(in, ref, g, one);
  const auto value = [&](std::uint16_t b) {
    return static_cast<float>(f16 ? irrun::f16_bits_to_double(b) : irrun::bf16_bits_to_double(b));
  };
  const i64 n = static_cast<i64>(w.size());
  for (i64 p = 0; p < g.planes(); ++p)
    for (i64 o = 0; o < n; ++o) {
      const Window& win = w[static_cast<std::size_t>(o)];
      const std::uint16_t* plane = h + p * g.in_plane_size();
      Exact e;
      for (i64 t : win.taps) e.add(value(plane[t]));
      const float want = win.taps.empty() ? 0.0f : e.average(win.divisor, f16 ? kF16 : kBF16);
      const std::uint16_t got = ref.data<std::uint16_t>()[p * n + o];
      const std::uint16_t bits =
          f16 ? irrun::f16_bits_from_double(want) : irrun::bf16_bits_from_double(want);
      if (std::isnan(want) ? std::isnan(value(got)) : got == bits) continue;
      std::vector<float> x(static_cast<std::size_t>(g.in_plane_size()));
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = value(plane[i]);
      fail(f16 ? "reference f16" : "reference bf16", g, x.data(), p, o, win, want, value(got));
    }
  const auto compare = [&](const Tensor& out, const char* kernel, Isa isa, int threads,
                           const char* knob, std::int64_t value) {
    for (std::size_t i = 0; i < out.element_count(); ++i) {
      const std::uint16_t a = ref.data<std::uint16_t>()[i], b = out.data<std::uint16_t>()[i];
      if (a == b) continue;
      std::fprintf(stderr,
                   "fuzz_avg_pool: %s %s output %zu: isa %d on %d threads, %s %lld, gives %04x, "
                   "the reference %04x (geometry in %s out %s kernel %s stride %s)\n",
                   kernel, f16 ? "f16" : "bf16", i, static_cast<int>(isa), threads, knob,
                   static_cast<long long>(value), b, a, text(g.in).c_str(), text(g.out).c_str(),
                   text(g.kernel).c_str(), text(g.stride).c_str());
      std::abort();
    }
  };
  for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable})  // best: AVX-512 where present
    for (const irrun::Parallel* par : {&one, &two}) {
      for (const std::int64_t band_rows : {0, 1, 2}) {  // whole planes when they fit, then bands
        Tensor out = poisoned<std::uint16_t>(g, nan2, type);
        if (irrun::kernels::avg_pool_half(in, out, g, *par, isa, band_rows))
          compare(out, "avg_pool_half", isa, par->threads(), "bands of rows", band_rows);
      }
      for (const std::int64_t chunk : {0, 700}) {  // whole planes when they fit, then bands
        Tensor out = poisoned<std::uint16_t>(g, nan2, type);
        if (irrun::kernels::avg_pool_half_f32(in, out, g, *par, isa, chunk))
          compare(out, "avg_pool_half_f32", isa, par->threads(), "chunk bytes", chunk);
      }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < kHeader) return 0;
  const auto geometry = decode_geometry(data);
  if (!geometry) return 0;
  const PoolGeometry& g = *geometry;
  const i64 in_count = g.planes() * g.in_plane_size(), out_count = g.planes() * g.out_plane_size();
  if (in_count > kMaxElements || out_count > kMaxElements || total_taps(g) > kMaxOracleTaps)
    return 0;

  Tensor in = Tensor::zeros(irrun::ElementType::f32, shape_of(g, g.in));
  fill_values(in.mutable_data<float>(), in_count, data + kHeader, size - kHeader, data[0] & 0x40,
              data + 11);

  const auto w = windows(g);
  std::vector<float> want;
  want.reserve(static_cast<std::size_t>(out_count));
  for (i64 p = 0; p < g.planes(); ++p) {
    const float* x = in.data<float>() + p * g.in_plane_size();
    for (const Window& win : w) {
      Exact e;
      for (i64 t : win.taps) e.add(x[t]);
      want.push_back(win.taps.empty() ? 0.0f : e.average(win.divisor));
    }
  }

  static const irrun::Parallel one(1), two(2);
  Tensor ref = poisoned(g, std::bit_cast<float>(0x7FC0DEADu), irrun::ElementType::f32);
  irrun::kernels::avg_pool_reference(in, ref, g, one);
  if (irrun::kernels::avg_pool_fast_covers(irrun::ElementType::f32, g)) {
    // Different NaN poisons: an output some path leaves unwritten differs from the first.
    Tensor first = poisoned(g, std::bit_cast<float>(0x7FC0DEADu), irrun::ElementType::f32);
    if (!irrun::kernels::avg_pool_fast(in, first, g, one, Isa::best)) std::abort();
    check_oracle("fast best 1 thread", g, in, first, w, want);
    for (const Isa isa : {Isa::best, Isa::avx2, Isa::portable})
      for (const irrun::Parallel* par : {&one, &two}) {
        if (isa == Isa::best && par == &one) continue;
        Tensor out = poisoned(g, std::bit_cast<float>(0xFFC0BEEFu), irrun::ElementType::f32);
        if (!irrun::kernels::avg_pool_fast(in, out, g, *par, isa)) std::abort();
        if (std::memcmp(out.buffer.data(), first.buffer.data(), first.byte_size()) == 0) continue;
        check_oracle("fast (other ISA or thread count)", g, in, out, w, want);
        for (i64 i = 0; i < out_count; ++i) {
          const auto a = std::bit_cast<std::uint32_t>(first.data<float>()[i]);
          const auto b = std::bit_cast<std::uint32_t>(out.data<float>()[i]);
          if (a == b) continue;
          std::fprintf(stderr,
                       "fuzz_avg_pool: output %lld: isa %d on %d threads gives %08x, best on 1 "
                       "thread %08x\n",
                       static_cast<long long>(i), static_cast<int>(isa), par->threads(), b, a);
          break;
        }
        std::abort();
      }
  }
  check_oracle("reference", g, in, ref, w, want);
  check_half(g, in, data[0] & 0x40, irrun::ElementType::f16, w);
  check_half(g, in, data[0] & 0x40, irrun::ElementType::bf16, w);
  return 0;
}
