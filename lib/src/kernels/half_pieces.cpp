#include "half_pieces.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace irrun::kernels::detail {
namespace {

using i64 = std::int64_t;

constexpr i64 kPlaneBytes = i64{32} << 20;  // scratch of a band of one output row, at most
constexpr double kWidenedPerTap = 8;        // values widened per reference tap, at most,
constexpr double kWidenedAnyway = 1 << 20;  // once past this many values (a fraction of a ms)

}  // namespace

std::optional<Pieces> plan_pieces(const PoolGeometry& g, i64 out_bytes, i64 budget) {
  const std::size_t a = 3 - g.spatial_rank;
  const i64 n_in = g.in_plane_size(), n_out = g.out_plane_size();
  const i64 plane_bytes = 4 * n_in + out_bytes * n_out;
  std::optional<Pieces> p;
  if (plane_bytes <= budget) {
    p = Pieces{true, std::clamp<i64>(budget / plane_bytes, 1, g.planes()), g.out[a], g.in[a]};
  } else {
    // A band of b output rows reads at most first + (b - 1) * next input rows.
    const i64 row_in = n_in / g.in[a], row_out = n_out / g.out[a];
    const i64 first = std::min((g.kernel[a] - 1) * g.dilation[a] + 1, g.in[a]);
    const i64 next = std::min(g.stride[a], g.in[a]);
    const i64 first_bytes = 4 * row_in * first + out_bytes * row_out;
    const i64 next_bytes = 4 * row_in * next + out_bytes * row_out;
    // A band of one output row past kPlaneBytes (windows over thousands of rows of a wide
    // plane) runs the reference kernel, so that the scratch stays well within a run's 64 MiB
    // above its tensors.
    if (first_bytes > kPlaneBytes) return std::nullopt;
    const i64 rows = std::clamp<i64>((budget - first_bytes) / next_bytes + 1, 1, g.out[a]);
    p = Pieces{false, 1, rows, std::min(g.in[a], first + (rows - 1) * next)};
  }
  // Values widened against the reference's taps (16-bit values compared or summed exactly in
  // software, some ten times a widening): windows dilated or strided far along the band axis had
  // each band widen rows no window reads, up to thousands of times the reference's time.
  const double bands = static_cast<double>((g.out[a] + p->rows - 1) / p->rows);
  const double widened = static_cast<double>(g.planes()) * bands *
                         static_cast<double>(p->rows_read) * static_cast<double>(n_in / g.in[a]);
  const double taps = static_cast<double>(g.planes()) * static_cast<double>(n_out) * window_taps(g);
  if (widened > kWidenedPerTap * taps && widened > kWidenedAnyway) return std::nullopt;
  return p;
}

}  // namespace irrun::kernels::detail
