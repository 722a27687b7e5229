// The whole pooling path on random ops: AvgPool-1/14/16 and MaxPool-1/8/14 attributes written as
// IR <data> text (random case, defaults left out at random), and AdaptiveAvgPool-8 and
// AdaptiveMaxPool-8 with output_size in a Const read from the weights, go through the reader, the
// analysis (attribute parsing, validation, auto_pad, output shape, PoolGeometry) and the
// executor's kernels, in every element type irrun runs. Error or not, the error's rule, the output
// shape and every value (and MaxPool index) are compared with an oracle written here from
// docs/openvino-semantics.md alone (sections 2, 3, 4, 6 and 7; the README's contract where irrun
// goes beyond it: MaxPool ties, output_size below -1): its own validation order, pad derivation,
// output-size formulas, include-padding rule, adaptive bins, a naive double loop and section 7's
// rounding of the exact average (16-bit types rounded once, integers by their width). The kernel
// tests build PoolGeometry by hand; this checks the way to it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "irrun/analysis.hpp"
#include "irrun/executor.hpp"
#include "support/f32_ulps.hpp"
#include "support/int_types.hpp"
#include "support/ir_text.hpp"
#include "support/split_mix.hpp"

namespace {

using irrun::ElementType;
using irrun::Tensor;
using irrun::testing::SplitMix64;
using Ints = std::vector<std::int64_t>;
__extension__ typedef __int128 i128;  // integer sums of the oracle: 64-bit values do not overflow

// --- Element types (section 1's spellings, section 7's arithmetic) -------------------------------

struct TypeInfo {
  ElementType type;
  const char* name;       // Parameter element_type
  const char* precision;  // port precision
  int bits;
  bool integer, is_signed;
};

const std::vector<TypeInfo>& types() {
  static const std::vector<TypeInfo> all{{ElementType::f32, "f32", "FP32", 32, false, true},
                                         {ElementType::f64, "f64", "FP64", 64, false, true},
                                         {ElementType::f16, "f16", "FP16", 16, false, true},
                                         {ElementType::bf16, "bf16", "BF16", 16, false, true},
                                         {ElementType::i8, "i8", "I8", 8, true, true},
                                         {ElementType::u8, "u8", "U8", 8, true, false},
                                         {ElementType::i16, "i16", "I16", 16, true, true},
                                         {ElementType::u16, "u16", "U16", 16, true, false},
                                         {ElementType::i32, "i32", "I32", 32, true, true},
                                         {ElementType::u32, "u32", "U32", 32, true, false},
                                         {ElementType::i64, "i64", "I64", 64, true, true},
                                         {ElementType::u64, "u64", "U64", 64, true, false}};
  return all;
}

const TypeInfo& info(ElementType type) {
  for (const auto& t : types())
    if (t.type == type) return t;
  FAIL("no such type");
  return types()[0];
}

bool is_half(ElementType type) {
  return type == ElementType::f16 || type == ElementType::bf16;
}

// The range of an integer type.
i128 int_min(const TypeInfo& t) {
  return t.is_signed ? -(i128{1} << (t.bits - 1)) : 0;
}
i128 int_max(const TypeInfo& t) {
  return t.is_signed ? (i128{1} << (t.bits - 1)) - 1 : (i128{1} << t.bits) - 1;
}

std::string text(i128 v) {
  if (v < 0) return "-" + text(-v);
  std::string s;
  do s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
  while ((v /= 10) != 0);
  return s;
}

// An f16 (1-5-10, bias 15) or bf16 (1-8-7, bias 127) pattern's value (finite patterns only).
double half_value(std::uint16_t h, ElementType type) {
  const bool bf = type == ElementType::bf16;
  const int mantissa_bits = bf ? 7 : 10, bias = bf ? 127 : 15;
  const int field = (h & 0x7FFF) >> mantissa_bits, m = h & ((1 << mantissa_bits) - 1);
  const double v = field == 0 ? std::ldexp(m, 1 - bias - mantissa_bits)
                              : std::ldexp(m + (1 << mantissa_bits), field - bias - mantissa_bits);
  return (h & 0x8000) ? -v : v;
}

std::uint16_t half_max(ElementType type) {
  return type == ElementType::bf16 ? 0x7F7F : 0x7BFF;
}

// Section 7: f16 and bf16 averages are the exact average sum / n rounded once, to nearest even;
// an exact 0 is +0 (sums from +0), a nonzero average that rounds to 0 keeps its sign. `sum`, and
// n times any 16-bit value, must be exact in double (the inputs are drawn so). The magnitude is
// found by bisection over the ordered positive patterns, then its two neighbours compared exactly.
std::uint16_t half_average(double sum, std::int64_t n, ElementType type) {
  if (sum == 0) return 0;
  const double a = std::abs(sum), dn = static_cast<double>(n);
  int lo = 0, hi = half_max(type);  // the largest pattern p with value(p) * n <= a
  while (lo < hi) {
    const int mid = (lo + hi + 1) / 2;
    if (half_value(static_cast<std::uint16_t>(mid), type) * dn <= a)
      lo = mid;
    else
      hi = mid - 1;
  }
  auto p = static_cast<std::uint16_t>(lo);
  const double below = half_value(p, type) * dn;
  if (below != a && p < half_max(type)) {
    const double twice_mid = (half_value(p, type) + half_value(p + 1, type)) * dn;
    if (2 * a > twice_mid || (2 * a == twice_mid && (p & 1))) ++p;
  }
  return static_cast<std::uint16_t>(p | (sum < 0 ? 0x8000 : 0));
}

// Section 7: i8 and u8 round the exact average to nearest, ties to even; wider integers truncate
// it toward zero.
i128 int_average(i128 sum, i128 n, bool nearest) {
  const i128 q = sum / n, r = sum - q * n;  // q truncated toward zero
  if (!nearest) return q;
  const i128 twice = 2 * (r < 0 ? -r : r);
  const bool away = twice > n || (twice == n && q % 2 != 0);
  return away ? q + (sum < 0 ? -1 : 1) : q;
}

// One random op as written in the IR. Empty lists and strings are left out of <data>.
struct RandomOp {
  bool avg = true;
  int version = 1;    // the op's version
  std::string opset;  // the layer's version attribute
  Ints in;            // [N, C, spatial...]
  Ints kernel, strides, pads_begin, pads_end, dilations;
  std::string exclude_pad;  // "true", "0", "FALSE"...; empty: the default (true)
  std::string rounding;     // any case; empty: floor
  std::string auto_pad;     // any case; empty: explicit
  std::int64_t axis = 0;
  bool i32_indices = false;
  ElementType type = ElementType::f32;
};

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string list_text(const Ints& v) {
  std::string s;
  for (auto x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}

bool has_dilations(const RandomOp& r) {
  return r.avg ? r.version == 16 : r.version >= 8;
}
bool has_ceil_torch(const RandomOp& r) {
  return r.version >= 14;
}

// --- The oracle ---------------------------------------------------------------------------------

struct Expected {
  std::string error;  // a part of the validation message; empty when the op is valid
  Ints out;           // output shape
  Ints pb, pe;        // pads after auto_pad
  bool pads_in_avg = false;
};

Expected fail(std::string message) {
  return {std::move(message), {}, {}, {}, false};
}

std::string length_error(const std::string& what, std::size_t got) {
  return "Expected " + what + " size to be equal to input size - 2. Got: " + std::to_string(got);
}

// Section 2, "Validation order", "auto_pad" and "Output spatial size"; section 6 for MaxPool
// (no exclude-pad check, ceil_torch from v14, dilations from v8).
Expected infer(const RandomOp& r) {
  const std::size_t n = r.kernel.size();
  Ints pb = r.pads_begin.empty() ? Ints(n, 0) : r.pads_begin;
  Ints pe = r.pads_end.empty() ? Ints(n, 0) : r.pads_end;
  if (pb.size() != n) return fail(length_error("pads_begin", pb.size()));
  if (pe.size() != n) return fail(length_error("pads_end", pe.size()));
  if (r.strides.size() != n) return fail(length_error("strides", r.strides.size()));
  const bool dil = has_dilations(r);
  const Ints d = dil && !r.dilations.empty() ? r.dilations : Ints(n, 1);
  if (d.size() != n)
    return fail("Expected dilations size to be equal to kernel size. Got: " +
                std::to_string(d.size()));
  if (n != r.in.size() - 2) return fail(length_error("kernel", n));
  for (auto s : r.strides)
    if (s == 0) return fail("Strides has zero dimension(s).");
  for (auto v : d)
    if (v == 0) return fail("Kernel dilations has zero dimension(s).");
  const std::string rounding = lower(r.rounding);
  const std::string auto_pad = lower(r.auto_pad);
  if (rounding == "ceil_torch" && !has_ceil_torch(r))
    return fail("Rounding CEIL_TORCH is not supported.");

  const bool exclude =
      r.exclude_pad.empty() || lower(r.exclude_pad) == "true" || r.exclude_pad == "1";
  Expected e;
  e.out = {r.in[0], r.in[1]};
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t D = r.in[i + 2], s = r.strides[i], kd = d[i] * (r.kernel[i] - 1) + 1;
    if (auto_pad == "same_upper" || auto_pad == "same_lower") {
      const std::int64_t P = std::max<std::int64_t>(0, ((D + s - 1) / s - 1) * s + kd - D);
      const std::int64_t small = P / 2, big = P - small;
      pb[i] = auto_pad == "same_upper" ? small : big;
      pe[i] = auto_pad == "same_upper" ? big : small;
    } else if (auto_pad == "valid") {
      pb[i] = pe[i] = 0;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t D = r.in[i + 2], s = r.strides[i], kd = d[i] * (r.kernel[i] - 1) + 1;
    const std::string axis = " at axis " + std::to_string(i) + ".";
    if (kd > D + pb[i] + pe[i])
      return fail("Kernel after dilation has size (dim: " + std::to_string(kd) +
                  ") larger than the data shape after padding (dim: " +
                  std::to_string(D + pb[i] + pe[i]) + ")" + axis);
    if (r.avg && exclude && !(kd > pb[i] && kd > pe[i]))
      return fail("Kernel after dilation is sometimes entirely in the padding area for axis " +
                  std::to_string(i) + " (dilated kernel dimension: " + std::to_string(kd) +
                  ", padding below dimension: " + std::to_string(pb[i]) +
                  ", padding above dimension: " + std::to_string(pe[i]) + ")");
    const std::int64_t span = D + pb[i] + pe[i] - kd;
    std::int64_t out = span / s + 1;
    if (rounding == "ceil") out = (span + s - 1) / s + 1;
    if (rounding == "ceil_torch") {
      const std::int64_t q = (span + s - 1) / s;
      out = q * s <= D + pb[i] - 1 ? q + 1 : q;
    }
    e.out.push_back(out);
  }
  e.pb = pb;
  e.pe = pe;
  bool any_pad = false;
  for (std::size_t i = 0; i < n; ++i) any_pad = any_pad || pb[i] != 0 || pe[i] != 0;
  e.pads_in_avg = r.avg && !exclude && any_pad;
  return e;
}

// Per output: an average's exact sum and divisor (0 for a window with no in-bounds tap, which
// gives 0), or a maximum and its index.
template <class V>
struct Pooled {
  std::vector<V> values;
  Ints divisors, indices;
};

// Section 3 (AvgPool) and section 6 (MaxPool): tap j of output o reads o*s - pb + j*d; a tap off
// the input on any axis is padding. Average: sum of the in-bounds taps over prod(K) when padding
// counts, else over their number. Max: the largest in-bounds tap and its position flattened from
// dimension `axis`; the first of equal taps (D, H, W order), and a window without in-bounds taps
// (or only `lowest` ones) gives the type's lowest value at the plane's first position (irrun's
// kernel contract, README "MaxPool": OpenVINO's running maximum starts there and takes a tap only
// when strictly greater). Floats are distinct: ties are an integer matter.
template <class V>
Pooled<V> naive(const RandomOp& r, const Expected& e, const std::vector<V>& x, V lowest) {
  const std::size_t n = r.kernel.size();
  const Ints d = has_dilations(r) && !r.dilations.empty() ? r.dilations : Ints(n, 1);
  Ints in_sp(r.in.begin() + 2, r.in.end()), out_sp(e.out.begin() + 2, e.out.end());
  const auto prod = [](const Ints& v) {
    return std::accumulate(v.begin(), v.end(), std::int64_t{1}, std::multiplies<>());
  };
  const std::int64_t in_plane = prod(in_sp), out_plane = prod(out_sp), taps = prod(r.kernel);
  const std::int64_t axis = r.axis < 0 ? r.axis + static_cast<std::int64_t>(r.in.size()) : r.axis;
  std::int64_t range = 1;
  for (std::size_t a = static_cast<std::size_t>(axis); a < r.in.size(); ++a) range *= r.in[a];
  Pooled<V> p;
  for (std::int64_t plane = 0; plane < r.in[0] * r.in[1]; ++plane) {
    for (std::int64_t o = 0; o < out_plane; ++o) {
      Ints opos(n);
      for (std::size_t a = n, rest = static_cast<std::size_t>(o); a-- > 0;) {
        opos[a] = static_cast<std::int64_t>(rest % static_cast<std::size_t>(out_sp[a]));
        rest /= static_cast<std::size_t>(out_sp[a]);
      }
      V sum = 0, best = lowest;
      std::int64_t count = 0, best_at = 0;
      for (std::int64_t t = 0; t < taps; ++t) {
        // Tap t's offsets j per axis (last axis fastest) and its input position.
        Ints pos(n);
        bool inside = true;
        for (std::size_t a = n, rest = static_cast<std::size_t>(t); a-- > 0;) {
          const auto j = static_cast<std::int64_t>(rest % static_cast<std::size_t>(r.kernel[a]));
          rest /= static_cast<std::size_t>(r.kernel[a]);
          pos[a] = opos[a] * r.strides[a] - e.pb[a] + j * d[a];
          inside = inside && pos[a] >= 0 && pos[a] < in_sp[a];
        }
        if (!inside) continue;
        std::int64_t flat = 0;
        for (std::size_t a = 0; a < n; ++a) flat = flat * in_sp[a] + pos[a];
        const V v = x[static_cast<std::size_t>(plane * in_plane + flat)];
        sum += v;
        ++count;
        if (v > best) best = v, best_at = flat;
      }
      if (r.avg) {
        p.values.push_back(sum);
        p.divisors.push_back(count == 0 ? 0 : e.pads_in_avg ? taps : count);
      } else {
        p.values.push_back(best);
        p.indices.push_back((plane * in_plane + best_at) % range);
      }
    }
  }
  return p;
}

// --- Inputs and outputs -------------------------------------------------------------------------

// An input tensor and its values for the oracle (floats as exact doubles, integers as i128).
struct Input {
  Tensor tensor;
  std::vector<double> reals;
  std::vector<i128> ints;
};

using irrun::testing::with_int_type;

void store_ints(Tensor& t, const std::vector<i128>& v) {
  with_int_type(t.type, [&](auto zero) {
    using T = decltype(zero);
    for (std::size_t i = 0; i < v.size(); ++i) t.mutable_data<T>()[i] = static_cast<T>(v[i]);
  });
}

std::vector<i128> ints_of(const Tensor& t) {
  return with_int_type(t.type, [&](auto zero) {
    const auto* p = t.data<decltype(zero)>();
    return std::vector<i128>(p, p + t.element_count());
  });
}

// Random inputs for `type`. Averages: small integers for f32/f64 (exact sums); f16/bf16 any
// finite pattern (bf16 within 20 binades, so sums stay exact in double), patterns a few units
// apart (averages near and at midpoints) or small integers; integers mostly small (ties,
// negatives), 1 in 8 the type's min or max and 1 in 8 any value (sums past the type's range).
// Maxima of floats: distinct values (a shuffled range, scaled by a power of two for 16 bits);
// of integers: as for averages, so ties and windows of only the type's minimum occur.
Input random_input(SplitMix64& rng, ElementType type, const Ints& shape, bool avg) {
  const TypeInfo& t = info(type);
  const auto count = static_cast<std::size_t>(
      std::accumulate(shape.begin(), shape.end(), std::int64_t{1}, std::multiplies<>()));
  Input in;
  in.tensor = Tensor::zeros(type, shape);
  if (t.integer) {
    in.ints.resize(count);
    for (auto& v : in.ints) {
      const auto pick_kind = rng.range(0, 7);
      if (pick_kind == 0)
        v = rng.coin() ? int_min(t) : int_max(t);
      else if (pick_kind == 1)
        v = int_min(t) +
            static_cast<i128>(rng.next() & static_cast<std::uint64_t>((int_max(t) - int_min(t))));
      else
        v = t.is_signed ? rng.range(-16, 15) : rng.range(0, 31);
    }
    store_ints(in.tensor, in.ints);
    return in;
  }
  std::vector<double> x(count);
  if (avg) {
    for (auto& v : x) v = static_cast<double>(rng.range(-9, 9));
  } else {
    for (std::size_t i = 0; i < count; ++i) x[i] = static_cast<double>(i) - double(count / 2);
    for (std::size_t i = count; i > 1; --i)
      std::swap(x[i - 1],
                x[static_cast<std::size_t>(rng.range(0, static_cast<std::int64_t>(i) - 1))]);
  }
  if (!is_half(type)) {
    in.tensor = irrun::testing::make_tensor(type, shape, x);
    in.reals = x;
    return in;
  }
  // |x| < 256: exact in bf16's 8 bits and f16's 11 however scaled here.
  const bool bf = type == ElementType::bf16;
  const int mode = avg ? static_cast<int>(rng.range(0, 2)) : 3;
  const auto scale = static_cast<int>(bf ? rng.range(-120, 120) : rng.range(-14, 7));
  const std::int64_t low = rng.range(0, 234);  // bf16's lowest exponent field
  const auto base = static_cast<std::int64_t>(rng.range(0, half_max(type) - 8));
  const int sign = rng.coin() ? 0x8000 : 0;  // of mode 1's values
  auto* bits = in.tensor.mutable_data<std::uint16_t>();
  for (std::size_t i = 0; i < count; ++i) {
    std::uint16_t h = 0;
    if (mode == 0 && !bf) {
      do h = static_cast<std::uint16_t>(rng.next());
      while ((h & 0x7C00) == 0x7C00);
    } else if (mode == 0) {
      h = static_cast<std::uint16_t>((rng.range(low, low + 20) << 7) | rng.range(0, 127) |
                                     (rng.coin() ? 0x8000 : 0));
    } else if (mode == 1) {
      h = static_cast<std::uint16_t>((base + rng.range(0, 8)) | sign);
    } else {
      const double v = mode == 2 ? x[i] : std::ldexp(x[i], scale);
      h = half_average(v, 1, type);  // v is exact in the type: its own pattern
      REQUIRE(half_value(h, type) == v);
    }
    bits[i] = h;
  }
  in.reals.resize(count);
  for (std::size_t i = 0; i < count; ++i) in.reals[i] = half_value(bits[i], type);
  return in;
}

// The type's lowest finite value, where a MaxPool window starts (README "MaxPool").
double lowest_real(ElementType type) {
  switch (type) {
    case ElementType::f32:
      return static_cast<double>(std::numeric_limits<float>::lowest());
    case ElementType::f64:
      return std::numeric_limits<double>::lowest();
    default:
      return -half_value(half_max(type), type);
  }
}

bool within_one_ulp(double got, double want) {
  return got == want || std::nextafter(want, got) == got;
}

// Every value of `values` (and index of `indices`, when given) against oracle(x, lowest), a
// Pooled<V> for the input's doubles or integers: f32/f64 averages within one ulp of the exact
// average, f16/bf16 averages bit for bit section 7's rounding of it, integer averages by section
// 7's rule, maxima exact.
template <class Oracle>
void check_outputs(ElementType type, bool avg, const Input& x, const Oracle& oracle,
                   const Tensor& values, const Tensor* indices) {
  const TypeInfo& t = info(type);
  CHECK(values.type == type);
  Ints want_indices;
  if (t.integer) {
    const Pooled<i128> want = oracle(x.ints, int_min(t));
    const auto got = ints_of(values);
    REQUIRE(got.size() == want.values.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      i128 w = want.values[i];
      if (avg) w = want.divisors[i] == 0 ? 0 : int_average(w, want.divisors[i], t.bits == 8);
      INFO("output " << i << ": " << text(got[i]) << ", expected " << text(w)
                     << (avg ? " from the sum " + text(want.values[i]) : ""));
      CHECK(got[i] == w);
    }
    want_indices = want.indices;
  } else {
    const Pooled<double> want = oracle(x.reals, lowest_real(type));
    const auto got = irrun::testing::values_of(values);
    REQUIRE(got.size() == want.values.size());
    const std::vector<std::uint16_t> bits =
        is_half(type) ? irrun::testing::bits16_of(values) : std::vector<std::uint16_t>{};
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double sum = want.values[i];
      const std::int64_t n = avg ? want.divisors[i] : 1;
      INFO("output " << i << ": " << got[i] << ", expected " << sum << " / " << n);
      if (!avg && is_half(type))
        CHECK(half_value(bits[i], type) == sum);
      else if (!avg)
        CHECK(got[i] == sum);
      else if (is_half(type))
        CHECK(bits[i] == (n == 0 ? 0 : half_average(sum, n, type)));
      else if (n == 0)
        CHECK(got[i] == 0);
      else if (type == ElementType::f64)
        CHECK(within_one_ulp(got[i], sum / static_cast<double>(n)));
      else
        CHECK(irrun::testing::within_one_f32_ulp(static_cast<float>(got[i]),
                                                 static_cast<float>(sum / static_cast<double>(n))));
    }
    want_indices = want.indices;
  }
  if (!indices) return;
  const auto got_indices = irrun::testing::values_of(*indices);
  REQUIRE(got_indices.size() == want_indices.size());
  for (std::size_t i = 0; i < got_indices.size(); ++i) {
    INFO("index " << i);
    CHECK(got_indices[i] == static_cast<double>(want_indices[i]));
  }
}

// The output of Result layer `result_layer`.
const Tensor& output_of(const std::vector<irrun::Output>& outputs, std::size_t result_layer) {
  for (const auto& o : outputs)
    if (o.result_layer == result_layer) return o.tensor;
  FAIL("no output from Result layer " << result_layer);
  return outputs[0].tensor;
}

// --- Random ops ---------------------------------------------------------------------------------

// Random case: "same_UPPER", "Ceil"...
std::string spelling(SplitMix64& rng, std::string s) {
  const auto mode = rng.range(0, 3);
  for (auto& c : s) {
    if (mode == 1 || (mode == 2 && rng.coin()))
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return s;
}

template <class T>
const T& pick(SplitMix64& rng, const std::vector<T>& v) {
  return v[static_cast<std::size_t>(rng.range(0, static_cast<std::int64_t>(v.size()) - 1))];
}

// Half f32 or f64 (averages checked to one ulp), half any type irrun runs.
ElementType random_type(SplitMix64& rng) {
  return rng.coin() ? (rng.coin() ? ElementType::f64 : ElementType::f32) : pick(rng, types()).type;
}

// Whether the model is to fail validation with `error` (none: ""), and then it does: one
// validation error that says it.
bool is_expected_error(const irrun::Analysis& a, const std::string& error) {
  if (error.empty()) return false;
  INFO("expected error: " << error);
  REQUIRE(a.diagnostics.size() == 1);
  CHECK(a.diagnostics[0].severity == irrun::Severity::error);
  CHECK(a.diagnostics[0].rule == "validation");
  CHECK_THAT(a.diagnostics[0].message, Catch::Contains(error));
  return true;
}

RandomOp random_op(SplitMix64& rng) {
  RandomOp r;
  r.avg = rng.coin();
  if (r.avg) {
    // AvgPool is v1 in opset1..13, v14 in opset14..15, v16 in opset16 (section 1).
    const int opset = static_cast<int>(pick(rng, std::vector<std::int64_t>{1, 7, 13, 14, 15, 16}));
    r.opset = "opset" + std::to_string(opset);
    r.version = opset >= 16 ? 16 : opset >= 14 ? 14 : 1;
  } else {
    r.version = static_cast<int>(pick(rng, std::vector<std::int64_t>{1, 8, 14}));
    r.opset = "opset" + std::to_string(r.version);
  }
  const auto n = static_cast<std::size_t>(rng.range(1, 3));
  const std::int64_t max_in = n == 3 ? 5 : 7;
  r.in = {rng.range(1, 2), rng.range(1, 2)};
  for (std::size_t i = 0; i < n; ++i) r.in.push_back(rng.range(1, max_in));
  const Ints pads{0, 0, 1, 2, 3};
  const Ints dils{1, 1, 2, 3};
  for (std::size_t i = 0; i < n; ++i) {
    r.kernel.push_back(rng.range(1, 4));
    r.strides.push_back(rng.range(1, 4));
    r.pads_begin.push_back(pick(rng, pads));
    r.pads_end.push_back(pick(rng, pads));
    r.dilations.push_back(pick(rng, dils));
  }
  // Defaults left out: empty pads are zeros, no dilations are 1s.
  if (rng.range(0, 5) == 0) r.pads_begin.clear(), r.pads_end.clear();
  if (!has_dilations(r) || rng.range(0, 3) == 0) r.dilations.clear();
  r.exclude_pad =
      pick(rng, std::vector<std::string>{"", "true", "false", "1", "0", "False", "TRUE"});
  if (!r.avg) r.exclude_pad.clear();
  std::vector<std::string> roundings{"", "floor", "ceil"};
  if (has_ceil_torch(r) || rng.range(0, 9) == 0) roundings.push_back("ceil_torch");
  r.rounding = spelling(rng, pick(rng, roundings));
  r.auto_pad = spelling(rng, pick(rng, std::vector<std::string>{"", "explicit", "same_upper",
                                                                "same_lower", "valid"}));
  r.axis = rng.range(-static_cast<std::int64_t>(r.in.size()),
                     static_cast<std::int64_t>(r.in.size()) - 1);
  r.i32_indices = rng.coin();
  r.type = random_type(rng);

  // One in eight breaks a list rule (the geometry rules break by themselves).
  if (rng.range(0, 7) == 0) {
    switch (rng.range(0, 6)) {
      case 0:
        r.strides.push_back(1);
        break;
      case 1:
        r.pads_begin.assign(n + 1, 0);
        break;
      case 2:
        r.pads_end.assign(n + 1, 1);
        break;
      case 3:
        if (has_dilations(r)) r.dilations.assign(n + 1, 1);
        break;
      case 4:  // a kernel of the wrong length, every other list agreeing with it
        r.kernel.push_back(2), r.strides.push_back(1);
        if (!r.pads_begin.empty()) r.pads_begin.push_back(0), r.pads_end.push_back(0);
        if (!r.dilations.empty()) r.dilations.push_back(1);
        break;
      case 5:
        r.strides[static_cast<std::size_t>(rng.range(0, static_cast<std::int64_t>(n) - 1))] = 0;
        break;
      default:
        if (!r.dilations.empty()) r.dilations.back() = 0;
        break;
    }
  }
  return r;
}

std::string describe(const RandomOp& r) {
  return std::string(r.avg ? "AvgPool" : "MaxPool") + " " + r.opset + " in=[" + list_text(r.in) +
         "] kernel=" + list_text(r.kernel) + " strides=" + list_text(r.strides) +
         " pads_begin=" + list_text(r.pads_begin) + " pads_end=" + list_text(r.pads_end) +
         " dilations=" + list_text(r.dilations) + " exclude-pad=" + r.exclude_pad +
         " rounding_type=" + r.rounding + " auto_pad=" + r.auto_pad +
         " axis=" + std::to_string(r.axis) + " " + info(r.type).name;
}

// Parameter(0) -> pool(1) -> Result(2) [-> Result(3) for MaxPool-8/14's indices]. Output ports
// declare -1 dims, which match any inferred shape.
irrun::Model model_of(const RandomOp& r) {
  using namespace irrun::testing;
  std::string data;
  const auto attr = [&](const char* key, const std::string& value) {
    if (value.empty()) return;
    if (!data.empty()) data += ' ';
    data.append(key).append("=\"").append(value).append("\"");
  };
  attr("kernel", list_text(r.kernel));
  attr("strides", list_text(r.strides));
  attr("pads_begin", list_text(r.pads_begin));
  attr("pads_end", list_text(r.pads_end));
  attr("dilations", list_text(r.dilations));
  attr("exclude-pad", r.exclude_pad);
  attr("rounding_type", r.rounding);
  attr("auto_pad", r.auto_pad);
  const bool indices = !r.avg && r.version >= 8;
  if (indices) {
    attr("axis", std::to_string(r.axis));
    attr("index_element_type", r.i32_indices ? "i32" : "i64");
  }
  const std::string precision = info(r.type).precision;
  const std::string index_precision = r.i32_indices ? "I32" : "I64";
  const Ints any(r.in.size(), -1);
  return model_from_xml(net(
      parameter(0, "x", list_text(r.in), r.in, info(r.type).name, precision) +
          layer(1, "pool", r.avg ? "AvgPool" : "MaxPool", r.opset, data, port(0, r.in, precision),
                port(1, any, precision) + (indices ? port(2, any, index_precision) : "")) +
          result(2, "values", any, precision) +
          (indices ? result(3, "indices", any, index_precision) : ""),
      edge(0, 0, 1, 0) + edge(1, 1, 2, 0) + (indices ? edge(1, 2, 3, 0) : "")));
}

// --- AdaptiveAvgPool-8 and AdaptiveMaxPool-8 ----------------------------------------------------

struct RandomAdaptive {
  bool avg = true;
  Ints in;                 // [N, C, spatial...]
  Ints sizes;              // output_size's values
  bool i32_sizes = false;  // output_size's element type (section 4: T_SHAPE, i32 or i64)
  std::string index_type;  // AdaptiveMaxPool's index_element_type; empty: the default, i64
  std::size_t offset = 0;  // output_size's byte offset in the weights
  ElementType type = ElementType::f32;
};

// Section 4's checks on a Const output_size of the right rank: its length must be rank - 2.
// Values below -1 are irrun's own error (README "Stricter than OpenVINO").
Expected infer_adaptive(const RandomAdaptive& r) {
  const std::size_t n = r.in.size() - 2;
  if (r.sizes.size() != n)
    return fail("Output shape for spatial dimension not compatible with data shape.");
  for (std::size_t i = 0; i < n; ++i)
    if (r.sizes[i] < -1)
      return fail("output_size value " + std::to_string(r.sizes[i]) + " at axis " +
                  std::to_string(i) + " is negative");
  Expected e;
  e.out = {r.in[0], r.in[1]};
  e.out.insert(e.out.end(), r.sizes.begin(), r.sizes.end());
  return e;
}

// Section 4: bin i of an axis of input size I and output size O is [floor(i*I/O),
// ceil((i+1)*I/O)); the average divides the bin's sum by its element count. Section 6: the
// maximum's index is its position in the flattened spatial part of its (n, c); the first of equal
// values in D, H, W order (README "MaxPool": each bin starts from its first element and takes a
// value only when strictly greater).
template <class V>
Pooled<V> naive_adaptive(const RandomAdaptive& r, const Expected& e, const std::vector<V>& x) {
  const std::size_t n = r.in.size() - 2;
  Ints in_sp(r.in.begin() + 2, r.in.end()), out_sp(e.out.begin() + 2, e.out.end());
  const auto prod = [](const Ints& v) {
    return std::accumulate(v.begin(), v.end(), std::int64_t{1}, std::multiplies<>());
  };
  const std::int64_t in_plane = prod(in_sp), out_plane = prod(out_sp);
  Pooled<V> p;
  for (std::int64_t plane = 0; plane < r.in[0] * r.in[1]; ++plane) {
    for (std::int64_t o = 0; o < out_plane; ++o) {
      Ints start(n), size(n);
      for (std::size_t a = n, rest = static_cast<std::size_t>(o); a-- > 0;) {
        const auto i = static_cast<std::int64_t>(rest % static_cast<std::size_t>(out_sp[a]));
        rest /= static_cast<std::size_t>(out_sp[a]);
        const std::int64_t I = in_sp[a], O = out_sp[a];
        start[a] = i * I / O;
        size[a] = ((i + 1) * I + O - 1) / O - start[a];
      }
      const std::int64_t count = prod(size);
      V sum = 0, best = 0;
      std::int64_t best_at = -1;
      for (std::int64_t t = 0; t < count; ++t) {
        std::int64_t flat = 0;
        for (std::size_t a = 0, rest = static_cast<std::size_t>(t),
                         div = static_cast<std::size_t>(count);
             a < n; ++a) {
          div /= static_cast<std::size_t>(size[a]);
          flat = flat * in_sp[a] + start[a] + static_cast<std::int64_t>(rest / div);
          rest %= div;
        }
        const V v = x[static_cast<std::size_t>(plane * in_plane + flat)];
        sum += v;
        if (best_at < 0 || v > best) best = v, best_at = flat;
      }
      p.values.push_back(r.avg ? sum : best);
      if (r.avg)
        p.divisors.push_back(count);
      else
        p.indices.push_back(best_at);
    }
  }
  return p;
}

// Output sizes 1, equal to the input's, larger, anything up to a few past it (uneven bins), and
// rarely 0 (an empty output). One op in eight breaks a rule.
RandomAdaptive random_adaptive(SplitMix64& rng) {
  RandomAdaptive r;
  r.avg = rng.coin();
  const auto n = static_cast<std::size_t>(rng.range(1, 3));
  r.in = {rng.range(1, 2), rng.range(1, 2)};
  for (std::size_t i = 0; i < n; ++i) r.in.push_back(rng.range(1, n == 3 ? 5 : 7));
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t I = r.in[i + 2], kind = rng.range(0, 39);
    r.sizes.push_back(kind < 8    ? 1
                      : kind < 16 ? I
                      : kind < 24 ? I + rng.range(1, 5)
                      : kind < 39 ? rng.range(1, I + 3)
                                  : 0);
  }
  r.i32_sizes = rng.coin();
  r.index_type = pick(rng, std::vector<std::string>{"", "i32", "i64"});
  r.offset = static_cast<std::size_t>(rng.range(0, 2) * 8);
  r.type = random_type(rng);
  if (rng.range(0, 7) == 0) {
    switch (rng.range(0, 2)) {
      case 0:
        r.sizes.push_back(1);
        break;
      case 1:
        if (n > 1)
          r.sizes.pop_back();
        else
          r.sizes.push_back(2);
        break;
      default:
        r.sizes[static_cast<std::size_t>(rng.range(0, static_cast<std::int64_t>(n) - 1))] =
            -rng.range(2, 5);
        break;
    }
  }
  return r;
}

std::string describe(const RandomAdaptive& r) {
  return std::string(r.avg ? "AdaptiveAvgPool" : "AdaptiveMaxPool") + " in=[" + list_text(r.in) +
         "] output_size=" + list_text(r.sizes) + (r.i32_sizes ? " (i32)" : " (i64)") +
         " index_element_type=" + r.index_type + " " + info(r.type).name;
}

// Parameter(0) and Const output_size(1) -> pool(2) -> Result(3) [-> Result(4) for the indices];
// the weights hold output_size at r.offset, 0xAB before it.
irrun::Model model_of(const RandomAdaptive& r) {
  using namespace irrun::testing;
  const std::size_t width = r.i32_sizes ? 4 : 8, bytes = r.sizes.size() * width;
  irrun::Buffer w = irrun::Buffer::allocate(r.offset + bytes);
  std::memset(w.mutable_data(), 0xAB, r.offset);
  for (std::size_t i = 0; i < r.sizes.size(); ++i) {
    const auto v32 = static_cast<std::int32_t>(r.sizes[i]);
    std::memcpy(w.mutable_data() + r.offset + i * width,
                r.i32_sizes ? static_cast<const void*>(&v32) : &r.sizes[i], width);
  }
  const std::string precision = info(r.type).precision, size_type = r.i32_sizes ? "i32" : "i64",
                    size_precision = r.i32_sizes ? "I32" : "I64",
                    index_precision = r.index_type == "i32" ? "I32" : "I64";
  const auto L = static_cast<std::int64_t>(r.sizes.size());
  const Ints any(r.in.size(), -1);
  return model_from_xml(
      net(parameter(0, "x", list_text(r.in), r.in, info(r.type).name, precision) +
              layer(1, "os", "Const", "opset1",
                    "element_type=\"" + size_type + "\" shape=\"" + std::to_string(L) +
                        "\" offset=\"" + std::to_string(r.offset) + "\" size=\"" +
                        std::to_string(bytes) + "\"",
                    "", port(0, {L}, size_precision)) +
              layer(2, "pool", r.avg ? "AdaptiveAvgPool" : "AdaptiveMaxPool", "opset8",
                    r.avg || r.index_type.empty() ? ""
                                                  : "index_element_type=\"" + r.index_type + "\"",
                    port(0, r.in, precision) + port(1, {L}, size_precision),
                    port(2, any, precision) + (r.avg ? "" : port(3, any, index_precision))) +
              result(3, "values", any, precision) +
              (r.avg ? "" : result(4, "indices", any, index_precision)),
          edge(0, 0, 2, 0) + edge(1, 0, 2, 1) + edge(2, 2, 3, 0) + (r.avg ? "" : edge(2, 3, 4, 0))),
      std::move(w));
}

}  // namespace

TEST_CASE("random pooling ops: attributes -> shape inference -> kernel against an oracle",
          "[pool_pipeline]") {
  SplitMix64 rng(0x5EED'0062);
  const irrun::Parallel par(2);
  int valid = 0, invalid = 0;
  for (int iter = 0; iter < 5000; ++iter) {
    const RandomOp r = random_op(rng);
    const Expected e = infer(r);
    INFO("case " << iter << ": " << describe(r));
    const irrun::Model m = model_of(r);
    const irrun::Analysis a = irrun::analyze(m.ir, m.graph, nullptr);

    if (is_expected_error(a, e.error)) {
      ++invalid;
      continue;
    }
    ++valid;
    INFO("expected output [" << list_text(e.out) << "]");
    for (const auto& d : a.diagnostics) FAIL_CHECK("diagnostic: " << d.message);
    REQUIRE(a.diagnostics.empty());
    const auto& pool = a.nodes[1];
    REQUIRE(pool.outputs.size() == (!r.avg && r.version >= 8 ? 2u : 1u));
    for (const auto& o : pool.outputs) CHECK(o.shape == irrun::PartialShape::from_static(e.out));
    REQUIRE(pool.geometry.has_value());
    CHECK(pool.geometry->pads_in_avg == e.pads_in_avg);

    const Input x = random_input(rng, r.type, r.in, r.avg);
    const auto outputs = irrun::run_model(m, {{0, x.tensor}}, par);
    // Outputs by Result layer: values reach layer 2, MaxPool-8/14's indices layer 3.
    const bool indices = !r.avg && r.version >= 8;
    REQUIRE(outputs.size() == (indices ? 2u : 1u));
    const Tensor& values = output_of(outputs, 2);
    REQUIRE(values.shape == e.out);
    const Tensor* index_tensor = indices ? &output_of(outputs, 3) : nullptr;
    if (index_tensor) {
      CHECK(index_tensor->type == (r.i32_indices ? ElementType::i32 : ElementType::i64));
      REQUIRE(index_tensor->shape == e.out);
    }
    check_outputs(
        r.type, r.avg, x, [&](const auto& xs, auto lowest) { return naive(r, e, xs, lowest); },
        values, index_tensor);
  }
  // The draw must keep both kinds common (it does: about two valid ops to one invalid).
  CHECK(valid > 1000);
  CHECK(invalid > 300);
}

TEST_CASE("random adaptive pooling ops: Const output_size -> shape -> kernel against an oracle",
          "[pool_pipeline]") {
  SplitMix64 rng(0xADA9'0062);
  const irrun::Parallel par(2);
  int valid = 0, invalid = 0, uneven = 0, larger = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    const RandomAdaptive r = random_adaptive(rng);
    const Expected e = infer_adaptive(r);
    INFO("case " << iter << ": " << describe(r));
    const irrun::Model m = model_of(r);
    const irrun::Analysis a = irrun::analyze(m.ir, m.graph, &*m.weights);

    if (is_expected_error(a, e.error)) {
      ++invalid;
      continue;
    }
    ++valid;
    for (std::size_t i = 0; i < r.sizes.size(); ++i) {
      uneven += r.sizes[i] > 0 && r.in[i + 2] % r.sizes[i] != 0 && r.sizes[i] < r.in[i + 2];
      larger += r.sizes[i] > r.in[i + 2];
    }
    INFO("expected output [" << list_text(e.out) << "]");
    for (const auto& d : a.diagnostics) FAIL_CHECK("diagnostic: " << d.message);
    REQUIRE(a.diagnostics.empty());
    const auto& pool = a.nodes[2];
    REQUIRE(pool.outputs.size() == (r.avg ? 1u : 2u));
    for (const auto& o : pool.outputs) CHECK(o.shape == irrun::PartialShape::from_static(e.out));

    const Input x = random_input(rng, r.type, r.in, r.avg);
    const auto outputs = irrun::run_model(m, {{0, x.tensor}}, par);
    REQUIRE(outputs.size() == (r.avg ? 1u : 2u));
    const Tensor& values = output_of(outputs, 3);
    REQUIRE(values.shape == e.out);
    const Tensor* index_tensor = r.avg ? nullptr : &output_of(outputs, 4);
    if (index_tensor) {
      CHECK(index_tensor->type == (r.index_type == "i32" ? ElementType::i32 : ElementType::i64));
      REQUIRE(index_tensor->shape == e.out);
    }
    check_outputs(
        r.type, r.avg, x, [&](const auto& xs, auto) { return naive_adaptive(r, e, xs); }, values,
        index_tensor);
  }
  CHECK(valid > 1000);
  CHECK(invalid > 100);
  CHECK(uneven > 100);
  CHECK(larger > 300);
}
