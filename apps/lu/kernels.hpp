// The four kernels of block LU (OpenBLAS and LAPACKE), each run through dps::compute with a
// duration estimate, so a partial direct execution simulation charges the estimate instead.
// Matrices are column major; `ld` is the leading dimension (rows of the enclosing array).
//
//   lu::Kernels k = lu::Kernels::measure(r);        // times each kernel at block size r
//   int singular = k.factor(m, r, panel, n, ipiv);  // 0, or the 1-based column of a zero pivot
//   k.multiply(r, r, r, a, r, b, r, c, r);           // c = a·b, r×r blocks
//
// Copies count too: partial direct execution charges them as a kernel (Schaeli, Gerlach & Hersch, "A simulator for
// adaptive parallel applications", §4: "the running time of time consuming memory operations can be explicitly added"),
// since they pace the messages.
#pragma once

#include <cstddef>

namespace lu {

// Seconds each kernel takes at block size r: what partial direct execution charges.
struct KernelTimes {
  int r = 0;                  // the block size they are for
  double factor_per_row = 0;  // dgetrf of an m×r panel: this times m
  double swap = 0;            // dlaswp of r pivots over r columns (of n-row columns, measured with n)
  double solve = 0;           // dtrsm of an r×r unit lower triangle on r columns
  double multiply = 0;        // dgemm of r×r blocks
  double subtract = 0;        // an r×r block subtracted in place
  double copy = 0;            // an r×r block copied into a new array, its allocation included
  // The owner variant's trailing update as it runs: a tall panel's dgemm on a stripe of the n-row
  // matrix, from memory rather than the caches; per r×r×r of it. 0: charged as `multiply`.
  double update = 0;
  // Each pivot beyond the first r applied to the same r columns (the owner variant's deferred
  // interchanges, n - r pivots on a block at once), whose rows are by then in the caches: a few
  // times cheaper than `swap`'s. 0: charged as `swap`'s.
  double swap_more = 0;
};

class Kernels {
 public:
  explicit Kernels(KernelTimes times) : times_(times) {}
  // Times each kernel at block size r on this machine: the median of several runs (a few
  // milliseconds for r = 256); with the matrix order n (at least 2r), the update and the row
  // interchanges on the application's layout (tens of milliseconds), and the panel factorization on
  // a panel as tall as the run's on average. KernelModel fits these over several sizes.
  static Kernels measure(int r, int n = 0);
  const KernelTimes& times() const noexcept { return times_; }

  // LU with partial pivoting of the m×r panel at `a`; ipiv gets r 1-based row indices relative to
  // the panel's first row. Returns 0, or the 1-based column whose pivot is exactly zero.
  int factor(int m, int r, double* a, int ld, int* ipiv) const;
  // Applies the row interchanges of ipiv (`pivots` of them, relative to `a`'s first row) to `columns`
  // columns; charged as r of them over r columns scaled by both, those beyond the first r at
  // `swap_more` each.
  void swap(int columns, double* a, int ld, const int* ipiv, int pivots) const;
  // b = L⁻¹·b, L the unit lower triangle of the r×r block `l` (leading dimension ldl); b is r×columns.
  void solve(int r, int columns, const double* l, int ldl, double* b, int ld) const;
  // c = a·b: a is m×k, b k×n, c m×n; charged as the r×r product scaled by its flops.
  void multiply(int m, int n, int k, const double* a, int lda, const double* b, int ldb, double* c, int ldc) const;
  // c -= a·b: a is rows×r, b r×columns, c rows×columns (the trailing update of a node's columns).
  void update(int rows, int columns, int r, const double* a, int lda, const double* b, int ldb, double* c,
              int ldc) const;
  // a -= c: the r×r block `c` (leading dimension r) from the block at `a`.
  void subtract(int r, const double* c, double* a, int ld) const;
  // to = the rows×columns block at `from` (leading dimension ld), `to` contiguous: making a message's
  // block. Charged as the r×r copy scaled by its size; nothing is copied when either is null (NOALLOC).
  void copy(int rows, int columns, const double* from, int ld, double* to) const;

 private:
  KernelTimes times_;
};

// The kernels every operation of this process uses. Their estimates matter only to a simulation,
// whose single process sets measured ones; other processes keep zero estimates.
const Kernels& kernels();
void set_kernels(const Kernels& k);

// One BLAS thread per process: DPS threads are the parallelism.
void use_one_blas_thread();

}  // namespace lu
