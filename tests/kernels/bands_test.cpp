// Tests of the pieces of long axes (lib/src/kernels/bands.hpp) and the index moves of MaxPool
// (max_indices.hpp): tiles of wide rows, cut down to a few planes, rows and columns, give one
// call's bits (AvgPool) and values and indices (MaxPool: ties, NaN, outputs that took no tap,
// every index axis), and tiles() takes the geometries it should, in tiles within its budget.
#include "../../lib/src/kernels/bands.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include <Eigen/Core>
#include <catch2/catch.hpp>

#include "../../lib/src/kernels/max_indices.hpp"
#include "irrun/kernels/avg_pool.hpp"
#include "irrun/kernels/max_pool.hpp"
#include "support/max_pool_geometries.hpp"
#include "support/pool_geometries.hpp"
#include "support/pool_shape.hpp"
#include "support/split_mix.hpp"
#include "support/tensor_bits.hpp"

namespace {

using irrun::ElementType;
using irrun::Parallel;
using irrun::PoolGeometry;
using irrun::Tensor;
using irrun::kernels::Kernels;
using irrun::kernels::detail::for_each_tile;
using irrun::kernels::detail::Tile;
using irrun::kernels::detail::Tiles;
using irrun::testing::shape_of;
using irrun::testing::SplitMix64;

// Tiles of at most `planes` planes, `rows` output rows and `cols` output columns, with the input
// they read at most (as tiles() sizes them).
Tiles small_tiles(const PoolGeometry& g, std::int64_t planes, std::int64_t rows,
                  std::int64_t cols) {
  const auto reach = [&](std::size_t d, std::int64_t outs) {
    return std::min(g.in[d], (outs - 1) * g.stride[d] + (g.kernel[d] - 1) * g.dilation[d] + 1);
  };
  const std::size_t a = 3 - g.spatial_rank;
  return {planes, rows, reach(a, rows), cols, reach(2, cols)};
}

// Inputs with many ties, NaN and lowest() (outputs that take no tap), as f32 or f16 bits; i32
// in [-1000, 1000].
Tensor random_input(SplitMix64& rng, ElementType type, const std::vector<std::int64_t>& shape) {
  Tensor t = Tensor::zeros(type, shape);
  if (type == ElementType::i32) {
    for (std::size_t i = 0; i < t.element_count(); ++i)
      t.mutable_data<std::int32_t>()[i] = static_cast<std::int32_t>(rng.range(-1000, 1000));
    return t;
  }
  const float pool[] = {std::numeric_limits<float>::lowest(),   -2, -1, 0, 1, 2, 0.375f,
                        std::numeric_limits<float>::quiet_NaN()};
  for (std::size_t i = 0; i < t.element_count(); ++i) {
    const float v =
        rng.range(0, 3) ? pool[rng.range(0, 7)] : static_cast<float>(rng.range(-99, 99));
    if (type == ElementType::f32) {
      t.mutable_data<float>()[i] = v;
    } else {  // f16: lowest() stands for f16's, the others are exact
      const Eigen::half h = v == std::numeric_limits<float>::lowest()
                                ? std::numeric_limits<Eigen::half>::lowest()
                                : Eigen::half(v);
      std::memcpy(t.buffer.mutable_data() + 2 * i, &h, 2);
    }
  }
  return t;
}

// f(g, tiles) for 300 random window geometries of 2 or 3 spatial axes from `make`, in tiles of
// 1-3 planes, 1-3 output rows and 1-5 output columns.
template <class Make, class F>
void for_random_tiles(SplitMix64& rng, Make make, F&& f) {
  for (int tried = 0; tried < 300;) {
    const PoolGeometry g = make(rng);
    if (g.adaptive || g.spatial_rank == 1) continue;
    ++tried;
    f(g, small_tiles(g, rng.range(1, 3), rng.range(1, 3), rng.range(1, 5)));
  }
}

}  // namespace

TEST_CASE("avg_pool in small tiles gives the bits of one call", "[kernels][bands]") {
  SplitMix64 rng(0x711E5);
  const Parallel par(2);
  for_random_tiles(
      rng, irrun::testing::random_geometry, [&](const PoolGeometry& g, const Tiles& ts) {
        for (const ElementType type : {ElementType::f32, ElementType::f16, ElementType::i32}) {
          INFO(irrun::testing::describe(g) << " tiles " << ts.planes << "x" << ts.rows << "x"
                                           << ts.cols << " " << irrun::to_string(type));
          const Tensor in = random_input(rng, type, shape_of(g, g.in));
          Tensor whole = irrun::testing::poisoned(type, shape_of(g, g.out));
          irrun::kernels::avg_pool(in, whole, g, par);
          Tensor tiled = irrun::testing::poisoned(type, shape_of(g, g.out), 0xA5);
          for_each_tile(in, tiled, nullptr, g, ts, par,
                        [&](const Tensor& x, Tensor& y, Tensor*, const Tile& t) {
                          irrun::kernels::avg_pool(x, y, t.g, par);
                        });
          CHECK(irrun::testing::same_bits(tiled, whole));
        }
      });
}

TEST_CASE("max_pool in small tiles gives one call's values and indices", "[kernels][bands]") {
  SplitMix64 rng(0x711E6);
  const Parallel par(2);
  for_random_tiles(
      rng, irrun::testing::random_max_pool_geometry, [&](const PoolGeometry& g, const Tiles& ts) {
        for (const ElementType type : {ElementType::f32, ElementType::f16}) {
          for (const ElementType it : {ElementType::i32, ElementType::i64}) {
            INFO(irrun::testing::describe_max(g)
                 << " tiles " << ts.planes << "x" << ts.rows << "x" << ts.cols << " "
                 << irrun::to_string(type) << " " << irrun::to_string(it));
            const Tensor in = random_input(rng, type, shape_of(g, g.in));
            Tensor values = irrun::testing::poisoned(type, shape_of(g, g.out));
            Tensor indices = irrun::testing::poisoned(it, shape_of(g, g.out));
            irrun::kernels::max_pool_reference(in, values, &indices, g, par);
            Tensor tiled = irrun::testing::poisoned(type, shape_of(g, g.out), 0xA5);
            Tensor tiled_indices = irrun::testing::poisoned(it, shape_of(g, g.out), 0xA5);
            for_each_tile(in, tiled, &tiled_indices, g, ts, par,
                          [&](const Tensor& x, Tensor& y, Tensor* i, const Tile& t) {
                            irrun::kernels::max_pool(x, y, i, t.g, par);
                            irrun::kernels::detail::move_tile_indices(y, *i, g, t);
                          });
            CHECK(irrun::testing::same_bits(tiled, values));
            CHECK(irrun::testing::same_bits(tiled_indices, indices));
          }
        }
      });
}

TEST_CASE("tiles() takes wide rows and keeps its tiles within budget", "[kernels][bands]") {
  using irrun::kernels::detail::kTileBytes;
  using irrun::kernels::detail::kTileCols;
  using irrun::kernels::detail::tiles;
  const auto same = [](std::int64_t in) {  // 3x3, stride 1, pads 1: OW == IW
    return irrun::testing::window({1, 2}, {3, in}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, false, true);
  };
  // f32 from 2^18 input columns, other types from 2^16.
  CHECK_FALSE(tiles(same(1 << 18), ElementType::f32));
  CHECK(tiles(same((1 << 18) + 1), ElementType::f32));
  CHECK_FALSE(tiles(same(1 << 16), ElementType::f16));
  CHECK(tiles(same((1 << 16) + 1), ElementType::f16));
  CHECK(tiles(same((1 << 16) + 1), ElementType::i64));
  // Not: 1-D (bands), adaptive bins, kTileCols outputs or fewer, and one output row past
  // kTileMaxBytes (a window of 3000 rows of 2^18 + 1 f32 columns: 3 GB).
  CHECK_FALSE(tiles(irrun::testing::window({1, 1}, {1 << 20}, {3}, {1}, {1}, {1}, false, true),
                    ElementType::f32));
  CHECK_FALSE(
      tiles(irrun::testing::adaptive({1, 1}, {3, 1 << 20}, {1, 1 << 19}), ElementType::f32));
  CHECK_FALSE(tiles(
      irrun::testing::window({1, 1}, {3, 1 << 20}, {3, 3}, {1, 64}, {1, 1}, {1, 1}, false, true),
      ElementType::f32));
  CHECK_FALSE(tiles(irrun::testing::window({1, 1}, {3000, (1 << 18) + 1}, {3000, 3}, {1, 1}, {0, 0},
                                           {0, 0}, false, true),
                    ElementType::f32));
  // Tiles within kTileBytes of input and output: planes of few rows go several at a time, whole;
  // tall planes in bands of rows; 3-D planes with their middle axis whole.
  const PoolGeometry cases[] = {
      irrun::testing::window({2, 8}, {3, 300000}, {3, 3}, {1, 1}, {0, 0}, {0, 0}, false, true),
      irrun::testing::window({1, 2}, {700, 300000}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, true, true),
      irrun::testing::window({1, 2}, {9, 5, 300000}, {2, 3, 3}, {1, 1, 2}, {0, 1, 1}, {0, 1, 1},
                             false, false),
      // Few input rows padded to many output rows (found by a review: tiles of whole planes
      // took 16384 columns of every output row).
      irrun::testing::window({1, 1}, {3, 300000}, {3, 3}, {1, 1}, {5000, 1}, {5000, 1}, false,
                             false),
  };
  for (const PoolGeometry& g : cases) {
    INFO(irrun::testing::describe(g));
    const auto t = tiles(g, ElementType::f32);
    REQUIRE(t);
    const std::int64_t mid_in = g.spatial_rank == 3 ? g.in[1] : 1;
    const std::int64_t mid_out = g.spatial_rank == 3 ? g.out[1] : 1;
    CHECK(t->cols == kTileCols);
    CHECK(t->planes * (t->rows_in * mid_in * t->cols_in + t->rows * mid_out * t->cols) * 4 <=
          kTileBytes);
    CHECK((t->rows == g.out[3 - g.spatial_rank] || t->planes == 1));
  }
  CHECK(tiles(cases[0], ElementType::f32)->planes > 1);
  CHECK(tiles(cases[1], ElementType::f32)->rows < 700);
  CHECK(tiles(cases[3], ElementType::f32)->rows < 10001);
}
