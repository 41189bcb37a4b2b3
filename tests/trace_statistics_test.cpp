// Statistics of hand-built traces whose utilization and dynamic efficiency are worked out here:
// allocation follows threads (added, removed, migrated), busy time follows steps, phases and bins
// integrate both.
#include <dps/trace/efficiency.hpp>
#include <dps/trace/statistics.hpp>
#include <gtest/gtest.h>

#include "built_trace.hpp"

#include <string>

namespace dps::trace {
namespace {

struct Built : test::BuiltTrace {
  void info(const std::string& k, const std::string& v) { t.info.push_back({name(k), name(v)}); }
  void step(std::uint32_t node, double start, double end) {
    t.steps.push_back({node, node + 1u, name("workers"), name("op"), 1, start, end});
  }
  void change(Change kind, std::uint32_t node, double time, std::uint32_t to = 0) {
    t.changes.push_back({kind, node + 1u, name("workers"), node, to, time});
  }
  void phase(const std::string& n, bool begin, double time) { t.phases.push_back({name(n), begin, time}); }
};

// Node 0 computes throughout, node 1 for 2.5 s, and its thread is removed at 5 s (released then).
Built two_nodes() {
  Built b;
  b.info("cores.0", "1");
  b.info("cores.1", "1");
  b.change(Change::ThreadAdded, 0, 0);
  b.change(Change::ThreadAdded, 1, 0);
  b.step(0, 0, 10);
  b.step(1, 0, 2.5);
  b.change(Change::ThreadRemoved, 1, 5);
  b.phase("first half", true, 0);
  b.phase("first half", false, 5);
  b.phase("second half", true, 5);
  b.phase("second half", false, 10);
  b.t.transfers.push_back({0, 1, 1000, 1.0, 2.0});
  return b;
}

TEST(TraceStatistics, EfficiencyIsUsefulOverAllocatedCoreSeconds) {
  const Summary s = summarize(two_nodes().t, 10);
  EXPECT_DOUBLE_EQ(s.duration, 10);
  EXPECT_DOUBLE_EQ(s.useful, 12.5);
  EXPECT_DOUBLE_EQ(s.allocated, 15) << "node 0 for 10 s, node 1 until its thread left at 5 s";
  EXPECT_DOUBLE_EQ(s.efficiency, 12.5 / 15);
  ASSERT_EQ(s.nodes.size(), 2u);
  EXPECT_DOUBLE_EQ(s.nodes[0].cpu, 1.0);
  EXPECT_DOUBLE_EQ(s.nodes[1].cpu, 0.25);
  EXPECT_DOUBLE_EQ(s.nodes[1].allocated, 5);
  EXPECT_TRUE(s.nodes[1].cores_known);
}

TEST(TraceStatistics, PhasesAndBinsIntegrateOverTheirOwnSpans) {
  const Summary s = summarize(two_nodes().t, 10);
  ASSERT_EQ(s.phases.size(), 2u);
  EXPECT_EQ(s.phases[0].name, "first half");
  EXPECT_DOUBLE_EQ(s.phases[0].efficiency, 7.5 / 10);
  EXPECT_DOUBLE_EQ(s.phases[1].efficiency, 1.0) << "node 1 released: node 0 alone, busy";
  const std::vector<double> expected = {1, 1, 0.75, 0.5, 0.5, 1, 1, 1, 1, 1};
  ASSERT_EQ(s.efficiency_over_time.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(s.efficiency_over_time[i], expected[i], 1e-12) << i;
  EXPECT_NEAR(s.nodes[1].cpu_over_time[2], 0.5, 1e-12);
  EXPECT_NEAR(s.nodes[1].cpu_over_time[3], 0.0, 1e-12);
  EXPECT_NEAR(s.nodes[0].out_over_time[1], 1000.0, 1e-9) << "1000 bytes in the second second";
  EXPECT_NEAR(s.nodes[1].in_over_time[1], 1000.0, 1e-9);
  EXPECT_EQ(s.nodes[0].bytes_out, 1000u);
}

// Phases marked by operations on other nodes reach the file in batches: an end may come before its
// begin, and overlapping phases in any order. Paired in time order, each gets its own span.
TEST(TraceStatistics, PhasesRecordedOutOfOrderArePairedInTimeOrder) {
  Built b = two_nodes();
  b.t.phases.clear();
  b.phase("iteration 2", false, 8);  // node 2's batch came first
  b.phase("iteration 1", false, 6);
  b.phase("iteration 1", true, 0);
  b.phase("iteration 2", true, 4);
  const std::vector<PhaseSpan> spans = phase_spans(b.t, 10);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(b.t.names[spans[0].name], "iteration 1");
  EXPECT_DOUBLE_EQ(spans[0].begin, 0);
  EXPECT_DOUBLE_EQ(spans[0].end, 6);
  EXPECT_EQ(b.t.names[spans[1].name], "iteration 2");
  EXPECT_DOUBLE_EQ(spans[1].begin, 4);
  EXPECT_DOUBLE_EQ(spans[1].end, 8) << "not the run's end: its end was read before its begin";
}

TEST(TraceStatistics, AMigratedThreadReleasesItsOldNodeAndAllocatesItsNewOne) {
  Built b;
  for (const char* n : {"cores.0", "cores.1", "cores.2"}) b.info(n, "2");
  b.change(Change::ThreadAdded, 0, 0);
  b.change(Change::ThreadAdded, 1, 0);
  b.change(Change::ThreadMigrated, 1, 4, 2);
  b.step(0, 0, 8);
  b.step(1, 0, 4);
  b.step(2, 4, 8);
  const Summary s = summarize(b.t, 4);
  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_DOUBLE_EQ(s.nodes[1].allocated, 4);
  EXPECT_DOUBLE_EQ(s.nodes[2].allocated, 4);
  EXPECT_DOUBLE_EQ(s.allocated, 2 * (8 + 4 + 4));
  EXPECT_DOUBLE_EQ(s.efficiency, 16.0 / 32) << "one of two cores busy on each allocated node";
  EXPECT_DOUBLE_EQ(s.nodes[2].cpu, 4.0 / (2 * 8));
}

// Steps sharing a core each last longer (the simulator's sharing model, an oversubscribed host), but
// the node is no busier than its cores: efficiency stays at most 1.
TEST(TraceStatistics, StepsSharingACoreCountThatCoreOnce) {
  Built b;
  b.info("cores.0", "1");
  b.change(Change::ThreadAdded, 0, 0);
  b.step(0, 0, 4);
  b.step(0, 1, 3);  // alongside on the same core
  b.step(0, 6, 8);
  const Summary s = summarize(b.t, 8);
  EXPECT_DOUBLE_EQ(s.nodes[0].busy, 6.0);
  EXPECT_DOUBLE_EQ(s.efficiency, 6.0 / 8);
  EXPECT_NEAR(s.nodes[0].cpu_over_time[2], 1.0, 1e-12) << "two steps in the third second: one core busy";
}

TEST(TraceStatistics, UnknownCoresAreTheMostStepsRunAtOnce) {
  Built b;
  b.step(0, 0, 4);
  b.step(0, 1, 3);
  b.step(0, 3, 4);
  const Summary s = summarize(b.t, 2);
  ASSERT_EQ(s.nodes.size(), 1u);
  EXPECT_FALSE(s.nodes[0].cores_known);
  EXPECT_EQ(s.nodes[0].cores, 2u) << "a step ending at 3 and one starting at 3 do not overlap";
  EXPECT_DOUBLE_EQ(s.efficiency, 7.0 / 8);
}

// A counter holds each value until its next sample: 2 over [0, 5), 4 over [5, 10) in ten bins.
TEST(TraceStatistics, CountersAreTimeWeightedPerBinFromTheirFirstSample) {
  Built b = two_nodes();
  b.t.counters.push_back({b.name("queued jobs"), 4, 5});  // out of order: sorted by time
  b.t.counters.push_back({b.name("queued jobs"), 2, 0});
  b.t.counters.push_back({b.name("utilization"), 0.5, 2.5});
  const Summary s = summarize(b.t, 10);
  ASSERT_EQ(s.counters.size(), 2u);
  const CounterSummary& q = s.counters[0];
  EXPECT_EQ(q.name, "queued jobs");
  EXPECT_DOUBLE_EQ(q.max, 4);
  EXPECT_DOUBLE_EQ(q.mean, 3);
  for (std::size_t k = 0; k < 10; ++k) EXPECT_DOUBLE_EQ(q.over_time[k], k < 5 ? 2 : 4) << "bin " << k;
  const CounterSummary& u = s.counters[1];
  EXPECT_DOUBLE_EQ(u.over_time[1], 0) << "before its first sample";
  EXPECT_DOUBLE_EQ(u.over_time[2], 0.25) << "half the bin";
  EXPECT_DOUBLE_EQ(u.mean, 0.5) << "from its first sample on";
  EXPECT_NE(to_json(s).find("\"counters\": [{\"name\": \"queued jobs\", \"max\": 4, \"mean\": 3}"), std::string::npos) << to_json(s);
  EXPECT_EQ(to_json(summarize(two_nodes().t)).find("counters"), std::string::npos) << "traces without counters keep their JSON";
}

TEST(TraceStatistics, TheJsonNamesEveryFigure) {
  const std::string j = to_json(summarize(two_nodes().t));
  for (const char* key : {"\"duration_s\": 10", "\"efficiency\": 0.833333333", "\"phases\": [{\"name\": \"first half\"",
                          "\"bytes\": 1000", "\"cpu\": 0.25"})
    EXPECT_NE(j.find(key), std::string::npos) << key << " in " << j;
}

TEST(TraceStatistics, AnEmptyTraceHasNothingToSay) {
  const Summary s = summarize(Trace{}, 5);
  EXPECT_EQ(s.duration, 0);
  EXPECT_EQ(s.efficiency, 0);
  EXPECT_THROW(summarize(Trace{}, 0), std::invalid_argument);
}

// The allocation as the simulator keeps it while it runs: node 0 from its start, a node of two cores
// while it hosts threads, one that leaves the application (its later changes do not count).
TEST(TraceEfficiency, AllocationFollowsThreadsUntilANodeLeaves) {
  Allocation held;
  held.always(0, 1);
  held.cores(1, 2);
  held.node(1);
  held.node(2);
  held.threads(1, +1, 2);
  held.threads(1, +1, 3);
  held.threads(1, -1, 4);  // one of two left: still allocated
  held.threads(2, +1, 3);
  held.leave(2, 5);
  held.threads(2, +1, 6);  // gone: no longer counts
  held.threads(1, -1, 7);
  EXPECT_EQ(held.allocated_nodes(), (std::vector<std::uint32_t>{0, 1, 2}));
  EXPECT_DOUBLE_EQ(held.seconds(0, 10), 9);
  EXPECT_DOUBLE_EQ(held.seconds(1, 10), 5);
  EXPECT_DOUBLE_EQ(held.seconds(2, 10), 2) << "from 3 until it left at 5";
  EXPECT_DOUBLE_EQ(held.core_seconds(0, 10), 9 + 2 * 5 + 2);
  EXPECT_DOUBLE_EQ(held.core_seconds(4, 6), 2 + 2 * 2 + 1);
  std::vector<double> bins(5, 0.0);
  held.add_to_bins(bins, 0, 2, 10);
  const std::vector<double> by_hand{1, 2 + 2 * 2 + 1, 2 + 2 * 2 + 1, 2 + 2 * 1, 2};
  for (std::size_t b = 0; b < bins.size(); ++b) EXPECT_DOUBLE_EQ(bins[b], by_hand[b]) << "bin " << b;
  EXPECT_EQ(efficiency_over_time(std::vector<double>{1, 7}, bins), (std::vector<double>{1, 1, 0, 0, 0}));
  EXPECT_EQ(efficiency(1, 0), 0) << "nothing allocated";
}

}  // namespace
}  // namespace dps::trace
