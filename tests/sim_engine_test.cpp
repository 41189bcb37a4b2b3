// The simulator's engine against exact analytic cases: transfer times, bandwidth sharing (equal and
// max-min), cores shared by steps, node speed, and the CPU that transfers take from steps.
#include <dps/sim/engine.hpp>

#include <gtest/gtest.h>

#include <map>

namespace dps::sim {
namespace {

constexpr double kLatency = 1e-4;      // s
constexpr double kBandwidth = 1.25e8;  // bytes/s
constexpr double kTolerance = 1e-9;    // relative

ClusterModel star(std::size_t nodes, Sharing sharing = Sharing::Equal) {
  ClusterModel m;
  m.groups = {NodeGroup{"nodes", nodes, 1, 1.0}};
  m.network.latency = kLatency;
  m.network.bandwidth = kBandwidth;
  m.network.sharing = sharing;
  return m;
}

// Records when each tagged action ended.
struct Clock final : Listener {
  explicit Clock(Engine& e) : engine(e) {}
  void finished(std::uint64_t tag) override { ended[tag] = engine.now(); }
  Engine& engine;
  std::map<std::uint64_t, double> ended;
};

void expect_near_relative(double got, double want) { EXPECT_NEAR(got, want, want * kTolerance) << "want " << want; }

TEST(SimEngine, OneTransferTakesLatencyPlusSizeOverBandwidth) {
  Engine engine(star(2));
  Clock clock(engine);
  const double s = 1e6;
  engine.transfer(0, 1, s, {&clock, 1});
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(1), kLatency + s / kBandwidth);
}

TEST(SimEngine, TwoTransfersIntoOneNodeShareItsBandwidthEqually) {
  Engine engine(star(3));
  Clock clock(engine);
  const double s = 1e6;
  engine.transfer(0, 2, s, {&clock, 1});
  engine.transfer(1, 2, s, {&clock, 2});
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(1), kLatency + s / (kBandwidth / 2));
  expect_near_relative(clock.ended.at(2), kLatency + s / (kBandwidth / 2));
}

// Flow A: 0 -> 1; B: 0 -> 2; C: 3 -> 2; D: 4 -> 2. Node 2's incoming link is shared by three flows
// (b/3 each); node 0's outgoing link by two. Under `equal` A gets b/2 (its share of node 0's link)
// and node 0's link stays partly idle; under max-min B is held to b/3 by node 2, so A gets the rest
// of node 0's link, 2b/3. B, C and D take s / (b/3) under both.
double finish_of_a(Sharing sharing, double& finish_of_b) {
  Engine engine(star(5, sharing));
  Clock clock(engine);
  const double s = 1e6;
  engine.transfer(0, 1, s, {&clock, 'A'});
  engine.transfer(0, 2, s, {&clock, 'B'});
  engine.transfer(3, 2, s, {&clock, 'C'});
  engine.transfer(4, 2, s, {&clock, 'D'});
  while (engine.step()) {}
  finish_of_b = clock.ended.at('B');
  EXPECT_EQ(clock.ended.at('C'), clock.ended.at('B'));
  EXPECT_EQ(clock.ended.at('D'), clock.ended.at('B'));
  return clock.ended.at('A');
}

TEST(SimEngine, EqualAndMaxMinSharingDifferWhereEqualLeavesBandwidthIdle) {
  const double s = 1e6, b = kBandwidth;
  double b_equal = 0, b_maxmin = 0;
  const double a_equal = finish_of_a(Sharing::Equal, b_equal);
  const double a_maxmin = finish_of_a(Sharing::MaxMin, b_maxmin);
  expect_near_relative(a_equal, kLatency + s / (b / 2));
  expect_near_relative(a_maxmin, kLatency + s / (2 * b / 3));
  expect_near_relative(b_equal, kLatency + s / (b / 3));
  expect_near_relative(b_maxmin, kLatency + s / (b / 3));
}

TEST(SimEngine, ThreeStepsShareOneCore) {
  Engine engine(star(1));
  Clock clock(engine);
  engine.compute(0, 1.0, {&clock, 1});
  engine.compute(0, 2.0, {&clock, 2});
  engine.compute(0, 3.0, {&clock, 3});
  while (engine.step()) {}
  // A third of the core each until the first ends at 3; half each until the second ends at 3 + 2;
  // the last has 1 left alone.
  expect_near_relative(clock.ended.at(1), 3.0);
  expect_near_relative(clock.ended.at(2), 5.0);
  expect_near_relative(clock.ended.at(3), 6.0);
}

TEST(SimEngine, StepsOnTwoCoresRunSideBySideThenShare) {
  ClusterModel m = star(1);
  m.groups[0].cores = 2;
  Engine engine(m);
  Clock clock(engine);
  engine.compute(0, 1.0, {&clock, 1});
  engine.compute(0, 1.0, {&clock, 2});
  engine.compute(0, 1.0, {&clock, 3});
  while (engine.step()) {}
  // 2 cores for 3 steps: 2/3 of a core each; all end at 1.5.
  for (int tag : {1, 2, 3}) expect_near_relative(clock.ended.at(tag), 1.5);
}

TEST(SimEngine, AHeterogeneousNodeRunsAStepAtHalfSpeed) {
  ClusterModel m = star(1);
  m.groups = {NodeGroup{"fast", 1, 1, 1.0}, NodeGroup{"slow", 1, 1, 0.5}};
  Engine engine(m);
  Clock clock(engine);
  engine.compute(0, 1.0, {&clock, 0});
  engine.compute(1, 1.0, {&clock, 1});
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(0), 1.0);
  expect_near_relative(clock.ended.at(1), 2.0);
}

TEST(SimEngine, CommunicationCpuLengthensAConcurrentStep) {
  ClusterModel m = star(2);
  m.network.cpu_per_send = 0.5;
  Engine engine(m);
  Clock clock(engine);
  const double s = 2.5e7;  // T = l + s/b = 0.2001 s, while the step runs at half speed
  engine.compute(0, 1.0, {&clock, 1});
  engine.transfer(0, 1, s, {&clock, 2});
  while (engine.step()) {}
  const double t = kLatency + s / kBandwidth;
  expect_near_relative(clock.ended.at(2), t);
  expect_near_relative(clock.ended.at(1), t + (1.0 - 0.5 * t));  // 0.5 t of work done during the transfer
}

TEST(SimEngine, SameInputsSameEventsAtTheSameTimes) {
  auto run = [] {
    Engine engine(star(4, Sharing::MaxMin));
    Clock clock(engine);
    for (std::uint64_t i = 0; i < 40; ++i) {
      const auto from = static_cast<VNode>(i % 4), to = static_cast<VNode>((i + 1 + i % 3) % 4);
      engine.transfer(from, to, 1e5 * static_cast<double>(1 + i % 7), {&clock, i});
      engine.compute(static_cast<VNode>(i % 4), 1e-3 * static_cast<double>(1 + i % 5), {&clock, 100 + i});
    }
    std::vector<std::pair<double, std::uint64_t>> order;
    while (engine.step()) {}
    for (auto [tag, t] : clock.ended) order.emplace_back(t, tag);
    return order;
  };
  EXPECT_EQ(run(), run());
}

TEST(SimEngine, UsageIntegratesBusyCoresAndLinks) {
  Engine engine(star(2));
  Clock clock(engine);
  engine.compute(0, 1.0, {&clock, 1});
  engine.transfer(0, 1, 1.25e8, {&clock, 2});  // 1 s of bandwidth after the latency
  while (engine.step()) {}
  const double end = engine.now();
  expect_near_relative(engine.usage().at(0, Usage::StepCores).total(end), 1.0);
  expect_near_relative(engine.usage().at(0, Usage::LinkOut).total(end), 1.0);
  expect_near_relative(engine.usage().at(1, Usage::LinkIn).total(end), 1.0);
  EXPECT_EQ(engine.usage().at(1, Usage::StepCores).total(end), 0.0);
}

}  // namespace
}  // namespace dps::sim
