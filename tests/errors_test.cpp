// Bad input gets a clear error on the call's future, naming the operation and the thread, and the
// runtime stays usable for other calls.
#include "support.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace dps::test {
namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

struct Fragile : Leaf<Range, Partial> {
  Partial execute(const Range& r) {
    if (r.first == 130) throw std::runtime_error("bad block 130");
    long s = 0;
    for (long i = r.first; i < r.last; ++i) s += i;
    return {s, 1};
  }
};

class Errors : public ::testing::Test {
 protected:
  Application app{ApplicationOptions{.nodes = 2, .workers = 2}};
  Threads<Stateless> master = app.threads<Stateless>("master", 1);
  Threads<Stateless> workers = app.threads<Stateless>("workers", 4);
  Graph<Range, Partial> good = app.graph(op<Pieces<>>(master) >> op<AddRange<>>(workers) >> op<SumPartials<>>(master));

  // The runtime still serves calls, concurrently, after the failure.
  void expect_usable() {
    std::vector<Future<Partial>> calls;
    for (long c = 1; c <= 50; ++c) calls.push_back(good.call(Range{0, 10 * c}));
    for (long c = 1; c <= 50; ++c) EXPECT_EQ(calls[c - 1].get().sum, triangle(10 * c));
    EXPECT_EQ(app.runtime().calls_in_progress(), 0u);
  }
};

TEST_F(Errors, ExceptionInALeafNamesOperationAndThread) {
  auto graph = app.graph(op<Pieces<>>(master) >> op<Fragile>(workers).named("Fragile") >> op<SumPartials<>>(master));
  std::vector<Future<Partial>> fine;
  for (int i = 0; i < 20; ++i) fine.push_back(graph.call(Range{0, 100}));  // never reaches block 130
  auto doomed = graph.call(Range{0, 1000});
  try {
    doomed.get();
    FAIL() << "the exception must reach the call's future";
  } catch (const OperationError& e) {
    EXPECT_EQ(e.operation, "Fragile");
    EXPECT_TRUE(contains(e.thread, "workers[")) << e.thread;
    EXPECT_TRUE(contains(e.what(), "operation 'Fragile' on thread workers[")) << e.what();
    EXPECT_TRUE(contains(e.what(), "bad block 130")) << e.what();
  }
  for (auto& f : fine) EXPECT_EQ(f.get().sum, triangle(100));
  expect_usable();
}

struct Explode : Split<Range, Range> {
  Step execute(Range r) {
    for (long i = r.first; i < r.last; ++i) {
      if (i == r.first + 50) throw std::logic_error("split gave up");
      co_await post(Range{i, i + 1});
    }
  }
};

TEST_F(Errors, ExceptionInASplitAfterItPostedFailsOnlyItsCall) {
  auto graph = app.graph(op<Explode>(master).window(8) >> op<AddRange<>>(workers) >> op<SumPartials<>>(master));
  for (int round = 0; round < 5; ++round) {
    auto f = graph.call(Range{0, 100});
    try {
      f.get();
      FAIL();
    } catch (const OperationError& e) {
      EXPECT_TRUE(contains(e.what(), "thread master[0]")) << e.what();
      EXPECT_TRUE(contains(e.what(), "split gave up")) << e.what();
    }
  }
  expect_usable();
}

TEST_F(Errors, RouteOutOfRange) {
  auto graph = app.graph(op<Pieces<>>(master) >> op<AddRange<>>(workers, [](const Range&) { return std::size_t{7}; }) >>
                         op<SumPartials<>>(master));
  try {
    graph.call(Range{0, 100}).get();
    FAIL();
  } catch (const OperationError& e) {
    EXPECT_TRUE(contains(e.what(), "chose thread 7, but collection 'workers' has 4 threads")) << e.what();
    EXPECT_TRUE(contains(e.what(), "on thread master[0]")) << e.what();
  }
  auto entry = app.graph(op<AddRange<>>(workers, to(4)));
  EXPECT_THROW(entry.call(Range{0, 1}).get(), RouteError);
  expect_usable();
}

struct Twice : Merge<Partial, Partial> {
  Step execute(Partial p) {
    while (auto rest = co_await next()) {
    }
    co_await post(p);
    co_await post(p);
  }
};
struct Mute : Merge<Partial, Partial> {
  Step execute(Partial) {
    while (auto rest = co_await next()) {
    }
  }
};

TEST_F(Errors, MergeBreakingItsRules) {
  auto twice = app.graph(op<Pieces<>>(master) >> op<AddRange<>>(workers) >> op<Twice>(master).named("Twice"));
  try {
    twice.call(Range{0, 100}).get();
    FAIL();
  } catch (const OperationError& e) {
    EXPECT_TRUE(contains(e.what(), "operation 'Twice'")) << e.what();
    EXPECT_TRUE(contains(e.what(), "a merge posts exactly one object")) << e.what();
  }
  auto mute = app.graph(op<Pieces<>>(master) >> op<AddRange<>>(workers) >> op<Mute>(master).named("Mute"));
  try {
    mute.call(Range{0, 100}).get();
    FAIL();
  } catch (const OperationError& e) {
    EXPECT_TRUE(contains(e.what(), "finished without posting its result")) << e.what();
  }
  expect_usable();
}

TEST_F(Errors, SplitPostingNothing) {
  try {
    good.call(Range{5, 5}).get();
    FAIL();
  } catch (const OperationError& e) {
    EXPECT_TRUE(contains(e.what(), "posted no object")) << e.what();
  }
  expect_usable();
}

TEST_F(Errors, UnpairedGraphsAreRejectedWhenBuilt) {
  try {
    app.graph(op<Pieces<>>(master) >> op<AddRange<>>(workers), "half");
    FAIL();
  } catch (const GraphError& e) {
    EXPECT_TRUE(contains(e.what(), "has no merge after it")) << e.what();
    EXPECT_TRUE(contains(e.what(), "graph 'half'")) << e.what();
  }
  try {
    app.graph(op<AddRange<>>(workers) >> op<SumPartials<>>(master));
    FAIL();
  } catch (const GraphError& e) {
    EXPECT_TRUE(contains(e.what(), "has no split before it")) << e.what();
  }
  expect_usable();
}

}  // namespace
}  // namespace dps::test
