// Time in a summary: how long two intervals share, and series of a run in equal bins, which a summary
// spreads steps, transfers, counters and allocation over.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

namespace dps::trace {

inline double overlap(double a0, double a1, double b0, double b1) {
  return std::max(0.0, std::min(a1, b1) - std::max(a0, b0));
}

// Adds `amount` spread evenly over [from, to) to the bins of width `bin` starting at `origin` (all of
// it to one bin when the interval is empty); what lies before the first bin or after the last goes to it.
inline void spread(std::vector<double>& bins, double origin, double bin, double from, double to, double amount) {
  const auto index = [&](double t) {
    const double i = std::floor((t - origin) / bin);
    return static_cast<std::size_t>(std::clamp(i, 0.0, static_cast<double>(bins.size() - 1)));
  };
  if (!(to > from)) {
    bins[index(from)] += amount;
    return;
  }
  const double rate = amount / (to - from);
  for (std::size_t i = index(from), last = index(to); i <= last; ++i) {
    const double lo = std::max(from, origin + bin * static_cast<double>(i));
    const double hi = i + 1 == bins.size() ? to : std::min(to, origin + bin * static_cast<double>(i + 1));
    if (hi > lo) bins[i] += rate * (hi - lo);
  }
}

}  // namespace dps::trace
