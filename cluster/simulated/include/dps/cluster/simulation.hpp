// Simulation: a workload run on a simulated cluster under a scheduler: arrivals queue, the scheduler
// starts jobs, rigid jobs end after their run time, malleable ones reach a resize point after every
// iteration and go on at the size the scheduler answers; every job is killed at its walltime.
// Discrete events, one loop: the scheduler acts once after all the events of an instant.
// Application jobs run as processes of their own, each simulating itself on the nodes it holds (their
// nodes are theirs alone, so nothing they do touches another job); the loop takes their resize points,
// returned nodes and ends as events, waiting for a job's next one before it goes past the time the job
// was last heard from (conservative synchronization). Traffic jobs send their messages through one
// engine (dps/sim/engine.hpp) over the mesh and its I/O column, where all of them share the links:
// its events are the loop's too, so a job ends when its last message arrives.
//
//   dps::cluster::Workload w = dps::cluster::load_workload("nasa.swf.gz");
//   dps::cluster::EasyBackfilling easy;
//   dps::cluster::Results r = dps::cluster::Simulation(w, easy).run();
#pragma once

#include "dps/cluster/allocation.hpp"
#include "dps/cluster/cluster.hpp"
#include "dps/cluster/gantt.hpp"
#include "dps/cluster/results.hpp"
#include "dps/cluster/scheduler.hpp"
#include "dps/cluster/workload.hpp"
#include "dps/sim/model.hpp"

#include <functional>
#include <memory>
#include <vector>

namespace dps::cluster {

struct SimulationOptions {
  double tau_s = 10;   // bounded slowdown's threshold
  bool gantt = false;  // keep each node's time with each job, for the trace (gantt())
  // Application jobs: the cluster model they simulate themselves on (empty: the default model, with
  // the cluster's nodes), and the folder of their output, job-ID.log (empty: a temporary one,
  // removed afterwards).
  std::string model{};
  std::string logs{};
  // Which idle nodes a job gets (allocation.hpp); null: the lowest-numbered ones.
  Allocator* allocator = nullptr;
  // The mesh the nodes sit on (node v at (v mod width, v / width)): each job's dispersal and the
  // contention of its own messages at its start go into the results. Null: none.
  const Mesh* mesh = nullptr;
  // With the mesh: I/O nodes in a column west of it (contention.hpp), for the jobs' balance, the
  // balance factor and the contention of writes to them.
  bool io_column = false;
  // Traffic jobs' messages cross the mesh's links (and its I/O column's), XY routed, shared by all
  // running jobs (the Intel TFLOPS in Mache, "Parallel I/O- and Communication-Sensitive Scheduling on High-Performance
  // Parallel Computers": 380 MB/s a direction), by default equally: a fair share per link, the fluid model of Mache's
  // contention counts.
  double link_bandwidth = 380e6;  // bytes per second
  double hop_latency = 100e-9;    // seconds
  double io_bandwidth = 0;        // of an I/O node's link (0: link_bandwidth; the TFLOPS's: 64 MB/s)
  sim::Sharing sharing = sim::Sharing::Equal;
  // Called at most twice a second with the simulated time and the jobs done so far (progress on a
  // terminal).
  std::function<void(double now, std::size_t done)> progress{};
};

class Simulation {
 public:
  // Keeps references to the workload and the scheduler.
  Simulation(const Workload& workload, Scheduler& scheduler, SimulationOptions options = {});
  ~Simulation();

  // Runs to the last job's end. The results point into the workload's jobs.
  // Throws std::runtime_error when the scheduler errs (a start or a
  // growth that does not fit, a shrink to nothing, jobs left waiting on an idle cluster).
  Results run();

  // With SimulationOptions::gantt, after run(): each node's time with each job, the nodes that joined
  // or left a running job (resizes), and the cluster's state after every instant that changed it.
  const Gantt& gantt() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dps::cluster
