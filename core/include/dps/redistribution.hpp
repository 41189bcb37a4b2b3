// Redistribution: move a distributed 2-D array from one layout to another over the threads of a
// collection (ReSHAPE, seed 000 ch. 3), as a flow graph: traced, simulated (a prediction's resize cost
// comes from its own transfers) and safe under malleability. Part p of either layout is held by the
// thread at index p, so the old and the new set of threads overlap: to grow, add threads and
// redistribute; to shrink, redistribute and remove the threads past the new layout's parts.
//
//   struct Block { dps::Part<double> grid;  template <class A> void serialize(A& a) { a(grid); } };
//   auto blocks = app.threads<Block>("blocks", 4);
//   dps::Redistribution<&Block::grid> redistribute(app, blocks);
//   blocks.add(2);
//   dps::Redistributed r = redistribute.run(old_layout, new_layout).get();   // 4 parts -> 6 parts
//
// The schedule is contention-free: in each step every thread sends at most one message and receives
// at most one (an edge colouring of the transfers, as many steps as the busiest thread has messages).
// A message holds the elements at one relative position of ReSHAPE's superblock, lcm(Pr, Qr) × lcm(Pc,
// Qc) blocks for 2-D block-cyclic layouts (the whole overlap of two parts for block layouts); a part
// keeping its own elements copies them in place of a message.
#pragma once

#include "dps/application.hpp"
#include "dps/large_array.hpp"
#include "dps/layout.hpp"

#include <cereal/types/vector.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace dps {

// A thread's part of a distributed array: `data` laid out as its Layout says (row major, margin
// included); `incoming` holds the new part while a redistribution runs.
template <class T>
struct Part {
  LargeArray<T> data;
  LargeArray<T> incoming;
  template <class A>
  void serialize(A& a) {
    a(data, incoming);
  }
};

// Elements [rows × cols] from (from_row, from_col) of the source part to (to_row, to_col) of the
// destination part, in local coordinates without the margin.
struct Rect {
  std::size_t from_row = 0, from_col = 0, to_row = 0, to_col = 0, rows = 0, cols = 0;
  template <class A>
  void serialize(A& a) {
    a(from_row, from_col, to_row, to_col, rows, cols);
  }
};

struct Transfer {
  std::uint32_t from = 0, to = 0;  // parts of the old and of the new layout
  std::vector<Rect> rects;
  std::size_t elements = 0;
  template <class A>
  void serialize(A& a) {
    a(from, to, rects, elements);
  }
};

struct RedistributionPlan {
  Layout from, to;
  std::size_t row_period = 0, col_period = 0;  // the superblock, in elements
  std::vector<Transfer> transfers;
  // Indices into transfers. In each step a part sends at most one message and receives at most one;
  // copies within a part are in the first step.
  std::vector<std::vector<std::uint32_t>> steps;

  std::size_t parts() const noexcept { return std::max(from.parts(), to.parts()); }
  std::size_t moved() const noexcept;  // elements that change parts
  template <class A>
  void serialize(A& a) {
    a(from, to, row_period, col_period, transfers, steps);
  }
};

// Throws std::invalid_argument when the layouts do not hold arrays of the same shape.
RedistributionPlan plan_redistribution(const Layout& from, const Layout& to);

// What a redistribution did.
struct Redistributed {
  std::size_t steps = 0, transfers = 0, moved = 0;  // moved: elements that changed parts
  template <class A>
  void serialize(A& a) {
    a(steps, transfers, moved);
  }
};

}  // namespace dps

#include "dps/detail/redistribution_graph.hpp"

namespace dps {

// Redistributes the Part `member` of the states of a collection. Make one per collection, on node 0.
template <auto member>
class Redistribution {
  using Access = detail::redistribution::PartOf<member>;
  using State = typename Access::State;

 public:
  Redistribution(Application& app, Threads<State> threads)
      : app_(&app), threads_(threads), desk_(app.threads<detail::redistribution::Desk>("redistribution", 0)) {
    desk_.add_on(app.backend().local_node());
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
