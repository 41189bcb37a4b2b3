// Dispatcher: a cluster run under a scheduler, as both of its drivers run it, the simulated cluster
// (simulation.hpp) and the scheduler daemon (dps-scheduler): jobs arrive, the scheduler starts them and
// answers their resize points through it, checked, and it keeps each job's record, the Gantt chart and
// the figures. The driver owns the clock and the jobs' lives (what runs, when it ends).
//
//   dps::cluster::Dispatcher d(8, scheduler);
//   d.arrive(job);                                  // at d.now()
//   for (Running* r : d.schedule()) launch(*r);     // the scheduler started these
//   std::size_t size = d.resize(*r, point);         // at its resize point: grown at once, or give back later
//   d.end(*r, false);
#pragma once

#include "dps/cluster/cluster.hpp"
#include "dps/cluster/gantt.hpp"
#include "dps/cluster/results.hpp"
#include "dps/cluster/scheduler.hpp"

#include <string>
#include <vector>

namespace dps::cluster {

class Dispatcher {
 public:
  struct Options {
    bool gantt = false;             // keep the Gantt chart (gantt())
    Allocator* allocator = nullptr;  // which idle nodes a job gets; null: the lowest-numbered
    std::size_t expected_jobs = 0;   // room made for them at once (a workload known ahead)
  };
  Dispatcher(std::size_t nodes, Scheduler& scheduler, Options options);  // keeps the scheduler by reference

  const Cluster& cluster() const noexcept { return cluster_; }
  const Scheduler& scheduler() const noexcept { return scheduler_; }
  double now() const noexcept { return cluster_.now(); }
  void advance(double now) noexcept { cluster_.now_ = now; }  // the driver's clock, never back

  void arrive(const Job& job);  // queued now; kept by reference
  // The scheduler acts after the events of an instant: the jobs it started (then, or at the
  // instant's resize points), their records begun.
  const std::vector<Running*>& schedule();
  // A running job at a resize point: the scheduler's answer, checked (std::runtime_error naming the
  // scheduler when it shrinks to nothing or grows past the idle nodes). A growth is given at once; a
  // shrink is the driver's to do (shrink()) when the job gives the nodes back.
  std::size_t resize(Running& job, const ResizePoint& point);
  void shrink(Running& job, std::size_t nodes);  // it gave back its last `nodes`
  void release(Running& job, Node node);         // it gave back that one
  void end(Running& job, bool killed);           // it left (killed: at its walltime, or failed)
  void withdraw(const Job& job);                 // a queued job cancelled: it waited, never ran
  // A driver that restarted: a job that ended before (its record as it was), and one that still runs
  // on these nodes since `start` (its scheduler hears of it at its next resize point).
  void recall(const Job& job, JobRecord record);
  Running& resume(const Job& job, const std::vector<Node>& nodes, double start);
  void sample();  // the cluster's state now, for the chart (after an instant that may change it)

  JobRecord& record(const Running& job) { return records_[job.arrival]; }
  Running& running(std::size_t arrival) { return cluster_.records_[arrival]; }
  std::size_t arrived() const noexcept { return records_.size(); }
  std::size_t done() const noexcept { return done_; }
  std::size_t resizes() const noexcept { return resizes_; }
  const Gantt& gantt() const noexcept { return gantt_; }

  // The figures over every job that arrived (they are all done), in arrival order: the Results a
  // driver prints; it adds its own (a mesh's dispersal, events).
  Results results(const std::vector<JobClass>& classes, double tau_s) const;

 private:
  [[noreturn]] void erred(const std::string& what) const;
  void sized(const Running& job);  // its size from now on, in its record

  Scheduler& scheduler_;
  Options options_;
  Cluster cluster_;
  std::vector<JobRecord> records_;  // per arrival
  std::vector<Running*> started_;
  std::size_t done_ = 0, resizes_ = 0;
  Gantt gantt_;
};

}  // namespace dps::cluster
