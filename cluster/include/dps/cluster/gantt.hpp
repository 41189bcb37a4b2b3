// Gantt: what a cluster run did with its nodes, simulated or real, and its trace in the format of
// every DPS trace (docs/trace-format.md): dps-viewer shows it as the cluster's Gantt chart, a row per
// node, a colour per job ("job ID" steps: a node's time with the job), the resizes marked ("grow": the
// node joined a running job, "shrink": it left one), and the counters "utilization" (nodes held ÷
// nodes) and "queued jobs" charted below; `dps-trace plot` draws them over time.
//
//   dps::cluster::Simulation simulation(workload, scheduler, {.gantt = true});
//   const dps::cluster::Results results = simulation.run();
//   dps::cluster::write_trace(simulation.gantt(), results, "cluster.dpstrace", {.program = "dps-cluster"});
#pragma once

#include "dps/cluster/cluster.hpp"
#include "dps/cluster/results.hpp"

#include <string>
#include <vector>

namespace dps::cluster {

struct Gantt {
  struct Resize {  // a node joined (grew) or left a running job
    Node node;
    const Job* job;
    double time;
    bool grew;
  };
  struct Sample {  // the cluster after an instant that changed it
    double time;
    std::size_t busy, queued;  // nodes held, jobs waiting
  };
  std::vector<Segment> segments;  // each node's time with each job, in the order they ended
  std::vector<Resize> resizes;
  std::vector<Sample> samples;
};

struct TraceHeader {
  std::string program = "dps-cluster";
  bool simulated = true;  // the clock: simulated seconds, or a real run's
};

// Throws std::logic_error when the chart is empty for a run that has jobs (it was not kept), and
// std::runtime_error naming the file when it cannot be written.
void write_trace(const Gantt& gantt, const Results& results, const std::string& path, const TraceHeader& header = {});

}  // namespace dps::cluster
