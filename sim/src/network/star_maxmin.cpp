// The star's max-min sharing (SimGrid's): progressive filling over the flows connected to the two
// links that changed. The link with the smallest fair share fixes the rate of its flows, which then
// use that much of their other link; each flow is bound to the link that fixed its rate.
#include "star.hpp"

#include <algorithm>
#include <functional>
#include <span>

namespace dps::sim::network {

// A flow alone on one of its links (a leaf) is fixed by the other, which counts it but never
// searches it: a master's link shared by a thousand workers is not searched flow by flow. Only a
// changed link with at most two flows can make flows leaves or not: those are rebound at the end.
void StarMaxMin::reshare(LinkId out, LinkId in, FlowId) {
  ++epoch_;
  fills_.clear();
  component_.clear();
  visit(out);
  visit(in);
  for (LinkId c : {out, in})
    if (links_[c].flows.size() <= 2)
      for (FlowId f : links_[c].flows) visit(partner(flows_[f], c));
  auto searched = [&](LinkId l) {  // the flows of `l` that are no leaves: [0, multi), or none
    const Link& link = links_[l];
    return link.flows.size() >= 2 ? std::span<const FlowId>(link.flows.data(), link.multi) : std::span<const FlowId>();
  };
  for (std::size_t i = 0; i < fills_.size(); ++i) {
    const LinkId l = fills_[i].link;
    for (FlowId f : searched(l)) {
      Flow& a = flows_[f];
      if (a.mark == epoch_) continue;
      a.mark = epoch_;
      a.local = static_cast<std::uint32_t>(component_.size());
      component_.push_back(f);
      visit(partner(a, l));
    }
  }
  frozen_by_.assign(component_.size(), kNone);
  levels_.clear();
  const auto later = std::greater<>();
  for (std::uint32_t i = 0; i < fills_.size(); ++i)
    if (fills_[i].unfrozen) levels_.emplace_back(fills_[i].capacity / fills_[i].unfrozen, i);
  std::make_heap(levels_.begin(), levels_.end(), later);
  while (!levels_.empty()) {
    std::pop_heap(levels_.begin(), levels_.end(), later);
    const auto [level, fi] = levels_.back();
    levels_.pop_back();
    Fill& fill = fills_[fi];
    if (fill.unfrozen == 0 || level != fill.capacity / fill.unfrozen) continue;  // stale
    for (FlowId f : searched(fill.link)) {
      const Flow& a = flows_[f];
      if (frozen_by_[a.local] != kNone) continue;
      frozen_by_[a.local] = fill.link;
      Fill& other = fills_[links_[partner(a, fill.link)].local];
      other.capacity = std::max(0.0, other.capacity - level);
      if (--other.unfrozen > 0) {
        levels_.emplace_back(other.capacity / other.unfrozen, static_cast<std::uint32_t>(&other - fills_.data()));
        std::push_heap(levels_.begin(), levels_.end(), later);
      }
    }
    fill.unfrozen = 0;
    links_[fill.link].rate = level;
  }
  for (std::size_t i = 0; i < component_.size(); ++i) rebind(component_[i], frozen_by_[i]);
  for (LinkId c : {out, in})
    if (links_[c].flows.size() <= 2)
      for (FlowId f : links_[c].flows)
        if (leaf(flows_[f])) rebind(f, leaf_side(flows_[f]));
}

void StarMaxMin::visit(LinkId l) {
  Link& link = links_[l];
  if (link.mark == epoch_) return;
  link.mark = epoch_;
  link.local = static_cast<std::uint32_t>(fills_.size());
  fills_.push_back(Fill{l, model_.bandwidth, static_cast<std::uint32_t>(link.flows.size())});
  advance(l);
  link.rate = 0;  // until it fixes the rate of some flow
}

}  // namespace dps::sim::network
