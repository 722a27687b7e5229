// The f16 and bf16 AvgPool kernel: the reference kernel's bits at a fraction of its cost per tap.
//
// Why it can be exact: a 16-bit float is an integer multiple of the quantum of the smallest
// exponent among the values, and below twice the largest one's power of two. A sum of n values,
// and every partial sum in any order, is then held by a double exactly when n times their ratio,
// n * 2^(span + 1 + mantissa bits), is at most 2^53 (sums_exact). For f16 that always holds for
// n up to 2^13 (its 30 exponents span 29, with 10 mantissa bits); for bf16 (7 mantissa bits but
// 254 exponents) the values the windows read are scanned first. The reference kernel's result
// depends on the exact sum alone (exact_sum.hpp), so this kernel may add in the cheapest order:
// the W taps of every input row once, then those row sums over each window's D and H taps. It
// ends each output as the reference does (mean_of of the exact sum, rounded to 16 bits: with one
// double's sum and a divisor below 2^40, that double rounds as the exact average does).
// A plane whose W sums do not fit the per-thread buffer goes in bands of output rows, each with
// the W sums of the input rows it reads. Not covered (the reference kernel runs): windows of more
// than 2^13 taps, input rows or single output rows too wide for the buffers, an inf or NaN in an
// input row some window reads (the reference returns the first NaN in its own order), and bf16
// values whose exponents span too far for exact sums.
#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "../fp_control.hpp"
#include "exact_sum.hpp"
#include "half_endings.hpp"
#include "half_formats.hpp"
#include "irrun/float16.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "kept_plan.hpp"
#include "scratch.hpp"
#include "simd.hpp"
#include "window.hpp"

namespace irrun::kernels {
namespace {

using i64 = std::int64_t;

constexpr i64 kMaxExactTaps = i64{1} << 13;       // f16's bound (see above), for both
constexpr i64 kMaxScratchDoubles = i64{1} << 19;  // per thread: 4 MiB
constexpr i64 kWidenDoubles = 4096;               // input rows widened at a time, at least
constexpr i64 kEndOutputs = 256;                  // outputs ended at a time, at least,
constexpr i64 kMostEnded = 4096;                  // and at most (a row's, when up to this)
constexpr double kWorkPerTap = 16;                // values walked per reference tap, at most,
constexpr double kWorkAnyway = 1 << 20;           // once past this many (a fraction of a ms)

using detail::BF16;
using detail::end_outputs;
using detail::F16;
using detail::inverse;

// The exponent fields of values: the largest, and the smallest among nonzero values (a
// subnormal's counted as the smallest normal's: both are multiples of the same quantum). lo > hi
// when all are zero. Signed, for SSE2's 16-bit min and max (the fields are below 0x7FFF).
struct Exponents {
  std::int16_t lo = 0x7FFF, hi = 0;
  void join(const Exponents& o) {
    lo = std::min(lo, o.lo);
    hi = std::max(hi, o.hi);
  }
};

template <class F>
Exponents exponents(const std::uint16_t* x, i64 n, Exponents e = {}) {
  for (i64 i = 0; i < n; ++i) {
    const auto field = static_cast<std::int16_t>(x[i] & F::exponent_mask);
    e.hi = std::max(e.hi, field);
    if ((x[i] & 0x7FFF) != 0) e.lo = std::min(e.lo, std::max(field, F::smallest_normal));
  }
  return e;
}

// The same, sixteen values a vector (the compiler keeps the scalar loop's branches).
template <class F>
__attribute__((target("avx2,fma,f16c"))) Exponents exponents_avx2(const std::uint16_t* x, i64 n) {
  const __m256i mask = _mm256_set1_epi16(F::exponent_mask), magnitude = _mm256_set1_epi16(0x7FFF);
  const __m256i smallest = _mm256_set1_epi16(F::smallest_normal);
  __m256i lo = magnitude, hi = _mm256_setzero_si256();
  i64 i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i field = _mm256_and_si256(v, mask);
    const __m256i zero = _mm256_cmpeq_epi16(_mm256_and_si256(v, magnitude), _mm256_setzero_si256());
    hi = _mm256_max_epi16(hi, field);
    // A zero's field made 0x7FFF, which no minimum keeps.
    lo = _mm256_min_epi16(
        lo, _mm256_or_si256(_mm256_max_epi16(field, smallest), _mm256_and_si256(zero, magnitude)));
  }
  alignas(32) std::int16_t l[16], h[16];
  _mm256_store_si256(reinterpret_cast<__m256i*>(l), lo);
  _mm256_store_si256(reinterpret_cast<__m256i*>(h), hi);
  Exponents e;
  for (int k = 0; k < 16; ++k) e.join({l[k], h[k]});
  return exponents<F>(x + i, n - i, e);
}

template <class F>
Exponents exponents_portable(const std::uint16_t* x, i64 n) {
  return exponents<F>(x, n);
}

// Whether sums of up to max_taps of such values are exact in a double (see above): no inf or
// NaN, and max_taps * 2^(span + 1 + mantissa bits) at most 2^53.
template <class F>
bool sums_exact(const Exponents& e, i64 max_taps) {
  if (e.hi == F::exponent_mask) return false;
  if (e.lo > e.hi) return true;
  const int span = (e.hi - e.lo) >> F::mantissa_bits;
  const int taps_bits = std::bit_width(static_cast<std::uint64_t>(max_taps - 1));
  return taps_bits + span + 1 + F::mantissa_bits <= 53;
}

// Whether every nonzero average of such values, of at most n_max taps, is a normal float
// (finish_avx2 needs it): the quantum of the least exponent over n_max at least 2^-126. Always
// for f16.
template <class F>
bool normal_averages(const Exponents& e, double n_max) {
  if (e.lo > e.hi) return true;
  const int quantum = (e.lo >> F::mantissa_bits) - F::exponent_bias - F::mantissa_bits;
  return std::ldexp(1.0, quantum) / n_max >= 0x1p-126;
}

// x[i] as doubles (exact).
template <class F>
__attribute__((target("avx2,fma,f16c"))) void widen_avx2(const std::uint16_t* x, i64 n, double* d) {
  i64 i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 f = F::to_float8(x + i);
    _mm256_storeu_pd(d + i, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
    _mm256_storeu_pd(d + i + 4, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
  }
  for (; i < n; ++i) d[i] = F::to_double(x[i]);
}

// lo += x[0, 4), hi += x[4, 8), as doubles.
template <class F>
__attribute__((target("avx2,fma,f16c"), always_inline)) inline void add8_avx2(
    const std::uint16_t* x, __m256d& lo, __m256d& hi) {
  const __m256 f = F::to_float8(x);
  lo = _mm256_add_pd(lo, _mm256_cvtps_pd(_mm256_castps256_ps128(f)));
  hi = _mm256_add_pd(hi, _mm256_cvtps_pd(_mm256_extractf128_ps(f, 1)));
}

// The sum of x[0, n) (exact, as any sum here): four chains of four lanes, so that the adds run
// at their throughput rather than their latency.
template <class F>
__attribute__((target("avx2,fma,f16c"))) double sum_avx2(const std::uint16_t* x, i64 n) {
  __m256d a0 = _mm256_setzero_pd(), a1 = a0, a2 = a0, a3 = a0;
  i64 i = 0;
  for (; i + 16 <= n; i += 16) {
    add8_avx2<F>(x + i, a0, a1);
    add8_avx2<F>(x + i + 8, a2, a3);
  }
  if (i + 8 <= n) {
    add8_avx2<F>(x + i, a0, a1);
    i += 8;
  }
  const __m256d v = _mm256_add_pd(_mm256_add_pd(a0, a1), _mm256_add_pd(a2, a3));
  const __m128d h = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  double s = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
  for (; i < n; ++i) s += F::to_double(x[i]);
  return s;
}

template <class F>
double sum_portable(const std::uint16_t* x, i64 n) {
  double s = 0.0;
  for (i64 i = 0; i < n; ++i) s += F::to_double(x[i]);
  return s;
}

template <class F>
void widen_portable(const std::uint16_t* x, i64 n, double* d) {
  for (i64 i = 0; i < n; ++i) d[i] = F::to_double(x[i]);
}

// Output rows [od0, od1) x [oh0, oh1) of a plane and the input rows they read, D rows [d.first,
// d.second] x H rows [h.first, h.second]: their W sums are what a band keeps.
struct Band {
  i64 od0, od1, oh0, oh1;
  std::pair<i64, i64> d, h;
  i64 rows() const {
    return std::max<i64>(0, d.second - d.first + 1) * std::max<i64>(0, h.second - h.first + 1);
  }
};

// The tables of a geometry, which a thread keeps for its next call (kept_plan.hpp): rebuilding
// them took some 90% of a call on long rows of few planes (a 1-D sequence in bands of 2^14
// outputs: 20 ns an output, against 1.4 ns over 64 planes; bench/HISTORY.md, round 62).
struct Layout {
  PoolGeometry g;
  Isa isa = Isa::best;
  std::array<detail::AxisWindows, 3> ax;
  i64 max_taps = 1;  // 0: no window has a tap (no other tables are made)
  bool full_kernel_divisor = false;
  double kernel_volume = 0, kernel_inverse = 0;
  bool avx2 = false;  // the CPU has AVX2, FMA and F16C
  // The input D and H rows some window reads, and whether that is all of them (strides past
  // the kernel leave rows between windows, which a band then skips).
  std::vector<char> read_d, read_h;
  std::vector<std::pair<i64, i64>> h_runs;     // the runs [h0, h1) of H rows read
  std::vector<std::pair<i64, i64>> scan_runs;  // the same, each within a widened chunk's values
  bool read_all = false;
  // w_four[ow]: 1 or 2 when outputs ow..ow+3 have windows of as many taps, each that many taps
  // after the last; else 0.
  std::vector<char> w_four;
  std::vector<double> w_taps;     // the W taps of each output's window, at least 1
  std::vector<double> w_inverse;  // inverse(w_taps)
  std::vector<i64> w_empty;       // w_empty[ow]: outputs before ow whose W windows have no tap
  bool global = false;            // one window over the whole plane
  // Per thread: input rows widened at a time, outputs ended at a time, and the most W sums of a
  // band (the bands of a plane).
  i64 chunk = 0, ends = 0, band_sums = 0;
  std::vector<Band> bands;

  std::size_t table_bytes() const {
    std::size_t bytes = 0;
    for (const auto& a : ax) bytes += detail::vector_bytes(a.first, a.taps);
    return bytes + detail::vector_bytes(read_d, read_h, h_runs, scan_runs, w_four, w_taps,
                                        w_inverse, w_empty, bands);
  }
};

std::vector<char> four_in_step(const detail::AxisWindows& a) {
  std::vector<char> four(a.first.size(), 0);
  for (std::size_t o = 0; a.step == 1 && o + 4 <= four.size(); ++o) {
    const i64 apart = a.first[o + 1] - a.first[o];
    bool in_step = apart == 1 || apart == 2;
    for (std::size_t j = 1; j < 4; ++j)
      in_step = in_step && a.taps[o + j] == a.taps[o] &&
                a.first[o + j] == a.first[o] + apart * static_cast<i64>(j);
    four[o] = static_cast<char>(in_step ? apart : 0);
  }
  return four;
}

// Four doubles, for sums the compiler makes one AVX vector or two SSE2 ones.
using Double4 = double __attribute__((vector_size(32)));
// Four doubles at any address of a double (a packed struct: clang keeps a vector typedef's own
// alignment, and UBSan holds loads to it).
struct __attribute__((packed, may_alias)) Double4Unaligned {
  Double4 v;
};

// Windows of consecutive taps (no dilation) as spans, so that the cost is the axis's, not its
// taps' (windows of 8000 rows a row apart would mark each row 8000 times). Windows start in
// order along an axis, so rows below the furthest end so far are marked already.
std::vector<char> rows_read(const detail::AxisWindows& a, i64 in) {
  std::vector<char> read(static_cast<std::size_t>(in), 0);
  i64 marked = 0;  // rows [first of this window, marked) are marked
  for (std::size_t o = 0; o < a.first.size(); ++o) {
    if (a.taps[o] == 0) continue;
    if (a.step == 1) {
      const i64 end = a.first[o] + a.taps[o];
      for (i64 r = std::max(a.first[o], marked); r < end; ++r)
        read[static_cast<std::size_t>(r)] = 1;
      marked = std::max(marked, end);
    } else {
      for (i64 t = 0; t < a.taps[o]; ++t)
        read[static_cast<std::size_t>(a.first[o] + t * a.step)] = 1;
    }
  }
  return read;
}

// The runs [r0, r1) of rows read, each of at most `most` rows.
std::vector<std::pair<i64, i64>> read_runs(const std::vector<char>& read, i64 most) {
  std::vector<std::pair<i64, i64>> runs;
  const auto n = static_cast<i64>(read.size());
  // memchr: rows far apart (strides past the kernel) leave long stretches to skip.
  const auto next = [&](i64 from, char value) {
    const void* at = std::memchr(read.data() + from, value, static_cast<std::size_t>(n - from));
    return at ? static_cast<const char*>(at) - read.data() : n;
  };
  for (i64 r0 = next(0, 1); r0 < n; r0 = next(r0, 1)) {
    const i64 end = next(r0, 0);
    for (; r0 < end; r0 = std::min(end, r0 + most)) runs.emplace_back(r0, std::min(end, r0 + most));
  }
  return runs;
}

// Widens s, the input rows [lo, hi] along one axis that some outputs read ({0, -1}: none), to
// those output o reads too.
void extend(std::pair<i64, i64>& s, const detail::AxisWindows& a, i64 o) {
  const auto k = static_cast<std::size_t>(o);
  if (a.taps[k] == 0) return;
  const i64 last = a.first[k] + (a.taps[k] - 1) * a.step;
  s.first = s.second < s.first ? a.first[k] : std::min(s.first, a.first[k]);
  s.second = std::max(s.second, last);
}

// The input rows [lo, hi] along one axis that outputs [o0, o1) read ({0, -1}: none).
std::pair<i64, i64> span(const detail::AxisWindows& a, i64 o0, i64 o1) {
  std::pair<i64, i64> s{0, -1};
  for (i64 o = o0; o < o1; ++o) extend(s, a, o);
  return s;
}

Band band(const Layout& l, i64 od0, i64 od1, i64 oh0, i64 oh1) {
  return {od0, od1, oh0, oh1, span(l.ax[0], od0, od1), span(l.ax[1], oh0, oh1)};
}

// One band of a plane: x (the plane's 16-bit inputs) -> rows (W sums of the band's input rows, via
// xs, a chunk of input rows widened to doubles) -> finish (sums and divisors of outputs to end) ->
// y (the plane's outputs). fast_end: finish_avx2 may end the outputs (normal_averages).
template <class F>
__attribute__((always_inline)) inline void pool_band(const Layout& l, const Band& b,
                                                     const std::uint16_t* x, double* xs, i64 chunk,
                                                     double* rows, double* finish, i64 ends,
                                                     bool fast_end, std::uint16_t* y) {
  const PoolGeometry& g = l.g;
  const auto &ad = l.ax[0], &ah = l.ax[1],
             &aw = l.ax[2];  // not a structured binding: clang 14 lambdas cannot capture one
  const i64 IH = g.in[1], IW = g.in[2], OH = g.out[1], OW = g.out[2];
  const i64 band_h = b.h.second - b.h.first + 1;
  const auto widen = l.avx2 ? widen_avx2<F> : widen_portable<F>;
  // W sums of R input rows at once: R independent chains of additions (one chain per window is
  // bound by the latency of each add, and a global pool's rows have a single window).
  // Four windows one or two taps apart (strides 1 and 2) sum as vectors of four: a tap's four
  // values are consecutive, or the even ones of seven.
  const auto w_sums = [&]<int R>(const double* xr0, double* out) {
    for (i64 ow = 0; ow < OW;) {
      const auto w = static_cast<std::size_t>(ow);
      const double* xr = xr0 + aw.first[w];
      if (const int apart = l.w_four[w]) {
        Double4 s[R];
        for (int k = 0; k < R; ++k) s[k] = Double4{0.0, 0.0, 0.0, 0.0};  // not `= {}`: rep stos
        for (i64 t = 0; t < aw.taps[w]; ++t)
          for (int k = 0; k < R; ++k) {
            const double* p = xr + k * IW + t;
            Double4 v = reinterpret_cast<const Double4Unaligned*>(p)->v;
            if (apart == 2) {  // p[3..6]: p[7] may be past the row
              const Double4 odd = reinterpret_cast<const Double4Unaligned*>(p + 3)->v;
              v = __builtin_shufflevector(v, odd, 0, 2, 5, 7);
            }
            s[k] += v;
          }
        for (int k = 0; k < R; ++k)
          reinterpret_cast<Double4Unaligned*>(out + k * OW + ow)->v = s[k];
        ow += 4;
        continue;
      }
      double s[R];
      for (int k = 0; k < R; ++k) s[k] = 0.0;
      for (i64 t = 0; t < aw.taps[w]; ++t)
        for (int k = 0; k < R; ++k) s[k] += xr[k * IW + t * aw.step];
      for (int k = 0; k < R; ++k) out[k * OW + ow] = s[k];
      ++ow;
    }
  };
  // The band's input rows as runs consecutive in memory: one run when the band reads every H
  // row (its D rows follow each other), else a run per D row. Each widened a chunk at a time.
  const bool every_h = b.h.first == 0 && band_h == IH;
  const i64 runs = every_h ? 1 : b.d.second - b.d.first + 1;
  const i64 run_rows = every_h ? b.rows() : band_h;
  for (i64 q = 0; q < runs && b.rows() > 0; ++q) {
    const std::uint16_t* src = x + ((b.d.first + q) * IH + b.h.first) * IW;
    double* out = rows + q * band_h * OW;
    // Stretches [r0, r1) of the run's rows read; their W sums alone are kept (the others are
    // never used).
    const auto stretch = [&](i64 r0, i64 r1) __attribute__((always_inline)) {
      for (i64 c0 = r0; c0 < r1; c0 += chunk) {
        const i64 c = std::min(chunk, r1 - c0);
        widen(src + c0 * IW, c * IW, xs);
        i64 r = 0;
        for (; r + 4 <= c; r += 4) w_sums.template operator()<4>(xs + r * IW, out + (c0 + r) * OW);
        for (; r < c; ++r) w_sums.template operator()<1>(xs + r * IW, out + (c0 + r) * OW);
      }
    };
    if (l.read_all) {
      stretch(0, run_rows);
      continue;
    }
    // The read H runs of each read D row of the run (a row at a time, rows far apart cost some
    // ns each: 0.1 ms of a 200000-row plane's 0.2).
    const i64 d0 = every_h ? b.d.first : b.d.first + q, d_rows = every_h ? b.d.second - d0 + 1 : 1;
    for (i64 k = 0; k < d_rows; ++k) {
      if (!l.read_d[static_cast<std::size_t>(d0 + k)]) continue;
      const i64 at = every_h ? k * IH : -b.h.first;  // row h of D row d0 + k: at + h of the run
      // The runs ending past the band's first row, up to its last.
      auto run = std::partition_point(l.h_runs.begin(), l.h_runs.end(),
                                      [&](const auto& r) { return r.second <= b.h.first; });
      for (; run != l.h_runs.end() && run->first < b.h.first + band_h; ++run)
        stretch(at + std::max(run->first, b.h.first),
                at + std::min(run->second, b.h.first + band_h));
    }
  }
  // Per output row, the row sums of its windows' D and H taps, R outputs at once (in registers:
  // an accumulator row in memory would chain every add through a store and a load). Outputs are
  // ended `ends` or more at a time, in one pass (a call per four outputs left each division's
  // latency exposed, and rows of one to three outputs went one by one): a band's outputs follow
  // each other in y, since it is a whole plane or output rows of one output D row.
  double* sums = finish;
  double* divisors = finish + ends;
  double* inverses = finish + 2 * ends;
  std::uint16_t* yp = y + (b.od0 * OH + b.oh0) * OW;  // the first output not ended
  i64 pending = 0;
  for (i64 od = b.od0; od < b.od1; ++od) {
    const auto d = static_cast<std::size_t>(od);
    for (i64 oh = b.oh0; oh < b.oh1; ++oh) {
      const auto h = static_cast<std::size_t>(oh);
      // Rows past `ends` outputs in segments of it (1-D rows of 100000).
      for (i64 ow0 = 0; ow0 < OW; ow0 += ends) {
        const i64 ow1 = std::min(OW, ow0 + ends);
        if (pending + ow1 - ow0 > ends) {
          end_outputs<F>(sums, divisors, inverses, pending, fast_end, yp);
          yp += pending;
          pending = 0;
        }
        double* const at_ow = sums + pending - ow0;  // the sum of output ow, at_ow[ow]
        // The row sums of outputs [ow, ow + 4R) (V: as R vectors of four) or of output ow alone.
        const auto row_sums = [&]<typename V, int R>(i64 ow) __attribute__((always_inline)) {
          V s[R];
          for (int k = 0; k < R; ++k) s[k] = V{};
          // Outputs whose W windows are all in padding have nothing to add: a long pad past the
          // end walked its D and H taps again for each of them.
          const i64 count = R * static_cast<i64>(sizeof(V) / sizeof(double));
          const auto at = static_cast<std::size_t>(ow);
          const bool empty =
              l.w_empty[at + static_cast<std::size_t>(count)] - l.w_empty[at] == count;
          for (i64 td = 0; !empty && td < ad.taps[d]; ++td) {
            for (i64 th = 0; th < ah.taps[h]; ++th) {
              const i64 r = (ad.first[d] + td * ad.step - b.d.first) * band_h + ah.first[h] +
                            th * ah.step - b.h.first;
              const double* rr = rows + r * OW + ow;
              for (int k = 0; k < R; ++k) {
                if constexpr (std::is_same_v<V, double>)
                  s[k] += rr[k];
                else
                  s[k] += reinterpret_cast<const Double4Unaligned*>(rr + 4 * k)->v;
              }
            }
          }
          for (int k = 0; k < R; ++k) {
            if constexpr (std::is_same_v<V, double>)
              at_ow[ow + k] = s[k];
            else
              reinterpret_cast<Double4Unaligned*>(at_ow + ow + 4 * k)->v = s[k];
          }
        };
        i64 ow = ow0;
        // The rest in one call too, as independent chains (S3's rows of 28 left three vectors of
        // one chain each, their adds waiting on one another).
        for (; ow + 16 <= ow1; ow += 16) row_sums.template operator()<Double4, 4>(ow);
        const auto rest = [&]<typename V>(i64 count) __attribute__((always_inline)) {
          if (count == 3) row_sums.template operator()<V, 3>(ow);
          if (count == 2) row_sums.template operator()<V, 2>(ow);
          if (count == 1) row_sums.template operator()<V, 1>(ow);
        };
        rest.template operator()<Double4>((ow1 - ow) / 4);
        ow += (ow1 - ow) / 4 * 4;
        rest.template operator()<double>(ow1 - ow);
        // The divisors: the kernel's volume, or the window's taps (a product below 2^13, exact),
        // and their inverses (a division an output row). A window without taps takes any n above 0
        // (1 here): its sum is 0, and so is its mean.
        double *n = divisors + pending - ow0, *r = inverses + pending - ow0;
        const double *w_taps = l.w_taps.data(), *w_inverse = l.w_inverse.data();
        const double dh = static_cast<double>(std::max<i64>(1, ad.taps[d] * ah.taps[h]));
        const double dh_inverse = inverse(dh);
        for (ow = ow0; ow < ow1; ++ow) {
          n[ow] = l.full_kernel_divisor ? l.kernel_volume : dh * w_taps[ow];
          r[ow] = l.full_kernel_divisor ? l.kernel_inverse : dh_inverse * w_inverse[ow];
        }
        pending += ow1 - ow0;
      }
    }
  }
  end_outputs<F>(sums, divisors, inverses, pending, fast_end, yp);
}

// pool_band built for the CPU's AVX2 (its sums four doubles a vector) and for any x86-64.
template <class F>
__attribute__((target("avx2,fma,f16c"))) void band_avx2(const Layout& l, const Band& b,
                                                        const std::uint16_t* x, double* xs,
                                                        i64 chunk, double* rows, double* finish,
                                                        i64 ends, bool fast_end, std::uint16_t* y) {
  pool_band<F>(l, b, x, xs, chunk, rows, finish, ends, fast_end, y);
}
template <class F>
void band_portable(const Layout& l, const Band& b, const std::uint16_t* x, double* xs, i64 chunk,
                   double* rows, double* finish, i64 ends, bool fast_end, std::uint16_t* y) {
  pool_band<F>(l, b, x, xs, chunk, rows, finish, ends, fast_end, y);
}

// The bands of a plane, each within `budget` W sums: the whole plane when it fits (each input
// row summed once), else per output D row, runs of output H rows (their shared input rows summed
// again by the next band). At most `band_rows` output rows a band when not 0 (tests). Empty when
// a single output row does not fit. A band grows an output row at a time, its H span extended
// by that row's (recomputing it from every row of the band made a tall plane's bands quadratic).
std::vector<Band> plane_bands(const Layout& l, i64 budget, i64 band_rows) {
  const PoolGeometry& g = l.g;
  const i64 OD = g.out[0], OH = g.out[1], OW = g.out[2];
  const i64 max_rows = budget / OW;  // rows() * OW <= budget, without the product
  const Band whole = band(l, 0, OD, 0, OH);
  if (band_rows == 0 && whole.rows() <= max_rows) return {whole};
  std::vector<Band> bands;
  for (i64 od = 0; od < OD; ++od) {
    for (i64 oh0 = 0; oh0 < OH;) {
      Band b = band(l, od, od + 1, oh0, oh0 + 1);
      if (b.rows() > max_rows) return {};
      while (b.oh1 < OH && (band_rows == 0 || b.oh1 - oh0 < band_rows)) {
        Band wider = b;
        extend(wider.h, l.ax[1], wider.oh1++);
        if (wider.rows() > max_rows) break;
        b = wider;
      }
      bands.push_back(b);
      oh0 = b.oh1;
    }
  }
  return bands;
}

// The tables of g (kept_plan.hpp), or none where this kernel does not cover it whatever the
// inputs: windows of more than 2^13 taps, kernel volumes mean_of would not end, rows of much
// walking for few taps, and rows too wide for the per-thread buffers.
std::shared_ptr<const Layout> layout_of(const PoolGeometry& g, Isa isa, i64 band_rows) {
  return detail::kept_plan<Layout>(
      g, isa,
      [band_rows](Layout& l) {
        l.ax = detail::axis_windows(l.g);
        for (const auto& a : l.ax) l.max_taps *= *std::max_element(a.taps.begin(), a.taps.end());
        if (l.max_taps == 0) return true;
        if (l.max_taps > kMaxExactTaps) return false;
        const detail::Divisor volume = detail::volume_divisor(l.g.kernel.data());
        l.full_kernel_divisor = !l.g.adaptive && l.g.pads_in_avg;
        // Not a double (mean_of's rest), or past finish4_avx2's bound (kernels of 2^40 values,
        // with at most 2^13 taps, are nearly all padding).
        if (l.full_kernel_divisor && (volume.lo != 0 || volume.hi >= 0x1p40)) return false;
        l.kernel_volume = volume.hi;
        l.kernel_inverse = inverse(volume.hi);
        l.avx2 = detail::cpu_has_f16c() && l.isa != Isa::portable;
        const PoolGeometry& g = l.g;
        const auto& ax = l.ax;
        l.read_d = rows_read(ax[0], g.in[0]);
        l.read_h = rows_read(ax[1], g.in[1]);
        l.w_four = four_in_step(ax[2]);
        const auto ow_count = ax[2].taps.size();
        l.w_taps.resize(ow_count);
        l.w_inverse.resize(ow_count);
        l.w_empty.assign(ow_count + 1, 0);
        for (std::size_t w = 0; w < ow_count; ++w) {
          const i64 taps = ax[2].taps[w];
          l.w_taps[w] = static_cast<double>(std::max<i64>(1, taps));
          l.w_inverse[w] = inverse(l.w_taps[w]);
          l.w_empty[w + 1] = l.w_empty[w] + (taps == 0);
        }
        l.h_runs = read_runs(l.read_h, g.in[1]);
        l.read_all = std::find(l.read_d.begin(), l.read_d.end(), 0) == l.read_d.end() &&
                     std::find(l.read_h.begin(), l.read_h.end(), 0) == l.read_h.end();
        // This kernel's work (a walk of every row, and every value of the rows read widened,
        // scanned and summed) against the reference's taps (an exact sum each, some 16 times the
        // cost): rows whose windows read a few of their columns (W strides far past the kernel)
        // took hundreds of times the reference's time.
        const auto count = [](const std::vector<char>& v) {
          return static_cast<double>(std::count(v.begin(), v.end(), 1));
        };
        const double work = static_cast<double>(g.planes()) *
                            (static_cast<double>(g.in[0] * g.in[1]) +
                             count(l.read_d) * count(l.read_h) * static_cast<double>(g.in[2]));
        const double taps = static_cast<double>(g.planes() * g.out_plane_size() * l.max_taps);
        if (work > kWorkPerTap * taps && work > kWorkAnyway) return false;
        // Per thread: a chunk of input rows widened (at least four, enough for F16C to run long,
        // and no more than the plane's rows, which no run passes), sums and divisors of outputs
        // to end, and the W sums of a band's input rows in what is left.
        l.chunk = std::max<i64>(
            4, std::min(g.in[0] * g.in[1], kWidenDoubles / std::max<i64>(1, g.in[2])));
        l.ends = std::clamp(g.out[2], kEndOutputs, kMostEnded);
        const i64 widened = l.chunk * g.in[2], end_buffer = 3 * l.ends;
        if (widened + end_buffer >= kMaxScratchDoubles) return false;
        l.bands = plane_bands(l, kMaxScratchDoubles - widened - end_buffer, band_rows);
        if (l.bands.empty()) return false;
        for (const auto& b : l.bands) l.band_sums = std::max(l.band_sums, b.rows() * g.out[2]);
        if (!l.read_all)
          l.scan_runs = read_runs(l.read_h, std::max<i64>(1, kWidenDoubles / g.in[2]));
        l.global = g.out_plane_size() == 1;
        for (std::size_t a = 0; a < 3; ++a) l.global = l.global && ax[a].taps[0] == g.in[a];
        return true;
      },
      band_rows);
}

template <class F>
bool pool(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par, Isa isa,
          i64 band_rows) {
  // An empty input axis leaves every window without taps (the reference's zeros cost nothing),
  // and the others' sizes unbounded by any buffer: their products (this kernel's spans times OW,
  // in_plane_size()) could pass 2^63.
  if (std::find(g.in.begin(), g.in.end(), 0) != g.in.end()) return false;
  const std::shared_ptr<const Layout> plan = layout_of(g, isa, band_rows);
  if (!plan) return false;
  const Layout& l = *plan;
  // No window has a tap (an axis's all in padding): the reference's +0s, at once (the rows read
  // and the row sums below would walk the other axes' taps for every output).
  if (l.max_taps == 0) {
    std::fill_n(out.mutable_data<std::uint16_t>(), g.planes() * g.out_plane_size(), 0);
    return true;
  }

  const auto* x = in.data<std::uint16_t>();
  const i64 n_in = g.in_plane_size();
  // The exponents of the values windows read, by input rows (a single plane spreads over the
  // threads too); with gaps between windows, only the runs of H rows some window reads, in the
  // D rows some window reads: an inf or NaN elsewhere is not in the reference's sums (and a
  // walk of every row made a tall plane with few rows read cost 30x the reference kernel).
  Exponents seen;
  std::mutex seen_mutex;
  const i64 ID = g.in[0], IH = g.in[1], IW = g.in[2];
  const auto scan = l.avx2 ? exponents_avx2<F> : exponents_portable<F>;
  const auto n_runs = static_cast<i64>(l.scan_runs.size());
  par.for_range(l.read_all ? g.planes() * ID * IH : g.planes() * ID * n_runs, [&](i64 b, i64 e) {
    Exponents local;
    if (l.read_all) {
      local = scan(x + b * IW, (e - b) * IW);
    } else {
      for (i64 t = b; t < e; ++t) {
        const i64 pd = t / n_runs;  // plane * ID + D row
        if (!l.read_d[static_cast<std::size_t>(pd % ID)]) continue;
        const auto [h0, h1] = l.scan_runs[static_cast<std::size_t>(t % n_runs)];
        local.join(scan(x + (pd * IH + h0) * IW, (h1 - h0) * IW));
      }
    }
    const std::lock_guard lock(seen_mutex);
    seen.join(local);
  });
  if (!sums_exact<F>(seen, l.max_taps)) return false;
  const bool fast_end =
      l.avx2 && normal_averages<F>(seen, l.full_kernel_divisor ? l.kernel_volume
                                                               : static_cast<double>(l.max_taps));

  auto* y = out.mutable_data<std::uint16_t>();
  // A window over the whole plane (a global pool) sums the plane at once, and four planes end
  // together: a band a plane made a pass per input row and left a division's latency exposed.
  if (l.global) {
    const double divisor = l.full_kernel_divisor ? l.kernel_volume : static_cast<double>(n_in);
    const auto sum = l.avx2 ? sum_avx2<F> : sum_portable<F>;
    par.for_range(g.planes(), [&](i64 b, i64 e) {
      const double r = inverse(divisor);
      double sums[4], divisors[4] = {divisor, divisor, divisor, divisor},
                      inverses[4] = {r, r, r, r};
      for (i64 p = b; p < e; p += 4) {
        const i64 m = std::min<i64>(4, e - p);
        for (i64 k = 0; k < m; ++k) sums[k] = sum(x + (p + k) * n_in, n_in);
        end_outputs<F>(sums, divisors, inverses, m, fast_end, y + p);
      }
    });
    return true;
  }
  // A task is a band of a plane (bands write disjoint outputs), so that the bands of a single
  // large plane spread over the threads too.
  const auto per_plane = static_cast<i64>(l.bands.size());
  par.for_range(g.planes() * per_plane, [&](i64 b, i64 e) {
    // Not zeroed: a band writes each value before it reads it (the W sums of rows no window
    // reads are neither; zeroing them made a tall plane with few rows read cost 15x the
    // reference kernel).
    const auto nx = static_cast<std::size_t>(l.chunk * IW),
               nr = static_cast<std::size_t>(l.band_sums),
               nf = static_cast<std::size_t>(3 * l.ends);
    using detail::Scratch;
    Scratch scratch(detail::Slot::avg_half_sums, Scratch::part_bytes<double>(nx) +
                                                     Scratch::part_bytes<double>(nr) +
                                                     Scratch::part_bytes<double>(nf));
    double* const xs = scratch.take<double>(nx);
    double* const rows = scratch.take<double>(nr);
    double* const finish = scratch.take<double>(nf);
    for (i64 t = b; t < e; ++t) {
      const i64 p = t / per_plane;
      (l.avx2 ? band_avx2<F> : band_portable<F>)(l,
                                                 l.bands[static_cast<std::size_t>(t % per_plane)],
                                                 x + p * n_in, xs, l.chunk, rows, finish, l.ends,
                                                 fast_end, y + p * g.out_plane_size());
    }
  });
  return true;
}

}  // namespace

bool avg_pool_half(const Tensor& in, Tensor& out, const PoolGeometry& g, const Parallel& par,
                   Isa isa, std::int64_t band_rows) {
  if (out.type != in.type) return false;
  if (in.type != ElementType::f16 && in.type != ElementType::bf16) return false;
  const irrun::detail::FpScope ieee;  // IEEE defaults (fp_control.hpp)
  if (g.planes() * g.out_plane_size() == 0) return true;
  return in.type == ElementType::f16 ? pool<F16>(in, out, g, par, isa, band_rows)
                                     : pool<BF16>(in, out, g, par, isa, band_rows);
}

}  // namespace irrun::kernels
