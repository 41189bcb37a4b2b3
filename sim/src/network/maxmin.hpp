// MaxMin: max-min fair sharing by progressive filling (what SimGrid does), the one solver of the star's
// and the routed models' max-min rule. A change of flows moves the rates of the flows connected to it and
// of no others, so the solver works on that part: it starts at the links a model names (reach), follows
// their flows to the other links those cross, and so on. Then it fills: the link whose capacity left,
// split among its flows not yet fixed, is the least fixes their rate at that share, and they take that
// much of their other links. Each flow is bound to the link that fixed it (ties: the lower-numbered link).
//
// A model shows its network through a view:
//   struct View {
//     double capacity(LinkId) const;                       // bytes per second
//     std::uint32_t sharing(LinkId) const;                 // how many flows cross it
//     template <class F> void searched(LinkId, F each);    // each(FlowId): the flows the search follows
//     template <class F> void route(FlowId, F each);       // each(LinkId): the links a flow crosses
//   };
// `searched` may leave out a flow the link fixes whatever the other flows do (it is alone on its other
// links, and they have at least this link's capacity): the link counts it and never searches it, so a
// master's link shared by a thousand workers is not searched flow by flow.
//
//   solver.start(links, flows);                       // the network's sizes
//   solver.reach(view, out);  solver.reach(view, in);   // the links whose flows changed
//   solver.solve(view);
//   for (const MaxMin::Link& l : solver.links()) ...   // l.rate: what each of its bound flows gets
//   for (FlowId f : solver.flows()) ...                 // solver.bound(f): the link that fixed its rate
#pragma once

#include "bound_links.hpp"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <utility>
#include <vector>

namespace dps::sim::network {

class MaxMin {
 public:
  struct Link {
    LinkId id;
    double rate = 0;  // the share it fixed, or 0 if it fixed no flow's
  };

  // A new search, on a network of `links` links and flows numbered below `flows`.
  void start(std::size_t links, std::size_t flows) {
    links_.clear();
    flows_.clear();
    if (link_state_.size() < links) link_state_.resize(links);
    if (flow_state_.size() < flows) flow_state_.resize(flows);
    if (++epoch_ == 0) {  // wrapped: marks of 2^32 searches ago would read as this one's
      for (LinkState& s : link_state_) s.epoch = 0;
      for (FlowState& s : flow_state_) s.epoch = 0;
      epoch_ = 1;
    }
  }

  // Adds the link to the search, if it is not in it yet.
  template <class View>
  void reach(const View& view, LinkId l) {
    LinkState& link = link_state_[l];
    if (link.epoch == epoch_) return;
    link = {epoch_, static_cast<std::uint32_t>(links_.size()), view.sharing(l), view.capacity(l)};
    links_.push_back({l, 0.0});
  }

  // Every link connected to those reached, then the rates by progressive filling.
  template <class View>
  void solve(View& view) {
    for (std::size_t i = 0; i < links_.size(); ++i)
      view.searched(links_[i].id, [&](Model::FlowId f) {
        FlowState& flow = flow_state_[f];
        if (flow.epoch == epoch_) return;
        flow = {epoch_, kNone};
        flows_.push_back(f);
        view.route(f, [&](LinkId l) { reach(view, l); });
      });
    levels_.clear();
    const auto later = std::greater<>();
    for (const Link& l : links_) {
      const LinkState& link = link_state_[l.id];
      if (link.unfixed > 0) levels_.emplace_back(link.left / link.unfixed, l.id);
    }
    std::make_heap(levels_.begin(), levels_.end(), later);
    while (!levels_.empty()) {
      std::pop_heap(levels_.begin(), levels_.end(), later);
      const auto [level, l] = levels_.back();
      levels_.pop_back();
      LinkState& link = link_state_[l];
      if (link.unfixed == 0 || level != link.left / link.unfixed) continue;  // stale
      view.searched(l, [&](Model::FlowId f) {
        LinkId& bound = flow_state_[f].bound;
        if (bound != kNone) return;
        bound = l;
        view.route(f, [&](LinkId m) {
          if (m == l) return;
          LinkState& other = link_state_[m];
          other.left = std::max(0.0, other.left - level);
          if (--other.unfixed > 0) {
            levels_.emplace_back(other.left / other.unfixed, m);
            std::push_heap(levels_.begin(), levels_.end(), later);
          }
        });
      });
      link.unfixed = 0;
      links_[link.local].rate = level;
    }
  }

  // What the search reached: each link with its rate, each flow (bound(f): the link that fixed it).
  std::span<const Link> links() const noexcept { return links_; }
  std::span<const Model::FlowId> flows() const noexcept { return flows_; }
  LinkId bound(Model::FlowId f) const noexcept { return flow_state_[f].bound; }

 private:
  // By id: the last search that reached it, and what the search keeps of it.
  struct LinkState {
    std::uint32_t epoch = 0;
    std::uint32_t local = 0;    // its place in links_
    std::uint32_t unfixed = 0;  // flows whose rate it may still fix
    double left = 0;            // capacity not yet given
  };
  struct FlowState {
    std::uint32_t epoch = 0;
    LinkId bound = kNone;
  };

  std::uint32_t epoch_ = 0;
  std::vector<LinkState> link_state_;
  std::vector<FlowState> flow_state_;
  // The search's links and flows, in the order reached; kept to avoid allocating per event.
  std::vector<Link> links_;
  std::vector<Model::FlowId> flows_;
  std::vector<std::pair<double, LinkId>> levels_;  // (share, link) min-heap
};

}  // namespace dps::sim::network
