// A run's real and simulated recoveries have the same structure. Node 2 of 4 is killed while each
// of the six workers (two per node 1-3) has its two pieces queued and none has ended (pieces of
// 1 s, a kill at 0.5 s, no checkpoint but the first): over node processes and in the simulator
// (--fail 2@0.5), the same threads are rebuilt and handle again as many objects, one step each,
// read from each run's trace file (dps/trace/recovery.hpp).
#include "processes.hpp"
#include "scratch.hpp"
#include "support.hpp"

#include <dps/compute.hpp>
#include <dps/net/tcp_backend.hpp>
#include <dps/sim/sim_backend.hpp>
#include <dps/trace/reader.hpp>
#include <dps/trace/recovery.hpp>
#include <dps/trace_file.hpp>

#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>

namespace dps::test {
namespace {

// 1 s of work, slept for real and charged in the simulator.
struct SlowPiece : Leaf<Range, Partial, Counter> {
  Partial execute(const Range& r) {
    ++this->thread().seen;
    compute(1.0, [] { std::this_thread::sleep_for(std::chrono::seconds(1)); });
    long s = 0;
    for (long i = r.first; i < r.last; ++i) s += i;
    return {s, 1};
  }
};

constexpr double kKill = 0.5;

// 12 pieces over two workers on each of nodes 1-3, traced to `path`; `kill` ends node 2 at kKill.
Partial run(Application& app, const std::string& path, const std::function<void()>& kill) {
  TraceFile file(path);
  app.trace_to(&file);
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Counter>("workers", 0);
  for (NodeId n = 1; n < 4; ++n) workers.add_on(n), workers.add_on(n);
  auto graph = app.graph(op<Pieces<>>(master) >> op<SlowPiece>(workers) >> op<SumPartials<>>(master));
  auto call = graph.call(Range{0, 120});
  kill();
  const Partial result = within(std::move(call), "the call after node 2 was killed");
  app.trace_to(nullptr);  // every node's events reach the file
  file.close();
  return result;
}

dps::trace::Recovery recovery_in(const std::string& path) {
  const auto found = dps::trace::recoveries(dps::trace::read(path));
  EXPECT_EQ(found.size(), 1u) << path;
  return found.empty() ? dps::trace::Recovery{} : found.front();
}

TEST(RecoveryStructure, RealAndSimulatedRecoveriesRebuildTheSameThreadsAndHandleAsManyObjectsAgain) {
  Scratch dir;
  const std::string real_path = dir.dir / "real.dpstrace", sim_path = dir.dir / "sim.dpstrace";
  {
    auto app = in_processes({"--nodes", "4", "--fault-tolerance", "--checkpoint-every", "100"});
    auto& tcp = dynamic_cast<net::TcpBackend&>(app->runtime().backend());
    const Partial result = run(*app, real_path, [&] {
      std::this_thread::sleep_for(std::chrono::duration<double>(kKill));
      EXPECT_EQ(::kill(static_cast<pid_t>(tcp.process_id(2)), SIGKILL), 0);
    });
    EXPECT_EQ(result.sum, triangle(120));
    EXPECT_EQ(result.count, 12);
  }
  {
    sim::ClusterModel model;
    model.groups = {sim::NodeGroup{"nodes", 4, 1, 1.0}};
    model.network.latency = 1e-4;
    model.network.bandwidth = 1.25e8;
    Application app(std::make_unique<sim::SimBackend>(
        model, sim::SimOptions{.pdexec = true, .nodes = 4, .failures = {{2, kKill}}}));
    app.runtime().fault_tolerance(100);
    const Partial result = run(app, sim_path, [] {});
    EXPECT_EQ(result.sum, triangle(120));
    EXPECT_EQ(result.count, 12);
  }
  dps::trace::Recovery real = recovery_in(real_path), simulated = recovery_in(sim_path);
  std::sort(real.threads.begin(), real.threads.end());
  std::sort(simulated.threads.begin(), simulated.threads.end());
  EXPECT_EQ(real.node, 2u);
  EXPECT_EQ(simulated.node, 2u);
  EXPECT_EQ(real.threads.size(), 2u) << "node 2's two workers";
  EXPECT_EQ(real.threads, simulated.threads);
  EXPECT_EQ(real.replayed, 2u);
  EXPECT_EQ(simulated.replayed, 2u);
  EXPECT_EQ(real.steps_again, 4u) << "each rebuilt worker handles its two pieces again";
  EXPECT_EQ(real.steps_again, simulated.steps_again);
}

}  // namespace
}  // namespace dps::test
