// Streamed planes (Plan::stream, Ops::planes): a chunk of small planes pooled as one row of
// positions, eight at a time, every output at the position of its window's first input. A
// block's vertical sums (V, in the rows' order) stay in registers, its outputs' K taps are
// shifted out of them and the next block's, and the outputs among the eight are packed in order
// (vpermps by the block's entry in Plan::stream_blocks) and stored together. Tiny planes (a
// person-attributes network's 10x5 and 5x3) had run a band each: a few output rows of one or
// two masked blocks.
//
// Included by each vector path (avx2.cpp, avx512.cpp) inside its own anonymous namespace, once,
// after it defines:
//   IRRUN_PATH                       its target attribute;
//   StreamV                          the V of eight positions;
//   stream_v<Whole, R>(p, taps, rows, left)
//                                    the V of the eight positions from p: the floats taps[j]
//                                    past each added in j's order (R > 0: R rows, else `rows`);
//                                    not Whole, only the first `left` floats from p are read,
//                                    the others add +0;
//   stream_y<K>(cur, next, r)        the eight outputs fl32(s * r + 0), s the sum of the K V
//                                    values from each position on (cur's, then next's).
// No #pragma once: each path compiles its own copy with its own instructions.

alignas(32) constexpr std::int32_t kFirstLanes8[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                       0,  0,  0,  0,  0,  0,  0,  0};

// f's outputs of block `blk` packed and stored at y; returns y past them. The store is whole
// while it stays before y_end (the next block's overwrite the lanes past these outputs): masked
// stores are slow on AMD cores.
IRRUN_PATH IRRUN_INLINE float* stream_store(__m256 f, Plan::StreamBlock blk, float* y,
                                            const float* y_end) {
  const __m128i order = _mm_cvtsi64_si128(static_cast<long long>(blk.order));
  const __m256 packed = _mm256_permutevar8x32_ps(f, _mm256_cvtepu8_epi32(order));
  if (y + 8 <= y_end)
    _mm256_storeu_ps(y, packed);
  else
    _mm256_maskstore_ps(
        y, _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kFirstLanes8 + 8 - blk.count)),
        packed);
  return y + blk.count;
}

// Ops::planes: `count` planes from x, their outputs at y, unchecked (run_windows checks them
// after). K: the windows' width; R: the rows they sum (0: read at run time).
template <int K, int R>
IRRUN_PATH void planes_stream(const Plan& pl, const float* x, float* y, i64 count) {
  const i64 in = pl.g->in_plane_size();
  const i64 n = count * in, end = n - in + pl.stream_last + 1;  // past the last output
  const float* const y_end = y + count * pl.g->out_plane_size();
  const i64 rows = R > 0 ? R : static_cast<i64>(pl.stream_taps.size());
  // A copy the stores cannot alias: read from the plan, the offsets were loaded again per block.
  i64 taps_r[R > 0 ? R : 1];
  const i64* taps = pl.stream_taps.data();
  if constexpr (R > 0) std::copy(taps, taps + R, taps_r), taps = taps_r;
  const Plan::StreamBlock* blocks = pl.stream_blocks.data();
  const auto period = static_cast<i64>(pl.stream_blocks.size());
  const double r = one_factor(pl);
  const i64 whole_end = n - taps[rows - 1] - 8;  // blocks from here read past the chunk
  StreamV cur =
      whole_end >= 0 ? stream_v<true, R>(x, taps, rows, n) : stream_v<false, R>(x, taps, rows, n);
  i64 i = 0, b = 0;
  for (; i + 8 < end && i + 8 <= whole_end; i += 8) {
    const StreamV next = stream_v<true, R>(x + i + 8, taps, rows, n - i - 8);
    y = stream_store(stream_y<K>(cur, next, r), blocks[b], y, y_end);
    cur = next;
    if (++b == period) b = 0;
  }
  for (; i < end; i += 8) {
    const StreamV next = stream_v<false, R>(x + i + 8, taps, rows, n - i - 8);
    Plan::StreamBlock blk = blocks[b];
    if (end - i < 8)  // the last block: its lanes from `end` on are the next chunk's
      blk.count = static_cast<std::uint8_t>(std::popcount(blk.lanes & ((1u << (end - i)) - 1)));
    y = stream_store(stream_y<K>(cur, next, r), blk, y, y_end);
    cur = next;
    if (++b == period) b = 0;
  }
}

// planes_stream for the plan's window width and rows: those of K x K windows unrolled.
template <int... K>
Ops::PlanesFn stream_fn(const Plan& pl, std::integer_sequence<int, K...>) {
  constexpr Ops::PlanesFn square[] = {planes_stream<K + 1, K + 1>...};
  constexpr Ops::PlanesFn any[] = {planes_stream<K + 1, 0>...};
  const auto rows = static_cast<i64>(pl.stream_taps.size());
  return rows == pl.k_w ? square[pl.k_w - 1] : any[pl.k_w - 1];
}
