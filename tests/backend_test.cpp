// The Backend interface carries a simulator-style backend: one OS thread, an event loop that runs one
// atomic step at a time under a virtual clock, futures that advance it while they wait.
#include "support.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <set>
#include <thread>

namespace dps::test {
namespace {

// Runnable DPS threads wait in a FIFO; each run(1) is one atomic step and advances the clock by 1.
class SteppingBackend final : public Backend, SimulationHooks {
 public:
  std::string_view name() const override { return "stepping"; }
  void attach(Runtime& rt) override { runtime_ = &rt; }
  std::vector<NodeId> nodes() const override { return {0, 1}; }
  NodeId local_node() const override { return 0; }
  NodeId add_node() override { throw std::logic_error("fixed cluster"); }
  void remove_node(NodeId) override { throw std::logic_error("fixed cluster"); }
  void schedule(Thread& t, Priority) override { runnable_.push_back(&t); }
  void send(NodeId, Thread& to, Envelope* e) override { runtime_->enqueue(to, e); }
  bool migrate(Thread& t, NodeId to, std::string state, std::function<void(std::exception_ptr)> arrived) override {
    t.relocate(to, state);
    arrived(nullptr);
    return true;
  }
  void quiesce() override {
    drive_until([] { return false; });
  }
  double now() const override { return clock_; }
  SimulationHooks* simulation() noexcept override { return this; }

  bool send_result(NodeId, Envelope*) override { return false; }
  bool forget(const Thread&) override { return true; }
  bool models_compute() const override { return false; }
  bool allocates_payloads() const override { return true; }
  void charge(Thread&, double) override {}
  ComputePlan plan_compute(Thread&, const void*, double) override { return ComputePlan::Run; }
  void computed(Thread&, const void*, double, double) override {}
  TraceSink* trace_through(TraceSink* sink) override { return sink; }
  void advance_to(double time) override { clock_ = std::max(clock_, time); }
  void drive_until(const std::function<bool()>& done) override {
    while (!done() && !runnable_.empty()) {
      Thread* t = runnable_.front();
      runnable_.pop_front();
      const bool more = t->run(1);
      clock_ += 1;
      ++steps;
      if (more) runnable_.push_back(t);
    }
  }

  long steps = 0;

 private:
  Runtime* runtime_ = nullptr;
  std::deque<Thread*> runnable_;
  double clock_ = 0;
};

std::thread::id leaf_thread;

struct Where : Leaf<Range, Partial> {
  Partial execute(const Range& r) {
    leaf_thread = std::this_thread::get_id();
    return {r.last - r.first, 1};
  }
};

std::vector<std::string> run_once(long& steps) {
  MemoryTrace trace;
  auto backend = std::make_unique<SteppingBackend>();
  SteppingBackend& b = *backend;
  Application app(std::move(backend));
  app.trace_to(&trace);
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 3);
  auto graph = app.graph(op<Pieces<>>(master).window(2) >> op<Where>(workers) >> op<SumPartials<>>(master));
  const Partial p = graph.call(Range{0, 95}).get();  // drives the loop on this OS thread
  EXPECT_EQ(p.sum, 95);
  EXPECT_EQ(p.count, 10);
  EXPECT_EQ(leaf_thread, std::this_thread::get_id()) << "no other OS thread ran an operation";
  steps = b.steps;
  std::vector<std::string> timeline;
  for (const auto& s : trace.steps()) {
    EXPECT_EQ(s.start, s.end) << "a step runs within one run(1): the clock only moves between them";
    timeline.push_back(s.operation + "@" + std::to_string(s.start));
  }
  return timeline;
}

TEST(Backend, OneOsThreadOneAtomicStepPerRunDeterministic) {
  long steps_a = 0, steps_b = 0;
  const auto a = run_once(steps_a);
  const auto b = run_once(steps_b);
  EXPECT_EQ(a, b) << "same inputs, same steps at the same virtual times";
  EXPECT_EQ(steps_a, steps_b);
  // Every operation step was its own run(1): no two trace steps share a virtual time.
  std::set<std::string> times;
  for (const auto& step : a) times.insert(step.substr(step.find('@')));
  EXPECT_EQ(times.size(), a.size());
  EXPECT_GE(a.size(), 10u + 11u + 11u) << "10 leaves, 10 posts + end of the split, 10 inputs + end of the merge";
}

}  // namespace
}  // namespace dps::test
