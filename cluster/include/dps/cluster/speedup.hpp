// SyntheticSpeedup: the iteration time of a synthetic malleable job at each size (Sudarsan, Ribbens & Varadarajan,
// "Priority-enabled Scheduling for Resizable Parallel Applications", §4.1):
//   factor = (P2/P1)^(alpha·(P2 − P1)/P1),  R(P2) = R(P1) / factor,  0 < alpha <= 1.
// The model is path dependent (400 -> 2000 in one step is 125× faster at alpha 0.75, in steps of 20
// about 1.03×), so a size's time is computed once, from the size the job grew from when it first
// reached it, and remembered: a job that shrinks back finds the time it had there (what ReSHAPE's
// profiler measured), and growing in the topology's steps gives the diminishing returns of the paper's
// Fig. 2. Below the start size, which ReSHAPE never asks for, the time grows linearly (R·P0/P).
//
//   dps::cluster::SyntheticSpeedup job(35, 8.0, 0.8);
//   double t = job.resize(35, 45);  // 8 / (45/35)^(0.8·10/35) = 7.55 s
//   job.resize(45, 35);             // 8 s again
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace dps::cluster {

class SyntheticSpeedup {
 public:
  SyntheticSpeedup(std::size_t start, double seconds, double alpha);

  static double factor(std::size_t from, std::size_t to, double alpha);
  // The iteration time at `to` for a job now at `from`: remembered if it ran there, else computed
  // from `from` and remembered.
  double resize(std::size_t from, std::size_t to);
  double at(std::size_t size) const;  // a size it has run on (throws std::out_of_range otherwise)

 private:
  std::size_t start_;
  double alpha_;
  std::vector<std::pair<std::size_t, double>> seen_;  // size -> seconds per iteration, few entries
};

}  // namespace dps::cluster
