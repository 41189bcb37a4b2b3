// The TSP application (apps/tsp): the 1-tree bound against brute force, the constraints' propagation,
// the search against dynamic programming, and every TSPLIB instance of data/tsplib solved to its
// optimum by 1, 2 and 4 workers, resized mid-search, none of their subproblems lost or explored twice,
// in-process and in the simulator (the same tree).
#include <dps/dps.hpp>
#include <dps/sim/sim_backend.hpp>

#include "one_tree.hpp"
#include "search.hpp"
#include "solver.hpp"
#include "tsplib.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using tsp::Constraints;
using State = tsp::Constraints::State;

// Euclidean cities on a span × span square, or (span 0) any symmetric weights from 1 to 100.
tsp::Instance random_instance(int n, unsigned seed, double span) {
  std::mt19937 g(seed);
  std::vector<int> d(static_cast<std::size_t>(n * n));
  std::vector<double> x(static_cast<std::size_t>(n)), y(x);
  for (int i = 0; i < n; ++i)
    x[static_cast<std::size_t>(i)] = std::uniform_real_distribution<double>(0, span)(g), y[static_cast<std::size_t>(i)] = std::uniform_real_distribution<double>(0, span)(g);
  for (int i = 0; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const int w = span > 0 ? tsp::euc_2d(x[static_cast<std::size_t>(i)], y[static_cast<std::size_t>(i)], x[static_cast<std::size_t>(j)], y[static_cast<std::size_t>(j)])
                             : std::uniform_int_distribution<int>(1, 100)(g);
      d[static_cast<std::size_t>(i * n + j)] = d[static_cast<std::size_t>(j * n + i)] = w;
    }
  return tsp::Instance::from_matrix("random" + std::to_string(n), n, std::move(d));
}

long brute_force(const tsp::Instance& in) {
  tsp::Tour t(static_cast<std::size_t>(in.n));
  for (int i = 0; i < in.n; ++i) t[static_cast<std::size_t>(i)] = i;
  long best = LONG_MAX;
  do best = std::min(best, tsp::tour_length(in, t));
  while (std::next_permutation(t.begin() + 1, t.end()));
  return best;
}

// Held and Karp's dynamic programme: the optimum in O(2^n n²).
long dynamic_programming(const tsp::Instance& in) {
  const int m = in.n - 1;  // cities 1..n-1 as bits
  std::vector<long> f(static_cast<std::size_t>(1 << m) * static_cast<std::size_t>(m), LONG_MAX / 4);
  const auto at = [&](int set, int j) -> long& { return f[static_cast<std::size_t>(set) * static_cast<std::size_t>(m) + static_cast<std::size_t>(j)]; };
  for (int j = 0; j < m; ++j) at(1 << j, j) = in.distance(0, j + 1);
  for (int set = 1; set < (1 << m); ++set)
    for (int j = 0; j < m; ++j)
      if ((set >> j & 1) && at(set, j) < LONG_MAX / 4)
        for (int k = 0; k < m; ++k)
          if (!(set >> k & 1)) at(set | 1 << k, k) = std::min(at(set | 1 << k, k), at(set, j) + in.distance(j + 1, k + 1));
  long best = LONG_MAX;
  for (int j = 0; j < m; ++j) best = std::min(best, at((1 << m) - 1, j) + in.distance(j + 1, 0));
  return best;
}

TEST(OneTree, TheBoundNeverPassesTheOptimumAndIsItWhenTheTreeIsATour) {
  int tours = 0;
  for (unsigned seed = 1; seed <= 60; ++seed) {
    const tsp::Instance in = random_instance(9, seed, seed % 2 ? 1000.0 : 0.0);
    const long optimum = brute_force(in);
    std::vector<double> pi(9);
    const tsp::Bound b = tsp::held_karp(in, Constraints(9), pi, {.iterations = 300});
    ASSERT_TRUE(b.feasible);
    EXPECT_LE(b.value, static_cast<double>(optimum) + 1e-9) << "seed " << seed;
    if (!b.tour.empty()) {
      ++tours;
      tsp::check_tour(in, b.tour);
      EXPECT_EQ(tsp::tour_length(in, b.tour), optimum) << "seed " << seed;
      EXPECT_EQ(b.value, static_cast<double>(optimum)) << "seed " << seed;
    }
  }
  EXPECT_GT(tours, 5);  // the equal case happens, and is checked
}

TEST(OneTree, ConstraintsPropagateWhatTheyImply) {
  Constraints c(5);
  ASSERT_TRUE(c.require(0, 1));
  ASSERT_TRUE(c.require(1, 2));
  EXPECT_EQ(c.at(1, 3), State::Forbidden);  // city 1 has its two edges
  EXPECT_EQ(c.at(1, 4), State::Forbidden);
  EXPECT_EQ(c.at(0, 2), State::Forbidden);  // it would close 0-1-2 early
  ASSERT_TRUE(c.require(2, 3));
  // City 4 is left with edges to 0 and 3 only (1 and 2 are full): both required, the tour is closed.
  EXPECT_EQ(c.at(4, 0), State::Required);
  EXPECT_EQ(c.at(4, 3), State::Required);
  EXPECT_EQ(c.at(0, 3), State::Forbidden);
  EXPECT_FALSE(c.forbid(0, 1));  // a required edge
  Constraints three(4);  // forbidding two edges of a city of 4 leaves it one: no tour
  ASSERT_TRUE(three.forbid(0, 1));
  EXPECT_EQ(three.at(0, 2), State::Required);  // two left: both needed
  EXPECT_EQ(three.at(0, 3), State::Required);
  EXPECT_FALSE(three.forbid(0, 2));
}

TEST(Search, FindsTheDynamicProgrammingOptimumFromNoTour) {
  for (unsigned seed = 1; seed <= 40; ++seed) {
    const int n = 8 + static_cast<int>(seed % 6);
    const tsp::Instance in = random_instance(n, seed, seed % 3 == 0 ? 0.0 : seed % 3 == 1 ? 1000.0 : 20.0);
    const tsp::Solution s = tsp::solve_serial(in, {.first_tour = false});
    tsp::check_tour(in, s.tour);
    EXPECT_EQ(s.length, dynamic_programming(in)) << "n " << n << ", seed " << seed;
    EXPECT_EQ(tsp::tour_length(in, s.tour), s.length);
  }
}

std::unique_ptr<dps::Application> application(bool simulated, bool pdexec = false) {
  if (!simulated) return std::make_unique<dps::Application>(dps::ApplicationOptions{.nodes = 3});
  dps::sim::ClusterModel model;
  model.groups = {dps::sim::NodeGroup{"node", 8, 2, 1.0}};  // 3 at the start, more as workers need them
  model.network.latency = 5e-5;
  model.network.bandwidth = 1e9;
  return std::make_unique<dps::Application>(std::make_unique<dps::sim::SimBackend>(model, dps::sim::SimOptions{.pdexec = pdexec, .nodes = 3}));
}

// 1, 2 and 4 workers, without a first tour (the search finds them all: larger trees), small rounds so
// that work moves between workers, and resizes: 4 -> 1 -> 3 and 2 -> 4 -> 1 -> 2 mid-search.
const std::vector<tsp::SolveOptions> kRuns = {
    {.threads = 1, .per_node = 1, .budget = 60, .rounds = 3, .resizes = {}, .cold = true},
    {.threads = 2, .per_node = 1, .budget = 60, .rounds = 3, .resizes = {}, .cold = true},
    {.threads = 4, .per_node = 1, .budget = 60, .rounds = 3, .resizes = {{3, 1}, {6, 3}}, .cold = true},
    {.threads = 2, .per_node = 1, .budget = 30, .rounds = 2, .resizes = {{1, 4}, {3, 1}, {4, 2}}, .cold = true},
};

TEST(Tsp, EveryTsplibInstanceReachesItsOptimumOnOneTwoAndFourWorkersResizedInProcess) {
  const auto known = tsp::optima_beside(std::string(DPS_TSPLIB_DIR) + "/eil51.tsp");
  ASSERT_EQ(known.size(), 10u);
  for (const auto& [name, optimum] : known) {
    const tsp::Instance in = tsp::read_tsplib(std::string(DPS_TSPLIB_DIR) + "/" + name + ".tsp");
    for (std::size_t k = 0; k < kRuns.size(); ++k) {
      auto app = application(false);
      const tsp::Result r = tsp::solve(*app, in, kRuns[k]);
      EXPECT_EQ(r.length, optimum) << name << ", run " << k;
      EXPECT_EQ(tsp::tour_length(in, r.tour), optimum) << name << ", run " << k;
      // Every subproblem made is explored once: the root, and two children of each that branched.
      EXPECT_EQ(r.explored, 1 + 2 * r.branched) << name << ", run " << k << ": a subproblem lost or explored twice";
    }
  }
}

// Reproducible, the search depends only on the rounds' reports, so the simulator explores the very
// tree a real run does; with eil51 (hundreds of subproblems) and resizes, subproblems were handed on.
TEST(Tsp, ReproducibleTheSimulatorExploresTheRealTree) {
  const tsp::Instance in = tsp::read_tsplib(std::string(DPS_TSPLIB_DIR) + "/eil51.tsp");
  for (tsp::SolveOptions o : kRuns) {
    o.reproducible = true;
    auto real = application(false);
    auto simulated = application(true);
    const tsp::Result a = tsp::solve(*real, in, o), b = tsp::solve(*simulated, in, o);
    EXPECT_EQ(a.length, 426);
    EXPECT_EQ(b.length, 426);
    EXPECT_EQ(a.explored, b.explored);
    EXPECT_EQ(a.rounds, b.rounds);
    EXPECT_GT(a.explored, 100);
    ASSERT_EQ(a.resizes.size(), b.resizes.size());
    for (std::size_t k = 0; k < a.resizes.size(); ++k) EXPECT_EQ(a.resizes[k].handed, b.resizes[k].handed);
    EXPECT_GT(b.seconds, 0);
  }
}

// A shorter tour's length reaches the other workers between two of their expansions. One round holds
// the whole search, so a bound kept to the round's end would reach no one: the simulator (charged
// bounds, so the same timing every run) explores fewer subproblems when bounds are shared.
TEST(Tsp, ShorterToursReachTheOtherWorkersMidRound) {
  const tsp::Instance in = tsp::read_tsplib(std::string(DPS_TSPLIB_DIR) + "/eil51.tsp");
  tsp::set_tree_cost({4e-9});
  long explored[2] = {}, shared[2] = {};
  for (const bool reproducible : {false, true}) {
    auto app = application(true, true);
    const tsp::Result r = tsp::solve(*app, in, {.threads = 4, .budget = 1L << 40, .rounds = 1, .resizes = {}, .cold = true, .reproducible = reproducible});
    EXPECT_EQ(r.length, 426);
    EXPECT_EQ(r.rounds, 1);
    explored[reproducible] = r.explored, shared[reproducible] = r.shared;
  }
  tsp::set_tree_cost({});
  EXPECT_GT(shared[0], 0);
  EXPECT_EQ(shared[1], 0);
  EXPECT_LT(explored[0], explored[1]);  // 403 against 709 when written
}

// The start and every round are phases of the trace, numbered on across segments and resizes.
TEST(Tsp, TheStartAndEachRoundArePhasesOfTheTrace) {
  const tsp::Instance in = tsp::read_tsplib(std::string(DPS_TSPLIB_DIR) + "/eil51.tsp");
  auto app = application(false);
  dps::MemoryTrace trace;
  app->trace_to(&trace);
  const tsp::Result r = tsp::solve(*app, in, kRuns[2]);
  app->trace_to(nullptr);
  std::vector<std::string> begun, ended;
  for (const auto& p : trace.phases()) (p.begin ? begun : ended).push_back(p.name);
  ASSERT_EQ(begun.size(), static_cast<std::size_t>(r.rounds) + 1);
  EXPECT_EQ(begun, ended);
  EXPECT_EQ(begun.front(), "start");
  for (long k = 1; k <= r.rounds; ++k) EXPECT_EQ(begun[static_cast<std::size_t>(k)], "round " + std::to_string(k));
}

// Answers the k-th resize point from a script, and keeps what it was asked.
struct Scripted final : dps::ResizePolicy {
  std::vector<std::size_t> script;
  std::vector<dps::ResizePoint> seen;
  std::size_t decide(const dps::ResizePoint& point) override {
    seen.push_back(point);
    return seen.size() <= script.size() ? script[seen.size() - 1] : point.size;
  }
};

// A policy decides at every segment's end: the search grows and shrinks as it says, still to the optimum.
TEST(Tsp, AResizePolicyDecidesAtEverySegmentsEnd) {
  const tsp::Instance in = tsp::read_tsplib(std::string(DPS_TSPLIB_DIR) + "/eil51.tsp");
  Scripted policy;
  policy.script = {3, 1, 2};
  auto app = application(false);
  const tsp::Result r = tsp::solve(*app, in, {.threads = 2, .budget = 30, .rounds = 2, .resizes = {}, .policy = &policy, .cold = true});
  EXPECT_EQ(r.length, 426);
  ASSERT_GE(policy.seen.size(), 4u) << "a resize point every 2 rounds";
  ASSERT_EQ(r.resizes.size(), 3u);
  const std::size_t sizes[] = {2, 3, 1, 2};
  for (std::size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(policy.seen[k].iteration, 2 * static_cast<long>(k + 1));
    EXPECT_EQ(policy.seen[k].size, sizes[k]);
    EXPECT_GT(policy.seen[k].iteration_seconds, 0);
    EXPECT_EQ(policy.seen[k].redistribution_seconds > 0, k > 0) << "the last handover's time, once there was one";
    if (k < 3) {
      EXPECT_EQ(r.resizes[k].threads, sizes[k + 1]);
    }
  }
  EXPECT_GT(r.resizes[1].handed, 0u) << "the two removed workers' subproblems";
  EXPECT_EQ(r.explored, 1 + 2 * r.branched) << "a subproblem lost or explored twice";
  dps::ReshapePolicy reshape(dps::ProcessorTopology::Arbitrary, 4);
  EXPECT_THROW(tsp::solve(*app, in, {.threads = 1, .resizes = {{2, 2}}, .policy = &reshape}), std::invalid_argument);
}

// Workers removed mid-search hand their subproblems on: none lost (the optimum is still proven, above),
// and some were handed (else the test would not test it).
TEST(Tsp, RemovedWorkersHandTheirSubproblemsOn) {
  const tsp::Instance in = tsp::read_tsplib(std::string(DPS_TSPLIB_DIR) + "/eil51.tsp");
  auto app = application(false);
  const tsp::Result r = tsp::solve(*app, in, kRuns[2]);
  ASSERT_EQ(r.resizes.size(), 2u);
  EXPECT_EQ(r.resizes[0].threads, 1u);
  EXPECT_GT(r.resizes[0].handed, 0u);
  EXPECT_EQ(r.length, 426);
}

}  // namespace
