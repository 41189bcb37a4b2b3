// The 5-point Jacobi kernel on one block, and the serial solver the tests hold the application to.
//
// A block is stored row major with a margin of one ghost cell: (rows + 2) × stride, stride = cols + 2,
// its interior from (1, 1). The grid is n × n with fixed boundary values (the top row 1, the other
// edges 0, as the MPI peer), and only its (n − 2)² interior points are updated:
//
//   new(i, j) = 0.25 · (old(i − 1, j) + old(i + 1, j) + old(i, j − 1) + old(i, j + 1))
//
// in exactly that order of additions, so every decomposition computes the same bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace stencil {

// Rows (or columns) first to last of a block's storage, both included: its interior is 1 .. rows.
struct Span {
  std::size_t first = 1, last = 0;
  std::size_t size() const noexcept { return last >= first ? last - first + 1 : 0; }
};

// One sweep of the points rows × cols of `in` into `out`.
void sweep(const double* in, double* out, std::size_t stride, Span rows, Span cols);
// The same, returning the sum of the squared changes.
double sweep_with_residual(const double* in, double* out, std::size_t stride, Span rows, Span cols);

// The fixed value of a boundary point of the n × n grid (row or column 0 or n − 1).
inline double boundary(std::size_t row) { return row == 0 ? 1.0 : 0.0; }

// The n × n grid (boundaries included, row major) after `iterations` sweeps, on one thread.
std::vector<double> serial_jacobi(std::size_t n, long iterations);

// A sum of grid values that is the same whatever order they are added in: each value (an average of
// boundary values, so in [0, 1]) becomes a fixed-point integer with 100 fraction bits, exact down to
// 2^-100, and integers add associatively: the checksum does not depend on the decomposition. Room for
// 2^26 values of 1.
class Checksum {
 public:
  void add(double value);
  void add(const Checksum& other) { low_ += other.low_, high_ += other.high_ + (low_ < other.low_); }
  double value() const;
  template <class A>
  void serialize(A& a) {
    a(low_, high_);
  }

 private:
  std::uint64_t low_ = 0;  // a 128-bit two's-complement integer
  std::int64_t high_ = 0;
};

}  // namespace stencil
