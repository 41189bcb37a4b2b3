// A graph across four "hosts": network namespaces on this machine (scripts/netns-cluster), one node
// process in each with its own address, links limited with tc tbf and CPU with a cgroup quota.
// Node 0 runs in host 0 and starts the others from a hostfile through `netns-cluster rsh`, as it
// would through ssh. Needs root; skips with a message otherwise.
#include "measuring.hpp"
#include "netns_cluster.hpp"
#include "processes.hpp"
#include "support.hpp"

#include <dps/dps.hpp>
#include <dps/net/launcher.hpp>
#include <dps/net/tcp_backend.hpp>

#include <cereal/types/vector.hpp>
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace dps::test {
namespace {

constexpr const char* kPrefix = "dpst-";  // not the default: a cluster someone keeps up stays alone
constexpr int kHosts = 4;
constexpr double kMbit = 100;             // each host's link, both ways
constexpr int kCpuPercent = 50;           // each host's share of one core

struct Task {
  long index = 0;
  long burn_ms = 0;                // CPU time the leaf spends
  LargeArray<char> load;           // carried to the leaf (bandwidth)
  template <class A>
  void serialize(A& a) {
    a(index, burn_ms, load);
  }
};
struct Report {
  long node = 0;
  unsigned long netns = 0;  // inode of the network namespace the leaf ran in
  double cpu_s = 0, wall_s = 0;
  template <class A>
  void serialize(A& a) {
    a(node, netns, cpu_s, wall_s);
  }
};
struct Reports {
  std::vector<Report> all;
  template <class A>
  void serialize(A& a) {
    a(all);
  }
};

// One task per listed host (index -> the worker on that node), or one to `index` alone when it is set.
struct Scatter : Split<Task, Task> {
  Step execute(Task t) {
    if (t.index >= 0) {
      co_await post(std::move(t));
    } else {
      for (long i = 0; i < kHosts; ++i) {
        Task one{i, t.burn_ms, {}};
        co_await post(std::move(one));
      }
    }
  }
};

double seconds(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

struct WhereAmI : Leaf<Task, Report> {
  Report execute(const Task& t) {
    struct stat ns {};
    ::stat("/proc/self/ns/net", &ns);
    const double cpu0 = seconds(CLOCK_THREAD_CPUTIME_ID), wall0 = seconds(CLOCK_MONOTONIC);
    volatile unsigned long spin = 0;
    while (seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0 < static_cast<double>(t.burn_ms) * 1e-3) spin = spin + 1;
    return {static_cast<long>(node()), static_cast<unsigned long>(ns.st_ino), seconds(CLOCK_THREAD_CPUTIME_ID) - cpu0,
            seconds(CLOCK_MONOTONIC) - wall0};
  }
};

struct Gather : Merge<Report, Reports> {
  Step execute(Report r) {
    Reports all;
    all.all.push_back(r);
    while (auto q = co_await next()) all.all.push_back(*q);
    co_await post(std::move(all));
  }
};

// Node 0, inside host 0.
void run_inside(const std::string& hostfile) {
  auto app = in_processes({"--hostfile", hostfile});
  ASSERT_EQ(app->nodes(), static_cast<std::size_t>(kHosts));
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Stateless>("workers", kHosts);  // worker i on node i
  auto graph = app->graph(op<Scatter>(master) >> op<WhereAmI>(workers, [](const Task& t) { return static_cast<std::size_t>(t.index); }) >>
                          op<Gather>(master));

  // Every node in a namespace of its own.
  const Reports where = graph.call(Task{-1, 0, {}}).get();
  ASSERT_EQ(where.all.size(), static_cast<std::size_t>(kHosts));
  std::set<long> nodes;
  std::set<unsigned long> namespaces;
  for (const Report& r : where.all) nodes.insert(r.node), namespaces.insert(r.netns);
  EXPECT_EQ(nodes, (std::set<long>{0, 1, 2, 3}));
  EXPECT_EQ(namespaces.size(), static_cast<std::size_t>(kHosts));

  // 4 MiB to host 1 cross its 100 Mbit/s link: at least ~0.3 s, not the loopback's milliseconds. The
  // trace times the transfer as long, from its first byte sent to its last byte read.
  constexpr std::size_t bytes = 4 << 20;
  MemoryTrace trace;
  app->trace_to(&trace);
  const auto sent = std::chrono::steady_clock::now();
  Task far{1, 0, LargeArray<char>(bytes)};
  const Reports got = graph.call(std::move(far)).get();
  const double transfer = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  app->trace_to(nullptr);
  ASSERT_EQ(got.all.size(), 1u);
  EXPECT_EQ(got.all[0].node, 1);
  std::vector<TransferEvent> large;
  for (const TransferEvent& t : trace.transfers())
    if (t.bytes >= bytes) large.push_back(t);
  ASSERT_EQ(large.size(), 1u);
  const double traced = large[0].end - large[0].start;
  EXPECT_EQ(large[0].to, 1u);
  EXPECT_LE(traced, transfer + 0.002) << "within the call (the clocks agree within a ping's round trip)";
  const double floor = 0.75 * static_cast<double>(bytes) * 8 / (kMbit * 1e6);
  if (kMeasures) {
    EXPECT_GT(transfer, floor) << "the link is not limited";
    EXPECT_GT(traced, floor) << "the trace does not time the transfer";
  }
  std::printf("4 MiB to host 1 in %.3f s (%.1f Mbit/s), traced as %.3f s\n", transfer,
              static_cast<double>(bytes) * 8 / transfer / 1e6, traced);

  // 300 ms of CPU on a host capped at half a core take about twice as long.
  Task burn{2, 300, {}};
  const Reports cpu = graph.call(std::move(burn)).get();
  ASSERT_EQ(cpu.all.size(), 1u);
  if (kMeasures) {
    EXPECT_GT(cpu.all[0].wall_s, 1.4 * cpu.all[0].cpu_s) << "the CPU share is not limited";
  }
  std::printf("%.3f s of CPU took %.3f s on host 2\n", cpu.all[0].cpu_s, cpu.all[0].wall_s);
}

// Runs `inside` as node 0 in host 0 of a fresh cluster, its other nodes in the other hosts. The test
// binary runs there again: as node 0 (it has the hostfile), or as one of the nodes node 0 starts
// (they serve and exit).
// `slots`: node processes per host (one each by default; node n on slot n mod their sum).
void on_cluster(void (*inside)(const std::string& hostfile), std::vector<int> slots = {}) {
  if (const char* hostfile = std::getenv("DPS_MULTIHOST_HOSTFILE")) return inside(hostfile);
  if (std::getenv("DPS_NODE")) return inside("");
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for network namespaces, tc and cgroups (CI runs it as root)";
  if (slots.empty()) slots.assign(kHosts, 1);
  NetnsCluster cluster(static_cast<int>(slots.size()), static_cast<int>(kMbit), kCpuPercent, kPrefix);
  ASSERT_TRUE(cluster.up) << cluster.up_output;
  Scratch files;
  std::string hosts;
  for (std::size_t i = 0; i < slots.size(); ++i)
    hosts += "10.77.0." + std::to_string(i + 1) + " " + std::to_string(slots[i]) + "\n";
  const std::string command =
      cluster.in_host(0, "DPS_MULTIHOST_HOSTFILE=" + files.write("hosts", hosts).string()) + this_test_command();
  std::string out;
  const int status = shell(command, out);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("[  PASSED  ] 1 test"), std::string::npos) << out;
  std::printf("%s", out.c_str());
}

TEST(MultiHost, AGraphRunsAcrossFourNamespacedHostsWithLimitedLinksAndCpu) { on_cluster(run_inside); }

struct Tick : Leaf<Task, Report> {
  Report execute(const Task& t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return {t.index, 0, 0, 0};
  }
};

// Tasks without end from node 0.
struct Endless : Split<Task, Task> {
  Step execute(Task) {
    for (long i = 0; i < 100000; ++i) co_await post(Task{i, 0, {}});
  }
};

// Node 0, inside host 0: every task goes 0 -> 2 -> 1; host 2 then drops what it sends to host 1. The
// nodes at either end learn it by silence and tell node 0, which fails the call within 5 s.
void cut_inside(const std::string& hostfile) {
  auto app = in_processes({"--hostfile", hostfile});
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Stateless>("workers", 0);
  auto gatherer = app->threads<Stateless>("gatherer", 0);
  workers.add_on(2);
  gatherer.add_on(1);
  auto graph = app->graph(op<Endless>(master).window(8) >> op<Tick>(workers) >> op<Gather>(gatherer));
  auto call = graph.call(Task{});
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_FALSE(call.ready());
  const std::string cut = std::string(DPS_SOURCE_DIR) + "/scripts/netns-cluster cut --prefix " + kPrefix + " 2 1";
  const auto when = std::chrono::steady_clock::now();
  ASSERT_EQ(std::system(cut.c_str()), 0) << cut;
  try {
    within(std::move(call), "the call whose messages cross the cut pair");
    ADD_FAILURE() << "the call went on across a cut";
  } catch (const NodeFailure& e) {
    EXPECT_TRUE(e.node == 1 || e.node == 2) << e.what();
    EXPECT_NE(std::string(e.what()).find("lost its connection to it"), std::string::npos) << e.what();
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - when).count();
  EXPECT_LT(took, 5.0);
  std::printf("the call failed %.2f s after the cut\n", took);

  // A later call whose data avoids the pair but whose frame protocol crosses it (the merge on node 1
  // registers with the split's thread on node 2): the Register cannot be sent, and the call fails.
  // (After the other end's report of the cut, which would fail it too, has come.)
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto splitter = app->threads<Stateless>("splitter", 0);
  auto near = app->threads<Stateless>("near", 0);
  splitter.add_on(2);
  near.add_on(0);
  auto around = app->graph(op<Scatter>(splitter) >> op<Tick>(near) >> op<Gather>(gatherer));
  try {
    within(around.call(Task{-1, 0, {}}), "the call whose Register crosses the cut pair", std::chrono::seconds(10));
    ADD_FAILURE() << "the call went on across a cut";
  } catch (const NodeFailure& e) {
    EXPECT_EQ(e.node, 2u) << e.what();
    EXPECT_EQ(e.reason, "no connection to it") << e.what();
  }
}

TEST(MultiHost, TwoNodesCutFromEachOtherFailTheCallOnNodeZeroWithinFiveSeconds) { on_cluster(cut_inside); }

// Node 0, inside host 0; nodes 1 and 2 share host 1, nodes 3 and 4 host 2. A thread's checkpoints go
// to a node on another host: killed, node 1's worker is rebuilt on host 2, not beside it on node 2.
void buddy_inside(const std::string& hostfile) {
  MemoryTrace trace;  // outlives the application
  auto app = in_processes({"--hostfile", hostfile, "--fault-tolerance", "--checkpoint-every", "0.05"});
  app->trace_to(&trace);
  ASSERT_EQ(app->nodes(), 5u);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Counter>("workers", 0);
  for (NodeId n = 1; n < 5; ++n) workers.add_on(n);
  auto graph =
      app->graph(op<Pieces<>>(master).window(16) >> op<AddRange<Counter, 5>>(workers) >> op<SumPartials<>>(master));
  auto call = graph.call(Range{0, 4000});
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  auto& tcp = dynamic_cast<net::TcpBackend&>(app->runtime().backend());
  ASSERT_EQ(::kill(static_cast<pid_t>(tcp.process_id(1)), SIGKILL), 0);
  const Partial result = within(std::move(call), "the call after node 1 was killed", std::chrono::seconds(60));
  EXPECT_EQ(result.sum, triangle(4000));
  EXPECT_EQ(result.count, 400);
  long seen = 0;
  while (workers.size()) seen += workers.remove(0).get().seen;
  EXPECT_EQ(seen, 400) << "every piece counted once";
  app->trace_to(nullptr);
  std::vector<NodeId> rebuilt_on;
  for (const auto& c : trace.changes())
    if (c.kind == Lifecycle::ThreadRestored) rebuilt_on.push_back(c.to);
  ASSERT_EQ(rebuilt_on.size(), 1u);
  EXPECT_TRUE(rebuilt_on[0] == 3 || rebuilt_on[0] == 4 || rebuilt_on[0] == 0)
      << "rebuilt on node " << rebuilt_on[0] << ", on the failed node's host";
  std::printf("node 1's worker rebuilt on node %u\n", rebuilt_on[0]);
}

TEST(MultiHost, AThreadsBackupIsOnAnotherHostSoItIsRebuiltThere) { on_cluster(buddy_inside, {1, 2, 2}); }

// Four hosts of a slot each, three nodes under --replace: host 3 is spare. Node 1 killed mid-call,
// its worker is rebuilt on node 2 (which held its checkpoints), then moves to node 3, started on the
// spare host (node n runs on slot n mod 4).
void spare_inside(const std::string& hostfile) {
  auto app = in_processes(
      {"--hostfile", hostfile, "--nodes", "3", "--fault-tolerance", "--checkpoint-every", "0.05", "--replace"});
  ASSERT_EQ(app->nodes(), 3u);
  auto master = app->threads<Stateless>("master", 1);
  auto workers = app->threads<Counter>("workers", 0);
  for (NodeId n = 1; n < 3; ++n) workers.add_on(n);
  auto graph =
      app->graph(op<Pieces<>>(master).window(16) >> op<AddRange<Counter, 5>>(workers) >> op<SumPartials<>>(master));
  auto call = graph.call(Range{0, 2000});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto& tcp = dynamic_cast<net::TcpBackend&>(app->runtime().backend());
  ASSERT_EQ(::kill(static_cast<pid_t>(tcp.process_id(1)), SIGKILL), 0);
  EXPECT_EQ(within(std::move(call), "the call after node 1 was killed", std::chrono::seconds(60)).sum, triangle(2000));
  EXPECT_TRUE(eventually([&] { return workers.node(0) == 3; }, std::chrono::seconds(30)))
      << "node 1's worker is on node " << workers.node(0);
  EXPECT_EQ(app->node_ids(), (std::vector<NodeId>{0, 2, 3}));
  EXPECT_EQ(workers.node(1), 2u);
  EXPECT_EQ(within(graph.call(Range{0, 2000}), "a call after node 3 replaced node 1").sum, triangle(2000));
  long seen = 0;
  while (workers.size()) seen += workers.remove(0).get().seen;
  EXPECT_EQ(seen, 400) << "every piece of both calls counted once";
}

TEST(MultiHost, WithReplaceANodeStartedOnTheSpareHostTakesTheKilledNodesThread) {
  on_cluster(spare_inside, {1, 1, 1, 1});
}

}  // namespace
}  // namespace dps::test
