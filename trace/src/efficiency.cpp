// Allocation: the intervals during which each node is allocated, and the core-seconds they hold.
#include "dps/trace/efficiency.hpp"

#include "bins.hpp"

#include <algorithm>

namespace dps::trace {

void Allocation::threads(std::uint32_t node, int delta, double time) {
  Node& n = nodes_[node];
  if (n.left >= 0) return;
  if (n.threads == 0 && delta > 0) n.since = time;
  n.threads = std::max(0, n.threads + delta);
  if (n.threads == 0 && delta < 0) n.held.emplace_back(n.since, time);
}

void Allocation::always(std::uint32_t node, double time) { nodes_[node].always = time; }

void Allocation::leave(std::uint32_t node, double time) {
  Node& n = nodes_[node];
  if (n.left >= 0) return;
  if (n.threads > 0) n.held.emplace_back(n.since, time);
  n.threads = 0;
  n.left = time;
}

template <class F>
void Allocation::intervals(const Node& n, double until, F each) {
  if (n.always >= 0) {  // its threads do not matter
    each(n.always, n.left >= 0 ? std::min(n.left, until) : until);
    return;
  }
  for (const auto& [from, to] : n.held) each(from, to);
  if (n.threads > 0) each(n.since, until);
}

std::vector<std::uint32_t> Allocation::allocated_nodes() const {
  std::vector<std::uint32_t> out;
  for (const auto& [id, n] : nodes_)
    if (n.always >= 0 || n.threads > 0 || !n.held.empty()) out.push_back(id);
  return out;
}

double Allocation::seconds(std::uint32_t node, double until) const {
  double total = 0;
  if (auto it = nodes_.find(node); it != nodes_.end())
    intervals(it->second, until, [&](double from, double to) { total += to - from; });
  return total;
}

double Allocation::seconds(std::uint32_t node, double from, double to) const {
  double total = 0;
  if (auto it = nodes_.find(node); it != nodes_.end())
    intervals(it->second, to, [&](double a, double b) { total += overlap(a, b, from, to); });
  return total;
}

double Allocation::core_seconds(double from, double to) const {
  double total = 0;
  for (const auto& entry : nodes_) {  // not a structured binding: clang 14 cannot capture one
    const auto& n = entry.second;
    intervals(n, to, [&](double a, double b) { total += n.cores * overlap(a, b, from, to); });
  }
  return total;
}

void Allocation::add_to_bins(std::vector<double>& bins, double origin, double width, double until) const {
  if (bins.empty()) return;
  for (const auto& entry : nodes_) {
    const auto& n = entry.second;
    intervals(n, until, [&](double from, double to) { spread(bins, origin, width, from, to, n.cores * (to - from)); });
  }
}

std::vector<double> efficiency_over_time(std::span<const double> useful, std::span<const double> allocated) {
  std::vector<double> out(allocated.size());
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = efficiency(i < useful.size() ? useful[i] : 0.0, allocated[i]);
  return out;
}

}  // namespace dps::trace
