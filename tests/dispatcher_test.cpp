// The dispatcher both cluster drivers share: what a scheduler does through it reaches the driver (a job
// started at a resize point too), its answers are checked, and each job's record follows its sizes.
#include <dps/cluster/dispatcher.hpp>
#include <dps/cluster/what_if.hpp>

#include <gtest/gtest.h>

#include <stdexcept>

namespace dps::cluster {
namespace {

Job job(std::uint64_t id, std::size_t size) { return Job{.id = id, .kind = JobKind::Application, .size = size, .walltime = 100}; }

// Starts what fits in submit order; at a resize point gives the head of the queue the job's nodes
// beyond one (a shrink), or grows the job by `grow` when nobody waits.
struct Harvester final : Scheduler {
  std::size_t grow = 0;
  std::string name() const override { return "harvester"; }
  void schedule(Cluster& c) override {
    for (const Job* j : std::vector(c.queue()))
      if (c.fits(j->size)) c.start(*j);
  }
  std::size_t resize(Cluster& c, const Running&, const ResizePoint& point) override {
    if (c.queue().empty()) return point.size + grow;
    c.start(*c.queue().front());  // started now, on the idle nodes: the driver must hear of it
    return 1;
  }
};

TEST(Dispatcher, AJobStartedAtAResizePointReachesTheDriver) {
  Harvester scheduler;
  Dispatcher d(4, scheduler, {.gantt = true});
  const Job a = job(1, 3), b = job(2, 1);
  d.arrive(a);
  ASSERT_EQ(d.schedule().size(), 1u);
  Running& ra = d.running(0);
  d.advance(5);
  d.arrive(b);
  EXPECT_EQ(d.resize(ra, {.iteration = 1, .size = 3, .iteration_seconds = 1}), 1u);
  d.shrink(ra, 2);
  const auto& started = d.schedule();  // b, started by the resize point
  ASSERT_EQ(started.size(), 1u);
  EXPECT_EQ(started.front()->job, &b);
  EXPECT_EQ(d.record(ra).sizes, (std::vector<std::pair<double, std::size_t>>{{0, 3}, {5, 1}}));
  EXPECT_EQ(d.record(*started.front()).start, 5);
  EXPECT_EQ(d.cluster().idle(), 2u);
}

TEST(Dispatcher, AGrowthPastTheIdleNodesIsTheSchedulersError) {
  Harvester scheduler;
  scheduler.grow = 3;
  Dispatcher d(4, scheduler, {});
  const Job a = job(1, 2);
  d.arrive(a);
  d.schedule();
  try {
    d.resize(d.running(0), {.iteration = 1, .size = 2});
    FAIL() << "a growth by 3 with 2 idle nodes passed";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "scheduler harvester: grew job 1 by 3 nodes, 2 are idle");
  }
}

TEST(Dispatcher, ResultsFollowEachJobsSizesAndEnd) {
  Harvester scheduler;
  scheduler.grow = 2;
  Dispatcher d(4, scheduler, {.gantt = true});
  const Job a = job(1, 2);
  d.arrive(a);
  d.schedule();
  d.advance(10);
  EXPECT_EQ(d.resize(d.running(0), {.iteration = 1, .size = 2}), 4u);
  d.sample();
  d.advance(20);
  d.end(d.running(0), false);
  d.sample();
  const Results r = d.results({{"normal", 0}}, 10);
  EXPECT_EQ(r.resizes, 1u);
  EXPECT_DOUBLE_EQ(r.makespan_s, 20);
  EXPECT_DOUBLE_EQ(r.jobs.front().node_seconds(), 2 * 10 + 4 * 10);
  EXPECT_DOUBLE_EQ(r.utilization, 60.0 / 80.0);
  EXPECT_EQ(d.gantt().segments.size(), 4u);  // each node's time with the job, released at its end
  EXPECT_EQ(d.gantt().resizes.size(), 2u);   // the two nodes of the growth
}

// WhatIf keeps back a growth the forecast says will not pay, and one it cannot tell yet.
TEST(Dispatcher, WhatIfGrowsOnlyWhereTheForecastSaysItPays) {
  Harvester greedy;
  greedy.grow = 1;
  bool known = false;
  WhatIf guided(greedy, [&](const Job&, std::size_t nodes) -> std::optional<double> {
    if (!known) return std::nullopt;
    return nodes <= 2 ? 10.0 / static_cast<double>(nodes) : 5.0;  // no gain past 2 nodes
  });
  Dispatcher d(4, guided, {});
  const Job a = job(1, 1);
  d.arrive(a);
  d.schedule();
  Running& r = d.running(0);
  EXPECT_EQ(d.resize(r, {.iteration = 1, .size = 1}), 1u) << "not known yet: it waits";
  known = true;
  EXPECT_EQ(d.resize(r, {.iteration = 2, .size = 1}), 2u) << "10 s -> 5 s pays";
  EXPECT_EQ(d.resize(r, {.iteration = 3, .size = 2}), 2u) << "5 s -> 5 s does not";
  EXPECT_EQ(guided.refused(), 2u);
  EXPECT_EQ(d.cluster().idle(), 2u);
}

}  // namespace
}  // namespace dps::cluster
