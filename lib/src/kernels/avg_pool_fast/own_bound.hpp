// The first check of the group functions that take their bound from their own loads
// (Ops::own_bound) instead of the band's stats pass, shared by the AVX2 and AVX-512 paths: the
// loads raise LoadBits, each row keeps the least |s| of each lane (BandArgs::least), and
// own_check tests every row once at the group's end against the T of all the band has loaded.
// A NaN sum needs a NaN or both infinities among the inputs, which give a T of NaN
// (bits_threshold): every row fails it, so the least |s| may drop a NaN.
#pragma once

#include "ops.hpp"  // first: intrinsics and their warning pragmas

#include <algorithm>
#include <cstdint>

namespace irrun::kernels::avg_fast {

// The bits of the inputs a group loaded, for bits_threshold: per lane, the unsigned and the
// signed maximum of their raw bits (two integer operations per eight floats loaded, where the
// stats pass they replace read the whole band once more).
struct LoadBits {
  __m256i u, s;
};

IRRUN_AVX2_COMMON inline void track_bits(LoadBits& b, __m256 x) {
  const __m256i i = _mm256_castps_si256(x);
  b.u = _mm256_max_epu32(b.u, i), b.s = _mm256_max_epi32(b.s, i);
}

IRRUN_AVX2_COMMON inline void track_row(LoadBits& b, const float* x, i64 n) {
  alignas(32) static constexpr std::int32_t kFirst[16] = {-1, -1, -1, -1, -1, -1, -1, -1};
  i64 c = 0;
  for (; c + 8 <= n; c += 8) track_bits(b, _mm256_loadu_ps(x + c));
  if (c < n)  // masked off: not read, +0 (bits 0 raise neither maximum)
    track_bits(
        b, _mm256_maskload_ps(
               x + c, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kFirst + 8 - (n - c)))));
}

// The band's load bits so far, for a group function with its own bound.
IRRUN_AVX2_COMMON inline LoadBits own_bits(const OwnBound& own) {
  return {_mm256_set1_epi32(static_cast<int>(own.u)), _mm256_set1_epi32(own.s)};
}

// Whether the group before ended inside the run of rows the group starts in: then it loaded the
// input rows of the first window before its last one.
inline bool own_continues(const BandArgs& a) {
  return a.q0 == a.own->q_next && a.pl->step_end[static_cast<std::size_t>(a.q0) - 1] > a.q0;
}

// The end of a group with its own bound: its bits into the band's OwnBound; returns the T of
// all the band has loaded so far.
IRRUN_AVX2_COMMON inline double own_threshold(const BandArgs& a, const LoadBits& bits) {
  OwnBound& own = *a.own;
  alignas(32) std::uint32_t u[8];
  alignas(32) std::int32_t s[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(u), bits.u);
  _mm256_store_si256(reinterpret_cast<__m256i*>(s), bits.s);
  own.u = *std::max_element(u, u + 8), own.s = *std::max_element(s, s + 8);
  own.t = bits_threshold(*a.pl, own.u, own.s), own.q_next = a.q1;
  return own.t;
}

// own_threshold, then every row, by its least |s| (eight doubles at a.least + 8 * (q - q0)),
// checked against that T, once for the group (a T per row cost S2's rows of 28 outputs a fifth
// of their time). Flags the rows in row_failed; true when one failed.
IRRUN_AVX2_COMMON inline bool own_check(const BandArgs& a, const LoadBits& bits) {
  const __m256d t = _mm256_set1_pd(own_threshold(a, bits));
  bool failed = false;
  for (i64 q = a.q0; q < a.q1; ++q) {
    const double* least = a.least + 8 * (q - a.q0);
    const bool f = _mm256_movemask_pd(
                       _mm256_or_pd(_mm256_cmp_pd(_mm256_load_pd(least), t, _CMP_NGE_UQ),
                                    _mm256_cmp_pd(_mm256_load_pd(least + 4), t, _CMP_NGE_UQ))) != 0;
    a.row_failed[q - a.q0] = f;
    failed |= f;
  }
  return failed;
}

// own_check by the stored outputs: the group's all pass the T of all the band has loaded so far
// when every |y| is above after_floor's bound (all_above: one compare per eight or sixteen
// outputs, from L1, where keeping each row's least |s| took one or two per four or eight in the
// loop: S1 0.97 of the time on AVX-512, 0.96 on AVX2). Else rows are flagged by their own
// outputs. A NaN y fails every check. Not where the outputs have left L1 (S9: 1.06).
inline bool own_check_outputs(const BandArgs& a, const LoadBits& bits,
                              bool (*all_above)(const float*, i64, float)) {
  const float floor = after_floor(*a.pl, own_threshold(a, bits));
  const i64 OW = a.pl->g->out[2];
  if (all_above(a.out_plane + a.q0 * OW, (a.q1 - a.q0) * OW, floor)) return false;
  for (i64 q = a.q0; q < a.q1; ++q)
    a.row_failed[q - a.q0] = !all_above(a.out_plane + q * OW, OW, floor);
  return true;
}

}  // namespace irrun::kernels::avg_fast
