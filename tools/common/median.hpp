// The median of repeated measurements: the figure calibrate writes into a model, the applications
// charge a simulation (their kernels' typical times) and benchmarks report, robust to a stray slow run.
// Shared by the repository's own programs (tools/, apps/, bench/), not installed: it is no part of the
// DPS API.
//
//   double m = median(times);   // the middle one, or the mean of the middle two
#pragma once

#include <algorithm>
#include <vector>

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
