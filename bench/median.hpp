// The median of a benchmark's repetitions: the figure benchmarks report, robust to a stray slow run.
//
//   double m = median(times);
#pragma once

#include <algorithm>
#include <vector>

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}
