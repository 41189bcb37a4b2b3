// The star's equal sharing (Schaeli, Gerlach & Hersch, "A simulator for adaptive parallel applications", §4): each of a
// link's n flows gets bandwidth / n; a flow goes at the smaller of its two shares (ties: its outgoing link).
#include "star.hpp"

namespace dps::sim::network {

// Only the two links' shares changed, so only their flows can change bottleneck, and on a busy link
// only those whose other link is about as busy.
void StarEqual::reshare(LinkId out, LinkId in, FlowId joined) {
  const double b = model_.bandwidth;
  for (LinkId l : {out, in}) {
    Link& link = links_[l];
    link.rate = link.flows.empty() ? 0.0 : b / static_cast<double>(link.flows.size());
  }
  auto bottleneck = [&](const Flow& f) {
    const LinkId o = out_link(f.from), i = in_link(f.to);
    return links_[o].rate <= links_[i].rate ? o : i;
  };
  if (joined != kNone) rebind(joined, bottleneck(flows_[joined]));
  for (LinkId l : {out, in}) {
    const Link& link = links_[l];
    const std::size_t n = link.flows.size(), candidates = n <= kNear + 2 ? n : link.near;
    for (std::size_t k = 0; k < candidates; ++k) {
      const FlowId f = link.flows[k];
      rebind(f, bottleneck(flows_[f]));
    }
  }
}

}  // namespace dps::sim::network
