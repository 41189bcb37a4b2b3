// Routed: a network of links where each transfer follows a route of links, each of its own bandwidth
// and latency: a node's outgoing and incoming links, and the links its route crosses between them (a
// mesh's XY route between routers; a cluster's shared segment and the router between segments:
// network.cpp). How the flows on a link share it is the rule of a subclass:
// RoutedEqual (routed_equal.cpp: each of a link's n flows gets capacity / n, a flow the least of its
// shares) and RoutedMaxMin (routed_maxmin.cpp: progressive filling).
//
// Flows are bound to their bottleneck link (bound_links.hpp). A flow's route and its places in its
// links' lists are kept with it, and reused by the next flow of the same id (no allocation once warm).
#pragma once

#include "bound_links.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace dps::sim::network {

struct RoutedFlow : BoundFlow {
  std::vector<LinkId> route;      // its links, the source's outgoing first, the destination's incoming last
  std::vector<std::uint32_t> at;  // its place in each of those links' lists
  std::uint32_t mark = 0;         // the rules' searches
  LinkId frozen = kNone;          // max-min: the link that fixed its rate
  double floor = 0;               // equal: at most the least share of its links but the bound one
};

struct RoutedLink : BoundLink {
  struct Entry {
    Model::FlowId flow;
    std::uint32_t hop;  // the link's place in the flow's route
  };
  std::vector<Entry> flows;
  std::uint32_t mark = 0;  // the rules' searches
  double left = 0;         // max-min: capacity not yet given
  std::uint32_t unfrozen = 0;
};

class Routed : public BoundLinks<RoutedFlow, RoutedLink> {
 public:
  // Appends the inner links (numbered from 0) a transfer from one node's router to another's crosses.
  using Routes = std::function<void(VNode from, VNode to, std::vector<LinkId>& inner)>;
  struct Inner {
    double capacity = 0;  // bytes per second
    double latency = 0;   // seconds a message spends crossing it
  };
  // The nodes' own links have their group's bandwidth, else the network's; `inner` are the others.
  Routed(const ClusterModel& cluster, std::size_t nodes, std::vector<Inner> inner, Routes routes, Usage& usage, Events& events);

  // The model's latency, and the latency of each inner link of the route.
  double latency(VNode from, VNode to) const override;
  void start(FlowId flow, VNode from, VNode to, double bytes, std::uint64_t seq, double now) override;
  void end(FlowId flow, double now) override;

 protected:
  using Flow = RoutedFlow;
  using Link = RoutedLink;
  using Entry = RoutedLink::Entry;

  // The links of `changed` gained or lost a flow (`joined`, or kNone): set the rates, rebind the flows
  // whose bottleneck moved.
  virtual void reshare(std::span<const LinkId> changed, FlowId joined) = 0;

  const NetworkModel& model_;

 private:
  void carried(const Flow& flow, double bytes) override {
    for (const LinkId l : {flow.route.front(), flow.route.back()})
      if (l != flow.bound) spread(flow, l, bytes);
  }

  Routes routes_;
  std::vector<double> latency_;       // of each inner link
  mutable std::vector<LinkId> hops_;  // scratch: latency()'s route
};

class RoutedEqual : public Routed {
 public:
  using Routed::Routed;

 protected:
  void reshare(std::span<const LinkId> changed, FlowId joined) override;

 private:
  void rescan(FlowId id);  // binds it to the least of its shares, its floor exact
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
