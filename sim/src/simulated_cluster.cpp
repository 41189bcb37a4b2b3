// The public handle of a simulated cluster: its engine, shared by the applications that run on it.
#include "dps/sim/simulated_cluster.hpp"

#include "dps/sim/engine.hpp"

namespace dps::sim {

SimulatedCluster::SimulatedCluster(ClusterModel model) : engine_(std::make_shared<Engine>(std::move(model))) {}

const ClusterModel& SimulatedCluster::model() const noexcept { return engine_->model(); }
double SimulatedCluster::now() const noexcept { return engine_->now(); }
std::size_t SimulatedCluster::nodes() const noexcept { return engine_->size(); }

std::size_t SimulatedCluster::free_nodes() const {
  std::size_t free = 0;
  for (VNode node = 0; node < engine_->size(); ++node) free += engine_->owner(node) == nullptr;
  return free;
}

}  // namespace dps::sim
