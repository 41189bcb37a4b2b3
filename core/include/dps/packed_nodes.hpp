// The nodes of a job whose threads are packed `per_node` to a node: thread i lives on the
// (i / per_node)-th of them. Growing starts the nodes the new threads need, together; shrinking gives
// back those no thread uses any more (never node 0, and never nodes srun or mpirun started: they
// could not be had again). Both applications that resize (stencil, tsp) place their threads so.
//
//   dps::PackedNodes nodes(app, 2);                   // starts on app's nodes, two threads on each
//   nodes.reserve(6);                                  // 3 nodes for 6 threads, added if missing
//   for (std::size_t i = workers.size(); i < 6; ++i) workers.add_on(nodes.node_of(i));
//   ... remove threads down to 3 ...
//   nodes.release(3);                                  // the third node goes back
#pragma once

#include "dps/application.hpp"

#include <cstddef>
#include <vector>

namespace dps {

class PackedNodes {
 public:
  PackedNodes(Application& app, std::size_t per_node);
  NodeId node_of(std::size_t thread) const { return nodes_.at(thread / per_node_); }
  std::size_t nodes_for(std::size_t threads) const { return (threads + per_node_ - 1) / per_node_; }
  const std::vector<NodeId>& nodes() const noexcept { return nodes_; }
  // Adds the nodes `threads` threads need (throws std::runtime_error where none can be added).
  void reserve(std::size_t threads);
  // Gives back the nodes past what `threads` threads need, where the backend could add them again.
  void release(std::size_t threads);

 private:
  Application& app_;
  std::size_t per_node_;
  std::vector<NodeId> nodes_;
};

}  // namespace dps
