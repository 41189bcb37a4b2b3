// Calls: a graph is called many times, concurrently; each call's future gets its own result.
#include "support.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace dps::test {
namespace {

TEST(Calls, ThousandConcurrentCalls) {
  Application app(ApplicationOptions{.nodes = 4, .workers = 2});
  auto master = app.threads<Stateless>("master", 2);
  auto workers = app.threads<Counter>("workers", 4);
  auto graph = app.graph(op<Pieces<>>(master) >> op<AddRange<Counter>>(workers) >> op<SumPartials<>>(master));
  std::vector<Future<Partial>> calls;
  for (long c = 0; c < 1000; ++c) calls.push_back(graph.call(Range{c, c + 1 + c % 97}));
  for (long c = 0; c < 1000; ++c) {
    const Partial p = calls[c].get();
    const long last = c + 1 + c % 97;
    EXPECT_EQ(p.sum, triangle(last) - triangle(c)) << "call " << c;
    EXPECT_EQ(p.count, (last - c + Pieces<>::step - 1) / Pieces<>::step) << "call " << c;
  }
  EXPECT_EQ(app.runtime().calls_in_progress(), 0u);
}

TEST(Calls, LeafOnlyGraphAndRepeatedCalls) {
  Application app(ApplicationOptions{.nodes = 1, .workers = 2});
  auto workers = app.threads<Counter>("workers", 2);
  auto graph = app.graph(op<AddRange<Counter>>(workers));
  for (long n = 1; n < 50; ++n) EXPECT_EQ(graph.call(Range{0, n}).get().sum, triangle(n));
}

TEST(Calls, CallsFromSeveralOsThreadsAtOnce) {
  Application app(ApplicationOptions{.nodes = 2, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Counter>("workers", 3);
  auto graph = app.graph(op<Pieces<>>(master) >> op<AddRange<Counter>>(workers) >> op<SumPartials<>>(master));
  std::atomic<int> wrong{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (long c = 0; c < 100; ++c)
        if (graph.call(Range{t, t + c + 1}).get().sum != triangle(t + c + 1) - triangle(t)) ++wrong;
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace dps::test
