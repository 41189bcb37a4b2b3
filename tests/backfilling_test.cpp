// FCFS, EASY and conservative backfilling on hand-computed cases: which job passes the queue, and when.
#include <dps/cluster/backfilling.hpp>
#include <dps/cluster/simulation.hpp>

#include <gtest/gtest.h>

#include <map>

namespace dps::cluster {
namespace {

Job rigid(std::uint64_t id, double submit, std::size_t size, double runtime, double walltime = 0) {
  return Job{.id = id, .kind = JobKind::Rigid, .submit = submit, .size = size, .walltime = walltime > 0 ? walltime : runtime,
             .runtime = runtime};
}

Workload on(std::size_t nodes, std::vector<Job> jobs) {
  return Workload{.jobs = std::move(jobs), .nodes = nodes, .classes = {{"normal", 0}}};
}

std::map<std::uint64_t, double> starts(const Workload& w, Scheduler& s) {
  std::map<std::uint64_t, double> at;
  for (const JobRecord& j : Simulation(w, s).run().jobs) at[j.job->id] = j.start;
  return at;
}

// 10 nodes. A (5 nodes, 100 s) and A2 (3, 200 s) run from 0; B (5, 50 s) then C (7, 50 s) wait; X
// (2 nodes, 300 s) comes at 3. EASY protects only B: at 100 it needs 5 of the 7 free, leaving 2 spare,
// which X may take, so X starts at once and C, which needed them at 150, waits for A2 until 200.
// Conservative protects C too: X must wait until 200, C starts at 150 when B ends.
Workload passing() {
  return on(10, {rigid(1, 0, 5, 100), rigid(2, 0, 3, 200), rigid(3, 1, 5, 50), rigid(4, 2, 7, 50), rigid(5, 3, 2, 300)});
}

TEST(Backfilling, EasyLetsAJobPassThatDelaysOnlyTheSecondInLine) {
  EasyBackfilling easy;
  const auto at = starts(passing(), easy);
  EXPECT_EQ(at.at(3), 100);
  EXPECT_EQ(at.at(5), 3) << "X fits in the nodes B leaves spare at its shadow time";
  EXPECT_EQ(at.at(4), 200) << "C waits for A2: X holds two of the nodes it needed at 150";
}

TEST(Backfilling, ConservativeLetsNoJobDelayAnyReservation) {
  ConservativeBackfilling conservative;
  const auto at = starts(passing(), conservative);
  EXPECT_EQ(at.at(3), 100);
  EXPECT_EQ(at.at(4), 150) << "C keeps its reservation";
  EXPECT_EQ(at.at(5), 200) << "X would have taken C's nodes at 150";
}

TEST(Backfilling, FcfsLetsNothingPass) {
  Fcfs fcfs;
  const auto at = starts(passing(), fcfs);
  EXPECT_EQ(at.at(3), 100);
  EXPECT_EQ(at.at(4), 150);
  EXPECT_EQ(at.at(5), 200);
}

// 10 nodes. A (6 nodes, 100 s) runs; B (8 nodes) waits for it. C (2 nodes, 50 s) ends before B's
// reservation at 100 and starts at once; D (2 nodes, 200 s) runs past it but on the 2 nodes B leaves
// spare; E (1 node, 10 s) finds nothing idle until C ends at 52 and still ends before 100.
TEST(Backfilling, EasyBackfillsShortJobsAndJobsOnTheHeadsSpareNodes) {
  const Workload w = on(10, {rigid(1, 0, 6, 100), rigid(2, 1, 8, 50), rigid(3, 2, 2, 50), rigid(4, 3, 2, 200), rigid(5, 4, 1, 10)});
  EasyBackfilling easy;
  const auto at = starts(w, easy);
  EXPECT_EQ(at.at(3), 2);
  EXPECT_EQ(at.at(4), 3);
  EXPECT_EQ(at.at(5), 52);
  EXPECT_EQ(at.at(2), 100);
}

// Backfilling trusts walltimes: a job that says it needs 200 s cannot pass, though it runs 10.
TEST(Backfilling, ReservationsUseTheWalltimeAndMoveEarlierWhenJobsEndSooner) {
  // A (10 nodes) says 100 s but ends at 40: B (10 nodes) reserved for 100 starts at 40.
  const Workload w = on(10, {rigid(1, 0, 10, 40, 100), rigid(2, 1, 10, 10), rigid(3, 2, 4, 10, 200)});
  for (Scheduler* s : std::initializer_list<Scheduler*>{new EasyBackfilling, new ConservativeBackfilling}) {
    const auto at = starts(w, *s);
    EXPECT_EQ(at.at(2), 40) << s->name();
    EXPECT_EQ(at.at(3), 50) << s->name() << ": its walltime overlaps B's reservation";
    delete s;
  }
}

TEST(Backfilling, AJobKilledAtItsWalltimeFreesItsNodesThen) {
  const Workload w = on(4, {rigid(1, 0, 4, 500, 60), rigid(2, 0, 4, 10)});
  Fcfs fcfs;
  const Results r = Simulation(w, fcfs).run();
  EXPECT_TRUE(r.jobs[0].killed);
  EXPECT_EQ(r.jobs[0].end, 60);
  EXPECT_EQ(r.jobs[1].start, 60);
  EXPECT_EQ(r.killed, 1u);
}

// The figures of the run, by hand: 2 nodes, A (2 nodes, 10 s) at 0, B (1 node, 30 s) at 0 waits
// until 10, C (1 node, 5 s) at 12 runs at once.
TEST(Backfilling, TheRunsFiguresFollowTheirDefinitions) {
  const Workload w = on(2, {rigid(1, 0, 2, 10), rigid(2, 0, 1, 30), rigid(3, 12, 1, 5)});
  Fcfs fcfs;
  const Results r = Simulation(w, fcfs).run();
  EXPECT_DOUBLE_EQ(r.makespan_s, 40);
  EXPECT_DOUBLE_EQ(r.utilization, (2 * 10 + 30 + 5) / (2.0 * 40));
  EXPECT_DOUBLE_EQ(r.mean_wait_s, 10.0 / 3);
  EXPECT_DOUBLE_EQ(r.mean_completion_s, (10 + 40 + 5) / 3.0);
  // Bounded slowdown, tau 10: A 10/10, B 40/30, C 5/max(5, 10) -> 1.
  EXPECT_DOUBLE_EQ(r.mean_bounded_slowdown, (1 + 40.0 / 30 + 1) / 3);
}

struct Stubborn final : Scheduler {
  std::string name() const override { return "stubborn"; }
  void schedule(Cluster&) override {}
};

struct Greedy final : Scheduler {
  std::string name() const override { return "greedy"; }
  void schedule(Cluster& c) override {
    for (const Job* job : std::vector(c.queue())) c.start(*job);  // whether it fits or not
  }
};

TEST(Backfilling, ASchedulerThatErrsIsNamed) {
  const Workload w = on(4, {rigid(1, 0, 3, 10), rigid(2, 0, 3, 10)});
  Stubborn stubborn;
  EXPECT_THROW(
      {
        try {
          Simulation(w, stubborn).run();
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "scheduler stubborn: leaves 2 jobs waiting on an idle cluster");
          throw;
        }
      },
      std::runtime_error);
  Greedy greedy;
  EXPECT_THROW(Simulation(w, greedy).run(), std::logic_error);
}

}  // namespace
}  // namespace dps::cluster
