// Star: the links, their flows, their clocks and ends; the sharing rules are in star_equal.cpp and
// star_maxmin.cpp.
#include "star.hpp"

#include "../indexed_heap.hpp"

#include <algorithm>

namespace dps::sim::network {

Star::Star(const NetworkModel& model, std::size_t nodes, Usage& usage, Events& events)
    : model_(model), usage_(usage), links_(2 * nodes), events_(events) {
  for (LinkId l = 0; l < links_.size(); ++l) links_[l].event = events_.add(l);
}

void Star::start(FlowId id, VNode from, VNode to, double bytes, std::uint64_t seq, double now) {
  now_ = now;
  if (flows_.size() <= id) flows_.resize(id + 1);
  Flow& a = flows_[id];
  a = Flow{};
  a.from = from, a.to = to, a.remaining = bytes, a.seq = seq;
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

void Star::advance(LinkId l) {
  Link& link = links_[l];
  link.clock = clock_now(link);
  link.clock_at = now_;
  if (link.dirty) return;
  link.dirty = true;
  dirty_.push_back(l);
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

void Star::bind(FlowId id, LinkId l) {
  Flow& a = flows_[id];
  Link& link = links_[l];
  a.bound = l;
  a.since = now_;
  a.vsince = link.clock;
  a.vfinish = link.clock + a.remaining;
  heap::insert(link.bound, id, by_vfinish(), bound_at());
}

// The flow leaves its link with what it has left in `remaining`; its other link carried the same
// bytes meanwhile, recorded as spread evenly over that time.
void Star::unbind(FlowId id) {
  Flow& a = flows_[id];
  Link& link = links_[a.bound];
  advance(a.bound);
  const LinkId other = partner(a, a.bound);
  usage_.spread(other / 2, other % 2 ? Usage::LinkIn : Usage::LinkOut, a.since, now_,
                (link.clock - a.vsince) / model_.bandwidth);
  a.remaining = std::max(0.0, a.vfinish - link.clock);
  heap::remove(link.bound, a.bound_at, by_vfinish(), bound_at());
  a.bound = kNone;
}

void Star::rebind(FlowId id, LinkId l) {
  if (flows_[id].bound == l) return;
  if (flows_[id].bound != kNone) unbind(id);
  advance(l);
  bind(id, l);
}

// Each changed link: its usage from now on (its bound flows; the others' bytes are recorded when they
// leave), and when its first bound flow ends.
void Star::settle_links() {
  const double b = model_.bandwidth;
  for (LinkId l : dirty_) {
    Link& link = links_[l];
    link.dirty = false;
    usage_.set(l / 2, l % 2 ? Usage::LinkIn : Usage::LinkOut, now_, static_cast<double>(link.bound.size()) * link.rate / b);
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

}  // namespace dps::sim::network
