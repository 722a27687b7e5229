// Internal to the kernels: f32 window MaxPool values of small planes sixteen (AVX-512) or eight
// (AVX2) at a time, plane k in lane k of every vector. Small planes had run as bands of short rows
// each, whose set-up cost more than their maxima: oneDNN's plain kernel, which transposes channels
// into its vectors, was faster on a network's 17x17 and 10x10 pools.
#pragma once

#include <cstdint>

#include "irrun/kernels/isa.hpp"
#include "irrun/parallel.hpp"
#include "irrun/pool_geometry.hpp"

namespace irrun::kernels::detail {

inline constexpr std::int64_t kLanesMaxPlane = 512;  // input floats of a plane, at most
// On AVX2, whose narrow rows split stride-2 rows into even and odd columns in registers: 3x3 s2 on
// 15x15 to 22x22 planes and 2x2 s2 on 16x16 and 20x20 took 0.78-0.88 of the lanes' time there,
// 2x2 s2 on 14x14 and 3x3 s2 p1 on 12x12 0.99-1.07.
inline constexpr std::int64_t kLanesMaxPlaneAvx2 = 200;
// Taps of a window, at most: each is a load and a maximum of its own, where the row kernels share
// the maxima of rows (3x3x3 windows on 1x832x10x7x7 took 1.49x the time in lanes).
inline constexpr std::int64_t kLanesMaxTaps = 9;

// Whether max_pool_lanes takes g on path isa: window pooling (not adaptive) of a chunk or more of
// planes (sixteen on AVX-512, eight on AVX2; no portable path) of at most kLanesMaxPlane floats
// (kLanesMaxPlaneAvx2 on AVX2), windows of at most kLanesMaxTaps taps; on AVX2 only with a stride
// of 2 or more along W.
bool max_lanes_cover(const PoolGeometry& g, Isa isa);

// The values of an f32 MaxPool over g from x into y, the reference's bits (window_max: from
// lowest(), in its order of taps, a strictly greater tap wins, so NaN never does and a tie keeps
// the first tap).
void max_pool_lanes(const float* x, float* y, const PoolGeometry& g, const Parallel& par, Isa isa);

}  // namespace irrun::kernels::detail
