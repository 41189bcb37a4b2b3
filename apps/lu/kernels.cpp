// Kernels: LAPACKE and CBLAS calls wrapped in dps::compute; their times measured at startup.
#include "kernels.hpp"

#include "median.hpp"

#include <dps/compute.hpp>

#include <cblas.h>
#include <lapacke.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

namespace lu {

namespace {
Kernels process_kernels{KernelTimes{}};  // zero estimates: only a simulation needs measured ones
}  // namespace

const Kernels& kernels() { return process_kernels; }
void set_kernels(const Kernels& k) { process_kernels = k; }

void use_one_blas_thread() { openblas_set_num_threads(1); }

int Kernels::factor(int m, int r, double* a, int ld, int* ipiv) const {
  return dps::compute(times_.factor_per_row * m, [&] {
    const lapack_int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, r, a, ld, ipiv);
    return info > 0 ? static_cast<int>(info) : 0;
  });
}

void Kernels::swap(int columns, double* a, int ld, const int* ipiv, int pivots) const {
  const double r = times_.r > 0 ? times_.r : 1;
  const double more = times_.swap_more > 0 ? std::max(0.0, pivots - r) : 0.0;  // rows in the caches by then
  dps::compute(times_.swap * columns / r * (pivots - more) / r + times_.swap_more * columns / r * more,
               [&] { LAPACKE_dlaswp_work(LAPACK_COL_MAJOR, columns, a, ld, 1, pivots, ipiv, 1); });
}

void Kernels::solve(int r, int columns, const double* l, int ldl, double* b, int ld) const {
  dps::compute(times_.solve * columns / r, [&] {
    cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, r, columns, 1.0, l, ldl, b, ld);
  });
}

void Kernels::update(int rows, int columns, int r, const double* a, int lda, const double* b, int ldb, double* c,
                     int ldc) const {
  dps::compute((times_.update > 0 ? times_.update : times_.multiply) * rows / r * columns / r, [&] {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, rows, columns, r, -1.0, a, lda, b, ldb, 1.0, c, ldc);
  });
}

void Kernels::multiply(int m, int n, int k, const double* a, int lda, const double* b, int ldb, double* c,
                       int ldc) const {
  const double r = times_.r > 0 ? times_.r : 1;
  dps::compute(times_.multiply * m / r * n / r * k / r, [&] {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, ldc);
  });
}

void Kernels::copy(int rows, int columns, const double* from, int ld, double* to) const {
  const double r = times_.r > 0 ? times_.r : 1;
  dps::compute(times_.copy * rows / r * columns / r, [&] {
    if (!from || !to) return;
    for (int j = 0; j < columns; ++j)
      std::memcpy(to + static_cast<std::size_t>(j) * rows, from + static_cast<std::size_t>(j) * ld, sizeof(double) * rows);
  });
}

void Kernels::subtract(int r, const double* c, double* a, int ld) const {
  dps::compute(times_.subtract, [&] {
    for (int j = 0; j < r; ++j) {
      const double* from = c + static_cast<std::ptrdiff_t>(j) * r;
      double* to = a + static_cast<std::ptrdiff_t>(j) * ld;
      for (int i = 0; i < r; ++i) to[i] -= from[i];
    }
  });
}

namespace {

// The median of seven timings of f, after one untimed run (cold caches, lazy BLAS setup): what the
// application's kernels take on this machine as it typically runs, not at its best (a machine shared
// with others runs the application at its typical speed, and the shortest made every prediction fast).
template <class F>
double typical_seconds(F&& f) {
  f();
  std::vector<double> times;
  for (int k = 0; k < 7; ++k) {
    const auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return median(times);
}

// The owner variant's update as it runs: the panel's L21 ((n - r) × r, contiguous) times the top r
// rows of r columns of a stripe (an n-row array) subtracted from the columns below them; each time
// other columns of a stripe larger than the caches (64 MiB), so that they come from memory as the
// application's do. Per r×r×r product.
double update_seconds(const Kernels& direct, int r, int n) {
  const int rows = n - r;
  const auto ld = static_cast<std::size_t>(n), width = static_cast<std::size_t>(r);
  const std::size_t columns = std::max<std::size_t>(2 * width, (std::size_t{64} << 20) / (sizeof(double) * ld));
  std::vector<double> stripe(ld * columns, 0.5), l21(static_cast<std::size_t>(rows) * width, 0.25);
  std::size_t at = 0;
  return typical_seconds([&] {
           if (at + width > columns) at = 0;
           double* top = stripe.data() + at * ld;
           direct.update(rows, r, r, l21.data(), rows, top, n, top + r, n);
           at += width;
         }) /
         (static_cast<double>(rows) / r);
}

// The row interchanges as they run, on r columns of an n-row stripe from memory, each pivot's row
// anywhere below it as partial pivoting finds them: r pivots (each touches a row in every column, a
// page apart: three to five times the same swaps in a small panel in the caches), and, per pivot,
// the further n - 2r of the n - r that the owner variant defers and applies to a block at once,
// timed on their own once the first r have run on the block. Their `swap` and `swap_more`.
std::pair<double, double> swap_seconds(const Kernels& direct, int r, int n) {
  const auto ld = static_cast<std::size_t>(n), width = static_cast<std::size_t>(r);
  const std::size_t columns = std::max<std::size_t>(2 * width, (std::size_t{64} << 20) / (sizeof(double) * ld));
  std::vector<double> stripe(ld * columns, 0.5);
  std::mt19937_64 random(11);
  std::vector<int> ipiv(static_cast<std::size_t>(n - r));
  for (int i = 0; i < n - r; ++i) ipiv[static_cast<std::size_t>(i)] = i + 1 + static_cast<int>(random() % (n - r - i));
  std::size_t at = 0;
  const auto next_block = [&] {  // columns not touched since the last lap over the stripe
    if (at + width > columns) at = 0;
    double* block = stripe.data() + at * ld;
    at += width;
    return block;
  };
  const double first = typical_seconds([&] { direct.swap(r, next_block(), n, ipiv.data(), r); });
  if (n <= 2 * r) return {first, 0.0};
  std::vector<double> further;
  for (int k = 0; k < 7; ++k) {
    double* block = next_block();
    direct.swap(r, block, n, ipiv.data(), r);
    const auto start = std::chrono::steady_clock::now();
    LAPACKE_dlaswp_work(LAPACK_COL_MAJOR, r, block, n, r + 1, n - r, ipiv.data(), 1);
    further.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return {first, median(further) / (n - 2 * r)};
}

}  // namespace

Kernels Kernels::measure(int r, int n) {
  // A panel four blocks tall; on the matrix's layout, as tall as the run's panels on average (a
  // panel's factorization costs a little per row and much per panel: a short one would charge the
  // tall ones half as much again per row).
  const int m = n >= 2 * r ? std::max(4 * r, n / 2) : 4 * r;
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> uniform(-0.5, 0.5);
  std::vector<double> panel(static_cast<std::size_t>(m) * r), a(static_cast<std::size_t>(r) * r),
      b(a.size()), c(a.size());
  for (double& x : panel) x = uniform(random);
  for (double& x : a) x = uniform(random);
  for (double& x : b) x = uniform(random);
  std::vector<int> ipiv(r);
  const Kernels direct(KernelTimes{});  // estimates are irrelevant outside a simulation
  KernelTimes t;
  t.r = r;
  std::vector<double> work;
  work = panel;
  const double copy = typical_seconds([&] { std::copy(panel.begin(), panel.end(), work.begin()); });
  t.factor_per_row = std::max(0.0, typical_seconds([&] {
                                     std::copy(panel.begin(), panel.end(), work.begin());
                                     direct.factor(m, r, work.data(), m, ipiv.data());
                                   }) - copy) / m;
  t.swap = typical_seconds([&] { direct.swap(r, panel.data(), m, ipiv.data(), r); });
  t.solve = typical_seconds([&] { direct.solve(r, r, a.data(), r, b.data(), r); });
  t.multiply = typical_seconds([&] { direct.multiply(r, r, r, a.data(), r, b.data(), r, c.data(), r); });
  t.subtract = typical_seconds([&] { direct.subtract(r, c.data(), b.data(), r); });
  // A block of the panel into a new zeroed array, as submatrix() makes a message's: allocation and
  // first touch included (not a LargeArray: a simulation without payloads would allocate none).
  t.copy = typical_seconds([&] {
    const std::unique_ptr<double[]> block(new double[static_cast<std::size_t>(r) * r]());
    direct.copy(r, r, panel.data() + r, m, block.get());
  });
  if (n >= 2 * r) {
    t.update = update_seconds(direct, r, n);
    std::tie(t.swap, t.swap_more) = swap_seconds(direct, r, n);
  }
  return Kernels(t);
}

}  // namespace lu
