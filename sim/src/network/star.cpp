// Star: the links, their flows, their clocks and ends; the sharing rules are in star_equal.cpp and
// star_maxmin.cpp.
#include "star.hpp"

#include <algorithm>

namespace dps::sim::network {

Star::Star(const NetworkModel& model, std::size_t nodes, Usage& usage, Events& events)
    : BoundLinks(nodes, 2 * nodes, usage, events), model_(model) {
  for (Link& link : links_) link.capacity = model.bandwidth;
}

void Star::start(FlowId id, VNode from, VNode to, double bytes, std::uint64_t seq, double now) {
  now_ = now;
  if (flows_.size() <= id) flows_.resize(id + 1);
  Flow& a = flows_[id];
  a = Flow{};
  a.from = from, a.to = to;
  a.remaining = bytes, a.seq = seq;
  const LinkId out = out_link(from), in = in_link(to);
  advance(out);
  advance(in);
  Link &o = links_[out], &i = links_[in];
  a.at_from = static_cast<std::uint32_t>(o.flows.size());
  o.flows.push_back(id);
  a.at_to = static_cast<std::uint32_t>(i.flows.size());
  i.flows.push_back(id);
  set_multi(out, id, i.flows.size() >= 2);  // first: a flow is near only once it is multi
  set_multi(in, id, o.flows.size() >= 2);
  recount(out, o.flows.size() - 1);
  recount(in, i.flows.size() - 1);
  set_near(out, id, i.flows.size() >= kNear);
  set_near(in, id, o.flows.size() >= kNear);
  reshare(out, in, id);
  settle_links();
}

void Star::end(FlowId id, double now) {
  now_ = now;
  const Flow& a = flows_[id];
  const LinkId out = out_link(a.from), in = in_link(a.to);
  advance(out);
  advance(in);
  unbind(id);
  list_leave(out, id);
  list_leave(in, id);
  reshare(out, in, kNone);
  settle_links();
}

std::uint32_t& Star::position(FlowId flow, LinkId l) noexcept {
  Flow& a = flows_[flow];
  return l == out_link(a.from) ? a.at_from : a.at_to;
}

// Each region stays whole: the hole moves to the end of the region it is in, then of the next one.
void Star::list_leave(LinkId l, FlowId id) {
  Link& link = links_[l];
  std::vector<FlowId>& flows = link.flows;
  std::uint32_t at = position(id, l);
  auto fill_from = [&](std::uint32_t from) {
    if (from != at) {  // the hole holds a stale copy of what moved: never re-place it
      flows[at] = flows[from];
      position(flows[at], l) = at;
    }
    at = from;
  };
  if (at < link.near) fill_from(--link.near);
  if (at < link.multi) fill_from(--link.multi);
  fill_from(static_cast<std::uint32_t>(flows.size() - 1));
  flows.pop_back();
  recount(l, flows.size() + 1);
}

// A flow enters or leaves the region [0, end) of its link's list by trading places with the flow at
// the region's end.
void Star::place(LinkId l, FlowId id, std::uint32_t Link::*end, bool inside) {
  Link& link = links_[l];
  std::uint32_t& boundary = link.*end;
  const std::uint32_t at = position(id, l);
  if (inside == (at < boundary)) return;
  const std::uint32_t to = inside ? boundary++ : --boundary;
  const FlowId other = link.flows[to];
  std::swap(link.flows[at], link.flows[to]);
  position(other, l) = at;
  position(id, l) = to;
}

void Star::recount(LinkId l, std::size_t before) {
  const std::vector<FlowId>& flows = links_[l].flows;
  const std::size_t after = flows.size();
  if ((after >= 2) != (before >= 2))
    for (FlowId f : flows) set_multi(partner(flows_[f], l), f, after >= 2);
  if ((after >= kNear) != (before >= kNear))
    for (FlowId f : flows) set_near(partner(flows_[f], l), f, after >= kNear);
}

}  // namespace dps::sim::network
