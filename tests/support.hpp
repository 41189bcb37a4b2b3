// Shared by the test suites: small data objects, and a backend that wraps LocalBackend to switch on
// the behaviours of the simulated backend (step yielding, modelled compute, NOALLOC) one at a time.
#pragma once

#include <dps/dps.hpp>
#include <dps/kernel/runtime.hpp>
#include <dps/kernel/simulation_hooks.hpp>
#include <dps/local_backend.hpp>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace dps::test {

struct Range {
  long first = 0, last = 0;
  template <class A>
  void serialize(A& a) {
    a(first, last);
  }
};

struct Partial {
  long sum = 0;
  long count = 0;  // leaves summed into it
  template <class A>
  void serialize(A& a) {
    a(sum, count);
  }
};

inline long triangle(long n) { return n * (n - 1) / 2; }  // 0 + 1 + ... + (n-1)

struct Counter {
  long seen = 0;
  template <class A>
  void serialize(A& a) {
    a(seen);
  }
};

// Splits a range into pieces of `step` (the last one shorter).
template <class State = Stateless>
struct Pieces : Split<Range, Range, State> {
  static inline long step = 10;
  Step execute(Range r) {
    for (long i = r.first; i < r.last; i += step) co_await this->post(Range{i, std::min(i + step, r.last)});
  }
};

// Sums a range into one Partial, after sleeping `SleepMs` (a piece a node can be killed during);
// counts itself in its thread's state when that is a Counter.
template <class State = Stateless, int SleepMs = 0>
struct AddRange : Leaf<Range, Partial, State> {
  Partial execute(const Range& r) {
    if constexpr (std::is_same_v<State, Counter>) ++this->thread().seen;
    if constexpr (SleepMs > 0) std::this_thread::sleep_for(std::chrono::milliseconds(SleepMs));
    long s = 0;
    for (long i = r.first; i < r.last; ++i) s += i;
    return {s, 1};
  }
};

// Adds up every Partial of its split.
template <class State = Stateless>
struct SumPartials : Merge<Partial, Partial, State> {
  Step execute(Partial p) {
    while (auto q = co_await this->next()) p.sum += q->sum, p.count += q->count;
    co_await this->post(p);
  }
};

struct Flags {
  bool yield = false;          // every co_await returns to the backend, like the simulator
  bool model_compute = false;  // dps::compute charges instead of running
  bool allocate = true;        // LargeArray allocates
};

// A LocalBackend that, as flags say, behaves as a simulator does in part: a simulator whose world
// runs by itself (waiting polls).
class TestBackend final : public Backend, SimulationHooks {
 public:
  TestBackend(std::size_t nodes, std::size_t workers, Flags flags) : local_(nodes, workers), flags_(flags) {}
  std::string_view name() const override { return "test"; }
  void attach(Runtime& rt) override { local_.attach(rt); }
  std::vector<NodeId> nodes() const override { return local_.nodes(); }
  NodeId local_node() const override { return local_.local_node(); }
  NodeId add_node() override { return local_.add_node(); }
  void remove_node(NodeId n) override { local_.remove_node(n); }
  void schedule(Thread& t, Priority p) override { local_.schedule(t, p); }
  void send(NodeId from, Thread& to, Envelope* e) override { local_.send(from, to, e); }
  bool migrate(Thread& t, NodeId to, std::string state, std::function<void(std::exception_ptr)> arrived) override {
    return local_.migrate(t, to, std::move(state), std::move(arrived));
  }
  void quiesce() override { local_.quiesce(); }
  double now() const override { return local_.now(); }
  SimulationHooks* simulation() noexcept override {
    return flags_.yield || flags_.model_compute || !flags_.allocate ? this : nullptr;
  }

  // SimulationHooks
  bool send_result(NodeId, Envelope*) override { return false; }
  bool forget(const Thread&) override { return true; }
  bool models_compute() const override { return flags_.model_compute; }
  bool allocates_payloads() const override { return flags_.allocate; }
  void charge(Thread&, double seconds) override { charged_micros.fetch_add(static_cast<long>(seconds * 1e6 + 0.5)); }
  ComputePlan plan_compute(Thread& t, const void*, double estimate) override {
    if (!flags_.model_compute) return ComputePlan::Run;
    charge(t, estimate);
    return ComputePlan::Skip;
  }
  void computed(Thread&, const void*, double, double) override {}
  TraceSink* trace_through(TraceSink* sink) override { return sink; }
  void drive_until(const std::function<bool()>& done) override {
    while (!done()) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  void advance_to(double time) override {
    while (now() < time) std::this_thread::sleep_for(std::chrono::microseconds(20));
  }

  std::atomic<long> charged_micros{0};

 private:
  LocalBackend local_;
  Flags flags_;
};

// Polls `done` for at most `limit`; tests use it where they must wait for another OS thread.
template <class F>
bool eventually(F done, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!done()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return true;
}

// Whether every thread but the `live` ones was freed: its host said it was gone, every process forgot
// it, and once what was on its way to it drained, the graveyard let it go. Nothing stays per removed
// thread, and no table outlives its readers.
inline bool only_live_threads_kept(Runtime& runtime, std::size_t live) {
  return eventually([&] {
    runtime.graveyard().collect();
    return runtime.threads().size() == live && runtime.graveyard().size() == 0;
  });
}

}  // namespace dps::test
