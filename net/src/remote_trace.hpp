// Remote traces: every node's events reach node 0's sink. RemoteTrace is the trace sink of a node
// other than node 0 while node 0 traces: events are kept in a batch that goes to node 0 on every
// heartbeat, when it grows large, and when node 0 asks; node 0 hands them to its own sink. Their
// times are already on node 0's clock (NodeProcess::now). RemoteTraces is that exchange, on both
// sides: node 0 turns tracing on and off and collects; the others record and send.
//
//   RemoteTrace trace([&](TraceBatch&& b) { send_directive(0, b); });
//   runtime.trace_to(&trace);   ...   trace.flush();
//
//   RemoteTraces traces(process, transport);        // in every process
//   traces.announce(true, others);  traces.collect(others);   // node 0
#pragma once

#include "incoming.hpp"
#include "node_process.hpp"
#include "transport.hpp"

#include "dps/net/protocol.hpp"
#include "dps/trace.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dps::net {

class RemoteTrace final : public TraceSink {
 public:
  explicit RemoteTrace(std::function<void(TraceBatch&&)> ship) : ship_(std::move(ship)) {}

  void step(const StepEvent& e) override {
    add([&](TraceBatch& b) {
      b.steps.push_back(
          {e.node, e.thread, std::string(e.collection), std::string(e.operation), e.call, e.start, e.end});
    });
  }
  void transfer(const TransferEvent& e) override {
    add([&](TraceBatch& b) { b.transfers.push_back({e.from, e.to, e.bytes, e.start, e.end}); });
  }
  void lifecycle(const LifecycleEvent& e) override {
    add([&](TraceBatch& b) {
      b.changes.push_back(
          {static_cast<std::uint8_t>(e.kind), e.thread, std::string(e.collection), e.node, e.to, e.time});
    });
  }
  void phase(const PhaseEvent& e) override {
    add([&](TraceBatch& b) { b.phases.push_back({std::string(e.name), e.begin, e.time}); });
  }

  // Sends what was recorded. When it returns, every batch taken before it has been sent.
  void flush() {
    std::lock_guard sending(send_mu_);
    TraceBatch batch;
    {
      std::lock_guard lock(mu_);
      if (size_ == 0) return;
      std::swap(batch, batch_);
      size_ = 0;
    }
    ship_(std::move(batch));
  }

 private:
  static constexpr std::size_t kBatch = 4096;  // events

  template <class F>
  void add(F&& put) {
    bool full;
    {
      std::lock_guard lock(mu_);
      put(batch_);
      full = ++size_ >= kBatch;
    }
    if (full) flush();
  }

  std::function<void(TraceBatch&&)> ship_;
  std::mutex send_mu_, mu_;
  TraceBatch batch_;
  std::size_t size_ = 0;
};

class RemoteTraces {
 public:
  using Handles = DirectiveKinds<Tracing, TraceBatch, TraceFlush, TraceFlushed>;

  RemoteTraces(NodeProcess& process, Transport& transport);

  // Other nodes: sends node 0 what this process recorded (every heartbeat, and before it leaves).
  void flush() { sink_.flush(); }
  // Node 0: `nodes` record events for node 0's sink from now on, or stop (throws as send_directive).
  void announce(bool on, const std::vector<NodeId>& nodes);
  // Node 0: returns once what `nodes` recorded so far is in the sink (or they are gone).
  void collect(const std::vector<NodeId>& nodes);

  void handle(Tracing& d, Incoming& in);
  void handle(TraceBatch& d, Incoming& in);
  void handle(TraceFlush& d, Incoming& in);
  void handle(TraceFlushed& d, Incoming& in);

 private:
  NodeProcess& process_;
  Transport& transport_;
  RemoteTrace sink_;
  std::atomic<std::uint64_t> next_request_{0};
  std::unordered_map<std::uint64_t, std::set<NodeId>> flushes_;  // node 0, under process_.mu: who answered
};

}  // namespace dps::net
