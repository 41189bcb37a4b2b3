// Fault tolerance over node processes on loopback: a node process killed (SIGKILL) mid-call, its
// threads rebuilt on the node that holds their checkpoints, and the call completes with the result
// of a run without failure, every piece counted once by the workers' states.
#include "processes.hpp"
#include "support.hpp"

#include <dps/net/tcp_backend.hpp>

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

namespace dps::test {
namespace {

net::TcpBackend& tcp(Application& app) { return dynamic_cast<net::TcpBackend&>(app.runtime().backend()); }

bool zombie(long pid) {  // ended, not yet reaped
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

struct Outcome {
  Partial result;
  long seen = 0;
  std::size_t restored = 0;  // threads rebuilt, as traced
  Partial second;            // a call made after a stopped node woke up
};

// 400 pieces over two counting workers on each of nodes 1-3; `victim` killed (or stopped, with
// `signal` SIGSTOP) `after` the call began.
Outcome farm(NodeId victim, std::chrono::milliseconds after, int signal = SIGKILL) {
  MemoryTrace trace;  // outlives the application
  auto app = in_processes({"--nodes", "4", "--fault-tolerance", "--checkpoint-every", "0.02"});
  app->trace_to(&trace);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Counter>("workers", 0);
  for (NodeId n = 1; n < 4; ++n) workers.add_on(n), workers.add_on(n);
  auto graph =
      app->graph(op<Pieces<>>(master).window(24) >> op<AddRange<Counter, 2>>(workers) >> op<SumPartials<>>(master));
  auto call = graph.call(Range{0, 4000});
  long pid = 0;
  if (victim) {
    std::this_thread::sleep_for(after);
    pid = tcp(*app).process_id(victim);
    EXPECT_GT(pid, 0);
    EXPECT_EQ(::kill(static_cast<pid_t>(pid), signal), 0);
  }
  Outcome run;
  run.result = within(std::move(call), "the call after node " + std::to_string(victim) + " was killed");
  if (signal == SIGSTOP) {  // declared failed for its silence, it wakes up: it must change nothing
    ::kill(static_cast<pid_t>(pid), SIGCONT);
    EXPECT_TRUE(
        eventually([&] { return ::kill(static_cast<pid_t>(pid), 0) != 0 || zombie(pid); }, std::chrono::seconds(10)))
        << "the woken node leaves on its own";
    run.second = within(graph.call(Range{0, 4000}), "a call after node " + std::to_string(victim) + " woke up");
  }
  while (workers.size()) run.seen += workers.remove(0).get().seen;
  app->trace_to(nullptr);  // collects the other nodes' events
  for (const auto& c : trace.changes()) run.restored += c.kind == Lifecycle::ThreadRestored;
  return run;
}

TEST(ClusterFaultTolerance, AKilledNodesThreadsAreRebuiltAndEveryPieceCountedOnce) {
  // Killed at once, node 1 may not have sent its threads' first checkpoints to node 2 yet: node 0
  // holds them from their creation.
  for (auto [victim, after] :
       {std::pair{NodeId{2}, 30}, std::pair{NodeId{1}, 80}, std::pair{NodeId{3}, 5}, std::pair{NodeId{1}, 0}}) {
    const Outcome run = farm(victim, std::chrono::milliseconds(after));
    EXPECT_EQ(run.result.sum, triangle(4000)) << "node " << victim << " killed after " << after << " ms";
    EXPECT_EQ(run.result.count, 400) << "every piece once";
    EXPECT_EQ(run.seen, 400) << "the rebuilt states count each piece once";
    EXPECT_EQ(run.restored, 2u) << "the node's two workers, rebuilt";
  }
}

TEST(ClusterFaultTolerance, ANodeStoppedIsDeclaredFailedAndWokenChangesNothing) {
  const Outcome run = farm(2, std::chrono::milliseconds(40), SIGSTOP);
  EXPECT_EQ(run.result.sum, triangle(4000));
  EXPECT_EQ(run.result.count, 400);
  EXPECT_EQ(run.second.sum, triangle(4000));
  EXPECT_EQ(run.seen, 800) << "each piece of both calls counted once";
  EXPECT_EQ(run.restored, 2u);
}

// Node 1's checkpoints are on node 2: both killed at once, node 1's threads are lost with their
// backups. The call fails within 5 s, naming a node and why.
TEST(ClusterFaultTolerance, TwoNodesKilledWithEachOthersBackupsFailTheCallClearly) {
  auto app = in_processes({"--nodes", "4", "--fault-tolerance", "--checkpoint-every", "0.02"});
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Counter>("workers", 0);
  for (NodeId n = 1; n < 4; ++n) workers.add_on(n), workers.add_on(n);
  auto graph =
      app->graph(op<Pieces<>>(master).window(24) >> op<AddRange<Counter, 2>>(workers) >> op<SumPartials<>>(master));
  auto call = graph.call(Range{0, 4000});
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto killed = std::chrono::steady_clock::now();
  for (NodeId n : {NodeId{1}, NodeId{2}}) EXPECT_EQ(::kill(static_cast<pid_t>(tcp(*app).process_id(n)), SIGKILL), 0);
  try {
    within(std::move(call), "the call after nodes 1 and 2 were killed");
    ADD_FAILURE() << "the call completed without node 1's threads";
  } catch (const NodeFailure& e) {
    EXPECT_TRUE(e.node == 1 || e.node == 2) << e.what();
    const std::string why = e.what();
    const std::string other = "node " + std::to_string(3 - e.node) + " failed";  // the one found first
    EXPECT_TRUE(why.find("had no backup on another node") != std::string::npos ||
                why.find("while threads rebuilt after " + other) != std::string::npos)
        << why;
  }
  EXPECT_LT(std::chrono::steady_clock::now() - killed, std::chrono::seconds(5));
}

// Workers made with Backups::None under --fault-tolerance: never checkpointed, the call completes
// with every piece once; the same with node 2 killed fails the call within 5 s, saying why.
TEST(ClusterFaultTolerance, ACollectionWithoutBackupsIsNeverCheckpointedAndItsLossFailsTheCall) {
  for (const bool kill : {false, true}) {
    MemoryTrace trace;
    auto app = in_processes({"--nodes", "4", "--fault-tolerance", "--checkpoint-every", "0.02"});
    app->trace_to(&trace);
    auto master = app->threads<Stateless>("master", 1);
    auto workers = app->threads<Counter>("workers", 0, Backups::None);
    for (NodeId n = 1; n < 4; ++n) workers.add_on(n), workers.add_on(n);
    auto graph =
        app->graph(op<Pieces<>>(master).window(24) >> op<AddRange<Counter, 2>>(workers) >> op<SumPartials<>>(master));
    auto call = graph.call(Range{0, 4000});
    if (!kill) {
      const Partial result = within(std::move(call), "the call without failure");
      EXPECT_EQ(result.sum, triangle(4000));
      long seen = 0;
      while (workers.size()) seen += workers.remove(0).get().seen;
      EXPECT_EQ(seen, 400);
      app->trace_to(nullptr);  // collects the other nodes' events
      for (const auto& step : trace.steps()) EXPECT_NE(step.operation, "checkpoint") << "on node " << step.node;
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto killed = std::chrono::steady_clock::now();
    EXPECT_EQ(::kill(static_cast<pid_t>(tcp(*app).process_id(2)), SIGKILL), 0);
    try {
      within(std::move(call), "the call after node 2 was killed");
      ADD_FAILURE() << "the call completed without node 2's workers";
    } catch (const NodeFailure& e) {
      EXPECT_EQ(e.node, 2u);
      EXPECT_NE(std::string(e.what()).find("keeps no backup (its collection was made with Backups::None)"),
                std::string::npos)
          << e.what();
    }
    EXPECT_LT(std::chrono::steady_clock::now() - killed, std::chrono::seconds(5));
    app->trace_to(nullptr);
  }
}

}  // namespace
}  // namespace dps::test
