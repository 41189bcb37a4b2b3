// scaled_residual: PA by LAPACK's row interchanges, LU by one triangular multiplication.
#include "check.hpp"

#include <cblas.h>
#include <lapacke.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

namespace lu {

namespace {

double norm1(const std::vector<double>& a, int n) {
  double most = 0;
  for (int j = 0; j < n; ++j) {
    double sum = 0;
    for (int i = 0; i < n; ++i) sum += std::fabs(a[static_cast<std::size_t>(j) * n + i]);
    most = std::max(most, sum);
  }
  return most;
}

}  // namespace

double scaled_residual(const Factored& f, std::uint64_t seed, MatrixKind kind) {
  const int n = f.n;
  if (!f.lu.allocated() || !f.pivots.allocated()) throw std::logic_error("scaled_residual: the factors hold no data");
  const std::size_t size = static_cast<std::size_t>(n) * n;
  std::vector<double> a(size), w(size, 0.0);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i) {
      const std::size_t k = static_cast<std::size_t>(j) * n + i;
      a[k] = entry(seed, kind, n, i, j);
      if (i <= j) w[k] = f.lu[k];  // U
    }
  const double norm_a = norm1(a, n);
  LAPACKE_dlaswp(LAPACK_COL_MAJOR, n, a.data(), n, 1, n, f.pivots.data(), 1);  // PA
  // The check runs in main, between calls: every core may help.
  openblas_set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  cblas_dtrmm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans, CblasUnit, n, n, 1.0, f.lu.data(), n, w.data(), n);
  openblas_set_num_threads(1);
  for (std::size_t k = 0; k < size; ++k) w[k] -= a[k];
  return norm1(w, n) / (norm_a * n * std::numeric_limits<double>::epsilon());
}

}  // namespace lu
