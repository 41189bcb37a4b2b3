// The plan of a redistribution (dps/redistribution.hpp runs it): what moves from which part of the
// old layout to which part of the new one, and in which steps.
//
//   dps::RedistributionPlan plan = dps::plan_redistribution(old_layout, new_layout);
//   for (const auto& step : plan.steps)
//     for (std::uint32_t t : step) std::printf("%u -> %u: %zu elements\n", plan.transfers[t].from,
//                                               plan.transfers[t].to, plan.transfers[t].elements);
//
// Messages are the elements at one relative position of ReSHAPE's superblock, lcm(Pr, Qr) × lcm(Pc,
// Qc) blocks for 2-D block-cyclic layouts (the whole overlap of two parts for block layouts). The
// schedule is contention-free: in each step every part sends at most one message and receives at
// most one (an edge colouring of the transfers, as many steps as the busiest part has messages); a
// part's copy to itself goes with the first step.
#pragma once

#include "dps/large_array.hpp"
#include "dps/layout.hpp"

#include <cereal/types/vector.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
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
