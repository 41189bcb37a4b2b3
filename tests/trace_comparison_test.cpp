// A real and a simulated trace built by hand, with differences worked out here: the rows per
// operation, phase and node pair, their order (largest difference first), rows missing on one side,
// and the JSON.
#include <dps/trace/comparison.hpp>
#include <gtest/gtest.h>

#include "built_trace.hpp"

#include <cmath>
#include <string>

namespace dps::trace {
namespace {

struct Built : test::BuiltTrace {
  void step(const std::string& operation, std::uint32_t node, double start, double end) {
    t.steps.push_back({node, node + 1u, name(node == 0 ? "master" : "workers"), name(operation), 1, start, end});
  }
  void phase(const std::string& n, double begin, double end) {
    t.phases.push_back({name(n), true, begin});
    t.phases.push_back({name(n), false, end});
  }
};

// 3 s: Factor twice (1 s each), Solve, and Split on the master, which the simulation does not run.
// Transfers are recorded when sent, without duration.
Trace real_run() {
  Built b;
  b.step("Split", 0, 0, 0.125);
  b.step("Factor", 1, 0, 1);
  b.step("Factor", 1, 1, 2);
  b.step("Solve", 1, 2, 2.5);
  b.phase("setup", 0, 0.5);
  b.phase("iteration 1", 0, 2);
  b.phase("iteration 2", 2, 3);
  b.t.transfers.push_back({0, 1, 1000, 0.5, 0.5});
  b.t.transfers.push_back({0, 1, 1000, 1.5, 1.5});
  b.t.transfers.push_back({1, 0, 500, 2.5, 2.5});
  return b.t;
}

// 5 s: Factor three times (1.5 s each), Solve as long, and a Merge the real run did not trace;
// iteration 2 twice. Names interned in another order than the real trace's.
Trace simulated_run() {
  Built b;
  b.phase("iteration 2", 1.5, 3);
  b.phase("iteration 2", 3, 5);
  b.phase("iteration 1", 0, 1.5);
  b.step("Merge", 2, 4.75, 5);
  b.step("Solve", 1, 4.5, 5);
  for (double start : {0.0, 1.5, 3.0}) b.step("Factor", 1, start, start + 1.5);
  b.t.transfers.push_back({0, 1, 750, 0.5, 0.75});
  b.t.transfers.push_back({0, 1, 750, 1.5, 1.75});
  b.t.transfers.push_back({1, 0, 500, 2.5, 2.625});
  b.t.transfers.push_back({0, 2, 500, 3, 3.75});
  return b.t;
}

void expect(const Versus& v, double real, double simulated, const char* what) {
  EXPECT_DOUBLE_EQ(v.real, real) << what;
  EXPECT_DOUBLE_EQ(v.simulated, simulated) << what;
}

TEST(TraceComparison, TheRunDurationsAreFirstEventToLast) {
  const Comparison c = compare(real_run(), simulated_run());
  expect(c.duration, 3, 5, "duration");
  EXPECT_DOUBLE_EQ(c.duration.difference(), 2);
  EXPECT_DOUBLE_EQ(c.duration.relative(), 2.0 / 3);
}

TEST(TraceComparison, OperationsAreOrderedByTheirTotalsDifference) {
  const Comparison c = compare(real_run(), simulated_run());
  ASSERT_EQ(c.operations.size(), 4u);
  EXPECT_EQ(c.operations[0].name, "workers/Factor");
  EXPECT_EQ(c.operations[1].name, "workers/Merge");
  EXPECT_EQ(c.operations[2].name, "master/Split");
  EXPECT_EQ(c.operations[3].name, "workers/Solve");
  const DurationRow& factor = c.operations[0];
  expect(factor.count, 2, 3, "Factor steps");
  expect(factor.total, 2, 4.5, "Factor total");
  expect(factor.mean, 1, 1.5, "Factor mean");
  EXPECT_DOUBLE_EQ(factor.total.difference(), 2.5);
  EXPECT_DOUBLE_EQ(factor.total.relative(), 1.25);
  const DurationRow& solve = c.operations[3];
  expect(solve.total, 0.5, 0.5, "Solve total");
  EXPECT_EQ(solve.total.relative(), 0) << "no difference";
}

// An operation the simulator never ran, or one the real trace lacks, is a finding: zeros on the side
// that lacks it, -100 % or no relative difference at all.
TEST(TraceComparison, RowsInOneTraceOnlyHaveZerosOnTheOther) {
  const Comparison c = compare(real_run(), simulated_run());
  const DurationRow& merge = c.operations[1];
  expect(merge.count, 0, 1, "Merge steps");
  expect(merge.total, 0, 0.25, "Merge total");
  expect(merge.mean, 0, 0.25, "Merge mean");
  EXPECT_TRUE(std::isnan(merge.total.relative())) << "nothing real to be relative to";
  const DurationRow& split = c.operations[2];
  expect(split.count, 1, 0, "Split steps");
  expect(split.total, 0.125, 0, "Split total");
  EXPECT_DOUBLE_EQ(split.total.relative(), -1);
  const PairRow& to_2 = c.pairs[0];
  expect(to_2.count, 0, 1, "0->2 transfers");
  expect(to_2.bytes, 0, 500, "0->2 bytes");
}

// Equal differences (iteration 1 and setup, 0.5 s each) keep the names' order.
TEST(TraceComparison, PhasesArePairedIntoSpansAndSummedByName) {
  const Comparison c = compare(real_run(), simulated_run());
  ASSERT_EQ(c.phases.size(), 3u);
  EXPECT_EQ(c.phases[0].name, "iteration 2");
  EXPECT_EQ(c.phases[1].name, "iteration 1");
  EXPECT_EQ(c.phases[2].name, "setup");
  expect(c.phases[0].count, 1, 2, "iteration 2 spans");
  expect(c.phases[0].total, 1, 3.5, "iteration 2 total");
  expect(c.phases[0].mean, 1, 1.75, "iteration 2 mean");
  expect(c.phases[1].total, 2, 1.5, "iteration 1 total");
  expect(c.phases[2].count, 1, 0, "setup spans");
  expect(c.phases[2].total, 0.5, 0, "setup total");
}

// 0->1 and 0->2 differ by 500 bytes each: the larger time difference (0.75 s) first.
TEST(TraceComparison, PairsAreOrderedByBytesThenTime) {
  const Comparison c = compare(real_run(), simulated_run());
  ASSERT_EQ(c.pairs.size(), 3u);
  EXPECT_EQ(c.pairs[0].from, 0u);
  EXPECT_EQ(c.pairs[0].to, 2u);
  EXPECT_EQ(c.pairs[1].from, 0u);
  EXPECT_EQ(c.pairs[1].to, 1u);
  EXPECT_EQ(c.pairs[2].from, 1u);
  EXPECT_EQ(c.pairs[2].to, 0u);
  expect(c.pairs[0].total, 0, 0.75, "0->2 time");
  expect(c.pairs[1].count, 2, 2, "0->1 transfers");
  expect(c.pairs[1].bytes, 2000, 1500, "0->1 bytes");
  expect(c.pairs[1].total, 0, 0.5, "0->1 time: sent at once in the real run");
  EXPECT_DOUBLE_EQ(c.pairs[1].bytes.relative(), -0.25);
  expect(c.pairs[2].bytes, 500, 500, "1->0 bytes");
  expect(c.pairs[2].total, 0, 0.125, "1->0 time");
}

TEST(TraceComparison, TheJsonHasEveryRowInOrder) {
  const std::string j = to_json(compare(real_run(), simulated_run()));
  EXPECT_EQ(j,
            "{\"duration_s\": {\"real\": 3, \"simulated\": 5, \"difference\": 2, \"relative\": 0.666666667}, "
            "\"operations\": ["
            "{\"name\": \"workers/Factor\", "
            "\"steps\": {\"real\": 2, \"simulated\": 3, \"difference\": 1, \"relative\": 0.5}, "
            "\"total_s\": {\"real\": 2, \"simulated\": 4.5, \"difference\": 2.5, \"relative\": 1.25}, "
            "\"mean_s\": {\"real\": 1, \"simulated\": 1.5, \"difference\": 0.5, \"relative\": 0.5}}, "
            "{\"name\": \"workers/Merge\", "
            "\"steps\": {\"real\": 0, \"simulated\": 1, \"difference\": 1, \"relative\": null}, "
            "\"total_s\": {\"real\": 0, \"simulated\": 0.25, \"difference\": 0.25, \"relative\": null}, "
            "\"mean_s\": {\"real\": 0, \"simulated\": 0.25, \"difference\": 0.25, \"relative\": null}}, "
            "{\"name\": \"master/Split\", "
            "\"steps\": {\"real\": 1, \"simulated\": 0, \"difference\": -1, \"relative\": -1}, "
            "\"total_s\": {\"real\": 0.125, \"simulated\": 0, \"difference\": -0.125, \"relative\": -1}, "
            "\"mean_s\": {\"real\": 0.125, \"simulated\": 0, \"difference\": -0.125, \"relative\": -1}}, "
            "{\"name\": \"workers/Solve\", "
            "\"steps\": {\"real\": 1, \"simulated\": 1, \"difference\": 0, \"relative\": 0}, "
            "\"total_s\": {\"real\": 0.5, \"simulated\": 0.5, \"difference\": 0, \"relative\": 0}, "
            "\"mean_s\": {\"real\": 0.5, \"simulated\": 0.5, \"difference\": 0, \"relative\": 0}}], "
            "\"phases\": ["
            "{\"name\": \"iteration 2\", "
            "\"spans\": {\"real\": 1, \"simulated\": 2, \"difference\": 1, \"relative\": 1}, "
            "\"total_s\": {\"real\": 1, \"simulated\": 3.5, \"difference\": 2.5, \"relative\": 2.5}, "
            "\"mean_s\": {\"real\": 1, \"simulated\": 1.75, \"difference\": 0.75, \"relative\": 0.75}}, "
            "{\"name\": \"iteration 1\", "
            "\"spans\": {\"real\": 1, \"simulated\": 1, \"difference\": 0, \"relative\": 0}, "
            "\"total_s\": {\"real\": 2, \"simulated\": 1.5, \"difference\": -0.5, \"relative\": -0.25}, "
            "\"mean_s\": {\"real\": 2, \"simulated\": 1.5, \"difference\": -0.5, \"relative\": -0.25}}, "
            "{\"name\": \"setup\", "
            "\"spans\": {\"real\": 1, \"simulated\": 0, \"difference\": -1, \"relative\": -1}, "
            "\"total_s\": {\"real\": 0.5, \"simulated\": 0, \"difference\": -0.5, \"relative\": -1}, "
            "\"mean_s\": {\"real\": 0.5, \"simulated\": 0, \"difference\": -0.5, \"relative\": -1}}], "
            "\"pairs\": ["
            "{\"from\": 0, \"to\": 2, "
            "\"transfers\": {\"real\": 0, \"simulated\": 1, \"difference\": 1, \"relative\": null}, "
            "\"bytes\": {\"real\": 0, \"simulated\": 500, \"difference\": 500, \"relative\": null}, "
            "\"total_s\": {\"real\": 0, \"simulated\": 0.75, \"difference\": 0.75, \"relative\": null}}, "
            "{\"from\": 0, \"to\": 1, "
            "\"transfers\": {\"real\": 2, \"simulated\": 2, \"difference\": 0, \"relative\": 0}, "
            "\"bytes\": {\"real\": 2000, \"simulated\": 1500, \"difference\": -500, \"relative\": -0.25}, "
            "\"total_s\": {\"real\": 0, \"simulated\": 0.5, \"difference\": 0.5, \"relative\": null}}, "
            "{\"from\": 1, \"to\": 0, "
            "\"transfers\": {\"real\": 1, \"simulated\": 1, \"difference\": 0, \"relative\": 0}, "
            "\"bytes\": {\"real\": 500, \"simulated\": 500, \"difference\": 0, \"relative\": 0}, "
            "\"total_s\": {\"real\": 0, \"simulated\": 0.125, \"difference\": 0.125, \"relative\": null}}]}");
}

// Bytes past %.9g's digits stay exact: counts and bytes are written as integers.
TEST(TraceComparison, TheJsonWritesBytesWhole) {
  Trace real, simulated;
  real.transfers.push_back({0, 1, 12'345'678'901, 0, 0});
  simulated.transfers.push_back({0, 1, 12'345'678'902, 0, 1});
  const std::string j = to_json(compare(real, simulated));
  EXPECT_NE(j.find("\"bytes\": {\"real\": 12345678901, \"simulated\": 12345678902, \"difference\": 1, "),
            std::string::npos)
      << j;
}

TEST(TraceComparison, EmptyTracesHaveNoRowsAndNoDifference) {
  const Comparison c = compare(Trace{}, Trace{});
  expect(c.duration, 0, 0, "duration");
  EXPECT_EQ(c.duration.relative(), 0);
  EXPECT_TRUE(c.operations.empty() && c.phases.empty() && c.pairs.empty());
  EXPECT_EQ(to_json(c),
            "{\"duration_s\": {\"real\": 0, \"simulated\": 0, \"difference\": 0, \"relative\": 0}, "
            "\"operations\": [], \"phases\": [], \"pairs\": []}");
}

}  // namespace
}  // namespace dps::trace
