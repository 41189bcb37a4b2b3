// Thread collections: the table routes read without locks, replaced on every change.
#include "dps/kernel/threads_core.hpp"

#include "dps/kernel/runtime.hpp"
#include "dps/threads.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>

namespace dps {

namespace {

// A state as saved, or none if its type has no serialize() (its thread then finds out itself).
std::optional<std::string> saved_if_it_can(const detail::StateBox& state, const std::string& saved) {
  if (!saved.empty()) return saved;
  try {
    return state.save();
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

ThreadsCore::ThreadsCore(Runtime& runtime, std::uint32_t id, std::string name, Factory factory,
                         const detail::StateType& state, bool default_state, Backups backups)
    : runtime_(runtime),
      id_(id),
      name_(std::move(name)),
      factory_(std::move(factory)),
      state_type_(state),
      default_state_(default_state),
      backups_(backups == Backups::Kept) {
  publish({});  // no lock: nobody sees the collection yet (and the runtime's lock is held)
}

Thread& ThreadsCore::at(std::size_t index) const {
  const auto t = table();
  if (index >= t.size())
    throw std::out_of_range("collection '" + name_ + "' has " + std::to_string(t.size()) + " threads, no thread " +
                            std::to_string(index));
  return *t[index];
}

std::ptrdiff_t ThreadsCore::index_of(const Thread& thread) const noexcept {
  detail::EpochGuard guard;
  const auto t = table();
  auto it = std::find(t.begin(), t.end(), &thread);
  return it == t.end() ? -1 : it - t.begin();
}

NodeId ThreadsCore::next_node() {
  const std::vector<NodeId> nodes = runtime_.backend().nodes();
  std::lock_guard lock(mu_);
  return nodes[placed_++ % nodes.size()];
}

Thread& ThreadsCore::add(NodeId node) {
  if (const std::vector<NodeId> nodes = runtime_.backend().nodes(); std::ranges::find(nodes, node) == nodes.end())
    throw std::invalid_argument("cannot add a thread of '" + name_ + "' on node " + std::to_string(node) +
                                ": it is not a node of the application (never added, removed, or lost)");
  std::lock_guard lock(mu_);
  const auto current = table();
  std::vector<Thread*> threads(current.begin(), current.end());
  std::unique_ptr<detail::StateBox> state = factory_(threads.size());
  const bool here = runtime_.backend().hosts(node);
  std::string image;
  if (!here && !default_state_) image = state->save();  // throws (naming the type) if it cannot travel
  Thread& t = runtime_.adopt(std::make_unique<Thread>(runtime_, *this, runtime_.new_thread_uid(), node,
                                                      here ? std::move(state) : nullptr));
  // Replicas learn of the thread before node 0's routes can pick it: the link keeps that order.
  if (ClusterLink* link = runtime_.link()) {
    std::optional<std::string> first;
    if (!here && runtime_.fault_tolerant() && backups_) first = saved_if_it_can(*state, image);
    link->thread_added(t, std::move(image));
    if (first) t.first_checkpoint(std::move(*first));
  }
  threads.push_back(&t);
  publish(std::move(threads));
  runtime_.lifecycle(Lifecycle::ThreadAdded, &t, node);
  return t;
}

Thread& ThreadsCore::insert(std::uint64_t uid, NodeId node, std::unique_ptr<detail::StateBox> state) {
  std::lock_guard lock(mu_);
  const auto current = table();
  std::vector<Thread*> threads(current.begin(), current.end());
  Thread& t = runtime_.adopt(std::make_unique<Thread>(runtime_, *this, uid, node, std::move(state)));
  threads.push_back(&t);
  publish(std::move(threads));
  return t;
}

void ThreadsCore::drop(const Thread& thread) {
  std::lock_guard lock(mu_);
  const auto current = table();
  std::vector<Thread*> threads(current.begin(), current.end());
  if (std::erase(threads, &thread) > 0) publish(std::move(threads));
}

Thread& ThreadsCore::detach(std::size_t index) {
  std::lock_guard lock(mu_);
  const auto current = table();
  if (index >= current.size())
    throw std::out_of_range("collection '" + name_ + "' has " + std::to_string(current.size()) +
                            " threads, cannot remove thread " + std::to_string(index));
  std::vector<Thread*> threads(current.begin(), current.end());
  Thread& t = *threads[index];
  threads.erase(threads.begin() + static_cast<std::ptrdiff_t>(index));
  publish(std::move(threads));
  if (ClusterLink* link = runtime_.link()) link->thread_dropped(t);
  return t;
}

void ThreadsCore::publish(std::vector<Thread*> threads) {
  const std::vector<Thread*>* old =
      table_.exchange(new const std::vector<Thread*>(std::move(threads)), std::memory_order_acq_rel);
  if (!old) return;
  runtime_.graveyard().bury([old = std::shared_ptr<const std::vector<Thread*>>(old)] { return true; });
  runtime_.graveyard().collect();
}

// What a collection's handle asks (threads.hpp).
const std::string& detail::collection_name(const ThreadsCore& c) noexcept { return c.name(); }
std::size_t detail::collection_size(const ThreadsCore& c) noexcept { return c.size(); }
Backend* detail::driver_of(const ThreadsCore& c) noexcept { return &c.runtime().backend(); }

NodeId detail::thread_node(const ThreadsCore& c, std::size_t index) {
  EpochGuard guard;
  return c.at(index).node();
}

void detail::add_threads(ThreadsCore& c, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) c.add(c.next_node());
}

void detail::add_thread_on(ThreadsCore& c, NodeId node) { c.add(node); }

void detail::remove_thread(ThreadsCore& c, std::size_t index, bool state_travels, HandBack hand_back) {
  Thread& t = c.detach(index);
  Runtime& runtime = c.runtime();
  if (!runtime.hosts(t) && !state_travels) {
    hand_back(nullptr, std::make_exception_ptr(std::logic_error(
                           t.name() + " lives on node " + std::to_string(t.node()) +
                           " and its state type has no cereal serialize(), so it cannot be handed back here")));
    runtime.retire(t, [](StateBox*, std::exception_ptr) {});
    return;
  }
  runtime.retire(t, std::move(hand_back));
}

void detail::snapshot_thread(ThreadsCore& c, std::size_t index, ImageBack image_back) {
  EpochGuard guard;  // until its mailbox has the request
  c.runtime().snapshot(c.at(index), std::move(image_back));
}

Future<void> detail::migrate_thread(ThreadsCore& c, std::size_t index, NodeId node) {
  EpochGuard guard;  // until its mailbox has the request: the thread cannot be gone before
  return c.runtime().migrate(c.at(index), node);
}

}  // namespace dps
