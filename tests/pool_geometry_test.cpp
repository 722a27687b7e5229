// Table-driven tests of AvgPool-1/14/16 and AdaptiveAvgPool-8 shape inference against OpenVINO's
// rules (docs/openvino-semantics.md, sections 2, 3, 4 and 7). Expected values were derived from
// the document, not from the implementation.
#include <catch2/catch.hpp>

// GCC 12 warns about members left out of designated initializers, which the tables rely on.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "irrun/dim.hpp"
#include "irrun/pool_geometry.hpp"
#include "support/comma_locale.hpp"

using irrun::AutoPad;
using irrun::PoolAttrs;
using irrun::PoolGeometry;
using irrun::PoolInference;
using irrun::RoundingType;
using Pads = std::vector<std::int64_t>;

namespace {

constexpr auto kFloor = RoundingType::floor;
constexpr auto kCeil = RoundingType::ceil;
constexpr auto kCeilTorch = RoundingType::ceil_torch;

struct Case {
  const char* name;
  int version;
  PoolAttrs attrs;
  std::string input;
  std::string expected_output;
  // Resolved pads (after auto_pad); not checked when nullopt.
  std::optional<Pads> pads_begin = std::nullopt;
  std::optional<Pads> pads_end = std::nullopt;
};

// clang-format off
const std::vector<Case> kAvgPoolCases = {
  // --- ranks 3/4/5, explicit padding, floor ---
  {"rank3 floor", 1, {.kernel = {3}, .strides = {1}}, "[1,1,10]", "[1,1,8]", Pads{0}, Pads{0}},
  {"rank4 floor stride 2", 1, {.kernel = {2, 2}, .strides = {2, 2}}, "[1,3,32,32]", "[1,3,16,16]"},
  {"rank5 floor pads", 1,
   {.kernel = {3, 3, 3}, .strides = {2, 2, 2}, .pads_begin = {1, 1, 1}, .pads_end = {1, 1, 1}},
   "[2,4,8,9,10]", "[2,4,4,5,5]", Pads{1, 1, 1}, Pads{1, 1, 1}},
  {"empty pads default to zeros", 1, {.kernel = {3, 3}, .strides = {1, 1}}, "[1,1,5,6]",
   "[1,1,3,4]", Pads{0, 0}, Pads{0, 0}},
  {"floor drops the partial window", 1, {.kernel = {3}, .strides = {2}}, "[1,1,8]", "[1,1,3]"},
  {"ceil keeps the partial window", 1, {.kernel = {3}, .strides = {2}, .rounding = kCeil},
   "[1,1,8]", "[1,1,4]"},

  // --- ceil vs ceil_torch (doc examples) ---
  {"D9 K2 s2 p1/1 floor", 14,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}}, "[1,1,9]", "[1,1,5]"},
  {"D9 K2 s2 p1/1 ceil v1", 1,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .rounding = kCeil},
   "[1,1,9]", "[1,1,6]"},
  {"D9 K2 s2 p1/1 ceil v14", 14,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .rounding = kCeil},
   "[1,1,9]", "[1,1,6]"},
  {"D9 K2 s2 p1/1 ceil_torch v14", 14,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .rounding = kCeilTorch},
   "[1,1,9]", "[1,1,5]"},
  {"D9 K2 s2 p1/1 ceil_torch v16", 16,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .rounding = kCeilTorch},
   "[1,1,9]", "[1,1,5]"},
  {"D3 K2 s2 p1/1 ceil", 14,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .rounding = kCeil},
   "[1,1,3]", "[1,1,3]"},
  {"D3 K2 s2 p1/1 ceil_torch", 14,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .rounding = kCeilTorch},
   "[1,1,3]", "[1,1,2]"},
  {"D3 K2 s2 p1/1 floor", 14,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}}, "[1,1,3]", "[1,1,2]"},
  // s > K: ceil lets the last window start beyond the input.
  {"overhang D7 K2 s4 floor", 1, {.kernel = {2}, .strides = {4}}, "[1,1,7]", "[1,1,2]"},
  {"overhang D7 K2 s4 ceil", 1, {.kernel = {2}, .strides = {4}, .rounding = kCeil}, "[1,1,7]",
   "[1,1,3]"},
  {"overhang D7 K2 s4 ceil_torch", 14, {.kernel = {2}, .strides = {4}, .rounding = kCeilTorch},
   "[1,1,7]", "[1,1,2]"},
  {"overhang D5 K1 s3 ceil", 1, {.kernel = {1}, .strides = {3}, .rounding = kCeil}, "[1,1,5]",
   "[1,1,3]"},
  {"overhang beyond padded input D5 K1 s3 pe1 ceil", 1,
   {.kernel = {1}, .strides = {3}, .pads_end = {1}, .exclude_pad = false, .rounding = kCeil},
   "[1,1,5]", "[1,1,3]", Pads{0}, Pads{1}},
  // ceil_torch keeps a last window that starts inside the data.
  {"D10 K4 s4 floor", 14, {.kernel = {4}, .strides = {4}}, "[1,1,10]", "[1,1,2]"},
  {"D10 K4 s4 ceil", 14, {.kernel = {4}, .strides = {4}, .rounding = kCeil}, "[1,1,10]",
   "[1,1,3]"},
  {"D10 K4 s4 ceil_torch", 14, {.kernel = {4}, .strides = {4}, .rounding = kCeilTorch},
   "[1,1,10]", "[1,1,3]"},
  // ceil_torch allows left padding but drops a window starting in the right padding.
  {"ceil_torch left pad kept", 14,
   {.kernel = {3}, .strides = {2}, .pads_begin = {2}, .pads_end = {0}, .rounding = kCeilTorch},
   "[1,1,4]", "[1,1,3]"},
  {"ceil_torch right pad dropped", 14,
   {.kernel = {3}, .strides = {2}, .pads_begin = {0}, .pads_end = {2}, .rounding = kCeilTorch},
   "[1,1,4]", "[1,1,2]"},
  {"ceil right pad kept", 14,
   {.kernel = {3}, .strides = {2}, .pads_begin = {0}, .pads_end = {2}, .rounding = kCeil},
   "[1,1,4]", "[1,1,3]"},
  {"rank4 per-axis ceil", 14,
   {.kernel = {2, 2}, .strides = {2, 2}, .pads_begin = {1, 1}, .pads_end = {1, 1},
    .rounding = kCeil},
   "[1,2,9,3]", "[1,2,6,3]"},
  {"rank4 per-axis ceil_torch", 14,
   {.kernel = {2, 2}, .strides = {2, 2}, .pads_begin = {1, 1}, .pads_end = {1, 1},
    .rounding = kCeilTorch},
   "[1,2,9,3]", "[1,2,5,2]"},

  // --- auto_pad ---
  {"same_upper K2 s2 32->16", 1, {.kernel = {2, 2}, .strides = {2, 2}, .auto_pad = AutoPad::same_upper},
   "[1,3,32,32]", "[1,3,16,16]", Pads{0, 0}, Pads{0, 0}},
  {"same_upper K5 s2 32->16", 1, {.kernel = {5, 5}, .strides = {2, 2}, .auto_pad = AutoPad::same_upper},
   "[1,3,32,32]", "[1,3,16,16]", Pads{1, 1}, Pads{2, 2}},
  {"same_lower K5 s2 32->16", 1, {.kernel = {5, 5}, .strides = {2, 2}, .auto_pad = AutoPad::same_lower},
   "[1,3,32,32]", "[1,3,16,16]", Pads{2, 2}, Pads{1, 1}},
  {"same_upper stride 1 odd/even pads", 1,
   {.kernel = {4, 3}, .strides = {1, 1}, .auto_pad = AutoPad::same_upper}, "[1,1,7,7]",
   "[1,1,7,7]", Pads{1, 1}, Pads{2, 1}},
  {"same_lower stride 1 odd/even pads", 1,
   {.kernel = {4, 3}, .strides = {1, 1}, .auto_pad = AutoPad::same_lower}, "[1,1,7,7]",
   "[1,1,7,7]", Pads{2, 1}, Pads{1, 1}},
  {"same_lower D10 K4 s3", 1, {.kernel = {4}, .strides = {3}, .auto_pad = AutoPad::same_lower},
   "[1,1,10]", "[1,1,4]", Pads{2}, Pads{1}},
  {"same_upper D10 K4 s3", 1, {.kernel = {4}, .strides = {3}, .auto_pad = AutoPad::same_upper},
   "[1,1,10]", "[1,1,4]", Pads{1}, Pads{2}},
  {"same_lower D33 K3 s2", 1, {.kernel = {3}, .strides = {2}, .auto_pad = AutoPad::same_lower},
   "[1,1,33]", "[1,1,17]", Pads{1}, Pads{1}},
  {"same_upper + ceil D6 K1 s4 -> 3", 1,
   {.kernel = {1}, .strides = {4}, .rounding = kCeil, .auto_pad = AutoPad::same_upper},
   "[1,1,6]", "[1,1,3]", Pads{0}, Pads{0}},
  {"same_lower + ceil D6 K1 s4 -> 3", 14,
   {.kernel = {1}, .strides = {4}, .rounding = kCeil, .auto_pad = AutoPad::same_lower},
   "[1,1,6]", "[1,1,3]", Pads{0}, Pads{0}},
  {"same_upper + floor D6 K1 s4 -> 2", 1,
   {.kernel = {1}, .strides = {4}, .auto_pad = AutoPad::same_upper}, "[1,1,6]", "[1,1,2]",
   Pads{0}, Pads{0}},
  {"same_upper ignores given pads", 1,
   {.kernel = {3}, .strides = {1}, .pads_begin = {7}, .pads_end = {7},
    .auto_pad = AutoPad::same_upper},
   "[1,1,10]", "[1,1,10]", Pads{1}, Pads{1}},
  {"same_upper dynamic and interval dims", 1,
   {.kernel = {3, 3}, .strides = {1, 1}, .auto_pad = AutoPad::same_upper}, "[1,3,?,10..20]",
   "[1,3,?,?]", Pads{0, 0}, Pads{0, 0}},
  {"same_lower mixed dynamic/static axes", 1,
   {.kernel = {5, 5}, .strides = {2, 2}, .auto_pad = AutoPad::same_lower}, "[2..3,?,?,32]",
   "[2..3,?,?,16]", Pads{0, 2}, Pads{0, 1}},
  {"same_upper ceil bounded interval still dynamic", 14,
   {.kernel = {2}, .strides = {2}, .rounding = kCeil, .auto_pad = AutoPad::same_upper},
   "[1,1,4..6]", "[1,1,?]", Pads{0}, Pads{0}},
  {"valid ignores given pads", 1,
   {.kernel = {3}, .strides = {2}, .pads_begin = {5}, .pads_end = {5},
    .auto_pad = AutoPad::valid},
   "[1,1,10]", "[1,1,4]", Pads{0}, Pads{0}},
  {"valid + ceil D3 K2 s2 -> 2", 1,
   {.kernel = {2}, .strides = {2}, .rounding = kCeil, .auto_pad = AutoPad::valid}, "[1,1,3]",
   "[1,1,2]", Pads{0}, Pads{0}},
  {"valid + floor D3 K2 s2 -> 1", 1, {.kernel = {2}, .strides = {2}, .auto_pad = AutoPad::valid},
   "[1,1,3]", "[1,1,1]", Pads{0}, Pads{0}},
  {"valid with interval uses interval arithmetic", 1,
   {.kernel = {3}, .strides = {1}, .auto_pad = AutoPad::valid}, "[1,1,4..10]", "[1,1,2..8]"},

  // --- exclude-pad ---
  {"exclude-pad=false pb5 pe6 K2 accepted", 1,
   {.kernel = {2}, .strides = {1}, .pads_begin = {5}, .pads_end = {6}, .exclude_pad = false},
   "[1,1,4]", "[1,1,14]", Pads{5}, Pads{6}},
  {"exclude-pad=true pads below kernel accepted", 1,
   {.kernel = {3}, .strides = {1}, .pads_begin = {2}, .pads_end = {2}}, "[1,1,4]", "[1,1,6]"},
  {"exclude-pad=true dynamic dim skips padding check", 1,
   {.kernel = {2}, .strides = {1}, .pads_begin = {5}, .pads_end = {5}}, "[1,1,?]", "[1,1,9..]"},

  // --- AvgPool-16 dilations ---
  {"v16 dilations 100x150 ceil_torch", 16,
   {.kernel = {10, 20}, .strides = {2, 3}, .dilations = {2, 2}, .rounding = kCeilTorch},
   "[1,1,100,150]", "[1,1,42,38]"},
  {"v16 dilations 100x150 ceil", 16,
   {.kernel = {10, 20}, .strides = {2, 3}, .dilations = {2, 2}, .rounding = kCeil},
   "[1,1,100,150]", "[1,1,42,38]"},
  {"v16 dilations 100x150 floor", 16,
   {.kernel = {10, 20}, .strides = {2, 3}, .dilations = {2, 2}}, "[1,1,100,150]",
   "[1,1,41,38]"},
  {"v16 empty dilations mean 1", 16, {.kernel = {3}, .strides = {1}}, "[1,1,10]", "[1,1,8]"},
  {"v16 dilation + same_upper s1", 16,
   {.kernel = {3}, .strides = {1}, .dilations = {2}, .auto_pad = AutoPad::same_upper},
   "[1,1,10]", "[1,1,10]", Pads{2}, Pads{2}},
  {"v16 dilation + same_upper s2", 16,
   {.kernel = {3}, .strides = {2}, .dilations = {2}, .auto_pad = AutoPad::same_upper},
   "[1,1,10]", "[1,1,5]", Pads{1}, Pads{2}},
  {"v16 dilation rank5", 16,
   {.kernel = {2, 2, 2}, .strides = {1, 1, 1}, .dilations = {1, 2, 3}}, "[1,2,5,6,7]",
   "[1,2,4,4,4]"},
  {"v16 dilation interval", 16,
   {.kernel = {3}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .dilations = {2}},
   "[1,1,20..30]", "[1,1,9..14]"},
  // AvgPool-1/14 have no dilations attribute: a value in PoolAttrs must have no effect.
  {"v14 ignores dilations", 14, {.kernel = {3}, .strides = {1}, .dilations = {2}}, "[1,1,10]",
   "[1,1,8]"},

  // --- dynamic and interval dims (explicit padding) ---
  {"[?,?,?] K4 s4 p2/2 ceil", 1,
   {.kernel = {4}, .strides = {4}, .pads_begin = {2}, .pads_end = {2}, .rounding = kCeil},
   "[?,?,?]", "[?,?,1..]"},
  {"[-1,-1,-1] K4 s4 p2/2 ceil", 1,
   {.kernel = {4}, .strides = {4}, .pads_begin = {2}, .pads_end = {2}, .rounding = kCeil},
   "[-1,-1,-1]", "[?,?,1..]"},
  {"ceil_torch {5..}", 14,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .rounding = kCeilTorch},
   "[1,1,5..]", "[1,1,3..]"},
  {"ceil_torch {6..7}", 14,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .rounding = kCeilTorch},
   "[1,1,6..7]", "[1,1,4]"},
  {"ceil_torch {3..9}", 14,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .rounding = kCeilTorch},
   "[1,1,3..9]", "[1,1,2..5]"},
  {"ceil {3..9}", 14,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .rounding = kCeil},
   "[1,1,3..9]", "[1,1,3..6]"},
  {"floor intervals, batch/channel intervals copied", 1, {.kernel = {3}, .strides = {2}},
   "[2..4,3..5,10..20]", "[2..4,3..5,4..9]"},
  {"lower bound clipped at 0", 1, {.kernel = {3}, .strides = {1}}, "[1,1,1..10]", "[1,1,1..8]"},
  {"..10 input", 1, {.kernel = {2}, .strides = {2}}, "[1,1,..10]", "[1,1,1..5]"},
  {"interval below kernel: both bounds clipped", 1, {.kernel = {5}, .strides = {1}},
   "[1,1,1..3]", "[1,1,1]"},
  {"dynamic batch/channel copied", 1, {.kernel = {3}, .strides = {1}}, "[?,1..8,10]",
   "[?,1..8,8]"},
  {"mixed dynamic and static spatial", 1, {.kernel = {3, 3}, .strides = {1, 1}}, "[1,3,?,10]",
   "[1,3,1..,8]"},

  // --- dynamic rank ---
  {"dynamic rank 2-D kernel", 1, {.kernel = {2, 2}, .strides = {1, 1}}, "...", "[?,?,?,?]"},
  {"dynamic rank 1-D kernel same_upper", 14,
   {.kernel = {3}, .strides = {2}, .auto_pad = AutoPad::same_upper}, "[...]", "[?,?,?]"},
  {"dynamic rank 4-D kernel -> rank 6", 16,
   {.kernel = {2, 2, 2, 2}, .strides = {1, 1, 1, 1}}, "...", "[?,?,?,?,?,?]"},
  // Section 2, auto_pad: "if the whole rank is dynamic, pads are untouched".
  {"dynamic rank same_upper keeps the given pads", 14,
   {.kernel = {3}, .strides = {2}, .pads_begin = {1}, .pads_end = {2},
    .auto_pad = AutoPad::same_upper},
   "...", "[?,?,?]", Pads{1}, Pads{2}},
  // ... while valid zeroes them whatever the rank ("valid: pb = pe = 0").
  {"dynamic rank valid zeroes the given pads", 1,
   {.kernel = {2, 2}, .strides = {1, 1}, .pads_begin = {0, 3}, .pads_end = {1, 0},
    .auto_pad = AutoPad::valid},
   "...", "[?,?,?,?]", Pads{0, 0}, Pads{0, 0}},
};
// clang-format on

std::string describe(const std::optional<Pads>& p) {
  if (!p) return "(none)";
  return irrun::to_string(*p);
}

// One row of a shape inference table (AvgPool's or MaxPool's): the output and the pads against
// the row's, geometry exactly when the input (and so the output) is static, then `more` on the
// result, all under the row's name.
template <class Case, class Infer, class More>
void check_shape_row(const Case& c, Infer infer, More more) {
  INFO("case: " << c.name << " (v" << c.version << ", input " << c.input << ")");
  PoolInference r;
  try {
    r = infer(c.attrs, c.version, irrun::parse_partial_shape(c.input));
  } catch (const std::exception& e) {
    FAIL_CHECK("unexpected exception: " << e.what());
    return;
  }
  CHECK(irrun::to_string(r.output) == c.expected_output);
  if (c.pads_begin) {
    INFO("pads_begin " << irrun::to_string(r.pads_begin) << " expected " << describe(c.pads_begin));
    CHECK(r.pads_begin == *c.pads_begin);
  }
  if (c.pads_end) {
    INFO("pads_end " << irrun::to_string(r.pads_end) << " expected " << describe(c.pads_end));
    CHECK(r.pads_end == *c.pads_end);
  }
  CHECK(r.geometry.has_value() == irrun::parse_partial_shape(c.input).is_static());
  more(r);
}

}  // namespace

TEST_CASE("AvgPool shape inference table", "[pool_geometry][avg_pool]") {
  for (const auto& c : kAvgPoolCases) check_shape_row(c, irrun::infer_avg_pool, [](auto&) {});
}

namespace {

struct GeometryCase {
  const char* name;
  int version;
  PoolAttrs attrs;
  std::string input;
  PoolGeometry expected;
};

PoolGeometry geom(std::int64_t n, std::int64_t c, std::size_t rank, std::array<std::int64_t, 3> in,
                  std::array<std::int64_t, 3> out, std::array<std::int64_t, 3> k,
                  std::array<std::int64_t, 3> s, std::array<std::int64_t, 3> d,
                  std::array<std::int64_t, 3> pb, std::array<std::int64_t, 3> pe,
                  bool pads_in_avg) {
  PoolGeometry g;
  g.batch = n;
  g.channels = c;
  g.spatial_rank = rank;
  g.in = in;
  g.out = out;
  g.kernel = k;
  g.stride = s;
  g.dilation = d;
  g.pad_begin = pb;
  g.pad_end = pe;
  g.pads_in_avg = pads_in_avg;
  g.adaptive = false;
  return g;
}

// clang-format off
const std::vector<GeometryCase> kGeometryCases = {
  {"1-D explicit pads, exclude-pad=false", 1,
   {.kernel = {3}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .exclude_pad = false},
   "[2,3,10]",
   geom(2, 3, 1, {1, 1, 10}, {1, 1, 5}, {1, 1, 3}, {1, 1, 2}, {1, 1, 1}, {0, 0, 1}, {0, 0, 1}, true)},
  {"1-D explicit pads, exclude-pad=true", 1,
   {.kernel = {3}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}},
   "[2,3,10]",
   geom(2, 3, 1, {1, 1, 10}, {1, 1, 5}, {1, 1, 3}, {1, 1, 2}, {1, 1, 1}, {0, 0, 1}, {0, 0, 1}, false)},
  {"2-D no pads, exclude-pad=false -> pads_in_avg false", 1,
   {.kernel = {2, 2}, .strides = {2, 2}, .exclude_pad = false, .rounding = kCeil},
   "[1,3,32,31]",
   geom(1, 3, 2, {1, 32, 31}, {1, 16, 16}, {1, 2, 2}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, false)},
  {"2-D pads on H only, exclude-pad=false -> pads_in_avg true", 14,
   {.kernel = {2, 2}, .strides = {2, 2}, .pads_begin = {0, 0}, .pads_end = {1, 0},
    .exclude_pad = false},
   "[1,1,5,4]",
   geom(1, 1, 2, {1, 5, 4}, {1, 3, 2}, {1, 2, 2}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 1, 0}, true)},
  {"valid with given pads, exclude-pad=false -> pads_in_avg false", 1,
   {.kernel = {2, 2}, .strides = {1, 1}, .pads_begin = {1, 1}, .pads_end = {1, 1},
    .exclude_pad = false, .auto_pad = AutoPad::valid},
   "[1,1,4,4]",
   geom(1, 1, 2, {1, 4, 4}, {1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, false)},
  {"same_upper non-zero pads, exclude-pad=false -> pads_in_avg true", 1,
   {.kernel = {5, 5}, .strides = {2, 2}, .exclude_pad = false, .auto_pad = AutoPad::same_upper},
   "[1,3,32,32]",
   geom(1, 3, 2, {1, 32, 32}, {1, 16, 16}, {1, 5, 5}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {0, 2, 2}, true)},
  {"same_upper zero pads, exclude-pad=false -> pads_in_avg false", 1,
   {.kernel = {2, 2}, .strides = {2, 2}, .exclude_pad = false, .auto_pad = AutoPad::same_upper},
   "[1,3,32,32]",
   geom(1, 3, 2, {1, 32, 32}, {1, 16, 16}, {1, 2, 2}, {1, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, false)},
  {"same_lower non-zero pads, exclude-pad=true -> pads_in_avg false", 1,
   {.kernel = {5, 5}, .strides = {2, 2}, .auto_pad = AutoPad::same_lower},
   "[1,3,32,32]",
   geom(1, 3, 2, {1, 32, 32}, {1, 16, 16}, {1, 5, 5}, {1, 2, 2}, {1, 1, 1}, {0, 2, 2}, {0, 1, 1}, false)},
  {"3-D v16 dilations", 16,
   {.kernel = {2, 2, 2}, .strides = {1, 1, 1}, .dilations = {1, 2, 3}},
   "[1,2,5,6,7]",
   geom(1, 2, 3, {5, 6, 7}, {4, 4, 4}, {2, 2, 2}, {1, 1, 1}, {1, 2, 3}, {0, 0, 0}, {0, 0, 0}, false)},
  {"3-D pads only on last axis, exclude-pad=false", 16,
   {.kernel = {1, 1, 2}, .strides = {1, 1, 2}, .pads_begin = {0, 0, 1}, .pads_end = {0, 0, 0},
    .exclude_pad = false, .rounding = kCeilTorch},
   "[1,1,2,3,4]",
   geom(1, 1, 3, {2, 3, 4}, {2, 3, 3}, {1, 1, 2}, {1, 1, 2}, {1, 1, 1}, {0, 0, 1}, {0, 0, 0}, true)},
};
// clang-format on

}  // namespace

TEST_CASE("AvgPool geometry table", "[pool_geometry][avg_pool]") {
  for (const auto& c : kGeometryCases) {
    INFO("case: " << c.name << " (v" << c.version << ", input " << c.input << ")");
    PoolInference r;
    try {
      r = irrun::infer_avg_pool(c.attrs, c.version, irrun::parse_partial_shape(c.input));
    } catch (const std::exception& e) {
      FAIL_CHECK("unexpected exception: " << e.what());
      continue;
    }
    REQUIRE(r.geometry.has_value());
    const PoolGeometry& g = *r.geometry;
    const PoolGeometry& e = c.expected;
    CHECK(g.batch == e.batch);
    CHECK(g.channels == e.channels);
    CHECK(g.spatial_rank == e.spatial_rank);
    CHECK(g.in == e.in);
    CHECK(g.out == e.out);
    CHECK(g.kernel == e.kernel);
    CHECK(g.stride == e.stride);
    CHECK(g.dilation == e.dilation);
    CHECK(g.pad_begin == e.pad_begin);
    CHECK(g.pad_end == e.pad_end);
    CHECK(g.pads_in_avg == e.pads_in_avg);
    CHECK_FALSE(g.adaptive);
    CHECK(g.planes() == e.batch * e.channels);
    CHECK(g.in_plane_size() == e.in[0] * e.in[1] * e.in[2]);
    CHECK(g.out_plane_size() == e.out[0] * e.out[1] * e.out[2]);
  }
}

TEST_CASE("AvgPool geometry absent for dynamic shapes", "[pool_geometry][avg_pool]") {
  PoolAttrs a{.kernel = {2, 2}, .strides = {1, 1}};
  CHECK_FALSE(irrun::infer_avg_pool(a, 1, irrun::parse_partial_shape("[1,3,?,8]")).geometry);
  CHECK_FALSE(irrun::infer_avg_pool(a, 1, irrun::parse_partial_shape("[?,3,8,8]")).geometry);
  CHECK_FALSE(irrun::infer_avg_pool(a, 1, irrun::parse_partial_shape("...")).geometry);
  CHECK(irrun::infer_avg_pool(a, 1, irrun::parse_partial_shape("[1,3,8,8]")).geometry);
}

namespace {

struct NegativeCase {
  const char* name;
  int version;
  PoolAttrs attrs;
  std::string input;
  std::string message;  // substring of what()
};

// In OpenVINO's order; "X beats Y" cases break two rules and expect the earlier one.
// clang-format off
const std::vector<NegativeCase> kAvgPoolNegativeCases = {
  // 2. pad-list lengths
  {"pads_begin size", 1, {.kernel = {2, 2}, .strides = {1, 1}, .pads_begin = {1}}, "[1,3,8,8]",
   "Expected pads_begin size to be equal to input size - 2. Got: 1"},
  {"pads_begin size beats rank", 1, {.kernel = {2}, .strides = {1}, .pads_begin = {0, 0}},
   "[1,3]", "Expected pads_begin size to be equal to input size - 2. Got: 2"},
  {"pads_begin size beats pads_end size", 1,
   {.kernel = {2, 2}, .strides = {1, 1}, .pads_begin = {1, 1, 1}, .pads_end = {1}}, "[1,3,8,8]",
   "Expected pads_begin size to be equal to input size - 2. Got: 3"},
  {"pads_begin size with dynamic rank", 1,
   {.kernel = {2, 2}, .strides = {1, 1}, .pads_begin = {1}}, "...",
   "Expected pads_begin size to be equal to input size - 2. Got: 1 (kernel has 2 value(s), "
   "pads_begin 1, pads_end 2, strides 2; the input's rank is not known)"},
  // OpenVINO's "Got: 2" for a 4-D input reads as no error: irrun adds every length.
  {"a kernel of one value on a 4-D input (pads of two)", 1,
   {.kernel = {3}, .strides = {2, 2}, .pads_begin = {1, 1}, .pads_end = {1, 1}}, "[1,3,8,8]",
   "Expected pads_begin size to be equal to input size - 2. Got: 2 (kernel has 1 value(s), "
   "pads_begin 2, pads_end 2, strides 2; the input has 2 spatial dim(s))"},
  {"pads_end size", 1, {.kernel = {2, 2}, .strides = {1, 1}, .pads_end = {0, 0, 0}}, "[1,3,8,8]",
   "Expected pads_end size to be equal to input size - 2. Got: 3"},
  {"pads_end size beats strides size", 1, {.kernel = {2, 2}, .strides = {}, .pads_end = {1}},
   "[1,3,8,8]", "Expected pads_end size to be equal to input size - 2. Got: 1"},
  // 3. rank
  {"rank 2", 1, {.kernel = {2}, .strides = {1}}, "[1,3]",
   "Expected a 3D, 4D or 5D tensor for the input. Got: [1,3]"},
  {"rank 6", 1, {.kernel = {1, 1, 1, 1}, .strides = {1, 1, 1, 1}}, "[1,1,2,2,2,2]",
   "Expected a 3D, 4D or 5D tensor for the input. Got: [1,1,2,2,2,2]"},
  {"rank 2 with dynamic dim", 14, {.kernel = {2}, .strides = {1}}, "[1,?]",
   "Expected a 3D, 4D or 5D tensor for the input. Got: [1,?]"},
  {"rank beats strides size", 1, {.kernel = {2}, .strides = {}}, "[1,3]",
   "Expected a 3D, 4D or 5D tensor for the input. Got: [1,3]"},
  {"rank beats kernel size and zero stride", 1, {.kernel = {2, 2}, .strides = {0, 1}}, "[1,3]",
   "Expected a 3D, 4D or 5D tensor for the input. Got: [1,3]"},
  // 4. attribute lengths and zeros
  {"strides size", 1, {.kernel = {2, 2}, .strides = {1}}, "[1,3,8,8]",
   "Expected strides size to be equal to input size - 2. Got: 1"},
  {"empty strides", 1, {.kernel = {2, 2}, .strides = {}}, "[1,3,8,8]",
   "Expected strides size to be equal to input size - 2. Got: 0"},
  {"strides size with dynamic rank", 1, {.kernel = {2, 2}, .strides = {1}}, "...",
   "Expected strides size to be equal to input size - 2. Got: 1"},
  {"strides size beats kernel size", 1, {.kernel = {2, 2, 2}, .strides = {1, 1}}, "[1,3,8,8]",
   "Expected strides size to be equal to input size - 2. Got: 2"},
  {"strides size beats dilations size", 16,
   {.kernel = {2, 2}, .strides = {1}, .dilations = {1}}, "[1,3,8,8]",
   "Expected strides size to be equal to input size - 2. Got: 1"},
  {"dilations size (v16)", 16, {.kernel = {2, 2}, .strides = {1, 1}, .dilations = {1}},
   "[1,3,8,8]", "Expected dilations size to be equal to kernel size. Got: 1"},
  {"dilations size beats kernel size", 16,
   {.kernel = {2, 2}, .strides = {1, 1}, .dilations = {1, 1, 1}}, "[1,3,8]",
   "Expected dilations size to be equal to kernel size. Got: 3"},
  {"kernel size", 1, {.kernel = {2, 2}, .strides = {1, 1}}, "[1,3,8]",
   "Expected kernel size to be equal to input size - 2. Got: 2"},
  {"kernel size beats zero strides", 1, {.kernel = {2, 2}, .strides = {0, 1}}, "[1,3,8]",
   "Expected kernel size to be equal to input size - 2. Got: 2"},
  {"zero strides", 1, {.kernel = {2, 2}, .strides = {1, 0}}, "[1,3,8,8]",
   "Strides has zero dimension(s)."},
  {"zero strides with dynamic rank", 1, {.kernel = {2, 2}, .strides = {0, 0}}, "...",
   "Strides has zero dimension(s)."},
  {"zero strides beats zero dilations", 16,
   {.kernel = {2, 2}, .strides = {0, 1}, .dilations = {0, 1}}, "[1,3,8,8]",
   "Strides has zero dimension(s)."},
  {"zero strides beats ceil_torch on v1", 1,
   {.kernel = {2, 2}, .strides = {0, 1}, .rounding = kCeilTorch}, "[1,3,8,8]",
   "Strides has zero dimension(s)."},
  {"zero dilations", 16, {.kernel = {2, 2}, .strides = {1, 1}, .dilations = {1, 0}}, "[1,3,8,8]",
   "Kernel dilations has zero dimension(s)."},
  {"zero dilations beats batch zero", 16,
   {.kernel = {2, 2}, .strides = {1, 1}, .dilations = {0, 1}}, "[0,3,8,8]",
   "Kernel dilations has zero dimension(s)."},
  {"ceil_torch on v1", 1, {.kernel = {2, 2}, .strides = {1, 1}, .rounding = kCeilTorch},
   "[1,3,8,8]", "Rounding CEIL_TORCH is not supported."},
  {"ceil_torch on v1 with dynamic rank", 1, {.kernel = {2}, .strides = {1}, .rounding = kCeilTorch},
   "...", "Rounding CEIL_TORCH is not supported."},
  {"ceil_torch on v1 beats batch zero", 1,
   {.kernel = {2, 2}, .strides = {1, 1}, .rounding = kCeilTorch}, "[0,3,8,8]",
   "Rounding CEIL_TORCH is not supported."},
  // 6. batch and channel
  {"batch zero", 1, {.kernel = {2, 2}, .strides = {1, 1}}, "[0,3,8,8]", "Batch size is zero."},
  {"batch zero beats channel zero", 1, {.kernel = {2}, .strides = {1}}, "[0,0,8]",
   "Batch size is zero."},
  {"batch zero beats kernel larger", 14, {.kernel = {2, 2}, .strides = {1, 1}}, "[0,3,1,1]",
   "Batch size is zero."},
  {"channel zero", 1, {.kernel = {2, 2}, .strides = {1, 1}}, "[1,0,8,8]",
   "Channel count is zero."},
  {"channel zero with dynamic batch", 1, {.kernel = {2}, .strides = {1}}, "[?,0,8]",
   "Channel count is zero."},
  {"channel zero beats kernel entirely in padding", 1,
   {.kernel = {2}, .strides = {1}, .pads_begin = {3}}, "[1,0,8]", "Channel count is zero."},
  // 7. per spatial axis
  {"kernel larger than data", 1, {.kernel = {5}, .strides = {1}}, "[1,1,3]",
   "Kernel after dilation has size (dim: 5) larger than the data shape after padding (dim: 3) "
   "at axis 0."},
  {"kernel larger than padded data, axis 1, exclude-pad=false", 1,
   {.kernel = {2, 6}, .strides = {1, 1}, .pads_begin = {0, 1}, .pads_end = {0, 1},
    .exclude_pad = false},
   "[1,1,8,3]",
   "Kernel after dilation has size (dim: 6) larger than the data shape after padding (dim: 5) "
   "at axis 1."},
  {"dilated kernel larger than data (v16)", 16,
   {.kernel = {3}, .strides = {1}, .dilations = {4}}, "[1,1,8]",
   "Kernel after dilation has size (dim: 9) larger than the data shape after padding (dim: 8) "
   "at axis 0."},
  {"valid overwrites given pads, then kernel larger", 1,
   {.kernel = {5}, .strides = {1}, .pads_begin = {2}, .pads_end = {2},
    .auto_pad = AutoPad::valid},
   "[1,1,3]",
   "Kernel after dilation has size (dim: 5) larger than the data shape after padding (dim: 3) "
   "at axis 0."},
  {"kernel larger beats entirely in padding on the same axis", 1,
   {.kernel = {5}, .strides = {1}, .pads_begin = {0}, .pads_end = {1}}, "[1,1,3]",
   "Kernel after dilation has size (dim: 5) larger than the data shape after padding (dim: 4) "
   "at axis 0."},
  {"kernel entirely in padding (pads_begin)", 1,
   {.kernel = {2}, .strides = {1}, .pads_begin = {2}, .pads_end = {0}}, "[1,1,4]",
   "Kernel after dilation is sometimes entirely in the padding area for axis 0 (dilated kernel "
   "dimension: 2, padding below dimension: 2, padding above dimension: 0) and this is not "
   "allowed."},
  {"kernel entirely in padding (pads_end)", 14,
   {.kernel = {3}, .strides = {1}, .pads_begin = {0}, .pads_end = {3}}, "[1,1,4]",
   "Kernel after dilation is sometimes entirely in the padding area for axis 0 (dilated kernel "
   "dimension: 3, padding below dimension: 0, padding above dimension: 3) and this is not "
   "allowed."},
  {"K1 with pads_end 1 entirely in padding", 1,
   {.kernel = {1}, .strides = {3}, .pads_end = {1}, .rounding = kCeil}, "[1,1,5]",
   "Kernel after dilation is sometimes entirely in the padding area for axis 0 (dilated kernel "
   "dimension: 1, padding below dimension: 0, padding above dimension: 1) and this is not "
   "allowed."},
  {"dilated kernel entirely in padding (v16)", 16,
   {.kernel = {2}, .strides = {1}, .pads_begin = {3}, .pads_end = {0}, .dilations = {2}},
   "[1,1,6]",
   "Kernel after dilation is sometimes entirely in the padding area for axis 0 (dilated kernel "
   "dimension: 3, padding below dimension: 3, padding above dimension: 0) and this is not "
   "allowed."},
  {"entirely in padding on axis 1", 1,
   {.kernel = {2, 2}, .strides = {1, 1}, .pads_begin = {0, 0}, .pads_end = {0, 4}}, "[1,1,4,4]",
   "Kernel after dilation is sometimes entirely in the padding area for axis 1 (dilated kernel "
   "dimension: 2, padding below dimension: 0, padding above dimension: 4) and this is not "
   "allowed."},
  {"axis 0 padding check beats axis 1 kernel larger", 1,
   {.kernel = {2, 5}, .strides = {1, 1}, .pads_begin = {2, 0}, .pads_end = {0, 0}}, "[1,1,4,2]",
   "Kernel after dilation is sometimes entirely in the padding area for axis 0"},
  {"axis 0 kernel larger beats axis 1 padding check", 1,
   {.kernel = {5, 2}, .strides = {1, 1}, .pads_begin = {0, 2}, .pads_end = {0, 0}}, "[1,1,2,4]",
   "Kernel after dilation has size (dim: 5) larger than the data shape after padding (dim: 2) "
   "at axis 0."},
  {"kernel 0", 1, {.kernel = {0}, .strides = {1}}, "[1,1,4]",
   "Kernel after dilation has size (dim: 18446744073709551615) larger than the data shape after "
   "padding (dim: 4) at axis 0."},  // An empty kernel: every list is measured against the kernel's length, so the empty pads
  // (resized to 0) and strides pass and the kernel-vs-rank rule fires; non-empty lists fail
  // first, in order.
  {"empty kernel", 1, {.kernel = {}, .strides = {}}, "[1,1,8,8]",
   "Expected kernel size to be equal to input size - 2. Got: 0"},
  {"empty kernel, v16", 16, {.kernel = {}, .strides = {}}, "[1,1,8]",
   "Expected kernel size to be equal to input size - 2. Got: 0"},
  {"empty kernel, strides of the input's rank", 1, {.kernel = {}, .strides = {1, 1}},
   "[1,1,8,8]", "Expected strides size to be equal to input size - 2. Got: 2"},
  {"empty kernel, pads_begin of the input's rank", 14,
   {.kernel = {}, .strides = {1, 1}, .pads_begin = {0, 0}}, "[1,1,8,8]",
   "Expected pads_begin size to be equal to input size - 2. Got: 2"},
  {"empty kernel, dilations of the input's rank", 16,
   {.kernel = {}, .strides = {}, .dilations = {1, 1}}, "[1,1,8,8]",
   "Expected dilations size to be equal to kernel size. Got: 2"},
  {"empty kernel, dynamic rank", 1, {.kernel = {}, .strides = {1}}, "...",
   "Expected strides size to be equal to input size - 2. Got: 1"},
};
// clang-format on

template <class F>
void check_throws_validation(F&& f, const std::string& message) {
  try {
    f();
    FAIL_CHECK("no exception; expected ValidationError containing: " << message);
  } catch (const irrun::ValidationError& e) {
    CHECK_THAT(std::string(e.what()), Catch::Contains(message));
  } catch (const std::exception& e) {
    FAIL_CHECK("wrong exception type, what(): " << e.what());
  }
}

}  // namespace

TEST_CASE("AvgPool validation rules and order", "[pool_geometry][avg_pool][validation]") {
  for (const auto& c : kAvgPoolNegativeCases) {
    INFO("case: " << c.name << " (v" << c.version << ", input " << c.input << ")");
    const auto input = irrun::parse_partial_shape(c.input);
    check_throws_validation([&] { (void)irrun::infer_avg_pool(c.attrs, c.version, input); },
                            c.message);
  }
}

TEST_CASE("AvgPool validation messages ignore the global locale", "[pool_geometry][validation]") {
  const irrun::testing::CommaLocale comma;
  REQUIRE(comma.probe() == "1.557 1,5");
  const auto input = irrun::parse_partial_shape("[1,3,8,8]");
  check_throws_validation(
      [&] {
        (void)irrun::infer_avg_pool({.kernel = {2, 2}, .strides = {1557, 0}}, 1, input);
      },
      "Strides has zero dimension(s). {1557, 0}");
}

// ------------------------------------------------------------------------------------------------
// AdaptiveAvgPool-8

namespace {

using Sizes = std::optional<std::vector<std::int64_t>>;

struct AdaptiveCase {
  const char* name;
  std::string input;
  std::string output_size_shape;
  Sizes output_size;
  std::string expected_output;
};

// clang-format off
const std::vector<AdaptiveCase> kAdaptiveCases = {
  {"rank4 known", "[1,3,10,20]", "[2]", std::vector<std::int64_t>{5, 7}, "[1,3,5,7]"},
  {"rank3 known", "[2,4,9]", "[1]", std::vector<std::int64_t>{3}, "[2,4,3]"},
  {"rank5 known", "[1,2,8,8,8]", "[3]", std::vector<std::int64_t>{2, 3, 4}, "[1,2,2,3,4]"},
  {"i32-range values", "[1,1,16,16]", "[2]", std::vector<std::int64_t>{2147483647, 1},
   "[1,1,2147483647,1]"},
  {"unknown values -> dynamic spatial", "[2,3,10,20]", "[2]", std::nullopt, "[2,3,?,?]"},
  {"unknown values, dynamic output_size shape", "[2,3,10,20,30]", "[?]", std::nullopt,
   "[2,3,?,?,?]"},
  {"unknown values, dynamic-rank output_size", "[1,3,8,8]", "...", std::nullopt, "[1,3,?,?]"},
  {"-1 values -> dynamic dims", "[1,3,10,20]", "[2]", std::vector<std::int64_t>{-1, 4},
   "[1,3,?,4]"},
  {"0 accepted", "[1,3,8]", "[1]", std::vector<std::int64_t>{0}, "[1,3,0]"},
  {"input dim 0 into bins: the shape OpenVINO infers (no geometry)", "[1,3,0,7]", "[2]",
   std::vector<std::int64_t>{2, 4}, "[1,3,2,4]"},
  {"input dim 0 into 0 bins", "[1,3,0]", "[1]", std::vector<std::int64_t>{0}, "[1,3,0]"},
  // OpenVINO's kernel computes no bin of an empty output, so nothing asserts.
  {"empty output over an input dim 0: batch 0", "[0,3,0,7]", "[2]", std::vector<std::int64_t>{2, 4},
   "[0,3,2,4]"},
  {"empty output over an input dim 0: channels 0", "[1,0,5,0]", "[2]", std::vector<std::int64_t>{2, 4},
   "[1,0,2,4]"},
  {"empty output over an input dim 0: 0 bins on another axis", "[1,3,0,7]", "[2]",
   std::vector<std::int64_t>{2, 0}, "[1,3,2,0]"},
  {"larger than input", "[1,3,4,4]", "[2]", std::vector<std::int64_t>{8, 9}, "[1,3,8,9]"},
  {"batch/channel intervals copied", "[1..4,?,10]", "[1]", std::vector<std::int64_t>{5},
   "[1..4,?,5]"},
  {"dynamic spatial input", "[1,3,?,1..5]", "[2]", std::vector<std::int64_t>{3, 3}, "[1,3,3,3]"},
  {"output_size shape interval compatible", "[1,3,8,8]", "[1..3]",
   std::vector<std::int64_t>{2, 2}, "[1,3,2,2]"},
  {"dynamic data rank", "...", "[2]", std::vector<std::int64_t>{2, 2}, "[...]"},
  {"dynamic data rank, unknown values", "...", "[?]", std::nullopt, "[...]"},
  {"dynamic data rank, mismatching output_size shape", "...", "[7]", std::nullopt, "[...]"},
};
// clang-format on

struct AdaptiveNegativeCase {
  const char* name;
  std::string input;
  std::string output_size_shape;
  Sizes output_size;
  std::string message;
};

// clang-format off
const std::vector<AdaptiveNegativeCase> kAdaptiveNegativeCases = {
  {"rank 2", "[1,3]", "[0]", std::vector<std::int64_t>{},
   "Expected a 3D, 4D or 5D tensor for the input. Got: [1,3]"},
  {"rank 6", "[1,1,2,2,2,2]", "[4]", std::vector<std::int64_t>{1, 1, 1, 1},
   "Expected a 3D, 4D or 5D tensor for the input. Got: [1,1,2,2,2,2]"},
  {"rank beats output shape compatibility", "[1,3]", "[3]", std::vector<std::int64_t>{1, 1, 1},
   "Expected a 3D, 4D or 5D tensor for the input. Got: [1,3]"},
  {"output_size shape incompatible", "[1,3,8,8]", "[3]", std::vector<std::int64_t>{2, 2, 2},
   "Output shape for spatial dimension not compatible with data shape."},
  {"output_size shape incompatible, unknown values", "[1,3,8,8]", "[1]", std::nullopt,
   "Output shape for spatial dimension not compatible with data shape."},
  {"output_size shape interval incompatible", "[1,3,8,8,8]", "[1..2]", std::nullopt,
   "Output shape for spatial dimension not compatible with data shape."},
  {"output shape compatibility beats value count", "[1,3,8]", "[2]",
   std::vector<std::int64_t>{2, 2, 2},
   "Output shape for spatial dimension not compatible with data shape."},
  {"value count, dynamic output_size shape", "[1,3,8,8]", "[?]",
   std::vector<std::int64_t>{2, 2, 2},
   "Number of spatial dimensions is not compatible with input data rank"},
  {"value count, dynamic-rank output_size", "[1,3,8,8]", "...", std::vector<std::int64_t>{2},
   "Number of spatial dimensions is not compatible with input data rank"},
};
// clang-format on

}  // namespace

TEST_CASE("AdaptiveAvgPool-8 shape inference table", "[pool_geometry][adaptive]") {
  for (const auto& c : kAdaptiveCases) {
    INFO("case: " << c.name << " (input " << c.input << ", output_size shape "
                  << c.output_size_shape << ")");
    PoolInference r;
    try {
      r = irrun::infer_adaptive_avg_pool(irrun::parse_partial_shape(c.input),
                                         irrun::parse_partial_shape(c.output_size_shape),
                                         c.output_size);
    } catch (const std::exception& e) {
      FAIL_CHECK("unexpected exception: " << e.what());
      continue;
    }
    CHECK(irrun::to_string(r.output) == c.expected_output);
    // Geometry exists exactly when the input and the output are static and some bin is not
    // empty (an input dim 0 into bins has nothing to average).
    const bool empty_bins = std::string(c.name).rfind("input dim 0 into bins", 0) == 0;
    CHECK(r.empty_bins_axis == (empty_bins ? std::optional<std::size_t>(0) : std::nullopt));
    CHECK(r.geometry.has_value() ==
          (irrun::parse_partial_shape(c.input).is_static() && r.output.is_static() && !empty_bins));
  }
}

TEST_CASE("AdaptiveAvgPool-8 validation", "[pool_geometry][adaptive][validation]") {
  for (const auto& c : kAdaptiveNegativeCases) {
    INFO("case: " << c.name << " (input " << c.input << ", output_size shape "
                  << c.output_size_shape << ")");
    const auto input = irrun::parse_partial_shape(c.input);
    const auto os_shape = irrun::parse_partial_shape(c.output_size_shape);
    check_throws_validation(
        [&] { (void)irrun::infer_adaptive_avg_pool(input, os_shape, c.output_size); }, c.message);
  }
}

TEST_CASE("AdaptiveAvgPool-8 geometry", "[pool_geometry][adaptive]") {
  SECTION("rank 4") {
    auto r = irrun::infer_adaptive_avg_pool(irrun::parse_partial_shape("[2,3,10,20]"),
                                            irrun::parse_partial_shape("[2]"),
                                            std::vector<std::int64_t>{5, 7});
    REQUIRE(r.geometry);
    const auto& g = *r.geometry;
    CHECK(g.adaptive);
    CHECK(g.batch == 2);
    CHECK(g.channels == 3);
    CHECK(g.spatial_rank == 2);
    CHECK(g.in == std::array<std::int64_t, 3>{1, 10, 20});
    CHECK(g.out == std::array<std::int64_t, 3>{1, 5, 7});
    CHECK_FALSE(g.pads_in_avg);
  }
  SECTION("rank 3, output larger than input") {
    auto r = irrun::infer_adaptive_avg_pool(irrun::parse_partial_shape("[1,4,2]"),
                                            irrun::parse_partial_shape("[1]"),
                                            std::vector<std::int64_t>{5});
    REQUIRE(r.geometry);
    const auto& g = *r.geometry;
    CHECK(g.adaptive);
    CHECK(g.spatial_rank == 1);
    CHECK(g.in == std::array<std::int64_t, 3>{1, 1, 2});
    CHECK(g.out == std::array<std::int64_t, 3>{1, 1, 5});
  }
  SECTION("rank 5") {
    auto r = irrun::infer_adaptive_avg_pool(irrun::parse_partial_shape("[1,2,8,9,10]"),
                                            irrun::parse_partial_shape("[3]"),
                                            std::vector<std::int64_t>{2, 3, 4});
    REQUIRE(r.geometry);
    CHECK(r.geometry->adaptive);
    CHECK(r.geometry->spatial_rank == 3);
    CHECK(r.geometry->in == std::array<std::int64_t, 3>{8, 9, 10});
    CHECK(r.geometry->out == std::array<std::int64_t, 3>{2, 3, 4});
  }
  SECTION("no geometry without values or with -1") {
    CHECK_FALSE(irrun::infer_adaptive_avg_pool(irrun::parse_partial_shape("[1,3,8,8]"),
                                               irrun::parse_partial_shape("[2]"), std::nullopt)
                    .geometry);
    CHECK_FALSE(irrun::infer_adaptive_avg_pool(irrun::parse_partial_shape("[1,3,8,8]"),
                                               irrun::parse_partial_shape("[2]"),
                                               std::vector<std::int64_t>{-1, 2})
                    .geometry);
    CHECK_FALSE(irrun::infer_adaptive_avg_pool(irrun::parse_partial_shape("[1,3,?,8]"),
                                               irrun::parse_partial_shape("[2]"),
                                               std::vector<std::int64_t>{2, 2})
                    .geometry);
  }
}

namespace {

struct BinCase {
  std::int64_t in;
  std::int64_t out;
  std::vector<std::int64_t> starts;
  std::vector<std::int64_t> ends;
};

// start = floor(i*I/O), end = ceil((i+1)*I/O).
const std::vector<BinCase> kBinCases = {
    {5, 3, {0, 1, 3}, {2, 4, 5}},
    {2, 5, {0, 0, 0, 1, 1}, {1, 1, 2, 2, 2}},
    {7, 7, {0, 1, 2, 3, 4, 5, 6}, {1, 2, 3, 4, 5, 6, 7}},
    {10, 4, {0, 2, 5, 7}, {3, 5, 8, 10}},
    {1, 3, {0, 0, 0}, {1, 1, 1}},
};

}  // namespace

TEST_CASE("adaptive bins", "[pool_geometry][adaptive]") {
  for (const auto& c : kBinCases) {
    INFO("I=" << c.in << " O=" << c.out);
    for (std::int64_t i = 0; i < c.out; ++i) {
      INFO("i=" << i);
      CHECK(irrun::adaptive_bin_start(i, c.in, c.out) == c.starts[static_cast<std::size_t>(i)]);
      CHECK(irrun::adaptive_bin_end(i, c.in, c.out) == c.ends[static_cast<std::size_t>(i)]);
    }
  }
}

TEST_CASE("pool enum names", "[pool_geometry]") {
  CHECK(irrun::to_string(RoundingType::floor) == "floor");
  CHECK(irrun::to_string(RoundingType::ceil) == "ceil");
  CHECK(irrun::to_string(RoundingType::ceil_torch) == "ceil_torch");
  CHECK(irrun::to_string(AutoPad::explicit_) == "explicit");
  CHECK(irrun::to_string(AutoPad::same_upper) == "same_upper");
  CHECK(irrun::to_string(AutoPad::same_lower) == "same_lower");
  CHECK(irrun::to_string(AutoPad::valid) == "valid");
}

// ------------------------------------------------------------------------------------------------
// MaxPool-1/8/14 and AdaptiveMaxPool-8 (docs/openvino-semantics.md section 6): AvgPool's window
// rules without exclude-pad, plus dilations (v8+), ceil_torch (v14), axis and index type.

namespace {

using irrun::ElementType;

// clang-format off
const std::vector<Case> kMaxPoolCases = {
  {"v1 rank4 floor", 1, {.kernel = {2, 2}, .strides = {2, 2}, .rounding = kFloor}, "[1,3,10,10]",
   "[1,3,5,5]"},
  {"v1 ceil keeps the partial window", 1, {.kernel = {3}, .strides = {2}, .rounding = kCeil},
   "[1,1,8]", "[1,1,4]"},
  {"v1 ignores dilations", 1, {.kernel = {3}, .strides = {1}, .dilations = {2}}, "[1,1,5]",
   "[1,1,3]"},
  {"v1 ignores a dilations list of the wrong size", 1,
   {.kernel = {3}, .strides = {1}, .dilations = {2, 2}}, "[1,1,5]", "[1,1,3]"},
  {"v8 dilations", 8, {.kernel = {3}, .strides = {1}, .dilations = {2}}, "[1,1,8]", "[1,1,4]"},
  {"v8 empty dilations are 1s", 8, {.kernel = {3, 3}, .strides = {1, 1}}, "[1,1,8,8]",
   "[1,1,6,6]"},
  // No exclude-pad rule: a window entirely in padding is fine.
  {"v1 window entirely in padding allowed", 1,
   {.kernel = {2}, .strides = {1}, .pads_begin = {3}, .pads_end = {0}}, "[1,1,4]", "[1,1,6]"},
  {"v8 window entirely in pads_end allowed", 8,
   {.kernel = {1}, .strides = {3}, .pads_end = {1}, .rounding = kCeil}, "[1,1,5]", "[1,1,3]"},
  {"v8 D9 K2 s2 p1/1 ceil", 8,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .rounding = kCeil},
   "[1,1,9]", "[1,1,6]"},
  {"v14 D9 K2 s2 p1/1 ceil_torch", 14,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1}, .pads_end = {1}, .rounding = kCeilTorch},
   "[1,1,9]", "[1,1,5]"},
  {"v14 dilated ceil_torch 100x150", 14,
   {.kernel = {10, 20}, .strides = {2, 3}, .dilations = {2, 2}, .rounding = kCeilTorch},
   "[1,1,100,150]", "[1,1,42,38]"},
  {"v8 same_upper K3 s2", 8, {.kernel = {3}, .strides = {2}, .auto_pad = AutoPad::same_upper},
   "[1,1,7]", "[1,1,4]", Pads{1}, Pads{1}},
  {"v8 same_lower dilated K2 d3 s1", 8,
   {.kernel = {2}, .strides = {1}, .dilations = {3}, .auto_pad = AutoPad::same_lower},
   "[1,1,6]", "[1,1,6]", Pads{2}, Pads{1}},
  {"v14 valid overwrites pads", 14,
   {.kernel = {2}, .strides = {2}, .pads_begin = {3}, .pads_end = {3}, .auto_pad = AutoPad::valid},
   "[1,1,6]", "[1,1,3]", Pads{0}, Pads{0}},
  {"v8 dynamic spatial", 8, {.kernel = {2}, .strides = {2}}, "[?,?,?]", "[?,?,1..]"},
  {"v8 dynamic rank", 8, {.kernel = {2, 2}, .strides = {2, 2}, .axis = 7}, "...", "[?,?,?,?]"},
  {"v8 axis -1 accepted", 8, {.kernel = {2}, .strides = {2}, .axis = -1}, "[1,1,6]", "[1,1,3]"},
  {"v8 axis -3 accepted", 8, {.kernel = {2}, .strides = {2}, .axis = -3}, "[1,1,6]", "[1,1,3]"},
  {"v8 index type i32", 8,
   {.kernel = {2}, .strides = {2}, .index_element_type = ElementType::i32}, "[1,1,6]", "[1,1,3]"},
  // MaxPool-1 has no index type: whatever the attrs say is not checked.
  {"v1 ignores the index type", 1,
   {.kernel = {2}, .strides = {2}, .index_element_type = ElementType::f32, .axis = 9}, "[1,1,6]",
   "[1,1,3]"},
};

const std::vector<NegativeCase> kMaxPoolNegativeCases = {
  // irrun's own rule for MaxPool (OpenVINO only fails when evaluating): first.
  {"v8 index type f32", 8,
   {.kernel = {2}, .strides = {2}, .index_element_type = ElementType::f32}, "[1,1,6]",
   "Index element type must be i32 or i64 (got f32)"},
  {"v14 index type u8 beats the axis", 14,
   {.kernel = {2}, .strides = {2}, .index_element_type = ElementType::u8, .axis = 5}, "[1,1,6]",
   "Index element type must be i32 or i64 (got u8)"},
  // Axis normalisation runs before shape inference.
  {"v8 axis = rank", 8, {.kernel = {2, 2}, .strides = {2, 2}, .axis = 4}, "[1,1,4,4]",
   "Axis 4 out of the tensor rank range [-4, 3]."},
  {"v14 axis below -rank", 14, {.kernel = {2}, .strides = {2}, .axis = -4}, "[1,1,4]",
   "Axis -4 out of the tensor rank range [-3, 2]."},
  {"axis beats pads_begin size", 8,
   {.kernel = {2}, .strides = {2}, .pads_begin = {1, 1}, .axis = 3}, "[1,1,4]",
   "Axis 3 out of the tensor rank range [-3, 2]."},
  {"axis beats rank", 8, {.kernel = {2}, .strides = {2}, .axis = 2}, "[1,3]",
   "Axis 2 out of the tensor rank range [-2, 1]."},
  // Then AvgPool's order.
  {"pads_begin size", 8, {.kernel = {2}, .strides = {2}, .pads_begin = {1, 1}}, "[1,1,4]",
   "Expected pads_begin size to be equal to input size - 2. Got: 2"},
  {"pads_end size", 1, {.kernel = {2, 2}, .strides = {2, 2}, .pads_end = {1}}, "[1,1,4,4]",
   "Expected pads_end size to be equal to input size - 2. Got: 1"},
  {"rank 2", 8, {.kernel = {2}, .strides = {2}}, "[1,3]",
   "Expected a 3D, 4D or 5D tensor for the input. Got: [1,3]"},
  {"rank 6", 1, {.kernel = {2, 2, 2, 2}, .strides = {1, 1, 1, 1}}, "[1,1,4,4,4,4]",
   "Expected a 3D, 4D or 5D tensor for the input. Got: [1,1,4,4,4,4]"},
  {"strides size", 14, {.kernel = {2, 2}, .strides = {2}}, "[1,1,4,4]",
   "Expected strides size to be equal to input size - 2. Got: 1"},
  {"missing strides", 1, {.kernel = {2, 2}}, "[1,1,4,4]",
   "Expected strides size to be equal to input size - 2. Got: 0"},
  {"dilations size (v8)", 8, {.kernel = {2, 2}, .strides = {1, 1}, .dilations = {1}},
   "[1,1,4,4]", "Expected dilations size to be equal to kernel size. Got: 1"},
  {"kernel size", 8, {.kernel = {2}, .strides = {1}}, "[1,1,4,4]",
   "Expected kernel size to be equal to input size - 2. Got: 1"},
  {"strides zero", 1, {.kernel = {2, 2}, .strides = {1, 0}}, "[1,1,4,4]",
   "Strides has zero dimension(s). {1, 0}"},
  {"dilations zero (v14)", 14, {.kernel = {2, 2}, .strides = {1, 1}, .dilations = {0, 1}},
   "[1,1,4,4]", "Kernel dilations has zero dimension(s). {0, 1}"},
  {"ceil_torch v1", 1, {.kernel = {2}, .strides = {2}, .rounding = kCeilTorch}, "[1,1,4]",
   "Rounding CEIL_TORCH is not supported."},
  {"ceil_torch v8", 8, {.kernel = {2}, .strides = {2}, .rounding = kCeilTorch}, "[1,1,4]",
   "Rounding CEIL_TORCH is not supported."},
  {"batch zero", 8, {.kernel = {2}, .strides = {2}}, "[0,1,4]", "Batch size is zero."},
  {"channel zero", 14, {.kernel = {2}, .strides = {2}}, "[1,0,4]", "Channel count is zero."},
  {"kernel larger than padded data", 8,
   {.kernel = {3}, .strides = {1}, .pads_begin = {1}, .dilations = {2}}, "[1,1,3]",
   "Kernel after dilation has size (dim: 5) larger than the data shape after padding (dim: 4) "
   "at axis 0."},
  {"kernel 0", 1, {.kernel = {0}, .strides = {1}}, "[1,1,4]",
   "Kernel after dilation has size (dim: 18446744073709551615) larger than the data shape after "
   "padding (dim: 4) at axis 0."},  {"empty kernel", 8, {.kernel = {}, .strides = {}}, "[1,1,8,8]",
   "Expected kernel size to be equal to input size - 2. Got: 0"},
  {"empty kernel, strides of the input's rank", 14, {.kernel = {}, .strides = {2, 2}},
   "[1,1,8,8]", "Expected strides size to be equal to input size - 2. Got: 2"},
};
// clang-format on

struct IndexAxisCase {
  std::string input;
  std::int64_t axis;
  std::size_t index_axis;
  std::int64_t index_range;
};

const std::vector<IndexAxisCase> kIndexAxisCases = {
    {"[2,3,4,5]", 0, 0, 120},  {"[2,3,4,5]", 1, 1, 60},  {"[2,3,4,5]", 2, 2, 20},
    {"[2,3,4,5]", 3, 3, 5},    {"[2,3,4,5]", -1, 3, 5},  {"[2,3,4,5]", -4, 0, 120},
    {"[2,3,7]", 2, 2, 7},      {"[2,3,7]", -2, 1, 21},   {"[1,2,3,4,5]", 2, 2, 60},
    {"[1,2,3,4,5]", 3, 3, 20}, {"[1,2,3,4,5]", 4, 4, 5},
};

}  // namespace

TEST_CASE("MaxPool shape inference table", "[pool_geometry][max_pool]") {
  for (const auto& c : kMaxPoolCases) {
    check_shape_row(c, irrun::infer_max_pool, [](const PoolInference& r) {
      if (r.geometry) CHECK_FALSE(r.geometry->pads_in_avg);  // padding never counts in a max
    });
  }
}

TEST_CASE("MaxPool validation rules and order", "[pool_geometry][max_pool][validation]") {
  for (const auto& c : kMaxPoolNegativeCases) {
    INFO("case: " << c.name << " (v" << c.version << ", input " << c.input << ")");
    const auto input = irrun::parse_partial_shape(c.input);
    check_throws_validation([&] { (void)irrun::infer_max_pool(c.attrs, c.version, input); },
                            c.message);
  }
}

TEST_CASE("MaxPool geometry: normalised axis and index range", "[pool_geometry][max_pool]") {
  for (const auto& c : kIndexAxisCases) {
    INFO("input " << c.input << " axis " << c.axis);
    const auto input = irrun::parse_partial_shape(c.input);
    PoolAttrs a;
    a.kernel.assign(input.rank() - 2, 1);
    a.strides.assign(input.rank() - 2, 1);
    a.axis = c.axis;
    const auto r = irrun::infer_max_pool(a, 8, input);
    REQUIRE(r.geometry);
    CHECK(r.geometry->index_axis == c.index_axis);
    CHECK(r.geometry->index_range() == c.index_range);
  }
}

TEST_CASE("AdaptiveMaxPool-8 shape inference", "[pool_geometry][adaptive][max_pool]") {
  PoolAttrs a;
  const auto r = irrun::infer_adaptive_max_pool(a, irrun::parse_partial_shape("[2,3,10,20]"),
                                                irrun::parse_partial_shape("[2]"),
                                                std::vector<std::int64_t>{5, 7});
  CHECK(irrun::to_string(r.output) == "[2,3,5,7]");
  REQUIRE(r.geometry);
  CHECK(r.geometry->adaptive);
  CHECK(r.geometry->index_axis == 2);
  CHECK(r.geometry->index_range() == 200);
  a.index_element_type = ElementType::i32;
  CHECK(irrun::to_string(irrun::infer_adaptive_max_pool(a, irrun::parse_partial_shape("[1,3,8]"),
                                                        irrun::parse_partial_shape("[1]"),
                                                        std::nullopt)
                             .output) == "[1,3,?]");
}

TEST_CASE("AdaptiveMaxPool-8 validation", "[pool_geometry][adaptive][max_pool][validation]") {
  const auto sizes = std::vector<std::int64_t>{2, 2};
  PoolAttrs bad;
  bad.index_element_type = ElementType::f16;
  // OpenVINO checks the index type first, then AdaptiveAvgPool's rules.
  check_throws_validation(
      [&] {
        (void)irrun::infer_adaptive_max_pool(bad, irrun::parse_partial_shape("[1,3]"),
                                             irrun::parse_partial_shape("[2]"), sizes);
      },
      "Index element type must be i32 or i64");
  check_throws_validation(
      [&] {
        (void)irrun::infer_adaptive_max_pool(PoolAttrs{}, irrun::parse_partial_shape("[1,3]"),
                                             irrun::parse_partial_shape("[2]"), sizes);
      },
      "Expected a 3D, 4D or 5D tensor for the input. Got: [1,3]");
  check_throws_validation(
      [&] {
        (void)irrun::infer_adaptive_max_pool(PoolAttrs{}, irrun::parse_partial_shape("[1,3,8]"),
                                             irrun::parse_partial_shape("[1]"), sizes);
      },
      "Number of spatial dimensions is not compatible with input data rank");
}
