#include "irrun/kernels/avg_pool.hpp"
#include "irrun/kernels/max_pool.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "irrun/error.hpp"
#include "irrun/float16.hpp"
#include "support/int_types.hpp"
#include "support/naive_pool.hpp"
#include "support/pool_shape.hpp"
#include "support/split_mix.hpp"
#include "support/tensor_bits.hpp"

namespace {

using irrun::ElementType;
using irrun::Parallel;
using irrun::PoolGeometry;
using irrun::Tensor;

const ElementType kFloatTypes[] = {ElementType::f32, ElementType::f64, ElementType::f16,
                                   ElementType::bf16};

// ---- Element access through doubles (test inputs are always exact in the element type) ----

double round_to(ElementType t, double v) {
  switch (t) {
    case ElementType::f32:
      return static_cast<float>(v);
    case ElementType::f64:
      return v;
    case ElementType::f16:
      return irrun::f16_bits_to_double(irrun::f16_bits_from_double(v));
    case ElementType::bf16:
      return irrun::bf16_bits_to_double(irrun::bf16_bits_from_double(v));
    default:
      FAIL("not a float type");
      return 0;
  }
}

void store(Tensor& t, std::size_t i, double v) {
  switch (t.type) {
    case ElementType::f32:
      t.mutable_data<float>()[i] = static_cast<float>(v);
      break;
    case ElementType::f64:
      t.mutable_data<double>()[i] = v;
      break;
    case ElementType::f16:
      t.mutable_data<std::uint16_t>()[i] = irrun::f16_bits_from_double(v);
      break;
    case ElementType::bf16:
      t.mutable_data<std::uint16_t>()[i] = irrun::bf16_bits_from_double(v);
      break;
    default:
      FAIL("not a float type");
  }
}

double load(const Tensor& t, std::size_t i) {
  switch (t.type) {
    case ElementType::f32:
      return t.data<float>()[i];
    case ElementType::f64:
      return t.data<double>()[i];
    case ElementType::f16:
      return irrun::f16_bits_to_double(t.data<std::uint16_t>()[i]);
    case ElementType::bf16:
      return irrun::bf16_bits_to_double(t.data<std::uint16_t>()[i]);
    default:
      FAIL("not a float type");
      return 0;
  }
}

// Position of a value on the type's ordered line of representable values (+0 and -0 coincide),
// so the difference of two positions is their distance in ulps.
std::int64_t ordinal(ElementType t, double v) {
  if (t == ElementType::f32) {
    const auto b = std::bit_cast<std::uint32_t>(static_cast<float>(v));
    const auto mag = static_cast<std::int64_t>(b & 0x7FFFFFFFu);
    return (b >> 31) ? -mag : mag;
  }
  const auto b = std::bit_cast<std::uint64_t>(v);
  const auto mag = static_cast<std::int64_t>(b & 0x7FFFFFFFFFFFFFFFull);
  return (b >> 63) ? -mag : mag;
}

using irrun::testing::shape_of;

Tensor make_input(const PoolGeometry& g, ElementType t, const std::vector<double>& values) {
  Tensor in = Tensor::zeros(t, shape_of(g, g.in));
  REQUIRE(in.element_count() == values.size());
  for (std::size_t i = 0; i < values.size(); ++i) store(in, i, values[i]);
  return in;
}

// Output tensor filled with NaN so that an element the kernel forgets to write is caught.
Tensor make_poisoned_output(const PoolGeometry& g, ElementType t) {
  Tensor out = Tensor::zeros(t, shape_of(g, g.out));
  for (std::size_t i = 0; i < out.element_count(); ++i) {
    store(out, i, std::numeric_limits<double>::quiet_NaN());
  }
  return out;
}

std::vector<double> read_all(const Tensor& t) {
  std::vector<double> v(t.element_count());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = load(t, i);
  return v;
}

std::vector<double> run_kernel(const PoolGeometry& g, ElementType t,
                               const std::vector<double>& input, const Parallel& par) {
  const Tensor in = make_input(g, t, input);
  Tensor out = make_poisoned_output(g, t);
  irrun::kernels::avg_pool(in, out, g, par);
  return read_all(out);
}

template <class A>
std::string list(const A& a, std::size_t n) {
  std::string s = "[";
  for (std::size_t i = 0; i < n; ++i) {
    if (i) s += ',';
    s += std::to_string(a[i]);
  }
  return s + "]";
}

std::string describe(const PoolGeometry& g) {
  std::ostringstream os;
  os << (g.adaptive ? "adaptive" : "window") << " rank=" << g.spatial_rank << " N=" << g.batch
     << " C=" << g.channels << " in=" << list(g.in, 3) << " out=" << list(g.out, 3);
  if (!g.adaptive) {
    os << " kernel=" << list(g.kernel, 3) << " stride=" << list(g.stride, 3)
       << " dilation=" << list(g.dilation, 3) << " pads_begin=" << list(g.pad_begin, 3)
       << " pads_end=" << list(g.pad_end, 3) << " pads_in_avg=" << g.pads_in_avg;
  }
  return os.str();
}

// ---- Hand-checkable cases, one per rule ----

struct HandCase {
  std::string name;
  std::vector<std::int64_t> in;  // spatial dims; the rank is their count
  std::vector<std::int64_t> out;
  std::vector<std::int64_t> kernel = {};  // empty: all 1 (window cases must set it)
  std::vector<std::int64_t> stride = {};
  std::vector<std::int64_t> dilation = {};
  std::vector<std::int64_t> pads_begin = {};
  std::vector<std::int64_t> pads_end = {};
  bool pads_in_avg = false;
  bool adaptive = false;
  std::vector<double> expected = {};
  std::vector<double> input = {};  // empty: 1, 2, 3, ...
  std::int64_t channels = 1;
};

PoolGeometry geometry_of(const HandCase& c) {
  PoolGeometry g;
  g.channels = c.channels;
  g.spatial_rank = c.in.size();
  g.adaptive = c.adaptive;
  g.pads_in_avg = c.pads_in_avg;
  const std::size_t lead = 3 - c.in.size();
  auto put = [&](std::array<std::int64_t, 3>& dst, const std::vector<std::int64_t>& src) {
    for (std::size_t i = 0; i < src.size(); ++i) dst[lead + i] = src[i];
  };
  put(g.in, c.in);
  put(g.out, c.out);
  put(g.kernel, c.kernel);
  put(g.stride, c.stride);
  put(g.dilation, c.dilation);
  put(g.pad_begin, c.pads_begin);
  put(g.pad_end, c.pads_end);
  return g;
}

std::vector<HandCase> hand_cases() {
  // One rule per row; inputs are 1, 2, 3, ... unless given. Kept as rows for readability.
  // clang-format off
  return {
      // OV op_reference v1 case 1: exclude-pad=false but no pads, so the flag is off and the
      // ceil overhang averages only real cells: last = (7+8)/2.
      {.name = "ceil overhang without pads averages real cells",
       .in = {8}, .out = {4}, .kernel = {3}, .stride = {2},
       .expected = {2, 4, 6, 7.5}},
      // Padding counts: every window divides by K=3, overhang past pads_end included
      // (PyTorch would give 3 for the last one).
      {.name = "include-pad divides by the full kernel",
       .in = {6}, .out = {4}, .kernel = {3}, .stride = {2}, .pads_begin = {1}, .pads_end = {1},
       .pads_in_avg = true, .expected = {1, 3, 5, 2}},
      {.name = "exclude-pad divides by in-bounds cells",
       .in = {6}, .out = {4}, .kernel = {3}, .stride = {2}, .pads_begin = {1}, .pads_end = {1},
       .expected = {1.5, 3, 5, 6}},
      // Input rows [1 2 3 | 4 5 6]; the pad is on H only, yet the W overhang (col 3) counts:
      // (0,1) = 3/4, (1,1) = (3+6)/4.
      {.name = "pads on H only still count the W overhang",
       .in = {2, 3}, .out = {2, 2}, .kernel = {2, 2}, .stride = {1, 2}, .pads_begin = {1, 0},
       .pads_end = {0, 0}, .pads_in_avg = true, .expected = {0.75, 0.75, 3, 2.25}},
      {.name = "window beyond the input is 0",
       .in = {5}, .out = {3}, .kernel = {1}, .stride = {3}, .expected = {1, 4, 0}},
      {.name = "window entirely in padding is 0 (exclude-pad)",
       .in = {2}, .out = {4}, .kernel = {1}, .pads_begin = {2}, .expected = {0, 0, 1, 2}},
      {.name = "window entirely in padding is 0 (include-pad)",
       .in = {2}, .out = {4}, .kernel = {1}, .pads_begin = {2}, .pads_in_avg = true,
       .expected = {0, 0, 1, 2}},
      // Taps at 0,2,4 / 1,3,5 / 2,4,6.
      {.name = "dilation 2",
       .in = {7}, .out = {3}, .kernel = {3}, .dilation = {2}, .expected = {3, 4, 5}},
      // Kd = 4, starts -2, 0, 2: taps {-2,1}, {0,3}, {2,5}.
      {.name = "dilation 3 with pads, exclude-pad",
       .in = {5}, .out = {3}, .kernel = {2}, .stride = {2}, .dilation = {3}, .pads_begin = {2},
       .pads_end = {2}, .expected = {2, 2.5, 3}},
      {.name = "dilation 3 with pads, include-pad",
       .in = {5}, .out = {3}, .kernel = {2}, .stride = {2}, .dilation = {3}, .pads_begin = {2},
       .pads_end = {2}, .pads_in_avg = true, .expected = {1, 2.5, 1.5}},
      // same_* for D=5, K=2, s=2: total pad 1; same_upper puts it at the end, same_lower at the
      // beginning.
      {.name = "same_upper pads (0/1), exclude-pad",
       .in = {5}, .out = {3}, .kernel = {2}, .stride = {2}, .pads_end = {1},
       .expected = {1.5, 3.5, 5}},
      {.name = "same_upper pads (0/1), include-pad",
       .in = {5}, .out = {3}, .kernel = {2}, .stride = {2}, .pads_end = {1}, .pads_in_avg = true,
       .expected = {1.5, 3.5, 2.5}},
      {.name = "same_lower pads (1/0), exclude-pad",
       .in = {5}, .out = {3}, .kernel = {2}, .stride = {2}, .pads_begin = {1},
       .expected = {1, 2.5, 4.5}},
      {.name = "same_lower pads (1/0), include-pad",
       .in = {5}, .out = {3}, .kernel = {2}, .stride = {2}, .pads_begin = {1},
       .pads_in_avg = true, .expected = {0.5, 2.5, 4.5}},
      {.name = "1-D, two channels use their own planes",
       .in = {4}, .out = {2}, .kernel = {2}, .stride = {2}, .expected = {1.5, 3.5, 5.5, 7.5},
       .channels = 2},
      // 3x3 input 1..9, 2x2 windows.
      {.name = "2-D",
       .in = {3, 3}, .out = {2, 2}, .kernel = {2, 2}, .stride = {1, 1}, .expected = {3, 4, 6, 7}},
      {.name = "3-D single window",
       .in = {2, 2, 2}, .out = {1, 1, 1}, .kernel = {2, 2, 2}, .stride = {1, 1, 1},
       .expected = {4.5}},
      // Every window holds exactly one input cell: out = in (exclude) or in/8 (include).
      {.name = "3-D pads, exclude-pad",
       .in = {2, 2, 2}, .out = {2, 2, 2}, .kernel = {2, 2, 2}, .stride = {2, 2, 2},
       .pads_begin = {1, 1, 1}, .pads_end = {1, 1, 1}, .expected = {1, 2, 3, 4, 5, 6, 7, 8}},
      {.name = "3-D pads, include-pad",
       .in = {2, 2, 2}, .out = {2, 2, 2}, .kernel = {2, 2, 2}, .stride = {2, 2, 2},
       .pads_begin = {1, 1, 1}, .pads_end = {1, 1, 1}, .pads_in_avg = true,
       .expected = {0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1}},
      // Bins [0,2) [1,4) [3,5).
      {.name = "adaptive uneven bins I=5 O=3",
       .in = {5}, .out = {3}, .adaptive = true, .expected = {1.5, 3, 4.5}},
      // Bins [0,2) [1,3) [2,4).
      {.name = "adaptive overlapping bins I=4 O=3",
       .in = {4}, .out = {3}, .adaptive = true, .expected = {1.5, 2.5, 3.5}},
      // Bins [0,1) [0,1) [0,2) [1,2) [1,2).
      {.name = "adaptive output larger than input I=2 O=5",
       .in = {2}, .out = {5}, .adaptive = true, .expected = {1, 1, 1.5, 2, 2}},
      {.name = "adaptive 2-D",
       .in = {3, 3}, .out = {2, 2}, .adaptive = true, .expected = {3, 4, 6, 7}},
      // Input (d,h,w) = 1 + 6d + 2h + w; D and W collapse to one bin, H bins [0,2) [1,3).
      {.name = "adaptive 3-D",
       .in = {2, 3, 2}, .out = {1, 2, 1}, .adaptive = true, .expected = {5.5, 7.5}},
      // Non-representable averages check the single rounding: 10/3 and 17/3.
      {.name = "non-dyadic averages",
       .in = {4}, .out = {2}, .kernel = {3}, .stride = {1}, .expected = {10.0 / 3, 17.0 / 3},
       .input = {1, 4, 5, 8}},
  };
  // clang-format on
}

}  // namespace

TEST_CASE("avg_pool hand-checked cases", "[kernels][avg_pool]") {
  const auto c = GENERATE(from_range(hand_cases()));
  const ElementType type = GENERATE(from_range(std::begin(kFloatTypes), std::end(kFloatTypes)));
  const PoolGeometry g = geometry_of(c);
  INFO(c.name << " [" << irrun::to_string(type) << "] " << describe(g));

  std::vector<double> input = c.input;
  if (input.empty()) {
    input.resize(static_cast<std::size_t>(g.planes() * g.in_plane_size()));
    for (std::size_t i = 0; i < input.size(); ++i) input[i] = static_cast<double>(i + 1);
  }
  REQUIRE(c.expected.size() == static_cast<std::size_t>(g.planes() * g.out_plane_size()));

  // The oracle must agree with the hand-written values too, or the random tests mean nothing.
  const std::vector<double> oracle = irrun::testing::naive_avg_pool(g, input);
  CHECK(oracle == c.expected);

  Parallel serial(1), threaded(3);
  for (const Parallel* par : {&serial, &threaded}) {
    const std::vector<double> got = run_kernel(g, type, input, *par);
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("threads=" << par->threads() << " output " << i);
      CHECK(got[i] == round_to(type, c.expected[i]));
    }
  }
}

TEST_CASE("avg_pool cancellation keeps small terms (exact sum)", "[kernels][avg_pool]") {
  // 2^60 + 1 - 2^60: a plain double sum loses the 1 and returns 0; the exact average is 1/3.
  const HandCase c{.name = "cancel", .in = {3}, .out = {1}, .kernel = {3}, .stride = {1}};
  const PoolGeometry g = geometry_of(c);
  const std::vector<double> input = {0x1p60, 1, -0x1p60};
  Parallel par(1);
  for (ElementType type : {ElementType::f32, ElementType::f64}) {
    INFO(irrun::to_string(type));
    CHECK(run_kernel(g, type, input, par)[0] == round_to(type, 1.0 / 3));
  }
}

TEST_CASE("avg_pool f64 keeps sub-ulp terms of the sum", "[kernels][avg_pool]") {
  // Exact average (1 + 3*2^-53)/4 = 0.25 + 1.5*2^-54, halfway between two doubles spaced 2^-54.
  // A plain double sum rounds every 1 + 2^-53 back to 1 and returns 0.25, 1.5 ulp off; the
  // exact sum with a single final rounding gives the tie's even neighbour.
  const HandCase c{.name = "f64", .in = {4}, .out = {1}, .kernel = {4}, .stride = {1}};
  const PoolGeometry g = geometry_of(c);
  const double tiny = 0x1p-53;
  Parallel par(1);
  CHECK(run_kernel(g, ElementType::f64, {1, tiny, tiny, tiny}, par)[0] == 0.25 + 0x1p-53);
}

// f16 and bf16 round the exact average once. Its double can be a 16-bit midpoint that the
// average is just off, and rounding that double to even went the wrong way (a double rounding):
// bf16 values spanning more exponents than a double holds, summed as two doubles or, cancelling
// past 2^106, replayed exactly; an f16 window of 2^16 values; each average a tiny amount above
// (or, negated, below) a midpoint m, which rounds away from m's even neighbour.
TEST_CASE("avg_pool f16 and bf16 round the exact average once, not its double",
          "[kernels][avg_pool]") {
  using irrun::kernels::Kernels;
  struct Case {
    const char* name;
    ElementType type;
    std::vector<double> values;
    double want;  // the exact average's 16-bit value; m's even neighbour is on its other side
  };
  const double m5 = 5 * 0x1p-8;  // 5 * (1 + 2^-8) = 5 + m5: m between bf16's 1 and 1 + 2^-7
  std::vector<double> row(32766, 32768.0);  // f16: 32784 + 2^-40, m between 32768 and 32800
  row.insert(row.end(), 32767, 32800.0);
  row.insert(row.end(), {65504.0, 32832.0, 0x1p-24});
  const std::vector<Case> cases = {
      {"bf16, two doubles", ElementType::bf16, {5.0, m5, 0x1p-100, 0, 0}, 1 + 0x1p-7},
      {"bf16, replayed", ElementType::bf16, {0x1p60, 5.0, m5, 0x1p-100, -0x1p60}, 1 + 0x1p-7},
      {"f16, 2^16 values", ElementType::f16, row, 32800.0},
  };
  for (const auto& c : cases) {
    for (const double sign : {1.0, -1.0}) {
      INFO(c.name << (sign < 0 ? ", negated" : ""));
      PoolGeometry g;
      g.spatial_rank = 1;
      g.in = {1, 1, static_cast<std::int64_t>(c.values.size())};
      g.out = {1, 1, 1};
      g.kernel = {1, 1, g.in[2]};
      std::vector<double> values = c.values;
      for (double& v : values) v *= sign;
      const Tensor in = make_input(g, c.type, values);
      for (const Kernels k : {Kernels::best, Kernels::portable, Kernels::reference}) {
        INFO("kernels " << static_cast<int>(k));
        Tensor out = make_poisoned_output(g, c.type);
        irrun::kernels::avg_pool(in, out, g, Parallel(2), k);
        CHECK(load(out, 0) == sign * c.want);
      }
    }
  }
}

TEST_CASE("avg_pool rejects bad arguments", "[kernels][avg_pool]") {
  const HandCase c{.name = "x", .in = {4}, .out = {2}, .kernel = {2}, .stride = {2}};
  const PoolGeometry g = geometry_of(c);
  Parallel par(1);

  SECTION("unsupported element type") {
    const Tensor in = Tensor::zeros(ElementType::boolean, {1, 1, 4});
    Tensor out = Tensor::zeros(ElementType::boolean, {1, 1, 2});
    try {
      irrun::kernels::avg_pool(in, out, g, par);
      FAIL("no exception");
    } catch (const irrun::Error& e) {
      CHECK(e.code() == irrun::ExitCode::unsupported);
      CHECK_THAT(e.what(), Catch::Contains("boolean"));
    }
  }
  SECTION("type mismatch") {
    const Tensor in = Tensor::zeros(ElementType::f32, {1, 1, 4});
    Tensor out = Tensor::zeros(ElementType::f16, {1, 1, 2});
    CHECK_THROWS_AS(irrun::kernels::avg_pool(in, out, g, par), std::invalid_argument);
  }
  SECTION("shape mismatch") {
    const Tensor in = Tensor::zeros(ElementType::f32, {1, 1, 5});
    Tensor out = Tensor::zeros(ElementType::f32, {1, 1, 2});
    CHECK_THROWS_WITH(irrun::kernels::avg_pool(in, out, g, par),
                      Catch::Contains("[1,1,5]") && Catch::Contains("[1,1,4]"));
  }
  SECTION("invalid geometry") {
    PoolGeometry bad = g;
    bad.stride[2] = 0;
    const Tensor in = Tensor::zeros(ElementType::f32, {1, 1, 4});
    Tensor out = Tensor::zeros(ElementType::f32, {1, 1, 2});
    CHECK_THROWS_AS(irrun::kernels::avg_pool(in, out, bad, par), std::invalid_argument);
  }
}

// ---- Randomized differential test against the naive oracle ----

namespace {

using irrun::testing::SplitMix64;

PoolGeometry random_geometry(SplitMix64& rng, std::size_t rank, bool adaptive,
                             std::int64_t max_planes_factor = 3) {
  PoolGeometry g;
  g.batch = rng.range(1, 2);
  g.channels = rng.range(1, max_planes_factor);
  g.spatial_rank = rank;
  g.adaptive = adaptive;
  const std::int64_t max_in = rank == 3 ? 6 : rank == 2 ? 9 : 16;
  for (std::size_t a = 3 - rank; a < 3; ++a) {
    g.in[a] = rng.range(1, max_in);
    if (adaptive) {
      g.out[a] = rng.range(1, max_in + 2);  // may exceed the input
      continue;
    }
    std::int64_t kd = 0;
    do {
      g.kernel[a] = rng.range(1, 4);
      g.dilation[a] = rng.coin() ? 1 : rng.range(2, 3);
      g.stride[a] = rng.range(1, 4);
      g.pad_begin[a] = rng.coin() ? 0 : rng.range(1, 3);
      g.pad_end[a] = rng.coin() ? 0 : rng.range(1, 3);
      kd = g.dilation[a] * (g.kernel[a] - 1) + 1;
    } while (kd > g.in[a] + g.pad_begin[a] + g.pad_end[a]);
    // out = floor_or_ceil((in + pb + pe - Kd) / s) + 1
    const std::int64_t span = g.in[a] + g.pad_begin[a] + g.pad_end[a] - kd;
    g.out[a] = (rng.coin() ? (span + g.stride[a] - 1) / g.stride[a] : span / g.stride[a]) + 1;
  }
  g.pads_in_avg = !adaptive && rng.coin();
  return g;
}

// A random value exactly representable in `type`, drawn so that every window sum is exact in
// the oracle's 64-bit significand (all values are multiples of 2^-39 below 2^17, or f16).
double random_value(SplitMix64& rng, ElementType type) {
  if (rng.range(0, 15) == 0) return rng.coin() ? 0.0 : -0.0;
  const double sign = rng.coin() ? -1.0 : 1.0;
  switch (type) {
    case ElementType::f32: {  // 24-bit mantissa, exponent -16..16
      const auto m = static_cast<double>((rng.next() >> 40) | (1ull << 23));
      return sign * std::ldexp(m, static_cast<int>(rng.range(-16, 16)) - 23);
    }
    case ElementType::f64: {  // 53-bit mantissa, value in [2^-16, 2^17)
      const auto m = static_cast<double>((rng.next() >> 11) | (1ull << 52));
      return sign * std::ldexp(m, static_cast<int>(rng.range(-16, 16)) - 52);
    }
    case ElementType::f16: {  // any finite f16 pattern, subnormals included
      std::uint16_t bits;
      do bits = static_cast<std::uint16_t>(rng.next());
      while ((bits & 0x7C00) == 0x7C00);
      return irrun::f16_bits_to_double(bits);
    }
    case ElementType::bf16: {  // 8-bit mantissa, exponent -31..16
      const auto m = static_cast<double>((rng.next() >> 57) | (1ull << 7));
      return sign * std::ldexp(m, static_cast<int>(rng.range(-31, 16)) - 7);
    }
    default:
      FAIL("not a float type");
      return 0;
  }
}

std::vector<double> random_input(SplitMix64& rng, const PoolGeometry& g, ElementType type) {
  std::vector<double> v(static_cast<std::size_t>(g.planes() * g.in_plane_size()));
  for (double& x : v) x = random_value(rng, type);
  return v;
}

std::string coordinates(const PoolGeometry& g, std::size_t index) {
  auto i = static_cast<std::int64_t>(index);
  const std::int64_t w = i % g.out[2];
  i /= g.out[2];
  const std::int64_t h = i % g.out[1];
  i /= g.out[1];
  const std::int64_t d = i % g.out[0];
  const std::int64_t plane = i / g.out[0];
  return "(plane " + std::to_string(plane) + ", d " + std::to_string(d) + ", h " +
         std::to_string(h) + ", w " + std::to_string(w) + ")";
}

// Kernel output vs the oracle: f32/f64 within one ulp of the (exact) oracle average,
// f16/bf16 equal to it rounded once. Returns the number of mismatches, reporting the first few.
int compare_with_oracle(const PoolGeometry& g, ElementType type, const std::vector<double>& got,
                        const std::vector<double>& oracle) {
  int mismatches = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    bool ok = false;
    if (type == ElementType::f32 || type == ElementType::f64) {
      const double want = round_to(type, oracle[i]);
      ok = !std::isnan(got[i]) && std::abs(ordinal(type, got[i]) - ordinal(type, want)) <= 1;
    } else {
      ok = std::bit_cast<std::uint64_t>(got[i]) ==
           std::bit_cast<std::uint64_t>(round_to(type, oracle[i]));
    }
    if (!ok && ++mismatches <= 5) {
      std::ostringstream os;
      os.precision(17);
      os << irrun::to_string(type) << " " << describe(g) << " at " << coordinates(g, i)
         << ": kernel " << got[i] << ", oracle " << oracle[i];
      FAIL_CHECK(os.str());
    }
  }
  return mismatches;
}

}  // namespace

TEST_CASE("avg_pool matches the naive oracle on random geometries", "[kernels][avg_pool]") {
  SplitMix64 rng(0x1AF0C0FFEEull);
  Parallel par(2);
  int problems = 0;
  for (int iter = 0; iter < 150; ++iter) {
    for (std::size_t rank = 1; rank <= 3; ++rank) {
      for (bool adaptive : {false, true}) {
        if (adaptive && iter % 2) continue;  // window pooling has more rules: test it more
        const PoolGeometry g = random_geometry(rng, rank, adaptive);
        for (ElementType type : kFloatTypes) {
          const std::vector<double> input = random_input(rng, g, type);
          const std::vector<double> got = run_kernel(g, type, input, par);
          const std::vector<double> oracle = irrun::testing::naive_avg_pool(g, input);
          INFO(irrun::to_string(type) << " " << describe(g));
          CHECK(compare_with_oracle(g, type, got, oracle) == 0);
          ++problems;
        }
      }
    }
  }
  CHECK(problems == 150 * 3 * 4 + 75 * 3 * 4);
}

TEST_CASE("avg_pool output is bit-identical for any thread count", "[kernels][avg_pool]") {
  SplitMix64 rng(0xDE7E12A1ull);
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(3), Parallel(7)};
  for (int iter = 0; iter < 40; ++iter) {
    const std::size_t rank = static_cast<std::size_t>(iter % 3) + 1;
    // Up to 2 x 8 planes so that 7 threads get uneven chunks.
    const PoolGeometry g = random_geometry(rng, rank, iter % 4 == 3, 8);
    for (ElementType type : kFloatTypes) {
      INFO(irrun::to_string(type) << " " << describe(g));
      const Tensor in = make_input(g, type, random_input(rng, g, type));
      std::vector<Tensor> outs;
      for (const Parallel& par : pools) {
        outs.push_back(make_poisoned_output(g, type));
        irrun::kernels::avg_pool(in, outs.back(), g, par);
      }
      for (std::size_t k = 1; k < outs.size(); ++k) {
        INFO("threads " << pools[k].threads() << " vs 1");
        CHECK(std::memcmp(outs[k].buffer.data(), outs[0].buffer.data(), outs[0].byte_size()) == 0);
      }
    }
  }
}

// avg_pool runs a first spatial axis of more than 2^14 output rows in bands of that many, each a
// tensor of its own (its per-row tables passed a run's memory budget on long sequences), and
// wide rows in tiles of 2^14 output columns, copied. Each
// output is its window's alone, so the bits are those of one call over the whole tensor: the
// fast f32 kernel's, and the reference kernel's for the others and with Kernels::reference.
// The geometries cut windows at band edges, start and end in padding, and end with windows
// past the input (bands of no input rows).
TEST_CASE("avg_pool in bands and tiles along long axes gives the bits of one call",
          "[kernels][avg_pool]") {
  using irrun::kernels::Kernels;
  struct Long {
    std::size_t rank;
    std::array<std::int64_t, 3> in, kernel, stride, dilation, pad_begin, pad_end;
    bool pads_in_avg;
  };
  const Long cases[] = {
      {1, {1, 1, 50001}, {1, 1, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1}, {0, 0, 1}, false},
      {1, {1, 1, 70003}, {1, 1, 5}, {1, 1, 2}, {1, 1, 2}, {0, 0, 4}, {0, 0, 4}, true},
      {1, {1, 1, 40000}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {0, 0, 2}, {0, 0, 0}, false},
      {2, {1, 40001, 5}, {1, 3, 2}, {1, 2, 1}, {1, 1, 1}, {0, 1, 0}, {0, 1, 1}, false},
      {3, {20000, 2, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, false},
      // A long W under 1 x K windows: rows of a 1-D pooling, in bands along W.
      {2, {1, 3, 40001}, {1, 1, 3}, {1, 1, 2}, {1, 1, 1}, {0, 0, 1}, {0, 0, 1}, true},
      {3, {2, 2, 30000}, {1, 1, 4}, {1, 1, 1}, {1, 1, 2}, {0, 0, 3}, {0, 0, 0}, false},
      // ... but not where H pools too: W stays whole up to 2^16 input columns (2^18 in f32),
      // and goes in tiles past that, copied (bands.hpp).
      {2, {1, 2, 20000}, {1, 2, 3}, {1, 1, 1}, {1, 1, 1}, {0, 0, 1}, {0, 0, 1}, false},
      {2, {1, 3, 262203}, {1, 3, 3}, {1, 1, 2}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}, true},
      {3, {2, 2, 70001}, {1, 2, 3}, {1, 1, 1}, {1, 1, 2}, {0, 0, 2}, {0, 0, 0}, false},
      // A pads_end of whole bands past the input (found by a review: a negative band pad),
      // counted or not, and an empty input axis (a division by its 0 rows).
      {1, {1, 1, 10}, {1, 1, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 40000}, true},
      {1, {1, 1, 10}, {1, 1, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 40000}, false},
      {1, {1, 1, 0}, {1, 1, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 10000}, {0, 0, 10000}, true},
  };
  SplitMix64 rng(0xBA4D5ull);
  const Parallel par(2);
  for (const Long& c : cases) {
    PoolGeometry g;
    g.batch = 1;
    g.channels = 2;
    g.spatial_rank = c.rank;
    g.in = c.in;
    g.kernel = c.kernel;
    g.stride = c.stride;
    g.dilation = c.dilation;
    g.pad_begin = c.pad_begin;
    g.pad_end = c.pad_end;
    g.pads_in_avg = c.pads_in_avg;
    for (std::size_t a = 0; a < 3; ++a)  // floor mode, and three windows past the long axis' end
      g.out[a] = (g.in[a] + g.pad_begin[a] + g.pad_end[a] - (g.kernel[a] - 1) * g.dilation[a] - 1) /
                     g.stride[a] +
                 1 + (g.in[a] > (1 << 14) ? 3 : 0);
    REQUIRE(std::max(g.out[3 - c.rank], g.out[2]) > (1 << 14));
    for (ElementType type : {ElementType::f32, ElementType::f64, ElementType::f16,
                             ElementType::bf16, ElementType::i32}) {
      INFO(irrun::to_string(type) << " " << describe(g));
      Tensor in = Tensor::zeros(type, shape_of(g, g.in));
      if (type == ElementType::i32) {
        for (std::size_t i = 0; i < in.element_count(); ++i)
          in.mutable_data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.next() % 2001) - 1000;
      } else {
        for (std::size_t i = 0; i < in.element_count(); ++i)
          store(in, i, round_to(type, random_value(rng, type)));
      }
      Tensor whole = irrun::testing::poisoned(type, shape_of(g, g.out));
      if (type != ElementType::f32 || !irrun::kernels::avg_pool_fast(in, whole, g, par))
        irrun::kernels::avg_pool_reference(in, whole, g, par);
      for (const Kernels k : {Kernels::best, Kernels::reference}) {
        INFO("kernels " << static_cast<int>(k));
        Tensor banded = irrun::testing::poisoned(type, shape_of(g, g.out), 0xA5);
        irrun::kernels::avg_pool(in, banded, g, par, k);
        if (k == Kernels::reference && type == ElementType::f32) {
          Tensor reference = irrun::testing::poisoned(type, shape_of(g, g.out));
          irrun::kernels::avg_pool_reference(in, reference, g, par);
          CHECK(irrun::testing::same_bits(banded, reference));
        } else {
          CHECK(irrun::testing::same_bits(banded, whole));
        }
      }
    }
  }
}

// ---- Integer element types: exact sums, i8/u8 round to nearest even, wider truncate ----

namespace {

using irrun::testing::i128;

const ElementType kIntTypes[] = {ElementType::i8,  ElementType::u8,  ElementType::i16,
                                 ElementType::u16, ElementType::i32, ElementType::u32,
                                 ElementType::i64, ElementType::u64};

using irrun::testing::with_int_type;

bool rounds_to_nearest(ElementType t) {
  return t == ElementType::i8 || t == ElementType::u8;
}

std::string text(i128 v) {
  // Test values stay far from -2^127, so the magnitude fits.
  const bool negative = v < 0;
  i128 m = negative ? -v : v;
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(m % 10)));
    m /= 10;
  } while (m != 0);
  if (negative) s.insert(s.begin(), '-');
  return s;
}

std::vector<i128> run_int_kernel(const PoolGeometry& g, ElementType type,
                                 const std::vector<i128>& input, const Parallel& par) {
  Tensor in = Tensor::zeros(type, shape_of(g, g.in));
  Tensor out = Tensor::zeros(type, shape_of(g, g.out));
  REQUIRE(in.element_count() == input.size());
  std::vector<i128> got(out.element_count());
  with_int_type(type, [&](auto zero) {
    using T = decltype(zero);
    for (std::size_t i = 0; i < input.size(); ++i) {
      REQUIRE(input[i] >= std::numeric_limits<T>::min());
      REQUIRE(input[i] <= std::numeric_limits<T>::max());
      in.mutable_data<T>()[i] = static_cast<T>(input[i]);
    }
    // Poison: a value no test expects, so an unwritten output is caught.
    for (std::size_t i = 0; i < got.size(); ++i) out.mutable_data<T>()[i] = T{99};
    irrun::kernels::avg_pool(in, out, g, par);
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = out.data<T>()[i];
  });
  return got;
}

struct IntCase {
  HandCase geometry;  // name and geometry; its input/expected are unused
  ElementType type;
  std::vector<i128> input;
  std::vector<i128> expected;
};

constexpr i128 kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr i128 kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr i128 kU64Max = std::numeric_limits<std::uint64_t>::max();

std::vector<IntCase> int_cases() {
  using E = ElementType;
  // Pairs pooled by K=2, s=2: each output averages two neighbours.
  const HandCase pairs4{.name = "pairs", .in = {4}, .out = {2}, .kernel = {2}, .stride = {2}};
  const HandCase pairs8{.name = "pairs", .in = {8}, .out = {4}, .kernel = {2}, .stride = {2}};
  const HandCase pairs16{.name = "pairs", .in = {16}, .out = {8}, .kernel = {2}, .stride = {2}};
  const HandCase pads{.name = "K=2 s=1 pads 1/1, exclude-pad",
                      .in = {3},
                      .out = {4},
                      .kernel = {2},
                      .stride = {1},
                      .pads_begin = {1},
                      .pads_end = {1}};
  HandCase pads_in = pads;
  pads_in.name = "K=2 s=1 pads 1/1, include-pad";
  pads_in.pads_in_avg = true;
  // Bins [0,2) [1,4) [3,5).
  const HandCase adaptive{.name = "adaptive I=5 O=3", .in = {5}, .out = {3}, .adaptive = true};
  // Windows [-1,2) [1,4) [3,6) [5,8): the last one overhangs pads_end by one cell.
  const HandCase full_kernel{.name = "include-pad divides by the full kernel",
                             .in = {6},
                             .out = {4},
                             .kernel = {3},
                             .stride = {2},
                             .pads_begin = {1},
                             .pads_end = {1},
                             .pads_in_avg = true};
  const HandCase triples{.name = "K=3 s=3", .in = {6}, .out = {2}, .kernel = {3}, .stride = {3}};
  const HandCase beyond{
      .name = "window beyond the input is 0", .in = {5}, .out = {3}, .kernel = {1}, .stride = {3}};
  // 2x2 input, one 2x2 window with a pad row: include-pad divides by 4, exclude-pad by 2.
  const HandCase pad2d{.name = "2-D pad row",
                       .in = {1, 2},
                       .out = {1, 1},
                       .kernel = {2, 2},
                       .stride = {1, 1},
                       .pads_begin = {1, 0},
                       .pads_end = {0, 0},
                       .pads_in_avg = true};
  // clang-format off
  return {
      // -2.5 -> -2, 2.5 -> 2, 3.5 -> 4, -3.5 -> -4, 1.5 -> 2, -1.5 -> -2, 0.5 -> 0, -0.5 -> 0.
      {pairs16, E::i8, {-2, -3, 2, 3, 3, 4, -3, -4, 1, 2, -1, -2, 0, 1, 0, -1},
       {-2, 2, 4, -4, 2, -2, 0, 0}},
      // 4/3 -> 1, -5/3 -> -2 (nearest, not ties).
      {triples, E::i8, {1, 1, 2, -1, -2, -2}, {1, -2}},
      // The same windows truncate for i32: -2.5 -> -2, 2.5 -> 2, 3.5 -> 3, -3.5 -> -3, ...
      {pairs16, E::i32, {-2, -3, 2, 3, 3, 4, -3, -4, 1, 2, -1, -2, 0, 1, 0, -1},
       {-2, 2, 3, -3, 1, -1, 0, 0}},
      {triples, E::i32, {1, 1, 2, -1, -2, -2}, {1, -1}},
      // -7/2 -> -3 (toward zero, not floor), 7/2 -> 3, -9/2 -> -4, -1/2 -> 0.
      {pairs8, E::i32, {-7, 0, 7, 0, -5, -4, -1, 0}, {-3, 3, -4, 0}},
      {pairs8, E::i16, {-7, 0, 7, 0, -5, -4, -1, 0}, {-3, 3, -4, 0}},
      {pairs8, E::i64, {-7, 0, 7, 0, -5, -4, -1, 0}, {-3, 3, -4, 0}},
      // u8 ties to even: 2.5 -> 2, 3.5 -> 4, 0.5 -> 0, 1.5 -> 2, 254.5 -> 254, 255.
      {HandCase{.name = "pairs", .in = {12}, .out = {6}, .kernel = {2}, .stride = {2}}, E::u8,
       {2, 3, 3, 4, 0, 1, 1, 2, 254, 255, 255, 255}, {2, 4, 0, 2, 254, 255}},
      // u16/u32 truncate: 3.5 -> 3, 65534.5 -> 65534.
      {pairs4, E::u16, {3, 4, 65535, 65534}, {3, 65534}},
      {pairs4, E::u32, {3, 4, 4294967295, 4294967294}, {3, 4294967294}},
      // INT8_MIN: -128, -127.5 -> -128 (even), 127, -0.5 -> 0.
      {pairs8, E::i8, {-128, -128, -128, -127, 127, 127, -128, 127}, {-128, -128, 127, 0}},
      // i64 extremes: sums beyond 64 bits. MAX - 0.5 -> MAX - 1, MIN, -0.5 -> 0.
      {pairs8, E::i64, {kI64Max, kI64Max, kI64Max, kI64Max - 1, kI64Min, kI64Min, kI64Min, kI64Max},
       {kI64Max, kI64Max - 1, kI64Min, 0}},
      // (3 MIN + 1)/3 = MIN + 1/3 truncates toward zero to MIN + 1.
      {triples, E::i64, {kI64Max, kI64Max, kI64Max, kI64Min, kI64Min, kI64Min + 1},
       {kI64Max, kI64Min + 1}},
      {pairs4, E::u64, {kU64Max, kU64Max, kU64Max, kU64Max - 1}, {kU64Max, kU64Max - 1}},
      // u8 255s: include-pad 127.5 -> 128 (even), exclude-pad keeps 255.
      {pads_in, E::u8, {255, 255, 255}, {128, 255, 255, 128}},
      {pads, E::u8, {255, 255, 255}, {255, 255, 255, 255}},
      // i8 pads: include 1.5 -> 2, 3.5 -> 4, 4.5 -> 4, 2.5 -> 2; exclude 3, 3.5 -> 4, 4.5 -> 4, 5.
      {pads_in, E::i8, {3, 4, 5}, {2, 4, 4, 2}},
      {pads, E::i8, {3, 4, 5}, {3, 4, 4, 5}},
      {pads_in, E::i8, {-3, -4, -5}, {-2, -4, -4, -2}},
      // i32/i64 pads truncate: include -1.5 -> -1, -3.5 -> -3, -4.5 -> -4, -2.5 -> -2.
      {pads_in, E::i32, {-3, -4, -5}, {-1, -3, -4, -2}},
      {pads, E::i32, {-3, -4, -5}, {-3, -3, -4, -5}},
      // (MAX - 7)/2 exactly, MAX/2 -> 2^62 - 1, -7/2 -> -3.
      {pads_in, E::i64, {-7, kI64Max, 0}, {-3, (kI64Max - 7) / 2, kI64Max / 2, 0}},
      {pad2d, E::i8, {-3, -4}, {-2}},   // -7/4 -> -2
      {pad2d, E::i32, {-3, -4}, {-1}},  // -7/4 -> -1
      // Adaptive: 1.5, 11/3, -0.5.
      {adaptive, E::i8, {1, 2, 4, 5, -6}, {2, 4, 0}},
      {adaptive, E::i32, {1, 2, 4, 5, -6}, {1, 3, 0}},
      {adaptive, E::u8, {255, 254, 255, 254, 0}, {254, 254, 127}},  // 254.5, 763/3, 127
      // Include-pad divides by the full K=3, the ceil overhang past pads_end included:
      // -3/3, -9/3, -17/3, -8/3 -> i8 -1, -3, -6, -3; i32 -1, -3, -5, -2.
      {full_kernel, E::i8, {-1, -2, -3, -4, -5, -8}, {-1, -3, -6, -3}},
      {full_kernel, E::i32, {-1, -2, -3, -4, -5, -8}, {-1, -3, -5, -2}},
      {beyond, E::i32, {-1, -2, -3, -4, -5}, {-1, -4, 0}},
      {beyond, E::u8, {1, 2, 3, 4, 5}, {1, 4, 0}},
  };
  // clang-format on
}

}  // namespace

TEST_CASE("avg_pool integer hand-checked cases", "[kernels][avg_pool][int]") {
  const auto c = GENERATE(from_range(int_cases()));
  const PoolGeometry g = geometry_of(c.geometry);
  INFO(c.geometry.name << " [" << irrun::to_string(c.type) << "] " << describe(g));
  REQUIRE(c.expected.size() == static_cast<std::size_t>(g.planes() * g.out_plane_size()));
  const auto oracle = irrun::testing::naive_avg_pool_int(g, c.input, rounds_to_nearest(c.type));
  Parallel serial(1), threaded(3);
  for (std::size_t i = 0; i < c.expected.size(); ++i) {
    INFO("output " << i << ": expected " << text(c.expected[i]) << ", oracle " << text(oracle[i]));
    CHECK(oracle[i] == c.expected[i]);
  }
  for (const Parallel* par : {&serial, &threaded}) {
    const auto got = run_int_kernel(g, c.type, c.input, *par);
    for (std::size_t i = 0; i < got.size(); ++i) {
      INFO("threads=" << par->threads() << " output " << i << ": got " << text(got[i])
                      << ", expected " << text(c.expected[i]));
      CHECK(got[i] == c.expected[i]);
    }
  }
}

TEST_CASE("avg_pool integer kernel volume beyond 2^120 is rejected", "[kernels][avg_pool][int]") {
  // Only a hand-made geometry can get here: shape inference bounds kernel dims by 2^40. 2^120
  // itself is fine: one input cell of -7 over the full kernel truncates to 0.
  PoolGeometry g;
  g.spatial_rank = 3;
  g.kernel = {std::int64_t{1} << 40, std::int64_t{1} << 40, std::int64_t{1} << 40};
  g.pads_in_avg = true;
  g.pad_end = g.kernel;
  Tensor in = Tensor::zeros(ElementType::i32, {1, 1, 1, 1, 1});
  in.mutable_data<std::int32_t>()[0] = -7;
  Tensor out = Tensor::zeros(ElementType::i32, {1, 1, 1, 1, 1});
  out.mutable_data<std::int32_t>()[0] = 99;
  irrun::kernels::avg_pool(in, out, g, Parallel(1));
  CHECK(out.data<std::int32_t>()[0] == 0);
  for (const std::int64_t last : {(std::int64_t{1} << 40) + 1, std::int64_t{1} << 62}) {
    g.kernel = {std::int64_t{1} << 62, std::int64_t{1} << 62, last};
    g.pad_end = g.kernel;
    CHECK_THROWS_WITH(irrun::kernels::avg_pool(in, out, g, Parallel(1)),
                      Catch::Contains("kernel volume exceeds 2^120"));
  }
}

// Kernels::reference runs the reference kernel, the others the fast kernel at their ISA. On f32
// AvgPool the two may differ by one ulp: here the first 7x7 window sums exactly (multiples of
// 2^-24 below 128) to 49 * (1.5 + 3 * 2^-24), so its average is the midpoint of 1.5 + 2^-23 and
// 1.5 + 2^-22. The reference divides exactly and the tie goes to the even 1.5 + 2^-22; the fast
// kernel scales by fl(fl(1/7) * fl(1/7)), just under 1/49, and rounds down to 1.5 + 2^-23. Both
// are within one ulp. MaxPool gives the same bits either way.
TEST_CASE("avg_pool and max_pool run the kernels asked for", "[kernels][avg_pool]") {
  using irrun::kernels::Kernels;
  PoolGeometry g;
  g.spatial_rank = 2;
  g.in = {1, 7, 8};
  g.out = {1, 1, 2};
  g.kernel = {1, 7, 7};
  Tensor in = Tensor::zeros(ElementType::f32, {1, 1, 7, 8});
  float* x = in.mutable_data<float>();
  std::fill(x, x + 56, 1.5f);
  x[0] = 2.5f;
  x[1] = 1.5f + 0x1p-17f + 0x1p-20f + 0x1p-23f;
  x[2] = 0.5f + 0x1p-24f;
  x[7] = 3.0f;  // the second window's only: the greatest, for MaxPool
  for (const Kernels k : {Kernels::best, Kernels::avx2, Kernels::portable, Kernels::reference}) {
    INFO("kernels " << static_cast<int>(k));
    Tensor out = Tensor::zeros(ElementType::f32, {1, 1, 1, 2});
    irrun::kernels::avg_pool(in, out, g, Parallel(1), k);
    INFO(std::hexfloat << out.data<float>()[0]);
    CHECK(out.data<float>()[0] == (k == Kernels::reference ? 1.5f + 0x1p-22f : 1.5f + 0x1p-23f));
    Tensor values = Tensor::zeros(ElementType::f32, {1, 1, 1, 2});
    Tensor indices = Tensor::zeros(ElementType::i64, {1, 1, 1, 2});
    irrun::kernels::max_pool(in, values, &indices, g, Parallel(1), k);
    CHECK(values.data<float>()[0] == 2.5f);
    CHECK(indices.data<std::int64_t>()[0] == 0);
    CHECK(values.data<float>()[1] == 3.0f);
    CHECK(indices.data<std::int64_t>()[1] == 7);
  }
}

// OpenVINO's adaptive kernels assert on an empty bin only when they compute one: an empty
// output over an input axis of 0 runs, a non-empty one is refused.
TEST_CASE("adaptive kernels over an input axis of 0", "[kernels][avg_pool]") {
  using irrun::kernels::Kernels;
  const auto adaptive = [](std::int64_t n, std::int64_t c, std::array<std::int64_t, 3> in,
                           std::array<std::int64_t, 3> out) {
    PoolGeometry g;
    g.batch = n;
    g.channels = c;
    g.spatial_rank = 3;
    g.adaptive = true;
    g.in = in;
    g.out = out;
    return g;
  };
  const Parallel par(2);
  for (const auto type : {ElementType::f32, ElementType::f16, ElementType::f64, ElementType::i8}) {
    for (const Kernels k : {Kernels::best, Kernels::avx2, Kernels::portable, Kernels::reference}) {
      for (const PoolGeometry& g :
           {adaptive(0, 2, {3, 0, 4}, {2, 2, 2}), adaptive(1, 0, {0, 3, 4}, {2, 2, 2}),
            adaptive(1, 2, {3, 0, 4}, {2, 2, 0})}) {
        INFO("type " << irrun::to_string(type) << ", kernels " << static_cast<int>(k) << ", n "
                     << g.batch << ", c " << g.channels << ", out " << g.out[0] << "x" << g.out[1]
                     << "x" << g.out[2]);
        const Tensor in = Tensor::zeros(type, shape_of(g, g.in));
        Tensor out = Tensor::zeros(type, shape_of(g, g.out));
        Tensor values = Tensor::zeros(type, shape_of(g, g.out));
        Tensor indices = Tensor::zeros(ElementType::i32, shape_of(g, g.out));
        CHECK_NOTHROW(irrun::kernels::avg_pool(in, out, g, par, k));
        CHECK_NOTHROW(irrun::kernels::max_pool(in, values, &indices, g, par, k));
      }
      const PoolGeometry g = adaptive(1, 2, {3, 0, 4}, {2, 2, 2});
      const Tensor in = Tensor::zeros(type, shape_of(g, g.in));
      Tensor out = Tensor::zeros(type, shape_of(g, g.out));
      CHECK_THROWS_WITH(irrun::kernels::avg_pool(in, out, g, par, k),
                        Catch::Contains("adaptive pooling of an empty axis"));
      CHECK_THROWS_WITH(irrun::kernels::max_pool(in, out, nullptr, g, par, k),
                        Catch::Contains("adaptive pooling of an empty axis"));
    }
  }
}

// pads_in_avg with a kernel volume V past 2^53 that is not a double (three dims of 2^17 to 2^20,
// one input cell under the window): the average x / V. Dividing by V rounded to a double left
// f64 results up to ~1.5 ulp off; they must be faithful, one of the two values of the type around
// x / V. The oracle is long double: its 64 bits hold V < 2^60 exactly, and the quotient to 2^-64.
TEST_CASE("avg_pool divides by a kernel volume past 2^53 that is not a double",
          "[kernels][avg_pool]") {
  SplitMix64 rng(53);
  PoolGeometry g;
  g.spatial_rank = 3;
  g.pads_in_avg = true;
  const auto faithful = [](auto got, long double exact) {
    using T = decltype(got);
    const T near = static_cast<T>(exact);
    const T other = near > exact   ? std::nextafter(near, -std::numeric_limits<T>::infinity())
                    : near < exact ? std::nextafter(near, std::numeric_limits<T>::infinity())
                                   : near;
    return got == near || got == other;
  };
  int past_2_53 = 0;
  for (int i = 0; i < 3000; ++i) {
    std::int64_t volume = 1;
    for (std::size_t a = 0; a < 3; ++a) {
      g.kernel[a] = rng.range(std::int64_t{1} << 17, std::int64_t{1} << 20);
      g.pad_end[a] = g.kernel[a] - 1;
      volume *= g.kernel[a];
    }
    if (volume > (std::int64_t{1} << 53) &&
        static_cast<std::int64_t>(static_cast<double>(volume)) != volume)
      ++past_2_53;
    const double mantissa = 1.0 + static_cast<double>(rng.next() >> 12) * 0x1p-52;
    const double x =
        std::ldexp(rng.next() % 2 ? mantissa : -mantissa, static_cast<int>(rng.range(-60, 60)));
    INFO("kernel " << g.kernel[0] << "x" << g.kernel[1] << "x" << g.kernel[2] << ", x "
                   << std::hexfloat << x);
    for (const ElementType type : {ElementType::f64, ElementType::f32}) {
      Tensor in = Tensor::zeros(type, {1, 1, 1, 1, 1});
      Tensor out = Tensor::zeros(type, {1, 1, 1, 1, 1});
      if (type == ElementType::f64) {
        in.mutable_data<double>()[0] = x;
        irrun::kernels::avg_pool(in, out, g, Parallel(1));
        CHECK(faithful(out.data<double>()[0], static_cast<long double>(x) / volume));
      } else {
        in.mutable_data<float>()[0] = static_cast<float>(x);
        irrun::kernels::avg_pool(in, out, g, Parallel(1));
        CHECK(faithful(out.data<float>()[0],
                       static_cast<long double>(static_cast<float>(x)) / volume));
      }
    }
  }
  CHECK(past_2_53 > 2000);
}

namespace {

// A value of the type: 1 in 8 its min or max, 1 in 8 any value, else small (ties are common).
i128 random_int(SplitMix64& rng, ElementType type) {
  i128 v = 0;
  with_int_type(type, [&](auto zero) {
    using T = decltype(zero);
    using L = std::numeric_limits<T>;
    const auto kind = rng.range(0, 7);
    if (kind == 0)
      v = rng.coin() ? L::max() : L::min();
    else if (kind == 1)
      v = static_cast<T>(rng.next());
    else
      v = L::is_signed ? rng.range(-20, 20) : rng.range(0, 40);
  });
  return v;
}

}  // namespace

TEST_CASE("avg_pool integers match the exact oracle for any thread count",
          "[kernels][avg_pool][int]") {
  SplitMix64 rng(0x1A7E6E25ull);
  const Parallel pools[] = {Parallel(1), Parallel(2), Parallel(3)};
  int compared = 0;
  for (int iter = 0; iter < 60; ++iter) {
    for (std::size_t rank = 1; rank <= 3; ++rank) {
      for (bool adaptive : {false, true}) {
        if (adaptive && iter % 2) continue;
        const PoolGeometry g = random_geometry(rng, rank, adaptive, 4);
        for (ElementType type : kIntTypes) {
          std::vector<i128> input(static_cast<std::size_t>(g.planes() * g.in_plane_size()));
          for (auto& x : input) x = random_int(rng, type);
          const auto oracle = irrun::testing::naive_avg_pool_int(g, input, rounds_to_nearest(type));
          for (const Parallel& par : pools) {
            const auto got = run_int_kernel(g, type, input, par);
            std::size_t bad = 0;
            while (bad < got.size() && got[bad] == oracle[bad]) ++bad;
            if (bad < got.size())
              FAIL_CHECK(irrun::to_string(type)
                         << " " << describe(g) << " threads " << par.threads() << " at "
                         << coordinates(g, bad) << ": kernel " << text(got[bad]) << ", oracle "
                         << text(oracle[bad]));
            ++compared;
          }
        }
      }
    }
  }
  CHECK(compared == (60 * 3 + 30 * 3) * 8 * 3);
}

// Random bf16 windows whose exact average is a bf16 midpoint m plus a tiny rest of either sign,
// or m itself: m * n split into two bf16 values, the rest far below them (past a double's 53
// bits from them), sometimes a cancelling pair far above (past the two-double sum's 2^106:
// replayed), zeros, in a random order; negated half the time. The average rounded once is m's
// neighbour on the rest's side, or m's even neighbour for no rest, on every kernel path.
TEST_CASE("avg_pool bf16 averages just off a midpoint round to its side on every path",
          "[kernels][avg_pool]") {
  using irrun::kernels::Kernels;
  SplitMix64 rng(63);
  for (int iter = 0; iter < 60; ++iter) {
    const std::int64_t n = rng.range(4, 24), outputs = rng.range(1, 40);
    PoolGeometry g;
    g.spatial_rank = 1;
    g.in = {1, 1, n * outputs};
    g.out = {1, 1, outputs};
    g.kernel = {1, 1, n};
    g.stride = {1, 1, n};
    std::vector<double> values;
    std::vector<double> want;
    for (std::int64_t o = 0; o < outputs; ++o) {
      const int e = static_cast<int>(rng.range(-40, 40));
      const std::int64_t j = rng.range(0, 127);  // m = (256 + 2j + 1) * 2^(e - 8)
      const double unit = std::ldexp(1.0, e - 8);
      const std::int64_t whole = (257 + 2 * j) * n;  // m * n / unit, below 2^15
      const std::int64_t high = whole >> 7 << 7;     // 8 significant bits at most, as the rest
      const int side = static_cast<int>(rng.range(-1, 1));
      std::vector<double> window = {
          static_cast<double>(high) * unit, static_cast<double>(whole - high) * unit,
          side * std::ldexp(1.0, e - static_cast<int>(rng.range(50, 70)))};
      if (n >= 5 && rng.coin()) {  // room for the pair
        const double far = std::ldexp(1.0, e + static_cast<int>(rng.range(50, 80)));
        window.insert(window.end(), {far, -far});
      }
      window.resize(static_cast<std::size_t>(n), 0.0);
      for (std::size_t k = window.size() - 1; k > 0; --k)
        std::swap(window[k],
                  window[static_cast<std::size_t>(rng.range(0, static_cast<std::int64_t>(k)))]);
      const double sign = rng.coin() ? 1.0 : -1.0;
      for (const double v : window) values.push_back(sign * v);
      const double below = static_cast<double>(256 + 2 * j) * unit;  // even when j is
      const double nearest = side > 0                 ? below + 2 * unit
                             : side < 0 || j % 2 == 0 ? below
                                                      : below + 2 * unit;
      want.push_back(sign * nearest);
    }
    const Tensor in = make_input(g, ElementType::bf16, values);
    for (const Kernels k : {Kernels::best, Kernels::portable, Kernels::reference}) {
      Tensor out = make_poisoned_output(g, ElementType::bf16);
      irrun::kernels::avg_pool(in, out, g, Parallel(2), k);
      const auto got = read_all(out);
      for (std::size_t o = 0; o < got.size(); ++o) {
        INFO("iteration " << iter << ", n " << n << ", kernels " << static_cast<int>(k)
                          << ", output " << o << ": " << std::hexfloat << got[o] << " for "
                          << want[o]);
        CHECK(got[o] == want[o]);
      }
    }
  }
}
