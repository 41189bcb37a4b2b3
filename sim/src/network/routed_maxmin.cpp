// Max-min sharing on routes (maxmin.hpp): progressive filling over the flows connected to the links
// that changed.
#include "routed.hpp"

namespace dps::sim::network {

struct RoutedMaxMin::View {
  RoutedMaxMin& net;

  double capacity(LinkId l) const { return net.links_[l].capacity; }
  std::uint32_t sharing(LinkId l) const { return static_cast<std::uint32_t>(net.links_[l].flows.size()); }
  template <class F>
  void searched(LinkId l, F each) const {
    for (const Entry& e : net.links_[l].flows) each(e.flow);
  }
  template <class F>
  void route(FlowId f, F each) const {
    for (LinkId l : net.flows_[f].route) each(l);
  }
};

void RoutedMaxMin::reshare(std::span<const LinkId> changed, FlowId) {
  View view{*this};
  solver_.start(links_.size(), flows_.size());
  for (LinkId l : changed) solver_.reach(view, l);
  solver_.solve(view);
  take(solver_);
}

}  // namespace dps::sim::network
