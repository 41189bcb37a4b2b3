// A user's scheduler, built apart as a library and loaded by dps-cluster and dps-scheduler
// (--scheduler ./libsmallest_first.so): the smallest queued job that fits starts first; at a resize
// point a job takes one more idle node when nobody waits.
#include <dps/cluster/scheduler_plugin.hpp>

#include <algorithm>
#include <vector>

namespace {

struct SmallestFirst final : dps::cluster::Scheduler {
  std::string name() const override { return "smallest-first"; }
  void schedule(dps::cluster::Cluster& cluster) override {
    std::vector<const dps::cluster::Job*> queue = cluster.queue();
    std::stable_sort(queue.begin(), queue.end(), [](const auto* a, const auto* b) { return a->size < b->size; });
    for (const dps::cluster::Job* job : queue)
      if (cluster.fits(job->size)) cluster.start(*job);
  }
  std::size_t resize(dps::cluster::Cluster& cluster, const dps::cluster::Running& job,
                     const dps::ResizePoint& point) override {
    const std::size_t most = job.job->max_size ? job.job->max_size : cluster.nodes();
    return cluster.queue().empty() && cluster.idle() > 0 && point.size < most ? point.size + 1 : point.size;
  }
};

}  // namespace

DPS_CLUSTER_SCHEDULER(SmallestFirst)
