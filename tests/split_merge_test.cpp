// A merge gets exactly the objects descended from one execution of its matching split, whatever the
// nesting, the routes and the arrival order.
#include "support.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <vector>

namespace dps::test {
namespace {

// --- three levels of nesting: 1000 -> 10 x 100 -> 10 x 10 -> 10 x 1 ---

struct Tenths : Split<Range, Range> {
  Step execute(Range r) {
    const long step = (r.last - r.first) / 10;
    for (int k = 0; k < 10; ++k) co_await post(Range{r.first + k * step, r.first + (k + 1) * step});
  }
};
// Checks it received exactly its split's ten objects, each of them a complete sub-result.
struct Collect : Merge<Partial, Partial> {
  static inline std::atomic<int> wrong_fanin{0};
  Step execute(Partial p) {
    int inputs = 1;
    while (auto q = co_await next()) {
      p.sum += q->sum;
      p.count += q->count;
      ++inputs;
    }
    if (inputs != 10) ++wrong_fanin;
    co_await post(p);
  }
};

TEST(SplitMerge, NestedThreeLevelsDeepOverManyThreads) {
  Collect::wrong_fanin = 0;
  Application app(ApplicationOptions{.nodes = 4, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto mid = app.threads<Stateless>("mid", 3);
  auto inner = app.threads<Stateless>("inner", 4);
  auto workers = app.threads<Counter>("workers", 5);
  auto graph = app.graph(op<Tenths>(master) >> op<Tenths>(mid) >> op<Tenths>(inner) >> op<AddRange<Counter>>(workers) >>
                         op<Collect>(inner) >> op<Collect>(mid) >> op<Collect>(master));
  std::vector<Future<Partial>> calls;
  for (long c = 0; c < 8; ++c) calls.push_back(graph.call(Range{c * 1000, (c + 1) * 1000}));
  for (long c = 0; c < 8; ++c) {
    Partial p = calls[c].get();
    EXPECT_EQ(p.count, 1000);
    EXPECT_EQ(p.sum, triangle((c + 1) * 1000) - triangle(c * 1000));
  }
  EXPECT_EQ(Collect::wrong_fanin.load(), 0);
}

// --- merge inputs routed to many threads: the frame protocol brings them to one instance ---

struct Tagged {
  long tag = 0, index = 0;
  template <class A>
  void serialize(A& a) {
    a(tag, index);
  }
};
struct Report {
  long tag = 0, count = 0, index_sum = 0, foreign = 0;
  template <class A>
  void serialize(A& a) {
    a(tag, count, index_sum, foreign);
  }
};
struct Scatter : Split<Tagged, Tagged> {
  Step execute(Tagged job) {  // job.index = how many objects
    for (long i = 0; i < job.index; ++i) co_await post(Tagged{job.tag, i});
  }
};
struct Pass : Leaf<Tagged, Tagged> {
  Tagged execute(const Tagged& t) { return t; }
};
struct Audit : Merge<Tagged, Report> {
  Step execute(Tagged first) {
    Report r{first.tag, 1, first.index, 0};
    while (auto t = co_await next()) {
      ++r.count;
      r.index_sum += t->index;
      if (t->tag != r.tag) ++r.foreign;
    }
    co_await post(r);
  }
};

TEST(SplitMerge, MergeInputsRoutedToManyThreadsMeetInOneInstance) {
  Application app(ApplicationOptions{.nodes = 3, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 4);
  auto mergers = app.threads<Stateless>("mergers", 5);
  // round_robin sends consecutive objects of one frame to different merge threads
  auto graph = app.graph(op<Scatter>(master) >> op<Pass>(workers) >> op<Audit>(mergers, round_robin));
  std::vector<Future<Report>> calls;
  for (long c = 0; c < 20; ++c) calls.push_back(graph.call(Tagged{c, 100 + 37 * c}));
  for (long c = 0; c < 20; ++c) {
    const Report r = calls[c].get();
    const long n = 100 + 37 * c;
    EXPECT_EQ(r.tag, c);
    EXPECT_EQ(r.count, n);
    EXPECT_EQ(r.index_sum, triangle(n));
    EXPECT_EQ(r.foreign, 0);
  }
}

// --- out-of-order arrival: object 0 is held back until half of the others were merged ---

std::atomic<long> merged{0};

struct Hold : Leaf<Tagged, Tagged> {
  Tagged execute(const Tagged& t) {
    if (t.index == 0) eventually([&] { return merged.load() >= t.tag / 2; });
    return t;
  }
};
struct Order : Merge<Tagged, Report> {
  static inline std::vector<long> arrivals;
  Step execute(Tagged first) {
    arrivals.push_back(first.index);
    ++merged;
    Report r{first.tag, 1, first.index, 0};
    while (auto t = co_await next()) {
      arrivals.push_back(t->index);
      ++merged;
      ++r.count;
      r.index_sum += t->index;
    }
    co_await post(r);
  }
};

TEST(SplitMerge, InputsArrivingOutOfOrderAreAllMerged) {
  merged = 0;
  Order::arrivals.clear();
  Application app(ApplicationOptions{.nodes = 2, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 4);
  auto graph = app.graph(op<Scatter>(master) >> op<Hold>(workers) >> op<Order>(master));
  const long n = 400;
  const Report r = graph.call(Tagged{n, n}).get();  // tag: how many merges object 0 waits for (n / 2)
  EXPECT_EQ(r.count, n);
  EXPECT_EQ(r.index_sum, triangle(n));
  ASSERT_EQ(Order::arrivals.size(), static_cast<std::size_t>(n));
  const auto zero = std::find(Order::arrivals.begin(), Order::arrivals.end(), 0L) - Order::arrivals.begin();
  EXPECT_GE(zero, n / 2) << "object 0 was held back, so at least half the others arrive before it";
}

// --- a suspended merge lets the other operations of its thread run ---

TEST(SplitMerge, SuspendedMergeLetsItsThreadRunOtherOperations) {
  Application app(ApplicationOptions{.nodes = 1, .workers = 1});
  auto one = app.threads<Counter>("one", 1);  // split, leaves and merge all on one DPS thread
  auto graph = app.graph(op<Pieces<Counter>>(one) >> op<AddRange<Counter>>(one) >> op<SumPartials<Counter>>(one));
  auto f = graph.call(Range{0, 100});
  ASSERT_TRUE(f.wait_for(std::chrono::seconds(20))) << "the merge waiting for input blocked its thread";
  EXPECT_EQ(f.get().sum, triangle(100));
}

}  // namespace
}  // namespace dps::test
