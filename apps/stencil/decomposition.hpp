// How the (n − 2)² interior of the grid is dealt over P block threads: strips of whole rows
// (Weissman's row PDUs), or a nearly-square grid of blocks (ReSHAPE's topology), in equal shares or
// in shares proportional to each thread's weight (its node's speed).
//
//   dps::Layout l = stencil::layout_for(4094, 6, stencil::Decomposition::Blocks, {});   // 3 × 2 blocks
//   stencil::Geometry g = stencil::geometry_of(l, 4);   // rows, columns, neighbours of block 4
#pragma once

#include <dps/layout.hpp>

#include <cstddef>
#include <span>
#include <string>

namespace stencil {

enum class Decomposition { Strips, Blocks };
Decomposition decomposition_named(const std::string& text);  // "strips" or "blocks"; throws std::invalid_argument
const char* name(Decomposition d);

struct ProcessGrid {
  std::size_t rows = 1, cols = 1;
};
// Strips: threads × 1. Blocks: rows × cols = threads with cols the largest divisor not above √threads.
ProcessGrid process_grid(std::size_t threads, Decomposition d);

// The layout of the interior (interior × interior points, a margin of one ghost cell) over `threads`
// parts; weights (one per thread, positive) split the rows of strips, or the rows of blocks by the
// weight of each grid row and their columns by the weight of each grid column; empty: equal shares.
dps::Layout layout_for(std::size_t interior, std::size_t threads, Decomposition d, std::span<const double> weights);

// Block p of a layout: where its interior lies in the grid's interior, and its neighbours (-1: a
// grid edge; parts left empty by a partition are skipped over).
struct Geometry {
  int part = -1;
  std::size_t first_row = 0, first_col = 0, rows = 0, cols = 0;
  int up = -1, down = -1, left = -1, right = -1;
  std::size_t stride() const noexcept { return cols + 2; }
  std::size_t elements() const noexcept { return (rows + 2) * (cols + 2); }
  bool empty() const noexcept { return rows == 0 || cols == 0; }
  template <class A>
  void serialize(A& a) {
    a(part, first_row, first_col, rows, cols, up, down, left, right);
  }
};
Geometry geometry_of(const dps::Layout& layout, std::size_t part);

}  // namespace stencil
