// Resize points and the policies that answer them (ReSHAPE: Sudarsan, "ReSHAPE: A Framework for Dynamic Resizing of
// Parallel Applications", ch. 2). An iterative application reaches a resize point between iterations, reports how it
// runs, and gets back the number of threads to continue with (the same: keep). A job alone asks ReSHAPE's rule; the
// cluster simulator answers the same call for every job it runs.
//
//   dps::ReshapePolicy policy(dps::ReshapePolicy::Topology::NearlySquare, 64);
//   std::size_t next = policy.decide({.iteration = 10, .size = 4, .iteration_seconds = 0.8});
//
// ReSHAPE's rule: grow by the topology's step while the last growth cut the iteration time by more
// than `threshold` (a fraction); when it did not, go back to the size before it and stay there (the
// sweet spot). It never shrinks to a size it has not run.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>

namespace dps {

struct ResizePoint {
  long iteration = 0;                 // iterations done
  std::size_t size = 0;               // threads now
  double iteration_seconds = 0;       // the mean iteration time since the last resize point
  double redistribution_seconds = 0;  // the last resize's redistribution (0: none yet)
};

// How a job's size may grow (ReSHAPE's processor topologies): Arbitrary by a fixed step; NearlySquare
// a row or column more on the smaller side of the nearly-square grid of the size (4 = 2×2 -> 6 = 3×2
// -> 9 = 3×3); PowerOfTwo twice as many.
enum class ProcessorTopology { Arbitrary, NearlySquare, PowerOfTwo };
std::size_t next_size(ProcessorTopology topology, std::size_t size, std::size_t step = 1);  // one step up

class ResizePolicy {
 public:
  virtual ~ResizePolicy() = default;
  virtual std::size_t decide(const ResizePoint& point) = 0;  // the size to continue with
};

class ReshapePolicy final : public ResizePolicy {
 public:
  using Topology = ProcessorTopology;
  ReshapePolicy(Topology topology, std::size_t max_size, std::size_t step = 1, double threshold = 0.05)
      : topology_(topology), max_size_(max_size), step_(step), threshold_(threshold) {}

  std::size_t decide(const ResizePoint& point) override;
  std::size_t next_size(std::size_t size) const { return dps::next_size(topology_, size, step_); }
  std::size_t sweet_spot() const noexcept { return sweet_spot_; }  // 0 until found
  const std::map<std::size_t, double>& profile() const noexcept { return seen_; }  // size -> iteration time

 private:
  Topology topology_;
  std::size_t max_size_, step_;
  double threshold_;
  std::map<std::size_t, double> seen_;
  std::size_t previous_ = 0;  // the size before the last growth
  std::size_t sweet_spot_ = 0;
};

// The policy a command line names with --policy (only "reshape": ReSHAPE's rule, growing by one step
// of `topology` up to `max_size` threads, 0: four times `start`, while a growth gains more than
// `threshold`); null when `name` is empty. Throws std::invalid_argument with a one-line reason.
std::unique_ptr<ReshapePolicy> policy_named(const std::string& name, ProcessorTopology topology, std::size_t start,
                                            long max_size, double threshold);

}  // namespace dps
