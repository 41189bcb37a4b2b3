// The network model a cluster model names.
#include "network.hpp"

#include "routed.hpp"
#include "star.hpp"

#include "dps/sim/mesh.hpp"

namespace dps::sim::network {

namespace {

// A mesh's XY routes between the routers of the nodes (node v at router v); its links are the inner ones.
std::unique_ptr<Model> mesh(const NetworkModel& model, std::size_t nodes, Usage& usage, Events& events) {
  const MeshShape& shape = model.mesh;
  const auto grid = std::make_shared<const Mesh>(shape.width, shape.height, shape.torus);
  Routed::Routes routes = [grid](VNode from, VNode to, std::vector<LinkId>& inner) { grid->route(from, to, inner); };
  const double capacity = shape.link_bandwidth > 0 ? shape.link_bandwidth : model.bandwidth;
  if (model.sharing == Sharing::Equal)
    return std::make_unique<RoutedEqual>(model, nodes, grid->links(), capacity, std::move(routes), usage, events);
  return std::make_unique<RoutedMaxMin>(model, nodes, grid->links(), capacity, std::move(routes), usage, events);
}

}  // namespace

std::unique_ptr<Model> make(const ClusterModel& model, std::size_t nodes, Usage& usage, Events& events) {
  if (model.network.topology == Topology::Mesh) return mesh(model.network, nodes, usage, events);
  if (model.network.sharing == Sharing::Equal) return std::make_unique<StarEqual>(model.network, nodes, usage, events);
  return std::make_unique<StarMaxMin>(model.network, nodes, usage, events);
}

}  // namespace dps::sim::network
