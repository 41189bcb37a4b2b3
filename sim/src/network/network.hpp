// network::Model: how the transfers in their bandwidth phase share the links, and when each ends. The engine
// keeps the clock, the event queue and the CPUs; a network model keeps its flows, their rates and the
// links' usage, and schedules the ends of its links as events of the engine's queue.
//
//   auto net = network::make(model, nodes, usage, events);   // events: the engine's queue
//   net->start(7, 0, 1, 1e6, seq, now);     // flow 7's bytes begin to move at now
//   // ... the engine's queue reaches an event the model scheduled, added with key k:
//   net->end(net->due(k), now);             // that flow is over; the others' rates change
//
// Each model is a file of its own: the star's links with its two sharing rules (star.hpp: equal,
// max-min), and links along routes with the same two rules (routed.hpp), which a mesh's XY routes
// and Weissman's segments use (network.cpp).
#pragma once

#include "dps/sim/engine.hpp"
#include "dps/sim/model.hpp"
#include "dps/sim/usage.hpp"

#include <cstdint>
#include <memory>

namespace dps::sim::network {

// The engine's event queue, as a network model sees it: events it adds once (each known to it by a
// key), then schedules at (time, seq), moves, or cancels; when one comes, the engine asks due(key).
class Events {
 public:
  virtual std::uint32_t add(std::uint32_t key) = 0;
  virtual void schedule(std::uint32_t event, double time, std::uint64_t seq) = 0;
  virtual void cancel(std::uint32_t event) = 0;

 protected:
  ~Events() = default;
};

class Model {
 public:
  using FlowId = std::uint32_t;  // the engine's action that carries the transfer

  virtual ~Model() = default;

  // How long a message takes to reach `to` before its bytes flow: the latency of its route.
  virtual double latency(VNode from, VNode to) const = 0;
  // The flow's `bytes` begin to move at `now` (its latency is over); `seq` orders equal ends.
  virtual void start(FlowId flow, VNode from, VNode to, double bytes, std::uint64_t seq, double now) = 0;
  // The flow is over (due() named it); the others' rates change.
  virtual void end(FlowId flow, double now) = 0;

  // The flow that ends at the event added with `key`.
  virtual FlowId due(std::uint32_t key) const = 0;
};

std::unique_ptr<Model> make(const ClusterModel& model, std::size_t nodes, Usage& usage, Events& events);

}  // namespace dps::sim::network
