// ReshapeScheduler: ReSHAPE's resizing scheduler (Sudarsan, "ReSHAPE: A Framework for Dynamic Resizing of Parallel
// Applications", ch. 4; Sudarsan, Ribbens & Varadarajan, "Priority-enabled Scheduling for Resizable Parallel
// Applications", §3). The queue is backfilled with EASY; at every resize point a scenario decides whether the job
// shrinks, grows or keeps its size, from its performance profile (profiler.hpp) and the others':
//   - an allocation strategy says who may grow into idle nodes: Max-benefit (by expand potential,
//     leaving idle nodes to jobs of higher potential, or priority, that reach a resize point first),
//     FCFS-expand (in the order they reach resize points), Uniform-expand (only when every running
//     job could grow);
//   - a harvesting strategy says who shrinks when the queue's head cannot start: Least-impact
//     (those that lose least, in ascending order), Fair-contract (each once in turn), FCFS-contract
//     (whoever reaches a resize point), or none (policy 2: running jobs are favoured);
//   - with priorities, the queue is ordered by Moab's aging priority plus the user's, a job of a
//     higher class is never shrunk for a lower one, and grows first.
// A job grows one step of its topology at a time, only while its last growth paid (else it goes
// back and that size is its sweet spot) and while its expand potential exceeds the threshold; it
// shrinks only to the configuration it grew from.
//
//   auto pba = dps::cluster::ReshapeScheduler::scenario("pba-pr");
//   dps::cluster::Results r = dps::cluster::Simulation(workload, *pba).run();
#pragma once

#include "dps/cluster/profiler.hpp"
#include "dps/cluster/scheduler.hpp"

#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace dps::cluster {

enum class Allocation { MaxBenefit, FcfsExpand, UniformExpand };
enum class Harvesting { None, LeastImpact, FairContract, FcfsContract };

struct ReshapeOptions {
  Allocation allocation = Allocation::MaxBenefit;
  Harvesting harvesting = Harvesting::LeastImpact;
  bool priority = false;
  double threshold = 0.2;  // the expand potential a job needs to grow (once it has one)
  std::size_t window = 3;  // sizes the potential's fit goes through
  // Aging priority of a queued job (Moab, as Sudarsan et al., §3.1, use it): qfactor_weight · (1 + wait /
  // max(qfactor_limit, walltime)) + queue_time_weight · wait + nnodes_weight · size + user priority.
  double qfactor_weight = 1, qfactor_limit = 1, queue_time_weight = 0, nnodes_weight = 0;
};

class ReshapeScheduler final : public Scheduler {
 public:
  ReshapeScheduler(std::string name, ReshapeOptions options) : name_(std::move(name)), options_(options) {}

  // The scenarios of Sudarsan (ch. 4) and Sudarsan et al.: pba-q, fair-q, fcfs-li-q, greedy-r, fair-r,
  // pba-pr, fcfs-pr, max-b-pr; the scenario sets the strategies and priority, `tuning` the rest.
  // Throws std::invalid_argument naming them for any other name.
  static std::unique_ptr<ReshapeScheduler> scenario(const std::string& name, ReshapeOptions tuning = {});
  static const std::vector<std::string>& scenarios();

  std::string name() const override { return name_; }
  const ReshapeOptions& options() const noexcept { return options_; }
  void schedule(Cluster& cluster) override;
  std::size_t resize(Cluster& cluster, const Running& job, const ResizePoint& point) override;
  void ended(Cluster& cluster, const Running& job) override;

  const Profile* profile(const Job& job) const;  // nullptr before its first resize point
  double aging_priority(const Cluster& cluster, const Job& queued) const;

 private:
  std::size_t shrink(Profile& p);
  std::size_t grow(Profile& p, std::size_t to);
  std::size_t next_size(const Job& job, std::size_t size) const;
  static std::size_t largest(const Cluster& cluster, const Job& job);  // the most nodes it may grow to
  // The job may grow one step now by the allocation strategy (its own conditions met).
  bool may_grow(const Cluster& cluster, const Running& job, const Profile& p, double next_point) const;
  bool eligible(const Cluster& cluster, const Running& job) const;  // a candidate to grow at its next point
  bool harvest(const Cluster& cluster, const Running& job, const Job& head, std::size_t needed);
  bool harvestable(const Running& job, const Job& head) const;
  std::size_t gatherable(const Cluster& cluster, const Job& head) const;  // idle + what shrinks could free
  std::vector<const Job*> order(const Cluster& cluster) const;  // the queue, highest priority first

  std::string name_;
  ReshapeOptions options_;
  std::unordered_map<const Job*, Profile> profiles_;
  std::set<const Job*> due_;  // Fair-contract: jobs still to shrink in the current round
};

}  // namespace dps::cluster
