// Equal sharing on routes: each of a link's n flows gets capacity / n; a flow goes at the least of its
// shares (ties: the first link of its route). Only the changed links' shares moved, so only their
// flows can change bottleneck.
#include "routed.hpp"

namespace dps::sim::network {

LinkId RoutedEqual::bottleneck(const Flow& flow) const {
  LinkId best = flow.route.front();
  for (LinkId l : flow.route)
    if (links_[l].rate < links_[best].rate) best = l;
  return best;
}

void RoutedEqual::reshare(std::span<const LinkId> changed, FlowId) {
  for (LinkId l : changed) {
    Link& link = links_[l];
    link.rate = link.flows.empty() ? 0.0 : link.capacity / static_cast<double>(link.flows.size());
  }
  ++epoch_;
  for (LinkId l : changed)
    for (const Entry& e : links_[l].flows) {
      Flow& f = flows_[e.flow];
      if (f.mark == epoch_) continue;
      f.mark = epoch_;
      rebind(e.flow, bottleneck(f));
    }
}

}  // namespace dps::sim::network
