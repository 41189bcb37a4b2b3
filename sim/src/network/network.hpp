// network::Model: how the transfers in their bandwidth phase share the links, and when each ends. The engine
// keeps the clock, the events and the CPUs; a network model keeps its flows, their rates, the links'
// usage, and its own queue of ends, whose first the engine schedules as one event.
//
//   auto net = network::make(model, nodes, usage);
//   net->start(7, 0, 1, 1e6, seq, now);     // flow 7's bytes begin to move at now
//   Model::Next n = net->next();           // the first to end: n.flow at n.time
//   net->end(n.flow, n.time);                // it is over; the others' rates change
//
// Each model is a file of its own: the star's links with its two sharing rules (star.hpp: equal,
// max-min), and links along routes with the same two rules (routed.hpp), which a mesh's XY routes
// use (mesh.cpp).
#pragma once

#include "dps/sim/engine.hpp"
#include "dps/sim/model.hpp"
#include "dps/sim/usage.hpp"

#include <cstdint>
#include <limits>
#include <memory>

namespace dps::sim::network {

class Model {
 public:
  using FlowId = std::uint32_t;  // the engine's action that carries the transfer

  virtual ~Model() = default;

  // How long a message takes to reach `to` before its bytes flow: the latency of its route.
  virtual double latency(VNode from, VNode to) const = 0;
  // The flow's `bytes` begin to move at `now` (its latency is over); `seq` orders equal ends.
  virtual void start(FlowId flow, VNode from, VNode to, double bytes, std::uint64_t seq, double now) = 0;
  // The flow is over (it was next()); the others' rates change.
  virtual void end(FlowId flow, double now) = 0;

  struct Next {
    double time = std::numeric_limits<double>::infinity();  // infinity: no flow
    std::uint64_t seq = 0;
    FlowId flow = 0;
  };
  virtual Next next() const = 0;
};

std::unique_ptr<Model> make(const ClusterModel& model, std::size_t nodes, Usage& usage);

}  // namespace dps::sim::network
