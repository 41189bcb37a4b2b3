// Job: one job of a simulated cluster's workload (seeds 000, 001). Three kinds:
//   - rigid: holds `size` nodes for `runtime` seconds (a line of an SWF trace);
//   - malleable: a synthetic iterative job (seed 001 §4.1): `iterations` iterations, each taking
//     `iteration_s` at its start size and as the speedup model says at others, with a resize point
//     after every iteration;
//   - application: a real DPS program (`command`, built against dps::sim) run by partial direct
//     execution on the nodes the scheduler gives it.
// Every kind is killed when it has run `walltime` seconds; backfilling takes `walltime` as its estimate.
//
//   dps::cluster::Job j{.id = 1, .kind = dps::cluster::JobKind::Rigid, .submit = 0, .size = 16,
//                       .runtime = 100, .walltime = 120};
#pragma once

#include "dps/resize_policy.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dps::cluster {

enum class JobKind : std::uint8_t { Rigid, Malleable, Application };
inline const char* describe(JobKind kind) {  // "rigid", "malleable", "application"
  switch (kind) {
    case JobKind::Rigid: return "rigid";
    case JobKind::Malleable: return "malleable";
    case JobKind::Application: return "application";
  }
  return "?";
}

struct Job {
  std::uint64_t id = 0;  // the trace's job number, or the workload's order
  JobKind kind = JobKind::Rigid;
  double submit = 0;     // seconds
  std::size_t size = 1;  // nodes at the start (a rigid job's throughout)
  double walltime = 0;   // the user's limit: killed when reached
  std::uint16_t klass = 0;  // index into Workload::classes
  double priority = 0;      // its class's user priority (schedulers that weigh priorities read it)

  // rigid
  double runtime = 0;

  // malleable
  long iterations = 0;
  double iteration_s = 0;  // at `size`
  double alpha = 0.8;      // the speedup model's node efficiency, 0 < alpha <= 1
  ProcessorTopology topology = ProcessorTopology::Arbitrary;
  std::size_t step = 1;    // Arbitrary topology: nodes per growth
  bool resizable = true;   // false: runs at `size` throughout (a static job)
  double redistribution_s = 0;  // charged at every resize (seed 001's experiments: none)

  // application
  std::vector<std::string> command{};
};

// A user class and its priority (seed 001 §3.1: added to the aging priority; gold < platinum).
struct JobClass {
  std::string name;
  double priority = 0;
};

}  // namespace dps::cluster
