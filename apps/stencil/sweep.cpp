// The kernel is compiled for AVX2 and for the baseline; the loader picks what the CPU has. Not under
// ThreadSanitizer: the loader runs the picker (an ifunc resolver) before TSan's runtime is up.
#include "sweep.hpp"

#include <cmath>
#include <utility>

#if defined(__SANITIZE_THREAD__)
#define STENCIL_KERNEL
#else
#define STENCIL_KERNEL __attribute__((target_clones("avx2", "default")))
#endif

namespace stencil {

namespace {
__extension__ using Wide = __int128;  // GCC's, which -Wpedantic otherwise flags
}

STENCIL_KERNEL void sweep(const double* in, double* out, std::size_t stride, Span rows, Span cols) {
  for (std::size_t i = rows.first; i <= rows.last; ++i) {
    const double* __restrict up = in + (i - 1) * stride;
    const double* __restrict mid = in + i * stride;
    const double* __restrict down = in + (i + 1) * stride;
    double* __restrict to = out + i * stride;
    for (std::size_t j = cols.first; j <= cols.last; ++j) to[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
  }
}

STENCIL_KERNEL double sweep_with_residual(const double* in, double* out, std::size_t stride, Span rows, Span cols) {
  double residual = 0;
  for (std::size_t i = rows.first; i <= rows.last; ++i) {
    const double* __restrict up = in + (i - 1) * stride;
    const double* __restrict mid = in + i * stride;
    const double* __restrict down = in + (i + 1) * stride;
    double* __restrict to = out + i * stride;
    double row = 0;
    for (std::size_t j = cols.first; j <= cols.last; ++j) {
      to[j] = 0.25 * (up[j] + down[j] + mid[j - 1] + mid[j + 1]);
      const double change = to[j] - mid[j];
      row += change * change;
    }
    residual += row;
  }
  return residual;
}

std::vector<double> serial_jacobi(std::size_t n, long iterations) {
  std::vector<double> a(n * n, 0.0);
  for (std::size_t j = 0; j < n; ++j) a[j] = boundary(0);
  std::vector<double> b = a;
  for (long k = 0; k < iterations; ++k) {
    for (std::size_t i = 1; i + 1 < n; ++i)
      for (std::size_t j = 1; j + 1 < n; ++j)
        b[i * n + j] = 0.25 * (a[(i - 1) * n + j] + a[(i + 1) * n + j] + a[i * n + j - 1] + a[i * n + j + 1]);
    std::swap(a, b);
  }
  return a;
}

void Checksum::add(double value) {
  const auto fixed = static_cast<Wide>(std::ldexp(value, 100));  // exact: only the exponent changes
  Checksum c;
  c.low_ = static_cast<std::uint64_t>(fixed);
  c.high_ = static_cast<std::int64_t>(fixed >> 64);
  add(c);
}

double Checksum::value() const {
  const Wide fixed = (static_cast<Wide>(high_) << 64) | static_cast<Wide>(low_);
  return std::ldexp(static_cast<double>(fixed), -100);
}

}  // namespace stencil
