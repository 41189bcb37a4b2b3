// Profile: ReSHAPE's performance profiler for one job (Sudarsan, "ReSHAPE: A Framework for Dynamic Resizing of Parallel
// Applications", ch. 2 and 4): the iteration time it reported at each size, the configurations it grew through (it may
// shrink only back along them), whether its last growth paid, its sweet spot, and its expand potential: the slope of a
// fit over its last `window` sizes (a line through two, a quadratic through three or more), made
// dimensionless as an elasticity, −dT/dP · P/T at its size: 1 is linear speedup, 0 no gain.
//
//   dps::cluster::Profile p(35);
//   p.record(35, 8.0);  p.grew(45);  p.record(45, 7.55);
//   p.benefited();            // true: 7.55 < 8
//   *p.potential(3);          // 0.27 from the line through (35, 8) and (45, 7.55)
//   p.impact();               // 8 / 7.55 − 1: what shrinking back to 35 would cost
#pragma once

#include <cstddef>
#include <optional>
#include <utility>
#include <vector>

namespace dps::cluster {

class Profile {
 public:
  explicit Profile(std::size_t start) : configurations_{start} {}

  void record(std::size_t size, double seconds);  // an iteration time at a resize point
  void grew(std::size_t to) { configurations_.push_back(to); }
  void shrank();  // back to the configuration before the current one

  std::size_t start() const noexcept { return configurations_.front(); }
  std::size_t size() const noexcept { return configurations_.back(); }
  // The configuration before the current one; 0 at the start size.
  std::size_t previous() const noexcept {
    return configurations_.size() > 1 ? configurations_[configurations_.size() - 2] : 0;
  }
  std::optional<double> seconds(std::size_t size) const;  // the latest iteration time seen there

  // The last growth made the iteration faster (true before any growth: nothing says otherwise).
  bool benefited() const;
  // The relative slowdown of going back to the previous configuration (nullopt at the start size).
  std::optional<double> impact() const;
  // At the current size, from the last `window` sizes it ran on (nullopt with fewer than two).
  std::optional<double> potential(std::size_t window) const;

  std::size_t sweet_spot = 0;  // 0 until found: the size beyond which growing did not pay

 private:
  std::vector<std::size_t> configurations_;            // start, then each growth; a shrink pops
  std::vector<std::pair<std::size_t, double>> seen_;   // (size, latest seconds), in the order last run
};

// The slope at x of the least-squares polynomial of degree min(2, n − 1) through the points.
double fitted_slope(const std::vector<std::pair<double, double>>& points, double x);

}  // namespace dps::cluster
