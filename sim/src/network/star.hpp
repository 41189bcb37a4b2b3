// Star: the full-duplex star of Schaeli, Gerlach & Hersch ("A simulator for adaptive parallel applications", §4). Each
// node has an outgoing and an incoming link to one switch, of the model's bandwidth; a transfer crosses its source's
// outgoing and its destination's incoming link. How the flows on a link share it is the rule of a subclass, each in its
// own file: StarEqual (star_equal.cpp: each of n flows gets bandwidth / n, as in the paper) and StarMaxMin
// (star_maxmin.cpp: max-min fairness, maxmin.hpp).
//
// Flows are bound to their bottleneck link (bound_links.hpp); only the flows whose bottleneck moves
// to their other link are touched.
#pragma once

#include "bound_links.hpp"
#include "maxmin.hpp"

#include <cstdint>
#include <vector>

namespace dps::sim::network {

struct StarFlow : BoundFlow {
  VNode from = 0, to = 0;
  std::uint32_t at_from = kNone, at_to = kNone;  // in its links' lists
};

struct StarLink : BoundLink {
  // The flows, by how busy their other link is: [0, near) it has >= kNear flows, [near, multi) 2 to
  // kNear - 1, [multi, size) this flow alone.
  std::vector<Model::FlowId> flows;
  std::uint32_t near = 0, multi = 0;
};

class Star : public BoundLinks<StarFlow, StarLink> {
 public:
  Star(const NetworkModel& model, std::size_t nodes, Usage& usage, Events& events);

  double latency(VNode, VNode) const override { return model_.latency; }
  void start(FlowId flow, VNode from, VNode to, double bytes, std::uint64_t seq, double now) override;
  void end(FlowId flow, double now) override;

 protected:
  using Flow = StarFlow;
  using Link = StarLink;
  // A link with more flows than this finds the flows whose bottleneck may change among those whose
  // other link is as busy (`near`), instead of looking at all of them.
  static constexpr std::uint32_t kNear = 8;

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

  const NetworkModel& model_;

 private:
  void carried(const Flow& flow, double bytes) override { spread(flow, partner(flow, flow.bound), bytes); }
  std::uint32_t& position(FlowId flow, LinkId link) noexcept;  // in the link's list
  void list_leave(LinkId link, FlowId id);
  void place(LinkId link, FlowId id, std::uint32_t Link::*end, bool inside);
  void set_near(LinkId link, FlowId id, bool near) { place(link, id, &Link::near, near); }
  void set_multi(LinkId link, FlowId id, bool multi) { place(link, id, &Link::multi, multi); }
  void recount(LinkId link, std::size_t before);  // its flows' partners see its new count
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
  struct View;  // the star as the solver sees it
  void reshare(LinkId out, LinkId in, FlowId joined) override;

  MaxMin solver_;
};

}  // namespace dps::sim::network
