// SimulationHooks: what the kernel asks of a backend that simulates (the simulator, sim/), beyond
// what every backend does. A real backend has none: Backend::simulation() is null, and the kernel
// asks that once (Schaeli, Gerlach & Hersch, "A simulator for adaptive parallel applications", §3-4).
//
//   if (SimulationHooks* sim = backend.simulation()) sim->drive_until([&] { return ready(); });
//
// Under simulation every co_await ends an atomic step and returns control to the simulator, and
// every envelope, even between threads of one node, goes through Backend::send(): the simulator
// delivers what a step sent when the step ends.
#pragma once

#include "dps/compute.hpp"
#include "dps/ids.hpp"

#include <functional>

namespace dps {

struct Envelope;
class Thread;
class TraceSink;

class SimulationHooks {
 public:
  // A graph's output, produced on `from`, for its caller: the simulator calls runtime.complete_call
  // itself once the step that produced it has ended. False: deliver it at once.
  virtual bool send_result(NodeId from, Envelope* e) = 0;
  // The runtime frees `thread` (gone, its mailbox drained): false while the simulator still holds
  // it (until the last step it ran has ended), to be asked again later.
  virtual bool forget(const Thread& thread) = 0;

  // dps::compute charges its estimate instead of running its function (partial direct execution).
  virtual bool models_compute() const = 0;
  virtual void charge(Thread& thread, double seconds) = 0;
  // How one dps::compute call at `site` runs (see compute.hpp).
  virtual ComputePlan plan_compute(Thread& thread, const void* site, double estimate) = 0;
  // The thread CPU time of a call planned as Measure.
  virtual void computed(Thread& thread, const void* site, double estimate, double cpu_seconds) = 0;
  // LargeArray payloads allocate their data (false under NOALLOC simulation).
  virtual bool allocates_payloads() const = 0;

  // The sink the kernel reports to when the user asked for `sink` (maybe none): the simulator times
  // steps itself and keeps statistics.
  virtual TraceSink* trace_through(TraceSink* sink) = 0;

  // The simulated world runs only while someone waits: until done() holds, or to `time` (seconds).
  virtual void drive_until(const std::function<bool()>& done) = 0;
  virtual void advance_to(double time) = 0;

 protected:
  ~SimulationHooks() = default;
};

}  // namespace dps
