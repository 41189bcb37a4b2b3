// Routed: flows on their routes, the links' clocks and ends; the sharing rules are in
// routed_equal.cpp and routed_maxmin.cpp.
#include "routed.hpp"

#include "../indexed_heap.hpp"

#include <algorithm>

namespace dps::sim::network {

Routed::Routed(const NetworkModel& model, std::size_t nodes, std::size_t inner, double inner_capacity, Routes routes,
               Usage& usage, Events& events)
    : model_(model), usage_(usage), nodes_(nodes), links_(2 * nodes + inner), routes_(std::move(routes)), events_(events) {
  for (LinkId l = 0; l < links_.size(); ++l) {
    links_[l].capacity = l < 2 * nodes ? model.bandwidth : inner_capacity;
    links_[l].event = events_.add(l);
  }
}

double Routed::latency(VNode from, VNode to) const {
  hops_.clear();
  routes_(from, to, hops_);
  return model_.latency + static_cast<double>(hops_.size()) * model_.mesh.hop_latency;
}

void Routed::start(FlowId id, VNode from, VNode to, double bytes, std::uint64_t seq, double now) {
  now_ = now;
  if (flows_.size() <= id) flows_.resize(id + 1);
  Flow& f = flows_[id];
  f.route.clear();
  f.at.clear();
  f.route.push_back(out_link(from));
  routes_(from, to, f.route);
  for (std::size_t k = 1; k < f.route.size(); ++k) f.route[k] += static_cast<LinkId>(2 * nodes_);
  f.route.push_back(in_link(to));
  f.remaining = bytes, f.seq = seq, f.bound = kNone, f.bound_at = kNone, f.mark = 0, f.frozen = kNone;
  for (std::size_t k = 0; k < f.route.size(); ++k) {
    Link& link = links_[f.route[k]];
    advance(f.route[k]);
    f.at.push_back(static_cast<std::uint32_t>(link.flows.size()));
    link.flows.push_back({id, static_cast<std::uint32_t>(k)});
  }
  reshare(f.route, id);
  settle_links();
}

void Routed::end(FlowId id, double now) {
  now_ = now;
  Flow& f = flows_[id];
  for (LinkId l : f.route) advance(l);
  unbind(id);
  for (std::size_t k = 0; k < f.route.size(); ++k) {
    std::vector<Entry>& list = links_[f.route[k]].flows;
    const Entry moved = list.back();
    list[f.at[k]] = moved;
    flows_[moved.flow].at[moved.hop] = f.at[k];
    list.pop_back();
  }
  changed_.assign(f.route.begin(), f.route.end());
  reshare(changed_, kNone);
  settle_links();
}

void Routed::advance(LinkId l) {
  Link& link = links_[l];
  link.clock = clock_now(link);
  link.clock_at = now_;
  if (link.dirty) return;
  link.dirty = true;
  dirty_.push_back(l);
}

void Routed::bind(FlowId id, LinkId l) {
  Flow& f = flows_[id];
  Link& link = links_[l];
  f.bound = l;
  f.since = now_;
  f.vsince = link.clock;
  f.vfinish = link.clock + f.remaining;
  heap::insert(link.bound, id, by_vfinish(), bound_at());
}

// The flow leaves its link with what it has left in `remaining`; the nodes' links it crossed without
// being bound there carried the same bytes meanwhile, recorded as spread evenly over that time.
void Routed::unbind(FlowId id) {
  Flow& f = flows_[id];
  Link& link = links_[f.bound];
  advance(f.bound);
  for (const LinkId l : {f.route.front(), f.route.back()})
    if (l != f.bound)
      usage_.spread(l / 2, l % 2 ? Usage::LinkIn : Usage::LinkOut, f.since, now_, (link.clock - f.vsince) / links_[l].capacity);
  f.remaining = std::max(0.0, f.vfinish - link.clock);
  heap::remove(link.bound, f.bound_at, by_vfinish(), bound_at());
  f.bound = kNone;
}

void Routed::rebind(FlowId id, LinkId l) {
  if (flows_[id].bound == l) return;
  if (flows_[id].bound != kNone) unbind(id);
  advance(l);
  bind(id, l);
}

// Each changed link: its usage from now on (a node's links), and when its first bound flow ends.
void Routed::settle_links() {
  for (LinkId l : dirty_) {
    Link& link = links_[l];
    link.dirty = false;
    if (l < 2 * nodes_)
      usage_.set(l / 2, l % 2 ? Usage::LinkIn : Usage::LinkOut, now_,
                 static_cast<double>(link.bound.size()) * link.rate / link.capacity);
    if (link.bound.empty() || link.rate <= 0) {
      if (link.bound.empty()) link.clock = 0;
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
