// Scheduler: what decides, in a simulated cluster, which queued jobs start and how resizable jobs
// change size. Implement it to try a policy of your own; FCFS, the backfilling schedulers
// (backfilling.hpp) and ReSHAPE's policies (reshape.hpp) are built on it.
//
//   struct Greedy final : dps::cluster::Scheduler {
//     std::string name() const override { return "greedy"; }
//     void schedule(dps::cluster::Cluster& c) override {   // any job that fits, in submit order
//       for (auto* job : std::vector(c.queue())) if (job->size <= c.idle()) c.start(*job);
//     }
//     std::size_t resize(dps::cluster::Cluster& c, const dps::cluster::Running& job,
//                        const dps::ResizePoint& point) override {
//       return c.queue().empty() ? point.size + c.idle() : point.size;  // take what nobody waits for
//     }
//   };
#pragma once

#include "dps/cluster/cluster.hpp"
#include "dps/resize_policy.hpp"

#include <string>

namespace dps::cluster {

class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual std::string name() const = 0;

  // After the events of an instant (arrivals, ends, resizes): start what should start, with
  // cluster.start(job).
  virtual void schedule(Cluster& cluster) = 0;

  // A resizable job reached a resize point (between two iterations) and reports how it ran: the
  // size to go on with. Growing takes idle nodes (the simulation refuses more than there are);
  // shrinking gives back the nodes the job got last. Static schedulers keep every job as it is.
  virtual std::size_t resize(Cluster& cluster, const Running& job, const ResizePoint& point) {
    (void)cluster, (void)job;
    return point.size;
  }

  // A job left the cluster (done, or killed at its walltime).
  virtual void ended(Cluster& cluster, const Running& job) { (void)cluster, (void)job; }
};

}  // namespace dps::cluster
