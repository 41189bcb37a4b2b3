// submatrix(): a block of a column-major matrix copied into a new contiguous array, what a message
// carries. Without data (NOALLOC) the array is sized but empty, and nothing is copied.
//
//   dps::LargeArray<double> l21 = lu::submatrix(c.block, c.n, i * r, 0, r, r);  // block row i of column c
#pragma once

#include <dps/large_array.hpp>

#include <cstddef>
#include <cstring>

namespace lu {

// Rows [row, row + rows) of columns [column, column + columns) of `source` (leading dimension ld).
inline dps::LargeArray<double> submatrix(const dps::LargeArray<double>& source, int ld, int row, int column, int rows,
                                         int columns) {
  dps::LargeArray<double> out(static_cast<std::size_t>(rows) * static_cast<std::size_t>(columns));
  if (out.allocated() && source.allocated())
    for (int j = 0; j < columns; ++j)
      std::memcpy(out.data() + static_cast<std::size_t>(j) * rows,
                  source.data() + static_cast<std::size_t>(column + j) * ld + row, sizeof(double) * rows);
  return out;
}

}  // namespace lu
