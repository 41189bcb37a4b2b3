// Plan: a job's predicted time and dynamic efficiency at each size it could be given, from its -sim
// program run by the simulator on a cluster model, and the size ReSHAPE's rule would settle on (grow
// while a step cuts the time by more than a threshold: the sweet spot), found before the job runs
// instead of by growing past it. dps-plan prints it.
//
//   dps::cluster::Plan p = dps::cluster::plan({"stencil-sim", "--n", "4096"}, {.sizes = {1, 2, 4, 8}});
//   p.recommended;   // e.g. 4
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace dps::cluster {

struct PlanOptions {
  std::vector<std::size_t> sizes;  // node counts to try, ascending
  std::string model;               // the cluster model (empty: the -sim program's default)
  double threshold = 0.05;         // the time a step up must cut, as a share, to be worth it
};

struct Plan {
  struct Size {
    std::size_t nodes = 0;
    double predicted_s = 0, efficiency = 0;  // the run's predicted time, and its dynamic efficiency
  };
  std::vector<Size> sizes;
  std::size_t recommended = 0;  // nodes
};

// Runs `command` (a -sim program and its arguments; --nodes, --model and --stats are added) once per
// size. Throws std::runtime_error naming the size when a run fails, with its last words.
Plan plan(const std::vector<std::string>& command, const PlanOptions& options);

}  // namespace dps::cluster
