// Workload: the jobs a simulated cluster runs, and the cluster's size. Read from an SWF trace of the
// Parallel Workloads Archive (rigid jobs) or from a JSON file mixing rigid, malleable and application
// jobs, with their submit times or arrivals drawn from a seeded Poisson process (docs/cluster-scheduling.md).
//
//   dps::cluster::Workload w = dps::cluster::load_workload("nasa.swf.gz", {.nodes = 128});
//   w.jobs.size(); w.skipped;   // jobs wider than the cluster, left out as the archive's convention says
#pragma once

#include "dps/cluster/job.hpp"
#include "dps/cluster/swf.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace dps::cluster {

struct WorkloadOptions {
  std::size_t nodes = 0;  // the cluster's size; 0: the file's (SWF: MaxProcs, else MaxNodes)
  std::size_t fallback_nodes = 0;  // ... when the file does not say
  bool strict = false;    // a job wider than the cluster, or one the trace does not describe, is an error
};

struct Workload {
  std::vector<Job> jobs;          // by submit time, ties in file order
  std::size_t nodes = 0;
  std::vector<JobClass> classes;  // Job::klass indexes it; at least one
  std::size_t skipped = 0;        // jobs wider than the cluster
  std::size_t unusable = 0;       // SWF jobs with neither a size nor a run time known
};

// The synthetic mix of malleable jobs of Sudarsan, Ribbens & Varadarajan ("Priority-enabled Scheduling for Resizable
// Parallel Applications", §4): thirds of small, medium and large jobs (35, 81, 136 nodes, or 32, 64, 128 for
// power-of-2 ones; walltime 156, 240, 324 s; 8, 20, 32 s per iteration), 7 iterations, topologies 60 % arbitrary (steps
// of 10), 30 % nearly-square, 10 % power-of-2, Poisson arrivals. `scale` multiplies the sizes (for clusters larger than
// the paper's 400 nodes).
struct ReshapeMix {
  std::size_t jobs = 120;
  double resizable = 1;       // share of the jobs that may be resized (the rest are static)
  double platinum = 0;        // share in the high-priority class
  double mean_arrival_s = 32;
  double alpha = 0.8;
  double scale = 1;
  double start_s = 0;         // the first arrival
  std::uint64_t seed = 1;
};
std::vector<Job> reshape_mix(const ReshapeMix& mix, std::uint16_t gold, std::uint16_t platinum);

// The synthetic stream of traffic jobs of Mache ("Parallel I/O- and Communication-Sensitive Scheduling on
// High-Performance Parallel Computers"): sizes exponential (mean 16, at most the cluster's nodes), Poisson arrivals;
// every job sends the same messages, with the same I/O share.
struct TrafficStream {
  std::size_t jobs = 1000;
  double mean_size = 16;
  double mean_arrival_s = 1;
  long messages = 32;            // per node
  double message_bytes = 65536;
  double io_share = 0.5;
  double walltime = 1e9;
  double start_s = 0;
  std::uint64_t seed = 1;
};
std::vector<Job> traffic_stream(const TrafficStream& stream, std::size_t nodes);

// .swf or .swf.gz: an SWF trace; .json: a workload file. Throws std::runtime_error with one line
// (the file, line or entry, and what is wrong).
Workload load_workload(const std::string& path, const WorkloadOptions& options = {});
Workload from_swf(const SwfTrace& trace, const WorkloadOptions& options = {});
Workload from_json(const std::string& text, const std::string& name, const WorkloadOptions& options = {});

}  // namespace dps::cluster
