// RemoteTrace: the trace sink of a node other than node 0 while node 0 traces. Events are kept in
// a batch that goes to node 0 on every heartbeat, when it grows large, and when node 0 asks; node 0
// hands them to its own sink. Their times are already on node 0's clock (TcpBackend::now).
//
//   RemoteTrace trace([&](TraceBatch&& b) { send_directive(0, b); });
//   runtime.trace_to(&trace);   ...   trace.flush();
#pragma once

#include "dps/net/protocol.hpp"
#include "dps/trace.hpp"

#include <functional>
#include <mutex>
#include <utility>

namespace dps::net {

class RemoteTrace final : public TraceSink {
 public:
  explicit RemoteTrace(std::function<void(TraceBatch&&)> ship) : ship_(std::move(ship)) {}

  void step(const StepEvent& e) override {
    add([&](TraceBatch& b) {
      b.steps.push_back({e.node, e.thread, std::string(e.collection), std::string(e.operation), e.call, e.start, e.end});
    });
  }
  void transfer(const TransferEvent& e) override {
    add([&](TraceBatch& b) { b.transfers.push_back({e.from, e.to, e.bytes, e.start, e.end}); });
  }
  void lifecycle(const LifecycleEvent& e) override {
    add([&](TraceBatch& b) {
      b.changes.push_back({static_cast<std::uint8_t>(e.kind), e.thread, std::string(e.collection), e.node, e.to, e.time});
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

}  // namespace dps::net
