// Star: the full-duplex star of seed 004 §4. Each node has an outgoing and an incoming link to one
// switch, of the model's bandwidth; a transfer crosses its source's outgoing and its destination's
// incoming link. How the flows on a link share it is the rule of a subclass, each in its own file:
// StarEqual (star_equal.cpp: each of n flows gets bandwidth / n, seed 004) and StarMaxMin
// (star_maxmin.cpp: max-min fairness by progressive filling, as SimGrid).
//
// A flow goes at the rate of its bottleneck, the link it is bound to; every flow bound to a link goes
// at that link's rate, so the link keeps one clock (bytes each of them has moved) and one end (its
// first flow's), and a change of its rate costs O(1) whatever the number of its flows. Only the
// flows whose bottleneck moves to their other link are touched.
#pragma once

#include "network.hpp"

#include <cstdint>
#include <utility>
#include <vector>

namespace dps::sim::network {

class Star : public Model {
 public:
  Star(const NetworkModel& model, std::size_t nodes, Usage& usage, Events& events);

  double latency(VNode, VNode) const override { return model_.latency; }
  void start(FlowId flow, VNode from, VNode to, double bytes, std::uint64_t seq, double now) override;
  void end(FlowId flow, double now) override;
  FlowId due(std::uint32_t link) const override { return links_[link].bound.front(); }

 protected:
  using LinkId = std::uint32_t;  // 2 * node: its outgoing link; 2 * node + 1: its incoming link
  static constexpr std::uint32_t kNone = ~0u;
  // A link with more flows than this finds the flows whose bottleneck may change among those whose
  // other link is as busy (`near`), instead of looking at all of them.
  static constexpr std::uint32_t kNear = 8;

  struct Flow {
    VNode from = 0, to = 0;
    double remaining = 0;            // bytes, as of when it was last unbound
    std::uint64_t seq = 0;
    std::uint32_t at_from = kNone, at_to = kNone;  // in its links' lists
    // The flow ends when the clock of the link it is bound to reads `vfinish`.
    LinkId bound = kNone;
    std::uint32_t bound_at = kNone;  // in that link's heap
    double vfinish = 0;
    double since = 0, vsince = 0;    // when it was bound there, and that link's clock then
    std::uint32_t mark = 0, local = 0;  // max-min: component search
  };

  struct Link {
    // The flows, by how busy their other link is: [0, near) it has >= kNear flows, [near, multi) 2
    // to kNear - 1, [multi, size) this flow alone.
    std::vector<FlowId> flows;
    std::uint32_t near = 0, multi = 0;
    std::vector<FlowId> bound;  // heap by (vfinish, seq): the flows going at `rate`
    double rate = 0;            // bytes per second of each bound flow
    double clock = 0, clock_at = 0;  // bytes a bound flow has moved, as of clock_at
    std::uint32_t event = 0;    // in the engine's queue: when its first bound flow ends
    bool scheduled = false;
    bool dirty = false;         // its end and usage to bring up to date
    std::uint32_t mark = 0, local = 0;  // max-min: component search
  };

  // The two links' flow counts changed (`joined` is the flow that joined both, if one did): the
  // sharing rule sets their rates, and binds the flows whose bottleneck moved.
  virtual void reshare(LinkId out, LinkId in, FlowId joined) = 0;

  static LinkId out_link(VNode v) noexcept { return 2 * v; }
  static LinkId in_link(VNode v) noexcept { return 2 * v + 1; }
  LinkId partner(const Flow& flow, LinkId link) const noexcept {
    return link == out_link(flow.from) ? in_link(flow.to) : out_link(flow.from);
  }
  bool alone(LinkId link) const noexcept { return links_[link].flows.size() == 1; }
  // A flow that is alone on one of its links has its bottleneck on the other (on its outgoing link
  // when alone on both): max-min binds it there and never searches it.
  bool leaf(const Flow& flow) const noexcept { return alone(out_link(flow.from)) || alone(in_link(flow.to)); }
  LinkId leaf_side(const Flow& flow) const noexcept {
    return alone(in_link(flow.to)) ? out_link(flow.from) : in_link(flow.to);
  }
  void advance(LinkId link);             // its clock to now; its end and usage to redo
  void rebind(FlowId id, LinkId link);   // the flow goes at this link's rate from now on

  const NetworkModel& model_;
  Usage& usage_;
  double now_ = 0;
  std::vector<Flow> flows_;  // by FlowId
  std::vector<Link> links_;

 private:
  double clock_now(const Link& link) const noexcept { return link.clock + link.rate * (now_ - link.clock_at); }
  std::uint32_t& position(FlowId flow, LinkId link) noexcept;  // in the link's list
  void list_leave(LinkId link, FlowId id);
  void place(LinkId link, FlowId id, std::uint32_t Link::*end, bool inside);
  void set_near(LinkId link, FlowId id, bool near) { place(link, id, &Link::near, near); }
  void set_multi(LinkId link, FlowId id, bool multi) { place(link, id, &Link::multi, multi); }
  void recount(LinkId link, std::size_t before);  // its flows' partners see its new count
  void bind(FlowId id, LinkId link);
  void unbind(FlowId id);                // `remaining` says what it has left
  void settle_links();                   // ends and usage of the links that changed
  auto by_vfinish() const noexcept {  // a link's bound flows, first to end first
    return [this](FlowId x, FlowId y) {
      const Flow &p = flows_[x], &q = flows_[y];
      return p.vfinish < q.vfinish || (p.vfinish == q.vfinish && p.seq < q.seq);
    };
  }
  auto bound_at() noexcept {
    return [this](FlowId f) -> std::uint32_t& { return flows_[f].bound_at; };
  }

  Events& events_;
  std::vector<LinkId> dirty_;
};

class StarEqual final : public Star {
 public:
  using Star::Star;

 private:
  void reshare(LinkId out, LinkId in, FlowId joined) override;
};

class StarMaxMin final : public Star {
 public:
  using Star::Star;

 private:
  void reshare(LinkId out, LinkId in, FlowId joined) override;
  void visit(LinkId link);

  // Scratch space, kept to avoid allocating per event.
  struct Fill {
    LinkId link;
    double capacity;
    std::uint32_t unfrozen;
  };
  std::vector<Fill> fills_;
  std::vector<FlowId> component_;
  std::vector<LinkId> frozen_by_;
  std::vector<std::pair<double, std::uint32_t>> levels_;  // (share, fill) min-heap
  std::uint32_t epoch_ = 0;
};

}  // namespace dps::sim::network
