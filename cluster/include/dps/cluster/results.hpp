// Results: what a cluster simulation reports, per job and for the run (the figures of Sudarsan, Ribbens & Varadarajan,
// "Priority-enabled Scheduling for Resizable Parallel Applications", §4: utilization, completion, execution and wait
// times; and bounded slowdown).
//
//   dps::cluster::Results r = simulation.run();
//   std::cout << r.json() << "\n";   // {"scheduler": "easy", "jobs": 18239, "makespan_s": ..., ...}
#pragma once

#include "dps/cluster/contention.hpp"
#include "dps/cluster/job.hpp"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dps::cluster {

struct JobRecord {
  const Job* job = nullptr;
  double start = -1, end = -1;
  bool killed = false;  // at its walltime
  std::vector<std::pair<double, std::size_t>> sizes;  // (from when, nodes): the first at its start
  Dispersal placed{};  // its nodes at its start, on the simulation's mesh (when it has one)
  Contention::Peak contention{};  // of its own messages, all to all, at its start (on a mesh)
  long balance = 0;    // its nodes above the middle I/O link minus those below (with I/O nodes)

  double wait() const noexcept { return start - job->submit; }
  double execution() const noexcept { return end - start; }
  double completion() const noexcept { return end - job->submit; }  // turnaround
  double node_seconds() const noexcept;
};

struct ClassFigures {
  std::string name;
  std::size_t jobs = 0;
  double mean_wait_s = 0, mean_completion_s = 0, mean_execution_s = 0;
};

struct Results {
  std::string scheduler;
  std::size_t nodes = 0;
  std::vector<JobRecord> jobs;  // in the workload's order
  std::size_t skipped = 0, unusable = 0;  // left out of the workload (Workload says why)
  std::size_t killed = 0, resizes = 0;
  double tau_s = 10;
  // Over all jobs: the span from the first submit to the last end, busy node-seconds over the
  // nodes times that span, and the means. Bounded slowdown: max(1, completion / max(execution, tau)).
  double makespan_s = 0, utilization = 0;
  double mean_wait_s = 0, mean_completion_s = 0, mean_execution_s = 0, mean_bounded_slowdown = 0;
  // On a mesh: the jobs' mean dispersal at their start (Mache, "Parallel I/O- and Communication-Sensitive Scheduling on
  // High-Performance Parallel Computers": lower is less contention).
  bool on_mesh = false;
  double mean_average_distance = 0, mean_nodes_affected = 0, mean_links_affected = 0, mean_max_contention = 0;
  // With I/O nodes west of the mesh, over the jobs' starts: the mean |system balance| (the balance
  // factor) and the mean max_contention of every busy node writing to every I/O node (Mache, Table 8).
  bool io_column = false;
  double balance_factor = 0, mean_io_contention = 0;
  std::vector<std::string> class_names;  // the workload's, Job::klass indexes them
  std::vector<ClassFigures> classes;  // the workload's classes that have jobs
  std::uint64_t events = 0;
  double wall_s = 0;  // real time the simulation took

  std::string json() const;  // one line
  // id,kind,class,submit,size,start,end,wait,execution,killed,[on a mesh: average_distance,nodes_affected,
  // links_affected,max_contention,hotspot,][with I/O nodes: balance,]sizes
  std::string jobs_csv() const;
  void write_jobs_csv(const std::string& path) const;  // throws when it cannot
};

}  // namespace dps::cluster
