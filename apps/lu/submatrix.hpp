// submatrix(): a block of a column-major matrix copied into a new contiguous array, what a message
// carries; copy_of(): a whole array copied. Both through Kernels::copy, so partial direct execution
// charges them. Without data (NOALLOC) the array is sized but empty, and nothing is copied.
//
//   dps::LargeArray<double> l21 = lu::submatrix(c.block, c.n, i * r, 0, r, r);  // block row i of column c
#pragma once

#include "kernels.hpp"

#include <dps/large_array.hpp>

#include <cstddef>

namespace lu {

// Rows [row, row + rows) of columns [column, column + columns) of `source` (leading dimension ld).
inline dps::LargeArray<double> submatrix(const dps::LargeArray<double>& source, int ld, int row, int column, int rows,
                                         int columns) {
  auto out = dps::LargeArray<double>::uninitialized(static_cast<std::size_t>(rows) * static_cast<std::size_t>(columns));
  const double* from = source.allocated() ? source.data() + static_cast<std::size_t>(column) * ld + row : nullptr;
  kernels().copy(rows, columns, from, ld, out.allocated() ? out.data() : nullptr);
  return out;
}

// An r×r block (or any array of r·r elements) copied.
inline dps::LargeArray<double> copy_of(const dps::LargeArray<double>& block, int r) {
  return submatrix(block, r, 0, 0, r, static_cast<int>(block.size() / static_cast<std::size_t>(r)));
}

}  // namespace lu
