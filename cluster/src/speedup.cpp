#include "dps/cluster/speedup.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace dps::cluster {

SyntheticSpeedup::SyntheticSpeedup(std::size_t start, double seconds, double alpha) : start_(start), alpha_(alpha) {
  if (start == 0) throw std::invalid_argument("a malleable job needs a start size of at least 1");
  if (!(seconds > 0)) throw std::invalid_argument("a malleable job's iteration time must be positive");
  if (!(alpha > 0 && alpha <= 1)) throw std::invalid_argument("the speedup model's alpha must be in (0, 1]");
  seen_.emplace_back(start, seconds);
}

double SyntheticSpeedup::factor(std::size_t from, std::size_t to, double alpha) {
  const double p1 = static_cast<double>(from), p2 = static_cast<double>(to);
  return std::pow(p2 / p1, alpha * (p2 - p1) / p1);
}

double SyntheticSpeedup::at(std::size_t size) const {
  for (const auto& [p, t] : seen_)
    if (p == size) return t;
  throw std::out_of_range("the job has not run on " + std::to_string(size) + " nodes");
}

double SyntheticSpeedup::resize(std::size_t from, std::size_t to) {
  if (to == 0) throw std::invalid_argument("a job cannot shrink to no nodes");
  for (const auto& [p, t] : seen_)
    if (p == to) return t;
  const double base = at(from);
  const double t = to < start_ ? at(start_) * static_cast<double>(start_) / static_cast<double>(to)
                               : base / factor(from, to, alpha_);
  seen_.emplace_back(to, t);
  return t;
}

}  // namespace dps::cluster
