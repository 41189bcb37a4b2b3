// yield(): a long split, merge or stream lets the messages waiting for its thread in mid-way (a
// branch and bound learning a better bound), and costs no step when none waits. With the real
// scheduling and with steps that end at every co_await, as the simulator's do.
#include "support.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>

namespace dps::test {
namespace {

struct Watch {
  bool told = false;
  template <class A>
  void serialize(A& a) {
    a(told);
  }
};

std::atomic<bool> spinning{false};

// Spins until told or `last` turns have passed (or 20 s: a kernel that never lets Tell in must not
// hang the test); posts {turns, told}.
struct Spin : Split<Range, Range, Watch> {
  Step execute(Range r) {
    spinning = true;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    long turns = 0;
    while (!thread().told && turns < r.last && std::chrono::steady_clock::now() < deadline) {
      ++turns;
      co_await yield();
    }
    co_await post(Range{turns, thread().told ? 1 : 0});
  }
};
struct Pass : Merge<Range, Range, Watch> {
  Step execute(Range r) {
    while (auto more = co_await next()) r = *more;
    co_await post(r);
  }
};
struct Tell : Leaf<Range, Range, Watch> {
  Range execute(const Range& r) {
    thread().told = true;
    return r;
  }
};

class Yield : public ::testing::TestWithParam<bool> {};

TEST_P(Yield, AWaitingMessageIsHandledBeforeTheOperationGoesOn) {
  spinning = false;
  Application app(std::make_unique<TestBackend>(1, 2, Flags{.yield = GetParam()}));
  auto one = app.threads<Watch>("one", 1);
  auto spin = app.graph(op<Spin>(one) >> op<Pass>(one));
  auto tell = app.graph(op<Tell>(one));
  Future<Range> spun = spin.call(Range{0, 1L << 40});
  ASSERT_TRUE(eventually([] { return spinning.load(); }));
  tell.call(Range{}).get();  // it ran on the thread whose operation is still spinning
  const Range r = spun.get();
  EXPECT_EQ(r.last, 1);                 // it saw what Tell did
  EXPECT_LT(r.first, 1L << 40);         // and stopped for it
}

TEST_P(Yield, NoMessageWaitingCostsNoStepUnlessStepsYield) {
  Application app(std::make_unique<TestBackend>(1, 2, Flags{.yield = GetParam()}));
  auto one = app.threads<Watch>("one", 1);
  auto spin = app.graph(op<Spin>(one).named("spin") >> op<Pass>(one));
  MemoryTrace trace;
  app.trace_to(&trace);
  const Range r = spin.call(Range{0, 1000}).get();
  app.trace_to(nullptr);
  EXPECT_EQ(r.first, 1000);
  EXPECT_EQ(r.last, 0);
  long steps = 0;
  for (const MemoryTrace::Step& s : trace.steps()) steps += s.operation == "spin";
  // Stepping: the start, a step per yield, the post. Else one step, unless a frame message slipped in.
  if (GetParam())
    EXPECT_GE(steps, 1000);
  else
    EXPECT_LE(steps, 3);
}

INSTANTIATE_TEST_SUITE_P(Scheduling, Yield, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "StepsYield" : "Real"; });

}  // namespace
}  // namespace dps::test
