// Heterogeneous partitioning (Weissman, "Scheduling Parallel Computations in a Heterogeneous Environment"): how many
// units of work (rows, blocks) each part gets so that all parts finish an iteration together.
//
//   auto rows = dps::partition_by_speed(1024, {1.0, 1.0, 0.3});   // A_i = N·w_i / Σw
//   auto rows = dps::partition_by_cost(1024, fixed, per_unit);     // x_i + y_i·A_i equal for every i
//
// Shares are rounded to the nearest unit; what rounding leaves over (or takes too much) goes to the
// fastest parts, one unit each, fastest first (the lowest index among equals). A part whose fixed
// cost alone exceeds the others' whole iteration gets nothing.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace dps {

// Speeds: relative, positive (work per second).
std::vector<std::size_t> partition_by_speed(std::size_t units, std::span<const double> speeds);
// Part i takes fixed[i] + per_unit[i]·A_i seconds an iteration (per_unit positive, fixed ≥ 0).
std::vector<std::size_t> partition_by_cost(std::size_t units, std::span<const double> fixed,
                                           std::span<const double> per_unit);

}  // namespace dps
