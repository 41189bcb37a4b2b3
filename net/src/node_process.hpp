// NodeProcess: what the parts of a TcpBackend (transport, membership, replication, remote traces)
// share about the process they run in: its node id, its clock (node 0's), the runtime it serves,
// and one lock and condition over the parts' state, so that a thread waiting on one part (an
// instance joining, a reply) wakes when any of them changed and gives up once the application
// cannot go on.
//
//   std::lock_guard lock(process.mu);  ...change a part's state...;  process.changed.notify_all();
//   process.wait_for([&] { return ready.contains(node); }, "node 3 to connect", 30);
#pragma once

#include "dps/backend.hpp"
#include "dps/kernel/runtime.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <string>

namespace dps::net {

std::string seconds_text(double s);  // "3 s", "0.5 s"

class NodeProcess {
 public:
  explicit NodeProcess(NodeId me) : me(me) {}

  const NodeId me;

  // Node 0's clock, which every process reads: its own, plus the offset membership measured.
  double now() const noexcept;
  void set_clock_offset(double offset) noexcept { clock_offset_.store(offset, std::memory_order_relaxed); }

  void log(const std::string& line) const;  // "dps: node N: line", on stderr

  mutable std::mutex mu;            // guards the state of every part
  std::condition_variable changed;  // notified when some of it changed
  std::string failure;              // why the application cannot go on (membership sets it)

  // Waits (under mu) until `done()`; throws the failure, or a timeout naming `what` after `seconds`.
  template <class Pred>
  void wait_for(Pred done, const std::string& what, double seconds);

  // Under mu. What the network thread delivers to: set by attach(), reset by detach() (the backend
  // stopped). What strands send for: set by attach(), valid until they quiesced.
  Runtime* runtime = nullptr;
  Runtime* kernel = nullptr;
  bool stopped = false;
  void attach(Runtime& runtime);
  void detach();
  Runtime* attached();  // network thread: waits for attach(); null once stopped

 private:
  const std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::atomic<double> clock_offset_{0};
};

template <class Pred>
void NodeProcess::wait_for(Pred done, const std::string& what, double seconds) {
  std::unique_lock lock(mu);
  const bool ok =
      changed.wait_for(lock, std::chrono::duration<double>(seconds), [&] { return !failure.empty() || done(); });
  if (!failure.empty()) throw std::runtime_error(failure);
  if (!ok) throw std::runtime_error("timed out after " + seconds_text(seconds) + " waiting for " + what);
}

}  // namespace dps::net
