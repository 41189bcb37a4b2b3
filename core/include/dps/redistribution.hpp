// Redistribution: move a distributed 2-D array from one layout to another over the threads of a
// collection (ReSHAPE: Sudarsan, "ReSHAPE: A Framework for Dynamic Resizing of Parallel Applications", ch. 3), as a
// flow graph: traced, simulated (a prediction's resize cost comes from its own transfers) and safe under malleability.
// Part p of either layout is held by the thread at index p, so the old and the new set of threads overlap: to grow, add
// threads and redistribute; to shrink, redistribute and remove the threads past the new layout's parts.
//
//   struct Block { dps::Part<double> grid;  template <class A> void serialize(A& a) { a(grid); } };
//   auto blocks = app.threads<Block>("blocks", 4);
//   dps::Redistribution<&Block::grid> redistribute(app, blocks);
//   blocks.add(2);
//   dps::Redistributed r = redistribute.run(old_layout, new_layout).get();   // 4 parts -> 6 parts
//
// The plan and its contention-free schedule: dps/redistribution_plan.hpp.
#pragma once

#include "dps/application.hpp"
#include "dps/redistribution_graph.hpp"
#include "dps/redistribution_plan.hpp"

#include <cstddef>
#include <map>
#include <stdexcept>
#include <string>

namespace dps {

// Redistributes the Part `member` of the states of a collection. Make one per collection, on node 0.
template <auto member>
class Redistribution {
  using Access = detail::redistribution::PartOf<member>;
  using State = typename Access::State;

 public:
  Redistribution(Application& app, Threads<State> threads)
      : app_(&app), threads_(threads), desk_(app.threads<detail::redistribution::Desk>("redistribution", 0)) {
    desk_.add_on(app.local_node());
  }

  // Starts moving the array from `from` to `to`; the collection must hold a thread for every part of
  // either. The future fails, naming it, if a node is lost on the way.
  Future<Redistributed> run(const Layout& from, const Layout& to) { return run(plan_redistribution(from, to)); }
  Future<Redistributed> run(RedistributionPlan plan) {
    if (threads_.size() < plan.parts())
      throw std::invalid_argument("dps::Redistribution: " + std::to_string(plan.parts()) + " parts, but '" +
                                  threads_.name() + "' has " + std::to_string(threads_.size()) + " threads");
    const std::size_t steps = plan.steps.size();
    auto graph = graphs_.find(steps);
    if (graph == graphs_.end())
      graph = graphs_.emplace(steps, app_->graph(detail::redistribution::graph<Access>(threads_, desk_, steps), "redistribute"))
                  .first;
    return graph->second.call(detail::redistribution::Start{std::move(plan)});
  }

 private:
  Application* app_;
  Threads<State> threads_;
  Threads<detail::redistribution::Desk> desk_;
  std::map<std::size_t, Graph<detail::redistribution::Start, Redistributed>> graphs_;  // by steps
};

}  // namespace dps
