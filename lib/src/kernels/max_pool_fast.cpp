// Fast window MaxPool on f32 / f64 NC[D]HW tensors, bit-identical to the reference kernel.
//
// Work unit: one output row (plane, od, oh), or a flat group of them (see make_spread). Its
// in-bounds input rows along D and H come from the reference's window enumeration
// (detail::axis_windows), in D-major order, in a table built once per call. The row kernel
// then runs the reference's recurrence for a block of consecutive outputs at once: the running
// maximum starts at lowest() with position 0; for every input row (in order) and every kernel
// tap kw along W (in order), the block loads that tap for all its outputs (contiguous for
// stride 1, de-interleaved for stride 2), with taps outside the row masked to -inf, and each
// lane takes it only when tap > max (ordered compare: NaN never wins, -inf never beats lowest(),
// ties keep the first tap). Since every lane sees exactly the reference's sequence of in-bounds
// taps plus -inf taps that cannot win, values and positions are the reference's bits. The
// portable path is the same recurrence per output, in plain C++; AVX-512 runs blocks of 32
// outputs (two independent registers) whose load masks are built once per call (interior
// blocks, all taps in bounds, need none; a short last block runs as the interior block that
// ends the row; stride-2 interior blocks de-interleave each input row once and shift their
// taps out of it); AVX2 runs blocks of 8.
// Rows of up to 64 columns and outputs reduce columns first in registers (narrow_*),
// whole planes' rows at a time; wider rows' values with windows of 2-3 columns and stride 1 or
// 2 too, a vector of columns at a time, their taps shifted out of the maxima (wide_*). Strides
// of 3 or more, whose taps would be gathered, reduce columns first too (cols_*): each column's
// maximum over the window's rows, then each output's over its columns, the taps permuted out of
// whole vectors of column maxima. The recurrence's result is the
// greatest value and, among the taps equal to it (-0 == +0), the first one, which is the one of
// least plane position (taps run in position order). So the columns' results are combined by (value
// > max) or (value == max and position < max's): an order-free rule that gives the same value bits
// and position as the recurrence, NaN never winning. Positions are plane-relative int32 (planes of
// < 2^30 elements); indices are (plane * in_plane + position) % index_range, computed without a
// division per output: the range is either a multiple of the plane size (axis 0, 1, 2) or divides
// it (axis 3, 4). AdaptiveMaxPool with equal bins runs as the window MaxPool with kernel = stride =
// bin; OpenVINO's adaptive reduction differs from the window one only on rows that start with NaN
// and on bins with nothing above lowest(), and those outputs are redone with the reference's
// bin_max (see run).
// Determinism: each output is computed by fixed-order loops, whatever the partition.
#include "simd.hpp"  // first: intrinsics and their warning pragmas

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <type_traits>
#include <vector>

#include "../fp_control.hpp"
#include "irrun/kernels/max_pool.hpp"
#include "kept_plan.hpp"
#include "lines.hpp"
#include "max_lanes.hpp"
#include "max_reduce.hpp"
#include "read_ahead.hpp"
#include "window.hpp"

namespace irrun::kernels {
namespace {

using i64 = std::int64_t;
using i32 = std::int32_t;

constexpr i64 kMaxPlane = i64{1} << 30;  // positions and columns stay well inside int32
constexpr i64 kMaxKernelW = 256;         // wider kernels: the reference (taps are not clipped)
constexpr i64 kAheadBytes = 2048;        // large layers: how far ahead they read and write
constexpr i64 kAheadRows = 4;            // and their groups' output rows at least (plan_of)
// The row table's entries (input rows of each output row) at most: 16 MiB, within a run's
// 64 MiB above its tensors (a million output rows of 64-row windows made it 512 MiB).
constexpr i64 kMaxRowTable = i64{1} << 21;

// The taps of one block of 32 outputs (two vectors of 16) that have an in-bounds lane: the
// column of lane 0 and, per vector, the load masks (stride 2: the two halves of the 32
// contiguous elements holding the taps; other strides: the lanes).
struct Tap32 {
  i64 c0;
  std::uint16_t a[2], b[2];
};

// The load masks of a stride-2 block of 32 outputs de-interleaved at once (row_avx512): per
// vector of 16 outputs, the elements a (0-15) and b (16-31) past its first, then c, the 16
// after the block's. In a table of blocks, `shared`: 0 when the block may not run so, 1 when
// only its first load differs from an interior block's (left padding), else 2.
struct LoadMasks {
  std::uint16_t a[2], b[2], c;
  std::uint8_t shared;
};

// Strides of 3 or more (cols_*): how a block of `lanes` outputs takes tap t from the
// column maxima starting at its first tap column: from source vectors of `width` columns
// (AVX-512: pairs of 16, permuted by vpermt2ps; AVX2: single vectors of 8), lane o reading
// column o * stride + t * dilation, at index idx[t][o] of source first[t] + j where bit o of
// bits[t][j] (AVX2: mask[t][j][o] all ones) is set.
struct Spread {
  i64 sources = 0;  // per block: the span of its taps
  std::vector<i32> idx, mask;
  std::vector<std::uint16_t> bits;
  std::vector<i64> first, count;  // per tap: the sources it reads
};

// Per thread: the column maxima of one output row, col_left entries of (lowest(), 0) before
// column 0 (the left padding) and enough after in_w for the last block's sources.
struct ColScratch {
  float* v = nullptr;
  i32* p = nullptr;
};

using detail::RowTable;

// Narrow rows whose values alone take their taps from registers, shifted (stride 1, windows of
// three columns) or split into even and odd columns (stride 2, windows of two or three), instead
// of permuted by narrow_outputs' tables: pads_begin 0 or 1. Stride 0: the tables.
struct RegTaps {
  int stride = 0, k = 0, pad = 0;
  constexpr bool operator==(const RegTaps&) const = default;
};

// f.template operator()<R>() with R = r as a constant (the shapes narrow_values sets).
template <class F>
inline void with_reg_taps(const RegTaps& r, F f) {
  if (r == RegTaps{1, 3, 0}) return f.template operator()<RegTaps{1, 3, 0}>();
  if (r == RegTaps{1, 3, 1}) return f.template operator()<RegTaps{1, 3, 1}>();
  if (r == RegTaps{2, 2, 0}) return f.template operator()<RegTaps{2, 2, 0}>();
  if (r == RegTaps{2, 2, 1}) return f.template operator()<RegTaps{2, 2, 1}>();
  if (r == RegTaps{2, 3, 0}) return f.template operator()<RegTaps{2, 3, 0}>();
  if (r == RegTaps{2, 3, 1}) return f.template operator()<RegTaps{2, 3, 1}>();
  f.template operator()<RegTaps{}>();
}

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
  const LoadMasks* block_masks = nullptr;  // per slot (BlockTaps)
  LoadMasks interior{};                    // an interior block's (stride 2, shared_taps)
  // Strides of 3 or more: the column maxima's layout and the tap tables. `group` output rows
  // run at once (flat groups: see make_spread), their column maxima back to back.
  const Spread* spread = nullptr;
  i64 col_left = 0, col_len = 0, group = 1;
  // Narrow rows (NarrowTaps): the columns of the tap slots; the plane's length, within which a
  // row's vectors load whole; where rows tile exactly (strides of 3 or more), the cols_* group
  // that takes their positions in flat groups (AdaptiveMaxPool's bins of 4x4, M3: narrow rows
  // took 1.16x of its time).
  const i32* narrow_idx = nullptr;
  i64 narrow_slots = 0, plane_len = 0;
  bool narrow_empty = false;  // an output of the row has no tap (its window in the padding)
  bool (*flat_positions)(const float* plane, const RowTable& rt, i64 q0, i64 q1, const RowGeo& w,
                         const ColScratch& cs, float* y, i32* pos) = nullptr;
  // Separable windows (make_sep): the D and H axes' windows, the rows of H in and out, and the
  // planes of D in the ring of row maxima (0: rows from the row table).
  const detail::AxisWindows* axis_d = nullptr;
  const detail::AxisWindows* axis_h = nullptr;
  i64 in_h = 0, out_h = 0, sep_slots = 0;
  i64 sep_pad_h = -1;  // windows of three rows of H, stride 1: their pads_begin; else -1
  // Narrow rows' taps from registers, values alone (reg_outputs, narrow_values); else none.
  RegTaps reg_taps{};
  // Positions go to max_pool_half's f32 copies (f16 on AVX2 where they take the row blocks).
  bool copy_positions = false;
};

constexpr i64 kMaxTableTaps = i64{1} << 20;  // larger tables (huge pads): the portable path

// Computes out_w values (and, when pos is not null, plane positions) of one output row from
// the input rows at plane offsets rows[0..nrows).
template <class T>
using RowFn = void (*)(const T* plane, const i64* rows, i64 nrows, const RowGeo& w, T* y, i32* pos);

// The output rows q0 .. q1 - 1 of a plane, their values and positions back to back. Returns true
// only when it has seen that their input rows hold no NaN (in any column) and that no output is
// lowest(): then the adaptive fix-up (run) has nothing to redo; false means "not checked".
template <class T>
using GroupFn = bool (*)(const T* plane, const RowTable& rt, i64 q0, i64 q1, const RowGeo& w,
                         const ColScratch& cs, T* y, i32* pos);

// A RowFn row by row.
template <class T, RowFn<T> F>
bool rows_of(const T* plane, const RowTable& rt, i64 q0, i64 q1, const RowGeo& w, const ColScratch&,
             T* y, i32* pos) {
  for (i64 q = q0; q < q1; ++q, y += w.out_w, pos = pos ? pos + w.out_w : nullptr)
    F(plane, rt.rows(q), rt.count(q), w, y, pos);
  return false;
}

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

// Stride 2 and taps reaching at most 17 columns past the first (row_avx512): a block's rows
// can be de-interleaved once.
inline bool shared_taps(const RowGeo& w) {
  return w.stride == 2 && (w.k - 1) * w.dil <= 17;
}

// The masks of an interior such block: elements 64 .. 62 + reach past its first column, which
// the last lanes of the shifted taps read, and of 48 .. 63 element 63 only when a tap reaches
// it. For shared_taps rows only (past 17 columns, lanes16 would shift by 32 or more; computed
// per row as well, for every row, it cost M1 1.03-1.07 of the time).
inline LoadMasks interior_masks(const RowGeo& w) {
  const i64 reach = (w.k - 1) * w.dil;
  return {{0xFFFF, 0xFFFF},
          {0xFFFF, static_cast<std::uint16_t>(reach >= 1 ? 0xFFFF : 0x7FFF)},
          lanes16(0, std::max<i64>(reach - 1, 0)),
          0};
}

// The Tap32 tables of the blocks of 32 outputs of a row (the same for every row and plane)
// that are not interior (w.interior set). Returns false when they would hold more than
// kMaxTableTaps taps.
// Per slot, its LoadMasks: whether it runs de-interleaved, as an interior block does, where its
// only taps out of bounds are left padding within its first 16 elements (3x3 s2 p1: M1) or
// columns past the row's end, those elements masked to -inf (which no tap takes). Through the
// taps, their per-tap masks and permutes had taken over half of M1v's time, M2's rows of 28
// outputs took 1.3 times as long without indices, 1.07 with, and the last blocks of rows whose
// last window reaches into pads_end (I3D's 1x3x3 s2 on 112x112) 0.76 of the time.
struct BlockTaps {
  std::vector<i64> slot, count;
  std::vector<Tap32> taps;
  std::vector<LoadMasks> masks;
};

bool make_block_taps(const RowGeo& w, BlockTaps& bt) {
  const i64 s = w.stride;
  const auto interior = [&](i64 o0) {
    return o0 >= 0 && o0 + 32 <= w.out_w && o0 * s - w.pad >= 0 &&
           (o0 + 31) * s - w.pad + (w.k - 1) * w.dil < w.in_w;
  };
  const i64 blocks = (w.out_w + 31) / 32;
  bt.slot.assign(static_cast<std::size_t>(blocks), -1);
  i64 slots = 0;
  for (i64 b = 0; b < blocks; ++b) {
    // A short last block runs as the interior block that ends the row when there is one
    // (row_avx512 recomputes the outputs it shares with the block before it).
    const bool last = b == blocks - 1 && interior(w.out_w - 32);
    if (!interior(32 * b) && !last) bt.slot[static_cast<std::size_t>(b)] = slots++;
  }
  if (slots * w.k > kMaxTableTaps) return false;
  bt.taps.assign(static_cast<std::size_t>(slots * w.k), Tap32{});
  bt.count.assign(static_cast<std::size_t>(slots), 0);
  bt.masks.assign(static_cast<std::size_t>(slots), LoadMasks{});
  for (i64 b = 0; b < blocks; ++b) {
    const i64 slot = bt.slot[static_cast<std::size_t>(b)], o0 = 32 * b;
    if (slot < 0) continue;
    const i64 col0 = o0 * s - w.pad;
    if (shared_taps(w) && col0 > -16) {
      const i64 avail = w.in_w - col0;  // elements of the row from the block's first column
      const auto in_row = [&](i64 e) { return lanes16(0, std::clamp<i64>(avail - e, 0, 16)); };
      const LoadMasks& i = w.interior;
      LoadMasks& m = bt.masks[static_cast<std::size_t>(slot)] = i;
      for (int u = 0; u < 2; ++u) m.a[u] &= in_row(32 * u), m.b[u] &= in_row(32 * u + 16);
      m.c &= in_row(64);
      if (col0 < 0) m.a[0] &= lanes16(-col0, 16);
      // Only the first load masked (M1's first block), the others as an interior block's: its
      // masks as variables had cost M1v 1.04 of the time.
      const bool left_only = m.a[1] == i.a[1] && m.b[0] == i.b[0] && m.b[1] == i.b[1] && m.c == i.c;
      m.shared = left_only ? 1 : 2;
    }
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

// f16 and bf16 (max_pool_half_rows): their bits, widened to f32 as they load (exactly) and
// narrowed back as they store (exactly: every output is an input or the start). The reference's
// running maximum starts at the 16-bit type's lowest with position 0 and takes only greater taps
// (never that lowest, -inf or NaN): the rows start there too.
struct F16 {
  std::uint16_t bits;
};
struct BF16 {
  std::uint16_t bits;
};
template <class T>
constexpr bool kHalf = std::is_same_v<T, F16> || std::is_same_v<T, BF16>;
template <class S>
constexpr float kStart = std::is_same_v<S, F16>    ? -65504.0f
                         : std::is_same_v<S, BF16> ? -0x1.FEp127f
                                                   : std::numeric_limits<float>::lowest();

// 16 elements of p as f32: all; lanes m, 0 elsewhere; lanes m, src elsewhere.
template <class S>
IRRUN_AVX512 inline __m512 widen16(__m256i h) {
  if constexpr (std::is_same_v<S, F16>)
    return _mm512_cvtph_ps(h);
  else
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}
template <class S>
IRRUN_AVX512 inline __m512 load16(const S* p) {
  if constexpr (std::is_same_v<S, float>)
    return _mm512_loadu_ps(p);
  else
    return widen16<S>(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
template <class S>
IRRUN_AVX512 inline __m512 load16(__mmask16 m, const S* p) {
  if constexpr (std::is_same_v<S, float>)
    return _mm512_maskz_loadu_ps(m, p);
  else
    return widen16<S>(_mm256_maskz_loadu_epi16(m, p));
}
template <class S>
IRRUN_AVX512 inline __m512 load16(__m512 src, __mmask16 m, const S* p) {
  if constexpr (std::is_same_v<S, float>)
    return _mm512_mask_loadu_ps(src, m, p);
  else
    return _mm512_mask_mov_ps(src, m, load16(m, p));
}
// v's lanes m into p (all: m = 0xFFFF).
template <class S>
IRRUN_AVX512 inline void store16(S* p, __mmask16 m, __m512 v) {
  if constexpr (std::is_same_v<S, float>) {
    if (m == 0xFFFF)
      _mm512_storeu_ps(p, v);
    else
      _mm512_mask_storeu_ps(p, m, v);
  } else {
    // (bf16: a value's f32 bits are its bits and 16 zeros.)
    const __m256i h = std::is_same_v<S, F16>
                          ? _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT)
                          : _mm512_cvtepi32_epi16(_mm512_srli_epi32(_mm512_castps_si512(v), 16));
    if (m == 0xFFFF)
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
    else
      _mm256_mask_storeu_epi16(p, m, h);
  }
}

// Two blocks of 16 outputs at once (independent dependency chains), their taps from
// w.block_taps. Stride: 1 or 2. Values only: max(tap, cur), which is
// tap > cur ? tap : cur (vmaxps returns its second operand unless the first is greater), the
// same recurrence as the compare and blend.
//
// kCols (values alone, stride 2): de-interleaved blocks take their taps once, from the maxima
// over the window's rows of the elements they load (columns first, as narrow rows do), instead
// of once a row (M1v 0.90 of the time). Returns false when a column's maximum is -0, for the
// row to run again in order (narrow rows make the same check; why it suffices is told there).
// S: the elements' type (float, F16 or BF16).
template <int kStride, bool kPos, bool kCols = false, class S = float>
IRRUN_AVX512 bool row_avx512(const S* plane, const i64* rows, i64 nrows, const RowGeo& w, S* y,
                             i32* pos) {
  static_assert(kStride == 1 || kStride == 2);
  static_assert(!kCols || (!kPos && kStride == 2));
  const __m512 lowest = _mm512_set1_ps(std::numeric_limits<float>::lowest());
  __m512i least = _mm512_setzero_si512();  // kCols: -0's bits are the least int32
  constexpr int U = 2;
  constexpr i64 s = kStride;
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  [[maybe_unused]] const __m512i lane_step = _mm512_mullo_epi32(iota, _mm512_set1_epi32(s));
  [[maybe_unused]] const __m512i even =
      _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  [[maybe_unused]] const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  // Stride 2, interior blocks whose taps reach at most 17 columns past the first: each input
  // row's elements are de-interleaved once, into even and odd vectors, and tap t is the even
  // (t even) or odd ones shifted by t / 2 lanes, instead of two loads and a permute per tap.
  [[maybe_unused]] const bool shared = shared_taps(w);
  [[maybe_unused]] const __mmask16 upper = w.interior.b[U - 1], tail = w.interior.c;
  for (i64 b0 = 0, block = 0; b0 < w.out_w; b0 += 16 * U, ++block) {
    const i64 slot = w.block_slot[block];
    // An interior block past the row's end is the last one, moved back (make_block_taps).
    const i64 o0 = slot < 0 ? std::min(b0, w.out_w - 16 * U) : b0;
    __m512 cur[U];
    __m512i cp[U];
    for (int u = 0; u < U; ++u) {
      cur[u] = _mm512_set1_ps(kStart<S>);
      cp[u] = _mm512_setzero_si512();
    }
    const Tap32* taps = slot < 0 ? nullptr : w.block_taps + slot * w.k;
    const i64 tap_count = slot < 0 ? w.k : w.block_tap_count[slot];
    // Interior blocks: every lane in bounds (stride 2: the 31 elements up to the last tap), their
    // masks constants; the others' from the table. (A Tap32 copied per tap went through the
    // stack: its masks' 16-bit reloads of 32-bit stores missed store forwarding, M1v ~1.3x.)
    const auto taps_of = [&]<bool kTable>() IRRUN_AVX512_LAMBDA {
      for (i64 r = 0; r < nrows; ++r) {
        const S* row = plane + rows[r];
        for (i64 j = 0; j < tap_count; ++j) {
          const i64 t0 = kTable ? taps[j].c0 : o0 * s - w.pad + j * w.dil;
          for (int u = 0; u < U; ++u) {
            const i64 c0 = t0 + 16 * u * s;
            const __mmask16 ma = kTable ? taps[j].a[u] : 0xFFFF;
            __m512 v;
            if constexpr (kStride == 1) {
              v = load16(neg_inf, ma, row + c0);
            } else {
              const __mmask16 mb = kTable ? taps[j].b[u] : 0x7FFF;
              const __m512 a = load16(neg_inf, ma, row + c0);
              const __m512 b = load16(neg_inf, mb, row + c0 + 16);
              v = _mm512_permutex2var_ps(a, even, b);
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
    };
    // m: the masks of the loads a, b (per u) and c, their lanes inside the row (a block reads
    // padding before and after the row as -inf, which no tap takes; an interior block's last
    // loads, as 0, only elements past every tap of its lanes). M (LoadMasks::shared): 0 for an
    // interior block, which loads a whole, 1 where only the first a is masked, 2 where every
    // load is.
    // KC: the kernel's width when it is a constant with dilation 1 (2 or 3: the shifts and lane
    // choices of its taps folded), else 0.
    const auto taps_shared = [&]<int KC, int M>(const LoadMasks& m) IRRUN_AVX512_LAMBDA {
      const i64 col = o0 * s - w.pad;
      const i64 kw = KC > 0 ? KC : w.k, dil = KC > 0 ? 1 : w.dil;
      __m512 a[U], b[U], c;  // a row's elements 0-15, 16-31 (+ 32 u) and 64-79
      const auto load = [&](const S* x) IRRUN_AVX512_LAMBDA {
        for (int u = 0; u < U; ++u) {
          a[u] = M == 2 || (M == 1 && u == 0) ? load16(neg_inf, m.a[u], x + 32 * u)
                                              : load16(x + 32 * u);
          b[u] = M == 2      ? load16(neg_inf, m.b[u], x + 32 * u + 16)
                 : u + 1 < U ? load16(x + 32 * u + 16)
                             : load16(upper, x + 32 * u + 16);
        }
        c = M == 2 ? load16(neg_inf, m.c, x + 32 * U) : load16(tail, x + 32 * U);
      };
      if constexpr (kCols) {  // a, b and c of the rows' maxima
        __m512 ma[U], mb[U], mc = lowest;
        for (int u = 0; u < U; ++u) ma[u] = mb[u] = lowest;
        for (i64 r = 0; r < nrows; ++r) {
          load(plane + rows[r] + col);
          for (int u = 0; u < U; ++u) {
            ma[u] = _mm512_max_ps(a[u], ma[u]);
            mb[u] = _mm512_max_ps(b[u], mb[u]);
          }
          mc = _mm512_max_ps(c, mc);
        }
        for (int u = 0; u < U; ++u) {
          a[u] = ma[u], b[u] = mb[u];
          least = _mm512_min_epi32(
              least, _mm512_min_epi32(_mm512_castps_si512(a[u]), _mm512_castps_si512(b[u])));
        }
        c = mc;
        least = _mm512_min_epi32(least, _mm512_castps_si512(c));
      }
      for (i64 r = 0; r < (kCols ? 1 : nrows); ++r) {
        if constexpr (!kCols) load(plane + rows[r] + col);
        __m512 e[U + 1], d[U + 1];  // even and odd elements: 0, 2, .. 30 (+ 32 u); 1, 3, .. 31
        for (int u = 0; u < U; ++u) {
          e[u] = _mm512_permutex2var_ps(a[u], even, b[u]);
          d[u] = _mm512_permutex2var_ps(a[u], odd, b[u]);
        }
        e[U] = _mm512_permutexvar_ps(even, c);
        d[U] = _mm512_permutexvar_ps(odd, c);
        for (i64 j = 0; j < kw; ++j) {
          const i64 t = j * dil, m = t / 2;
          const __m512i shift = _mm512_add_epi32(iota, _mm512_set1_epi32(static_cast<i32>(m)));
          for (int u = 0; u < U; ++u) {
            const __m512 lo = t % 2 ? d[u] : e[u], hi = t % 2 ? d[u + 1] : e[u + 1];
            const __m512 v = m == 0 ? lo : _mm512_permutex2var_ps(lo, shift, hi);
            if constexpr (kPos) {
              const __mmask16 gt = _mm512_cmp_ps_mask(v, cur[u], _CMP_GT_OQ);
              cur[u] = _mm512_mask_mov_ps(cur[u], gt, v);
              const __m512i p = _mm512_add_epi32(
                  _mm512_set1_epi32(static_cast<i32>(rows[r] + col + t + 32 * u)), lane_step);
              cp[u] = _mm512_mask_mov_epi32(cp[u], gt, p);
            } else {
              cur[u] = _mm512_max_ps(v, cur[u]);
            }
          }
        }
      }
    };
    // taps_shared's M, or -1 for the taps (a table block that may not de-interleave).
    int mode = shared && !taps ? 0 : -1;
    if (taps && w.block_masks[slot].shared > 0) mode = w.block_masks[slot].shared;
    if (mode >= 0) {
      const LoadMasks& m = taps ? w.block_masks[slot] : w.interior;
      const auto run = [&]<int M>() IRRUN_AVX512_LAMBDA {
        if (w.k == 3 && w.dil == 1)
          taps_shared.template operator()<3, M>(m);
        else if (w.k == 2 && w.dil == 1)
          taps_shared.template operator()<2, M>(m);
        else
          taps_shared.template operator()<0, M>(m);
      };
      mode == 0   ? run.template operator()<0>()
      : mode == 1 ? run.template operator()<1>()
                  : run.template operator()<2>();
    } else {
      taps ? taps_of.template operator()<true>() : taps_of.template operator()<false>();
    }
    for (int u = 0; u < U; ++u) {
      if (w.out_w - o0 - 16 * u >= 16) {
        store16(y + o0 + 16 * u, 0xFFFF, cur[u]);
        if constexpr (kPos) _mm512_storeu_si512(pos + o0 + 16 * u, cp[u]);
        continue;
      }
      const __mmask16 out = lanes16(0, std::clamp<i64>(w.out_w - o0 - 16 * u, 0, 16));
      store16(y + o0 + 16 * u, out, cur[u]);
      if constexpr (kPos) _mm512_mask_storeu_epi32(pos + o0 + 16 * u, out, cp[u]);
    }
  }
  return !kCols || _mm512_cmpeq_epi32_mask(least, _mm512_set1_epi32(INT32_MIN)) == 0;
}

template <int kStride, class S = float>
IRRUN_AVX512 void row_avx512_any(const S* plane, const i64* rows, i64 nrows, const RowGeo& w, S* y,
                                 i32* pos) {
  // Columns first where a window has three rows or more: with two, the maxima cost about what
  // they save (M2v, 2x2 s2: 1.05 of the time).
  if (pos)
    row_avx512<kStride, true, false, S>(plane, rows, nrows, w, y, pos);
  else if (kStride == 1 || nrows < 3 ||
           !row_avx512<2, false, true, S>(plane, rows, nrows, w, y, pos))
    row_avx512<kStride, false, false, S>(plane, rows, nrows, w, y, pos);
}

// Lane mask of lanes [lo, hi) (hi <= 8) as an AVX2 integer mask.
IRRUN_AVX2_F16C inline __m256i lanes8(i64 lo, i64 hi) {
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i ge_lo = _mm256_cmpgt_epi32(iota, _mm256_set1_epi32(static_cast<i32>(lo - 1)));
  const __m256i lt_hi = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<i32>(hi)), iota);
  return _mm256_and_si256(ge_lo, lt_hi);
}

// Masked load of lanes [lo, hi) of p, -inf elsewhere (maskload reads only the masked lanes).
IRRUN_AVX2_F16C inline __m256 load8(const float* p, i64 lo, i64 hi) {
  const __m256i m = lanes8(lo, hi);
  const __m256 neg_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  if (lo >= hi) return neg_inf;
  return _mm256_blendv_ps(neg_inf, _mm256_maskload_ps(p, m), _mm256_castsi256_ps(m));
}

// 8 elements of p as f32 (S: float, F16 or BF16), as the float load8 above: all, lanes [lo, hi)
// with -inf elsewhere, the first n stored. 16-bit lanes through a buffer: AVX2 has no 16-bit
// masked moves (edge taps and short blocks only).
template <class S>
IRRUN_AVX2_F16C inline __m256 load8(const S* p) {
  if constexpr (std::is_same_v<S, float>) {
    return _mm256_loadu_ps(p);
  } else {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    if constexpr (std::is_same_v<S, F16>)
      return _mm256_cvtph_ps(h);
    else
      return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  }
}
template <class S>
IRRUN_AVX2_F16C inline __m256 load8(const S* p, i64 lo, i64 hi) {
  if constexpr (std::is_same_v<S, float>) {
    return load8(p, lo, hi);
  } else {
    alignas(16) S b[8];
    std::fill_n(b, 8, S{std::is_same_v<S, F16> ? std::uint16_t{0xFC00} : std::uint16_t{0xFF80}});
    if (lo < hi) std::copy(p + lo, p + hi, b + lo);
    return load8(b);
  }
}
template <class S>
IRRUN_AVX2_F16C inline void store8(S* p, i64 n, __m256 v) {
  if constexpr (std::is_same_v<S, float>) {
    if (n == 8)  // vmaskmovps stores are slow on AMD (M1 and M2 0.97 of the time)
      _mm256_storeu_ps(p, v);
    else
      _mm256_maskstore_ps(p, lanes8(0, n), v);
  } else {
    // (A bf16 value's f32 bits are its bits and 16 zeros.)
    const auto narrow = [](__m256 f) IRRUN_AVX2_F16C {
      if constexpr (std::is_same_v<S, F16>) return _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT);
      const __m256i b = _mm256_srli_epi32(_mm256_castps_si256(f), 16);
      return _mm_packus_epi32(_mm256_castsi256_si128(b), _mm256_extracti128_si256(b, 1));
    };
    const __m128i h = narrow(v);
    if (n == 8) {
      _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
    } else {
      alignas(16) S o[8];
      _mm_store_si128(reinterpret_cast<__m128i*>(o), h);
      std::copy_n(o, n, p);
    }
  }
}

template <int kStride, bool kPos, class S = float>
IRRUN_AVX2_F16C void row_avx2(const S* plane, const i64* rows, i64 nrows, const RowGeo& w, S* y,
                              i32* pos) {
  static_assert(kStride == 1 || kStride == 2);
  constexpr i64 s = kStride;
  // Stride 2 takes each tap's even elements in the order of one in-lane shuffle, outputs 0, 1,
  // 4, 5, 2, 3, 6, 7, and puts the block's maxima in order once, before its stores (M1 0.97 of
  // the time of a permute per tap). Each lane takes its taps in the same order, so the same bits.
  const __m256i iota = s == 1 ? _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)
                              : _mm256_setr_epi32(0, 1, 4, 5, 2, 3, 6, 7);
  [[maybe_unused]] const __m256i lane_step = _mm256_mullo_epi32(iota, _mm256_set1_epi32(s));
  // Elements a block of eight reads from its first tap column on: 8 (stride 1), the 15 of the
  // two de-interleaved loads (stride 2: the second starts one element early, so a block whose
  // last output reads the row's last element runs as interior: M1v's last blocks, 0.77 of the
  // time).
  constexpr i64 span = 8 * s - (s - 1);
  for (i64 o0 = 0; o0 < w.out_w; o0 += 8) {
    const i64 n = std::min<i64>(8, w.out_w - o0);
    __m256 cur = _mm256_set1_ps(kStart<S>);
    __m256i cp = _mm256_setzero_si256();
    // Interior blocks (every tap of all eight lanes in the row) need no masks: plain loads of
    // the same elements.
    const bool interior =
        n == 8 && o0 * s - w.pad >= 0 && o0 * s - w.pad + (w.k - 1) * w.dil + span <= w.in_w;
    // Interior blocks in a loop of their own, 3-tap kernels unrolled: with the masks' set-up
    // in the same loop, M1v spent most of its time on scalar bookkeeping.
    const auto taps = [&]<bool kInterior, int KC>() IRRUN_AVX2_F16C {
      const i64 kn = KC > 0 ? KC : w.k;
      for (i64 r = 0; r < nrows; ++r) {
        const S* row = plane + rows[r];
        for (i64 kw = 0; kw < kn; ++kw) {
          const i64 c0 = o0 * s - w.pad + kw * w.dil;
          // In an edge block, a tap whose loads lie in the row loads as in an interior one (the
          // lanes past n are not stored): only the others take masks (M1v 0.80 of the time).
          const bool inside = kInterior || (c0 >= 0 && c0 + span <= w.in_w);
          i64 lo = 0, hi = 8;
          if (!inside) valid_lanes(c0, s, w.in_w, n, lo, hi);
          if (lo >= hi) continue;
          __m256 v;
          if constexpr (kStride == 1) {
            v = inside ? load8(row + c0) : load8(row + c0, lo, hi);
          } else {
            const i64 e_lo = 2 * lo, e_hi = 2 * hi - 1;
            const __m256 a = inside
                                 ? load8(row + c0)
                                 : load8(row + c0, std::min<i64>(e_lo, 8), std::min<i64>(e_hi, 8));
            if (inside) {  // b from c0 + 7: its elements 1, 3, 5, 7 are 8, .., 14
              v = _mm256_shuffle_ps(a, load8(row + c0 + 7), 0xD8);
            } else {
              const __m256 b =
                  load8(row + c0 + 8, std::max<i64>(e_lo, 8) - 8, std::max<i64>(e_hi, 8) - 8);
              v = _mm256_shuffle_ps(a, b, 0x88);  // [a0 a2 b0 b2 a4 a6 b4 b6]
            }
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
    };
    if (!interior)
      taps.template operator()<false, 0>();
    else if (w.k == 3)
      taps.template operator()<true, 3>();
    else
      taps.template operator()<true, 0>();
    if constexpr (kStride == 2) {  // [0 1 4 5 2 3 6 7] -> [0 1 2 3 4 5 6 7]
      cur = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(cur), 0xD8));
      if constexpr (kPos) cp = _mm256_permute4x64_epi64(cp, 0xD8);
    }
    store8(y + o0, n, cur);
    if constexpr (kPos) {
      if (n == 8)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(pos + o0), cp);
      else
        _mm256_maskstore_epi32(pos + o0, lanes8(0, n), cp);
    }
  }
}

template <int kStride, class S = float>
IRRUN_AVX2_F16C void row_avx2_any(const S* plane, const i64* rows, i64 nrows, const RowGeo& w, S* y,
                                  i32* pos) {
  if (pos) return row_avx2<kStride, true, S>(plane, rows, nrows, w, y, pos);
  row_avx2<kStride, false, S>(plane, rows, nrows, w, y, pos);
}

constexpr i64 kMaxSources = 16;     // wider spans (long strides, kernels or dilations): portable
constexpr i64 kFlatColumns = 4096;  // column maxima per flat group (L1: 32 KB with positions)
constexpr i64 kNarrowColumns = 64;  // narrow rows' columns and outputs at most (make_narrow)

// The Spread of blocks of `lanes` outputs from sources of `width` columns, and the column
// maxima's layout in w; false when a block's taps span more than kMaxSources sources.
// Flat groups: when the rows tile exactly (no left pad, in_w = out_w * stride, every tap inside
// its output's own stride: AdaptiveMaxPool's equal bins, k = s windows), the column maxima of
// consecutive output rows laid back to back are one long row whose outputs are those rows'
// outputs back to back, so blocks run across row ends and narrow rows (M3: 7 outputs) fill
// their vectors.
bool make_spread(RowGeo& w, i64 lanes, i64 width, i64 out_rows, Spread& sp) {
  const i64 span = (lanes - 1) * w.stride + (w.k - 1) * w.dil + 1;
  sp.sources = (span + width - 1) / width;
  if (sp.sources > kMaxSources) return false;
  const auto n = static_cast<std::size_t>(w.k * sp.sources);
  sp.idx.assign(static_cast<std::size_t>(w.k * lanes), 0);
  sp.mask.assign(n * static_cast<std::size_t>(lanes), 0);
  sp.bits.assign(n, 0);
  sp.first.assign(static_cast<std::size_t>(w.k), 0);
  sp.count.assign(static_cast<std::size_t>(w.k), 0);
  for (i64 t = 0; t < w.k; ++t) {
    const auto tu = static_cast<std::size_t>(t);
    const i64 lo = t * w.dil / width, hi = ((lanes - 1) * w.stride + t * w.dil) / width;
    sp.first[tu] = lo, sp.count[tu] = hi - lo + 1;
    for (i64 o = 0; o < lanes; ++o) {
      const i64 c = o * w.stride + t * w.dil, j = c / width - lo;
      sp.idx[static_cast<std::size_t>(t * lanes + o)] = static_cast<i32>(c % width);
      sp.bits[static_cast<std::size_t>(t * sp.sources + j)] |= static_cast<std::uint16_t>(1u << o);
      sp.mask[static_cast<std::size_t>((t * sp.sources + j) * lanes + o)] = -1;
    }
  }
  const bool flat = w.pad == 0 && w.in_w == w.out_w * w.stride && (w.k - 1) * w.dil < w.stride;
  w.group = flat ? std::clamp<i64>(kFlatColumns / w.in_w, 1, out_rows) : 1;
  // Blocks start at column o0 * stride - pad (o0 a multiple of lanes) and read sources * width
  // columns; the column pass writes pairs of vectors of 16 up to each row's in_w rounded up.
  const i64 last = (w.group * w.out_w - 1) / lanes * lanes * w.stride - w.pad;
  w.col_left = w.pad;
  w.col_len = w.col_left +
              std::max((w.group - 1) * w.in_w + (w.in_w + 31) / 32 * 32, last + sp.sources * width);
  w.spread = &sp;
  return true;
}

// The column maxima of one output row: (value, position) of each column's greatest element
// over rows[0..nrows) by the recurrence (strictly greater wins), (lowest(), 0) where none
// exceeds lowest(), and also past in_w up to the next multiple of 32. Returns whether a NaN
// was loaded.
IRRUN_AVX512 inline bool columns_avx512(const float* plane, const i64* rows, i64 nrows, i64 in_w,
                                        float* cv, i32* cp) {
  __mmask16 nan = 0;
  const __m512 lowest = _mm512_set1_ps(std::numeric_limits<float>::lowest());
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  // Two vectors of 16 columns at a time (two chains of compares in flight); the last ones are
  // masked (+ lowest() past in_w, which no value beats).
  for (i64 c = 0; c < in_w; c += 32) {
    const __mmask16 in0 = lanes16(0, std::min<i64>(16, in_w - c));
    const __mmask16 in1 = lanes16(0, std::clamp<i64>(in_w - c - 16, 0, 16));
    __m512 v0 = lowest, v1 = lowest;
    __m512i p0 = _mm512_setzero_si512(), p1 = p0;
    for (i64 r = 0; r < nrows; ++r) {
      const float* row = plane + rows[r] + c;
      const __m512 x0 = _mm512_mask_loadu_ps(lowest, in0, row);
      const __m512 x1 = _mm512_mask_loadu_ps(lowest, in1, row + 16);
      nan |= _mm512_cmp_ps_mask(x0, x1, _CMP_UNORD_Q);
      const __mmask16 gt0 = _mm512_cmp_ps_mask(x0, v0, _CMP_GT_OQ);
      const __mmask16 gt1 = _mm512_cmp_ps_mask(x1, v1, _CMP_GT_OQ);
      const __m512i at = _mm512_add_epi32(_mm512_set1_epi32(static_cast<i32>(rows[r] + c)), iota);
      v0 = _mm512_mask_mov_ps(v0, gt0, x0);
      v1 = _mm512_mask_mov_ps(v1, gt1, x1);
      p0 = _mm512_mask_mov_epi32(p0, gt0, at);
      p1 = _mm512_mask_mov_epi32(p1, gt1, _mm512_add_epi32(at, _mm512_set1_epi32(16)));
    }
    _mm512_storeu_ps(cv + c, v0);
    _mm512_storeu_si512(cp + c, p0);
    _mm512_storeu_ps(cv + c + 16, v1);
    _mm512_storeu_si512(cp + c + 16, p1);
  }
  return nan != 0;
}

// Strides of 3 or more on AVX-512: the column maxima of rows q0 .. q1 - 1 (one row, or a flat
// group), then blocks of 16 outputs whose taps are permuted out of them (w.spread, pairs of
// vectors) and combined by the order-free rule.
IRRUN_AVX512 bool cols_avx512(const float* plane, const RowTable& rt, i64 q0, i64 q1,
                              const RowGeo& w, const ColScratch& cs, float* y, i32* pos) {
  const Spread& sp = *w.spread;
  float* cv = cs.v + w.col_left;
  i32* cp = cs.p + w.col_left;
  bool nan = false;
  for (i64 q = q0; q < q1; ++q)  // in order: each row's last vector spills into the next row
    nan |= columns_avx512(plane, rt.rows(q), rt.count(q), w.in_w, cv + (q - q0) * w.in_w,
                          cp + (q - q0) * w.in_w);
  const __m512 lowest = _mm512_set1_ps(std::numeric_limits<float>::lowest());
  __mmask16 low = 0;
  const i64 n_out = (q1 - q0) * w.out_w;
  for (i64 o0 = 0; o0 < n_out; o0 += 16) {
    const i64 c0 = o0 * w.stride - w.pad;
    __m512 m = _mm512_setzero_ps();
    __m512i mp = _mm512_setzero_si512();
    for (i64 t = 0; t < w.k; ++t) {
      const auto tu = static_cast<std::size_t>(t);
      const __m512i idx = _mm512_loadu_si512(sp.idx.data() + t * 16);
      const std::uint16_t* bits = sp.bits.data() + t * sp.sources;
      __m512 v = _mm512_setzero_ps();
      __m512i p = _mm512_setzero_si512();
      // Every lane reads one source: the first source's permute fills all lanes, the others
      // replace theirs.
      for (i64 j = 0; j < sp.count[tu]; ++j) {
        const i64 c = c0 + (sp.first[tu] + j) * 32;
        const __m512 vj =
            _mm512_permutex2var_ps(_mm512_loadu_ps(cv + c), idx, _mm512_loadu_ps(cv + c + 16));
        const __m512i pj = _mm512_permutex2var_epi32(_mm512_loadu_si512(cp + c), idx,
                                                     _mm512_loadu_si512(cp + c + 16));
        v = j == 0 ? vj : _mm512_mask_mov_ps(v, bits[j], vj);
        p = j == 0 ? pj : _mm512_mask_mov_epi32(p, bits[j], pj);
      }
      if (t == 0) {  // the first tap against (lowest(), 0) keeps its own column maximum
        m = v, mp = p;
        continue;
      }
      const __mmask16 take =
          _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ) |
          (_mm512_cmp_ps_mask(v, m, _CMP_EQ_OQ) & _mm512_cmplt_epi32_mask(p, mp));
      m = _mm512_mask_mov_ps(m, take, v);
      mp = _mm512_mask_mov_epi32(mp, take, p);
    }
    const __mmask16 out = lanes16(0, std::min<i64>(16, n_out - o0));
    _mm512_mask_storeu_ps(y + o0, out, m);
    if (pos) _mm512_mask_storeu_epi32(pos + o0, out, mp);
    low |= _mm512_mask_cmp_ps_mask(out, m, lowest, _CMP_EQ_OQ);
  }
  return !nan && low == 0;
}

// ---- Narrow rows: at most 64 input columns and outputs a row (7x7, 14x14, 28x28, 35x35 and 56x56
// planes, I3D's 3-D windows), any stride, dilation and padding. Row by row, the blocks above spent
// 20-60 ns an output row on tables, masks and 32 lanes for 7 outputs (I3D's 3x3x3 pools on 7x7
// and 14x14 planes: 1.6-3 GB/s). Here each output row takes its columns' maxima over the
// window's input rows (a load per vector of a row), in registers, then every output's over its
// columns, each tap slot permuted out of those vectors (AVX-512: one to four vectors of 16;
// AVX2: one to eight of 8; rows of 49-64 columns had taken the row blocks: I3D's 1x3x3 s(1,2,2)
// pool on 56x56 planes 0.5-0.7 of the time, M2v 0.55, with the AVX2 cap 0.61). A unit is a whole
// plane's rows (up to kFlatColumns outputs), stored back to back. Values alone take max(x, m),
// which is order-free unless a window holds both zeros, where the recurrence keeps the first
// one's sign (in its order: rows, then columns). A column's maximum keeps the first of its zeros
// in row order, and the slots take columns in order, so the two orders part only where some
// column's maximum is a -0 (a -0 below an earlier +0 of its column comes after that +0 in either
// order): a group where one is (1 check a vector of a row, where a check a load took 0.87 of
// I3D's 3x3x3 time) runs again with positions, combined by cols_*'s order-free rule (greater, or
// equal with a lesser position).

// Slot j of output vector u (of nu) takes the j-th in-bounds tap (first[o] + j * dil) of each of
// its lanes o: idx[(j * nu + u) * lanes + o] is its column. A lane with fewer taps takes its last
// one again in the later slots, which changes neither a maximum nor, being the same position, a
// position; one with none has -1 in every slot: past out_w it is not kept, and a window in the
// padding (RowGeo::narrow_empty) is set to (lowest(), 0) after them.
struct NarrowTaps {
  std::vector<i32> idx;
};

// Rows of at most `vectors` vectors of `lanes`; else false.
bool make_narrow(RowGeo& w, i64 lanes, i64 vectors, i64 out_rows, NarrowTaps& nt) {
  if (w.in_w > lanes * vectors || w.out_w > lanes * vectors) return false;
  const i64 nu = (w.out_w + lanes - 1) / lanes;
  const i64 slots = std::max<i64>(1, *std::max_element(w.taps, w.taps + w.out_w));
  nt.idx.assign(static_cast<std::size_t>(slots * nu * lanes), -1);
  for (i64 o = 0; o < w.out_w; ++o)
    for (i64 j = 0; j < slots && w.taps[o] > 0; ++j)
      nt.idx[static_cast<std::size_t>((j * nu + o / lanes) * lanes + o % lanes)] =
          static_cast<i32>(w.first[o] + std::min(j, w.taps[o] - 1) * w.dil);
  w.narrow_idx = nt.idx.data();
  w.narrow_slots = slots;
  w.narrow_empty = std::find(w.taps, w.taps + w.out_w, 0) != w.taps + w.out_w;
  // Flat groups keep their rows (their column maxima in ColScratch), else a whole plane's rows.
  if (!w.flat_positions) w.group = std::clamp<i64>(kFlatColumns / w.out_w, 1, out_rows);
  w.col_len = std::max(w.col_len, w.group * w.out_w);  // a rerun's positions (ColScratch::p)
  return true;
}

constexpr i64 kSepColumns = 16384;  // separable groups' outputs, at most (whole planes of D)
constexpr i64 kSepFloats = 16384;   // their ring of row maxima, at most (64 KB)
constexpr i64 kSepMaxKernel = 16;   // and D windows of this many planes, at most

// Separable windows (sep_rows_avx512) for narrow rows in vectors of 16 (make_narrow's), set up in
// w where each plane of D is in two windows or more (stride at most half the kernel, no
// dilation) and their ring fits, in groups of whole planes of D; else w is left as it is. (I3D's
// 3x3x3 s2 pool, each plane in one or two windows, took 1.2x.)
void make_sep(RowGeo& w, const PoolGeometry& g) {
  const i64 slots = g.kernel[0] + g.stride[0], ring = slots * g.out[1] * ((w.in_w + 15) / 16 * 16);
  if (w.flat_positions || g.kernel[0] > kSepMaxKernel || 2 * g.stride[0] > g.kernel[0] ||
      g.dilation[0] != 1 || ring > kSepFloats)
    return;
  w.sep_slots = slots;
  if (g.kernel[1] == 3 && g.stride[1] == 1 && g.dilation[1] == 1) w.sep_pad_h = g.pad_begin[1];
  w.group = std::clamp<i64>(kSepColumns / (g.out[1] * w.out_w), 1, g.out[0]) * g.out[1];
  w.col_len = std::max({w.col_len, w.group * w.out_w, ring + 15});
}

// The outputs of one output row, at y + o (and pos + o), from its columns' maxima cm (and their
// positions cp): every output's maximum over its columns, each tap slot permuted out of cm.
// With positions, `low` gains the lanes left at the start. n_out: the group's outputs (whole
// stores before it).
template <int NV, bool kPos, class S>
IRRUN_AVX512 inline __attribute__((always_inline)) void narrow_outputs(const __m512 (&cm)[NV],
                                                                       const __m512i (&cp)[NV],
                                                                       const RowGeo& w, i64 o,
                                                                       i64 n_out, S* y, i32* pos,
                                                                       __mmask16& low) {
  const __m512 lowest = _mm512_set1_ps(kStart<S>);
  const i64 nu = (w.out_w + 15) / 16;
  for (i64 u = 0; u < nu; ++u) {
    __m512 m = lowest;
    __m512i mp = _mm512_setzero_si512();
    const i32* slot = w.narrow_idx + u * 16;
    for (i64 j = 0; j < w.narrow_slots; ++j, slot += nu * 16) {
      const __m512i idx = _mm512_loadu_si512(slot);
      // Columns 32-63 (NV 3, 4) from the third and fourth vectors.
      [[maybe_unused]] const __mmask16 third =
          NV >= 3 ? _mm512_cmpgt_epi32_mask(idx, _mm512_set1_epi32(31)) : 0;
      __m512 v =
          NV == 1 ? _mm512_permutexvar_ps(idx, cm[0]) : _mm512_permutex2var_ps(cm[0], idx, cm[1]);
      if constexpr (NV == 3) v = _mm512_mask_permutexvar_ps(v, third, idx, cm[2]);
      if constexpr (NV == 4)
        v = _mm512_mask_mov_ps(v, third, _mm512_permutex2var_ps(cm[2], idx, cm[3]));
      if constexpr (kPos) {
        __m512i p = NV == 1 ? _mm512_permutexvar_epi32(idx, cp[0])
                            : _mm512_permutex2var_epi32(cp[0], idx, cp[1]);
        if constexpr (NV == 3) p = _mm512_mask_permutexvar_epi32(p, third, idx, cp[2]);
        if constexpr (NV == 4)
          p = _mm512_mask_mov_epi32(p, third, _mm512_permutex2var_epi32(cp[2], idx, cp[3]));
        const __mmask16 take =
            _mm512_cmp_ps_mask(v, m, _CMP_GT_OQ) |
            (_mm512_cmp_ps_mask(v, m, _CMP_EQ_OQ) & _mm512_cmplt_epi32_mask(p, mp));
        m = _mm512_mask_mov_ps(m, take, v);
        mp = _mm512_mask_mov_epi32(mp, take, p);
      } else {
        m = _mm512_max_ps(v, m);
      }
    }
    if (w.narrow_empty) {  // lanes past out_w are not kept either way
      const __mmask16 none = _mm512_cmplt_epi32_mask(_mm512_loadu_si512(w.narrow_idx + u * 16),
                                                     _mm512_setzero_si512());
      m = _mm512_mask_mov_ps(m, none, lowest);
      if constexpr (kPos) mp = _mm512_mask_mov_epi32(mp, none, _mm512_setzero_si512());
    }
    // Rows are back to back: a whole store where the group's outputs go on, which the next
    // row then writes over.
    const i64 at = o + 16 * u, left = std::min<i64>(16, w.out_w - 16 * u);
    if (at + 16 <= n_out) {
      store16(y + at, 0xFFFF, m);
      if constexpr (kPos) _mm512_storeu_si512(pos + at, mp);
    } else {
      store16(y + at, lanes16(0, left), m);
      if constexpr (kPos) _mm512_mask_storeu_epi32(pos + at, lanes16(0, left), mp);
    }
    if constexpr (kPos) low |= _mm512_mask_cmp_ps_mask(lanes16(0, left), m, lowest, _CMP_EQ_OQ);
  }
}

// narrow_outputs of values alone with taps from registers (RegTaps R, as narrow_values set it):
// shifted out of the column maxima (valignd), or split into their even and odd columns (vpermt2d)
// and those shifted, instead of permuted by a table; columns past the row's ends are lowest (a
// tap that changes no maximum). The taps' maxima in column order, as narrow_outputs takes them.
template <int NV, RegTaps R, class S>
IRRUN_AVX512 inline __attribute__((always_inline)) void reg_outputs(const __m512 (&cm)[NV],
                                                                    const RowGeo& w, i64 o,
                                                                    i64 n_out, S* y) {
  static_assert(R.stride == 1 || R.stride == 2);
  const __m512i lowest = _mm512_castps_si512(_mm512_set1_ps(kStart<S>));
  __m512i c[NV + 3];  // c[v + 1]: cm[v], lowest past in_w; lowest around them
  c[0] = c[NV + 1] = c[NV + 2] = lowest;
  for (int v = 0; v < NV; ++v)
    c[v + 1] = _mm512_mask_mov_epi32(lowest, lanes16(0, std::clamp<i64>(w.in_w - 16 * v, 0, 16)),
                                     _mm512_castps_si512(cm[v]));
  const auto max = [&](__m512i a, __m512i b) IRRUN_AVX512_LAMBDA {
    return _mm512_castps_si512(_mm512_max_ps(_mm512_castsi512_ps(b), _mm512_castsi512_ps(a)));
  };
  const auto out = [&](int u, __m512i v) IRRUN_AVX512_LAMBDA {
    const i64 at = o + 16 * u;
    store16(y + at, at + 16 <= n_out ? 0xFFFF : lanes16(0, std::min<i64>(16, w.out_w - 16 * u)),
            _mm512_castsi512_ps(v));
  };
  if constexpr (R.stride == 1) {
    for (int u = 0; u < NV && 16 * u < w.out_w; ++u) {
      const __m512i l = R.pad == 1 ? _mm512_alignr_epi32(c[u + 1], c[u], 15) : c[u + 1];
      const __m512i m = R.pad == 1 ? c[u + 1] : _mm512_alignr_epi32(c[u + 2], c[u + 1], 1);
      const __m512i r = _mm512_alignr_epi32(c[u + 2], c[u + 1], R.pad == 1 ? 1 : 2);
      out(u, max(max(l, m), r));
    }
  } else {
    // Outputs 16u .. 16u + 15 from columns 32u - pad on: the even and odd columns of c[2u + 1]
    // and c[2u + 2], the odd one before (pad 1: c[2u]'s last) or the even one after (K = 3, pad
    // 0: c[2u + 3]'s first).
    const __m512i even =
        _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
    const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
    for (int u = 0; u < (NV + 1) / 2 && 16 * u < w.out_w; ++u) {
      const __m512i e = _mm512_permutex2var_epi32(c[2 * u + 1], even, c[2 * u + 2]);
      const __m512i d = _mm512_permutex2var_epi32(c[2 * u + 1], odd, c[2 * u + 2]);
      if constexpr (R.pad == 1) {
        const __m512i v = max(_mm512_alignr_epi32(d, c[2 * u], 15), e);
        out(u, R.k == 3 ? max(v, d) : v);
      } else {
        const __m512i v = max(e, d);
        out(u, R.k == 3 ? max(v, _mm512_alignr_epi32(c[2 * u + 3], e, 1)) : v);
      }
    }
  }
}

// The output rows q0 .. q1 - 1 of narrow rows on AVX-512, in NV vectors (GroupFn). Values
// alone set `neg_zero` where a column maximum (of a row's columns or past them) was -0 and
// return false (not checked); with positions, whether they saw no NaN and no output left at
// lowest().
// S: the elements' type (f16 and bf16 widened as they load, narrowed as they store; their rows
// start at kStart<S>, max_pool_half_rows).
template <int NV, bool kPos, RegTaps R = RegTaps{}, class S = float>
IRRUN_AVX512 bool narrow_rows_avx512(const S* plane, const RowTable& rt, i64 q0, i64 q1,
                                     const RowGeo& w, S* y, i32* pos, bool& neg_zero) {
  const __m512 lowest = _mm512_set1_ps(kStart<S>);
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const i64 n_out = (q1 - q0) * w.out_w;
  __mmask16 in[NV];
  for (int v = 0; v < NV; ++v) in[v] = lanes16(0, std::clamp<i64>(w.in_w - 16 * v, 0, 16));
  __mmask16 nan = 0, low = 0;
  // Values alone: -0's bits are the least int32, INT_MIN.
  __m512i least = _mm512_setzero_si512();
  for (i64 q = q0; q < q1; ++q) {
    const i64* rows = rt.rows(q);
    const i64 n = rt.count(q);
    __m512 cm[NV];
    __m512i cp[NV];
    for (int v = 0; v < NV; ++v) cm[v] = lowest, cp[v] = _mm512_setzero_si512();
    const auto take_rows = [&](auto whole) IRRUN_AVX512_LAMBDA {
      for (i64 r = 0; r < n; ++r)
        for (int v = 0; v < NV; ++v) {
          const S* x = plane + rows[r] + 16 * v;
          const __m512 xv = whole ? load16(x) : load16(in[v], x);
          if constexpr (kPos) {
            nan |= _mm512_mask_cmp_ps_mask(in[v], xv, xv, _CMP_UNORD_Q);
            const __mmask16 gt = _mm512_cmp_ps_mask(xv, cm[v], _CMP_GT_OQ);
            cm[v] = _mm512_mask_mov_ps(cm[v], gt, xv);
            const auto at = static_cast<i32>(rows[r] + 16 * v);
            cp[v] = _mm512_mask_mov_epi32(cp[v], gt, _mm512_add_epi32(_mm512_set1_epi32(at), iota));
          } else {
            cm[v] = _mm512_max_ps(xv, cm[v]);
          }
        }
    };
    // Lanes past in_w are never taken: whole loads where the window's last row's stay in the
    // plane (masked loads keep the hardware prefetchers away; rows go up in the plane).
    if (n > 0 && rows[n - 1] + 16 * NV <= w.plane_len)
      take_rows(std::true_type{});
    else
      take_rows(std::false_type{});
    if constexpr (!kPos)
      for (int v = 0; v < NV; ++v) least = _mm512_min_epi32(least, _mm512_castps_si512(cm[v]));
    if constexpr (!kPos && R.stride > 0)
      reg_outputs<NV, R>(cm, w, (q - q0) * w.out_w, n_out, y);
    else
      narrow_outputs<NV, kPos>(cm, cp, w, (q - q0) * w.out_w, n_out, y, pos, low);
  }
  if constexpr (!kPos) {
    neg_zero = _mm512_cmpeq_epi32_mask(least, _mm512_set1_epi32(INT32_MIN)) != 0;
    return false;
  }
  return nan == 0 && low == 0;
}

// Separable windows' walk (sep_rows_avx512, sep_rows_avx2), free of vector code: the output rows
// q0 .. q1 - 1 (whole planes of D) plane of D by plane. fill(d, h) takes plane d's maxima over
// each output row's rows of H into its slot h of the ring at hm (slot_len floats), once, one
// window ahead, so the maxima over D do not load what was just stored; outputs(planes, n, oh,
// o) takes output row (od, oh) from its window's n slots, in order, to the group's outputs at o.
template <class Fill, class Outputs>
inline __attribute__((always_inline)) void sep_walk(const RowGeo& w, i64 q0, i64 q1, float* hm,
                                                    i64 slot_len, Fill fill, Outputs outputs) {
  // The ring on a cache line (make_sep leaves 15 floats for it): unaligned, its loads each split
  // two lines (1.1x the time).
  hm += (64 - reinterpret_cast<std::uintptr_t>(hm) % 64) % 64 / sizeof(float);
  const detail::AxisWindows& ad = *w.axis_d;
  const i64 OH = w.out_h;
  const auto slot = [&](i64 d) { return hm + d % w.sep_slots * slot_len; };
  i64 next_d = 0;  // planes before it are in the ring (or not needed)
  const i64 od0 = q0 / OH, od_end = q1 / OH;
  // fill called from one place, where it is inlined: called from two, a call per plane, 14x14
  // planes took 1.09-1.13x the time.
  for (i64 od = od0 - 1; od < od_end; ++od) {
    if (od + 1 < od_end) {
      const auto at = static_cast<std::size_t>(od + 1);
      const i64 first = ad.first[at], last = first + ad.taps[at];  // (step 1: make_sep)
      for (i64 d = std::max(next_d, first); d < last; ++d) fill(d, slot(d));
      next_d = std::max(next_d, last);
    }
    if (od < od0) continue;
    const auto at = static_cast<std::size_t>(od);
    const i64 first = ad.first[at], last = first + ad.taps[at];
    // The window's planes in the ring, in order (a division each: not one per output row).
    const float* planes[kSepMaxKernel];
    for (i64 d = first; d < last; ++d) planes[d - first] = slot(d);
    for (i64 oh = 0; oh < OH; ++oh)
      outputs(planes, last - first, oh, (od * OH + oh - q0) * w.out_w);
  }
}

// Separable windows (values alone; make_sep): narrow_rows_avx512's column maxima of output row
// (od, oh) taken over the window's planes of D from the maxima over its rows of H in each plane
// (hm), which every plane computes once for all output rows whose windows hold it and keeps in a
// ring of RowGeo::sep_slots planes (sep_walk). The rows of a window are D-major, so each plane's
// rows are consecutive in its order, and the first of equal values wins in both steps (max(x, m)
// keeps m), which is the recurrence's choice over the whole window (a -0 is checked as there).
// I3D's 3x3x3 s1 pools had loaded (and widened) every input row nine times.
// q0 and q1: whole planes of D (multiples of out_h).
template <int NV, RegTaps R, class S = float>
IRRUN_AVX512 void sep_rows_avx512(const S* plane, i64 q0, i64 q1, const RowGeo& w, float* hm, S* y,
                                  bool& neg_zero) {
  const __m512 lowest = _mm512_set1_ps(kStart<S>);
  const detail::AxisWindows& ah = *w.axis_h;
  const i64 in_d = w.in_h * w.in_w, n_out = (q1 - q0) * w.out_w;
  __mmask16 in[NV];
  for (int v = 0; v < NV; ++v) in[v] = lanes16(0, std::clamp<i64>(w.in_w - 16 * v, 0, 16));
  __m512i least = _mm512_setzero_si512();
  const __m512i no_pos[NV] = {};
  __mmask16 low = 0;
  const auto fill = [&](i64 d, float* h) IRRUN_AVX512_LAMBDA {
    if (w.sep_pad_h >= 0) {
      // Windows of three rows, stride 1: each row loaded once, kept for the next two windows;
      // rows outside the plane are lowest (a tap that changes no maximum).
      const auto row = [&](i64 r, __m512(&x)[NV]) IRRUN_AVX512_LAMBDA {
        const i64 off = d * in_d + r * w.in_w;
        for (int v = 0; v < NV; ++v)
          x[v] = r < 0 || r >= w.in_h           ? lowest
                 : off + 16 * NV <= w.plane_len ? load16(plane + off + 16 * v)
                                                : load16(in[v], plane + off + 16 * v);
      };
      __m512 a[NV], b[NV], c[NV];
      row(-w.sep_pad_h, a);
      row(1 - w.sep_pad_h, b);
      for (i64 oh = 0; oh < w.out_h; ++oh, h += NV * 16) {
        row(oh + 2 - w.sep_pad_h, c);
        for (int v = 0; v < NV; ++v) {
          _mm512_storeu_ps(h + 16 * v,
                           _mm512_max_ps(c[v], _mm512_max_ps(b[v], _mm512_max_ps(a[v], lowest))));
          a[v] = b[v], b[v] = c[v];
        }
      }
      return;
    }
    for (i64 oh = 0; oh < w.out_h; ++oh, h += NV * 16) {
      const auto ha = static_cast<std::size_t>(oh);
      const i64 n = ah.taps[ha], r0 = d * in_d + ah.first[ha] * w.in_w, step = ah.step * w.in_w;
      __m512 m[NV];
      for (int v = 0; v < NV; ++v) m[v] = lowest;
      const auto take_rows = [&](auto whole) IRRUN_AVX512_LAMBDA {
        for (i64 r = 0; r < n; ++r)
          for (int v = 0; v < NV; ++v) {
            const S* x = plane + r0 + r * step + 16 * v;
            m[v] = _mm512_max_ps(whole ? load16(x) : load16(in[v], x), m[v]);
          }
      };
      if (n > 0 && r0 + (n - 1) * step + 16 * NV <= w.plane_len)
        take_rows(std::true_type{});
      else
        take_rows(std::false_type{});
      for (int v = 0; v < NV; ++v) _mm512_storeu_ps(h + 16 * v, m[v]);
    }
  };
  const auto outputs = [&](const float* const* planes, i64 n, i64 oh, i64 o) IRRUN_AVX512_LAMBDA {
    __m512 cm[NV];
    for (int v = 0; v < NV; ++v) cm[v] = lowest;
    for (i64 t = 0; t < n; ++t) {
      const float* h = planes[t] + oh * NV * 16;
      for (int v = 0; v < NV; ++v) cm[v] = _mm512_max_ps(_mm512_loadu_ps(h + 16 * v), cm[v]);
    }
    for (int v = 0; v < NV; ++v) least = _mm512_min_epi32(least, _mm512_castps_si512(cm[v]));
    if constexpr (R.stride > 0)
      reg_outputs<NV, R>(cm, w, o, n_out, y);
    else
      narrow_outputs<NV, false>(cm, no_pos, w, o, n_out, y, nullptr, low);
  };
  sep_walk(w, q0, q1, hm, w.out_h * NV * 16, fill, outputs);
  neg_zero = _mm512_cmpeq_epi32_mask(least, _mm512_set1_epi32(INT32_MIN)) != 0;
}

template <int NV, class S = float>
IRRUN_AVX512 bool narrow_avx512(const S* plane, const RowTable& rt, i64 q0, i64 q1, const RowGeo& w,
                                const ColScratch& cs, S* y, i32* pos) {
  bool neg_zero = false;
  if constexpr (std::is_same_v<S, float>)
    if (pos && w.flat_positions) return w.flat_positions(plane, rt, q0, q1, w, cs, y, pos);
  if (pos) return narrow_rows_avx512<NV, true>(plane, rt, q0, q1, w, y, pos, neg_zero);
  with_reg_taps(w.reg_taps, [&]<RegTaps R>() IRRUN_AVX512_LAMBDA {
    if (w.sep_slots > 0)
      sep_rows_avx512<NV, R>(plane, q0, q1, w, cs.v, y, neg_zero);
    else
      narrow_rows_avx512<NV, false, R>(plane, rt, q0, q1, w, y, nullptr, neg_zero);
  });
  return neg_zero && narrow_rows_avx512<NV, true>(plane, rt, q0, q1, w, y, cs.p, neg_zero);
}

// Wide rows' scaffolding (wide_rows_avx512, wide_rows_avx2), free of vector code.
// The vectors u of `span` columns from column span * u - pad that lie wholly inside the row:
// first <= u <= last.
struct WholeVectors {
  i64 first, last;
  WholeVectors(const RowGeo& w, i64 span)
      : first((w.pad + span - 1) / span),
        last(w.in_w + w.pad >= span ? (w.in_w + w.pad - span) / span : -1) {}
  bool holds(i64 u) const { return u >= first && u <= last; }
};

// row.template operator()<R>(q) for the output rows q0 .. q1 - 1, R their input rows' count
// where it is two or three, else 0.
template <class Row>
inline __attribute__((always_inline)) void rows_by_count(const RowTable& rt, i64 q0, i64 q1,
                                                         const Row& row) {
  for (i64 q = q0; q < q1; ++q) {
    const i64 n = rt.count(q);
    if (n == 3)
      row.template operator()<3>(q);
    else if (n == 2)
      row.template operator()<2>(q);
    else
      row.template operator()<0>(q);
  }
}

// Wide rows (more than kNarrowColumns columns or outputs), values alone, stride S (1 or 2) and
// windows of K columns (dilation 1) on AVX-512: each output row's column maxima over its
// window's rows in vectors of 16 columns from column -pad on (lowest outside the row), and
// each vector of 16 outputs' taps shifted out of them (stride 2: out of their even and odd
// columns), one vector of maxima ahead for the last taps. Row blocks of 32 (row_avx512, columns
// first) reload each block's last 16 columns and a row's last block, a row at a call. A -0 among
// the maxima sets neg_zero, as in narrow rows.
template <int K, int S, class T>
IRRUN_AVX512 void wide_rows_avx512(const T* plane, const RowTable& rt, i64 q0, i64 q1,
                                   const RowGeo& w, T* y, bool& neg_zero) {
  static_assert((S == 1 || S == 2) && K >= 1 && K <= 16 * S);
  const __m512 lowest = _mm512_set1_ps(kStart<T>);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  const __m512i iota = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  const i64 nu = (w.out_w + 15) / 16, n_out = (q1 - q0) * w.out_w;
  __m512i least = _mm512_setzero_si512();
  // Vector u's taps 0 .. K - 1: stride 1, from its columns a and the next b; stride 2, from the
  // even (a) and odd (d) columns of its 32 and the next vector's (b, e).
  const auto taps = [&]<int... t>(std::integer_sequence<int, t...>, __m512 a, __m512 b, __m512 d,
                                  __m512 e) IRRUN_AVX512_LAMBDA {
    const auto tap = [&]<int j>() IRRUN_AVX512_LAMBDA {
      const __m512i lo = _mm512_castps_si512(S == 2 && j % 2 ? d : a);
      const __m512i hi = _mm512_castps_si512(S == 2 && j % 2 ? e : b);
      constexpr int shift = S == 2 ? j / 2 : j;
      if constexpr (shift == 0)
        return _mm512_castsi512_ps(lo);
      else if constexpr (shift == 16)
        return _mm512_castsi512_ps(hi);
      else
        return _mm512_castsi512_ps(_mm512_alignr_epi32(hi, lo, shift));
    };
    // (The maxima are lowest or more: the first tap starts the maximum.)
    __m512 m = tap.template operator()<0>();
    ((m = _mm512_max_ps(tap.template operator()<t + 1>(), m)), ...);
    return m;
  };
  // Output row q from its window's rows, R of them (0: rt.count(q), else a constant: the loops
  // unrolled, the rows' pointers in registers; in a struct of them, M1v took 1.13x).
  const i64 in_w = w.in_w, out_w = w.out_w, pad = w.pad, span = 16 * S;
  const WholeVectors whole_vectors(w, span);
  const auto row = [&]<int R>(i64 q) IRRUN_AVX512_LAMBDA {
    const i64 n = R > 0 ? R : rt.count(q);
    const i64* rows = rt.rows(q);
    const T* p[R > 0 ? R : 1];
    if constexpr (R > 0)
      for (int r = 0; r < R; ++r) p[r] = plane + rows[r];
    const auto at_row = [&](i64 r) { return R > 0 ? p[r] : plane + rows[r]; };
    // The maxima of columns c .. c + 15 over the window's rows (lowest outside the row).
    const auto cols = [&](i64 c, bool whole) IRRUN_AVX512_LAMBDA {
      __m512 m = lowest;
      if (whole) {
        for (i64 r = 0; r < n; ++r) m = _mm512_max_ps(load16(at_row(r) + c), m);
      } else if (const __mmask16 in =
                     lanes16(std::clamp<i64>(-c, 0, 16), std::clamp<i64>(in_w - c, 0, 16))) {
        if (in_w >= 16) {  // the 16 columns from base, lane l moved to lane l + base - c
          const i64 base = std::clamp<i64>(c, 0, in_w - 16);
          const __m512i at = _mm512_add_epi32(iota, _mm512_set1_epi32(static_cast<i32>(c - base)));
          for (i64 r = 0; r < n; ++r)
            m = _mm512_max_ps(_mm512_mask_permutexvar_ps(lowest, in, at, load16(at_row(r) + base)),
                              m);
        } else {
          for (i64 r = 0; r < n; ++r) m = _mm512_max_ps(load16(lowest, in, at_row(r) + c), m);
        }
      }
      least = _mm512_min_epi32(least, _mm512_castps_si512(m));
      return m;
    };
    const auto next = [&](i64 u, __m512& a, __m512& d) IRRUN_AVX512_LAMBDA {
      const i64 c = span * u - pad;
      const bool whole = whole_vectors.holds(u);
      a = cols(c, whole);
      if constexpr (S == 2) {
        const __m512 b = cols(c + 16, whole);
        d = _mm512_permutex2var_ps(a, odd, b);
        a = _mm512_permutex2var_ps(a, even, b);
      }
    };
    T* yq = y + (q - q0) * out_w;
    const i64 left = n_out - (q - q0) * out_w;  // the group's outputs from yq on
    __m512 a, d = lowest;
    next(0, a, d);
    for (i64 u = 0; u < nu; ++u) {
      __m512 b = lowest, e = lowest;
      if (K > S || u + 1 < nu) next(u + 1, b, e);
      const __m512 m = taps(std::make_integer_sequence<int, K - 1>{}, a, b, d, e);
      // Whole stores where the group's outputs go on (the next row writes over them).
      store16(yq + 16 * u,
              16 * u + 16 <= left ? 0xFFFF : lanes16(0, std::min<i64>(16, out_w - 16 * u)), m);
      a = b, d = e;
    }
  };
  rows_by_count(rt, q0, q1, row);
  neg_zero = _mm512_cmpeq_epi32_mask(least, _mm512_set1_epi32(INT32_MIN)) != 0;
}

// Wide rows (GroupFn): positions from the row blocks, and values again in the recurrence's order
// where a column's maximum was -0.
template <int K, int S, class T>
IRRUN_AVX512 bool wide_avx512(const T* plane, const RowTable& rt, i64 q0, i64 q1, const RowGeo& w,
                              const ColScratch& cs, T* y, i32* pos) {
  if (pos) return rows_of<T, row_avx512_any<S, T>>(plane, rt, q0, q1, w, cs, y, pos);
  bool neg_zero = false;
  wide_rows_avx512<K, S>(plane, rt, q0, q1, w, y, neg_zero);
  for (i64 q = q0; neg_zero && q < q1; ++q)
    row_avx512<S, false, false, T>(plane, rt.rows(q), rt.count(q), w, y + (q - q0) * w.out_w,
                                   nullptr);
  return false;
}

// The lanes of b where mask is set, of a elsewhere.
IRRUN_AVX2_F16C inline __m256i blend(__m256i a, __m256i b, __m256 mask) {
  return _mm256_castps_si256(
      _mm256_blendv_ps(_mm256_castsi256_ps(a), _mm256_castsi256_ps(b), mask));
}

// columns_avx512 on AVX2, in vectors of eight (masked-off columns load as -inf).
IRRUN_AVX2_F16C inline bool columns_avx2(const float* plane, const i64* rows, i64 nrows, i64 in_w,
                                         float* cv, i32* cp) {
  __m256 nan = _mm256_setzero_ps();
  const __m256 lowest = _mm256_set1_ps(std::numeric_limits<float>::lowest());
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  for (i64 c = 0; c < in_w; c += 8) {
    const i64 n = std::min<i64>(8, in_w - c);
    __m256 v = lowest;
    __m256i p = _mm256_setzero_si256();
    for (i64 r = 0; r < nrows; ++r) {
      const float* x = plane + rows[r] + c;
      const __m256 xv = n == 8 ? _mm256_loadu_ps(x) : load8(x, 0, n);
      nan = _mm256_or_ps(nan, _mm256_cmp_ps(xv, xv, _CMP_UNORD_Q));
      const __m256 gt = _mm256_cmp_ps(xv, v, _CMP_GT_OQ);
      v = _mm256_blendv_ps(v, xv, gt);
      const __m256i at = _mm256_add_epi32(_mm256_set1_epi32(static_cast<i32>(rows[r] + c)), iota);
      p = blend(p, at, gt);
    }
    _mm256_storeu_ps(cv + c, v);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(cp + c), p);
  }
  return _mm256_movemask_ps(nan) != 0;
}

// The 8 lanes of the 16 of lo and hi from lane `shift` on (0 <= shift <= 8): vperm2f128 and
// vpalignr.
template <int shift>
IRRUN_AVX2_F16C inline __m256 lanes_from(__m256 lo, __m256 hi) {
  static_assert(shift >= 0 && shift <= 8);
  const __m256 mid = _mm256_permute2f128_ps(lo, hi, 0x21);  // lo's upper half, hi's lower
  const auto align = [](__m256 h, __m256 l, auto bytes) IRRUN_AVX2_F16C {
    return _mm256_castsi256_ps(
        _mm256_alignr_epi8(_mm256_castps_si256(h), _mm256_castps_si256(l), bytes()));
  };
  if constexpr (shift == 0)
    return lo;
  else if constexpr (shift == 4)
    return mid;
  else if constexpr (shift == 8)
    return hi;
  else if constexpr (shift < 4)
    return align(mid, lo, std::integral_constant<int, 4 * shift>{});
  else
    return align(hi, mid, std::integral_constant<int, 4 * (shift - 4)>{});
}

// Vector v of a narrow row at x (n of its lanes in the row): whole, or those lanes (the others
// are never taken).
template <class S>
IRRUN_AVX2_F16C inline __m256 narrow_load8(const S* x, bool whole, i64 n) {
  if constexpr (std::is_same_v<S, float>)
    return whole ? _mm256_loadu_ps(x) : _mm256_maskload_ps(x, lanes8(0, n));
  else
    return whole ? load8(x) : load8(x, 0, n);
}

// narrow_outputs on AVX2: vectors of eight, nu of them, each tap slot's lanes taken from their
// source vectors (vpermps and blends). (nu from the caller, once: per row, after the row's
// stores, which may alias w, it took tiny planes 1.1x the time.)
template <int NV, bool kPos, class S>
IRRUN_AVX2_F16C inline __attribute__((always_inline)) void narrow_outputs_avx2(
    const __m256 (&cm)[NV], const __m256i (&cp)[NV], const RowGeo& w, i64 nu, i64 o, i64 n_out,
    S* y, i32* pos, __m256& low) {
  const __m256 lowest = _mm256_set1_ps(kStart<S>);
  for (i64 u = 0; u < nu; ++u) {
    __m256 m = lowest;
    __m256i mp = _mm256_setzero_si256();
    const i32* slot = w.narrow_idx + u * 8;
    for (i64 j = 0; j < w.narrow_slots; ++j, slot += nu * 8) {
      const __m256i idx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(slot));
      __m256 v = _mm256_permutevar8x32_ps(cm[0], idx);
      __m256i p = _mm256_permutevar8x32_epi32(cp[0], idx);
      for (int k = 1; k < NV; ++k) {  // lanes of columns 8k on from source k
        const __m256 from =
            _mm256_castsi256_ps(_mm256_cmpgt_epi32(idx, _mm256_set1_epi32(8 * k - 1)));
        v = _mm256_blendv_ps(v, _mm256_permutevar8x32_ps(cm[k], idx), from);
        if constexpr (kPos) p = blend(p, _mm256_permutevar8x32_epi32(cp[k], idx), from);
      }
      if constexpr (kPos) {
        const __m256 take =
            _mm256_or_ps(_mm256_cmp_ps(v, m, _CMP_GT_OQ),
                         _mm256_and_ps(_mm256_cmp_ps(v, m, _CMP_EQ_OQ),
                                       _mm256_castsi256_ps(_mm256_cmpgt_epi32(mp, p))));
        m = _mm256_blendv_ps(m, v, take);
        mp = blend(mp, p, take);
      } else {
        m = _mm256_max_ps(v, m);
      }
    }
    if (w.narrow_empty) {
      const __m256 none = _mm256_castsi256_ps(_mm256_cmpgt_epi32(
          _mm256_setzero_si256(),
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(w.narrow_idx + u * 8))));
      m = _mm256_blendv_ps(m, lowest, none);
      if constexpr (kPos) mp = blend(mp, _mm256_setzero_si256(), none);
    }
    const i64 at = o + 8 * u, left = std::min<i64>(8, w.out_w - 8 * u);
    if (at + 8 <= n_out) {  // as in narrow_outputs
      store8(y + at, 8, m);
      if constexpr (kPos) _mm256_storeu_si256(reinterpret_cast<__m256i*>(pos + at), mp);
    } else {
      store8(y + at, left, m);
      if constexpr (kPos) _mm256_maskstore_epi32(pos + at, lanes8(0, left), mp);
    }
    if constexpr (kPos)
      low = _mm256_or_ps(low, _mm256_and_ps(_mm256_castsi256_ps(lanes8(0, left)),
                                            _mm256_cmp_ps(m, lowest, _CMP_EQ_OQ)));
  }
}

// reg_outputs on AVX2: the taps shifted out of the column maxima by lanes_from, or split into
// even and odd columns by in-lane shuffles and a cross-lane permute first. in: each vector's
// lanes in the row.
template <int NV, RegTaps R, class S>
IRRUN_AVX2_F16C inline __attribute__((always_inline)) void reg_outputs_avx2(const __m256 (&cm)[NV],
                                                                            const __m256i (&in)[NV],
                                                                            const RowGeo& w, i64 o,
                                                                            i64 n_out, S* y) {
  static_assert(R.stride == 1 || R.stride == 2);
  const __m256 lowest = _mm256_set1_ps(kStart<S>);
  __m256 c[NV + 3];  // c[v + 1]: cm[v], lowest past in_w; lowest around them
  c[0] = c[NV + 1] = c[NV + 2] = lowest;
  for (int v = 0; v < NV; ++v)
    c[v + 1] = _mm256_blendv_ps(lowest, cm[v], _mm256_castsi256_ps(in[v]));
  const auto out = [&](int u, __m256 v) IRRUN_AVX2_F16C {
    const i64 at = o + 8 * u;
    store8(y + at, at + 8 <= n_out ? 8 : std::min<i64>(8, w.out_w - 8 * u), v);
  };
  if constexpr (R.stride == 1) {
    for (int u = 0; u < NV && 8 * u < w.out_w; ++u) {
      const __m256 l = R.pad == 1 ? lanes_from<7>(c[u], c[u + 1]) : c[u + 1];
      const __m256 m = R.pad == 1 ? c[u + 1] : lanes_from<1>(c[u + 1], c[u + 2]);
      const __m256 r =
          R.pad == 1 ? lanes_from<1>(c[u + 1], c[u + 2]) : lanes_from<2>(c[u + 1], c[u + 2]);
      out(u, _mm256_max_ps(r, _mm256_max_ps(m, l)));
    }
  } else {
    // As reg_outputs: outputs 8u .. 8u + 7 from c[2u + 1] and c[2u + 2], and c[2u] or c[2u + 3].
    const auto split = [](__m256 a, __m256 b, auto imm) IRRUN_AVX2_F16C {
      const __m256 s = _mm256_shuffle_ps(a, b, imm());  // a0 a2 b0 b2 a4 a6 b4 b6 (imm 0x88)
      return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(s), 0xD8));
    };
    for (int u = 0; u < (NV + 1) / 2 && 8 * u < w.out_w; ++u) {
      const __m256 e = split(c[2 * u + 1], c[2 * u + 2], std::integral_constant<int, 0x88>{});
      const __m256 d = split(c[2 * u + 1], c[2 * u + 2], std::integral_constant<int, 0xDD>{});
      if constexpr (R.pad == 1) {
        const __m256 v = _mm256_max_ps(e, lanes_from<7>(c[2 * u], d));
        out(u, R.k == 3 ? _mm256_max_ps(d, v) : v);
      } else {
        const __m256 v = _mm256_max_ps(d, e);
        out(u, R.k == 3 ? _mm256_max_ps(lanes_from<1>(e, c[2 * u + 3]), v) : v);
      }
    }
  }
}

// narrow_rows_avx512 on AVX2: vectors of eight, NV of them (rows of up to 64 columns). S: float,
// F16 or BF16 (their column maxima start at the type's lowest, as row_avx512's).
template <int NV, bool kPos, RegTaps R = RegTaps{}, class S = float>
IRRUN_AVX2_F16C bool narrow_rows_avx2(const S* plane, const RowTable& rt, i64 q0, i64 q1,
                                      const RowGeo& w, S* y, i32* pos, bool& neg_zero) {
  const __m256 lowest = _mm256_set1_ps(kStart<S>);
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const i64 nu = (w.out_w + 7) / 8, n_out = (q1 - q0) * w.out_w;
  __m256i in[NV];
  i64 in_n[NV];  // each vector's lanes in the row: their count and mask
  for (int v = 0; v < NV; ++v) {
    in_n[v] = std::clamp<i64>(w.in_w - 8 * v, 0, 8);
    in[v] = lanes8(0, in_n[v]);
  }
  __m256 nan = _mm256_setzero_ps(), low = nan;
  __m256i least = _mm256_setzero_si256();  // values alone, as in narrow_rows_avx512
  for (i64 q = q0; q < q1; ++q) {
    const i64* rows = rt.rows(q);
    const i64 n = rt.count(q);
    __m256 cm[NV];
    __m256i cp[NV];
    for (int v = 0; v < NV; ++v) cm[v] = lowest, cp[v] = _mm256_setzero_si256();
    const auto take_rows = [&](auto whole) IRRUN_AVX2_F16C {
      for (i64 r = 0; r < n; ++r)
        for (int v = 0; v < NV; ++v) {
          const __m256 xv = narrow_load8(plane + rows[r] + 8 * v, whole, in_n[v]);
          if constexpr (kPos) {
            nan = _mm256_or_ps(nan, _mm256_and_ps(_mm256_castsi256_ps(in[v]),
                                                  _mm256_cmp_ps(xv, xv, _CMP_UNORD_Q)));
            const __m256 gt = _mm256_cmp_ps(xv, cm[v], _CMP_GT_OQ);
            cm[v] = _mm256_blendv_ps(cm[v], xv, gt);
            const auto at = static_cast<i32>(rows[r] + 8 * v);
            cp[v] = blend(cp[v], _mm256_add_epi32(_mm256_set1_epi32(at), iota), gt);
          } else {
            cm[v] = _mm256_max_ps(xv, cm[v]);
          }
        }
    };
    if (n > 0 && rows[n - 1] + 8 * NV <= w.plane_len)
      take_rows(std::true_type{});
    else
      take_rows(std::false_type{});
    if constexpr (!kPos)
      for (int v = 0; v < NV; ++v) least = _mm256_min_epi32(least, _mm256_castps_si256(cm[v]));
    if constexpr (!kPos && R.stride > 0)
      reg_outputs_avx2<NV, R>(cm, in, w, (q - q0) * w.out_w, n_out, y);
    else
      narrow_outputs_avx2<NV, kPos>(cm, cp, w, nu, (q - q0) * w.out_w, n_out, y, pos, low);
  }
  if constexpr (!kPos) {
    neg_zero = _mm256_movemask_ps(_mm256_castsi256_ps(
                   _mm256_cmpeq_epi32(least, _mm256_set1_epi32(INT32_MIN)))) != 0;
    return false;
  }
  return _mm256_movemask_ps(nan) == 0 && _mm256_movemask_ps(low) == 0;
}

// sep_rows_avx512 on AVX2, in NV vectors of eight.
template <int NV, RegTaps R, class S = float>
IRRUN_AVX2_F16C void sep_rows_avx2(const S* plane, i64 q0, i64 q1, const RowGeo& w, float* hm, S* y,
                                   bool& neg_zero) {
  const __m256 lowest = _mm256_set1_ps(kStart<S>);
  const detail::AxisWindows& ah = *w.axis_h;
  const i64 in_d = w.in_h * w.in_w, nu = (w.out_w + 7) / 8, n_out = (q1 - q0) * w.out_w;
  __m256i in[NV];
  i64 in_n[NV];
  for (int v = 0; v < NV; ++v) {
    in_n[v] = std::clamp<i64>(w.in_w - 8 * v, 0, 8);
    in[v] = lanes8(0, in_n[v]);
  }
  __m256i least = _mm256_setzero_si256();
  const __m256i no_pos[NV] = {};
  __m256 low = _mm256_setzero_ps();
  const auto fill = [&](i64 d, float* h) IRRUN_AVX2_F16C {
    if (w.sep_pad_h >= 0) {  // as in sep_rows_avx512
      const auto row = [&](i64 r, __m256(&x)[NV]) IRRUN_AVX2_F16C {
        const i64 off = d * in_d + r * w.in_w;
        const bool whole = off + 8 * NV <= w.plane_len;
        for (int v = 0; v < NV; ++v)
          x[v] = r < 0 || r >= w.in_h ? lowest : narrow_load8(plane + off + 8 * v, whole, in_n[v]);
      };
      __m256 a[NV], b[NV], c[NV];
      row(-w.sep_pad_h, a);
      row(1 - w.sep_pad_h, b);
      for (i64 oh = 0; oh < w.out_h; ++oh, h += NV * 8) {
        row(oh + 2 - w.sep_pad_h, c);
        for (int v = 0; v < NV; ++v) {
          _mm256_storeu_ps(h + 8 * v,
                           _mm256_max_ps(c[v], _mm256_max_ps(b[v], _mm256_max_ps(a[v], lowest))));
          a[v] = b[v], b[v] = c[v];
        }
      }
      return;
    }
    for (i64 oh = 0; oh < w.out_h; ++oh, h += NV * 8) {
      const auto ha = static_cast<std::size_t>(oh);
      const i64 n = ah.taps[ha], r0 = d * in_d + ah.first[ha] * w.in_w, step = ah.step * w.in_w;
      const bool whole = n > 0 && r0 + (n - 1) * step + 8 * NV <= w.plane_len;
      __m256 m[NV];
      for (int v = 0; v < NV; ++v) m[v] = lowest;
      for (i64 r = 0; r < n; ++r)
        for (int v = 0; v < NV; ++v)
          m[v] = _mm256_max_ps(narrow_load8(plane + r0 + r * step + 8 * v, whole, in_n[v]), m[v]);
      for (int v = 0; v < NV; ++v) _mm256_storeu_ps(h + 8 * v, m[v]);
    }
  };
  const auto outputs = [&](const float* const* planes, i64 n, i64 oh, i64 o) IRRUN_AVX2_F16C {
    __m256 cm[NV];
    for (int v = 0; v < NV; ++v) cm[v] = lowest;
    for (i64 t = 0; t < n; ++t) {
      const float* h = planes[t] + oh * NV * 8;
      for (int v = 0; v < NV; ++v) cm[v] = _mm256_max_ps(_mm256_loadu_ps(h + 8 * v), cm[v]);
    }
    for (int v = 0; v < NV; ++v) least = _mm256_min_epi32(least, _mm256_castps_si256(cm[v]));
    if constexpr (R.stride > 0)
      reg_outputs_avx2<NV, R>(cm, in, w, o, n_out, y);
    else
      narrow_outputs_avx2<NV, false>(cm, no_pos, w, nu, o, n_out, y, nullptr, low);
  };
  sep_walk(w, q0, q1, hm, w.out_h * NV * 8, fill, outputs);
  neg_zero = _mm256_movemask_ps(
                 _mm256_castsi256_ps(_mm256_cmpeq_epi32(least, _mm256_set1_epi32(INT32_MIN)))) != 0;
}

template <int NV, class T = float>
IRRUN_AVX2_F16C bool narrow_avx2(const T* plane, const RowTable& rt, i64 q0, i64 q1,
                                 const RowGeo& w, const ColScratch& cs, T* y, i32* pos) {
  bool neg_zero = false;
  if constexpr (std::is_same_v<T, float>)
    if (pos && w.flat_positions) return w.flat_positions(plane, rt, q0, q1, w, cs, y, pos);
  // Rows of 49-64 columns: positions with stride 1 or 2 take the row blocks (M2 took 1.28x of
  // their time through these narrow rows; values alone, M2v, 0.61).
  if constexpr (NV > 6)
    if (pos && w.stride <= 2)
      return w.stride == 1 ? rows_of<T, row_avx2_any<1, T>>(plane, rt, q0, q1, w, cs, y, pos)
                           : rows_of<T, row_avx2_any<2, T>>(plane, rt, q0, q1, w, cs, y, pos);
  if (pos) return narrow_rows_avx2<NV, true>(plane, rt, q0, q1, w, y, pos, neg_zero);
  with_reg_taps(w.reg_taps, [&]<RegTaps R>() IRRUN_AVX2_F16C {
    if (w.sep_slots > 0)
      sep_rows_avx2<NV, R>(plane, q0, q1, w, cs.v, y, neg_zero);
    else
      narrow_rows_avx2<NV, false, R>(plane, rt, q0, q1, w, y, nullptr, neg_zero);
  });
  return neg_zero && narrow_rows_avx2<NV, true>(plane, rt, q0, q1, w, y, cs.p, neg_zero);
}

// wide_rows_avx512 on AVX2 (f32 and bf16), in vectors of 8: stride 2's even and odd columns
// by in-lane shuffles and a cross-lane permute, taps shifted across two vectors by vperm2f128
// and vpalignr.
template <int K, int S, class T>
IRRUN_AVX2_F16C void wide_rows_avx2(const T* plane, const RowTable& rt, i64 q0, i64 q1,
                                    const RowGeo& w, T* y, bool& neg_zero) {
  static_assert((S == 1 || S == 2) && K >= 2 && K <= 8 * S);
  const __m256 lowest = _mm256_set1_ps(kStart<T>);
  const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const i64 nu = (w.out_w + 7) / 8, n_out = (q1 - q0) * w.out_w;
  __m256i least = _mm256_setzero_si256();
  const auto taps = [&]<int... t>(std::integer_sequence<int, t...>, __m256 a, __m256 b, __m256 d,
                                  __m256 e) IRRUN_AVX2_F16C {
    const auto tap = [&]<int j>() IRRUN_AVX2_F16C {
      const __m256 lo = S == 2 && j % 2 ? d : a, hi = S == 2 && j % 2 ? e : b;
      return lanes_from<(S == 2 ? j / 2 : j)>(lo, hi);
    };
    __m256 m = tap.template operator()<0>();
    ((m = _mm256_max_ps(tap.template operator()<t + 1>(), m)), ...);
    return m;
  };
  const i64 in_w = w.in_w, out_w = w.out_w, pad = w.pad, span = 8 * S;
  const WholeVectors whole_vectors(w, span);
  const auto row = [&]<int R>(i64 q) IRRUN_AVX2_F16C {
    const i64 n = R > 0 ? R : rt.count(q);
    const i64* rows = rt.rows(q);
    const T* p[R > 0 ? R : 1];
    if constexpr (R > 0)
      for (int r = 0; r < R; ++r) p[r] = plane + rows[r];
    const auto at_row = [&](i64 r) { return R > 0 ? p[r] : plane + rows[r]; };
    const auto cols = [&](i64 c, bool whole) IRRUN_AVX2_F16C {
      __m256 m = lowest;
      if (whole) {
        for (i64 r = 0; r < n; ++r) m = _mm256_max_ps(load8(at_row(r) + c), m);
      } else if (const i64 lo = std::clamp<i64>(-c, 0, 8), hi = std::clamp<i64>(in_w - c, 0, 8);
                 lo < hi) {
        if (in_w >= 8) {  // as in wide_rows_avx512
          const i64 base = std::clamp<i64>(c, 0, in_w - 8);
          const __m256i at = _mm256_add_epi32(iota, _mm256_set1_epi32(static_cast<i32>(c - base)));
          const __m256 in = _mm256_castsi256_ps(lanes8(lo, hi));
          for (i64 r = 0; r < n; ++r) {
            const __m256 x = _mm256_permutevar8x32_ps(load8(at_row(r) + base), at);
            m = _mm256_max_ps(_mm256_blendv_ps(lowest, x, in), m);
          }
        } else {
          for (i64 r = 0; r < n; ++r) m = _mm256_max_ps(load8(at_row(r) + c, lo, hi), m);
        }
      }
      least = _mm256_min_epi32(least, _mm256_castps_si256(m));
      return m;
    };
    const auto next = [&](i64 u, __m256& a, __m256& d) IRRUN_AVX2_F16C {
      const i64 c = span * u - pad;
      const bool whole = whole_vectors.holds(u);
      a = cols(c, whole);
      if constexpr (S == 2) {
        const __m256 b = cols(c + 8, whole);
        const auto order = [&](__m256 x) IRRUN_AVX2_F16C {  // 64-bit pairs 0, 2, 1, 3
          return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(x), 0xD8));
        };
        d = order(_mm256_shuffle_ps(a, b, 0xDD));
        a = order(_mm256_shuffle_ps(a, b, 0x88));
      }
    };
    T* yq = y + (q - q0) * out_w;
    const i64 left = n_out - (q - q0) * out_w;
    __m256 a, d = lowest;
    next(0, a, d);
    for (i64 u = 0; u < nu; ++u) {
      __m256 b = lowest, e = lowest;
      if (K > S || u + 1 < nu) next(u + 1, b, e);
      const __m256 m = taps(std::make_integer_sequence<int, K - 1>{}, a, b, d, e);
      store8(yq + 8 * u, 8 * u + 8 <= left ? 8 : std::min<i64>(8, out_w - 8 * u), m);
      a = b, d = e;
    }
  };
  rows_by_count(rt, q0, q1, row);
  neg_zero = _mm256_movemask_ps(
                 _mm256_castsi256_ps(_mm256_cmpeq_epi32(least, _mm256_set1_epi32(INT32_MIN)))) != 0;
}

template <int K, int S, class T>
IRRUN_AVX2_F16C bool wide_avx2(const T* plane, const RowTable& rt, i64 q0, i64 q1, const RowGeo& w,
                               const ColScratch& cs, T* y, i32* pos) {
  if (pos) return rows_of<T, row_avx2_any<S, T>>(plane, rt, q0, q1, w, cs, y, pos);
  bool neg_zero = false;
  wide_rows_avx2<K, S>(plane, rt, q0, q1, w, y, neg_zero);
  for (i64 q = q0; neg_zero && q < q1; ++q)
    row_avx2<S, false, T>(plane, rt.rows(q), rt.count(q), w, y + (q - q0) * w.out_w, nullptr);
  return false;
}

// cols_avx512 on AVX2: blocks of eight outputs, single source vectors (vpermps).
IRRUN_AVX2_F16C bool cols_avx2(const float* plane, const RowTable& rt, i64 q0, i64 q1,
                               const RowGeo& w, const ColScratch& cs, float* y, i32* pos) {
  const Spread& sp = *w.spread;
  float* cv = cs.v + w.col_left;
  i32* cp = cs.p + w.col_left;
  bool nan = false;
  for (i64 q = q0; q < q1; ++q)
    nan |= columns_avx2(plane, rt.rows(q), rt.count(q), w.in_w, cv + (q - q0) * w.in_w,
                        cp + (q - q0) * w.in_w);
  const __m256 lowest = _mm256_set1_ps(std::numeric_limits<float>::lowest());
  __m256 low = _mm256_setzero_ps();
  const i64 n_out = (q1 - q0) * w.out_w;
  for (i64 o0 = 0; o0 < n_out; o0 += 8) {
    const i64 c0 = o0 * w.stride - w.pad;
    __m256 m = _mm256_setzero_ps();
    __m256i mp = _mm256_setzero_si256();
    for (i64 t = 0; t < w.k; ++t) {
      const auto tu = static_cast<std::size_t>(t);
      const __m256i idx =
          _mm256_loadu_si256(reinterpret_cast<const __m256i*>(sp.idx.data() + t * 8));
      const i32* mask = sp.mask.data() + t * sp.sources * 8;
      __m256 v = _mm256_setzero_ps();
      __m256i p = _mm256_setzero_si256();
      for (i64 j = 0; j < sp.count[tu]; ++j) {
        const i64 c = c0 + (sp.first[tu] + j) * 8;
        const __m256 vj = _mm256_permutevar8x32_ps(_mm256_loadu_ps(cv + c), idx);
        const __m256i pj = _mm256_permutevar8x32_epi32(
            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(cp + c)), idx);
        if (j == 0) {  // as in cols_avx512
          v = vj, p = pj;
          continue;
        }
        const __m256 mj = _mm256_loadu_ps(reinterpret_cast<const float*>(mask + j * 8));
        v = _mm256_blendv_ps(v, vj, mj);
        p = blend(p, pj, mj);
      }
      if (t == 0) {
        m = v, mp = p;
        continue;
      }
      const __m256 take =
          _mm256_or_ps(_mm256_cmp_ps(v, m, _CMP_GT_OQ),
                       _mm256_and_ps(_mm256_cmp_ps(v, m, _CMP_EQ_OQ),
                                     _mm256_castsi256_ps(_mm256_cmpgt_epi32(mp, p))));
      m = _mm256_blendv_ps(m, v, take);
      mp = blend(mp, p, take);
    }
    const __m256i out = lanes8(0, std::min<i64>(8, n_out - o0));
    if (n_out - o0 >= 8) {  // as in row_avx2
      _mm256_storeu_ps(y + o0, m);
      if (pos) _mm256_storeu_si256(reinterpret_cast<__m256i*>(pos + o0), mp);
    } else {
      _mm256_maskstore_ps(y + o0, out, m);
      if (pos) _mm256_maskstore_epi32(pos + o0, out, mp);
    }
    low = _mm256_or_ps(
        low, _mm256_and_ps(_mm256_castsi256_ps(out), _mm256_cmp_ps(m, lowest, _CMP_EQ_OQ)));
  }
  return !nan && _mm256_movemask_ps(low) == 0;
}

// The AVX-512 row blocks' tables (row_avx512) into w; false when they would be too large.
bool take_block_taps(RowGeo& w, BlockTaps& bt) {
  if (shared_taps(w)) w.interior = interior_masks(w);  // (make_block_taps reads it)
  if (!make_block_taps(w, bt)) return false;
  w.block_slot = bt.slot.data();
  w.block_taps = bt.taps.data();
  w.block_tap_count = bt.count.data();
  w.block_masks = bt.masks.data();
  return true;
}

// The taps narrow rows in vectors of `lanes` take from registers, or none: where each vector of
// outputs reads at most the vectors of columns around its own (stride 1) or its two (stride 2).
RegTaps reg_taps_for(const RowGeo& w, i64 lanes) {
  const i64 nv = (w.in_w + lanes - 1) / lanes, nu = (w.out_w + lanes - 1) / lanes;
  const int k = static_cast<int>(w.k), pad = static_cast<int>(w.pad);
  if (w.dil != 1 || w.pad > 1) return {};
  if (w.k == 3 && w.stride == 1 && nu <= nv) return {1, k, pad};
  if ((w.k == 2 || w.k == 3) && w.stride == 2 && 2 * nu <= nv + 1) return {2, k, pad};
  return {};
}

// Narrow rows in vectors of `lanes`: RowGeo::reg_taps and separable windows (make_sep) set.
void narrow_values(RowGeo& w, const PoolGeometry& g, i64 lanes) {
  w.reg_taps = reg_taps_for(w, lanes);
  make_sep(w, g);
}

// narrow_avx512 with one vector of 16 per 16 input columns of w's rows (make_narrow's 16 lanes).
template <class T>
GroupFn<T> narrow_avx512_for(RowGeo& w, const PoolGeometry& g) {
  narrow_values(w, g, 16);
  constexpr GroupFn<T> by_vectors[] = {narrow_avx512<1, T>, narrow_avx512<2, T>,
                                       narrow_avx512<3, T>, narrow_avx512<4, T>};
  return by_vectors[(w.in_w - 1) / 16];
}

// Wide rows (wide_avx512, wide_avx2) of windows of two or three columns, stride 1 or 2, in groups
// of rows as narrow rows'; else nullptr.
template <class T>
GroupFn<T> wide_for(RowGeo& w, i64 out_rows, bool avx512) {
  if (w.stride > 2 || w.dil != 1 || w.k < 2 || w.k > 3) return nullptr;
  w.group = std::clamp<i64>(kFlatColumns / w.out_w, 1, out_rows);
  const auto at = static_cast<std::size_t>((w.stride - 1) * 2 + w.k - 2);
  if (avx512) {
    constexpr GroupFn<T> fns[] = {wide_avx512<2, 1, T>, wide_avx512<3, 1, T>, wide_avx512<2, 2, T>,
                                  wide_avx512<3, 2, T>};
    return fns[at];
  }
  constexpr GroupFn<T> fns[] = {wide_avx2<2, 1, T>, wide_avx2<3, 1, T>, wide_avx2<2, 2, T>,
                                wide_avx2<3, 2, T>};
  return fns[at];
}

// narrow_avx2 with one vector of eight per eight input columns of w's rows (make_narrow's 8 lanes).
template <class T>
GroupFn<T> narrow_avx2_for(RowGeo& w, const PoolGeometry& g) {
  narrow_values(w, g, 8);
  constexpr GroupFn<T> by_vectors[] = {narrow_avx2<1, T>, narrow_avx2<2, T>, narrow_avx2<3, T>,
                                       narrow_avx2<4, T>, narrow_avx2<5, T>, narrow_avx2<6, T>,
                                       narrow_avx2<7, T>, narrow_avx2<8, T>};
  return by_vectors[(w.in_w - 1) / 8];
}

// On AVX2, stride-2 rows of 49-64 columns whose windows have at most three rows take the wide
// rows before the narrow ones, whose tap slots take seven or eight vectors' permutes each (f16
// 1x3x3 s(1,2,2) on 56 columns: 0.53 of the time, 2x2 s2 on 56 columns 0.74, 3x3 s2 on 48
// columns 0.82-0.89 but on 40 1.17x; 3x3x3 s2 on 56 columns 1.16x). Past 48 columns their
// positions take the row blocks either way (narrow_avx2); up to 48 the narrow rows take them.
// Not where their taps come from registers (values alone; 2x2 s2 on 56x56: 0.59 of the wide
// rows' time).
bool wide_first(const RowGeo& w, const PoolGeometry& g) {
  return w.stride == 2 && w.in_w > 48 && reg_taps_for(w, 8).stride == 0 &&
         std::min(g.kernel[0], g.in[0]) * std::min(g.kernel[1], g.in[1]) <= 3;
}

template <class T>
GroupFn<T> pick_group([[maybe_unused]] RowGeo& w, [[maybe_unused]] const PoolGeometry& g,
                      [[maybe_unused]] BlockTaps& bt, [[maybe_unused]] Spread& sp,
                      [[maybe_unused]] NarrowTaps& nt, [[maybe_unused]] Isa isa) {
  [[maybe_unused]] const i64 out_rows = g.out[0] * g.out[1];
  if constexpr (kHalf<T>) {
    // f16 and bf16: narrow rows (eight lanes for rows of eight columns or fewer on AVX-512 too:
    // I3D's 3x3x3 s1 on 1x832x10x7x7 took 1.33x in 16) and rows of more than 64 columns or
    // outputs with stride 1 or 2; else none (max_pool_half's f32 copies run them). f16 on AVX2
    // keeps the copies where the row blocks would load it (positions past 48 columns, windows
    // not of two or three columns): a conversion a tap took 1.2-1.9 times as long.
    const bool avx512 = isa == Isa::best && detail::cpu_has_avx512();
    const bool avx2 = isa != Isa::portable && detail::cpu_has_f16c();  // (on AVX-512 CPUs too)
    if (avx2 && make_narrow(w, 8, 1, out_rows, nt)) return narrow_avx2_for<T>(w, g);
    if (avx512 && make_narrow(w, 16, kNarrowColumns / 16, out_rows, nt))
      return narrow_avx512_for<T>(w, g);
    if (!avx512 && avx2 && wide_first(w, g))
      if (const GroupFn<T> wide = wide_for<T>(w, out_rows, false)) {
        w.copy_positions = std::is_same_v<T, F16>;
        return wide;
      }
    if (!avx512 && avx2 && make_narrow(w, 8, kNarrowColumns / 8, out_rows, nt)) {
      w.copy_positions = std::is_same_v<T, F16> && w.in_w > 48 && w.stride <= 2;
      return narrow_avx2_for<T>(w, g);
    }
    if (w.stride > 2 || !avx2) return nullptr;
    if (avx512) {
      if (!take_block_taps(w, bt)) return nullptr;
      if (const GroupFn<T> wide = wide_for<T>(w, out_rows, true)) return wide;
      return w.stride == 1 ? rows_of<T, row_avx512_any<1, T>> : rows_of<T, row_avx512_any<2, T>>;
    }
    w.copy_positions = std::is_same_v<T, F16>;
    if (const GroupFn<T> wide = wide_for<T>(w, out_rows, false)) return wide;
    if constexpr (std::is_same_v<T, F16>) return nullptr;
    return w.stride == 1 ? rows_of<T, row_avx2_any<1, T>> : rows_of<T, row_avx2_any<2, T>>;
  } else {
    constexpr GroupFn<T> portable = rows_of<T, row_portable<T>>;
    if constexpr (std::is_same_v<T, float>) {
      const i64 s = w.stride;
      if (isa == Isa::best && detail::cpu_has_avx512()) {
        const bool spread = s > 2 && make_spread(w, 16, 32, out_rows, sp);
        if (spread && w.group > 1) w.flat_positions = cols_avx512;
        // Rows of up to eight columns take eight lanes (7x7 planes, 3x3x3 s1: 0.67 of the time).
        if (make_narrow(w, 8, 1, out_rows, nt)) return narrow_avx2_for<T>(w, g);
        if (make_narrow(w, 16, kNarrowColumns / 16, out_rows, nt))
          return narrow_avx512_for<T>(w, g);
        if (s > 2) return spread ? cols_avx512 : portable;
        if (!take_block_taps(w, bt)) return portable;
        if (const GroupFn<T> wide = wide_for<T>(w, out_rows, true)) return wide;
        return s == 1 ? rows_of<T, row_avx512_any<1>> : rows_of<T, row_avx512_any<2>>;
      }
      if ((isa == Isa::best || isa == Isa::avx2) && detail::cpu_has_f16c()) {
        const bool spread = s > 2 && make_spread(w, 8, 8, out_rows, sp);
        if (spread && w.group > 1) w.flat_positions = cols_avx2;
        if (wide_first(w, g))
          if (const GroupFn<T> wide = wide_for<T>(w, out_rows, false)) return wide;
        if (make_narrow(w, 8, kNarrowColumns / 8, out_rows, nt)) return narrow_avx2_for<T>(w, g);
        if (s > 2) return spread ? cols_avx2 : portable;
        if (const GroupFn<T> wide = wide_for<T>(w, out_rows, false)) return wide;
        return s == 1 ? rows_of<T, row_avx2_any<1>> : rows_of<T, row_avx2_any<2>>;
      }
    }
    return portable;
  }
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

// The tables of a geometry for the group functions, from the geometry, the element type and the
// ISA alone (kept_plan.hpp).
template <class T>
struct MaxPlan {
  PoolGeometry g;
  Isa isa = Isa::best;
  std::array<detail::AxisWindows, 3> axes;
  RowGeo w{};
  BlockTaps block_taps;
  Spread spread;
  NarrowTaps narrow;
  GroupFn<T> group_fn = nullptr;
  // Large layers read ahead (run): group_fn is an AVX-512 one, whose loads are masked, or takes
  // narrow rows, whose window rows jump between planes of D.
  bool reads_ahead = false;
  RowTable rt;
  std::size_t table_bytes() const {
    std::size_t bytes = 0;
    for (const auto& ax : axes) bytes += detail::vector_bytes(ax.first, ax.taps);
    const BlockTaps& bt = block_taps;
    const Spread& sp = spread;
    return bytes + detail::vector_bytes(bt.slot, bt.count, bt.taps, bt.masks, sp.idx, sp.mask,
                                        sp.bits, sp.first, sp.count, narrow.idx, rt.begin, rt.off);
  }
};

template <class T>
std::shared_ptr<const MaxPlan<T>> plan_of(const PoolGeometry& g, Isa isa) {
  return detail::kept_plan<MaxPlan<T>>(g, isa, [](MaxPlan<T>& p) {
    const PoolGeometry& g = p.g;
    p.axes = detail::axis_windows(g);
    const auto& axes = p.axes;
    p.w = RowGeo{g.in[2],       g.out[2],       g.kernel[2],          g.stride[2],
                 g.dilation[2], g.pad_begin[2], axes[2].first.data(), axes[2].taps.data()};
    p.w.plane_len = g.in_plane_size();
    p.w.axis_d = &axes[0], p.w.axis_h = &axes[1], p.w.in_h = g.in[1], p.w.out_h = g.out[1];
    p.group_fn = pick_group<T>(p.w, g, p.block_taps, p.spread, p.narrow, p.isa);
    const bool avx512 = std::is_same_v<T, float> && p.isa == Isa::best && detail::cpu_has_avx512();
    if constexpr (kHalf<T>)
      p.reads_ahead =
          p.group_fn && ((p.isa == Isa::best && detail::cpu_has_avx512()) || p.w.narrow_slots > 0);
    else
      p.reads_ahead = (avx512 && p.group_fn != rows_of<T, row_portable<T>>) || p.w.narrow_slots > 0;
    // A layer that may read ahead (with i64 indices, which only add) takes groups of about
    // kAheadBytes of new input rows, at least kAheadRows output rows: its prefetches then stream
    // a little ahead of the loads instead of coming a whole group (up to 64 KB) at once. (Not
    // the separable windows' whole planes of D, nor flat groups.)
    const double most = static_cast<double>(g.planes()) *
                        (static_cast<double>(g.in_plane_size()) * sizeof(T) +
                         static_cast<double>(g.out_plane_size()) * (sizeof(T) + sizeof(i64)));
    if (p.reads_ahead && p.w.sep_slots == 0 && !p.w.flat_positions && detail::far_layer(most)) {
      const i64 row_bytes = g.stride[1] * g.in[2] * static_cast<i64>(sizeof(T));
      p.w.group = std::min(p.w.group, std::max(kAheadRows, kAheadBytes / row_bytes));
    }
    p.rt = detail::row_table(g, axes);
    return true;
  });
}

// `adaptive`: g is the window form of an AdaptiveMaxPool with equal bins, whose outputs follow
// detail::bin_max instead of window_max: an output row whose input rows hold a NaN, and any
// output the window recurrence left at lowest(), are redone with bin_max (rare in real data).
template <class T, class I>
bool run(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
         const Parallel& par, Isa isa, bool adaptive) {
  const std::shared_ptr<const MaxPlan<T>> plan = plan_of<T>(g, isa);
  if (!plan->group_fn || (indices && plan->w.copy_positions)) return false;
  const auto& axes = plan->axes;
  const RowGeo& w = plan->w;
  const RowTable& rt = plan->rt;
  const GroupFn<T> group_fn = plan->group_fn;
  const i64 out_rows = g.out[0] * g.out[1];
  const T* x = in.data<T>();
  T* y = values.mutable_data<T>();
  I* idx = indices ? indices->mutable_data<I>() : nullptr;
  const i64 in_plane = g.in_plane_size(), out_w = g.out[2];
  const i64 range = g.index_range();
  // range is a multiple of the plane size (axis <= 2: add a per-plane offset) or divides it.
  const bool per_plane_offset = range % in_plane == 0;
  // A large layer on the AVX-512 path reads its input ahead of its masked loads (read_ahead.hpp;
  // 8x256 planes of 56x56, 2x2 s2 with i64 indices: 6.1 -> 1.9 ms; in the L3 it only costs,
  // and the AVX2 path, whose interior loads are plain, gains nothing). One past the L3 writes
  // its outputs ahead too, whose masked stores waited for their lines from DRAM (the same
  // layer: 0.83 of the time; 1.05 at 22 MB).
  const double bytes =
      static_cast<double>(g.planes()) *
      (static_cast<double>(in_plane) * sizeof(T) +
       static_cast<double>(g.out_plane_size()) * (sizeof(T) + (idx ? sizeof(I) : 0)));
  const bool read_ahead = plan->reads_ahead && detail::far_layer(bytes);
  const bool write_ahead = read_ahead && detail::far_layer(bytes / 2);

  // Units: groups of w.group output rows of one plane (the last group of a plane may be short).
  const i64 groups = (out_rows + w.group - 1) / w.group;
  const auto units = [&](i64 begin, i64 end, auto read, auto write) {
    const bool want_pos = idx || adaptive;
    // The thread's scratch on cache lines of its own (detail::OwnLines).
    detail::OwnLines<i32> pos(want_pos ? static_cast<std::size_t>(w.group * out_w) : 0);
    detail::OwnLines<float> col_v(static_cast<std::size_t>(w.col_len),
                                  std::numeric_limits<float>::lowest());
    detail::OwnLines<i32> col_p(static_cast<std::size_t>(w.col_len));
    const ColScratch cs{col_v.data(), col_p.data()};
    detail::Ahead<> ahead_x(kAheadBytes);
    detail::Ahead<true> ahead_y(kAheadBytes), ahead_i(kAheadBytes);
    for (i64 u = begin; u < end; ++u) {
      const i64 p = u / groups, q0 = u % groups * w.group, q1 = std::min(out_rows, q0 + w.group);
      const i64 out = p * g.out_plane_size() + q0 * out_w, n = (q1 - q0) * out_w;
      const T* plane = x + p * in_plane;
      if (read && rt.count(q0) > 0 && rt.count(q1 - 1) > 0)  // rows go up in the plane
        ahead_x.next(plane + rt.rows(q0)[0],
                     plane + rt.rows(q1 - 1)[rt.count(q1 - 1) - 1] + g.in[2]);
      if (write) ahead_y.next(y + out, y + out + n);
      if (write && idx) ahead_i.next(idx + out, idx + out + n);
      const bool clean =
          group_fn(plane, rt, q0, q1, w, cs, y + out, want_pos ? pos.data() : nullptr);
      if constexpr (!kHalf<T>)  // (adaptive: f32 and f64 alone)
        for (i64 q = q0; adaptive && !clean && q < q1; ++q) {
          const auto od = static_cast<std::size_t>(q / g.out[1]);
          const auto oh = static_cast<std::size_t>(q % g.out[1]);
          bool nan = false;
          for (i64 r = 0; r < rt.count(q); ++r)
            nan = nan || any_nan(plane + rt.rows(q)[r], g.in[2]);
          for (i64 i = 0; i < out_w; ++i) {
            const i64 o = (q - q0) * out_w + i;
            if (!nan && y[out + o] != std::numeric_limits<T>::lowest()) continue;
            const auto m = detail::bin_max(
                plane, detail::Window(axes, g, od, oh, static_cast<std::size_t>(i)));
            y[out + o] = m.value;
            pos[static_cast<std::size_t>(o)] = static_cast<i32>(m.position);
          }
        }
      if (!idx) continue;
      if (per_plane_offset)
        add_offset(pos.data(), (p * in_plane) % range, n, idx + out);
      else
        for (i64 i = 0; i < n; ++i)
          idx[out + i] = static_cast<I>(pos[static_cast<std::size_t>(i)] % range);
    }
  };
  // (A loop per case: a test per unit cost M2 1.02 of the time where it does not read ahead.)
  const i64 n_units = g.planes() * groups;
  const i64 grain = Parallel::fork_grain(
      n_units, g.planes() * (static_cast<i64>(sizeof(T)) * (in_plane + g.out_plane_size()) +
                             (idx ? static_cast<i64>(sizeof(I)) * g.out_plane_size() : 0)));
  const std::true_type yes;
  const std::false_type no;
  if (write_ahead)
    par.for_range(
        n_units, [&](i64 b, i64 e) { units(b, e, yes, yes); }, grain);
  else if (read_ahead)
    par.for_range(
        n_units, [&](i64 b, i64 e) { units(b, e, yes, no); }, grain);
  else
    par.for_range(
        n_units, [&](i64 b, i64 e) { units(b, e, no, no); }, grain);
  return true;
}

template <class T>
void run_values(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                const Parallel& par, Isa isa, bool adaptive) {
  if (indices && indices->type == ElementType::i32)
    run<T, i32>(in, values, indices, g, par, isa, adaptive);
  else
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

// Equal bins: in % out == 0 on every axis.
bool equal_bins(const PoolGeometry& g) {
  for (std::size_t a = 0; a < 3; ++a)
    if (g.out[a] < 1 || g.in[a] % g.out[a] != 0) return false;
  return true;
}

}  // namespace

bool max_pool_fast_covers(ElementType type, const PoolGeometry& g) {
  if (type != ElementType::f32 && type != ElementType::f64) return false;
  if (g.adaptive) return equal_bins(g) && max_pool_fast_covers(type, as_window(g));
  const i64 in_plane = g.in[0] * g.in[1] * g.in[2];
  if (in_plane < 1 || in_plane >= kMaxPlane) return false;
  if (g.kernel[2] > kMaxKernelW) return false;
  // An output row's window reads at most min(kernel, in) rows along D and along H.
  const double row_table = static_cast<double>(g.out[0]) * static_cast<double>(g.out[1]) *
                           static_cast<double>(std::min(g.kernel[0], g.in[0])) *
                           static_cast<double>(std::min(g.kernel[1], g.in[1]));
  if (row_table > static_cast<double>(kMaxRowTable)) return false;
  // Columns c0 = ow*stride - pad + kw*dilation and positions stay inside int32.
  for (const i64 v : {g.out[2], g.stride[2], g.dilation[2], g.pad_begin[2]})
    if (v >= kMaxPlane) return false;
  return g.out[2] * g.stride[2] + g.pad_begin[2] + g.kernel[2] * g.dilation[2] < kMaxPlane;
}

bool max_pool_half_rows(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                        const Parallel& par, Isa isa) {
  const bool f16 = in.type == ElementType::f16;
  if ((!f16 && in.type != ElementType::bf16) || values.type != in.type || g.adaptive ||
      !max_pool_fast_covers(ElementType::f32, g))
    return false;
  if (indices && indices->type != ElementType::i32 && indices->type != ElementType::i64)
    return false;
  if (g.planes() * g.out_plane_size() == 0) return true;
  const irrun::detail::FpScope ieee;  // IEEE defaults (fp_control.hpp): bf16 subnormals as they are
  const bool i32_indices = indices && indices->type == ElementType::i32;
  if (f16)
    return i32_indices ? run<F16, i32>(in, values, indices, g, par, isa, false)
                       : run<F16, i64>(in, values, indices, g, par, isa, false);
  return i32_indices ? run<BF16, i32>(in, values, indices, g, par, isa, false)
                     : run<BF16, i64>(in, values, indices, g, par, isa, false);
}

bool max_pool_fast(const Tensor& in, Tensor& values, Tensor* indices, const PoolGeometry& g,
                   const Parallel& par, Isa isa) {
  if (in.type != values.type || !max_pool_fast_covers(in.type, g)) return false;
  if (indices && indices->type != ElementType::i32 && indices->type != ElementType::i64)
    return false;
  if (g.planes() * g.out_plane_size() == 0) return true;
  const irrun::detail::FpScope ieee;  // IEEE defaults (fp_control.hpp)
  // Small planes without indices: a chunk at a time in lanes (max_lanes.hpp).
  if (in.type == ElementType::f32 && !indices && detail::max_lanes_cover(g, isa)) {
    detail::max_pool_lanes(in.data<float>(), values.mutable_data<float>(), g, par, isa);
    return true;
  }
  const PoolGeometry w = g.adaptive ? as_window(g) : g;
  if (in.type == ElementType::f32)
    run_values<float>(in, values, indices, w, par, isa, g.adaptive);
  else
    run_values<double>(in, values, indices, w, par, isa, g.adaptive);
  return true;
}

}  // namespace irrun::kernels
