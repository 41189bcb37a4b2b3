// Routed: a network of links where each transfer follows a route of links, each of its own bandwidth
// and latency: a node's outgoing and incoming links, and the links its route crosses between them (a
// mesh's XY route between routers; a cluster's shared segment and the router between segments:
// network.cpp). How the flows on a link share it is the rule of a subclass:
// RoutedEqual (routed_equal.cpp: each of a link's n flows gets capacity / n, a flow the least of its
// shares) and RoutedMaxMin (routed_maxmin.cpp: max-min fairness, maxmin.hpp).
//
// Flows are bound to their bottleneck link (bound_links.hpp). A flow's route and its places in its
// links' lists are kept with it, and reused by the next flow of the same id (no allocation once warm).
#pragma once

#include "bound_links.hpp"
#include "maxmin.hpp"

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace dps::sim::network {

struct RoutedFlow : BoundFlow {
  std::vector<LinkId> route;      // its links, the source's outgoing first, the destination's incoming last
  std::vector<std::uint32_t> at;  // its place in each of those links' lists
  LinkId filed = kNone;           // equal: the bound link its buckets file it under
  std::vector<std::uint32_t> bucket, in_bucket;  // equal: per hop, its bucket there and its place in it
};

struct RoutedLink : BoundLink {
  struct Entry {
    Model::FlowId flow;
    std::uint32_t hop;  // the link's place in the flow's route
  };
  std::vector<Entry> flows;
};

class Routed : public BoundLinks<RoutedFlow, RoutedLink> {
 public:
  // Appends the inner links (numbered from 0) a transfer from one node's router to another's crosses.
  using Routes = std::function<void(VNode from, VNode to, std::vector<LinkId>& inner)>;
  // The latency of those links, when it is quicker to say than the route (a mesh's: hops × hop latency).
  using Delay = std::function<double(VNode from, VNode to)>;
  struct Inner {
    double capacity = 0;  // bytes per second
    double latency = 0;   // seconds a message spends crossing it
  };
  // The nodes' own links have their group's bandwidth, else the network's; `inner` are the others.
  Routed(const ClusterModel& cluster, std::size_t nodes, std::vector<Inner> inner, Routes routes, Usage& usage, Events& events,
         Delay delay = {});

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
  virtual void leaving(FlowId) {}  // before it is unbound and taken off its links' lists

  const NetworkModel& model_;

 private:
  void carried(const Flow& flow, double bytes) override {
    for (const LinkId l : {flow.route.front(), flow.route.back()})
      if (l != flow.bound) spread(flow, l, bytes);
  }

  Routes routes_;
  Delay delay_;
  std::vector<double> latency_;       // of each inner link
  mutable std::vector<LinkId> hops_;  // scratch: latency()'s route
};

class RoutedEqual : public Routed {
 public:
  using Routed::Routed;

 protected:
  void reshare(std::span<const LinkId> changed, FlowId joined) override;
  void leaving(FlowId id) override { unfile(id); }

 private:
  // The flows that cross `link` and are bound to `bound` (another link), kept so that a change of
  // either link's share finds just the flows it can move.
  struct Bucket {
    LinkId link = kNone, bound = kNone;
    std::vector<Entry> flows;
    double share = 0;                // its link's, as the bound link's heap has it
    std::uint32_t at_link = kNone;   // in its link's list
    std::uint32_t at_watch = kNone;  // in its bound link's heap
  };
  void reshare_buckets(std::span<const LinkId> changed, FlowId joined);
  LinkId least(FlowId id) const;     // the first link of its route with the least share
  void move(FlowId id, LinkId to);   // binds it there, and files it under that link
  void file(FlowId id, LinkId to);
  void unfile(FlowId id);
  std::uint32_t bucket(LinkId link, LinkId bound);  // found or made
  void release(std::uint32_t id);                   // an empty bucket
  auto by_share() const noexcept {  // a bound link's buckets, the one whose link has the least share first
    return [this](std::uint32_t a, std::uint32_t b) { return buckets_[a].share < buckets_[b].share; };
  }
  auto watch_at() noexcept {
    return [this](std::uint32_t b) -> std::uint32_t& { return buckets_[b].at_watch; };
  }

  std::vector<Bucket> buckets_;
  std::vector<std::uint32_t> free_;                  // buckets to reuse
  std::vector<std::vector<std::uint32_t>> on_link_;  // per link: the buckets of the flows crossing it
  std::vector<std::vector<std::uint32_t>> watch_;    // per link: the buckets bound to it, a heap by_share
};

class RoutedMaxMin : public Routed {
 public:
  using Routed::Routed;

 protected:
  void reshare(std::span<const LinkId> changed, FlowId joined) override;

 private:
  struct View;  // the routes as the solver sees them
  MaxMin solver_;
};

}  // namespace dps::sim::network
