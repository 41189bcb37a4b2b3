// Job: one job of a simulated cluster's workload (Sudarsan, "ReSHAPE: A Framework for Dynamic Resizing of Parallel
// Applications"; Sudarsan, Ribbens & Varadarajan, "Priority-enabled Scheduling for Resizable Parallel Applications";
// Mache, "Parallel I/O- and Communication-Sensitive Scheduling on High-Performance Parallel Computers"). Four kinds:
//   - rigid: holds `size` nodes for `runtime` seconds (a line of an SWF trace);
//   - malleable: a synthetic iterative job (Sudarsan et al., §4.1): `iterations` iterations, each taking
//     `iteration_s` at its start size and as the speedup model says at others, with a resize point
//     after every iteration;
//   - application: a real DPS program (`command`, built against dps::sim) run by partial direct
//     execution on the nodes the scheduler gives it;
//   - traffic: Mache's communication job, which computes nothing: each of its nodes sends
//     `messages` messages of `message_bytes`, one after another, a share `io_share` of them to I/O
//     nodes, the others to its own nodes; it ends when the last arrives. Its messages cross the
//     simulation's mesh, whose links all running jobs share, so its time depends on where it and
//     the others are placed.
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

enum class JobKind : std::uint8_t { Rigid, Malleable, Application, Traffic };
inline const char* describe(JobKind kind) {  // "rigid", "malleable", "application", "traffic"
  switch (kind) {
    case JobKind::Rigid: return "rigid";
    case JobKind::Malleable: return "malleable";
    case JobKind::Application: return "application";
    case JobKind::Traffic: return "traffic";
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
  std::size_t max_size = 0;     // the most nodes it may grow to (0: the cluster's)
  double redistribution_s = 0;  // charged at every resize (Sudarsan et al.'s experiments: none)

  // application
  std::vector<std::string> command{};

  // traffic (each destination drawn at random, seeded by the job's id)
  long messages = 0;        // per node
  double message_bytes = 0;
  double io_share = 0;      // 0 to 1
};

// A user class and its priority (Sudarsan et al., §3.1: added to the aging priority; gold < platinum).
struct JobClass {
  std::string name;
  double priority = 0;
};

}  // namespace dps::cluster
