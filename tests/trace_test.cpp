// Trace hooks: the kernel reports atomic steps, transfers between nodes, thread and node lifecycle and
// user phases to the attached sink.
#include "support.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

namespace dps::test {
namespace {

struct Add : Leaf<Range, Partial> {
  Partial execute(const Range& r) { return {r.last - r.first, 1}; }
};

TEST(Trace, StepsTransfersLifecycleAndPhases) {
  MemoryTrace trace;
  Application app(ApplicationOptions{.nodes = 2, .workers = 2});
  app.trace_to(&trace);
  auto master = app.threads<Stateless>("master", 1);    // node 0
  auto workers = app.threads<Stateless>("workers", 2);  // nodes 0 and 1
  auto graph = app.graph(op<Pieces<>>(master).named("cut") >> op<Add>(workers).named("add") >>
                         op<SumPartials<>>(master).named("gather"));
  {
    auto phase = app.phase("first call");
    EXPECT_EQ(graph.call(Range{0, 100}).get().count, 10);
  }
  std::map<std::string, int> steps;
  for (const auto& s : trace.steps()) {
    ++steps[s.operation];
    EXPECT_LE(s.start, s.end);
    EXPECT_EQ(s.call, 1u);
    if (s.operation == "add") {
      EXPECT_EQ(s.collection, "workers");
    }
  }
  EXPECT_EQ(steps["add"], 10) << "a leaf is one atomic step";
  EXPECT_GE(steps["cut"], 1);
  EXPECT_GE(steps["gather"], 1);
  // Half of the ranges go to the worker on node 1 and their results come back: 5 + 5 transfers.
  int data_transfers = 0;
  for (const auto& t : trace.transfers()) {
    EXPECT_NE(t.from, t.to);
    if (t.bytes == wire_size(Range{}) || t.bytes == wire_size(Partial{})) ++data_transfers;
  }
  EXPECT_EQ(data_transfers, 10);
  int added = 0;
  for (const auto& c : trace.changes()) added += c.kind == Lifecycle::ThreadAdded;
  EXPECT_EQ(added, 3);
  const auto phases = trace.phases();
  ASSERT_EQ(phases.size(), 2u);
  EXPECT_EQ(phases[0].name, "first call");
  EXPECT_TRUE(phases[0].begin);
  EXPECT_FALSE(phases[1].begin);
  EXPECT_LE(phases[0].time, phases[1].time);

  app.add_node();
  workers.remove(0).get();
  int removed = 0, nodes_added = 0;
  for (const auto& c : trace.changes()) {
    removed += c.kind == Lifecycle::ThreadRemoved;
    nodes_added += c.kind == Lifecycle::NodeAdded;
  }
  EXPECT_EQ(removed, 1);
  EXPECT_EQ(nodes_added, 1);
}

// An operation not .named() is traced as its user says it: its class name without namespaces (these
// are in dps::test's anonymous namespace), template arguments' included.
TEST(Trace, AnOperationIsNamedByItsClassWithoutNamespaces) {
  MemoryTrace trace;
  Application app(ApplicationOptions{.nodes = 1, .workers = 1});
  app.trace_to(&trace);
  auto master = app.threads<Stateless>("master", 1);
  auto graph = app.graph(op<Pieces<>>(master) >> op<Add>(master) >> op<SumPartials<>>(master));
  EXPECT_EQ(graph.call(Range{0, 100}).get().count, 10);
  std::set<std::string> names;
  for (const auto& s : trace.steps()) names.insert(s.operation);
  EXPECT_EQ(names, (std::set<std::string>{"Pieces<Stateless>", "Add", "SumPartials<Stateless>"}));
}

// Under a backend whose steps yield (as the simulator's do), every co_await ends an atomic step.
TEST(Trace, EveryCoAwaitIsAnAtomicStepBoundary) {
  MemoryTrace trace;
  Application app(std::make_unique<TestBackend>(2, 2, Flags{.yield = true}));
  app.trace_to(&trace);
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 2);
  auto graph =
      app.graph(op<Pieces<>>(master).named("cut") >> op<Add>(workers) >> op<SumPartials<>>(master).named("gather"));
  EXPECT_EQ(graph.call(Range{0, 50}).get().count, 5);
  int cut = 0, gather = 0;
  for (const auto& s : trace.steps()) {
    cut += s.operation == "cut";
    gather += s.operation == "gather";
  }
  EXPECT_EQ(cut, 5 + 1) << "five posts, then the end of the split";
  EXPECT_EQ(gather, 5 + 1 + 1) << "start, one step per next() (four inputs and the end of the frame), the post";
}

}  // namespace
}  // namespace dps::test
