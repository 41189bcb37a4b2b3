// An outside project on the simulator's and the cluster library's public faces: a cluster model
// built in code, two applications sharing the simulated cluster, the prediction read back; then a
// small malleable workload under one of ReSHAPE's scheduling scenarios.
#include <dps/cluster/reshape.hpp>
#include <dps/cluster/simulation.hpp>
#include <dps/dps.hpp>
#include <dps/sim/sim_backend.hpp>

#include <cstdio>
#include <exception>
#include <memory>

struct Range {
  long first, last;
  template <class A>
  void serialize(A& a) {
    a(first, last);
  }
};
struct Cut : dps::Split<Range, Range> {
  dps::Step execute(Range r) {
    for (long i = r.first; i < r.last; ++i) co_await post(Range{i, i + 1});
  }
};
struct Work : dps::Leaf<Range, Range> {
  Range execute(const Range& r) {
    dps::compute(0.25, [] {});  // a quarter of a second of one core, charged
    return r;
  }
};
struct Join : dps::Merge<Range, Range> {
  dps::Step execute(Range r) {
    while (auto s = co_await next()) r.last = std::max(r.last, s->last);
    co_await post(r);
  }
};

int main() try {
  dps::sim::ClusterModel model;
  model.groups = {dps::sim::NodeGroup{.name = "nodes", .count = 8, .cores = 2, .speed = 1.0}};
  model.network.latency = 20e-6;
  model.network.bandwidth = 1e9;
  dps::sim::SimulatedCluster cluster(model);

  double predicted[2];
  for (int k = 0; k < 2; ++k) {  // two applications, four nodes each, one after the other
    dps::Application app(std::make_unique<dps::sim::SimBackend>(cluster, dps::sim::SimOptions{.pdexec = true, .nodes = 4}));
    const double start = app.now();
    auto master = app.threads<dps::Stateless>("master", 1);
    auto workers = app.threads<dps::Stateless>("workers", 8);  // two per node
    auto graph = app.graph(dps::op<Cut>(master) >> dps::op<Work>(workers) >> dps::op<Join>(master));
    graph.call(Range{0, 16}).get();
    predicted[k] = app.now() - start;
  }
  // 16 quarter-seconds on 8 cores: 0.5 s, and a few transfers.
  std::printf("simulate: %.3f s and %.3f s on %zu of %zu nodes\n", predicted[0], predicted[1], std::size_t{4},
              cluster.nodes());

  dps::cluster::Workload workload;
  workload.nodes = 16;
  workload.classes = {dps::cluster::JobClass{"gold", 0}};
  for (std::uint64_t id = 1; id <= 4; ++id)
    workload.jobs.push_back(dps::cluster::Job{.id = id, .kind = dps::cluster::JobKind::Malleable, .submit = 10.0 * id,
                                              .size = 4, .walltime = 1000, .iterations = 5, .iteration_s = 20});
  auto scheduler = dps::cluster::ReshapeScheduler::scenario("pba-pr");
  const dps::cluster::Results results = dps::cluster::Simulation(workload, *scheduler).run();
  std::printf("schedule: %zu jobs, %zu resizes, makespan %.0f s\n", results.jobs.size(), results.resizes,
              results.makespan_s);
} catch (const std::exception& e) {
  std::fprintf(stderr, "simulate: %s\n", e.what());
  return 1;
}
