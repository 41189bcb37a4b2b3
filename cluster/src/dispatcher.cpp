#include "dps/cluster/dispatcher.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dps::cluster {

Dispatcher::Dispatcher(std::size_t nodes, Scheduler& scheduler, Options options)
    : scheduler_(scheduler), options_(options), cluster_(nodes) {
  cluster_.allocator_ = options.allocator;
  if (options.gantt) cluster_.gantt_ = &gantt_;
  records_.reserve(options.expected_jobs);
}

void Dispatcher::erred(const std::string& what) const { throw std::runtime_error("scheduler " + scheduler_.name() + ": " + what); }

void Dispatcher::arrive(const Job& job) {
  cluster_.enqueue(job);
  records_.push_back(JobRecord{.job = &job, .sizes = {}});
}

const std::vector<Running*>& Dispatcher::schedule() {
  scheduler_.schedule(cluster_);  // started_ holds those it started at resize points too
  started_.clear();
  started_.swap(cluster_.started_);
  for (Running* r : started_) {
    record(*r).start = r->start;
    sized(*r);
  }
  return started_;
}

void Dispatcher::sized(const Running& job) {  // one entry per instant: a job gives back nodes one by one
  auto& sizes = record(job).sizes;
  if (!sizes.empty() && sizes.back().first == now())
    sizes.back().second = job.size();
  else
    sizes.emplace_back(now(), job.size());
}

std::size_t Dispatcher::resize(Running& job, const ResizePoint& point) {
  const std::size_t target = scheduler_.resize(cluster_, job, point);
  if (target == 0) erred("shrank job " + std::to_string(job.job->id) + " to no nodes");
  if (target > point.size && target - point.size > cluster_.idle())
    erred("grew job " + std::to_string(job.job->id) + " by " + std::to_string(target - point.size) + " nodes, " +
          std::to_string(cluster_.idle()) + " are idle");
  if (target != point.size) ++resizes_;  // a shrink shows when the job gives its nodes back
  if (target > point.size) {
    const std::size_t n = target - point.size;
    cluster_.give(job, n);
    if (options_.gantt)
      for (std::size_t k = job.size() - n; k < job.size(); ++k) gantt_.resizes.push_back({job.nodes[k], job.job, now(), true});
    sized(job);
  }
  return target;
}

void Dispatcher::shrink(Running& job, std::size_t nodes) {
  if (options_.gantt && nodes < job.size())
    for (std::size_t k = job.size() - nodes; k < job.size(); ++k) gantt_.resizes.push_back({job.nodes[k], job.job, now(), false});
  cluster_.take_back(job, nodes);
  sized(job);
}

void Dispatcher::release(Running& job, Node node) {
  cluster_.take_back(job, node);
  if (options_.gantt) gantt_.resizes.push_back({node, job.job, now(), false});
  sized(job);
}

void Dispatcher::end(Running& job, bool killed) {
  JobRecord& r = record(job);
  r.end = now();
  r.killed = killed;
  cluster_.finish(job);
  scheduler_.ended(cluster_, job);
  ++done_;
}

void Dispatcher::withdraw(const Job& job) {
  cluster_.withdraw(job);
  for (auto it = records_.rbegin(); it != records_.rend(); ++it)
    if (it->job == &job) {
      it->start = it->end = now();
      it->killed = true;
      break;
    }
  ++done_;
}

void Dispatcher::recall(const Job& job, JobRecord record) {
  cluster_.recall(job);
  record.job = &job;
  records_.push_back(std::move(record));
  ++done_;
}

Running& Dispatcher::resume(const Job& job, const std::vector<Node>& nodes, double start) {
  arrive(job);
  const double now = cluster_.now_;
  cluster_.now_ = start;
  cluster_.start_on(job, nodes);
  cluster_.now_ = now;
  Running& r = cluster_.records_.back();
  record(r).start = start;
  record(r).sizes.emplace_back(start, nodes.size());
  return r;
}

void Dispatcher::sample() {
  if (!options_.gantt) return;
  const Gantt::Sample s{now(), cluster_.nodes() - cluster_.idle(), cluster_.queue().size()};
  auto& samples = gantt_.samples;
  if (!samples.empty() && samples.back().busy == s.busy && samples.back().queued == s.queued) return;
  if (!samples.empty() && samples.back().time == s.time) samples.back() = s;
  else samples.push_back(s);
}

Results Dispatcher::results(const std::vector<JobClass>& classes, double tau_s) const {
  Results r;
  r.scheduler = scheduler_.name();
  r.nodes = cluster_.nodes();
  r.jobs = records_;
  r.resizes = resizes_;
  r.tau_s = tau_s;
  for (const JobClass& c : classes) r.class_names.push_back(c.name);
  if (records_.empty()) return r;
  double first = HUGE_VAL, last = -HUGE_VAL, busy = 0, wait = 0, completion = 0, execution = 0, slowdown = 0;
  std::vector<ClassFigures> figures(classes.size());
  for (std::size_t k = 0; k < figures.size(); ++k) figures[k].name = classes[k].name;
  for (const JobRecord& j : records_) {
    first = std::min(first, j.job->submit);
    last = std::max(last, j.end);
    busy += j.node_seconds();
    wait += j.wait();
    completion += j.completion();
    execution += j.execution();
    slowdown += std::max(1.0, j.completion() / std::max(j.execution(), tau_s));
    r.killed += j.killed;
    ClassFigures& c = figures.at(j.job->klass);
    ++c.jobs;
    c.mean_wait_s += j.wait();
    c.mean_completion_s += j.completion();
    c.mean_execution_s += j.execution();
  }
  const auto n = static_cast<double>(records_.size());
  r.makespan_s = last - first;
  r.utilization = r.makespan_s > 0 ? busy / (static_cast<double>(r.nodes) * r.makespan_s) : 0;
  r.mean_wait_s = wait / n;
  r.mean_completion_s = completion / n;
  r.mean_execution_s = execution / n;
  r.mean_bounded_slowdown = slowdown / n;
  for (ClassFigures& c : figures) {
    if (c.jobs == 0) continue;
    const auto m = static_cast<double>(c.jobs);
    c.mean_wait_s /= m, c.mean_completion_s /= m, c.mean_execution_s /= m;
    r.classes.push_back(std::move(c));
  }
  return r;
}

}  // namespace dps::cluster
