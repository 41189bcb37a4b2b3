// SimBackend: runs a DPS application inside a simulated cluster (Schaeli, Gerlach & Hersch, "A simulator for adaptive
// parallel applications", §3-4). The application's code is unchanged: its operations run for real, one atomic step at a
// time, on the OS thread that waits for a result; each step takes simulated time on its virtual node (its thread CPU
// time scaled by the node's speed, or what dps::compute charged), and what it sent leaves when it ends.
//
//   auto backend = std::make_unique<dps::sim::SimBackend>(dps::sim::ClusterModel::load("cluster.json"),
//                                                         dps::sim::SimOptions{.pdexec = true, .nodes = 8});
//   dps::Application app(std::move(backend));      // or dps::Application(argc, argv) in a -DSIM build
//   ... graph.call(x).get();                        // runs the simulation until the call completes
//   double predicted = app.now();
//
// Several applications can share one SimulatedCluster, each on the nodes it acquires.
#pragma once

#include "dps/backend.hpp"
#include "dps/sim/model.hpp"
#include "dps/sim/simulated_cluster.hpp"

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

namespace dps::sim {

struct SimOptions {
  bool pdexec = false;     // dps::compute charges its estimate and skips its function
  bool noalloc = false;    // LargeArray allocates nothing (sizes still drive transfers)
  unsigned measure = 0;    // > 0: time the first `measure` calls of each compute site and estimate,
                           // then charge their mean instead of running it
  std::size_t nodes = 1;   // virtual nodes the application starts on
  bool progress = false;   // a progress line on stderr while the simulation runs
  bool report = false;     // print Report::json() on stdout when the application ends
  std::string statistics{};  // write the statistics (JSON) to this file when it ends
  struct Failure {
    NodeId node;
    double time;  // simulated seconds
  };
  std::vector<Failure> failures{};  // nodes killed during the run (--fail NODE@SECONDS)
};

// The figures of a simulated run so far.
struct Report {
  double predicted_s = 0;  // simulated time
  double wall_s = 0;       // real time spent since the backend started
  double peak_rss_mb = 0;
  std::uint64_t ops = 0;       // operation steps
  std::uint64_t steps = 0;     // atomic steps, those of the kernel's own messages included
  std::uint64_t messages = 0;  // envelopes between nodes
  double bytes = 0;            // ... and their bytes
  double efficiency = 0;       // useful computation / (allocated cores x time)
  std::size_t nodes = 0;       // nodes now
  std::string json() const;    // one line
};

class SimBackend final : public Backend {
 public:
  SimBackend(const SimulatedCluster& cluster, SimOptions options);  // a share of a cluster
  SimBackend(ClusterModel model, SimOptions options);               // a cluster of its own
  ~SimBackend() override;

  Report report() const;
  // Per node CPU and network utilization over time, dynamic efficiency per phase and over time.
  void write_statistics(std::ostream& out) const;

  // Backend
  std::string_view name() const override { return "sim"; }
  void attach(Runtime& runtime) override;
  std::vector<NodeId> nodes() const override;
  NodeId local_node() const override { return 0; }
  NodeId add_node() override;
  void remove_node(NodeId node) override;
  void schedule(Thread& thread, Priority priority) override;
  void send(NodeId from, Thread& to, Envelope* e) override;
  bool migrate(Thread& thread, NodeId to, std::string state, std::function<void(std::exception_ptr)> arrived) override;
  void quiesce() override;
  void stop() override;
  double now() const override;
  unsigned cores(NodeId node) const override;
  double speed(NodeId node) const override;
  SimulationHooks* simulation() noexcept override;
  bool keeps_backups() const override { return true; }
  void keep_backup(Thread& thread, std::shared_ptr<const detail::Checkpoint> checkpoint) override;
  Backup backup(std::uint64_t uid, bool with_checkpoint) const override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dps::sim
