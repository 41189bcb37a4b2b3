// Weissman's decomposition for fixed processors: x_i + y_i·A_i = T for every part, ΣA_i = N, so
// T = (N + Σ x_i/y_i) / Σ 1/y_i and A_i = (T − x_i) / y_i.
#include "dps/partition.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace dps {

std::vector<std::size_t> partition_by_cost(std::size_t units, std::span<const double> fixed,
                                           std::span<const double> per_unit) {
  const std::size_t parts = per_unit.size();
  if (parts == 0) throw std::invalid_argument("dps::partition: no parts");
  if (fixed.size() != parts) throw std::invalid_argument("dps::partition: a fixed cost per part");
  for (std::size_t i = 0; i < parts; ++i)
    if (!(per_unit[i] > 0) || !std::isfinite(per_unit[i]) || !(fixed[i] >= 0) || !std::isfinite(fixed[i]))
      throw std::invalid_argument("dps::partition: part " + std::to_string(i) +
                                  " needs a positive cost per unit and a fixed cost of 0 or more");
  // Parts whose fixed cost exceeds the balanced time drop out, and the others are balanced again.
  std::vector<bool> active(parts, true);
  std::vector<double> share(parts, 0);
  for (bool changed = true; changed;) {
    double inverse = 0, weighted = static_cast<double>(units);
    for (std::size_t i = 0; i < parts; ++i)
      if (active[i]) inverse += 1 / per_unit[i], weighted += fixed[i] / per_unit[i];
    const double time = weighted / inverse;
    changed = false;
    for (std::size_t i = 0; i < parts; ++i) {
      share[i] = active[i] ? (time - fixed[i]) / per_unit[i] : 0;
      if (share[i] < 0) active[i] = false, changed = true;
    }
  }
  std::vector<std::size_t> counts(parts);
  long left = static_cast<long>(units);
  for (std::size_t i = 0; i < parts; ++i) left -= static_cast<long>(counts[i] = static_cast<std::size_t>(std::lround(share[i])));
  // Fastest first: the lowest cost per unit, then the lowest index.
  std::vector<std::size_t> order(parts);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return per_unit[a] < per_unit[b]; });
  for (std::size_t k = 0; left != 0; k = (k + 1) % parts) {
    const std::size_t i = order[k];
    if (left > 0) ++counts[i], --left;
    else if (counts[i] > 0) --counts[i], ++left;
  }
  return counts;
}

std::vector<std::size_t> partition_by_speed(std::size_t units, std::span<const double> speeds) {
  std::vector<double> fixed(speeds.size(), 0), per_unit(speeds.size());
  for (std::size_t i = 0; i < speeds.size(); ++i) {
    if (!(speeds[i] > 0) || !std::isfinite(speeds[i]))
      throw std::invalid_argument("dps::partition: part " + std::to_string(i) + " needs a positive speed");
    per_unit[i] = 1 / speeds[i];
  }
  return partition_by_cost(units, fixed, per_unit);
}

}  // namespace dps
