// LocalBackend: strands on a TBB arena; nodes are labels.
#include "dps/local_backend.hpp"

#include "dps/kernel/strands.hpp"
#include "dps/kernel/runtime.hpp"
#include "dps/kernel/thread.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <stdexcept>

namespace dps {

struct LocalBackend::Impl {
  Impl(std::size_t node_count, std::size_t worker_count)
      : strands(worker_count), start(std::chrono::steady_clock::now()) {
    if (node_count == 0) throw std::invalid_argument("an application needs at least one node");
    for (std::size_t n = 0; n < node_count; ++n) live.push_back(static_cast<NodeId>(n));
    next_node = static_cast<NodeId>(node_count);
  }

  detail::Strands strands;
  std::chrono::steady_clock::time_point start;
  Runtime* runtime = nullptr;
  mutable std::mutex mu;
  std::vector<NodeId> live;
  NodeId next_node = 0;
};

LocalBackend::LocalBackend(std::size_t nodes, std::size_t workers) : impl_(std::make_unique<Impl>(nodes, workers)) {}

LocalBackend::~LocalBackend() { quiesce(); }

void LocalBackend::attach(Runtime& runtime) { impl_->runtime = &runtime; }

std::vector<NodeId> LocalBackend::nodes() const {
  std::lock_guard lock(impl_->mu);
  return impl_->live;
}

NodeId LocalBackend::add_node() {
  std::lock_guard lock(impl_->mu);
  impl_->live.push_back(impl_->next_node);
  return impl_->next_node++;
}

void LocalBackend::remove_node(NodeId node) {
  if (node == local_node()) throw std::invalid_argument("node 0 coordinates the application and cannot be removed");
  std::lock_guard lock(impl_->mu);
  auto it = std::find(impl_->live.begin(), impl_->live.end(), node);
  if (it == impl_->live.end()) throw std::invalid_argument("no node " + std::to_string(node));
  impl_->live.erase(it);
}

void LocalBackend::schedule(Thread& thread, Priority priority) { impl_->strands.schedule(thread, priority); }

void LocalBackend::send(NodeId from, Thread& to, Envelope* e) {
  if (TraceSink* sink = impl_->runtime->tracer(); sink && from != to.node()) {
    const double t = now();
    sink->transfer({from, to.node(), e->kind == Message::Data ? e->payload.wire_size() : kControlWireBytes, t, t});
  }
  impl_->runtime->enqueue(to, e);
}

bool LocalBackend::migrate(Thread& thread, NodeId to, std::string state, std::function<void(std::exception_ptr)> arrived) {
  thread.relocate(to, state);
  arrived(nullptr);
  return true;
}

void LocalBackend::quiesce() { impl_->strands.quiesce(); }

double LocalBackend::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - impl_->start).count();
}

std::size_t LocalBackend::workers() const noexcept { return impl_->strands.workers(); }

}  // namespace dps
