#include "dps/cluster/backfilling.hpp"

#include <algorithm>

namespace dps::cluster {

void Fcfs::schedule(Cluster& cluster) {
  while (!cluster.queue().empty() && cluster.fits(cluster.queue().front()->size)) cluster.start(*cluster.queue().front());
}

void EasyBackfilling::schedule(Cluster& cluster) { easy_backfill(cluster, cluster.queue()); }

void easy_backfill(Cluster& cluster, std::vector<const Job*> order) {
  std::size_t k = 0;
  for (; k < order.size() && cluster.fits(order[k]->size); ++k) cluster.start(*order[k]);
  if (k == order.size()) return;
  // The head's reservation: when enough nodes will be free, and how many it leaves spare then.
  const Job& head = *order[k];
  std::size_t free = cluster.idle();
  double shadow = cluster.now();
  for (const Running* r : cluster.by_expected_end()) {
    free += r->size();
    if (free >= head.size) {
      shadow = std::max(shadow, r->expected_end());
      break;
    }
  }
  std::size_t spare = free >= head.size ? free - head.size : 0;
  for (std::size_t i = k + 1; i < order.size() && cluster.idle() > 0; ++i) {
    const Job& job = *order[i];
    if (!cluster.fits(job.size)) continue;
    if (cluster.now() + job.walltime <= shadow) {
      cluster.start(job);
    } else if (job.size <= spare) {
      spare -= job.size;
      cluster.start(job);
    }
  }
}

void ConservativeBackfilling::schedule(Cluster& cluster) {
  const double now = cluster.now();
  profile_.assign(1, {now, cluster.idle()});
  for (const Running* r : cluster.by_expected_end()) {
    const double t = std::max(now, r->expected_end());
    if (profile_.back().first == t) profile_.back().second += r->size();
    else profile_.emplace_back(t, profile_.back().second + r->size());
  }
  queue_ = cluster.queue();
  for (const Job* job : queue_) {
    // The earliest step from which the job fits for its whole walltime.
    std::size_t first = 0;
    for (;; ++first) {
      const double until = profile_[first].first + job->walltime;
      bool fits = true;
      for (std::size_t j = first; j < profile_.size() && (j == first || profile_[j].first < until); ++j)
        if (profile_[j].second < job->size) {
          fits = false;
          break;
        }
      if (fits) break;  // the last step has every node free: the loop ends there at the latest
    }
    const double from = profile_[first].first, until = from + job->walltime;
    // Reserve [from, until): split the step that holds `until`, then take the nodes.
    std::size_t last = first + 1;
    while (last < profile_.size() && profile_[last].first < until) ++last;
    if (job->walltime > 0 && (last == profile_.size() || profile_[last].first > until))
      profile_.insert(profile_.begin() + static_cast<std::ptrdiff_t>(last), {until, profile_[last - 1].second});
    for (std::size_t j = first; j < last; ++j) profile_[j].second -= job->size;
    if (from == now && cluster.fits(job->size)) cluster.start(*job);  // a contiguous allocator may say not yet
  }
}

}  // namespace dps::cluster
