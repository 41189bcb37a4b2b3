// ReSHAPE's profiler and strategies on scenarios with a known decision: least-impact picks the job
// that loses least, fair-contract rotates, max-benefit leaves idle nodes to a job of higher potential
// that reaches its resize point first, priorities keep a higher class from shrinking for a lower one.
#include <dps/cluster/reshape.hpp>
#include <dps/cluster/schedulers.hpp>
#include <dps/cluster/simulation.hpp>
#include <dps/cluster/speedup.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace dps::cluster {
namespace {

Job malleable(std::uint64_t id, double seconds, double alpha, std::size_t size = 4, long iterations = 8) {
  return Job{.id = id, .kind = JobKind::Malleable, .submit = 0, .size = size, .walltime = 1e6, .iterations = iterations,
             .iteration_s = seconds, .alpha = alpha, .topology = ProcessorTopology::Arbitrary, .step = 4};
}

Job rigid(std::uint64_t id, double submit, std::size_t size, double runtime) {
  return Job{.id = id, .kind = JobKind::Rigid, .submit = submit, .size = size, .walltime = runtime, .runtime = runtime};
}

// Results point into their workload's jobs: kept here, their buffer moves with them.
struct Outcome : Results {
  std::vector<Job> jobs_kept;
};

Outcome run(const std::string& scheduler, std::vector<Job> jobs, std::size_t nodes) {
  Workload w{.jobs = std::move(jobs), .nodes = nodes, .classes = {{"normal", 0}}};
  auto s = scheduler_named(scheduler);
  Outcome r{Simulation(w, *s).run(), std::move(w.jobs)};
  return r;
}

const JobRecord& record(const Results& r, std::uint64_t id) {
  for (const JobRecord& j : r.jobs)
    if (j.job->id == id) return j;
  throw std::out_of_range("no job " + std::to_string(id));
}

std::size_t size_at(const JobRecord& j, double t) {  // its size just after time t
  std::size_t size = 0;
  for (const auto& [from, nodes] : j.sizes)
    if (from <= t) size = nodes;
  return size;
}

TEST(Profile, FitsALineThenAQuadraticAndMeasuresPotentialAsAnElasticity) {
  EXPECT_NEAR(fitted_slope({{1, 3}, {3, 7}}, 2), 2, 1e-12);
  EXPECT_NEAR(fitted_slope({{1, 1}, {2, 4}, {4, 16}}, 3), 6, 1e-9) << "x² through three points";
  EXPECT_NEAR(fitted_slope({{10, 100}, {20, 400}, {30, 900}, {40, 1600}}, 25), 50, 1e-9) << "least squares, exact";
  Profile p(35);
  p.record(35, 8);
  EXPECT_FALSE(p.potential(3)) << "one size: no prediction";
  EXPECT_TRUE(p.benefited());
  EXPECT_FALSE(p.impact());
  p.grew(45);
  const double t45 = 8 / SyntheticSpeedup::factor(35, 45, 0.8);
  p.record(45, t45);
  EXPECT_TRUE(p.benefited());
  EXPECT_NEAR(*p.potential(3), (8 - t45) / 10 * 45 / t45, 1e-12);
  EXPECT_NEAR(*p.impact(), 8 / t45 - 1, 1e-12);
  p.grew(55);
  p.record(55, t45 * 1.01);  // slower: the growth did not pay
  EXPECT_FALSE(p.benefited());
  p.shrank();
  EXPECT_EQ(p.size(), 45u);
  EXPECT_EQ(p.previous(), 35u);
  p.shrank();
  EXPECT_THROW(p.shrank(), std::logic_error) << "never below the start size";
}

// A, B and C (4 nodes each) all grow to 8 at their first resize point and fill the 24 nodes; once
// each has reported its time at 8, Q (4 nodes) queues. Going back to 4 costs A 100 % (alpha 1), B
// 41 %, C 15 %: least-impact takes C's 4 nodes and only C's, though A and B reach resize points first.
TEST(Reshape, LeastImpactShrinksTheJobThatLosesLeast) {
  for (const char* scenario : {"pba-q", "fcfs-li-q", "pba-pr"}) {
    const Outcome r = run(scenario, {malleable(1, 10, 1.0), malleable(2, 11, 0.5), malleable(3, 12, 0.2), rigid(4, 23, 4, 100)}, 24);
    const JobRecord &a = record(r, 1), &b = record(r, 2), &c = record(r, 3), &q = record(r, 4);
    const double c_third = 12 + 2 * 12 / SyntheticSpeedup::factor(4, 8, 0.2);
    EXPECT_EQ(size_at(c, 12), 8u) << scenario;
    EXPECT_NEAR(q.start, c_third, 1e-9) << scenario << ": Q starts on the nodes C gives back at its third point";
    EXPECT_EQ(size_at(c, c_third), 4u) << scenario;
    EXPECT_EQ(size_at(a, c_third), 8u) << scenario << ": A reached a resize point at 25 and kept its nodes";
    EXPECT_EQ(size_at(b, c_third), 8u) << scenario << ": so did B at 26.6";
  }
}

// The same three jobs grown to 12 nodes each (36), then Q needs 12. A's iterations are short: under
// FCFS-contract it would shrink at every resize point; fair-contract shrinks it once, then waits for
// B and C to shrink before A's turn comes again.
TEST(Reshape, FairContractShrinksEveryJobOnceBeforeAnyTwice) {
  auto jobs = [] {
    return std::vector<Job>{malleable(1, 2, 0.9, 4, 60), malleable(2, 10, 0.9, 4, 12), malleable(3, 10.5, 0.9, 4, 12),
                            rigid(4, 40, 12, 100)};
  };
  auto shrinks = [](const Results& r) {  // (time, job) of every shrink after Q arrives, in time order
    std::vector<std::pair<double, std::uint64_t>> v;
    for (const JobRecord& j : r.jobs)
      for (std::size_t k = 1; k < j.sizes.size(); ++k)
        if (j.sizes[k].second < j.sizes[k - 1].second && j.sizes[k].first >= 40) v.emplace_back(j.sizes[k].first, j.job->id);
    std::sort(v.begin(), v.end());
    return v;
  };
  const Outcome fair = run("fair-q", jobs(), 36);
  for (std::uint64_t id : {1, 2, 3}) ASSERT_EQ(size_at(record(fair, id), 39.9), 12u) << "job " << id << " grew twice";
  const auto rounds = shrinks(fair);
  ASSERT_GE(rounds.size(), 3u);
  std::set<std::uint64_t> first_round;
  for (std::size_t k = 0; k < 3; ++k) first_round.insert(rounds[k].second);
  EXPECT_EQ(first_round, (std::set<std::uint64_t>{1, 2, 3})) << "each once, A among them";
  EXPECT_NEAR(record(fair, 4).start, rounds[2].first, 1e-9) << "Q starts when the third shrink frees its 12th node";

  const Outcome fcfs = run("fcfs-pr", jobs(), 36);
  const auto greedy = shrinks(fcfs);
  ASSERT_GE(greedy.size(), 2u);
  EXPECT_EQ(greedy[0].second, 1u);
  EXPECT_EQ(greedy[1].second, 1u) << "FCFS-contract: A again, before B or C reach a resize point";
}

// J (alpha 0.5) and K (alpha 1) grew to 8 and fill the cluster with R (4 nodes, until 19). When R
// ends, J reaches its resize point first, at 21.7; K, of higher potential, reaches its own at 24,
// before J's next. Max-benefit keeps the 4 idle nodes for K; FCFS-expand gives them to J.
TEST(Reshape, MaxBenefitLeavesIdleNodesToAHigherPotentialJobThatComesFirst) {
  auto jobs = [] { return std::vector<Job>{malleable(1, 9, 0.5), malleable(2, 12, 1.0), rigid(3, 0, 4, 19)}; };
  const double j_third = 9 + 2 * 9 / SyntheticSpeedup::factor(4, 8, 0.5);
  const double k_third = 12 + 2 * 12 / SyntheticSpeedup::factor(4, 8, 1.0);
  ASSERT_LT(j_third, k_third);
  for (const char* scenario : {"pba-q", "max-b-pr"}) {
    const Outcome r = run(scenario, jobs(), 20);
    EXPECT_EQ(size_at(record(r, 1), j_third), 8u) << scenario << ": J keeps its size";
    EXPECT_EQ(size_at(record(r, 2), k_third), 12u) << scenario << ": K grows into the nodes kept for it";
    EXPECT_EQ(size_at(record(r, 2), k_third - 1e-9), 8u) << scenario;
  }
  const Outcome fcfs = run("greedy-r", jobs(), 20);
  EXPECT_EQ(size_at(record(fcfs, 1), j_third), 12u) << "FCFS-expand: J, first at a resize point, grows";
  EXPECT_EQ(size_at(record(fcfs, 2), k_third), 8u);
}

// Uniform-expand grows a job only when the idle nodes could grow every running job. On 16 nodes J
// grows to 8 at 9 (K has not reported yet) and fills the cluster with K (4) and R (4, until 19); at
// J's third resize point, 21.7, the 4 idle nodes could grow J or K, not both: J keeps its size under
// fair-r, where FCFS-expand (greedy-r) grows it. On 20 nodes, 8 are idle then and J grows.
TEST(Reshape, UniformExpandGrowsOnlyWhenEveryJobCould) {
  auto jobs = [] { return std::vector<Job>{malleable(1, 9, 0.5), malleable(2, 12, 1.0), rigid(3, 0, 4, 19)}; };
  const double j_third = 9 + 2 * 9 / SyntheticSpeedup::factor(4, 8, 0.5);
  const Outcome short_of = run("fair-r", jobs(), 16);
  EXPECT_EQ(size_at(record(short_of, 1), 9), 8u);
  EXPECT_EQ(size_at(record(short_of, 1), j_third), 8u);
  EXPECT_EQ(size_at(record(short_of, 2), j_third), 4u);
  const Outcome greedy = run("greedy-r", jobs(), 16);
  EXPECT_EQ(size_at(record(greedy, 1), j_third), 12u);
  const Outcome enough = run("fair-r", jobs(), 20);
  EXPECT_EQ(size_at(record(enough, 1), j_third), 12u) << "8 idle: both could grow";
  EXPECT_EQ(size_at(record(enough, 2), j_third), 4u) << "K could not at 12: J's growth and its own needed 8 of 4";
}

// A growth that did not pay is undone and its size is the sweet spot: the job never grows again.
// Job 1's iterations at 8 nodes take as long as at 4 (alpha tiny: the model's factor is ~1).
TEST(Reshape, AGrowthThatDidNotPayIsUndoneAndTheJobStaysAtItsSweetSpot) {
  struct Flat final : Scheduler {  // delegates, but reports the same time at every size
    std::unique_ptr<ReshapeScheduler> inner = ReshapeScheduler::scenario("greedy-r");
    std::string name() const override { return "flat"; }
    void schedule(Cluster& c) override { inner->schedule(c); }
    std::size_t resize(Cluster& c, const Running& j, const ResizePoint& p) override {
      ResizePoint same = p;
      same.iteration_seconds = 10;
      return inner->resize(c, j, same);
    }
    void ended(Cluster& c, const Running& j) override { inner->ended(c, j); }
  };
  const Workload w{.jobs = {malleable(1, 10, 0.5, 4, 6)}, .nodes = 64, .classes = {{"normal", 0}}};
  Flat flat;
  const Results r = Simulation(w, flat).run();
  const auto& sizes = r.jobs[0].sizes;
  ASSERT_EQ(sizes.size(), 3u) << "4, grown to 8, back to 4, kept";
  EXPECT_EQ(sizes[1].second, 8u);
  EXPECT_EQ(sizes[2].second, 4u);
}

// With priorities, a platinum job is not shrunk for a gold one in the queue; a gold one is. Both grew
// to 8 of the 20 nodes (platinum first: max-benefit-priority keeps 4 nodes for it); Q needs 8.
TEST(Reshape, AHigherClassIsNeverShrunkForALowerOne) {
  auto jobs = [](double queued_priority) {
    Job platinum = malleable(1, 10, 0.5), gold = malleable(2, 12, 0.5);
    platinum.priority = 1000;
    Job queued = rigid(3, 13, 8, 50);
    queued.priority = queued_priority;
    return std::vector<Job>{platinum, gold, queued};
  };
  const double platinum_second = 10 + 10 / SyntheticSpeedup::factor(4, 8, 0.5);
  const double gold_second = 12 + 12 / SyntheticSpeedup::factor(4, 8, 0.5);
  const Outcome low = run("fcfs-pr", jobs(0), 20);
  EXPECT_EQ(size_at(record(low, 2), 12), 8u);
  EXPECT_GE(size_at(record(low, 1), platinum_second), 8u) << "platinum keeps its nodes for a gold job";
  EXPECT_EQ(size_at(record(low, 2), gold_second), 4u) << "gold shrinks";
  EXPECT_GT(record(low, 3).start, gold_second);
  const Outcome high = run("fcfs-pr", jobs(1000), 20);
  EXPECT_EQ(size_at(record(high, 1), platinum_second), 4u) << "for a platinum job, platinum shrinks too";
  EXPECT_NEAR(record(high, 3).start, platinum_second, 1e-9);
}

// Aging priority (Moab's): the queue is ordered by 1 + wait / walltime, plus the user's priority.
TEST(Reshape, AgingPriorityOrdersTheQueue) {
  // Both wait from 1 to 10 behind a job holding every node: the short one's Qfactor grows faster.
  const std::vector<Job> jobs{rigid(1, 0, 4, 10), rigid(2, 1, 4, 1000), rigid(3, 1, 4, 20)};
  const Outcome by_submit = run("easy", jobs, 4);
  EXPECT_EQ(record(by_submit, 2).start, 10);
  const Outcome by_priority = run("pba-pr", jobs, 4);
  EXPECT_EQ(record(by_priority, 3).start, 10) << "its Qfactor: 1 + 9/20 against 1 + 9/1000";
  auto pba = ReshapeScheduler::scenario("pba-pr");
  EXPECT_THROW(ReshapeScheduler::scenario("pba"), std::invalid_argument);
  EXPECT_EQ(ReshapeScheduler::scenarios().size(), 8u);
}

}  // namespace
}  // namespace dps::cluster
