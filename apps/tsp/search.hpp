// The exact search: subproblems (the edge decisions from the root, and the penalties their parent's
// bound ended with), expanded depth first. The parallel solver moves subproblems between workers;
// each worker runs its own Frontier.
//
//   auto [root, settings, trees] = tsp::Search::root(instance);   // its bound sets the subgradient's scale
//   tsp::Search search(instance, settings);
//   tsp::Frontier f;
//   f.push(root);
//   long best = tsp::tour_length(instance, tour);
//   f.run(search, 100000, best, tour);           // up to 100 000 1-trees' worth; best and tour improve
//   f.step(search, best, tour);                  // one subproblem
#pragma once

#include "one_tree.hpp"
#include "tour.hpp"
#include "tsplib.hpp"

#include <cereal/types/deque.hpp>
#include <cereal/types/vector.hpp>

#include <cstdint>
#include <deque>
#include <tuple>
#include <vector>

namespace tsp {

struct Decision {
  std::int16_t u = 0, v = 0;
  bool required = false;  // else forbidden
  template <class A>
  void serialize(A& a) {
    a(u, v, required);
  }
};

struct Subproblem {
  std::vector<Decision> decisions;  // from the root
  std::vector<double> penalties;    // the parent's, a warm start
  double bound = 0;                 // the parent's
  template <class A>
  void serialize(A& a) {
    a(decisions, penalties, bound);
  }
};

struct SearchOptions {
  int root_iterations = 0;  // subgradient steps at the root; 0: 10 n, at least 300
  int node_iterations = 0;  // at other nodes, from the root's first step; 0: n / 2, at least 30
  bool first_tour = true;   // start from initial_tour's length (else from none: the search finds all)
};

// What every expansion needs besides the instance: set by the root's bound, shared by all workers.
struct SearchSettings {
  int node_iterations = 0;
  double first_step = 0;
  template <class A>
  void serialize(A& a) {
    a(node_iterations, first_step);
  }
};

class Search {
 public:
  Search(const Instance& instance, SearchSettings settings) : instance_(instance), settings_(settings) {}
  // The root subproblem, bounded, the settings its bound gives the search, and the 1-trees it took.
  static std::tuple<Subproblem, SearchSettings, long> root(const Instance& instance, SearchOptions options = {});

  const Instance& instance() const { return instance_; }
  const SearchSettings& settings() const { return settings_; }

  struct Expansion {
    bool pruned = false;               // no tour of it beats the upper bound
    Tour tour{};                       // a tour of it shorter than the upper bound (then no children)
    std::vector<Subproblem> children{};  // else: the edge required, then forbidden (taken first)
    long trees = 0;                    // 1-trees its bound computed
  };
  Expansion expand(const Subproblem& s, long upper_bound) const;

 private:
  const Instance& instance_;
  SearchSettings settings_;
};

// A worker's subproblems: taken depth first from the back, given away from the front (the shallowest,
// the largest subtrees).
class Frontier {
 public:
  template <class A>
  void serialize(A& a) {
    a(open_);
  }
  void push(Subproblem s) { open_.push_back(std::move(s)); }
  std::size_t size() const { return open_.size(); }
  bool empty() const { return open_.empty(); }
  // Expands subproblems until their bounds have computed `trees` 1-trees (a measure of time that
  // does not depend on the clock) or none is left; `best` and `tour` improve with what it finds.
  struct Ran {
    long expanded = 0, trees = 0;
    long branched = 0;  // of the expanded, those that had children (two each)
  };
  Ran run(const Search& search, long trees, long& best, Tour& tour);
  // Expands the deepest subproblem (one, if any is left).
  Ran step(const Search& search, long& best, Tour& tour);
  // Up to `count` subproblems from the front, for another worker.
  std::vector<Subproblem> give(std::size_t count);
  // What is left, all of it (a worker that leaves hands it on).
  std::vector<Subproblem> take_all();

 private:
  std::deque<Subproblem> open_;
};

struct Solution {
  Tour tour;
  long length = 0;
  long nodes = 0;  // subproblems expanded
};
// The whole search on this thread (the tests' reference, and the serial figure of the benchmark).
Solution solve_serial(const Instance& instance, SearchOptions options = {});

}  // namespace tsp
