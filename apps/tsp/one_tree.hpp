// The Held–Karp lower bound of a search node: minimum 1-trees (a spanning tree of cities 1..n-1, plus
// city 0's two cheapest edges) under edge penalties, raised by subgradient optimisation with
// Volgenant and Jonker's step schedule, honouring the node's branching constraints.
//
//   tsp::Constraints c(instance.n);
//   c.forbid(3, 7);                                        // the branch taken
//   std::vector<double> pi(instance.n);                    // warm start: the parent's penalties
//   tsp::Bound b = tsp::held_karp(instance, c, pi, {.iterations = 50, .upper_bound = 7542});
//   if (!b.feasible || b.prunes(7542)) ...                 // else b.tour, or branch on b.branch
#pragma once

#include "tsplib.hpp"
#include "tour.hpp"

#include <cstdint>
#include <vector>

namespace tsp {

struct Edge {
  int u = 0, v = 0;
  bool operator==(const Edge&) const = default;
};

// Branching constraints: edges every tour of the node must use, or must not. Each change propagates
// what it implies (a city with two required edges loses its others, a city with two edges left
// requires both, a path of required edges may not close early) and reports false when no tour is left.
class Constraints {
 public:
  enum class State : std::int8_t { Free, Required, Forbidden };
  explicit Constraints(int n);
  State at(int u, int v) const { return state_[index(u, v)]; }
  bool require(int u, int v);
  bool forbid(int u, int v);
  int n() const { return n_; }
  int required_degree(int city) const { return required_[static_cast<std::size_t>(city)]; }

 private:
  std::size_t index(int u, int v) const { return static_cast<std::size_t>(u) * static_cast<std::size_t>(n_) + static_cast<std::size_t>(v); }
  void set(int u, int v, State s) { state_[index(u, v)] = state_[index(v, u)] = s; }
  bool settle(int city);  // after a change at `city`: what its degrees imply
  int n_;
  int required_edges_ = 0;
  std::vector<State> state_;
  std::vector<int> required_, open_;  // per city: required edges; edges not forbidden
  std::vector<int> end_, size_;       // per end of a path of required edges: its other end, its cities
};

struct BoundOptions {
  int iterations = 50;     // subgradient steps
  double first_step = 0;   // the first step; 0: a tenth of the first bound over n (a root node)
  long upper_bound = 0;    // the best tour known; 0: none (no early pruning)
};

struct Bound {
  bool feasible = true;  // some tour satisfies the constraints (as far as the 1-trees can tell)
  double value = 0;      // a lower bound of every tour of the node
  Tour tour{};           // when the best 1-tree is a tour: an optimal tour of the node
  Edge branch{-1, -1};   // else a free 1-tree edge at a city of degree above 2
  double first_step = 0;  // the schedule's first step (the root's tells its descendants theirs)
  long trees = 0;         // 1-trees computed (what the bound cost: each is O(n²))
  // Whether no tour of the node can be shorter than `upper_bound` (tour lengths are integers).
  bool prunes(long upper_bound) const;
};

// The best bound found; `penalties` (n, warm start) become the penalties that gave it.
Bound held_karp(const Instance& instance, const Constraints& constraints, std::vector<double>& penalties,
                const BoundOptions& options);

}  // namespace tsp
