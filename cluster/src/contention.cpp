#include "dps/cluster/contention.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>

namespace dps::cluster {

Contention link_contention(const Mesh& mesh, std::vector<std::pair<Mesh::Node, Mesh::Node>> pairs) {
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  Contention c;
  c.per_link.assign(mesh.links(), 0);
  std::vector<Mesh::Link> hops;
  for (const auto& [from, to] : pairs) {
    hops.clear();
    mesh.route(from, to, hops);
    for (const Mesh::Link l : hops) ++c.per_link[l];
  }
  for (std::size_t l = 0; l < c.per_link.size(); ++l)
    if (c.per_link[l] > c.max) c.max = c.per_link[l], c.hotspot = static_cast<Mesh::Link>(l);
  return c;
}

double network_bandwidth(std::size_t m, std::size_t n, double link_bandwidth, std::uint32_t max_contention) {
  if (max_contention == 0) throw std::invalid_argument("no pair crosses the network: its bandwidth is not limited by links");
  return static_cast<double>(m) * static_cast<double>(n) * link_bandwidth / max_contention;
}

Dispersal dispersal(const Mesh& mesh, const std::vector<Mesh::Node>& nodes) {
  if (nodes.empty()) throw std::invalid_argument("the dispersal of no nodes");
  Dispersal d;
  int min_x = mesh.width(), max_x = -1, min_y = mesh.height(), max_y = -1;
  std::set<int> columns, rows;
  for (const auto n : nodes) {
    const Mesh::Point p = mesh.at(n);
    min_x = std::min(min_x, p.x), max_x = std::max(max_x, p.x), min_y = std::min(min_y, p.y), max_y = std::max(max_y, p.y);
    columns.insert(p.x);
    rows.insert(p.y);
  }
  d.nodes_affected = static_cast<std::size_t>(max_x - min_x + 1) * static_cast<std::size_t>(max_y - min_y + 1);
  d.links_affected = static_cast<std::size_t>(max_x - min_x) * rows.size() + static_cast<std::size_t>(max_y - min_y) * columns.size();
  d.distance_from_center = SIZE_MAX;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    std::size_t from_here = 0;
    for (std::size_t j = 0; j < nodes.size(); ++j) {
      const int hops = mesh.distance(nodes[i], nodes[j]);
      from_here += static_cast<std::size_t>(hops);
      d.diameter = std::max(d.diameter, hops);
      if (j > i) d.summed_distance += static_cast<std::size_t>(hops);
    }
    d.distance_from_center = std::min(d.distance_from_center, from_here);
  }
  const double j = static_cast<double>(nodes.size());
  d.average_distance = nodes.size() > 1 ? 2.0 * static_cast<double>(d.summed_distance) / (j * (j - 1)) : 0.0;
  return d;
}

Contention all_to_all_contention(const Mesh& mesh, const std::vector<Mesh::Node>& nodes) {
  std::vector<std::pair<Mesh::Node, Mesh::Node>> pairs;
  pairs.reserve(nodes.size() * nodes.size());
  for (const auto from : nodes)
    for (const auto to : nodes)
      if (from != to) pairs.emplace_back(from, to);
  return link_contention(mesh, std::move(pairs));
}

long IoColumn::balance(const std::vector<Mesh::Node>& nodes) const {
  long b = 0;
  for (const auto n : nodes) b += compute_.at(n).y >= compute_.height() / 2 ? 1 : -1;
  return b;
}

Contention IoColumn::write_contention(const std::vector<Mesh::Node>& nodes) const {
  std::vector<std::pair<Mesh::Node, Mesh::Node>> pairs;
  pairs.reserve(nodes.size() * io_nodes());
  for (const auto n : nodes)
    for (std::size_t t = 0; t < io_nodes(); ++t) pairs.emplace_back(of(n), io(t));
  return link_contention(whole_, std::move(pairs));
}

}  // namespace dps::cluster
