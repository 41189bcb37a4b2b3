// Urgent operations: on a node with one worker, a thread woken by an urgent operation's input runs
// before the threads already waiting there, in one process and across processes over TCP (the
// priority travels with the graph to the other nodes). The simulator's counterpart is in
// sim_backend_test.
#include "processes.hpp"
#include "support.hpp"

#include <dps/local_backend.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

namespace dps::test {
namespace {

// A long step: it holds its node's only worker while the others queue.
struct Slow : Leaf<Range, Partial> {
  Partial execute(const Range& r) {
    compute(0.02, [] { std::this_thread::sleep_for(std::chrono::milliseconds(20)); });
    return {r.first, 1};
  }
};
struct Mark : Leaf<Partial, Partial> {
  Partial execute(const Partial& p) { return p; }
};

// Six slow steps on six threads of `node`, each followed by a mark on one more thread there: the
// operations in the order their steps started.
std::vector<std::string> order_of_steps(Application& app, NodeId node) {
  auto master = app.threads<Stateless>("master", 1);
  auto slow = app.threads<Stateless>("slow", 0);
  auto marker = app.threads<Stateless>("marker", 0);
  for (int k = 0; k < 6; ++k) slow.add_on(node);
  marker.add_on(node);
  auto graph = app.graph(op<Pieces<>>(master) >> op<Slow>(slow).named("slow") >> op<Mark>(marker).named("mark").urgent() >>
                         op<SumPartials<>>(master));
  MemoryTrace trace;
  app.trace_to(&trace);
  EXPECT_EQ(graph.call(Range{0, 60}).get().count, 6);
  app.trace_to(nullptr);
  std::vector<MemoryTrace::Step> steps;
  for (const auto& s : trace.steps())
    if (s.operation == "slow" || s.operation == "mark") steps.push_back(s);
  std::sort(steps.begin(), steps.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
  std::vector<std::string> order;
  for (const auto& s : steps) order.push_back(s.operation);
  return order;
}

const std::vector<std::string> kAlternating = {"slow", "mark", "slow", "mark", "slow", "mark",
                                               "slow", "mark", "slow", "mark", "slow", "mark"};

// Without urgency the marks would wait behind the slow steps already queued (how many depends on the
// order TBB takes its tasks in, not strictly first in, first out).
TEST(Priority, AnUrgentOperationsThreadRunsBeforeTheThreadsWaitingOnItsNode) {
  Application app(std::make_unique<LocalBackend>(1, 1));
  EXPECT_EQ(order_of_steps(app, 0), kAlternating);
}

TEST(Priority, TheUrgencyOfAnOperationReachesTheOtherNodeProcesses) {
  auto app = in_processes({"--nodes", "2", "--workers", "1"});
  EXPECT_EQ(order_of_steps(*app, 1), kAlternating);
}

}  // namespace
}  // namespace dps::test
