// Routed: flows on their routes, the links' clocks and ends; the sharing rules are in
// routed_equal.cpp and routed_maxmin.cpp.
#include "routed.hpp"

#include <algorithm>

namespace dps::sim::network {

Routed::Routed(const ClusterModel& cluster, std::size_t nodes, std::vector<Inner> inner, Routes routes, Usage& usage,
               Events& events, Delay delay)
    : BoundLinks(nodes, 2 * nodes + inner.size(), usage, events), model_(cluster.network), routes_(std::move(routes)),
      delay_(std::move(delay)) {
  LinkId l = 0;
  for (const NodeGroup& g : cluster.groups)  // each node's two links
    for (std::size_t k = 0; k < 2 * g.count && l < 2 * nodes; ++k) links_[l++].capacity = g.bandwidth > 0 ? g.bandwidth : model_.bandwidth;
  for (; l < 2 * nodes; ++l) links_[l].capacity = model_.bandwidth;
  for (const Inner& link : inner) links_[l++].capacity = link.capacity;
  for (const Inner& link : inner) latency_.push_back(link.latency);
}

double Routed::latency(VNode from, VNode to) const {
  if (delay_) return model_.latency + delay_(from, to);
  hops_.clear();
  routes_(from, to, hops_);
  double seconds = model_.latency;
  for (LinkId l : hops_) seconds += latency_[l];
  return seconds;
}

void Routed::start(FlowId id, VNode from, VNode to, double bytes, std::uint64_t seq, double now) {
  now_ = now;
  if (flows_.size() <= id) flows_.resize(id + 1);
  Flow& f = flows_[id];
  f.route.clear();
  f.at.clear();
  f.route.push_back(2 * from);  // its outgoing link
  routes_(from, to, f.route);
  for (std::size_t k = 1; k < f.route.size(); ++k) f.route[k] += static_cast<LinkId>(node_links_);
  f.route.push_back(2 * to + 1);  // its incoming link
  f.remaining = bytes, f.seq = seq, f.bound = kNone, f.bound_at = kNone;
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
  leaving(id);
  unbind(id);
  for (std::size_t k = 0; k < f.route.size(); ++k) {
    std::vector<Entry>& list = links_[f.route[k]].flows;
    const Entry moved = list.back();
    list[f.at[k]] = moved;
    flows_[moved.flow].at[moved.hop] = f.at[k];
    list.pop_back();
  }
  reshare(f.route, kNone);  // its route stays with it until its id is reused
  settle_links();
}

}  // namespace dps::sim::network
