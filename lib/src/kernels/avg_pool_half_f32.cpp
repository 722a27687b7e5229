// f16 and bf16 AvgPool through the f32 fast kernel: the reference kernel's bits at nearly the f32
// kernel's speed (1.6 times avg_pool_half's, which sums in doubles, on S9's 5x5 windows).
//
// Why it is exact: both types widen to f32 exactly, so the f32 kernel's output y is within an ulp
// (of f32) of the exact average a of the same values, and a zero y has a's sign (its contract).
// Rounded to 16 bits, y gives a's rounding unless a 16-bit midpoint m lies between them or on one
// of them; then y, no further from m than from a, is within an ulp of m. So an output rounds from
// y unless y is within two ulps of a midpoint, or not finite (an inf or NaN in the window, whose
// NaN the reference picks in its own order), or -0, or (f16) below 2^-24 but not 0. Those are
// recomputed as the reference kernel does: the exact sum of the window's 16-bit values over its
// divisor (exact_sum.hpp), rounded once. They are 1-2% of the outputs of 3x3 windows on random
// f16 data, but half of those of 2-tap windows, whose averages are exact in f32 and midpoints
// whenever their values are an odd number of units apart: such pieces go to avg_pool_half.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "../fp_control.hpp"
#include "exact_sum.hpp"
#include "half_endings.hpp"
#include "half_formats.hpp"
#include "half_mean.hpp"
#include "half_pieces.hpp"
#include "irrun/float16.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "kept_plan.hpp"
#include "scratch.hpp"
#include "simd.hpp"
#include "window.hpp"

namespace irrun::kernels {
namespace {

using detail::BF16;
using detail::F16;
using i64 = std::int64_t;

constexpr i64 kChunkBytes = i64{8} << 20;  // scratch of a piece of work, nominally
// Outputs a piece may take as the reference does, at most one in this many; past that, exact
// double sums are cheaper (an output taken so costs some 40 ns, one of avg_pool_half 1.5-3).
constexpr i64 kMostTaken = 32;

double to_double(ElementType type, std::uint16_t h) {
  return type == ElementType::f16 ? f16_bits_to_double(h) : bf16_bits_to_double(h);
}

// x[i] widened to f32 (exact).
void widen(ElementType type, const std::uint16_t* x, i64 n, float* y) {
  for (i64 i = 0; i < n; ++i) y[i] = static_cast<float>(to_double(type, x[i]));
}

template <class F>
__attribute__((target("avx2,fma,f16c"))) void widen_avx2(const std::uint16_t* x, i64 n, float* y) {
  i64 i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, F::to_float8(x + i));
  for (; i < n; ++i) y[i] = static_cast<float>(F::to_double(x[i]));
}

// The 16-bit grid around an f32 value: the f32 ulps a 16-bit step spans there is 2^shift (the
// low `shift` bits of the f32 are below the 16-bit value, and a midpoint has them 100...0).
// f16: 13 bits where f16 is normal (f32 exponent field 113 and up), more below, where its steps
// are 2^-24: 126 - field. Values under 2^-24 (field 102 and below) have none here. bf16: 16.
int grid_shift(ElementType type, std::uint32_t bits) {
  return type == ElementType::bf16 ? 16 : std::max(13, 126 - static_cast<int>(bits >> 23 & 0xFF));
}

// Whether an output v rounds from its f32 value (see above), and to what: the 16-bit value
// nearest v, to even. Not where v is not finite or within two ulps of a 16-bit midpoint, nor -0
// (the reference's zeros are +0), nor (f16) below 2^-24 but not 0, whose rounding is to 0 or
// 2^-24.
bool rounds_from(ElementType type, float v, std::uint16_t& h) {
  const auto bits = std::bit_cast<std::uint32_t>(v);
  const std::uint32_t field = bits >> 23 & 0xFF;
  if (field == 0xFF || bits == 0x80000000u) return false;
  h = type == ElementType::f16 ? f16_bits_from_double(v) : bf16_bits_from_double(v);
  if (type == ElementType::f16 && field <= 102) return bits == 0;
  const int shift = grid_shift(type, bits);
  const std::int64_t low = bits & ((std::uint32_t{1} << shift) - 1);
  const std::int64_t apart = low - (std::int64_t{1} << (shift - 1));  // from the midpoint
  return apart < -2 || apart > 2;
}

// y[i] = the 16-bit value of x[i] where it rounds from it; the others' offsets i go to
// later[0, count), count returned (later holds n).
i64 narrow(ElementType type, const float* x, i64 n, std::uint16_t* y, std::int32_t* later) {
  i64 count = 0;
  for (i64 i = 0; i < n; ++i)
    if (!rounds_from(type, x[i], y[i])) later[count++] = static_cast<std::int32_t>(i);
  return count;
}

// The set lanes of each 8-bit mask, in order, as bytes: the offsets a vector of outputs appends.
constexpr auto kLanes = [] {
  std::array<std::uint64_t, 256> lanes{};
  for (unsigned m = 0; m < 256; ++m)
    for (unsigned k = 0, at = 0; k < 8; ++k)
      if (m >> k & 1) lanes[m] |= std::uint64_t{k} << (8 * at++);
  return lanes;
}();

// The same, eight a vector; the offsets appended without a branch (one an output to take as the
// reference does cost ten times the rest), eight at a time (before the vector at i, the count is
// at most i: they stay within n).
template <class F>
__attribute__((target("avx2,fma,f16c"))) i64 narrow_avx2(const float* x, i64 n, std::uint16_t* y,
                                                         std::int32_t* later) {
  constexpr bool f16 = std::is_same_v<F, F16>;
  const __m256i one = _mm256_set1_epi32(1), ff = _mm256_set1_epi32(0xFF);
  i64 i = 0, count = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i field = _mm256_and_si256(_mm256_srli_epi32(bits, 23), ff);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i), F::from_float8(v));
    __m256i shift = _mm256_set1_epi32(16), tiny = _mm256_setzero_si256();  // bf16
    if constexpr (f16) {  // tiny: f16 values below 2^-24, zeros included
      shift =
          _mm256_max_epi32(_mm256_set1_epi32(13), _mm256_sub_epi32(_mm256_set1_epi32(126), field));
      tiny = _mm256_cmpgt_epi32(_mm256_set1_epi32(103), field);
    }
    // Within two f32 ulps of the midpoint (2^(shift - 1) in the low bits), but for tiny values
    // (whose shifts, past 23, mean nothing): those but +0, -0, inf and NaN are taken as the
    // reference does.
    const __m256i step = _mm256_sllv_epi32(one, shift);
    const __m256i low = _mm256_and_si256(bits, _mm256_sub_epi32(step, one));
    const __m256i apart = _mm256_sub_epi32(low, _mm256_srli_epi32(step, 1));
    const __m256i near = _mm256_cmpgt_epi32(_mm256_set1_epi32(3), _mm256_abs_epi32(apart));
    const __m256i plus_zero = _mm256_cmpeq_epi32(bits, _mm256_setzero_si256());
    const __m256i minus_zero = _mm256_cmpeq_epi32(bits, _mm256_set1_epi32(INT32_MIN));
    const __m256i special = _mm256_or_si256(_mm256_cmpeq_epi32(field, ff), minus_zero);
    const __m256i take =
        _mm256_or_si256(_mm256_andnot_si256(tiny, near), _mm256_andnot_si256(plus_zero, tiny));
    const auto mask = static_cast<unsigned>(
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_or_si256(take, special))));
    const __m256i lanes =
        _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(kLanes[mask])));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(later + count),
                        _mm256_add_epi32(lanes, _mm256_set1_epi32(static_cast<int>(i))));
    count += std::popcount(mask);
  }
  const i64 tail =
      narrow(f16 ? ElementType::f16 : ElementType::bf16, x + i, n - i, y + i, later + count);
  for (i64 k = count; k < count + tail; ++k) later[k] += static_cast<std::int32_t>(i);
  return count + tail;
}

// The same sixteen a vector on AVX-512, the offsets compressed in a register (to memory, Zen 4
// takes over a hundred cycles); the rest to narrow_avx2.
template <class F>
IRRUN_AVX512 i64 narrow_avx512(const float* x, i64 n, std::uint16_t* y, std::int32_t* later) {
  constexpr bool f16 = std::is_same_v<F, F16>;
  const __m512i one = _mm512_set1_epi32(1), ff = _mm512_set1_epi32(0xFF);
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  i64 i = 0, count = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m512i bits = _mm512_castps_si512(v);
    const __m512i field = _mm512_and_si512(_mm512_srli_epi32(bits, 23), ff);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i), F::from_float16(v));
    __m512i shift = _mm512_set1_epi32(16);
    __mmask16 tiny = 0;
    if constexpr (f16) {
      shift =
          _mm512_max_epi32(_mm512_set1_epi32(13), _mm512_sub_epi32(_mm512_set1_epi32(126), field));
      tiny = _mm512_cmplt_epi32_mask(field, _mm512_set1_epi32(103));
    }
    const __m512i step = _mm512_sllv_epi32(one, shift);
    const __m512i low = _mm512_and_si512(bits, _mm512_sub_epi32(step, one));
    const __m512i apart = _mm512_sub_epi32(low, _mm512_srli_epi32(step, 1));
    const __mmask16 near = _mm512_cmplt_epi32_mask(_mm512_abs_epi32(apart), _mm512_set1_epi32(3));
    const __mmask16 plus_zero = _mm512_cmpeq_epi32_mask(bits, _mm512_setzero_si512());
    const __mmask16 special = _mm512_cmpeq_epi32_mask(field, ff) |
                              _mm512_cmpeq_epi32_mask(bits, _mm512_set1_epi32(INT32_MIN));
    const auto take = static_cast<__mmask16>((near & ~tiny) | (tiny & ~plus_zero) | special);
    const __m512i at = _mm512_add_epi32(iota, _mm512_set1_epi32(static_cast<int>(i)));
    _mm512_storeu_si512(later + count, _mm512_maskz_compress_epi32(take, at));
    count += std::popcount(static_cast<unsigned>(take));
  }
  const i64 tail = narrow_avx2<F>(x + i, n - i, y + i, later + count);
  for (i64 k = count; k < count + tail; ++k) later[k] += static_cast<std::int32_t>(i);
  return count + tail;
}

// x / d for x below 2^31 (a piece's outputs, see plan_pieces), without a division: (x + 1/2) / d
// is at least 1/(2d) from an integer, and x + 1/2 times 1/d, both rounded, errs by less than
// (x + 1/2) / d * 2^-52, below that.
struct Quotient {
  std::uint32_t d;
  double inverse;
  explicit Quotient(i64 divisor) : d(static_cast<std::uint32_t>(divisor)), inverse(1.0 / d) {}
  std::uint32_t operator()(std::uint32_t x) const {
    return static_cast<std::uint32_t>((x + 0.5) * inverse);
  }
};

// The reference kernel's 16-bit values of the outputs `later` of a piece (avg_pool.cpp), from
// its inputs widened to f32 (xs). The reference rounds mean_of(exact sum, divisor) to 16 bits;
// f16 sums of up to 2^13 values are exact in plain doubles (avg_pool_half.cpp), others in
// exact_sum's pair of TwoSums but for rare cancellations and inf or NaN (exact_mean_replayed).
// The exact sums end as avg_pool_half's do (half_endings.hpp), a block at a time, where their
// divisors are below 2^40 and (bf16) their averages normal floats; the rest by mean_of.
template <class F>
void as_reference(const PoolGeometry& g, const float* xs, const std::vector<std::uint32_t>& later,
                  const Parallel& par, bool avx2, std::uint16_t* y) {
  constexpr bool f16 = std::is_same_v<F, F16>;
  constexpr i64 kBlock = 64;
  const auto axes = detail::axis_windows(g);
  const bool full_kernel_divisor = !g.adaptive && g.pads_in_avg;
  const detail::Divisor volume = detail::volume_divisor(g.kernel.data());
  const Quotient by_plane(g.out_plane_size()), by_row(g.out[2]), by_height(g.out[1]);
  par.for_range(static_cast<i64>(later.size()), [&](i64 b, i64 e) {
    // A block's windows (their rows fetched ahead: they are scattered over the piece), and its
    // exact sums to end together: sums, divisors, inverses, outputs, values.
    std::array<std::uint32_t, 4> where[kBlock];  // plane, D, H, W
    double s[kBlock], n[kBlock], r[kBlock];
    std::uint32_t at[kBlock];
    std::uint16_t h[kBlock];
    for (i64 k0 = b; k0 < e; k0 += kBlock) {
      const i64 k1 = std::min(e, k0 + kBlock);
      for (i64 k = k0; k < k1; ++k) {
        const std::uint32_t o = later[static_cast<std::size_t>(k)];
        const std::uint32_t plane_at = by_plane(o), p = o - plane_at * by_plane.d;
        const std::uint32_t row = by_row(p), d = by_height(row);
        where[k - k0] = {plane_at, d, row - d * by_height.d, p - row * by_row.d};
        const float* plane = xs + plane_at * g.in_plane_size();
        detail::Window(axes, g, where[k - k0][1], where[k - k0][2], where[k - k0][3])
            .for_each_row([&](i64 first, i64 length, i64 step) {
              __builtin_prefetch(plane + first);
              __builtin_prefetch(plane + first + (length - 1) * step);
            });
      }
      i64 count = 0;
      for (i64 k = k0; k < k1; ++k) {
        const std::uint32_t o = later[static_cast<std::size_t>(k)];
        const auto [plane_at, wd, wh, ww] = where[k - k0];
        const detail::Window window(axes, g, wd, wh, ww);
        const float* plane = xs + plane_at * g.in_plane_size();
        const i64 taps = window.taps();
        if (taps == 0) {  // the reference's +0
          y[o] = 0;
          continue;
        }
        const detail::Divisor div = full_kernel_divisor ? volume : detail::Divisor(taps);
        const auto for_each_value = [&](const auto& f) {
          window.for_each_value(
              plane, [](float v) { return static_cast<double>(v); }, f);
        };
        double hi = 0.0, lo = 0.0;
        bool exact;
        if (f16 && taps <= i64{1} << 13) {
          window.for_each_row([&](i64 first, i64 length, i64 step) {
            double row_sum = 0.0;  // a chain a row: rows overlap
            for (i64 t = 0; t < length; ++t) row_sum += plane[first + t * step];
            hi += row_sum;
          });
          exact = std::isfinite(hi);  // else an inf or NaN, which the replay orders
        } else {
          exact = detail::exact_sum(for_each_value, hi, lo);
        }
        if (!exact) {
          y[o] = detail::round_mean<F>(detail::exact_mean_replayed(for_each_value, div), false,
                                       for_each_value, div);
        } else if (lo == 0 && div.hi < 0x1p40 &&
                   (f16 || hi == 0 || std::abs(hi) >= div.hi * 0x1p-126)) {
          s[count] = hi;
          n[count] = div.hi;
          r[count] = count > 0 && n[count - 1] == div.hi ? r[count - 1] : detail::inverse(div.hi);
          at[count++] = o;
        } else {
          y[o] = detail::round_mean<F>(detail::mean_of(hi, lo, div), false, for_each_value, div);
        }
      }
      detail::end_outputs<F>(s, n, r, count, avx2, h);
      for (i64 k = 0; k < count; ++k) y[at[k]] = h[k];
    }
  });
}

// Whether every window's divisor is a power of 2 (2x2 windows, say): averages of 16-bit values
// are then exact in f32, and often 16-bit midpoints (half of 2-tap ones and a quarter of 4-tap
// ones on random data). Kept for the thread's last geometry (kept_plan.hpp): the windows' tables
// and a libgcc call a window (std::has_single_bit without POPCNT in the build's target) took 35%
// of a piece of 16384 outputs.
struct PowersOfTwo {
  PoolGeometry g;
  Isa isa = Isa::best;
  bool all = false;
  std::size_t table_bytes() const { return 0; }
};

bool divisors_powers_of_two(const PoolGeometry& g) {
  const auto power_of_two = [](i64 n) { return n > 0 && (n & (n - 1)) == 0; };
  if (!g.adaptive && g.pads_in_avg)
    return std::all_of(g.kernel.begin(), g.kernel.end(), power_of_two);
  return detail::kept_plan<PowersOfTwo>(
             g, Isa::best,
             [&](PowersOfTwo& p) {
               const auto axes = detail::axis_windows(g);
               p.all = std::all_of(axes.begin(), axes.end(), [&](const detail::AxisWindows& a) {
                 return std::all_of(a.taps.begin(), a.taps.end(),
                                    [&](i64 taps) { return taps == 0 || power_of_two(taps); });
               });
               return true;
             })
      ->all;
}

}  // namespace

bool avg_pool_half_f32(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par,
                       Isa isa, std::int64_t chunk_bytes, bool switch_to_sums) {
  if (in.type != ElementType::f16 && in.type != ElementType::bf16) return false;
  if (out.type != in.type || !avg_pool_fast_covers(ElementType::f32, g)) return false;
  if (g.planes() * g.out_plane_size() == 0) return true;
  // Scratch: an f32 and an index (`marks`) an output.
  const auto plan = detail::plan_pieces(g, 8, chunk_bytes > 0 ? chunk_bytes : kChunkBytes);
  // Adaptive bins follow from the whole axis: no bands of them. A piece's outputs are counted in
  // 32 bits (a budget past 16 GiB, tests' only, could pass that).
  if (!plan || (g.adaptive && !plan->whole)) return false;
  const std::size_t a = 3 - g.spatial_rank;
  const i64 row_out = g.out_plane_size() / g.out[a];
  if (plan->planes * plan->rows * row_out >= i64{1} << 31) return false;

  const irrun::detail::FpScope ieee;  // IEEE defaults (fp_control.hpp): no DAZ on bf16 subnormals
  const bool avx2 = isa != Isa::portable && detail::cpu_has_f16c();
  const bool avx512 = avx2 && isa == Isa::best && detail::cpu_has_avx512();
  const bool f16 = in.type == ElementType::f16;
  i64 (*const vector_narrow)(const float*, i64, std::uint16_t*, std::int32_t*) =
      !avx2    ? nullptr
      : avx512 ? (f16 ? narrow_avx512<F16> : narrow_avx512<BF16>)
               : (f16 ? narrow_avx2<F16> : narrow_avx2<BF16>);
  const auto* x = in.data<std::uint16_t>();
  auto* y = out.mutable_data<std::uint16_t>();
  // The piece's inputs and outputs in f32, and its outputs to take as the reference does: each
  // range of the narrowing's offsets in `marks` (a range of outputs has room for its own), then
  // all of them in `later`.
  const detail::PieceCopies<std::int32_t> copies(detail::Slot::avg_half_f32, g, *plan, true);
  float* const xs = copies.xs;
  float* const ys = copies.ys;
  std::int32_t* const marks = copies.extra;
  std::vector<std::pair<i64, i64>> ranges;  // first output, offsets
  std::mutex ranges_mutex;
  std::vector<std::uint32_t> later;
  // Pieces go to avg_pool_half first (for many midpoints, below).
  bool sums = switch_to_sums && divisors_powers_of_two(g);
  detail::for_each_piece(g, *plan, [&](const detail::Piece& pc) {
    if (pc.r0 == pc.r1) {  // every window is padding: the reference's +0
      std::fill_n(y + pc.out_at, pc.n_out, 0);
      return;
    }
    // The piece in 16 bits, for avg_pool_half.
    const Tensor x16 = Tensor::wrap(in.type, pc.in_shape, x + pc.in_at);
    Tensor y16 = Tensor::wrap(in.type, pc.out_shape, y + pc.out_at);
    if (sums && avg_pool_half(x16, y16, pc.g, par, isa)) return;
    const Tensor xc = Tensor::wrap(ElementType::f32, pc.in_shape, xs);
    Tensor yc = Tensor::wrap(ElementType::f32, pc.out_shape, ys);
    par.for_range(pc.n_in, [&](i64 b, i64 e) {
      if (!avx2)
        widen(in.type, x + pc.in_at + b, e - b, xs + b);
      else
        (f16 ? widen_avx2<F16> : widen_avx2<BF16>)(x + pc.in_at + b, e - b, xs + b);
    });
    if (!avg_pool_fast(xc, yc, pc.g, par, isa))
      throw std::logic_error("avg_pool_half_f32: a piece the f32 kernel does not cover");
    ranges.clear();
    par.for_range(pc.n_out, [&](i64 b, i64 e) {
      std::uint16_t* yp = y + pc.out_at + b;
      std::int32_t* at = marks + b;
      const i64 count = vector_narrow ? vector_narrow(ys + b, e - b, yp, at)
                                      : narrow(in.type, ys + b, e - b, yp, at);
      const std::lock_guard lock(ranges_mutex);
      ranges.emplace_back(b, count);
    });
    later.clear();
    for (const auto& [b, count] : ranges)
      for (i64 k = 0; k < count; ++k)
        later.push_back(static_cast<std::uint32_t>(b + marks[static_cast<std::size_t>(b + k)]));
    // Many midpoints (averages of 2^k values, whose f32 value is exact, often are one): the
    // piece, and the next ones, take exact double sums where avg_pool_half covers them.
    sums = switch_to_sums && static_cast<i64>(later.size()) * kMostTaken > pc.n_out;
    if (!sums || !avg_pool_half(x16, y16, pc.g, par, isa))
      (f16 ? as_reference<F16> : as_reference<BF16>)(pc.g, xs, later, par, avx2, y + pc.out_at);
  });
  return true;
}

}  // namespace irrun::kernels
