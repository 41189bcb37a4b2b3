// dps::compute runs its function for real, and only charges its estimate under partial direct execution.
#include "support.hpp"

#include <gtest/gtest.h>

namespace dps::test {
namespace {

std::atomic<int> ran{0};

struct Work : Leaf<Range, Partial> {
  Partial execute(const Range& r) {
    const long s = compute(std::chrono::microseconds(250), [&] {
      ++ran;
      long sum = 0;
      for (long i = r.first; i < r.last; ++i) sum += i;
      return sum;
    });
    compute(0.001, [] { ++ran; });
    return {s, 1};
  }
};

TEST(Compute, RunsTheFunctionForReal) {
  ran = 0;
  auto backend = std::make_unique<TestBackend>(2, 2, Flags{});
  TestBackend& b = *backend;
  Application app(std::move(backend));
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 2);
  auto graph = app.graph(op<Pieces<>>(master) >> op<Work>(workers) >> op<SumPartials<>>(master));
  EXPECT_EQ(graph.call(Range{0, 100}).get().sum, triangle(100));
  EXPECT_EQ(ran.load(), 20);
  EXPECT_EQ(b.charged_micros.load(), 0);
}

TEST(Compute, PartialDirectExecutionChargesTheEstimate) {
  ran = 0;
  auto backend = std::make_unique<TestBackend>(2, 2, Flags{.model_compute = true});
  TestBackend& b = *backend;
  Application app(std::move(backend));
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 2);
  auto graph = app.graph(op<Pieces<>>(master) >> op<Work>(workers) >> op<SumPartials<>>(master));
  const Partial p = graph.call(Range{0, 100}).get();
  EXPECT_EQ(p.count, 10) << "the flow of the graph is unchanged";
  EXPECT_EQ(p.sum, 0) << "the skipped computation returns a value-initialized result";
  EXPECT_EQ(ran.load(), 0);
  EXPECT_EQ(b.charged_micros.load(), 10 * (250 + 1000));
}

}  // namespace
}  // namespace dps::test
