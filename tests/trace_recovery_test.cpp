// The recoveries a hand-built trace records: which threads were rebuilt for which failure, when the
// last replayed, and the work done again on the busiest node meanwhile (checkpoints aside).
#include <gtest/gtest.h>
#include <dps/trace/recovery.hpp>

#include "built_trace.hpp"

namespace dps::trace {
namespace {

struct Built : test::BuiltTrace {
  void change(Change kind, std::uint64_t thread, std::uint32_t node, double time, std::uint32_t to = 0) {
    t.changes.push_back({kind, thread, name(thread ? "workers" : ""), node, to, time});
  }
  void step(std::uint64_t thread, std::uint32_t node, double start, double end, const std::string& op = "sweep") {
    t.steps.push_back({node, thread, name("workers"), name(op), 1, start, end});
  }
};

// Node 2 fails at 1 s; threads 5 and 6 rebuilt on node 3, thread 7 on node 1; node 1 fails later,
// and thread 7 is rebuilt again on node 3.
TEST(TraceRecovery, EachFailureHasItsRebuiltThreadsTheirEndAndTheWorkDoneAgain) {
  Built b;
  b.step(5, 2, 0.5, 0.9);  // before the failure: not done again
  b.change(Change::NodeFailed, 0, 2, 1.0);
  b.change(Change::ThreadRestored, 5, 2, 1.1, 3);
  b.change(Change::ThreadRestored, 6, 2, 1.1, 3);
  b.change(Change::ThreadRestored, 7, 2, 1.2, 1);
  b.step(5, 3, 1.2, 1.4);
  b.step(6, 3, 1.4, 1.5);
  b.step(6, 3, 1.5, 1.55, "checkpoint");  // not work done again
  b.step(7, 1, 1.2, 1.45);
  b.change(Change::ThreadReplayed, 5, 3, 1.45);
  b.change(Change::ThreadReplayed, 6, 3, 1.6);
  b.change(Change::ThreadReplayed, 7, 1, 1.5);
  b.step(5, 3, 1.7, 1.9);  // after its replay: new work
  b.change(Change::NodeFailed, 0, 1, 3.0);
  b.change(Change::ThreadRestored, 7, 1, 3.2, 3);
  b.step(7, 3, 3.2, 3.3);

  const std::vector<Recovery> r = recoveries(b.t);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].node, 2u);
  EXPECT_EQ(r[0].threads, (std::vector<std::uint64_t>{5, 6, 7}));
  EXPECT_EQ(r[0].replayed, 3u);
  EXPECT_DOUBLE_EQ(r[0].failed, 1.0);
  EXPECT_DOUBLE_EQ(r[0].seconds(), 0.6);
  EXPECT_NEAR(r[0].replayed_work, 0.3, 1e-12) << "node 3's 0.2 + 0.1 s, more than node 1's 0.25 s";
  EXPECT_EQ(r[0].steps_again, 3u);
  EXPECT_EQ(r[1].node, 1u);
  EXPECT_EQ(r[1].threads, (std::vector<std::uint64_t>{7}));
  EXPECT_EQ(r[1].replayed, 0u) << "the trace ends before its replay did";
  EXPECT_DOUBLE_EQ(r[1].seconds(), 0.0);
  EXPECT_DOUBLE_EQ(r[1].replayed_work, 0.0);
}

TEST(TraceRecovery, ARunWithoutFailureHasNone) {
  Built b;
  b.step(5, 1, 0, 1);
  EXPECT_TRUE(recoveries(b.t).empty());
}

}  // namespace
}  // namespace dps::trace
