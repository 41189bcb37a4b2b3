// Thread collections: a named, resizable set of DPS threads sharing one state type. Routes pick a
// thread by index among the collection's current threads.
//
//   auto workers = app.threads<Worker>("workers", 4);        // on nodes 0,1,2,3 (round robin)
//   workers.add();                                            // a fifth thread, used by routes at once
//   Worker w = workers.remove(0).get();                       // drained, then its state handed back
//   workers.migrate(1, 2).get();                              // state serialized (cereal) to node 2
#pragma once

#include "dps/detail/epochs.hpp"
#include "dps/detail/state_box.hpp"
#include "dps/future.hpp"
#include "dps/thread.hpp"

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

namespace dps {

class Runtime;

class ThreadsCore {
 public:
  using Factory = std::function<std::unique_ptr<detail::StateBox>(std::size_t index)>;

  // default_state: the factory builds default values, which any process can build itself.
  ThreadsCore(Runtime& runtime, std::uint32_t id, std::string name, Factory factory, const detail::StateType& state,
              bool default_state);
  ThreadsCore(const ThreadsCore&) = delete;
  ThreadsCore& operator=(const ThreadsCore&) = delete;
  ~ThreadsCore() { delete table_.load(); }

  Runtime& runtime() const noexcept { return runtime_; }
  std::uint32_t id() const noexcept { return id_; }  // the same in every process
  const std::string& name() const noexcept { return name_; }
  const detail::StateType& state_type() const noexcept { return state_type_; }

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
  std::size_t placed_ = 0;
  std::mutex mu_;
  std::atomic<const std::vector<Thread*>*> table_{nullptr};
};

template <class State>
class Threads {
 public:
  Threads() = default;
  explicit Threads(ThreadsCore& core) : core_(&core) {}

  const std::string& name() const { return core_->name(); }
  std::size_t size() const { return core_->size(); }
  NodeId node(std::size_t index) const {
    detail::EpochGuard guard;
    return core_->at(index).node();
  }
  ThreadsCore& core() const { return *core_; }

  // Adds threads on nodes chosen round robin, or on a given node.
  void add(std::size_t count = 1);
  void add_on(NodeId node) { core_->add(node); }

  // Removes the thread at `index` from the collection at once (routes stop choosing it and later
  // indices shift down); it finishes what was queued and running, and its state is handed back.
  Future<State> remove(std::size_t index);

  // Moves the thread at `index`, with its state, to `node`; done once nothing runs on it.
  Future<void> migrate(std::size_t index, NodeId node) {
    static_assert(detail::serializable_state<State>, "dps: migrating a thread needs a cereal serialize() on its state");
    detail::EpochGuard guard;  // until its mailbox has the request: the thread cannot be gone before
    return migrate_thread(core_->at(index), node);
  }

 private:
  Future<void> migrate_thread(Thread& t, NodeId node);
  ThreadsCore* core_ = nullptr;
};

}  // namespace dps
