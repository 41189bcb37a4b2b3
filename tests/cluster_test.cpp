// Node processes over TCP on loopback: the kernel's graphs across 2-4 processes, threads added,
// removed and migrated between processes while calls run, failures of operations and of nodes,
// and strangers kept out.
#include "processes.hpp"
#include "support.hpp"

#include <dps/net/frame.hpp>
#include <dps/net/tcp_backend.hpp>
#include <dps/redistribution.hpp>

#include <asio.hpp>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace dps::test {
namespace {

std::unique_ptr<Application> cluster(std::size_t nodes) { return in_processes({"--nodes", std::to_string(nodes)}); }

net::TcpBackend& tcp(Application& app) { return dynamic_cast<net::TcpBackend&>(app.runtime().backend()); }

long leaves_of(long n) { return (n + Pieces<>::step - 1) / Pieces<>::step; }

TEST(Cluster, SplitLeafMergeOverThreeProcesses) {
  auto app = cluster(3);
  ASSERT_EQ(app->nodes(), 3u);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Counter>("workers", 6);
  std::vector<NodeId> placed;
  for (std::size_t i = 0; i < workers.size(); ++i) placed.push_back(workers.node(i));
  EXPECT_EQ(placed, (std::vector<NodeId>{0, 1, 2, 0, 1, 2}));
  auto graph = app->graph(op<Pieces<>>(master) >> op<AddRange<Counter>>(workers) >> op<SumPartials<>>(master));
  std::vector<Future<Partial>> calls;
  long leaves = 0;
  for (long c = 1; c <= 50; ++c) {
    calls.push_back(graph.call(Range{0, c * 37}));
    leaves += leaves_of(c * 37);
  }
  for (long c = 1; c <= 50; ++c) {
    const Partial p = calls[c - 1].get();
    EXPECT_EQ(p.sum, triangle(c * 37));
    EXPECT_EQ(p.count, leaves_of(c * 37));
  }
  // The states come back from the processes that held them: every leaf counted exactly once.
  long seen = 0, busy = 0;
  while (workers.size()) {
    const long s = workers.remove(0).get().seen;
    seen += s;
    busy += s > 0;
  }
  EXPECT_EQ(seen, leaves);
  EXPECT_EQ(busy, 6);
}

TEST(Cluster, NestedFramesAndWindowsOverFourProcesses) {
  auto app = cluster(4);
  auto outer = app->threads<Stateless>("outer", 1);
  auto inner = app->threads<Stateless>("inner", 4);
  auto workers = app->threads<Counter>("workers", 8);
  auto graph = app->graph(op<Pieces<>>(outer).window(3) >> op<Pieces<>>(inner).window(2) >>
                          op<AddRange<Counter>>(workers) >> op<SumPartials<>>(inner) >> op<SumPartials<>>(outer));
  // Every inner piece is one range of 10 split again into one leaf: leaves = pieces.
  std::vector<Future<Partial>> calls;
  for (long c = 1; c <= 20; ++c) calls.push_back(graph.call(Range{0, c * 100}));
  for (long c = 1; c <= 20; ++c) EXPECT_EQ(calls[c - 1].get().sum, triangle(c * 100));
}

TEST(Cluster, ThreadsAddedRemovedAndMigratedBetweenProcessesDuringCalls) {
  auto app = cluster(3);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Counter>("workers", 3);
  auto graph = app->graph(op<Pieces<>>(master).window(16) >> op<AddRange<Counter>>(workers) >>
                          op<SumPartials<>>(master));
  std::vector<Future<Partial>> calls;
  long leaves = 0;
  for (long c = 1; c <= 40; ++c) {
    calls.push_back(graph.call(Range{0, c * 500}));
    leaves += leaves_of(c * 500);
  }
  workers.add(2);                      // on nodes 0 and 1 (round robin goes on)
  workers.migrate(0, 2).get();         // node 0 -> node 2, state and all
  workers.migrate(1, 0).get();         // node 1 -> node 0
  EXPECT_EQ(workers.node(0), 2u);
  EXPECT_EQ(workers.node(1), 0u);
  long seen = workers.remove(2).get().seen;  // drained on node 2, its state handed back here
  for (long c = 1; c <= 40; ++c) EXPECT_EQ(calls[c - 1].get().sum, triangle(c * 500)) << "call " << c;
  while (workers.size()) seen += workers.remove(0).get().seen;
  EXPECT_EQ(seen, leaves);  // nothing lost, nothing run twice
}

TEST(Cluster, ASnapshotOfAThreadInAnotherProcessComesBackAndTheThreadStays) {
  auto app = cluster(3);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Counter>("workers", 3);  // on nodes 0, 1 and 2
  auto graph =
      app->graph(op<Pieces<>>(master).window(16) >> op<AddRange<Counter>>(workers) >> op<SumPartials<>>(master));
  std::vector<Future<Partial>> calls;
  long leaves = 0;
  for (long c = 1; c <= 20; ++c) {
    calls.push_back(graph.call(Range{0, c * 500}));
    leaves += leaves_of(c * 500);
  }
  const long during = workers.snapshot(2).get().seen;  // taken while the calls run
  for (long c = 1; c <= 20; ++c) EXPECT_EQ(calls[c - 1].get().sum, triangle(c * 500)) << "call " << c;
  long copied = 0;
  for (std::size_t i = 0; i < 3; ++i) copied += workers.snapshot(i).get().seen;
  EXPECT_EQ(copied, leaves);
  EXPECT_EQ(workers.node(2), 2u);  // it stayed where it was
  long seen = 0;
  const long third = workers.remove(2).get().seen;
  EXPECT_LE(during, third);
  seen += third;
  while (workers.size()) seen += workers.remove(0).get().seen;
  EXPECT_EQ(seen, leaves);
}

struct Fragile : Leaf<Range, Partial, Stateless> {
  Partial execute(const Range& r) {
    if (r.first == 30) throw std::runtime_error("thirty");
    return {r.first, 1};
  }
};

TEST(Cluster, AnOperationFailingInAnotherProcessNamesItsNode) {
  auto app = cluster(2);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Stateless>("workers", 2);  // nodes 0 and 1
  auto graph = app->graph(op<Pieces<>>(master) >>
                          op<Fragile>(workers, [](const Range&) { return std::size_t{1}; }).named("fragile") >>
                          op<SumPartials<>>(master));
  try {
    graph.call(Range{0, 100}).get();
    ADD_FAILURE() << "the call did not fail";
  } catch (const OperationError& e) {
    EXPECT_EQ(e.operation, "fragile");
    EXPECT_EQ(e.node, 1u);
    EXPECT_EQ(e.reason, "thirty");
  }
  EXPECT_EQ(graph.call(Range{0, 30}).get().count, 3);  // the application goes on
}

struct Slow : Leaf<Range, Partial, Stateless> {
  Partial execute(const Range& r) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return {r.first, 1};
  }
};

// A merge that counts its instances in its thread's state.
struct CountedSum : Merge<Partial, Partial, Counter> {
  Step execute(Partial p) {
    ++thread().seen;
    while (auto q = co_await next()) p.sum += q->sum, p.count += q->count;
    co_await post(p);
  }
};

// Migrate, then remove, while the thread's merge still waits for its frame: it moves once the merge
// ended, and is retired where it arrived (its state comes back from there), then freed everywhere.
TEST(Cluster, AThreadRemovedWhileItsMigrationWaitsIsRetiredWhereItArrives) {
  auto app = cluster(3);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Stateless>("workers", 2);
  auto mergers = app->threads<Counter>("mergers", 0);
  mergers.add_on(1);  // owns the merge: the first object goes to it
  mergers.add_on(0);  // takes the rest once the first is removed, and forwards it to the owner
  auto graph = app->graph(op<Pieces<>>(master).window(2) >> op<Slow>(workers) >> op<CountedSum>(mergers, to(0)));
  auto call = graph.call(Range{0, 100});  // 10 slow leaves, 2 at a time: about 100 ms of merging
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  auto moved = mergers.migrate(0, 2);
  auto state = mergers.remove(0);
  EXPECT_EQ(within(call, "the call").count, 10);
  within(moved, "the migration");
  EXPECT_EQ(within(state, "the removed merger's state").seen, 1);
  EXPECT_EQ(mergers.node(0), 0u);
  EXPECT_TRUE(only_live_threads_kept(app->runtime(), 4)) << "the removed merger kept on node 0";
}

// Waits (first > 0) for a future another OS thread completes.
struct Waits : Leaf<Range, Partial, Stateless> {
  Partial execute(const Range& r) {
    if (r.first > 0) {
      Promise<void> done(nullptr);
      std::thread([done]() mutable {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        done.set();
      }).detach();
      done.future().get();
    }
    return {r.first, 1};
  }
};

// A quick thread runs on the network thread that delivers its messages, where nothing may block:
// an operation that waits there fails once, clearly, and its thread runs on the workers from then on.
TEST(Cluster, AnOperationThatWaitsNeverHangsTheNetworkThread) {
  auto app = cluster(2);
  auto master = app->threads<Stateless>("master", 1);
  auto waiter = app->threads<Stateless>("waiter", 0);
  waiter.add_on(1);
  auto graph = app->graph(op<Pieces<>>(master) >> op<Waits>(waiter) >> op<SumPartials<>>(master));
  int failed = 0;
  for (int round = 0; round < 5; ++round) {
    EXPECT_EQ(graph.call(Range{0, 1}).get().sum, 0);  // quick: the thread may run inline next
    auto waiting = graph.call(Range{1, 2});
    ASSERT_TRUE(waiting.wait_for(std::chrono::seconds(10))) << "the network thread hangs";
    try {
      EXPECT_EQ(waiting.get().sum, 1);
    } catch (const OperationError& e) {
      ++failed;
      EXPECT_NE(std::string(e.what()).find("waits for a future on the network thread"), std::string::npos) << e.what();
    }
  }
  EXPECT_LE(failed, 1);
}

TEST(Cluster, ANodeKilledMidCallFailsTheCallNamingItWithinFiveSeconds) {
  auto app = cluster(3);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Stateless>("workers", 3);
  auto graph = app->graph(op<Pieces<>>(master).window(32) >> op<Slow>(workers) >> op<SumPartials<>>(master));
  auto call = graph.call(Range{0, 100000});  // 10 000 leaves of 20 ms: far from done
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const long victim = tcp(*app).process_id(2), survivor = tcp(*app).process_id(1);
  ASSERT_GT(victim, 0);
  const auto killed = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(static_cast<pid_t>(victim), SIGKILL), 0);
  try {
    call.get();
    ADD_FAILURE() << "the call survived its node";
  } catch (const NodeFailure& e) {
    EXPECT_EQ(e.node, 2u);
  }
  EXPECT_LT(std::chrono::steady_clock::now() - killed, std::chrono::seconds(5));
  app.reset();  // the survivor leaves on its own: no hang, no orphan
  EXPECT_TRUE(eventually([&] { return ::kill(static_cast<pid_t>(survivor), 0) != 0; }, std::chrono::seconds(10)));
}

TEST(Cluster, AHungNodeIsFoundByItsSilenceWithinFiveSeconds) {
  auto app = cluster(3);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Stateless>("workers", 3);
  auto graph = app->graph(op<Pieces<>>(master).window(32) >> op<Slow>(workers) >> op<SumPartials<>>(master));
  auto call = graph.call(Range{0, 100000});
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const long victim = tcp(*app).process_id(2);
  ASSERT_GT(victim, 0);
  const auto stopped = std::chrono::steady_clock::now();
  ASSERT_TRUE(stop_process(victim));  // alive for TCP, silent for DPS
  try {
    call.get();
    ADD_FAILURE() << "the call survived its hung node";
  } catch (const NodeFailure& e) {
    EXPECT_EQ(e.node, 2u);
    EXPECT_NE(std::string(e.what()).find("silent"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - stopped, std::chrono::seconds(5));
  ::kill(static_cast<pid_t>(victim), SIGKILL);
}

// A thread's strip of a distributed array, and a graph that gives each its part of a layout.
struct Slab {
  Part<double> strip;
  template <class A>
  void serialize(A& a) {
    a(strip);
  }
};
struct Deal : Split<int, int> {
  Step execute(int parts) {
    for (int p = 0; p < parts; ++p) co_await post(p);
  }
};
struct Allot : Leaf<int, Partial, Slab> {
  Partial execute(const int&) {
    thread().strip.data = LargeArray<double>(100 * 100);  // 100 rows of 100
    return {0, 1};
  }
};
struct ToPart {
  std::size_t operator()(const int& p, std::size_t) const { return static_cast<std::size_t>(p); }
};

TEST(Cluster, ANodeLostDuringARedistributionFailsItNamingTheNode) {
  auto app = cluster(3);
  auto slabs = app->threads<Slab>("slabs", 3);  // one on each node
  auto master = app->threads<Stateless>("master", 1);
  auto allot = app->graph(op<Deal>(master) >> op<Allot>(slabs, ToPart{}) >> op<SumPartials<>>(master));
  ASSERT_EQ(allot.call(3).get().count, 3);
  Redistribution<&Slab::strip> redistribute(*app, slabs);
  const Layout three(Distribution::even(300, 3), Distribution::whole(100));
  ASSERT_EQ(redistribute.run(three, three).get().moved, 0u);  // builds the one-step graph the next run uses
  const long victim = tcp(*app).process_id(2);
  ASSERT_GT(victim, 0);
  ASSERT_TRUE(stop_process(victim));  // its strip can no longer move
  try {
    redistribute.run(three, Layout(Distribution::even(300, 2), Distribution::whole(100))).get();
    ADD_FAILURE() << "the redistribution completed without its node";
  } catch (const NodeFailure& e) {
    EXPECT_EQ(e.node, 2u) << e.what();
  }
  ::kill(static_cast<pid_t>(victim), SIGKILL);
}

TEST(Cluster, EveryNodesTraceEventsReachNodeZerosSinkOnItsClock) {
  auto app = cluster(3);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Stateless>("workers", 3);
  auto graph = app->graph(op<Pieces<>>(master) >> op<AddRange<>>(workers) >> op<SumPartials<>>(master));
  MemoryTrace trace;
  app->trace_to(&trace);
  const double before = app->runtime().now();
  EXPECT_EQ(graph.call(Range{0, 3000}).get().sum, triangle(3000));
  const double after = app->runtime().now();
  app->trace_to(nullptr);  // collects what the other nodes recorded
  std::map<NodeId, long> leaves;
  for (const auto& s : trace.steps()) {
    if (s.operation.find("AddRange") != std::string::npos) ++leaves[s.node];
    EXPECT_GE(s.start, before - 0.002);  // clocks aligned within the ping's round trip
    EXPECT_LE(s.end, after + 0.002);
  }
  EXPECT_EQ(leaves, (std::map<NodeId, long>{{0, 100}, {1, 100}, {2, 100}}));
  std::set<NodeId> senders;
  for (const auto& t : trace.transfers()) senders.insert(t.from);
  EXPECT_EQ(senders, (std::set<NodeId>{0, 1, 2}));
}

TEST(Cluster, StrangersAreRefusedAndTheApplicationGoesOn) {
  auto app = cluster(2);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Stateless>("workers", 2);
  auto graph = app->graph(op<Pieces<>>(master) >> op<AddRange<>>(workers) >> op<SumPartials<>>(master));
  const std::string address = tcp(*app).address();
  const auto colon = address.rfind(':');
  const asio::ip::tcp::endpoint node0(asio::ip::make_address(address.substr(0, colon)),
                                      static_cast<unsigned short>(std::stoi(address.substr(colon + 1))));
  asio::io_context io;
  auto closed_by_node0 = [&](const std::vector<std::byte>& bytes) {
    asio::ip::tcp::socket s(io);
    s.connect(node0);
    asio::write(s, asio::buffer(bytes));
    std::byte buf[256];
    asio::error_code ec;
    for (int i = 0; i < 100 && !ec; ++i) s.read_some(asio::buffer(buf), ec);  // until the peer closes
    return ec == asio::error::eof || ec == asio::error::connection_reset;
  };
  auto frame = [](net::FrameKind kind, std::vector<std::byte> body, std::uint32_t magic = net::FrameHeader::kMagic) {
    net::FrameHeader h;
    h.magic = magic;
    h.kind = kind;
    h.length = static_cast<std::uint32_t>(body.size());
    h.sender = 7;
    std::vector<std::byte> out(sizeof h + body.size());  // sized once: no reallocation, no copy of the header
    std::memcpy(out.data(), &h, sizeof h);
    std::copy(body.begin(), body.end(), out.begin() + sizeof h);
    return out;
  };
  // An envelope before any handshake; garbage; a header announcing 1 GiB before any handshake (no
  // buffer is made for it); a handshake with a made-up proof.
  EXPECT_TRUE(closed_by_node0(frame(net::FrameKind::Envelope, std::vector<std::byte>(40))));
  EXPECT_TRUE(closed_by_node0(frame(net::FrameKind::Hello, {}, 0xdeadbeef)));
  auto huge = frame(net::FrameKind::Hello, {});
  const std::uint32_t gigabyte = 1u << 30;
  std::memcpy(huge.data() + 8, &gigabyte, sizeof gigabyte);  // the header's length field
  const auto sent = std::chrono::steady_clock::now();
  EXPECT_TRUE(closed_by_node0(huge));
  EXPECT_LT(std::chrono::steady_clock::now() - sent, std::chrono::seconds(2)) << "not closed at its header";
  std::vector<std::byte> hello(4 + 16, std::byte{1});
  hello[0] = std::byte{7};
  hello[1] = hello[2] = hello[3] = std::byte{0};
  auto attempt = frame(net::FrameKind::Hello, hello);
  const auto proof = frame(net::FrameKind::Proof, std::vector<std::byte>(32, std::byte{0x5a}));
  attempt.insert(attempt.end(), proof.begin(), proof.end());
  EXPECT_TRUE(closed_by_node0(attempt));
  EXPECT_EQ(graph.call(Range{0, 1000}).get().sum, triangle(1000));
}

TEST(Cluster, NodesAddedAndRemovedWhileTheApplicationRuns) {
  auto app = cluster(2);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Counter>("workers", 2);
  auto graph = app->graph(op<Pieces<>>(master) >> op<AddRange<Counter>>(workers) >> op<SumPartials<>>(master));
  EXPECT_EQ(within(graph.call(Range{0, 1000}), "the first call").sum, triangle(1000));
  const NodeId added = app->add_node();
  EXPECT_EQ(added, 2u);
  EXPECT_EQ(app->nodes(), 3u);
  workers.add_on(added);
  auto call = graph.call(Range{0, 5000});
  app->remove_node(1);  // its thread moves away first
  std::fprintf(stderr, "node 1 removed\n");  // were a later step to hang, this says where
  EXPECT_EQ(within(call, "the call running while node 1 was removed").sum, triangle(5000));
  EXPECT_EQ(app->node_ids(), (std::vector<NodeId>{0, 2}));
  for (std::size_t i = 0; i < workers.size(); ++i) EXPECT_NE(workers.node(i), 1u);
  EXPECT_EQ(within(graph.call(Range{0, 3000}), "the call after the removal").sum, triangle(3000));
  long seen = 0;
  while (workers.size()) seen += within(workers.remove(0), "the state of a removed worker").seen;
  EXPECT_EQ(seen, 100 + 500 + 300);
}

// Each removal races messages sent to the leaving node's threads by senders that have not yet
// heard where they went: they are forwarded or rerouted, never lost or failed.
TEST(Cluster, NodesRemovedOneAfterAnotherDuringCallsLoseNoMessage) {
  auto app = cluster(2);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Counter>("workers", 2);
  auto graph = app->graph(op<Pieces<>>(master) >> op<AddRange<Counter>>(workers) >> op<SumPartials<>>(master));
  long leaves = 0;
  for (int round = 0; round < 4; ++round) {
    workers.add_on(app->add_node());
    auto first = graph.call(Range{0, 3000});
    auto second = graph.call(Range{0, 2000});
    const NodeId leaving = app->node_ids()[1];  // the oldest node but 0
    app->remove_node(leaving);
    EXPECT_EQ(within(first, "the first call during removal " + std::to_string(round)).sum, triangle(3000));
    EXPECT_EQ(within(second, "the second call during removal " + std::to_string(round)).sum, triangle(2000));
    leaves += leaves_of(3000) + leaves_of(2000);
    EXPECT_EQ(app->nodes(), 2u);
  }
  long seen = 0;
  while (workers.size()) seen += within(workers.remove(0), "the state of a worker").seen;
  EXPECT_EQ(seen, leaves);
}

// A child dies with the thread that forked it (PR_SET_PDEATHSIG), not with its process: a node added
// from a thread that ends at once must live on.
TEST(Cluster, ANodeAddedFromAShortLivedThreadOutlivesIt) {
  auto app = cluster(2);
  NodeId added = 0;
  std::thread([&] { added = app->add_node(); }).join();
  const long pid = tcp(*app).process_id(added);
  ASSERT_GT(pid, 0);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Stateless>("workers", 0);
  workers.add_on(added);
  auto graph = app->graph(op<Pieces<>>(master) >> op<AddRange<>>(workers) >> op<SumPartials<>>(master));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // a killed child is dead by now
  EXPECT_EQ(::kill(static_cast<pid_t>(pid), 0), 0) << "the node added from the thread died with it";
  EXPECT_EQ(within(graph.call(Range{0, 1000}), "a call to the added node").sum, triangle(1000));
}

// Six node processes end: every one closes its connections on purpose, and none reports a loss, not
// even the one that hears node 0's Shutdown after the others closed (each says Goodbye last).
TEST(Cluster, ANormalEndReportsNoLostNode) {
  if (std::getenv("DPS_QUIET_END")) {
    auto app = cluster(6);
    auto master = app->threads<Stateless>("master", 1);
    auto workers = app->threads<Stateless>("workers", 12);
    auto graph = app->graph(op<Pieces<>>(master) >> op<AddRange<>>(workers) >> op<SumPartials<>>(master));
    EXPECT_EQ(graph.call(Range{0, 100000}).get().sum, triangle(100000));
    // Node 2 hears node 0's Shutdown late, after the others closed their connections to it.
    const auto late = static_cast<pid_t>(tcp(*app).process_id(2));
    ASSERT_TRUE(stop_process(late));
    std::thread resume([late] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      ::kill(late, SIGCONT);
    });
    app.reset();
    resume.join();
    return;
  }
  for (int run = 0; run < 5; ++run) {
    std::string out;
    EXPECT_EQ(shell("DPS_QUIET_END=1" + this_test_command(), out), 0) << out;
    EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
    EXPECT_EQ(out.find("dps: node"), std::string::npos) << "run " << run << ":\n" << out;
  }
}

}  // namespace
}  // namespace dps::test
