// The network model a cluster model names.
#include "network.hpp"

#include "routed.hpp"
#include "star.hpp"

#include "dps/mesh.hpp"

#include <algorithm>

namespace dps::sim::network {

namespace {

std::unique_ptr<Model> routed(const ClusterModel& model, std::size_t nodes, std::vector<Routed::Inner> inner,
                              Routed::Routes routes, Usage& usage, Events& events, Routed::Delay delay = {}) {
  if (model.network.sharing == Sharing::Equal)
    return std::make_unique<RoutedEqual>(model, nodes, std::move(inner), std::move(routes), usage, events, std::move(delay));
  return std::make_unique<RoutedMaxMin>(model, nodes, std::move(inner), std::move(routes), usage, events, std::move(delay));
}

// A mesh's XY routes between the routers of the nodes (node v at router v, at routers[v], or one
// column east of it with I/O nodes west: model.hpp); its links are the inner ones.
std::unique_ptr<Model> mesh(const ClusterModel& cluster, std::size_t nodes, Usage& usage, Events& events) {
  const NetworkModel& model = cluster.network;
  const MeshShape& shape = model.mesh;
  const int columns = shape.width + (shape.io_column ? 1 : 0);
  const auto grid = std::make_shared<const Mesh>(columns, shape.height, shape.torus);
  // Each node's router, looked up by every route and latency.
  auto router = std::make_shared<std::vector<Mesh::Node>>(shape.routers.begin(), shape.routers.end());
  if (router->empty()) {
    const auto compute = static_cast<VNode>(shape.width) * static_cast<VNode>(shape.height);
    for (VNode v = 0; v < nodes; ++v)
      router->push_back(!shape.io_column ? v
                        : v < compute    ? (v / static_cast<VNode>(shape.width)) * static_cast<VNode>(columns) + v % static_cast<VNode>(shape.width) + 1
                                         : (v - compute) * static_cast<VNode>(columns));
  }
  Routed::Routes routes = [grid, router](VNode from, VNode to, std::vector<LinkId>& inner) {
    grid->route((*router)[from], (*router)[to], inner);
  };
  Routed::Delay delay = [grid, router, hop = shape.hop_latency](VNode from, VNode to) {
    return hop * grid->distance((*router)[from], (*router)[to]);
  };
  const double capacity = shape.link_bandwidth > 0 ? shape.link_bandwidth : model.bandwidth;
  return routed(cluster, nodes, std::vector<Routed::Inner>(grid->links(), {capacity, shape.hop_latency}), std::move(routes), usage,
                events, std::move(delay));
}

// Weissman's metasystem: each segment is an inner link (the groups that name one share it, each other
// group has one of its own); a message between segments crosses its source's, the router (the inner
// link after them, or the one of that pair of segments), and its destination's.
std::unique_ptr<Model> segments(const ClusterModel& cluster, std::size_t nodes, Usage& usage, Events& events) {
  const NetworkModel& model = cluster.network;
  std::uint32_t named = 0;
  for (const NodeGroup& g : cluster.groups) named = std::max(named, static_cast<std::uint32_t>(g.segment + 1));
  std::vector<std::uint32_t> group_of;
  std::uint32_t next = named;
  for (const NodeGroup& g : cluster.groups)
    group_of.insert(group_of.end(), g.count, g.segment >= 0 ? static_cast<std::uint32_t>(g.segment) : next++);
  std::vector<Routed::Inner> inner(next, {model.segments.bandwidth > 0 ? model.segments.bandwidth : model.bandwidth, 0.0});
  const auto segments = static_cast<LinkId>(inner.size());
  const bool per_pair = model.segments.router_per_pair;
  inner.resize(segments + (per_pair ? segments * (segments - 1) / 2 : 1), {model.segments.router_bandwidth, model.segments.router_latency});
  Routed::Routes routes = [group_of = std::move(group_of), segments, per_pair](VNode from, VNode to, std::vector<LinkId>& links) {
    const LinkId a = group_of[from], b = group_of[to];
    links.push_back(a);
    if (a == b) return;
    const LinkId low = std::min(a, b), high = std::max(a, b);  // pair (low, high): after the pairs of the segments below low
    links.push_back(segments + (per_pair ? low * (2 * segments - low - 1) / 2 + (high - low - 1) : 0));
    links.push_back(b);
  };
  return routed(cluster, nodes, std::move(inner), std::move(routes), usage, events);
}

}  // namespace

std::unique_ptr<Model> make(const ClusterModel& model, std::size_t nodes, Usage& usage, Events& events) {
  if (model.network.topology == Topology::Mesh) return mesh(model, nodes, usage, events);
  if (model.network.topology == Topology::Segments) return segments(model, nodes, usage, events);
  if (model.network.sharing == Sharing::Equal) return std::make_unique<StarEqual>(model.network, nodes, usage, events);
  return std::make_unique<StarMaxMin>(model.network, nodes, usage, events);
}

}  // namespace dps::sim::network
