// The parallel search as flow graphs. Worker threads each hold a frontier of subproblems; a conductor
// on node 0 runs rounds. In a round every worker expands subproblems from its own frontier until
// their bounds have cost a budget of 1-trees, then reports its best tour and what is left; the
// conductor keeps the best tour, tops up from its pool the workers left with little work, and asks the
// others for their shallowest subproblems to refill the pool:
//
//   Open (split, conductor)      a segment starts: the pool's subproblems go to the workers
//   Expand (split, worker)       takes what it is given, expands its budget, gives what it is asked;
//                                a shorter tour's length goes at once to every other worker
//   Deliver (leaf, addressee)    a worker learns the bound (between two of its own expansions)
//   Hand (merge, worker)         the round's notes delivered: its report
//   Next (stream, conductor)     the round's reports, in worker order: the next round's work
//   Close (merge, conductor)     the segment's last reports: the best tour, what is left
//
// Expand is a split, not a leaf, so that it can yield between expansions and let the bounds in.
// The conductor's plan depends only on the reports, taken in worker order; the bounds shared
// mid-round depend on timing, so `share = false` (--reproducible) keeps them to the round's end:
// then a search is the same tree whatever the timing, real or simulated. The start and each round
// are phases of the trace. Between segments (resize points) workers may be added or removed; a
// removed worker's frontier comes back to the pool.
//
//   tsp::Solver solver(app, workers, conductor);
//   tsp::Start s = solver.start(instance, 10 * instance.n);
//   tsp::Progress p = solver.run({.rounds = 16, .first_round = 0, .budget = 5000, .workers = 4, .share = true,
//                                 .settings = s.settings, .best = s.length, .tour = s.tour, .handed = s.open});
#pragma once

#include "search.hpp"
#include "tour.hpp"
#include "tsplib.hpp"

#include <dps/dps.hpp>
#include <dps/resize_policy.hpp>

#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <limits>
#include <map>
#include <optional>
#include <vector>

namespace tsp {

template <class A>
void serialize(A& a, Instance& i) {
  a(i.name, i.comment, i.n, i.distances);
}

// A worker thread's state.
struct Worker {
  Instance instance;
  Frontier frontier;
  long bound = std::numeric_limits<long>::max();  // the shortest tour length it knows of, anyone's
  template <class A>
  void serialize(A& a) {
    a(instance, frontier, bound);
  }
};

// What the search starts from: the instance, its workers, the local search's kicks in all; cold:
// no first tour at all.
struct Begin {
  Instance instance;
  std::size_t workers = 1;
  int kicks = 0;
  bool cold = false;
  template <class A>
  void serialize(A& a) {
    a(instance, workers, kicks, cold);
  }
};

// Where the search starts: the first tour (nearest neighbours on node 0, then the workers' iterated
// local searches, seeded each its own way), the root bounded and split on node 0 until every worker
// can have two subproblems. All in operations: real and simulated runs count them.
struct Start {
  Tour tour{};
  long length = 0;
  double root_bound = 0;
  SearchSettings settings;
  std::vector<Subproblem> open;  // the root's descendants left to search
  long expanded = 0, branched = 0;  // subproblems the split expanded, and those with children
  template <class A>
  void serialize(A& a) {
    a(tour, length, root_bound, settings, open, expanded, branched);
  }
};

// What a segment of rounds starts from, and what it ends with.
struct Segment {
  long rounds = 1;
  long first_round = 0;             // rounds before this segment (the trace's phases are numbered on)
  long budget = 5000;               // 1-trees a worker's bounds compute per round (a time, counted)
  std::size_t workers = 0;
  bool share = true;                // shorter tours' lengths reach the other workers mid-round
  SearchSettings settings;
  long best = 0;                    // the best tour length known
  Tour tour;
  std::vector<Subproblem> handed;   // for the pool: the root, or removed workers' frontiers
  template <class A>
  void serialize(A& a) {
    a(rounds, first_round, budget, workers, share, settings, best, tour, handed);
  }
};
struct Progress {
  long best = 0;
  Tour tour;
  long expanded = 0;   // subproblems expanded in the segment
  long branched = 0;   // of them, those that had children (two each)
  long trees = 0;      // 1-trees computed in the segment
  long shared = 0;     // shorter tours whose lengths were sent to the other workers mid-round
  std::size_t open = 0;  // subproblems left, in frontiers and the pool
  template <class A>
  void serialize(A& a) {
    a(best, tour, expanded, branched, trees, shared, open);
  }
};

// The conductor's state.
struct Conductor {
  Segment segment;
  long round = 0;
  std::vector<Subproblem> pool;
  std::vector<std::size_t> open;  // per worker, as last reported
  Progress progress;
  Begin begin;                    // while the start is found
  Start start;
  template <class A>
  void serialize(A& a) {
    a(segment, round, pool, open, progress, begin, start);
  }
};

// What the bound computations cost, charged under partial direct execution: seconds per 1-tree of
// a given number of cities (O(n²)), measured on this machine or given.
struct TreeCost {
  double per_city_squared = 0;
  double of(long trees, int n) const { return per_city_squared * static_cast<double>(trees) * n * n; }
  static TreeCost measure(const Instance& instance);
};
void set_tree_cost(TreeCost cost);
TreeCost tree_cost();  // what partial direct execution charges now

class Solver {
 public:
  Solver(dps::Application& app, dps::Threads<Worker> workers, dps::Threads<Conductor> conductor);
  Start start(const Instance& instance, int kicks, bool cold = false);
  Progress run(const Segment& segment);

 private:
  dps::Application& app_;
  dps::Threads<Worker> workers_;
  dps::Threads<Conductor> conductor_;
  dps::Graph<Begin, Start> start_;
  std::map<long, dps::Graph<Segment, Progress>> graphs_;  // by rounds
};

// The whole search on an application's threads, resized at the given rounds.
struct SolveOptions {
  std::size_t threads = 1;    // worker threads at the start
  std::size_t per_node = 1;   // worker threads per node: thread i on the (i / per_node)-th node of the job
  long budget = 0;            // 1-trees per worker and round; 0: about 15 ms of them
  long rounds = 16;           // rounds per call of the search graph
  std::map<long, std::size_t> resizes;  // after that many rounds, that many worker threads
  // Or asked at every segment's end (a resize point), as of an iteration: how long a round's budget
  // of bounds on one worker took (less as more workers share the search), and the last handover.
  dps::ResizePolicy* policy = nullptr;
  int kicks = 0;              // of the iterated local search, over all workers; 0: 10 n
  bool cold = false;          // no first tour: the search finds every tour itself
  bool reproducible = false;  // tours found mid-round reach the others at its end: the same tree every run
};
struct Resized {
  long after = 0;
  std::size_t threads = 0, handed = 0;  // subproblems the removed threads handed on
  std::size_t nodes = 0;                // the job's, after
};
struct Result {
  Tour tour{};
  long length = 0, explored = 0, rounds = 0, first_tour = 0;  // first_tour: 0 when cold
  long shared = 0;                                            // bounds sent to the others mid-round
  long branched = 0;  // explored subproblems with children: explored = 1 + 2 branched when none is lost or repeated
  double seconds = 0, root_bound = 0;  // seconds: the application's clock (simulated time in a simulation)
  std::vector<Resized> resizes{};
  std::optional<long> restarted_from{};  // under --restart: the rounds the checkpoint had done
};
Result solve(dps::Application& app, const Instance& instance, const SolveOptions& options);

}  // namespace tsp
