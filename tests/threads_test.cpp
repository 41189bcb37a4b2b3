// Thread collections are malleable: threads are added, removed and migrated while calls run, routes
// use the current size, and every message is processed exactly once.
#include "support.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

namespace dps::test {
namespace {

constexpr long kCalls = 40;
constexpr long kPerCall = 3000;
std::unique_ptr<std::atomic<int>[]> hits;  // hits[call * kPerCall + i]: times object i of call was processed

struct Item {
  long call = 0, index = 0;
  template <class A>
  void serialize(A& a) {
    a(call, index);
  }
};
struct Spread : Split<Item, Item> {
  Step execute(Item job) {
    for (long i = 0; i < kPerCall; ++i) co_await post(Item{job.call, i});
  }
};
struct Visit : Leaf<Item, Partial, Counter> {
  Partial execute(const Item& it) {
    ++thread().seen;
    hits[it.call * kPerCall + it.index].fetch_add(1);
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(3);
    while (std::chrono::steady_clock::now() < until) {
    }
    return {it.index, 1};
  }
};
TEST(Threads, AddAndRemoveDuringRunningCallsCountsEveryMessageOnce) {
  hits.reset(new std::atomic<int>[kCalls * kPerCall]());
  Application app(ApplicationOptions{.nodes = 4, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Counter>("workers", 3);
  auto graph = app.graph(op<Spread>(master).window(256) >> op<Visit>(workers) >> op<SumPartials<>>(master));

  std::vector<Future<Partial>> calls;
  for (long c = 0; c < kCalls; ++c) calls.push_back(graph.call(Item{c, 0}));

  long removed_seen = 0;
  std::size_t peak = workers.size();
  for (int round = 0; round < 12; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (round % 3 == 2) {
      removed_seen += workers.remove(round % workers.size()).get().seen;  // a thread drained under load
    } else {
      workers.add();
      peak = std::max(peak, workers.size());
    }
  }
  for (long c = 0; c < kCalls; ++c) {
    const Partial p = calls[c].get();
    EXPECT_EQ(p.count, kPerCall) << "call " << c;
    EXPECT_EQ(p.sum, triangle(kPerCall)) << "call " << c;
  }
  long lost = 0, duplicated = 0;
  for (long k = 0; k < kCalls * kPerCall; ++k) {
    lost += hits[k] == 0;
    duplicated += hits[k] > 1;
  }
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(duplicated, 0);
  long remaining_seen = 0;
  while (workers.size() > 0) remaining_seen += workers.remove(0).get().seen;
  EXPECT_EQ(removed_seen + remaining_seen, kCalls * kPerCall) << "thread states account for every leaf";
  EXPECT_TRUE(only_live_threads_kept(app.runtime(), 1)) << "removed threads kept";
  EXPECT_GT(peak, 3u);
}

struct Where : Leaf<Item, Item, Counter> {
  Item execute(const Item& it) {
    ++thread().seen;
    return it;
  }
};
struct Count : Merge<Item, Item> {
  Step execute(Item it) {
    while (auto rest = co_await next()) {
    }
    co_await post(it);
  }
};

TEST(Threads, RoutesSeeTheCurrentSize) {
  Application app(ApplicationOptions{.nodes = 2, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Counter>("workers", 2);
  struct Fan : Split<Item, Item> {
    Step execute(Item job) {
      for (long i = 0; i < job.index; ++i) co_await post(Item{0, i});
    }
  };
  auto graph = app.graph(op<Fan>(master) >> op<Where>(workers, round_robin) >> op<Count>(master));
  graph.call(Item{0, 40}).get();
  workers.add(2);
  graph.call(Item{0, 40}).get();
  std::vector<long> seen;
  while (workers.size() > 0) seen.push_back(workers.remove(0).get().seen);
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0], 20 + 10);
  EXPECT_EQ(seen[1], 20 + 10);
  EXPECT_EQ(seen[2], 10) << "a thread added between calls receives its share at once";
  EXPECT_EQ(seen[3], 10);
}

TEST(Threads, RemovingTheLastThreadFailsLaterCallsClearly) {
  Application app(ApplicationOptions{.nodes = 1, .workers = 2});
  auto workers = app.threads<Counter>("workers", 1);
  auto graph = app.graph(op<Where>(workers));
  EXPECT_EQ(graph.call(Item{1, 2}).get().index, 2);
  workers.remove(0).get();
  try {
    graph.call(Item{1, 2}).get();
    FAIL() << "a call into an empty collection must fail";
  } catch (const RouteError& e) {
    EXPECT_NE(std::string(e.what()).find("collection 'workers'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has no threads"), std::string::npos) << e.what();
  }
}

TEST(Threads, MigrationCarriesTheStateToAnotherNode) {
  MemoryTrace trace;
  Application app(ApplicationOptions{.nodes = 4, .workers = 2});
  app.trace_to(&trace);
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Counter>("workers", 2);
  auto graph = app.graph(op<Spread>(master) >> op<Visit>(workers) >> op<SumPartials<>>(master));
  hits.reset(new std::atomic<int>[kCalls * kPerCall]());
  ASSERT_EQ(workers.node(1), 1u);
  graph.call(Item{0, 0}).get();
  // Migrate back and forth while calls run.
  std::vector<Future<Partial>> calls;
  for (long c = 1; c < 9; ++c) calls.push_back(graph.call(Item{c, 0}));
  for (NodeId to : {3u, 2u, 3u}) {
    workers.migrate(1, to).get();
    EXPECT_EQ(workers.node(1), to);
  }
  for (auto& c : calls) EXPECT_EQ(c.get().count, kPerCall);
  const long total = workers.remove(0).get().seen + workers.remove(0).get().seen;
  EXPECT_EQ(total, 9 * kPerCall) << "the counter survived three serialized moves";
  int moves = 0;
  for (const auto& change : trace.changes()) moves += change.kind == Lifecycle::ThreadMigrated;
  EXPECT_EQ(moves, 3);
  EXPECT_THROW(master.migrate(0, 9).get(), std::invalid_argument);
}

// A copy of a thread's state is taken between two of its operations: never in the middle of a leaf,
// and the thread goes on where it was.
TEST(Threads, ASnapshotCopiesTheStateBetweenOperationsAndTheThreadGoesOn) {
  Application app(ApplicationOptions{.nodes = 3, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Counter>("workers", 2);
  auto graph = app.graph(op<Spread>(master) >> op<Visit>(workers) >> op<SumPartials<>>(master));
  hits.reset(new std::atomic<int>[kCalls * kPerCall]());
  std::vector<Future<Partial>> calls;
  for (long c = 0; c < 6; ++c) calls.push_back(graph.call(Item{c, 0}));
  long last = 0;
  for (int k = 0; k < 20; ++k) {  // while the calls run: a count that never goes back
    const long seen = workers.snapshot(1).get().seen;
    EXPECT_GE(seen, last);
    last = seen;
  }
  for (auto& c : calls) EXPECT_EQ(c.get().count, kPerCall);
  const long copied = workers.snapshot(0).get().seen + workers.snapshot(1).get().seen;
  EXPECT_EQ(copied, 6 * kPerCall);
  EXPECT_EQ(workers.size(), 2u);
  graph.call(Item{6, 0}).get();  // the copies took nothing from the threads
  EXPECT_EQ(workers.remove(0).get().seen + workers.remove(0).get().seen, 7 * kPerCall);
  EXPECT_THROW(workers.snapshot(0).get(), std::out_of_range);
}

TEST(Threads, NodesAreAddedAndRemovedWithTheirThreads) {
  Application app(ApplicationOptions{.nodes = 2, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Counter>("workers", 2);
  auto graph = app.graph(op<Spread>(master) >> op<Visit>(workers) >> op<SumPartials<>>(master));
  hits.reset(new std::atomic<int>[kCalls * kPerCall]());
  const NodeId added = app.add_node();
  EXPECT_EQ(app.nodes(), 3u);
  workers.add_on(added);
  EXPECT_EQ(graph.call(Item{0, 0}).get().count, kPerCall);
  app.remove_node(added);
  EXPECT_EQ(app.nodes(), 2u);
  for (std::size_t i = 0; i < workers.size(); ++i) EXPECT_NE(workers.node(i), added);
  EXPECT_EQ(graph.call(Item{1, 0}).get().count, kPerCall);
  EXPECT_THROW(app.remove_node(0), std::invalid_argument);
  EXPECT_THROW(app.remove_node(added), std::invalid_argument);
  const std::size_t before = workers.size();
  try {  // a removed node takes no thread: it would never run
    workers.add_on(added);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "cannot add a thread of 'workers' on node " + std::to_string(added) +
                                         ": it is not a node of the application (never added, removed, or lost)");
  }
  EXPECT_EQ(workers.size(), before) << "nothing changed";
}

// Merges run on the threads being removed and added, and each frame is spread over several merge
// threads (round robin), so removals hit owners, forwarders and registrations in flight.
struct Tally : Merge<Item, Partial, Counter> {
  Step execute(Item first) {
    ++thread().seen;
    Partial p{first.index, 1};
    while (auto it = co_await next()) p.sum += it->index, ++p.count;
    co_await post(p);
  }
};
struct Pass : Leaf<Item, Item> {
  Item execute(const Item& it) {
    hits[it.call * kPerCall + it.index].fetch_add(1);
    return it;
  }
};
struct Blocks : Split<Item, Item> {  // 30 frames of 100 objects per call
  Step execute(Item job) {
    for (long b = 0; b < kPerCall / 100; ++b) co_await post(Item{job.call, b});
  }
};
struct Block : Split<Item, Item> {
  Step execute(Item b) {
    for (long i = 0; i < 100; ++i) co_await post(Item{b.call, b.index * 100 + i});
  }
};

TEST(Threads, MergeThreadsRemovedWhileTheirFramesAreOpen) {
  hits.reset(new std::atomic<int>[kCalls * kPerCall]());
  Application app(ApplicationOptions{.nodes = 3, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 3);
  auto mergers = app.threads<Counter>("mergers", 4);
  auto graph = app.graph(op<Blocks>(master) >> op<Block>(workers) >> op<Pass>(workers) >>
                         op<Tally>(mergers, round_robin) >> op<SumPartials<>>(master));
  std::vector<Future<Partial>> calls;
  for (long c = 0; c < kCalls; ++c) calls.push_back(graph.call(Item{c, 0}));
  long merges = 0;
  for (int round = 0; round < 16; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (round % 2 == 0 && mergers.size() > 1) merges += mergers.remove(round % mergers.size()).get().seen;
    else mergers.add();
  }
  for (long c = 0; c < kCalls; ++c) {
    const Partial p = calls[c].get();
    EXPECT_EQ(p.count, kPerCall) << "call " << c;
    EXPECT_EQ(p.sum, triangle(kPerCall)) << "call " << c;
  }
  long lost = 0, duplicated = 0;
  for (long k = 0; k < kCalls * kPerCall; ++k) lost += hits[k] == 0, duplicated += hits[k] > 1;
  EXPECT_EQ(lost, 0);
  EXPECT_EQ(duplicated, 0);
  while (mergers.size() > 0) merges += mergers.remove(0).get().seen;
  EXPECT_EQ(merges, kCalls * kPerCall / 100) << "one merge instance per frame, wherever its objects went";
  EXPECT_TRUE(only_live_threads_kept(app.runtime(), 1 + 3)) << "removed merge threads (forwarders too) kept";
}

TEST(Threads, BadIndicesAreRefusedWithTheCollectionNamed) {
  Application app(ApplicationOptions{.nodes = 2, .workers = 1});
  auto workers = app.threads<Counter>("workers", 2);
  try {
    workers.remove(5);
    FAIL();
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "collection 'workers' has 2 threads, cannot remove thread 5");
  }
  try {
    workers.migrate(2, 1);
    FAIL();
  } catch (const std::out_of_range& e) {
    EXPECT_STREQ(e.what(), "collection 'workers' has 2 threads, no thread 2");
  }
  EXPECT_EQ(workers.size(), 2u) << "nothing changed";
}

}  // namespace
}  // namespace dps::test
