// Max-min sharing on routes, by progressive filling over the flows connected to the changed links:
// the link with the least fair share fixes the rate of its flows, which then use that much of every
// other link on their routes; each flow is bound to the link that fixed its rate.
#include "routed.hpp"

#include <algorithm>
#include <functional>
#include <utility>

namespace dps::sim::network {

void RoutedMaxMin::reshare(std::span<const LinkId> changed, FlowId) {
  ++epoch_;
  component_links_.clear();
  component_flows_.clear();
  const auto visit = [&](LinkId l) {
    Link& link = links_[l];
    if (link.mark == epoch_) return;
    link.mark = epoch_;
    advance(l);
    link.left = link.capacity;
    link.unfrozen = static_cast<std::uint32_t>(link.flows.size());
    link.rate = 0;
    component_links_.push_back(l);
  };
  for (LinkId l : changed) visit(l);
  for (std::size_t i = 0; i < component_links_.size(); ++i)
    for (const Entry& e : links_[component_links_[i]].flows) {
      Flow& f = flows_[e.flow];
      if (f.mark == epoch_) continue;
      f.mark = epoch_;
      f.frozen = kNone;
      component_flows_.push_back(e.flow);
      for (LinkId l : f.route) visit(l);
    }
  std::vector<std::pair<double, LinkId>>& levels = levels_;
  levels.clear();
  const auto later = std::greater<>();
  for (LinkId l : component_links_)
    if (links_[l].unfrozen > 0) levels.emplace_back(links_[l].left / links_[l].unfrozen, l);
  std::make_heap(levels.begin(), levels.end(), later);
  while (!levels.empty()) {
    std::pop_heap(levels.begin(), levels.end(), later);
    const auto [level, l] = levels.back();
    levels.pop_back();
    Link& link = links_[l];
    if (link.unfrozen == 0 || level != link.left / link.unfrozen) continue;  // stale
    for (const Entry& e : link.flows) {
      Flow& f = flows_[e.flow];
      if (f.frozen != kNone) continue;
      f.frozen = l;
      for (LinkId m : f.route) {
        if (m == l) continue;
        Link& other = links_[m];
        other.left = std::max(0.0, other.left - level);
        if (--other.unfrozen > 0) {
          levels.emplace_back(other.left / other.unfrozen, m);
          std::push_heap(levels.begin(), levels.end(), later);
        }
      }
    }
    link.unfrozen = 0;
    link.rate = level;
  }
  for (FlowId f : component_flows_) rebind(f, flows_[f].frozen);
}

}  // namespace dps::sim::network
