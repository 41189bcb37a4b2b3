// BoundLinks: what the network models share. A flow goes at the rate of its bottleneck, the link it
// is bound to; every flow bound to a link goes at that link's rate, so the link keeps one clock (the
// bytes each of them has moved) and one event in the engine's queue (its first flow's end), and a
// change of its rate costs O(1) whatever the number of its flows. A model's sharing rule only says
// which link each flow is bound to, and at what rate each link's bound flows go.
//
//   class Star : public BoundLinks<StarFlow, StarLink> { ... rebind(flow, link); ... settle_links(); };
#pragma once

#include "../indexed_heap.hpp"
#include "network.hpp"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace dps::sim::network {

using LinkId = std::uint32_t;  // 2 · node: its outgoing link, 2 · node + 1: its incoming one; then a model's own
inline constexpr std::uint32_t kNone = ~0u;

struct BoundFlow {
  double remaining = 0;  // bytes, as of when it was last unbound
  std::uint64_t seq = 0;
  LinkId bound = kNone;
  std::uint32_t bound_at = kNone;  // in that link's heap
  double vfinish = 0;              // it ends when that link's clock reads this
  double since = 0, vsince = 0;    // when it was bound there, and that link's clock then
};

struct BoundLink {
  double capacity = 0;                // bytes per second
  std::vector<Model::FlowId> bound;   // heap by (vfinish, seq): the flows going at `rate`
  double rate = 0;                    // bytes per second of each bound flow
  double clock = 0, clock_at = 0;     // bytes a bound flow has moved, as of clock_at
  std::uint32_t event = 0;            // in the engine's queue: when its first bound flow ends
  bool scheduled = false;
  bool dirty = false;                 // its event and usage to bring up to date
};

template <class Flow, class Link>
class BoundLinks : public Model {
 public:
  FlowId due(std::uint32_t link) const override { return links_[link].bound.front(); }

 protected:
  // `links` links, the first 2 · nodes of them the nodes' own (their usage is recorded).
  BoundLinks(std::size_t nodes, std::size_t links, Usage& usage, Events& events)
      : usage_(usage), events_(events), node_links_(2 * nodes), links_(links) {
    for (LinkId l = 0; l < links_.size(); ++l) links_[l].event = events_.add(l);
  }

  // The bytes a flow moved while bound to another link crossed its other links too: a model records
  // them on the nodes' links among those.
  virtual void carried(const Flow& flow, double bytes) = 0;

  void advance(LinkId l) {  // its clock to now; its event and usage to redo
    Link& link = links_[l];
    link.clock = clock_now(link);
    link.clock_at = now_;
    if (link.dirty) return;
    link.dirty = true;
    dirty_.push_back(l);
  }

  void rebind(FlowId id, LinkId l) {  // the flow goes at this link's rate from now on
    if (flows_[id].bound == l) return;
    if (flows_[id].bound != kNone) unbind(id);
    advance(l);
    bind(id, l);
  }

  // A sharing rule's solution over some links and flows (maxmin.hpp's): each link's rate from now on,
  // each flow bound to the link that fixed its rate.
  template <class Solution>
  void take(const Solution& solution) {
    for (const auto& l : solution.links()) {
      advance(l.id);  // its clock at the old rate first
      links_[l.id].rate = l.rate;
    }
    for (const FlowId f : solution.flows()) rebind(f, solution.bound(f));
  }

  // The flow leaves its link with what it has left in `remaining`.
  void unbind(FlowId id) {
    Flow& f = flows_[id];
    Link& link = links_[f.bound];
    advance(f.bound);
    carried(f, link.clock - f.vsince);
    f.remaining = std::max(0.0, f.vfinish - link.clock);
    heap::remove(link.bound, f.bound_at, by_vfinish(), bound_at());
    f.bound = kNone;
  }

  // Each changed link: its usage from now on (a node's links: its bound flows; the others' bytes are
  // recorded when they leave), and when its first bound flow ends.
  void settle_links() {
    for (LinkId l : dirty_) {
      Link& link = links_[l];
      link.dirty = false;
      if (l < node_links_)
        usage_.set(l / 2, l % 2 ? Usage::LinkIn : Usage::LinkOut, now_,
                   static_cast<double>(link.bound.size()) * link.rate / link.capacity);
      if (link.bound.empty() || link.rate <= 0) {
        if (link.bound.empty()) link.clock = 0;  // keeps the clock's numbers small
        if (link.scheduled) events_.cancel(link.event), link.scheduled = false;
        continue;
      }
      const Flow& first = flows_[link.bound.front()];
      events_.schedule(link.event, now_ + std::max(0.0, first.vfinish - link.clock) / link.rate, first.seq);
      link.scheduled = true;
    }
    dirty_.clear();
  }

  // Records `bytes` spread evenly over the time the flow was bound, on a node's link.
  void spread(const Flow& flow, LinkId node_link, double bytes) {
    usage_.spread(node_link / 2, node_link % 2 ? Usage::LinkIn : Usage::LinkOut, flow.since, now_,
                  bytes / links_[node_link].capacity);
  }

  Usage& usage_;
  Events& events_;
  std::size_t node_links_;
  double now_ = 0;
  std::vector<Flow> flows_;  // by FlowId
  std::vector<Link> links_;

 private:
  double clock_now(const Link& link) const noexcept { return link.clock + link.rate * (now_ - link.clock_at); }
  void bind(FlowId id, LinkId l) {
    Flow& f = flows_[id];
    Link& link = links_[l];
    f.bound = l;
    f.since = now_;
    f.vsince = link.clock;
    f.vfinish = link.clock + f.remaining;
    heap::insert(link.bound, id, by_vfinish(), bound_at());
  }
  auto by_vfinish() const noexcept {  // a link's bound flows, first to end first
    return [this](FlowId x, FlowId y) {
      const Flow &p = flows_[x], &q = flows_[y];
      return p.vfinish < q.vfinish || (p.vfinish == q.vfinish && p.seq < q.seq);
    };
  }
  auto bound_at() noexcept {
    return [this](FlowId f) -> std::uint32_t& { return flows_[f].bound_at; };
  }

  std::vector<LinkId> dirty_;
};

}  // namespace dps::sim::network
