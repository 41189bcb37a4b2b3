#include "dps/cluster/profiler.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dps::cluster {

void Profile::record(std::size_t size, double seconds) {
  const auto at = std::find_if(seen_.begin(), seen_.end(), [&](const auto& s) { return s.first == size; });
  if (at != seen_.end()) seen_.erase(at);
  seen_.emplace_back(size, seconds);  // the latest last: the fit's window is the sizes run last
}

void Profile::shrank() {
  if (configurations_.size() < 2) throw std::logic_error("a job cannot shrink below its start size");
  configurations_.pop_back();
}

std::optional<double> Profile::seconds(std::size_t size) const {
  for (const auto& [p, t] : seen_)
    if (p == size) return t;
  return std::nullopt;
}

bool Profile::benefited() const {
  if (configurations_.size() < 2) return true;
  const auto now = seconds(size()), before = seconds(previous());
  return !now || !before || *now < *before;
}

std::optional<double> Profile::impact() const {
  if (configurations_.size() < 2) return std::nullopt;
  const auto now = seconds(size()), before = seconds(previous());
  if (!now || !before) return std::nullopt;
  return *before / *now - 1;
}

std::optional<double> Profile::potential(std::size_t window) const {
  const auto now = seconds(size());
  if (!now || seen_.size() < 2 || window < 2) return std::nullopt;
  std::vector<std::pair<double, double>> points;
  for (std::size_t i = seen_.size() - std::min(window, seen_.size()); i < seen_.size(); ++i)
    points.emplace_back(static_cast<double>(seen_[i].first), seen_[i].second);
  const double p = static_cast<double>(size());
  return -fitted_slope(points, p) * p / *now;
}

double fitted_slope(const std::vector<std::pair<double, double>>& points, double x) {
  const std::size_t n = points.size();
  if (n < 2) throw std::invalid_argument("a slope needs two points");
  // Centre and scale x for a well-conditioned system: u = (x − mean) / spread.
  double mean = 0;
  for (const auto& [px, py] : points) mean += px;
  mean /= static_cast<double>(n);
  double spread = 0;
  for (const auto& [px, py] : points) spread = std::max(spread, std::fabs(px - mean));
  if (spread == 0) return 0;
  const std::size_t terms = std::min<std::size_t>(3, n);  // coefficients: 1, u, u²
  double a[3][4] = {};  // normal equations, augmented
  for (const auto& [px, py] : points) {
    const double u = (px - mean) / spread;
    const double powers[3] = {1, u, u * u};
    for (std::size_t r = 0; r < terms; ++r) {
      for (std::size_t c = 0; c < terms; ++c) a[r][c] += powers[r] * powers[c];
      a[r][3] += powers[r] * py;
    }
  }
  for (std::size_t c = 0; c < terms; ++c) {  // Gaussian elimination with partial pivoting
    std::size_t pivot = c;
    for (std::size_t r = c + 1; r < terms; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    std::swap(a[c], a[pivot]);
    if (std::fabs(a[c][c]) < 1e-12) return 0;  // repeated sizes: no slope to speak of
    for (std::size_t r = 0; r < terms; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < 4; ++k) a[r][k] -= f * a[c][k];
    }
  }
  const double b = a[1][3] / a[1][1];
  const double q = terms == 3 ? a[2][3] / a[2][2] : 0;
  const double u = (x - mean) / spread;
  return (b + 2 * q * u) / spread;
}

}  // namespace dps::cluster
