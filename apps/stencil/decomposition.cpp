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

Geometry geometry_of(const dps::Layout& layout, std::size_t part) {
  const std::size_t pr = layout.rows().parts(), pc = layout.cols().parts();
  const std::size_t r = layout.grid_row(part), c = layout.grid_col(part);
  Geometry g;
  g.part = static_cast<int>(part);
  g.first_row = layout.rows().first(r);
  g.first_col = layout.cols().first(c);
  g.rows = layout.rows().count(r);
  g.cols = layout.cols().count(c);
  if (g.empty()) return g;
  // The nearest grid row (column) with rows (columns) in each direction.
  for (std::size_t k = r; k-- > 0;)
    if (layout.rows().count(k) > 0) {
      g.up = static_cast<int>(k * pc + c);
      break;
    }
  for (std::size_t k = r + 1; k < pr; ++k)
    if (layout.rows().count(k) > 0) {
      g.down = static_cast<int>(k * pc + c);
      break;
    }
  for (std::size_t k = c; k-- > 0;)
    if (layout.cols().count(k) > 0) {
      g.left = static_cast<int>(r * pc + k);
      break;
    }
  for (std::size_t k = c + 1; k < pc; ++k)
    if (layout.cols().count(k) > 0) {
      g.right = static_cast<int>(r * pc + k);
      break;
    }
  return g;
}

}  // namespace stencil
