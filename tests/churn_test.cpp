// Nothing lost under churn: objects through split -> leaf -> merge graphs on node processes while
// threads are added, removed and migrated every few milliseconds and nodes added and removed every
// few hundred (churn.hpp). Every object is counted exactly once, and no call hangs. bench-soak runs
// the same for 10^6 objects and measures the rate and the memory.
#include "churn.hpp"
#include "processes.hpp"
#include "support.hpp"

#include <gtest/gtest.h>

#include <deque>

namespace dps::test {
namespace {

TEST(Churn, EveryObjectIsCountedOnceWhileThreadsAndNodesComeAndGo) {
  auto app = in_processes({"--nodes", "4"});
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Counter>("workers", 8);
  auto graph = app->graph(op<Pieces<>>(master).window(64) >> op<AddRange<Counter>>(workers) >> op<SumPartials<>>(master));

  // Calls of 1000 objects (Pieces of 10), 4 at a time, for 3 s: the nodes change several times.
  constexpr long kObjects = 1000, kInFlight = 4;
  const Range range{0, kObjects * Pieces<>::step};
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  Churn churn(*app, workers, {});
  std::deque<Future<Partial>> running;
  long calls = 0, done = 0;
  for (; std::chrono::steady_clock::now() < end; ++calls) {
    running.push_back(graph.call(range));
    if (static_cast<long>(running.size()) == kInFlight) {
      const Partial p = within(std::move(running.front()), "call " + std::to_string(done));
      running.pop_front();
      EXPECT_EQ(p.sum, triangle(range.last));
      EXPECT_EQ(p.count, kObjects);
      ++done;
    }
  }
  for (; !running.empty(); running.pop_front(), ++done) EXPECT_EQ(within(std::move(running.front()), "call " + std::to_string(done)).count, kObjects);
  churn.stop();
  EXPECT_EQ(churn.error(), "");
  long seen = churn.seen();
  while (workers.size()) seen += within(workers.remove(0), "the state of a worker").seen;
  EXPECT_EQ(seen, calls * kObjects) << "objects counted by the leaves";
  EXPECT_TRUE(only_live_threads_kept(app->runtime(), 1)) << "removed threads kept on node 0";
  std::printf("%ld objects; %ld threads added, %ld removed, %ld migrated; %ld nodes added, %ld removed\n", calls * kObjects, churn.added, churn.removed,
              churn.migrated, churn.nodes_added, churn.nodes_removed);
  EXPECT_GT(churn.migrated, 0);
  EXPECT_GT(churn.nodes_added + churn.nodes_removed, 0);
}

}  // namespace
}  // namespace dps::test
