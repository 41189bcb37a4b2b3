// Equal sharing on routes: each of a link's n flows gets capacity / n; a flow goes at the least of its
// shares. Only the changed links' shares moved (all of them down when a flow joined, all up when one
// left), so only their flows can change bottleneck, and most are settled in O(1) by a floor each
// keeps: a lower bound of the shares of its links but the one it is bound to. A flow stays bound while
// its link's share is no more than its floor, and moves to a changed link whose share fell below its
// rate; only the others have their route scanned.
#include "routed.hpp"

#include <limits>

namespace dps::sim::network {

void RoutedEqual::rescan(FlowId id) {
  Flow& f = flows_[id];
  LinkId best = f.route.front();
  for (LinkId l : f.route)
    if (links_[l].rate < links_[best].rate) best = l;
  f.floor = std::numeric_limits<double>::infinity();
  for (LinkId l : f.route)
    if (l != best) f.floor = std::min(f.floor, links_[l].rate);
  rebind(id, best);
}

void RoutedEqual::reshare(std::span<const LinkId> changed, FlowId joined) {
  for (LinkId l : changed) {
    Link& link = links_[l];
    link.rate = link.flows.empty() ? 0.0 : link.capacity / static_cast<double>(link.flows.size());
  }
  ++epoch_;
  if (joined != kNone) {
    flows_[joined].mark = epoch_;
    rescan(joined);
  }
  for (LinkId l : changed) {
    const double share = links_[l].rate;
    for (const Entry& e : links_[l].flows) {
      Flow& f = flows_[e.flow];
      if (f.mark == epoch_) continue;
      if (f.bound == l) {
        if (share <= f.floor) continue;  // still the least of its shares
        f.mark = epoch_;
        rescan(e.flow);
      } else if (share < links_[f.bound].rate) {
        if (joined == kNone) {  // its own link's share rose too: which is least now, only its route says
          f.mark = epoch_;
          rescan(e.flow);
        } else {  // shares only fell, its own the least until now: this link is its bottleneck
          f.floor = std::min(f.floor, links_[f.bound].rate);
          rebind(e.flow, l);
        }
      } else {
        f.floor = std::min(f.floor, share);
      }
    }
  }
}

}  // namespace dps::sim::network
