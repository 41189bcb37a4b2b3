// Runtime: the kernel of one application. It owns the thread collections, the graphs and the calls
// in progress, routes envelopes between threads and hands cross-node traffic to its Backend. There is
// no process-wide state: several runtimes (applications) can live in one process.
//
//   dps::LocalBackend backend(4, 2);     // 4 nodes on 2 OS threads
//   dps::Runtime rt(backend);            // usually through dps::Application
#pragma once

#include "dps/backend.hpp"
#include "dps/detail/graph_core.hpp"
#include "dps/envelope.hpp"
#include "dps/future.hpp"
#include "dps/threads.hpp"
#include "dps/trace.hpp"

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace dps {

namespace detail {
// A call in progress: receives the graph's single output, or its failure.
class CallBase {
 public:
  explicit CallBase(std::shared_ptr<const GraphCore> graph) : graph(std::move(graph)) {}
  virtual ~CallBase() = default;
  virtual void complete(Payload&& result) = 0;
  virtual void fail(std::exception_ptr error) = 0;
  std::shared_ptr<const GraphCore> graph;
};
}  // namespace detail

class Runtime {
 public:
  explicit Runtime(Backend& backend);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  Backend& backend() const noexcept { return backend_; }
  TraceSink* tracer() const noexcept { return tracer_.load(std::memory_order_acquire); }
  void trace_to(TraceSink* sink) noexcept { tracer_.store(sink, std::memory_order_release); }
  double now() const { return backend_.now(); }
  bool steps_yield() const noexcept { return steps_yield_; }

  // --- threads ---
  ThreadsCore& make_collection(std::string name, ThreadsCore::Factory factory);
  Thread& adopt(std::unique_ptr<Thread> thread);  // keeps it for the application's life
  std::uint64_t new_thread_uid() noexcept { return next_uid_.fetch_add(1) + 1; }
  void retire(Thread& thread, std::function<void(detail::StateBox&)> hand_back);
  Future<void> migrate(Thread& thread, NodeId node);
  std::vector<Thread*> threads() const;
  void lifecycle(Lifecycle kind, const Thread* thread, NodeId node, NodeId to = 0);

  // --- graphs and calls ---
  std::shared_ptr<const GraphCore> adopt(std::shared_ptr<GraphCore> graph);
  void start_call(std::shared_ptr<const GraphCore> graph, Payload input, std::unique_ptr<detail::CallBase> call);
  void complete_call(CallId call, Payload&& result);
  void fail_call(CallId call, std::exception_ptr error);
  std::size_t calls_in_progress() const;

  // --- delivery ---
  Thread& route(const GraphCore& graph, std::uint32_t vertex, const Envelope& e) const;  // throws RouteError
  void send(NodeId from, Thread& to, Envelope* e);  // a move on the same node, the backend otherwise
  void enqueue(Thread& to, Envelope* e);            // into the mailbox where `to` lives
  void control(Thread& from, Thread& to, Message kind, FrameId frame, Thread* peer = nullptr, std::int64_t count = 0,
               bool credit = false);
  FrameId new_frame() noexcept { return next_frame_.fetch_add(1, std::memory_order_relaxed) + 1; }

 private:
  Backend& backend_;
  const bool steps_yield_;
  std::atomic<TraceSink*> tracer_{nullptr};

  mutable std::mutex mu_;  // collections, threads, graphs, failed calls
  std::vector<std::unique_ptr<ThreadsCore>> collections_;
  std::vector<std::unique_ptr<Thread>> threads_;
  std::vector<std::shared_ptr<const GraphCore>> graphs_;
  std::unordered_set<CallId> failed_;

  mutable std::mutex calls_mu_;
  std::unordered_map<CallId, std::unique_ptr<detail::CallBase>> calls_;

  std::atomic<CallId> next_call_{0};
  std::atomic<FrameId> next_frame_{0};
  std::atomic<std::uint64_t> next_uid_{0};
  std::atomic<std::size_t> next_node_{0};
};

template <class State>
void Threads<State>::add(std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) core_->add(core_->next_node());
}

template <class State>
Future<State> Threads<State>::remove(std::size_t index) {
  Thread& t = core_->detach(index);
  Promise<State> promise(&core_->runtime().backend());
  core_->runtime().retire(
      t, [promise](detail::StateBox& box) mutable { promise.set(std::move(*static_cast<State*>(box.get()))); });
  return promise.future();
}

template <class State>
Future<void> Threads<State>::migrate_thread(Thread& t, NodeId node) {
  return core_->runtime().migrate(t, node);
}

}  // namespace dps
