// Fast window MaxPool on f32 / f64 NC[D]HW tensors, bit-identical to the reference kernel.
//
// Work unit: one output row (plane, od, oh). Its in-bounds input rows along D and H come from
// the reference's window enumeration (detail::axis_windows), in D-major order. The row kernel
// then runs the reference's recurrence for a block of consecutive outputs at once: the running
// maximum starts at lowest() with position 0; for every input row (in order) and every kernel
// tap kw along W (in order), the block loads that tap for all its outputs (contiguous for
// stride 1, de-interleaved for stride 2, gathered otherwise), with taps outside the row masked
// to -inf, and each lane takes it only when tap > max (ordered compare: NaN never wins, -inf
// never beats lowest(), ties keep the first tap). Since every lane sees exactly the reference's
// sequence of in-bounds taps plus -inf taps that cannot win, values and positions are the
// reference's bits. The portable path is the same recurrence per output, in plain C++; AVX-512
// runs blocks of 32 outputs (two independent registers) whose load masks are built once per
// call (interior blocks, all taps in bounds, need none); AVX2 runs blocks of 8.
// Positions are plane-relative int32 (planes of < 2^30 elements); indices are
// (plane * in_plane + position) % index_range, computed without a division per output: the
// range is either a multiple of the plane size (axis 0, 1, 2) or divides it (axis 3, 4).
// AdaptiveMaxPool with equal bins of one or two columns runs as the window MaxPool with kernel =
// stride = bin; OpenVINO's adaptive reduction differs from the window one only on rows that
// start with NaN and on bins with nothing above lowest(), and those outputs are redone with the
// reference's bin_max (see run).
// Determinism: each output is computed by one fixed-order loop, whatever the partition.
#include "simd.hpp"  // first: intrinsics and their warning pragmas

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "irrun/kernels/max_pool.hpp"
#include "max_reduce.hpp"
#include "window.hpp"

namespace irrun::kernels {
namespace {

using i64 = std::int64_t;
using i32 = std::int32_t;

constexpr i64 kMaxPlane = i64{1} << 30;  // positions and columns stay well inside int32
constexpr i64 kMaxKernelW = 256;         // wider kernels: the reference (taps are not clipped)

// The taps of one block of 32 outputs (two vectors of 16) that have an in-bounds lane: the
// column of lane 0 and, per vector, the load masks (stride 2: the two halves of the 32
// contiguous elements holding the taps; other strides: the lanes).
struct Tap32 {
  i64 c0;
  std::uint16_t a[2], b[2];
};

// The W axis of one op, shared by every output row.
struct RowGeo {
  i64 in_w, out_w, k, stride, dil, pad;
  const i64* first;  // in-bounds taps of output ow: first[ow] + t*dil, t < taps[ow]
  const i64* taps;
  // AVX-512, per block of 32 outputs: -1 when every tap of the block is in bounds for all 32
  // outputs (its taps are kw = 0..k-1 with full masks), else a slot s whose taps are
  // block_taps[s*k .. s*k + block_tap_count[s]).
  const i64* block_slot = nullptr;
  const Tap32* block_taps = nullptr;
  const i64* block_tap_count = nullptr;
};

constexpr i64 kMaxTableTaps = i64{1} << 20;  // larger tables (huge pads): the portable path

// Computes out_w values (and, when pos is not null, plane positions) of one output row from
// the input rows at plane offsets rows[0..nrows).
template <class T>
using RowFn = void (*)(const T* plane, const i64* rows, i64 nrows, const RowGeo& w, T* y, i32* pos);

template <class T>
void row_portable(const T* plane, const i64* rows, i64 nrows, const RowGeo& w, T* y, i32* pos) {
  for (i64 ow = 0; ow < w.out_w; ++ow) {
    T m = std::numeric_limits<T>::lowest();
    i64 mp = 0;
    const i64 first = w.first[ow], taps = w.taps[ow];
    for (i64 r = 0; r < nrows; ++r) {
      const T* row = plane + rows[r];
      for (i64 t = 0; t < taps; ++t) {
        const i64 c = first + t * w.dil;
        if (row[c] > m) m = row[c], mp = rows[r] + c;
      }
    }
    y[ow] = m;
    if (pos) pos[ow] = static_cast<i32>(mp);
  }
}

// Lanes [lo, hi) of a block of n outputs whose tap at column c0 + j*stride (lane j) lies in
// [0, in_w); empty when lo >= hi.
inline void valid_lanes(i64 c0, i64 stride, i64 in_w, i64 n, i64& lo, i64& hi) {
  lo = c0 >= 0 ? 0 : (-c0 + stride - 1) / stride;
  hi = c0 >= in_w ? 0 : std::min(n, (in_w - c0 + stride - 1) / stride);
}

// Lane mask of bits [lo, hi) (0 <= lo, hi <= 16).
inline std::uint16_t lanes16(i64 lo, i64 hi) {
  if (lo >= hi) return 0;
  const unsigned all = (1u << hi) - 1u, below = (1u << lo) - 1u;
  return static_cast<std::uint16_t>(all & ~below);
}

// The Tap32 tables of the blocks of 32 outputs of a row (the same for every row and plane)
// that are not interior. Returns false when they would hold more than kMaxTableTaps taps.
struct BlockTaps {
  std::vector<i64> slot, count;
  std::vector<Tap32> taps;
};

bool make_block_taps(const RowGeo& w, BlockTaps& bt) {
  const i64 blocks = (w.out_w + 31) / 32, s = w.stride;
  bt.slot.assign(static_cast<std::size_t>(blocks), -1);
  i64 slots = 0;
  for (i64 b = 0; b < blocks; ++b) {
    const i64 o0 = 32 * b;
    const bool interior = o0 + 32 <= w.out_w && o0 * s - w.pad >= 0 &&
                          (o0 + 31) * s - w.pad + (w.k - 1) * w.dil < w.in_w;
    if (!interior) bt.slot[static_cast<std::size_t>(b)] = slots++;
  }
  if (slots * w.k > kMaxTableTaps) return false;
  bt.taps.assign(static_cast<std::size_t>(slots * w.k), Tap32{});
  bt.count.assign(static_cast<std::size_t>(slots), 0);
  for (i64 b = 0; b < blocks; ++b) {
    const i64 slot = bt.slot[static_cast<std::size_t>(b)], o0 = 32 * b;
    if (slot < 0) continue;
    i64& c = bt.count[static_cast<std::size_t>(slot)];
    for (i64 kw = 0; kw < w.k; ++kw) {
      Tap32& t = bt.taps[static_cast<std::size_t>(slot * w.k + c)];
      t.c0 = o0 * s - w.pad + kw * w.dil;
      bool any = false;
      for (int u = 0; u < 2; ++u) {
        i64 lo = 0, hi = 0;
        valid_lanes(t.c0 + 16 * u * s, s, w.in_w, std::clamp<i64>(w.out_w - o0 - 16 * u, 0, 16), lo,
                    hi);
        t.a[u] = t.b[u] = 0;
        if (lo >= hi) continue;
        any = true;
        if (s == 2) {
          // Elements 2*lo .. 2*(hi-1), all in bounds; the odd ones are dropped.
          const i64 e_lo = 2 * lo, e_hi = 2 * hi - 1;
          t.a[u] = lanes16(std::min<i64>(e_lo, 16), std::min<i64>(e_hi, 16));
          t.b[u] = lanes16(std::max<i64>(e_lo, 16) - 16, std::max<i64>(e_hi, 16) - 16);
        } else {
          t.a[u] = lanes16(lo, hi);
        }
      }
      c += any ? 1 : 0;
    }
  }
  return true;
}

// Two blocks of 16 outputs at once (independent dependency chains), their taps from
// w.block_taps. Stride: 1, 2, or 0 for any (gather). Values only: max(tap, cur), which is
// tap > cur ? tap : cur (vmaxps returns its second operand unless the first is greater), the
// same recurrence as the compare and blend.
template <int kStride, bool kPos>
IRRUN_AVX512 void row_avx512(const float* plane, const i64* rows, i64 nrows, const RowGeo& w,
                             float* y, i32* pos) {
  constexpr int U = 2;
  const i64 s = kStride ? kStride : w.stride;
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  [[maybe_unused]] const __m512i lane_step =
      _mm512_mullo_epi32(iota, _mm512_set1_epi32(static_cast<i32>(s)));
  [[maybe_unused]] const __m512i even =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  for (i64 o0 = 0, block = 0; o0 < w.out_w; o0 += 16 * U, ++block) {
    __m512 cur[U];
    __m512i cp[U];
    for (int u = 0; u < U; ++u) {
      cur[u] = _mm512_set1_ps(std::numeric_limits<float>::lowest());
      cp[u] = _mm512_setzero_si512();
    }
    const i64 slot = w.block_slot[block];
    const Tap32* taps = slot < 0 ? nullptr : w.block_taps + slot * w.k;
    const i64 tap_count = slot < 0 ? w.k : w.block_tap_count[slot];
    // Interior blocks: every lane in bounds (stride 2: the 31 elements up to the last tap).
    const Tap32 full{0, {0xFFFF, 0xFFFF}, {0x7FFF, 0x7FFF}};
    for (i64 r = 0; r < nrows; ++r) {
      const float* row = plane + rows[r];
      for (i64 j = 0; j < tap_count; ++j) {
        Tap32 t = full;
        if (taps)
          t = taps[j];
        else
          t.c0 = o0 * s - w.pad + j * w.dil;
        for (int u = 0; u < U; ++u) {
          const i64 c0 = t.c0 + 16 * u * s;
          __m512 v;
          if constexpr (kStride == 1) {
            v = _mm512_mask_loadu_ps(neg_inf, t.a[u], row + c0);
          } else if constexpr (kStride == 2) {
            const __m512 a = _mm512_mask_loadu_ps(neg_inf, t.a[u], row + c0);
            const __m512 b = _mm512_mask_loadu_ps(neg_inf, t.b[u], row + c0 + 16);
            v = _mm512_permutex2var_ps(a, even, b);
          } else {
            const __m512i col =
                _mm512_add_epi32(_mm512_set1_epi32(static_cast<i32>(c0)), lane_step);
            v = _mm512_mask_i32gather_ps(neg_inf, t.a[u], col, row, 4);
          }
          if constexpr (kPos) {
            const __mmask16 gt = _mm512_cmp_ps_mask(v, cur[u], _CMP_GT_OQ);
            cur[u] = _mm512_mask_mov_ps(cur[u], gt, v);
            const __m512i p =
                _mm512_add_epi32(_mm512_set1_epi32(static_cast<i32>(rows[r] + c0)), lane_step);
            cp[u] = _mm512_mask_mov_epi32(cp[u], gt, p);
          } else {
            cur[u] = _mm512_max_ps(v, cur[u]);
          }
        }
      }
    }
    for (int u = 0; u < U; ++u) {
      const __mmask16 out = lanes16(0, std::clamp<i64>(w.out_w - o0 - 16 * u, 0, 16));
      _mm512_mask_storeu_ps(y + o0 + 16 * u, out, cur[u]);
      if constexpr (kPos) _mm512_mask_storeu_epi32(pos + o0 + 16 * u, out, cp[u]);
    }
  }
}

template <int kStride>
IRRUN_AVX512 void row_avx512_any(const float* plane, const i64* rows, i64 nrows, const RowGeo& w,
                                 float* y, i32* pos) {
  if (pos) return row_avx512<kStride, true>(plane, rows, nrows, w, y, pos);
  row_avx512<kStride, false>(plane, rows, nrows, w, y, pos);
}

// Lane mask of lanes [lo, hi) (hi <= 8) as an AVX2 integer mask.
IRRUN_AVX2 inline __m256i lanes8(i64 lo, i64 hi) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i ge_lo = _mm256_cmpgt_epi32(iota, _mm256_set1_epi32(static_cast<i32>(lo - 1)));
  const __m256i lt_hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<i32>(hi)), iota);
  return _mm256_and_si256(ge_lo, lt_hi);
}

// Masked load of lanes [lo, hi) of p, -inf elsewhere (maskload reads only the masked lanes).
IRRUN_AVX2 inline __m256 load8(const float* p, i64 lo, i64 hi) {
  const __m256i m = lanes8(lo, hi);
  const __m256 neg_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  if (lo >= hi) return neg_inf;
  return _mm256_blendv_ps(neg_inf, _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}

template <int kStride, bool kPos>
IRRUN_AVX2 void row_avx2(const float* plane, const i64* rows, i64 nrows, const RowGeo& w, float* y,
                         i32* pos) {
  const i64 s = kStride ? kStride : w.stride;
  const __m256 neg_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  [[maybe_unused]] const __m256i lane_step =
      _mm256_mullo_epi32(iota, _mm256_set1_epi32(static_cast<i32>(s)));
  // Elements a block of eight reads from its first tap column on: 8 (stride 1), the 16 of the
  // two de-interleaved loads (stride 2), up to the last lane's tap (gather).
  const i64 span = kStride == 1 ? 8 : kStride == 2 ? 16 : 7 * s + 1;
  for (i64 o0 = 0; o0 < w.out_w; o0 += 8) {
    const i64 n = std::min<i64>(8, w.out_w - o0);
    __m256 cur = _mm256_set1_ps(std::numeric_limits<float>::lowest());
    __m256i cp = _mm256_setzero_si256();
    // Interior blocks (every tap of all eight lanes in the row) need no masks: plain loads of
    // the same elements.
    const bool interior =
        n == 8 && o0 * s - w.pad >= 0 && o0 * s - w.pad + (w.k - 1) * w.dil + span <= w.in_w;
    for (i64 r = 0; r < nrows; ++r) {
      const float* row = plane + rows[r];
      for (i64 kw = 0; kw < w.k; ++kw) {
        const i64 c0 = o0 * s - w.pad + kw * w.dil;
        i64 lo = 0, hi = 8;
        if (!interior) valid_lanes(c0, s, w.in_w, n, lo, hi);
        if (lo >= hi) continue;
        __m256 v;
        if constexpr (kStride == 1) {
          v = interior ? _mm256_loadu_ps(row + c0) : load8(row + c0, lo, hi);
        } else if constexpr (kStride == 2) {
          const i64 e_lo = 2 * lo, e_hi = 2 * hi - 1;
          const __m256 a = interior
                               ? _mm256_loadu_ps(row + c0)
                               : load8(row + c0, std::min<i64>(e_lo, 8), std::min<i64>(e_hi, 8));
          const __m256 b = interior ? _mm256_loadu_ps(row + c0 + 8)
                                    : load8(row + c0 + 8, std::max<i64>(e_lo, 8) - 8,
                                            std::max<i64>(e_hi, 8) - 8);
          // [a0 a2 b0 b2 a4 a6 b4 b6] -> [a0 a2 a4 a6 b0 b2 b4 b6]
          const __m256 ev = _mm256_shuffle_ps(a, b, 0x88);
          v = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8));
        } else {
          const __m256i col = _mm256_add_epi32(_mm256_set1_epi32(static_cast<i32>(c0)), lane_step);
          v = _mm256_mask_i32gather_ps(neg_inf, row, col, _mm256_castsi256_ps(lanes8(lo, hi)), 4);
        }
        if constexpr (kPos) {
          const __m256 gt = _mm256_cmp_ps(v, cur, _CMP_GT_OQ);
          cur = _mm256_blendv_ps(cur, v, gt);
          const __m256i p =
              _mm256_add_epi32(_mm256_set1_epi32(static_cast<i32>(rows[r] + c0)), lane_step);
          cp = _mm256_castps_si256(
              _mm256_blendv_ps(_mm256_castsi256_ps(cp), _mm256_castsi256_ps(p), gt));
        } else {
          cur = _mm256_max_ps(v, cur);  // tap > cur ? tap : cur, as in row_avx512
        }
      }
    }
    const __m256i out = lanes8(0, n);
    _mm256_maskstore_ps(y + o0, out, cur);
    if constexpr (kPos) _mm256_maskstore_epi32(pos + o0, out, cp);
  }
}

template <int kStride>
IRRUN_AVX2 void row_avx2_any(const float* plane, const i64* rows, i64 nrows, const RowGeo& w,
                             float* y, i32* pos) {
  if (pos) return row_avx2<kStride, true>(plane, rows, nrows, w, y, pos);
  row_avx2<kStride, false>(plane, rows, nrows, w, y, pos);
}

template <class T>
RowFn<T> pick_row([[maybe_unused]] RowGeo& w, [[maybe_unused]] BlockTaps& bt,
                  [[maybe_unused]] Isa isa) {
  if constexpr (std::is_same_v<T, float>) {
    const i64 s = w.stride;
    if (isa == Isa::best && detail::cpu_has_avx512()) {
      if (!make_block_taps(w, bt)) return row_portable<T>;
      w.block_slot = bt.slot.data();
      w.block_taps = bt.taps.data();
      w.block_tap_count = bt.count.data();
      return s == 1 ? row_avx512_any<1> : s == 2 ? row_avx512_any<2> : row_avx512_any<0>;
    }
    if ((isa == Isa::best || isa == Isa::avx2) && detail::cpu_has_avx2())
      return s == 1 ? row_avx2_any<1> : s == 2 ? row_avx2_any<2> : row_avx2_any<0>;
  }
  return row_portable<T>;
}

// o[i] = base + pos[i] (cast to I: i32 wraps like the reference's cast), vectorised.
template <class I>
void add_offset(const i32* __restrict pos, i64 base, i64 n, I* __restrict o) {
  if constexpr (std::is_same_v<I, i32>) {
    const auto b = static_cast<std::uint32_t>(base);
    for (i64 i = 0; i < n; ++i) o[i] = static_cast<i32>(b + static_cast<std::uint32_t>(pos[i]));
  } else {
    for (i64 i = 0; i < n; ++i) o[i] = base + pos[i];
  }
}

// True when x[0..n) holds a NaN (a branch-free pass the compiler vectorises).
template <class T>
bool any_nan(const T* x, i64 n) {
  int nan = 0;  // (an int: GCC leaves a bool accumulator scalar)
  for (i64 i = 0; i < n; ++i) nan |= x[i] != x[i];
  return nan != 0;
}

// `adaptive`: g is the window form of an AdaptiveMaxPool with equal bins, whose outputs follow
// detail::bin_max instead of window_max: an output row whose input rows hold a NaN, and any
// output the window recurrence left at lowest(), are redone with bin_max (rare in real data).
template <class T, class I>
void run(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
         const Parallel& par, Isa isa, bool adaptive) {
  const auto axes = detail::axis_windows(g);
  RowGeo w{g.in[2],       g.out[2],       g.kernel[2],          g.stride[2],
           g.dilation[2], g.pad_begin[2], axes[2].first.data(), axes[2].taps.data()};
  BlockTaps block_taps;
  const RowFn<T> row_fn = pick_row<T>(w, block_taps, isa);
  const T* x = in.data<T>();
  T* y = values.mutable_data<T>();
  I* idx = indices ? indices->mutable_data<I>() : nullptr;
  const i64 in_plane = g.in_plane_size(), out_w = g.out[2];
  const i64 range = g.index_range();
  // range is a multiple of the plane size (axis <= 2: add a per-plane offset) or divides it.
  const bool per_plane_offset = range % in_plane == 0;
  const i64 out_rows = g.out[0] * g.out[1];

  par.for_range(g.planes() * out_rows, [&](i64 begin, i64 end) {
    std::vector<i64> rows;
    std::vector<i32> pos(idx || adaptive ? static_cast<std::size_t>(out_w) : 0);
    for (i64 u = begin; u < end; ++u) {
      const i64 p = u / out_rows, q = u % out_rows;
      const auto od = static_cast<std::size_t>(q / g.out[1]);
      const auto oh = static_cast<std::size_t>(q % g.out[1]);
      rows.clear();
      for (i64 td = 0; td < axes[0].taps[od]; ++td) {
        const i64 id = axes[0].first[od] + td * axes[0].step;
        for (i64 th = 0; th < axes[1].taps[oh]; ++th) {
          const i64 ih = axes[1].first[oh] + th * axes[1].step;
          rows.push_back((id * g.in[1] + ih) * g.in[2]);
        }
      }
      const i64 out = p * g.out_plane_size() + q * out_w;
      const T* plane = x + p * in_plane;
      row_fn(plane, rows.data(), static_cast<i64>(rows.size()), w, y + out,
             idx || adaptive ? pos.data() : nullptr);
      if (adaptive) {
        bool nan = false;
        for (const i64 r : rows) nan = nan || any_nan(plane + r, g.in[2]);
        for (i64 i = 0; i < out_w; ++i) {
          if (!nan && y[out + i] != std::numeric_limits<T>::lowest()) continue;
          const auto m =
              detail::bin_max(plane, detail::Window(axes, g, od, oh, static_cast<std::size_t>(i)));
          y[out + i] = m.value;
          pos[static_cast<std::size_t>(i)] = static_cast<i32>(m.position);
        }
      }
      if (!idx) continue;
      if (per_plane_offset)
        add_offset(pos.data(), (p * in_plane) % range, out_w, idx + out);
      else
        for (i64 i = 0; i < out_w; ++i)
          idx[out + i] = static_cast<I>(pos[static_cast<std::size_t>(i)] % range);
    }
  });
}

template <class T>
void run_values(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                const Parallel& par, Isa isa, bool adaptive) {
  if (indices && indices->type == ElementType::i32)
    return run<T, i32>(in, values, indices, g, par, isa, adaptive);
  run<T, i64>(in, values, indices, g, par, isa, adaptive);
}

// AdaptiveMaxPool with equal bins (in % out == 0 on every axis) as a window MaxPool: kernel =
// stride = in / out, no padding, the same index axis. Its windows are exactly the bins.
PoolGeometry as_window(const PoolGeometry& g) {
  PoolGeometry w = g;
  w.adaptive = false;
  for (std::size_t a = 0; a < 3; ++a) {
    w.kernel[a] = w.stride[a] = g.in[a] / g.out[a];
    w.dilation[a] = 1;
    w.pad_begin[a] = w.pad_end[a] = 0;
  }
  return w;
}

// Equal bins of one or two columns: wider bins are stride > 2 windows, whose gathered taps
// (vgatherdps) make the window kernel slower than the reference on them (8x512x28x28 -> 7x7:
// 5.5 ms against 2.2 ms).
bool equal_bins(const PoolGeometry& g) {
  for (std::size_t a = 0; a < 3; ++a)
    if (g.out[a] < 1 || g.in[a] % g.out[a] != 0) return false;
  return g.in[2] / g.out[2] <= 2;
}

}  // namespace

bool max_pool_fast_covers(ElementType type, const PoolGeometry& g) {
  if (type != ElementType::f32 && type != ElementType::f64) return false;
  if (g.adaptive) return equal_bins(g) && max_pool_fast_covers(type, as_window(g));
  const i64 in_plane = g.in[0] * g.in[1] * g.in[2];
  if (in_plane < 1 || in_plane >= kMaxPlane) return false;
  if (g.kernel[2] > kMaxKernelW) return false;
  // Columns c0 = ow*stride - pad + kw*dilation and positions stay inside int32.
  for (const i64 v : {g.out[2], g.stride[2], g.dilation[2], g.pad_begin[2]})
    if (v >= kMaxPlane) return false;
  return g.out[2] * g.stride[2] + g.pad_begin[2] + g.kernel[2] * g.dilation[2] < kMaxPlane;
}

bool max_pool_fast(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                   const Parallel& par, Isa isa) {
  if (in.type != values.type || !max_pool_fast_covers(in.type, g)) return false;
  if (indices && indices->type != ElementType::i32 && indices->type != ElementType::i64)
    return false;
  if (g.planes() * g.out_plane_size() == 0) return true;
  const PoolGeometry w = g.adaptive ? as_window(g) : g;
  if (in.type == ElementType::f32)
    run_values<float>(in, values, indices, w, par, isa, g.adaptive);
  else
    run_values<double>(in, values, indices, w, par, isa, g.adaptive);
  return true;
}

}  // namespace irrun::kernels
