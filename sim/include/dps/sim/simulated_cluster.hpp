// SimulatedCluster: one simulated cluster, built from a model, that several applications may share,
// each a SimBackend on the virtual nodes it acquires (Schaeli, Gerlach & Hersch, "A simulator for
// adaptive parallel applications", §3-4). A handle: copies share the cluster.
//
//   dps::sim::SimulatedCluster cluster(dps::sim::ClusterModel::load("cluster.json"));
//   dps::Application a(std::make_unique<dps::sim::SimBackend>(cluster, dps::sim::SimOptions{.nodes = 4}));
//   dps::Application b(std::make_unique<dps::sim::SimBackend>(cluster, dps::sim::SimOptions{.nodes = 4}));
//   ... a's and b's calls share the cluster's cores and links ...
//   double predicted = cluster.now();
#pragma once

#include "dps/sim/model.hpp"

#include <cstddef>
#include <memory>

namespace dps::sim {

class Engine;  // the simulator's event loop and resources (not part of the installed API)

class SimulatedCluster {
 public:
  explicit SimulatedCluster(ClusterModel model);

  const ClusterModel& model() const noexcept;
  double now() const noexcept;            // simulated seconds
  std::size_t nodes() const noexcept;     // virtual nodes
  std::size_t free_nodes() const;         // not held by an application

  Engine& engine() const noexcept { return *engine_; }

 private:
  friend class SimBackend;  // which shares the engine
  std::shared_ptr<Engine> engine_;
};

}  // namespace dps::sim
