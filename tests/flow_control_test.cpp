// Flow control: a split-merge pair with a window never has more objects in flight than the window.
#include "support.hpp"

#include <gtest/gtest.h>

namespace dps::test {
namespace {

// Split and merge share one DPS thread, so they never run at the same time and the merge can read
// exactly how many posted objects it has not consumed yet.
struct Probe {
  long posted = 0, consumed = 0, max_in_flight = 0;
  template <class A>
  void serialize(A& a) {
    a(posted, consumed, max_in_flight);
  }
};

struct Emit : Split<Range, Range, Probe> {
  Step execute(Range r) {
    for (long i = r.first; i < r.last; ++i) {
      co_await post(Range{i, i + 1});
      ++thread().posted;
    }
  }
};
struct Unit : Leaf<Range, Partial> {
  Partial execute(const Range& r) { return {r.first, 1}; }
};
struct Drain : Merge<Partial, Partial, Probe> {
  Step execute(Partial p) {
    observe();
    while (auto q = co_await next()) {
      observe();
      p.sum += q->sum, p.count += q->count;
    }
    co_await post(p);
  }
  void observe() {
    Probe& s = thread();
    s.max_in_flight = std::max(s.max_in_flight, s.posted - s.consumed);
    ++s.consumed;
  }
};

long max_in_flight(std::uint32_t window, long n) {
  Application app(ApplicationOptions{.nodes = 2, .workers = 2});
  auto master = app.threads<Probe>("master", 1);
  auto workers = app.threads<Stateless>("workers", 4);
  auto emit = window ? op<Emit>(master).window(window) : op<Emit>(master);
  auto graph = app.graph(emit >> op<Unit>(workers) >> op<Drain>(master));
  const Partial p = graph.call(Range{0, n}).get();
  EXPECT_EQ(p.sum, triangle(n));
  EXPECT_EQ(p.count, n);
  return master.remove(0).get().max_in_flight;
}

TEST(FlowControl, WindowBoundsObjectsInFlight) {
  for (std::uint32_t window : {1u, 8u, 64u}) {
    const long seen = max_in_flight(window, 2000);
    EXPECT_LE(seen, window) << "window " << window;
    EXPECT_EQ(seen, window) << "the split fills its window before it suspends";
  }
}

TEST(FlowControl, WithoutWindowTheSplitRunsAhead) {
  EXPECT_EQ(max_in_flight(0, 2000), 2000) << "no window: everything is posted before the merge runs";
}

// Merge on another thread than its split: credit travels back as messages. The split counts an
// object once its post returned, the merge when its code sees it; the kernel credits an object just
// before the merge's code sees it, so the observed count may exceed the window by that one object.
std::atomic<long> posted{0}, consumed{0};

struct EmitCounted : Split<Range, Range> {
  Step execute(Range r) {
    for (long i = r.first; i < r.last; ++i) {
      co_await post(Range{i, i + 1});
      ++posted;
    }
  }
};
struct DrainCounted : Merge<Partial, Partial, Probe> {
  Step execute(Partial p) {
    see();
    while (auto q = co_await next()) {
      see();
      p.sum += q->sum, p.count += q->count;
    }
    co_await post(p);
  }
  void see() {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(2);
    while (std::chrono::steady_clock::now() < until) {
    }
    thread().max_in_flight = std::max(thread().max_in_flight, posted.load() - consumed.load());
    ++consumed;
  }
};

long peak_across_threads(std::uint32_t window) {
  posted = 0;
  consumed = 0;
  Application app(ApplicationOptions{.nodes = 3, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 3);
  auto collector = app.threads<Probe>("collector", 1);
  auto emit = window ? op<EmitCounted>(master).window(window) : op<EmitCounted>(master);
  auto graph = app.graph(emit >> op<Unit>(workers) >> op<DrainCounted>(collector));
  EXPECT_EQ(graph.call(Range{0, 5000}).get().count, 5000);
  return collector.remove(0).get().max_in_flight;
}

TEST(FlowControl, CreditReturnsAcrossThreads) {
  EXPECT_LE(peak_across_threads(16), 16 + 1);
  EXPECT_GT(peak_across_threads(0), 100) << "without a window the split runs far ahead of a slow merge";
}

}  // namespace
}  // namespace dps::test
