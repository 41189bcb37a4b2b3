// The stencil (apps/stencil) against a serial Jacobi, bit for bit: 1 to 8 block threads, strips and
// blocks, equal and speed partitions, a job grown and shrunk 2 -> 5 -> 3 -> 8 -> 1 and one resized by
// ReSHAPE's rule, on in-process nodes and in the simulator (direct execution); partial direct
// execution without data runs the same iterations; ReSHAPE's rule itself; options that cannot run.
#include <dps/dps.hpp>
#include <dps/resize_policy.hpp>
#include <dps/sim/sim_backend.hpp>

#include "stencil.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace {

using stencil::Decomposition;
using stencil::Options;
using stencil::Partition;

constexpr long kN = 37;  // 35 interior rows: not a multiple of any thread count here

// Real: three nodes in this process. Simulated: three 3-core virtual nodes of speeds 1, 2 and 0.5.
std::unique_ptr<dps::Application> application(bool simulated, dps::sim::SimOptions options = {.nodes = 3}) {
  if (!simulated) return std::make_unique<dps::Application>(dps::ApplicationOptions{.nodes = 3});
  dps::sim::ClusterModel model;
  model.groups = {dps::sim::NodeGroup{"one", 1, 3, 1.0}, dps::sim::NodeGroup{"two", 1, 3, 2.0},
                  dps::sim::NodeGroup{"half", 8, 3, 0.5}};
  model.network.latency = 5e-5;
  model.network.bandwidth = 1e9;
  return std::make_unique<dps::Application>(std::make_unique<dps::sim::SimBackend>(model, options));
}

void expect_serial_grid(const stencil::Result& r, long n, const std::string& what) {
  ASSERT_TRUE(r.grid.has_value()) << what;
  const std::vector<double> serial = stencil::serial_jacobi(static_cast<std::size_t>(n), r.iterations);
  ASSERT_EQ(r.grid->values.size(), serial.size()) << what;
  for (std::size_t k = 0; k < serial.size(); ++k)
    ASSERT_EQ(r.grid->values[k], serial[k]) << what << ": point (" << k / n << ", " << k % n << ")";
  stencil::Checksum sum;
  for (long i = 1; i + 1 < n; ++i)
    for (long j = 1; j + 1 < n; ++j) sum.add(serial[static_cast<std::size_t>(i * n + j)]);
  EXPECT_EQ(r.checksum, sum.value()) << what;
}

Options options(long threads, Decomposition d, Partition p) {
  Options o{.n = kN, .iterations = 7, .decomposition = d, .threads = threads, .per_node = 3, .partition = p,
            .keep_grid = true};
  if (p != Partition::Equal) o.speeds = {{0, 1.0}, {1, 2.0}, {2, 0.5}};
  if (p == Partition::Model) o.latency = 1e-4, o.bandwidth = 1e8, o.per_point = 1e-9;
  return o;
}

TEST(Stencil, MatchesSerialJacobiBitForBitOnOneToEightThreadsInProcess) {
  for (Decomposition d : {Decomposition::Strips, Decomposition::Blocks})
    for (Partition p : {Partition::Equal, Partition::Speed})
      for (long threads = 1; threads <= 8; ++threads) {
        auto app = application(false);
        const Options o = options(threads, d, p).resolved(app->nodes());
        const auto r = stencil::run(*app, o);
        expect_serial_grid(r, kN, std::string(stencil::name(d)) + ", " + stencil::name(p) + ", " + std::to_string(threads) + " threads");
        if (HasFatalFailure()) return;
        EXPECT_EQ(r.threads, static_cast<std::size_t>(threads));
      }
}

TEST(Stencil, WeissmansModelPartitionMatchesSerialJacobiBitForBit) {
  for (long threads = 1; threads <= 8; ++threads) {
    auto app = application(false);
    const auto r = stencil::run(*app, options(threads, Decomposition::Strips, Partition::Model).resolved(app->nodes()));
    expect_serial_grid(r, kN, "model partition, " + std::to_string(threads) + " threads");
    if (HasFatalFailure()) return;
  }
}

TEST(Stencil, MatchesSerialJacobiBitForBitInTheSimulator) {
  for (Decomposition d : {Decomposition::Strips, Decomposition::Blocks})
    for (long threads : {1, 4, 7}) {
      auto app = application(true);
      Options o = options(threads, d, Partition::Speed);
      o.speeds.clear();  // the model's speeds
      const auto r = stencil::run(*app, o.resolved(app->nodes()));
      expect_serial_grid(r, kN, std::string(stencil::name(d)) + ", " + std::to_string(threads) + " threads, simulated");
      if (HasFatalFailure()) return;
      EXPECT_GT(r.seconds, 0);
    }
}

void grow_and_shrink(bool simulated) {
  for (Decomposition d : {Decomposition::Strips, Decomposition::Blocks}) {
    auto app = application(simulated);
    Options o = options(2, d, Partition::Equal);
    o.iterations = 11;
    o.resizes = {{1, 5}, {3, 3}, {5, 8}, {7, 1}};
    const auto r = stencil::run(*app, o.resolved(app->nodes()));
    const std::string what = std::string(stencil::name(d)) + (simulated ? ", simulated" : ", in process");
    expect_serial_grid(r, kN, what);
    ASSERT_EQ(r.resizes.size(), 4u) << what;
    EXPECT_EQ(r.resizes[2].from, 3u);
    EXPECT_EQ(r.resizes[2].to, 8u);
    EXPECT_GT(r.resizes[2].moved_bytes, 0u);
    EXPECT_EQ(r.threads, 1u);
    EXPECT_EQ(r.nodes, 1u) << what << ": the nodes no thread needs are given back";
  }
}

TEST(Stencil, GrowsAndShrinksTwoFiveThreeEightOneInProcess) { grow_and_shrink(false); }
TEST(Stencil, GrowsAndShrinksTwoFiveThreeEightOneInTheSimulator) { grow_and_shrink(true); }

TEST(Stencil, ReshapesPolicyResizesTheJobAndTheGridStaysRight) {
  auto app = application(true);
  dps::ReshapePolicy policy(dps::ReshapePolicy::Topology::Arbitrary, 6);
  Options o = options(1, Decomposition::Strips, Partition::Equal);
  o.n = 130;
  o.iterations = 12;
  o.policy = &policy;
  o.resize_every = 2;
  const auto r = stencil::run(*app, o.resolved(app->nodes()));
  expect_serial_grid(r, o.n, "policy");
  EXPECT_FALSE(r.resizes.empty());
  EXPECT_EQ(r.resizes.front().from, 1u);
  EXPECT_EQ(r.resizes.front().to, 2u);
  EXPECT_FALSE(policy.profile().empty());
}

TEST(Stencil, PartialDirectExecutionWithoutDataRunsTheSameIterations) {
  auto app = application(true, {.pdexec = true, .noalloc = true, .nodes = 3});
  stencil::set_sweep_cost({1e-8});
  Options o = options(4, Decomposition::Blocks, Partition::Equal);
  o.n = 1026;
  o.keep_grid = false;
  o.resizes = {{3, 6}};
  const auto r = stencil::run(*app, o.resolved(app->nodes()));
  stencil::set_sweep_cost({});
  EXPECT_EQ(r.iterations, 7);
  EXPECT_EQ(r.checksum, 0);  // no data
  // Seven sweeps of at least 1024² / 6 points at 10 ns each, on the critical path.
  EXPECT_GT(r.seconds, 7 * 1024.0 * 1024 / 6 * 1e-8);
  ASSERT_EQ(r.resizes.size(), 1u);
  EXPECT_GT(r.resizes[0].seconds, 0) << "its transfers took simulated time";
}

TEST(Stencil, ToleranceStopsAtTheFirstResidualBelowIt) {
  auto app = application(false);
  Options o = options(3, Decomposition::Strips, Partition::Equal);
  o.iterations = 1000;
  o.tolerance = 1.0;  // the first sweep changes the top row by 0.25 a point: √(35 · 0.0625) ≈ 1.48
  o.check_every = 1;
  const auto r = stencil::run(*app, o.resolved(app->nodes()));
  EXPECT_EQ(r.iterations, 2);
  EXPECT_LT(r.residual, 1.0);
  expect_serial_grid(r, kN, "tolerance");
}

TEST(Stencil, ReshapesRuleGrowsWhileItPaysThenKeepsTheSweetSpot) {
  dps::ReshapePolicy square(dps::ReshapePolicy::Topology::NearlySquare, 100);
  EXPECT_EQ(square.next_size(4), 6u);
  EXPECT_EQ(square.next_size(6), 9u);
  EXPECT_EQ(square.next_size(9), 12u);
  EXPECT_EQ(square.next_size(12), 16u);
  EXPECT_EQ(dps::ReshapePolicy(dps::ReshapePolicy::Topology::PowerOfTwo, 100).next_size(8), 16u);
  EXPECT_EQ(dps::ReshapePolicy(dps::ReshapePolicy::Topology::Arbitrary, 100, 10).next_size(35), 45u);

  EXPECT_EQ(square.decide({.iteration = 1, .size = 4, .iteration_seconds = 10}), 6u);
  EXPECT_EQ(square.decide({.iteration = 2, .size = 6, .iteration_seconds = 7}), 9u);    // 30 % better
  EXPECT_EQ(square.decide({.iteration = 3, .size = 9, .iteration_seconds = 6.9}), 6u);  // 1.4 %: back
  EXPECT_EQ(square.sweet_spot(), 6u);
  EXPECT_EQ(square.decide({.iteration = 4, .size = 6, .iteration_seconds = 7}), 6u);    // and stays
  dps::ReshapePolicy capped(dps::ReshapePolicy::Topology::PowerOfTwo, 8);
  EXPECT_EQ(capped.decide({.iteration = 1, .size = 8, .iteration_seconds = 1}), 8u);   // no room to grow
}

TEST(Stencil, RefusesOptionsItCannotRunWithOneLineReasons) {
  const auto reason = [](Options o, std::size_t nodes) {
    try {
      o.resolved(nodes);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_EQ(reason({.n = 5, .threads = 8}, 2),
            "at the start: 8 block threads (8 x 1) need more than the 3 interior rows of --n 5");
  EXPECT_EQ(reason({.n = 100, .iterations = 10, .resizes = {{4, 0}}}, 2), "--resize 4:0: a job needs at least one block thread");
  EXPECT_EQ(reason({.n = 100, .iterations = 10, .resizes = {{4, 99}}}, 2),
            "--resize 4:99: 99 block threads (99 x 1) need more than the 98 interior rows of --n 100");
  EXPECT_EQ(reason({.n = 100, .iterations = 10, .resizes = {{10, 2}}}, 2),
            "--resize: resize points are after iterations 1 to 9, not 10");
  EXPECT_EQ(reason({.n = 100, .iterations = 10, .speeds = {{1, 0.0}}}, 2), "--speeds: node 1 needs a positive speed");
  EXPECT_THROW(stencil::partition_named("fastest"), std::invalid_argument);
  EXPECT_THROW(stencil::decomposition_named("cubes"), std::invalid_argument);
}

}  // namespace
