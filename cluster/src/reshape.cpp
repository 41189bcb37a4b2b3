// ReSHAPE's scenarios: one resize() that follows the steps of Sudarsan ("ReSHAPE: A Framework for Dynamic Resizing of
// Parallel Applications", §4.2.2), parameterized by the allocation and harvesting strategies and by priorities.
#include "dps/cluster/reshape.hpp"

#include "dps/cluster/backfilling.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace dps::cluster {

namespace {

struct Scenario {
  const char* name;
  Allocation allocation;
  Harvesting harvesting;
  bool priority;
};

constexpr Scenario kScenarios[] = {
    {"pba-q", Allocation::MaxBenefit, Harvesting::LeastImpact, false},
    {"fair-q", Allocation::MaxBenefit, Harvesting::FairContract, false},
    {"fcfs-li-q", Allocation::FcfsExpand, Harvesting::LeastImpact, false},
    {"greedy-r", Allocation::FcfsExpand, Harvesting::None, false},
    {"fair-r", Allocation::UniformExpand, Harvesting::None, false},
    {"pba-pr", Allocation::MaxBenefit, Harvesting::LeastImpact, true},
    {"fcfs-pr", Allocation::MaxBenefit, Harvesting::FcfsContract, true},
    {"max-b-pr", Allocation::MaxBenefit, Harvesting::None, true},
};

constexpr double kUnknown = -std::numeric_limits<double>::infinity();

}  // namespace

std::unique_ptr<ReshapeScheduler> ReshapeScheduler::scenario(const std::string& name, ReshapeOptions tuning) {
  for (const Scenario& s : kScenarios)
    if (name == s.name) {
      tuning.allocation = s.allocation, tuning.harvesting = s.harvesting, tuning.priority = s.priority;
      return std::make_unique<ReshapeScheduler>(name, tuning);
    }
  std::string names;
  for (const std::string& n : scenarios()) names += (names.empty() ? "" : ", ") + n;
  throw std::invalid_argument("no ReSHAPE scenario '" + name + "' (" + names + ")");
}

const std::vector<std::string>& ReshapeScheduler::scenarios() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const Scenario& s : kScenarios) v.emplace_back(s.name);
    return v;
  }();
  return names;
}

const Profile* ReshapeScheduler::profile(const Job& job) const {
  const auto it = profiles_.find(&job);
  return it == profiles_.end() ? nullptr : &it->second;
}

double ReshapeScheduler::aging_priority(const Cluster& cluster, const Job& queued) const {
  const double wait = cluster.now() - queued.submit;
  const ReshapeOptions& o = options_;
  return o.qfactor_weight * (1 + wait / std::max(o.qfactor_limit, queued.walltime)) + o.queue_time_weight * wait +
         o.nnodes_weight * static_cast<double>(queued.size) + queued.priority;
}

std::vector<const Job*> ReshapeScheduler::order(const Cluster& cluster) const {
  std::vector<const Job*> queue = cluster.queue();
  if (!options_.priority) return queue;
  std::vector<std::pair<double, const Job*>> ranked;
  ranked.reserve(queue.size());
  for (const Job* j : queue) ranked.emplace_back(-aging_priority(cluster, *j), j);
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (std::size_t i = 0; i < queue.size(); ++i) queue[i] = ranked[i].second;
  return queue;
}

void ReshapeScheduler::schedule(Cluster& cluster) { easy_backfill(cluster, order(cluster)); }

void ReshapeScheduler::ended(Cluster&, const Running& job) {
  profiles_.erase(job.job);
  due_.erase(job.job);
}

std::size_t ReshapeScheduler::next_size(const Job& job, std::size_t size) const {
  return dps::next_size(job.topology, size, job.step);
}

std::size_t ReshapeScheduler::largest(const Cluster& cluster, const Job& job) {
  return job.max_size ? std::min(job.max_size, cluster.nodes()) : cluster.nodes();
}

std::size_t ReshapeScheduler::shrink(Profile& p) {
  p.shrank();
  return p.size();
}

std::size_t ReshapeScheduler::grow(Profile& p, std::size_t to) {
  p.grew(to);
  return to;
}

// Could this running job grow at its next resize point: resizable, not at its sweet spot, a next
// size that fits the cluster, and an expand potential above the threshold (or none yet: it probes).
bool ReshapeScheduler::eligible(const Cluster& cluster, const Running& r) const {
  if (!r.job->resizable || r.iteration_s <= 0) return false;
  const Profile* p = profile(*r.job);
  if (!p || p->sweet_spot || !p->benefited() || next_size(*r.job, r.size()) > largest(cluster, *r.job)) return false;
  const auto potential = p->potential(options_.window);
  return !potential || *potential > options_.threshold;
}

bool ReshapeScheduler::may_grow(const Cluster& cluster, const Running& job, const Profile& p, double next_point) const {
  const std::size_t extra = next_size(*job.job, job.size()) - job.size();
  switch (options_.allocation) {
    case Allocation::FcfsExpand: return extra <= cluster.idle();
    case Allocation::UniformExpand: {  // enough idle nodes for every running job that could grow
      std::size_t all = 0;
      for (const Running* r : cluster.running())
        if (r == &job || eligible(cluster, *r)) all += next_size(*r->job, r->size()) - r->size();
      return all <= cluster.idle();
    }
    case Allocation::MaxBenefit: {
      // Pre-allocate for the jobs ahead of this one: of higher priority, or of equal priority and
      // higher potential that reach their resize point before this job's next one. A job with no
      // potential yet ranks just above the threshold.
      const auto own = p.potential(options_.window);
      const double mine = own ? *own : options_.threshold;
      std::size_t reserved = 0;
      for (const Running* r : cluster.running()) {
        if (r == &job || !eligible(cluster, *r)) continue;
        const auto theirs = profile(*r->job)->potential(options_.window);
        const double potential = theirs ? *theirs : options_.threshold;
        const bool higher_class = options_.priority && r->job->priority > job.job->priority;
        const bool same_class = !options_.priority || r->job->priority == job.job->priority;
        const bool sooner = r->last_point + r->iteration_s < next_point;
        if (higher_class || (same_class && potential > mine && sooner)) reserved += next_size(*r->job, r->size()) - r->size();
      }
      return reserved <= cluster.idle() && extra <= cluster.idle() - reserved;
    }
  }
  return false;
}

// Above its start size, and not of a higher class than the head it would shrink for.
bool ReshapeScheduler::harvestable(const Running& r, const Job& head) const {
  const Profile* q = profile(*r.job);
  return r.job->resizable && q && q->previous() != 0 && (!options_.priority || r.job->priority <= head.priority);
}

// Should this job shrink for the queue's head, which needs `needed` more nodes than are idle?
bool ReshapeScheduler::harvest(const Cluster& cluster, const Running& job, const Job& head, std::size_t needed) {
  if (!harvestable(job, head)) return false;
  switch (options_.harvesting) {
    case Harvesting::None: return false;
    case Harvesting::FcfsContract: return true;
    case Harvesting::LeastImpact: {
      // Running jobs by ascending impact (lower classes first); walk until enough nodes are found:
      // this job shrinks if it is among them.
      std::vector<std::pair<std::pair<double, double>, const Running*>> list;
      for (const Running* r : cluster.running()) {
        if (!harvestable(*r, head)) continue;
        const auto impact = profile(*r->job)->impact();
        list.push_back({{options_.priority ? r->job->priority : 0, impact ? *impact : std::numeric_limits<double>::infinity()}, r});
      }
      std::stable_sort(list.begin(), list.end(), [](const auto& a, const auto& b) {
        return a.first < b.first || (a.first == b.first && a.second->job->id < b.second->job->id);
      });
      std::size_t found = 0;
      for (const auto& [key, r] : list) {
        if (r == &job) return true;
        found += r->size() - profile(*r->job)->previous();
        if (found >= needed) return false;
      }
      return false;
    }
    case Harvesting::FairContract: {
      // Rounds: every harvestable job shrinks once, in the order they reach resize points, before
      // any shrinks twice. A job not due waits until the round is over, then opens the next.
      std::erase_if(due_, [&](const Job* j) {
        const Profile* q = profile(*j);
        return !q || q->previous() == 0;
      });
      if (due_.erase(job.job)) return true;
      if (!due_.empty()) return false;
      for (const Running* r : cluster.running())
        if (r != &job && harvestable(*r, head)) due_.insert(r->job);
      return true;
    }
  }
  return false;
}

std::size_t ReshapeScheduler::resize(Cluster& cluster, const Running& job, const ResizePoint& point) {
  Profile& p = profiles_.try_emplace(job.job, point.size).first->second;
  // Resized without this scheduler (its driver restarted and took the job back): profiled from here.
  if (p.size() != point.size) p = Profile(point.size);
  p.record(point.size, point.iteration_seconds);
  // A growth that did not pay: back to where it came from, which is its sweet spot.
  if (!p.benefited()) {
    p.sweet_spot = p.previous();
    return shrink(p);
  }
  const double next_point = cluster.now() + point.iteration_seconds;
  auto grown = [&] {  // one step, if the allocation strategy lets it
    if (p.sweet_spot) return point.size;
    const std::size_t to = next_size(*job.job, point.size);
    if (to > largest(cluster, *job.job)) {
      p.sweet_spot = point.size;  // as large as it may grow
      return point.size;
    }
    const auto potential = p.potential(options_.window);
    if (potential && *potential <= options_.threshold) return point.size;
    return may_grow(cluster, job, p, next_point) ? grow(p, to) : point.size;
  };
  if (options_.harvesting == Harvesting::None) return grown();  // policy 2: running jobs first

  // Policy 1: queued jobs first. With priorities, only queued jobs of this job's class or higher count.
  const std::vector<const Job*> queue = order(cluster);
  const bool waiting = std::any_of(queue.begin(), queue.end(), [&](const Job* q) {
    return !options_.priority || q->priority >= job.job->priority;
  });
  if (!waiting) return grown();
  const Job& head = *queue.front();
  if (head.size > cluster.idle() && harvest(cluster, job, head, head.size - cluster.idle())) return shrink(p);
  if (p.sweet_spot) return point.size;
  // Backfill now, then grow into what stays idle, unless those nodes are being gathered for the
  // queue's head: a growth now would undo the shrinks that gather them.
  easy_backfill(cluster, queue);
  const std::vector<const Job*> left = order(cluster);
  if (left.empty()) return grown();
  return cluster.idle() > 0 && gatherable(cluster, *left.front()) < left.front()->size ? grown() : point.size;
}

std::size_t ReshapeScheduler::gatherable(const Cluster& cluster, const Job& head) const {
  std::size_t nodes = cluster.idle();
  for (const Running* r : cluster.running())
    if (harvestable(*r, head)) nodes += r->size() - profile(*r->job)->previous();
  return nodes;
}

}  // namespace dps::cluster
