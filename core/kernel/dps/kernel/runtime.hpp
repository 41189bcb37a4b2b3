// Runtime: the kernel of one application. It owns the thread collections, the graphs and the calls
// in progress, routes envelopes between threads and hands cross-node traffic to its Backend. There is
// no process-wide state: several runtimes (applications) can live in one process.
//
//   dps::LocalBackend backend(4, 2);     // 4 nodes on 2 OS threads
//   dps::Runtime rt(backend);            // usually through dps::Application
#pragma once

#include "dps/backend.hpp"
#include "dps/kernel/cluster_link.hpp"
#include "dps/kernel/epochs.hpp"
#include "dps/kernel/graph_core.hpp"
#include "dps/kernel/recovery_log.hpp"
#include "dps/kernel/simulation_hooks.hpp"
#include "dps/kernel/envelope.hpp"
#include "dps/future.hpp"
#include "dps/graph.hpp"
#include "dps/kernel/threads_core.hpp"
#include "dps/trace.hpp"

#include <tbb/concurrent_vector.h>

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace dps {

class Runtime {
 public:
  // Fault tolerance, when wanted, is given here: once attached, the backend may create threads (a
  // node joining a running application receives some at once).
  explicit Runtime(Backend& backend, double checkpoint_interval = 0, std::uint64_t checkpoint_operations = 0);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  Backend& backend() const noexcept { return backend_; }
  TraceSink* tracer() const noexcept { return tracer_.load(std::memory_order_acquire); }
  // On a cluster, node 0's sink receives every node's events; switching sinks first collects the
  // events the other nodes recorded for the previous one.
  void trace_to(TraceSink* sink);
  double now() const { return backend_.now(); }
  // The backend's simulator, null when it runs for real: under simulation every step yields.
  SimulationHooks* simulation() const noexcept { return simulation_; }
  bool steps_yield() const noexcept { return simulation_ != nullptr; }

  // --- processes (see cluster_link.hpp) ---
  void link(ClusterLink* link) noexcept { link_ = link; }
  ClusterLink* link() const noexcept { return link_; }
  bool coordinates() const { return backend_.local_node() == 0; }  // node 0 makes the calls
  bool hosts(const Thread& thread) const;                          // its state lives in this process

  // --- threads ---
  ThreadsCore& make_collection(std::string name, ThreadsCore::Factory factory, const detail::StateType& state,
                               bool default_state, Backups backups);
  Thread& adopt(std::unique_ptr<Thread> thread);  // keeps it until it is gone
  std::uint64_t new_thread_uid() noexcept { return next_uid_.fetch_add(1) + 1; }
  void retire(Thread& thread, ClusterLink::HandBack hand_back);
  // On its host, from its strand: `thread` retired and nothing names it any more (see Thread::settle).
  void thread_gone(Thread& thread);
  // Every process, once node 0 said so: nothing will reach thread `uid` but what is on its way, which
  // it forwards or reroutes; it is freed once that drained and no reader holds it (graveyard()).
  void forget(std::uint64_t uid);
  Future<void> migrate(Thread& thread, NodeId node);
  void migrate(Thread& thread, NodeId node, ClusterLink::Done done);
  // The image of `thread`'s state at its next rest (between two operations, as a migration); it stays.
  void snapshot(Thread& thread, ClusterLink::ImageBack image_back);
  std::vector<Thread*> threads() const;  // every thread not yet gone, oldest first (hold an EpochGuard)
  std::vector<ThreadsCore*> collections() const;
  void lifecycle(Lifecycle kind, const Thread* thread, NodeId node, NodeId to = 0);
  // Lookups by the ids processes use for each other; null when unknown (yet), or gone. A thread
  // looked up is valid while the caller holds a detail::EpochGuard.
  Thread* thread(std::uint64_t uid) const noexcept;
  bool gone(std::uint64_t uid) const noexcept;
  detail::Graveyard& graveyard() noexcept { return graveyard_; }
  ThreadsCore* collection(std::uint32_t id) const noexcept;
  const GraphCore* graph(std::uint32_t id) const noexcept;

  // --- graphs and calls ---
  std::shared_ptr<const GraphCore> adopt(std::shared_ptr<GraphCore> graph);
  std::vector<const GraphCore*> graphs() const;
  void start_call(std::shared_ptr<const GraphCore> graph, Payload input, std::unique_ptr<detail::CallBase> call);
  void finish_call(NodeId from, Envelope* e);  // the graph's output `e` leaves `from` for the caller
  void complete_call(CallId call, Payload&& result);
  void fail_call(CallId call, std::exception_ptr error);
  void abort_call(CallId call);         // every thread hosted here drops what it holds of the call
  void fail_calls(std::exception_ptr error);  // every call in progress (node 0)
  // Bumped whenever a call fails, so a thread behind a long queue drops the call's work at once.
  std::uint64_t failures() const noexcept { return failures_.load(std::memory_order_acquire); }
  std::unordered_set<CallId> failed_calls() const;
  std::size_t calls_in_progress() const;

  // --- delivery ---
  Thread& route(const GraphCore& graph, std::uint32_t vertex, const Envelope& e) const;  // throws RouteError
  void send(NodeId from, Thread& to, Envelope* e);  // a move on the same node, the backend otherwise
  void enqueue(Thread& to, Envelope* e);            // into the mailbox where `to` lives
  void redirect(NodeId at, Envelope* e);  // `e` reached a gone thread at `at`: data is routed again, the rest dropped
  // A message of the frame protocol for `frame` of `call` to thread `to` (the call fails if it cannot
  // be delivered; to a gone thread, whose call failed, it is dropped).
  void control(Thread& from, std::uint64_t to, Message kind, CallId call, FrameId frame, std::uint64_t peer = 0,
               std::int64_t count = 0, bool credit = false);
  // --- fault tolerance (runtime_recovery.cpp) ---
  // Threads checkpoint to another node every `interval` seconds (infinity: never for time's sake),
  // and after `operations` data objects handled when not 0 (throws if the backend keeps no backups);
  // set before threads are created. Off (0) by default.
  void fault_tolerance(double interval, std::uint64_t operations = 0);
  double checkpoint_interval() const noexcept { return checkpoint_interval_; }
  std::uint64_t checkpoint_operations() const noexcept { return checkpoint_operations_; }
  bool fault_tolerant() const noexcept { return checkpoint_interval_ > 0; }
  // Node 0 (or the simulator): `node` failed. Its threads are rebuilt from their backups where those
  // are held, and sent again what their checkpoints do not cover; what cannot be rebuilt fails calls
  // (false: the node's threads were not rebuilt).
  bool node_failed(NodeId node, const std::string& reason);
  // Every process: `plan` says where each thread of failed node `node` is rebuilt. Its holder rebuilds
  // it from the checkpoint it holds; once every process did, each sends it again what it keeps for it.
  void rebuild(NodeId node, const std::vector<detail::Rebuilt>& plan);
  void resend(const std::vector<detail::Rebuilt>& plan);  // then, once every process rebuilt
  // Thread `receiver` (0: the caller), on node `at`, covers what `sender` sent it of `incarnation` up
  // to link `number`: its checkpoint holds it, or node 0 has it.
  void cover(NodeId at, std::uint64_t receiver, std::uint64_t sender, std::uint32_t incarnation, std::uint64_t number);
  void deliver_result(Envelope* e);  // a graph's output reached node 0: complete its call
  // Rebuilt thread `rebuilt` heard from `survivor` (0: none) which slots of its frames it holds; true
  // once it heard from every thread that survived its node.
  bool rejoined(std::uint64_t rebuilt, std::uint64_t survivor);
  void replayed(std::uint64_t rebuilt);  // all it was sent again came: a failure now loses no copy
  // Node 0: a thread moved to `node` after it was declared failed (node 0 heard of the move late):
  // lost with it, it is recovered as the node's threads were, once the recovery under way ended.
  void moved_to_failed(NodeId node, const std::string& reason);
  // Node 0: `reporter` lost its connection to `node` (after it said which threads it moved there).
  void peer_lost(NodeId reporter, NodeId node);
  // Node 0: called, from whichever thread heard the last replay, once every thread rebuilt after
  // `failed` failed handled again what it was sent (--replace moves them to a node started for them).
  using Recovered = std::function<void(NodeId failed, std::vector<std::uint64_t> rebuilt)>;
  void on_recovered(Recovered recovered) { on_recovered_ = std::move(recovered); }
  // Node 0, removing `node` on purpose (Application::remove_node): from now on no thread is rebuilt
  // there (one whose checkpoint it holds is lost with its backup), and those rebuilt before are in
  // place once this returns, so that its threads can be moved away; left() once it is gone.
  void leaving(NodeId node);
  void left(NodeId node);
  // A thread was rebuilt. A call's result may then come before the rebuilt threads ran again all they
  // had run since their checkpoints (their states are exact once they have): backends wait for both.
  bool recovered() const noexcept { return recovered_.load(std::memory_order_acquire); }

  // Unique across the processes of an application: the node is in the high bits.
  FrameId new_frame() noexcept { return frame_base_ | (next_frame_.fetch_add(1, std::memory_order_relaxed) + 1); }

 private:
  TraceSink* through_simulation(TraceSink* sink);
  bool plan_recovery(NodeId node, const std::string& reason);  // under failures_mu_
  ClusterLink::Done moving(const Thread& thread, NodeId to, ClusterLink::Done done);
  bool unsettled(NodeId failed) const;  // under recovery_mu_
  void settled(NodeId failed);
  static Thread* gone_mark() noexcept { return reinterpret_cast<Thread*>(alignof(std::max_align_t)); }
  template <class T>
  static T* lookup(const tbb::concurrent_vector<std::atomic<T*>>& index, std::size_t at) noexcept {
    return at < index.size() ? index[at].load(std::memory_order_acquire) : nullptr;
  }

  Backend& backend_;
  SimulationHooks* const simulation_;
  std::atomic<TraceSink*> tracer_{nullptr};
  ClusterLink* link_ = nullptr;

  mutable std::mutex mu_;  // collections, threads, graphs, failed calls
  std::vector<std::unique_ptr<ThreadsCore>> collections_;
  std::map<std::uint64_t, std::unique_ptr<Thread>> threads_;  // by uid: by age
  std::vector<std::shared_ptr<const GraphCore>> graphs_;
  std::unordered_set<CallId> failed_;
  tbb::concurrent_vector<std::atomic<Thread*>> by_uid_;  // gone_mark() once gone
  tbb::concurrent_vector<std::atomic<ThreadsCore*>> by_collection_id_;
  tbb::concurrent_vector<std::atomic<const GraphCore*>> by_graph_id_;

  detail::Graveyard graveyard_;  // threads and tables that readers may still hold

  mutable std::mutex calls_mu_;
  std::unordered_map<CallId, std::unique_ptr<detail::CallBase>> calls_;

  double checkpoint_interval_ = 0;
  std::uint64_t checkpoint_operations_ = 0;
  std::mutex recovery_mu_;          // the caller's records:
  detail::Outbox inputs_;           // calls' inputs, kept until their first thread's checkpoint covers them
  detail::Inbox results_;           // calls' results, each once
  std::uint64_t caller_clock_ = 0;  // the caller's Lamport clock
  std::unordered_map<std::uint64_t, std::uint32_t> incarnations_;  // by thread uid: times it was rebuilt
  std::atomic<bool> recovered_{false};                             // a thread was rebuilt
  std::unordered_map<std::uint64_t, std::unordered_set<std::uint64_t>> rejoining_;  // rebuilt -> threads awaited
  // Node 0: rebuilt threads not done handling again what they were sent, and the node they were lost with.
  std::unordered_map<std::uint64_t, NodeId> replaying_;
  std::unordered_map<NodeId, std::vector<std::uint64_t>> rebuilt_from_;  // node 0: by failed node, until replayed
  Recovered on_recovered_;
  std::vector<std::pair<NodeId, std::string>> late_;  // node 0: moved_to_failed while a recovery ran
  // Node 0, under fault tolerance: migrations asked and not answered yet; a failed node a thread may
  // have left for, until its node says (ThreadMoved, or PeerLost after it) or the migration ends; who
  // reported a node lost.
  struct Moving {
    std::uint64_t thread;
    NodeId from, to;
  };
  std::vector<Moving> moving_;
  std::map<NodeId, std::string> unplanned_;
  std::set<NodeId> leaving_;              // node 0: nodes being removed
  std::condition_variable all_replayed_;  // replaying_ emptied
  std::map<NodeId, std::unordered_set<NodeId>> reported_lost_;
  std::recursive_mutex failures_mu_;                  // node 0: one failure planned at a time (from several threads)

  std::atomic<CallId> next_call_{0};
  std::atomic<FrameId> next_frame_{0};
  std::atomic<std::uint64_t> failures_{0};
  FrameId frame_base_ = 0;
  std::atomic<std::uint64_t> next_uid_{0};
  std::atomic<std::size_t> next_node_{0};
};

}  // namespace dps
