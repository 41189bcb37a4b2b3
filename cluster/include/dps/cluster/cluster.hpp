// Cluster: the cluster as a scheduler sees it, simulated or real, and the one thing it does to it
// outside a resize point: start a queued job. Running jobs, the queue and the idle nodes change only
// through the cluster's driver (dispatcher.hpp: arrivals, ends, kills) and through start() and the
// answers to resize points.
//
//   for (const dps::cluster::Job* job : cluster.queue())     // in submit order
//     if (job->size <= cluster.idle()) cluster.start(*job);   // FCFS without the head-of-line rule
#pragma once

#include "dps/cluster/job.hpp"

#include <cstddef>
#include <cstdint>
#include <deque>
#include <set>
#include <vector>

namespace dps::cluster {

using Node = std::uint32_t;

// One node's time with one job (the Gantt chart's bars).
struct Segment {
  Node node;
  const Job* job;
  double start, end;
};

// A job that holds nodes.
struct Running {
  const Job* job = nullptr;
  std::size_t arrival = 0;  // the job's place in the order jobs arrived (the first 0)
  double start = 0;
  std::vector<Node> nodes;  // the latest given last (a shrink gives back from the end)
  long iteration = 0;       // iterations done (malleable and application jobs)
  double last_point = 0;    // when it last reached a resize point (its start before the first)
  double iteration_s = 0;   // the last iteration's time, as it reported it (0 before the first)

  std::size_t size() const noexcept { return nodes.size(); }
  double expected_end() const noexcept { return start + job->walltime; }  // what backfilling knows
};

class Allocator;
struct Gantt;

class Cluster {
 public:
  explicit Cluster(std::size_t nodes);

  double now() const noexcept { return now_; }
  std::size_t nodes() const noexcept { return busy_.size(); }
  std::size_t idle() const noexcept { return idle_; }
  const std::vector<const Job*>& queue() const noexcept { return queue_; }  // waiting, in submit order
  const std::vector<Running*>& running() const noexcept { return running_; }  // in no order
  // The running jobs by expected end (their start + walltime), the earliest first.
  struct ByExpectedEnd {
    bool operator()(const Running* a, const Running* b) const noexcept {
      return a->expected_end() < b->expected_end() || (a->expected_end() == b->expected_end() && a->job->id < b->job->id);
    }
  };
  const std::set<Running*, ByExpectedEnd>& by_expected_end() const noexcept { return by_end_; }
  bool busy(Node node) const { return busy_.at(node) != nullptr; }
  const Running* holder(Node node) const { return busy_.at(node); }

  // Whether a job of `count` nodes can start now: that many are idle, and a contiguous allocator finds
  // them a rectangle.
  bool fits(std::size_t count) const;
  // Starts a queued job on the idle nodes the allocator chooses (the lowest-numbered without one);
  // throws std::logic_error when it is not queued or does not fit.
  void start(const Job& job);

 private:
  friend class Dispatcher;
  void enqueue(const Job& job);                // it arrived (kept by reference)
  void withdraw(const Job& job);               // it leaves the queue without running
  void recall(const Job& job);                 // it ran before the driver restarted: a record, nothing held
  void start_on(const Job& job, const std::vector<Node>& nodes);  // a queued job on these idle nodes
  void hold(Running& r, Node node);            // an idle node becomes the job's
  void release(const Running& r, Node node);   // ... idle again (its Gantt segment kept)
  void give(Running& r, std::size_t n);  // n more nodes
  void take_back(Running& r, std::size_t n);  // its last n nodes
  void take_back(Running& r, Node node);      // that one
  void finish(Running& r);  // all of them: it leaves

  double now_ = 0;
  std::size_t idle_ = 0;
  std::vector<const Running*> busy_;  // per node: who holds it
  std::vector<std::uint64_t> free_;   // bit per node
  std::vector<double> since_;         // per node: when its holder got it
  std::vector<const Job*> queue_;
  std::vector<std::size_t> queued_arrival_;  // per queued job: its arrival
  std::vector<Running*> running_;
  std::set<Running*, ByExpectedEnd> by_end_;
  std::deque<Running> records_;       // per arrival
  std::vector<Running*> started_;     // by start() since the driver last looked
  Allocator* allocator_ = nullptr;  // null: the lowest-numbered idle nodes
  std::vector<bool> idle_nodes_;    // per node: the allocator's view
  Gantt* gantt_ = nullptr;          // where released nodes' segments go; null: not kept
};

}  // namespace dps::cluster
