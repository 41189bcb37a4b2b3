// Routed: a network of links where each transfer follows a route of links, each of its own bandwidth:
// a node's outgoing and incoming links to its router, and the links between routers that its route
// crosses (a mesh's XY route: mesh.cpp). How the flows on a link share it is the rule of a subclass:
// RoutedEqual (routed_equal.cpp: each of a link's n flows gets capacity / n, a flow the least of its
// shares) and RoutedMaxMin (routed_maxmin.cpp: progressive filling).
//
// As in the star, a flow goes at the rate of its bottleneck, the link it is bound to, whose clock
// counts the bytes its bound flows have moved; a flow's route and its places in its links' lists are
// kept with it, and reused by the next flow of the same id (no allocation once warm).
#pragma once

#include "network.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace dps::sim::network {

class Routed : public Model {
 public:
  using LinkId = std::uint32_t;  // 2 · node: its outgoing link, 2 · node + 1: its incoming one; then the rest

  // Appends the inner links (numbered from 0) a transfer from one node's router to another's crosses.
  using Routes = std::function<void(VNode from, VNode to, std::vector<LinkId>& inner)>;
  // `inner` links beyond the nodes' own, of `inner_capacity` bytes per second each.
  Routed(const NetworkModel& model, std::size_t nodes, std::size_t inner, double inner_capacity, Routes routes, Usage& usage,
         Events& events);

  // The model's latency, and its hop latency for each inner link of the route.
  double latency(VNode from, VNode to) const override;
  void start(FlowId flow, VNode from, VNode to, double bytes, std::uint64_t seq, double now) override;
  void end(FlowId flow, double now) override;
  FlowId due(std::uint32_t link) const override { return links_[link].bound.front(); }

 protected:
  static constexpr std::uint32_t kNone = ~0u;

  struct Flow {
    std::vector<LinkId> route;      // its links, the source's outgoing first, the destination's incoming last
    std::vector<std::uint32_t> at;  // its place in each of those links' lists
    double remaining = 0;
    std::uint64_t seq = 0;
    LinkId bound = kNone;
    std::uint32_t bound_at = kNone;
    double vfinish = 0, since = 0, vsince = 0;
    std::uint32_t mark = 0;  // the rules' searches
    LinkId frozen = kNone;   // max-min: the link that fixed its rate
  };
  struct Entry {
    FlowId flow;
    std::uint32_t hop;  // the link's place in the flow's route
  };
  struct Link {
    double capacity = 0;
    std::vector<Entry> flows;
    std::vector<FlowId> bound;  // heap by (vfinish, seq)
    double rate = 0, clock = 0, clock_at = 0;
    std::uint32_t event = 0;  // in the engine's queue: when its first bound flow ends
    bool scheduled = false;
    bool dirty = false;
    std::uint32_t mark = 0;  // the rules' searches
    double left = 0;         // max-min: capacity not yet given
    std::uint32_t unfrozen = 0;
  };

  // The links of `changed` gained or lost a flow (`joined`, or kNone): set the rates, rebind the flows
  // whose bottleneck moved.
  virtual void reshare(std::span<const LinkId> changed, FlowId joined) = 0;

  static LinkId out_link(VNode v) noexcept { return 2 * v; }
  static LinkId in_link(VNode v) noexcept { return 2 * v + 1; }
  void advance(LinkId link);
  void rebind(FlowId id, LinkId link);

  const NetworkModel& model_;
  Usage& usage_;
  std::size_t nodes_;
  double now_ = 0;
  std::vector<Flow> flows_;
  std::vector<Link> links_;

 private:
  double clock_now(const Link& link) const noexcept { return link.clock + link.rate * (now_ - link.clock_at); }
  void bind(FlowId id, LinkId link);
  void unbind(FlowId id);
  void settle_links();
  auto by_vfinish() const noexcept {
    return [this](FlowId x, FlowId y) {
      const Flow &p = flows_[x], &q = flows_[y];
      return p.vfinish < q.vfinish || (p.vfinish == q.vfinish && p.seq < q.seq);
    };
  }
  auto bound_at() noexcept {
    return [this](FlowId f) -> std::uint32_t& { return flows_[f].bound_at; };
  }

  Routes routes_;
  Events& events_;
  std::vector<LinkId> dirty_;
  std::vector<LinkId> changed_;  // scratch: the route of the flow that came or went
  mutable std::vector<LinkId> hops_;  // scratch: latency()'s route
};

class RoutedEqual : public Routed {
 public:
  using Routed::Routed;

 protected:
  void reshare(std::span<const LinkId> changed, FlowId joined) override;

 private:
  LinkId bottleneck(const Flow& flow) const;
  std::uint32_t epoch_ = 0;
};

class RoutedMaxMin : public Routed {
 public:
  using Routed::Routed;

 protected:
  void reshare(std::span<const LinkId> changed, FlowId joined) override;

 private:
  std::uint32_t epoch_ = 0;
  std::vector<LinkId> component_links_;
  std::vector<FlowId> component_flows_;
  std::vector<std::pair<double, LinkId>> levels_;  // (share, link) min-heap
};

}  // namespace dps::sim::network
