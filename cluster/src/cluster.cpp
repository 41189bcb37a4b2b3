// The cluster's nodes as a bitmap of idle ones: the lowest idle nodes are found a word at a time.
#include "dps/cluster/cluster.hpp"

#include "dps/cluster/allocation.hpp"
#include "dps/cluster/gantt.hpp"

#include <algorithm>
#include <bit>
#include <stdexcept>
#include <string>

namespace dps::cluster {

Cluster::Cluster(std::size_t nodes)
    : idle_(nodes), busy_(nodes, nullptr), free_((nodes + 63) / 64, ~std::uint64_t{0}), since_(nodes, 0),
      idle_nodes_(nodes, true) {
  if (nodes == 0) throw std::invalid_argument("a cluster needs at least one node");
  if (nodes % 64) free_.back() = (std::uint64_t{1} << (nodes % 64)) - 1;
}

void Cluster::enqueue(const Job& job) {
  queue_.push_back(&job);
  queued_arrival_.push_back(records_.size());
  records_.push_back(Running{.job = &job, .arrival = records_.size(), .nodes = {}});
}

void Cluster::withdraw(const Job& job) {
  const auto at = std::find(queue_.begin(), queue_.end(), &job);
  if (at == queue_.end()) throw std::logic_error("job " + std::to_string(job.id) + " is not queued");
  queued_arrival_.erase(queued_arrival_.begin() + (at - queue_.begin()));
  queue_.erase(at);
}

void Cluster::recall(const Job& job) {
  records_.push_back(Running{.job = &job, .arrival = records_.size(), .nodes = {}});
}

void Cluster::start_on(const Job& job, const std::vector<Node>& nodes) {
  const auto at = std::find(queue_.begin(), queue_.end(), &job);
  if (at == queue_.end()) throw std::logic_error("job " + std::to_string(job.id) + " is not queued");
  for (const Node node : nodes)
    if (node >= busy_.size() || busy_[node])
      throw std::logic_error("job " + std::to_string(job.id) + ": node " + std::to_string(node) + " is not idle");
  const auto place = at - queue_.begin();
  Running& r = records_[queued_arrival_[static_cast<std::size_t>(place)]];
  queue_.erase(at);
  queued_arrival_.erase(queued_arrival_.begin() + place);
  r.start = r.last_point = now_;
  for (const Node node : nodes) hold(r, node);
  idle_ -= nodes.size();
  running_.push_back(&r);
  by_end_.insert(&r);
}

void Cluster::start(const Job& job) {
  const auto at = std::find(queue_.begin(), queue_.end(), &job);
  if (at == queue_.end()) throw std::logic_error("job " + std::to_string(job.id) + " is not queued");
  if (!fits(job.size))
    throw std::logic_error("job " + std::to_string(job.id) + " needs " + std::to_string(job.size) + " nodes, " +
                           std::to_string(idle_) + " are idle" + (job.size <= idle_ ? " but not together" : ""));
  const auto place = at - queue_.begin();
  Running& r = records_[queued_arrival_[static_cast<std::size_t>(place)]];
  queue_.erase(at);
  queued_arrival_.erase(queued_arrival_.begin() + place);
  r.start = r.last_point = now_;
  give(r, job.size);
  running_.push_back(&r);
  by_end_.insert(&r);
  started_.push_back(&r);
}

bool Cluster::fits(std::size_t count) const { return count <= idle_ && (!allocator_ || allocator_->fits(idle_nodes_, count)); }

void Cluster::hold(Running& r, Node node) {
  free_[node / 64] &= ~(std::uint64_t{1} << (node % 64));
  idle_nodes_[node] = false;
  busy_[node] = &r;
  since_[node] = now_;
  r.nodes.push_back(node);
}

void Cluster::release(const Running& r, Node node) {
  if (gantt_ && since_[node] < now_) gantt_->segments.push_back({node, r.job, since_[node], now_});
  busy_[node] = nullptr;
  idle_nodes_[node] = true;
  free_[node / 64] |= std::uint64_t{1} << (node % 64);
}

void Cluster::give(Running& r, std::size_t n) {
  if (n > idle_) throw std::logic_error("job " + std::to_string(r.job->id) + " would grow by " + std::to_string(n) +
                                        " nodes, " + std::to_string(idle_) + " are idle");
  idle_ -= n;
  if (allocator_) {
    const std::vector<Node> chosen = allocator_->place(idle_nodes_, n, r.nodes);
    if (chosen.size() != n)
      throw std::logic_error("allocator " + allocator_->name() + " chose " + std::to_string(chosen.size()) + " of " +
                             std::to_string(n) + " nodes");
    for (const Node node : chosen) {
      if (node >= busy_.size() || busy_[node])
        throw std::logic_error("allocator " + allocator_->name() + " chose node " + std::to_string(node) + ", which is not idle");
      hold(r, node);
    }
    return;
  }
  for (std::size_t w = 0; n > 0; ++w)  // the lowest-numbered idle nodes, a word of the bitmap at a time
    for (; free_[w] != 0 && n > 0; --n) hold(r, static_cast<Node>(w * 64 + static_cast<std::size_t>(std::countr_zero(free_[w]))));
}

void Cluster::take_back(Running& r, std::size_t n) {
  if (n >= r.nodes.size()) throw std::logic_error("job " + std::to_string(r.job->id) + " cannot shrink to no nodes");
  for (std::size_t i = 0; i < n; ++i) {
    release(r, r.nodes.back());
    r.nodes.pop_back();
  }
  idle_ += n;
}

void Cluster::take_back(Running& r, Node node) {
  const auto at = std::find(r.nodes.begin(), r.nodes.end(), node);
  if (at == r.nodes.end())
    throw std::logic_error("job " + std::to_string(r.job->id) + " does not hold node " + std::to_string(node));
  if (r.nodes.size() == 1) throw std::logic_error("job " + std::to_string(r.job->id) + " cannot shrink to no nodes");
  release(r, node);
  r.nodes.erase(at);
  ++idle_;
}

void Cluster::finish(Running& r) {
  for (const Node node : r.nodes) release(r, node);
  idle_ += r.nodes.size();
  r.nodes.clear();
  by_end_.erase(&r);
  running_.erase(std::find(running_.begin(), running_.end(), &r));
}

}  // namespace dps::cluster
