#include "decomposition.hpp"

#include <dps/partition.hpp>

#include <stdexcept>
#include <vector>

namespace stencil {

Decomposition decomposition_named(const std::string& text) {
  if (text == "strips") return Decomposition::Strips;
  if (text == "blocks") return Decomposition::Blocks;
  throw std::invalid_argument("--decomposition expects strips or blocks, got '" + text + "'");
}

const char* name(Decomposition d) { return d == Decomposition::Strips ? "strips" : "blocks"; }

ProcessGrid process_grid(std::size_t threads, Decomposition d) {
  if (d == Decomposition::Strips) return {threads, 1};
  std::size_t cols = 1;
  for (std::size_t c = 1; c * c <= threads; ++c)
    if (threads % c == 0) cols = c;
  return {threads / cols, cols};
}

namespace {

// One dimension split over `parts` in proportion to the summed weight of each (empty: evenly).
dps::Distribution split(std::size_t extent, std::size_t parts, const std::vector<double>& weights) {
  if (weights.empty()) return dps::Distribution::even(extent, parts);
  return dps::Distribution::blocks(dps::partition_by_speed(extent, weights));
}

}  // namespace

dps::Layout layout_for(std::size_t interior, std::size_t threads, Decomposition d, std::span<const double> weights) {
  if (!weights.empty() && weights.size() != threads)
    throw std::logic_error("stencil::layout_for: one weight per thread");
  const ProcessGrid g = process_grid(threads, d);
  std::vector<double> row_weights, col_weights;
  if (!weights.empty()) {
    row_weights.assign(g.rows, 0);
    col_weights.assign(g.cols, 0);
    for (std::size_t p = 0; p < threads; ++p) row_weights[p / g.cols] += weights[p], col_weights[p % g.cols] += weights[p];
  }
  return dps::Layout(split(interior, g.rows, row_weights),
                     g.cols == 1 ? dps::Distribution::whole(interior) : split(interior, g.cols, col_weights), 1);
}

namespace {

// The nearest part of `d` from `at` in direction `step` (±1) that holds indices; -1: none.
long nearest_holding(const dps::Distribution& d, std::size_t at, long step) {
  for (long k = static_cast<long>(at) + step; k >= 0 && k < static_cast<long>(d.parts()); k += step)
    if (d.count(static_cast<std::size_t>(k)) > 0) return k;
  return -1;
}

}  // namespace

Geometry geometry_of(const dps::Layout& layout, std::size_t part) {
  const long pc = static_cast<long>(layout.cols().parts());
  const std::size_t r = layout.grid_row(part), c = layout.grid_col(part);
  Geometry g;
  g.part = static_cast<int>(part);
  g.first_row = layout.rows().first(r);
  g.first_col = layout.cols().first(c);
  g.rows = layout.rows().count(r);
  g.cols = layout.cols().count(c);
  if (g.empty()) return g;
  const auto in_row = [&](long k) { return k < 0 ? -1 : static_cast<int>(k * pc + static_cast<long>(c)); };
  const auto in_col = [&](long k) { return k < 0 ? -1 : static_cast<int>(static_cast<long>(r) * pc + k); };
  g.up = in_row(nearest_holding(layout.rows(), r, -1));
  g.down = in_row(nearest_holding(layout.rows(), r, +1));
  g.left = in_col(nearest_holding(layout.cols(), c, -1));
  g.right = in_col(nearest_holding(layout.cols(), c, +1));
  return g;
}

}  // namespace stencil
