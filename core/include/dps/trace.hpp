// Trace recording hooks. The kernel reports what happens to a TraceSink, if one is attached; the same
// events come from real and simulated runs (times in seconds on the backend's clock).
//
//   dps::MemoryTrace trace;
//   app.trace_to(&trace);
//   graph.call(x).get();
//   for (const auto& s : trace.steps()) std::cout << s.operation << " " << s.end - s.start << "\n";
//
// A sink is called concurrently from several OS threads and must synchronize itself. The file format
// that persists these events belongs to the trace tools, not to the kernel.
#pragma once

#include "dps/ids.hpp"

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace dps {

// One atomic step: an operation ran without suspending (Schaeli, Gerlach & Hersch, "A simulator for adaptive parallel
// applications", §3).
struct StepEvent {
  NodeId node;
  std::uint64_t thread;         // thread uid, unique in the application
  std::string_view collection;  // thread collection name
  std::string_view operation;
  CallId call;
  double start, end;
};

struct TransferEvent {
  NodeId from, to;
  std::uint64_t bytes;
  double start, end;
};

enum class Lifecycle : std::uint8_t {
  ThreadAdded,
  ThreadRemoved,
  ThreadMigrated,
  NodeAdded,
  NodeRemoved,
  NodeFailed,      // the node was lost
  ThreadRestored,  // rebuilt from its checkpoint: `node` is the failed node, `to` where it runs now
  ThreadReplayed,  // rebuilt, it handled again all it was sent again (on `node`): its recovery ended
};

struct LifecycleEvent {
  Lifecycle kind;
  std::uint64_t thread;         // 0 for node events
  std::string_view collection;  // empty for node events
  NodeId node;                  // the thread's node (its old node when migrated), or the node itself
  NodeId to;                    // the new node of a migrated thread
  double time;
};

struct PhaseEvent {
  std::string_view name;
  bool begin;
  double time;
};

class TraceSink {
 public:
  virtual ~TraceSink() = default;
  virtual void step(const StepEvent&) = 0;
  virtual void transfer(const TransferEvent&) = 0;
  virtual void lifecycle(const LifecycleEvent&) = 0;
  virtual void phase(const PhaseEvent&) = 0;
};

// Keeps every event in memory; for tests and small runs.
class MemoryTrace final : public TraceSink {
 public:
  struct Step {
    NodeId node;
    std::uint64_t thread;
    std::string collection, operation;
    CallId call;
    double start, end;
  };
  struct Change {
    Lifecycle kind;
    std::uint64_t thread;
    std::string collection;
    NodeId node, to;
    double time;
  };
  struct Phase {
    std::string name;
    bool begin;
    double time;
  };

  void step(const StepEvent& e) override;
  void transfer(const TransferEvent& e) override;
  void lifecycle(const LifecycleEvent& e) override;
  void phase(const PhaseEvent& e) override;

  std::vector<Step> steps() const;
  std::vector<TransferEvent> transfers() const;
  std::vector<Change> changes() const;
  std::vector<Phase> phases() const;

 private:
  mutable std::mutex mu_;
  std::vector<Step> steps_;
  std::vector<TransferEvent> transfers_;
  std::vector<Change> changes_;
  std::vector<Phase> phases_;
};

}  // namespace dps
