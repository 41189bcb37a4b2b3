// The star's max-min sharing (maxmin.hpp): progressive filling over the flows connected to the two
// links that changed.
#include "star.hpp"

namespace dps::sim::network {

struct StarMaxMin::View {
  StarMaxMin& star;

  double capacity(LinkId) const { return star.model_.bandwidth; }
  std::uint32_t sharing(LinkId l) const { return static_cast<std::uint32_t>(star.links_[l].flows.size()); }
  // The flows of a link that are no leaves: [0, multi) of its list, or none when it has only one.
  template <class F>
  void searched(LinkId l, F each) const {
    const Link& link = star.links_[l];
    if (link.flows.size() < 2) return;
    for (std::uint32_t k = 0; k < link.multi; ++k) each(link.flows[k]);
  }
  template <class F>
  void route(FlowId f, F each) const {
    const Flow& flow = star.flows_[f];
    each(out_link(flow.from));
    each(in_link(flow.to));
  }
};

// A flow alone on one of its links (a leaf) is fixed by the other, which counts it but never searches
// it. Only a changed link with at most two flows can make flows leaves or not: its flows' other links
// are reached too, and its leaves rebound at the end.
void StarMaxMin::reshare(LinkId out, LinkId in, FlowId) {
  View view{*this};
  solver_.start(links_.size(), flows_.size());
  solver_.reach(view, out);
  solver_.reach(view, in);
  for (LinkId c : {out, in})
    if (links_[c].flows.size() <= 2)
      for (FlowId f : links_[c].flows) solver_.reach(view, partner(flows_[f], c));
  solver_.solve(view);
  take(solver_);
  for (LinkId c : {out, in})
    if (links_[c].flows.size() <= 2)
      for (FlowId f : links_[c].flows)
        if (leaf(flows_[f])) rebind(f, leaf_side(flows_[f]));
}

}  // namespace dps::sim::network
