// The cluster simulation's event loop: malleable jobs at their resize points, walltime kills,
// schedulers that err, determinism.
#include <dps/cluster/backfilling.hpp>
#include <dps/cluster/reshape.hpp>
#include <dps/cluster/gantt.hpp>
#include <dps/trace/reader.hpp>
#include <dps/trace/statistics.hpp>
#include <dps/cluster/simulation.hpp>
#include <dps/cluster/speedup.hpp>

#include <gtest/gtest.h>

#include <map>

namespace dps::cluster {
namespace {

Job malleable(std::uint64_t id, double submit, std::size_t size, long iterations, double seconds, double walltime = 1e6) {
  return Job{.id = id, .kind = JobKind::Malleable, .submit = submit, .size = size, .walltime = walltime,
             .iterations = iterations, .iteration_s = seconds};
}

// Answers resize points from a script: job id -> the sizes to take at its 1st, 2nd, ... point.
struct Scripted final : Scheduler {
  std::map<std::uint64_t, std::vector<std::size_t>> script;
  std::vector<ResizePoint> seen;
  std::string name() const override { return "scripted"; }
  void schedule(Cluster& c) override { easy_backfill(c, c.queue()); }
  std::size_t resize(Cluster&, const Running& job, const ResizePoint& point) override {
    seen.push_back(point);
    const auto& sizes = script[job.job->id];
    const auto k = static_cast<std::size_t>(point.iteration - 1);
    return k < sizes.size() ? sizes[k] : point.size;
  }
};

TEST(ClusterSimulation, AMalleableJobGoesOnAtTheSizeItIsGivenAndRunsAsTheModelSays) {
  Job j = malleable(1, 0, 4, 4, 10);
  j.redistribution_s = 1;
  const Workload w{.jobs = {j}, .nodes = 16, .classes = {{"normal", 0}}};
  Scripted s;
  s.script[1] = {8, 6, 8};
  const Results r = Simulation(w, s).run();
  SyntheticSpeedup model(4, 10, 0.8);
  const double t8 = model.resize(4, 8), t6 = model.resize(8, 6);
  // 10 s at 4, resize (1 s), t8 at 8, resize, t6 at 6, resize, t8 at 8 again (remembered).
  EXPECT_DOUBLE_EQ(r.jobs[0].end, 10 + 1 + t8 + 1 + t6 + 1 + t8);
  ASSERT_EQ(r.jobs[0].sizes.size(), 4u);
  EXPECT_EQ(r.jobs[0].sizes[1].second, 8u);
  EXPECT_DOUBLE_EQ(r.jobs[0].sizes[1].first, 10);
  EXPECT_EQ(r.jobs[0].sizes[2].second, 6u);
  EXPECT_EQ(r.resizes, 3u);
  ASSERT_EQ(s.seen.size(), 3u) << "no point after the last iteration";
  EXPECT_EQ(s.seen[0].iteration_seconds, 10);
  EXPECT_EQ(s.seen[0].redistribution_seconds, 0) << "not resized yet";
  EXPECT_DOUBLE_EQ(s.seen[1].iteration_seconds, t8);
  EXPECT_EQ(s.seen[1].size, 8u);
  EXPECT_EQ(s.seen[1].redistribution_seconds, 1);
  EXPECT_DOUBLE_EQ(r.jobs[0].node_seconds(), 4 * 10 + 8 * (1 + t8) + 6 * (1 + t6) + 8 * (1 + t8));
}

TEST(ClusterSimulation, AStaticJobIsNotAskedAndAMalleableOneIsKilledAtItsWalltime) {
  Job fixed = malleable(1, 0, 2, 3, 10);
  fixed.resizable = false;
  const Job slow = malleable(2, 0, 2, 10, 10, 45);
  const Workload w{.jobs = {fixed, slow}, .nodes = 4, .classes = {{"normal", 0}}};
  Scripted s;
  s.script[1] = {4};
  const Results r = Simulation(w, s).run();
  EXPECT_EQ(r.jobs[0].end, 30);
  EXPECT_EQ(r.jobs[0].sizes.size(), 1u);
  EXPECT_TRUE(r.jobs[1].killed);
  EXPECT_EQ(r.jobs[1].end, 45);
  for (const ResizePoint& p : s.seen) EXPECT_LE(p.iteration, 4) << "job 2 was asked after its 1st to 4th iterations only";
}

TEST(ClusterSimulation, AGrowthBeyondTheIdleNodesIsRefusedNamingTheScheduler) {
  const Workload w{.jobs = {malleable(1, 0, 4, 3, 10), malleable(2, 0, 4, 3, 10)}, .nodes = 10, .classes = {{"normal", 0}}};
  Scripted s;
  s.script[1] = {7};
  try {
    Simulation(w, s).run();
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "scheduler scripted: grew job 1 by 3 nodes, 2 are idle");
  }
  s.script[1] = {0};
  EXPECT_THROW(Simulation(w, s).run(), std::runtime_error);
}

TEST(ClusterSimulation, SameSeedSameScheduleOtherSeedOtherSchedule) {
  auto run = [](std::uint64_t seed) {
    Workload w{.jobs = reshape_mix({.jobs = 200, .seed = seed}, 0, 0), .nodes = 400, .classes = {{"gold", 0}}};
    ConservativeBackfilling s;
    Simulation simulation(w, s, {.gantt = true});
    Results r = simulation.run();
    std::vector<double> starts;
    for (const JobRecord& j : r.jobs) starts.push_back(j.start);
    std::vector<Node> nodes;
    for (const Segment& g : simulation.gantt().segments) nodes.push_back(g.node);
    return std::pair(starts, nodes);
  };
  const auto a = run(3), b = run(3), c = run(4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a.first, c.first);
}

// The trace dps-viewer shows: a step per node and job, the resizes marked, the utilization and queue
// length as counters, whose mean utilization is the run's.
TEST(ClusterSimulation, TheTraceHoldsTheGanttChartTheResizesAndTheCounters) {
  const Workload w{.jobs = reshape_mix({.jobs = 60, .seed = 2}, 0, 0), .nodes = 400, .classes = {{"gold", 0}}};
  auto pba = ReshapeScheduler::scenario("pba-q");
  Simulation simulation(w, *pba, {.gantt = true});
  const Results r = simulation.run();
  ASSERT_GT(r.resizes, 0u);
  const std::string path = ::testing::TempDir() + "cluster.dpstrace";
  write_trace(simulation.gantt(), r, path);
  const trace::Trace t = trace::read(path);
  std::remove(path.c_str());
  EXPECT_EQ(t.info_value("backend"), "cluster");
  EXPECT_EQ(t.info_value("scheduler"), "pba-q");
  std::map<std::string, double> held;
  std::size_t marks = 0;
  for (const trace::Step& s : t.steps) {
    EXPECT_EQ(s.thread, s.node) << "a row per node";
    if (s.start == s.end) ++marks;
    held[t.names[s.operation]] += s.end - s.start;
  }
  for (const JobRecord& j : r.jobs) EXPECT_NEAR(held["job " + std::to_string(j.job->id)], j.node_seconds(), 1e-6);
  std::size_t moved = 0;
  for (const JobRecord& j : r.jobs)
    for (std::size_t k = 1; k < j.sizes.size(); ++k)
      moved += j.sizes[k].second > j.sizes[k - 1].second ? j.sizes[k].second - j.sizes[k - 1].second : j.sizes[k - 1].second - j.sizes[k].second;
  EXPECT_EQ(marks, moved) << "a grow or shrink mark per node that joined or left a running job";
  const trace::Summary s = trace::summarize(t);
  ASSERT_EQ(s.counters.size(), 2u);
  EXPECT_EQ(s.counters[0].name, "utilization");
  EXPECT_NEAR(s.counters[0].mean, r.utilization, 1e-6);
  EXPECT_EQ(s.counters[1].name, "queued jobs");
  EXPECT_GT(s.counters[1].max, 0);
  auto again = ReshapeScheduler::scenario("pba-q");
  Simulation plain(w, *again);
  const Results q = plain.run();
  EXPECT_THROW(write_trace(plain.gantt(), q, path), std::logic_error);
}

TEST(ClusterSimulation, TheGanttChartCoversEveryNodeSecondOfEveryJob) {
  Job j = malleable(1, 0, 4, 4, 10);
  const Workload w{.jobs = {j, malleable(2, 3, 3, 2, 5)}, .nodes = 12, .classes = {{"normal", 0}}};
  Scripted s;
  s.script[1] = {8, 5};
  Simulation simulation(w, s, {.gantt = true});
  const Results r = simulation.run();
  std::map<std::uint64_t, double> held;
  std::map<Node, std::vector<std::pair<double, double>>> per_node;
  for (const Segment& g : simulation.gantt().segments) {
    held[g.job->id] += g.end - g.start;
    per_node[g.node].emplace_back(g.start, g.end);
  }
  for (const JobRecord& job : r.jobs) EXPECT_NEAR(held[job.job->id], job.node_seconds(), 1e-9);
  for (auto& [node, spans] : per_node) {
    std::sort(spans.begin(), spans.end());
    for (std::size_t k = 1; k < spans.size(); ++k) EXPECT_LE(spans[k - 1].second, spans[k].first) << "node " << node;
  }
}

}  // namespace
}  // namespace dps::cluster
