// The static schedulers: jobs start in submit order, at the size they asked for, and keep it.
//   - Fcfs: the queue's head starts when it fits; nothing passes it.
//   - EasyBackfilling (Lifka's EASY, ReSHAPE's application scheduler): only the head holds a
//     reservation, at the earliest time the running jobs' walltimes free enough nodes (the shadow
//     time); a later job starts now if it fits and either ends by then or uses only nodes the head
//     will not need.
//   - ConservativeBackfilling (Mu'alem & Feitelson): every queued job, in order, gets the earliest
//     reservation that delays none before it; those reserved for now start. Reservations are made
//     afresh at every instant, so they move earlier when jobs end before their walltime.
//
//   dps::cluster::EasyBackfilling easy;
//   dps::cluster::Results r = dps::cluster::Simulation(workload, easy).run();
#pragma once

#include "dps/cluster/scheduler.hpp"

#include <utility>
#include <vector>

namespace dps::cluster {

// EASY over `order` (queued jobs, the head first; a copy, as starting jobs changes the cluster's
// queue): what ReSHAPE's scenarios backfill with, in submit or in priority order.
void easy_backfill(Cluster& cluster, std::vector<const Job*> order);

class Fcfs final : public Scheduler {
 public:
  std::string name() const override { return "fcfs"; }
  void schedule(Cluster& cluster) override;
};

class EasyBackfilling final : public Scheduler {
 public:
  std::string name() const override { return "easy"; }
  void schedule(Cluster& cluster) override;
};

class ConservativeBackfilling final : public Scheduler {
 public:
  std::string name() const override { return "conservative"; }
  void schedule(Cluster& cluster) override;

 private:
  std::vector<std::pair<double, std::size_t>> profile_;  // (from when, nodes free): a step function
  std::vector<const Job*> queue_;
};

}  // namespace dps::cluster
