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
#include <vector>

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

// 400 pieces (Range{0, 4000}) over two counting workers on each of nodes 1-3, on 4 node processes
// under fault tolerance (and `options`); `trace`, when given, sees every event from the start.
struct Farm {
  explicit Farm(MemoryTrace* trace = nullptr, Backups backups = Backups::Kept, std::vector<std::string> options = {})
      : app([&] {
          options.insert(options.begin(), {"--nodes", "4", "--fault-tolerance", "--checkpoint-every", "0.02"});
          auto a = in_processes(options);
          if (trace) a->trace_to(trace);
          return a;
        }()),
        master(app->threads<Stateless>("master", 1)),
        workers([&] {
          auto w = app->threads<Counter>("workers", 0, backups);
          for (NodeId n = 1; n < 4; ++n) w.add_on(n), w.add_on(n);
          return w;
        }()),
        graph(app->graph(op<Pieces<>>(master).window(24) >> op<AddRange<Counter, 2>>(workers) >>
                         op<SumPartials<>>(master))) {}

  long kill(NodeId node, int signal = SIGKILL) {  // its pid
    const long pid = tcp(*app).process_id(node);
    EXPECT_GT(pid, 0);
    EXPECT_EQ(::kill(static_cast<pid_t>(pid), signal), 0);
    return pid;
  }
  long seen() {  // pieces the workers counted, as they are removed
    long n = 0;
    while (workers.size()) n += workers.remove(0).get().seen;
    return n;
  }

  std::unique_ptr<Application> app;
  Threads<Stateless> master;
  Threads<Counter> workers;
  Graph<Range, Partial> graph;
};

// 400 pieces over two counting workers on each of nodes 1-3; `victim` killed (or stopped, with
// `signal` SIGSTOP) `after` the call began.
Outcome farm(NodeId victim, std::chrono::milliseconds after, int signal = SIGKILL) {
  MemoryTrace trace;  // outlives the application
  Farm farm(&trace);
  auto call = farm.graph.call(Range{0, 4000});
  long pid = 0;
  if (victim) {
    std::this_thread::sleep_for(after);
    pid = farm.kill(victim, signal);
  }
  Outcome run;
  run.result = within(std::move(call), "the call after node " + std::to_string(victim) + " was killed");
  if (signal == SIGSTOP) {  // declared failed for its silence, it wakes up: it must change nothing
    ::kill(static_cast<pid_t>(pid), SIGCONT);
    EXPECT_TRUE(
        eventually([&] { return ::kill(static_cast<pid_t>(pid), 0) != 0 || zombie(pid); }, std::chrono::seconds(10)))
        << "the woken node leaves on its own";
    run.second = within(farm.graph.call(Range{0, 4000}), "a call after node " + std::to_string(victim) + " woke up");
  }
  run.seen = farm.seen();
  farm.app->trace_to(nullptr);  // collects the other nodes' events
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
  Farm farm;
  auto call = farm.graph.call(Range{0, 4000});
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const auto killed = std::chrono::steady_clock::now();
  for (NodeId n : {NodeId{1}, NodeId{2}}) farm.kill(n);
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
    Farm farm(&trace, Backups::None);
    auto call = farm.graph.call(Range{0, 4000});
    if (!kill) {
      const Partial result = within(std::move(call), "the call without failure");
      EXPECT_EQ(result.sum, triangle(4000));
      EXPECT_EQ(farm.seen(), 400);
      farm.app->trace_to(nullptr);  // collects the other nodes' events
      for (const auto& step : trace.steps()) EXPECT_NE(step.operation, "checkpoint") << "on node " << step.node;
      continue;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto killed = std::chrono::steady_clock::now();
    farm.kill(2);
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
    farm.app->trace_to(nullptr);
  }
}

// Workers 0 and 2 (nodes 1 and 2) migrate to node 3 mid-call, with their records (without them,
// their receivers would drop what they send there as sent before), and node 3 is not killed, or
// killed at once, soon after, or later: a migration either ends or fails naming node 3, and every
// piece is counted once. Worker 2's last checkpoint is held by node 3: the one it left node 2 with
// rebuilds it.
TEST(ClusterFaultTolerance, ThreadsMigratedToANodeKilledBeforeDuringOrAfterTheirMoveCountEveryPieceOnce) {
  for (const int kill_after_ms : {-1, 0, 15, 80}) {
    const std::string when = kill_after_ms < 0 ? "not killed" : "killed " + std::to_string(kill_after_ms) + " ms after";
    Farm farm;
    auto call = farm.graph.call(Range{0, 4000});
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    std::vector<Future<void>> moves;
    moves.push_back(farm.workers.migrate(0, 3));
    moves.push_back(farm.workers.migrate(2, 3));
    if (kill_after_ms >= 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kill_after_ms));
      farm.kill(3);
    }
    Partial result;
    try {
      result = within(std::move(call), "the call, node 3 " + when + " the migrations began");
    } catch (const NodeFailure& e) {
      // Killed before worker 2 made a checkpoint elsewhere than node 3 (at once, or later on a slow
      // machine), node 3 holds its only backup: lost with it, it fails the call, clearly.
      EXPECT_GE(kill_after_ms, 0) << e.what();
      EXPECT_EQ(e.node, 3u) << e.what();
      EXPECT_NE(std::string(e.what()).find("workers[2] had no backup on another node"), std::string::npos) << e.what();
      continue;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "node 3 " << when << ": " << e.what();
      continue;
    }
    EXPECT_EQ(result.sum, triangle(4000)) << "node 3 " << when;
    EXPECT_EQ(result.count, 400);
    for (Future<void>& move : moves) {
      try {
        ASSERT_TRUE(move.wait_for(std::chrono::seconds(5))) << "a migration unanswered 5 s after the call";
        move.get();
      } catch (const std::exception& e) {
        EXPECT_GE(kill_after_ms, 0) << e.what();
        EXPECT_NE(std::string(e.what()).find("node 3"), std::string::npos) << e.what();
      }
    }
    EXPECT_EQ(farm.seen(), 400) << "node 3 " << when;
  }
}

// --replace: node 2 killed mid-call; its workers, rebuilt on node 3 (which held their checkpoints),
// move to node 4, started in its place, once they handled again what they were sent. The call ends
// with every piece once, and the farm has two workers on each of nodes 1, 3 and 4 again.
TEST(ClusterFaultTolerance, WithReplaceANodeStartedInPlaceOfAKilledOneTakesItsThreads) {
  Farm farm(nullptr, Backups::Kept, {"--replace"});
  auto call = farm.graph.call(Range{0, 4000});
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  farm.kill(2);
  const Partial result = within(std::move(call), "the call after node 2 was killed");
  EXPECT_EQ(result.sum, triangle(4000));
  const auto on = [&](NodeId node) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < farm.workers.size(); ++i) n += farm.workers.node(i) == node;
    return n;
  };
  EXPECT_TRUE(eventually([&] { return on(4) == 2; }, std::chrono::seconds(10)))
      << on(4) << " workers on node 4, " << on(3) << " on node 3";
  EXPECT_EQ(farm.app->node_ids(), (std::vector<NodeId>{0, 1, 3, 4}));
  EXPECT_EQ(on(1), 2u);
  EXPECT_EQ(on(3), 2u);
  EXPECT_EQ(within(farm.graph.call(Range{0, 4000}), "a call after node 4 replaced node 2").sum, triangle(4000));
  EXPECT_EQ(farm.seen(), 800);
}

}  // namespace
}  // namespace dps::test
