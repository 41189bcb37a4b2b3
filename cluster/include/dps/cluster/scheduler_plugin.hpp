// A scheduler of your own, compiled apart and loaded by dps-cluster and dps-scheduler alike:
// `--scheduler ./libsmallest_first.so` (a path: a name with a '/'). The library defines one Scheduler
// (scheduler.hpp) and names it with DPS_CLUSTER_SCHEDULER; it links against nothing of ours, its calls
// into the cluster resolve in the program that loads it (built against the same installed package).
//
//   // smallest_first.cpp
//   #include <dps/cluster/scheduler_plugin.hpp>
//   struct SmallestFirst final : dps::cluster::Scheduler {
//     std::string name() const override { return "smallest-first"; }
//     void schedule(dps::cluster::Cluster& c) override { ... c.start(*job); ... }
//   };
//   DPS_CLUSTER_SCHEDULER(SmallestFirst)
//
//   # CMakeLists.txt
//   add_library(smallest_first MODULE smallest_first.cpp)
//   target_link_libraries(smallest_first PRIVATE dps::cluster_plugin)
#pragma once

#include "dps/cluster/scheduler.hpp"

#include <memory>
#include <string>

// The factory the programs look up: a new TYPE (default-constructed), theirs to delete.
#define DPS_CLUSTER_SCHEDULER(TYPE) \
  extern "C" __attribute__((visibility("default"))) dps::cluster::Scheduler* dps_cluster_scheduler() { return new TYPE(); }

namespace dps::cluster {

// The scheduler the library at `path` defines, the library kept loaded as long as the scheduler
// lives. Throws std::invalid_argument with a one-line reason: no such file, not a library, or no
// DPS_CLUSTER_SCHEDULER in it.
std::unique_ptr<Scheduler> load_scheduler(const std::string& path);

}  // namespace dps::cluster
