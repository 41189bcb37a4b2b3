// Threads packed per node over a job's nodes.
#include "dps/packed_nodes.hpp"

#include "dps/backend.hpp"

#include <algorithm>
#include <stdexcept>

namespace dps {

PackedNodes::PackedNodes(Application& app, std::size_t per_node) : app_(app), per_node_(per_node), nodes_(app.node_ids()) {
  if (per_node == 0) throw std::invalid_argument("a node holds at least one thread");
}

void PackedNodes::reserve(std::size_t threads) {
  if (const std::size_t needed = nodes_for(threads); needed > nodes_.size())
    for (NodeId node : app_.add_nodes(needed - nodes_.size())) nodes_.push_back(node);
}

void PackedNodes::release(std::size_t threads) {
  const NodeId here = app_.local_node();
  const std::vector<NodeId> live = app_.node_ids();
  while (app_.can_add_nodes() && nodes_.size() > std::max<std::size_t>(nodes_for(threads), 1) && nodes_.back() != here) {
    if (std::ranges::find(live, nodes_.back()) != live.end())  // else it failed: its threads were rebuilt elsewhere
      app_.remove_node(nodes_.back());
    nodes_.pop_back();
  }
}

}  // namespace dps
