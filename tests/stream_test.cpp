// A stream closes one frame and opens another, posting outputs as soon as it wants: downstream
// operations run on them before the stream has received all of its inputs.
#include "support.hpp"

#include <gtest/gtest.h>

#include <mutex>
#include <string>
#include <vector>

namespace dps::test {
namespace {

std::mutex log_mu;
std::vector<std::string> events;
void note(std::string e) {
  std::lock_guard lock(log_mu);
  events.push_back(std::move(e));
}
std::ptrdiff_t position(const std::string& e) {
  std::lock_guard lock(log_mu);
  auto it = std::find(events.begin(), events.end(), e);
  return it == events.end() ? -1 : it - events.begin();
}

struct Ones : Split<Range, Range> {  // n objects {i, i+1}
  Step execute(Range r) {
    for (long i = r.first; i < r.last; ++i) co_await post(Range{i, i + 1});
  }
};
struct Same : Leaf<Range, Range> {
  Range execute(const Range& r) { return r; }
};
// One output per input, posted at once.
struct Relay : Stream<Range, Range> {
  Step execute(Range r) {
    for (std::optional<Range> in = r; in; in = co_await next()) {
      note("stream in " + std::to_string(in->first));
      co_await post(*in);
    }
  }
};
struct Seen : Leaf<Range, Partial> {
  Partial execute(const Range& r) {
    note("downstream " + std::to_string(r.first));
    return {r.first, 1};
  }
};

TEST(Stream, OutputsLeaveBeforeAllInputsArrived) {
  {
    std::lock_guard lock(log_mu);
    events.clear();
  }
  Application app(ApplicationOptions{.nodes = 2, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 3);
  // Windows of one: the split waits for the stream to take each input, the stream waits for the
  // merge to take each output. Pipelining makes progress; holding outputs back would not.
  auto graph = app.graph(op<Ones>(master).window(1) >> op<Same>(workers) >> op<Relay>(master).window(1) >>
                         op<Seen>(workers) >> op<SumPartials<>>(master));
  auto f = graph.call(Range{0, 10});
  ASSERT_TRUE(f.wait_for(std::chrono::seconds(20)));
  const Partial p = f.get();
  EXPECT_EQ(p.count, 10);
  EXPECT_EQ(p.sum, triangle(10));
  const auto first_out = position("downstream 0");
  const auto third_in = position("stream in 2");
  ASSERT_GE(first_out, 0);
  ASSERT_GE(third_in, 0);
  EXPECT_LT(first_out, third_in) << "the first output was processed downstream before the stream's third input";
  EXPECT_LT(position("downstream 0"), position("stream in 9"));
}

// Groups of three inputs become one output: the stream decides when an output is ready.
struct Triples : Stream<Range, Partial> {
  Step execute(Range r) {
    Partial group{r.first, 1};
    while (auto in = co_await next()) {
      if (group.count == 3) {
        co_await post(group);
        group = {0, 0};
      }
      group.sum += in->first;
      ++group.count;
    }
    co_await post(group);
  }
};
struct Keep : Leaf<Partial, Partial> {
  Partial execute(const Partial& p) { return {p.sum, 1}; }  // count outputs, not inputs
};

TEST(Stream, ClosesOneFrameAndOpensAnother) {
  Application app(ApplicationOptions{.nodes = 2, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 2);
  auto graph = app.graph(op<Ones>(master) >> op<Same>(workers) >> op<Triples>(workers) >> op<Keep>(workers) >>
                         op<SumPartials<>>(master));
  for (long n : {1L, 3L, 4L, 30L, 31L}) {
    const Partial p = graph.call(Range{0, n}).get();
    EXPECT_EQ(p.sum, triangle(n)) << n;
    EXPECT_EQ(p.count, (n + 2) / 3) << "one output per group of three, n = " << n;
  }
}

}  // namespace
}  // namespace dps::test
