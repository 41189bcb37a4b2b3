// A cluster simulation's trace, in the format of every DPS trace (docs/trace-format.md): dps-viewer
// shows it as the cluster's Gantt chart, a row per node, a colour per job ("job ID" steps: a node's
// time with the job), the resizes marked ("grow": the node joined a running job, "shrink": it left
// one), and the counters "utilization" (nodes held ÷ nodes) and "queued jobs" charted below;
// `dps-trace plot` draws them over time.
//
//   dps::cluster::Simulation simulation(workload, scheduler, {.gantt = true});
//   const dps::cluster::Results results = simulation.run();
//   dps::cluster::write_trace(simulation, results, "cluster.dpstrace");
#pragma once

#include "dps/cluster/results.hpp"
#include "dps/cluster/simulation.hpp"

#include <string>

namespace dps::cluster {

// Throws std::logic_error unless the simulation ran with SimulationOptions::gantt, and
// std::runtime_error naming the file when it cannot be written.
void write_trace(const Simulation& simulation, const Results& results, const std::string& path);

}  // namespace dps::cluster
