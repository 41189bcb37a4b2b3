// ThreadsCore: the kernel's side of a thread collection (dps::Threads<State> is the user's handle):
// its current threads in a table that routes read without locks, replaced on every change.
#pragma once

#include "dps/ids.hpp"
#include "dps/kernel/epochs.hpp"
#include "dps/kernel/thread.hpp"
#include "dps/thread_state.hpp"
#include "dps/threads.hpp"

#include <atomic>
#include <cstddef>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace dps {

class Runtime;

class ThreadsCore {
 public:
  using Factory = detail::StateFactory;

  // default_state: the factory builds default values, which any process can build itself.
  ThreadsCore(Runtime& runtime, std::uint32_t id, std::string name, Factory factory, const detail::StateType& state,
              bool default_state, Backups backups);
  ThreadsCore(const ThreadsCore&) = delete;
  ThreadsCore& operator=(const ThreadsCore&) = delete;
  ~ThreadsCore() { delete table_.load(); }

  Runtime& runtime() const noexcept { return runtime_; }
  std::uint32_t id() const noexcept { return id_; }  // the same in every process
  const std::string& name() const noexcept { return name_; }
  const detail::StateType& state_type() const noexcept { return state_type_; }
  bool backups() const noexcept { return backups_; }  // under fault tolerance, its threads are checkpointed

  // The current threads, as routes see them. Lock-free: the table and its threads stay valid while
  // the caller holds a detail::EpochGuard.
  std::span<Thread* const> table() const noexcept {
    const auto* t = table_.load(std::memory_order_acquire);
    return {t->data(), t->size()};
  }
  std::size_t size() const noexcept {
    detail::EpochGuard guard;
    return table().size();
  }
  Thread& at(std::size_t index) const;  // throws std::out_of_range naming the collection; hold a guard
  std::ptrdiff_t index_of(const Thread& t) const noexcept;  // -1 once removed

  Thread& add(NodeId node);
  NodeId next_node();                 // placement of added threads: round robin over the live nodes
  Thread& detach(std::size_t index);  // leaves the table; the caller retires it

  // Replicas (processes other than node 0): the changes node 0 made. `state` is null for a thread
  // hosted elsewhere.
  Thread& insert(std::uint64_t uid, NodeId node, std::unique_ptr<detail::StateBox> state);
  void drop(const Thread& thread);  // no-op once it left

 private:
  void publish(std::vector<Thread*> threads);  // caller holds mu_; the old table goes to the graveyard

  Runtime& runtime_;
  const std::uint32_t id_;
  std::string name_;
  Factory factory_;
  const detail::StateType& state_type_;
  const bool default_state_;
  const bool backups_;
  std::size_t placed_ = 0;
  std::mutex mu_;
  std::atomic<const std::vector<Thread*>*> table_{nullptr};
};

}  // namespace dps
