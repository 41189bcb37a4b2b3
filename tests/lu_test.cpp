// Block LU (apps/lu) against LAPACK's dgetrf on the same matrix: the same row interchanges and the
// same factors, for every variant, on real threads (every node in this process) and in the simulator
// (direct execution), with multiplication threads removed and added between iterations; a singular
// matrix reported with its zero pivot; partial direct execution without data runs the same graph and
// charges the copies that make messages; the kernel model file.
#include <dps/dps.hpp>
#include <dps/sim/sim_backend.hpp>

#include "kernel_model.hpp"
#include "lu.hpp"
#include "scratch.hpp"

#include <gtest/gtest.h>
#include <lapacke.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace {

using lu::Options;

// Real: three nodes in this process, each a TBB arena. Simulated: three single-core virtual nodes.
std::unique_ptr<dps::Application> application(bool simulated, dps::sim::SimOptions options = {.nodes = 3}) {
  if (!simulated) return std::make_unique<dps::Application>(dps::ApplicationOptions{.nodes = 3});
  dps::sim::ClusterModel model;
  model.groups = {dps::sim::NodeGroup{"nodes", options.nodes, 1, 1.0}};
  model.network.latency = 5e-5;
  model.network.bandwidth = 1e9;
  return std::make_unique<dps::Application>(std::make_unique<dps::sim::SimBackend>(model, options));
}

// The owner variant's prediction for n = 256, r = 32 on 2 nodes, charging these kernel times.
double owner_predicted(lu::KernelTimes t) {
  auto app = application(true, {.pdexec = true, .noalloc = true, .nodes = 2});
  lu::set_kernels(lu::Kernels(t));
  return lu::run(*app, Options{.n = 256, .r = 32, .variant = lu::Variant::Owner, .check = false}.resolved(app->nodes()))
      .seconds;
}

// dgetrf's factors and pivots of the matrix `o` describes.
lu::Factored lapack(const Options& o) {
  lu::Factored f{o.n, dps::LargeArray<double>(static_cast<std::size_t>(o.n) * o.n), dps::LargeArray<int>(o.n)};
  for (int j = 0; j < o.n; ++j)
    for (int i = 0; i < o.n; ++i) f.lu[static_cast<std::size_t>(j) * o.n + i] = lu::entry(o.seed, o.matrix, o.n, i, j);
  EXPECT_EQ(LAPACKE_dgetrf(LAPACK_COL_MAJOR, o.n, o.n, f.lu.data(), o.n, f.pivots.data()), 0);
  return f;
}

void expect_lapacks_factors(const lu::Result& result, const Options& o) {
  ASSERT_TRUE(result.residual.has_value());
  EXPECT_LT(*result.residual, 10.0);
  ASSERT_TRUE(result.factors.has_value());
  const lu::Factored expected = lapack(o);
  const lu::Factored& got = *result.factors;
  for (int i = 0; i < o.n; ++i) ASSERT_EQ(got.pivots[i], expected.pivots[i]) << "row interchange " << i;
  double worst = 0;
  for (std::size_t k = 0; k < got.lu.size(); ++k) worst = std::max(worst, std::fabs(got.lu[k] - expected.lu[k]));
  EXPECT_LT(worst, 1e-10) << "the largest difference from dgetrf's factors";
}

struct Variant {
  lu::Variant variant;
  int window = 0, sub_block = 0;
};
constexpr Variant kVariants[] = {{lu::Variant::Basic},         {lu::Variant::Basic, 0, 8},   {lu::Variant::Pipelined},
                                 {lu::Variant::Pipelined, 3},  {lu::Variant::Pipelined, 3, 16}, {lu::Variant::Owner},
                                 {lu::Variant::Owner, 2}};

class LuAgainstLapack : public ::testing::TestWithParam<bool> {};  // simulated or not

TEST_P(LuAgainstLapack, EveryVariantGivesDgetrfsFactors) {
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(std::string(lu::name(v.variant)) + ", window " + std::to_string(v.window) + ", sub-block " +
                 std::to_string(v.sub_block));
    auto app = application(GetParam());
    const Options o =
        Options{.n = 192, .r = 32, .variant = v.variant, .window = v.window, .sub_block = v.sub_block, .keep_factors = true}
            .resolved(app->nodes());
    expect_lapacks_factors(lu::run(*app, o), o);
  }
}

TEST_P(LuAgainstLapack, ThreadsRemovedAndAddedBetweenIterationsChangeNothingInTheFactors) {
  // Sub-blocks spread each product over all the multipliers, as many as there are at the time.
  for (const Variant& v : {Variant{lu::Variant::Basic}, Variant{lu::Variant::Pipelined},
                           Variant{lu::Variant::Pipelined, 0, 8}, Variant{lu::Variant::Owner}}) {
    SCOPED_TRACE(std::string(lu::name(v.variant)) + ", sub-block " + std::to_string(v.sub_block));
    auto app = application(GetParam());
    Options o{.n = 192, .r = 32, .variant = v.variant, .sub_block = v.sub_block, .multipliers = 3, .keep_factors = true};
    o.changes = {{2, -2}, {4, +2}};  // three multipliers, one after iteration 2, three after iteration 4
    o = o.resolved(app->nodes());
    const lu::Result result = lu::run(*app, o);
    EXPECT_EQ(result.multipliers, 3u);
    expect_lapacks_factors(result, o);
  }
}

TEST_P(LuAgainstLapack, ASingularMatrixIsReportedWithItsZeroPivot) {
  for (const auto& [kind, pivot] : {std::pair{lu::MatrixKind::ZeroColumn, "U(97,97)"}, {lu::MatrixKind::ZeroRow, "U(192,192)"}}) {
    auto app = application(GetParam());
    const Options o = Options{.n = 192, .r = 32, .matrix = kind}.resolved(app->nodes());
    try {
      lu::run(*app, o);
      ADD_FAILURE() << "a singular matrix was factored";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("the matrix is singular: ") + pivot + " is exactly zero"),
                std::string::npos)
          << e.what();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(RealAndSimulated, LuAgainstLapack, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Simulated" : "Real"; });

// Under fault tolerance, a node killed mid-run loses threads whose outputs depend on the order their
// inputs came in (the owner variant's panel shares post as the stripes report ready; a column's
// Distribute copies L21 once its Factor ended, which the Solveds it then receives depend on).
// Rebuilt, they hand their operations again what they were handed since their checkpoints, the ends
// of their streams' inputs included, in the order they first did as far as the survivors know it
// (docs/fault-tolerance.md): dgetrf's factors, whichever of nodes 1 to 3 is killed at six moments.
TEST(LuSimulated, ANodeKilledMidRunUnderFaultToleranceChangesNothingInTheFactors) {
  for (const lu::Variant variant : {lu::Variant::Basic, lu::Variant::Pipelined, lu::Variant::Owner}) {
    const auto run = [&](std::vector<dps::sim::SimOptions::Failure> failures, double checkpoint_every) {
      auto app = application(true, {.nodes = 4, .failures = std::move(failures)});
      app->runtime().fault_tolerance(checkpoint_every);
      const Options o = Options{.n = 256, .r = 32, .variant = variant, .keep_factors = true}.resolved(app->nodes());
      lu::Result result = lu::run(*app, o);
      return std::tuple{std::move(result), o, app->now()};
    };
    const double end = std::get<2>(run({}, 1.0));
    for (dps::NodeId node = 1; node < 4; ++node)
      for (int k = 1; k <= 6; ++k) {
        const double at = end * k / 8;
        SCOPED_TRACE(std::string(lu::name(variant)) + ": node " + std::to_string(node) + " killed at " +
                     std::to_string(at) + " s of " + std::to_string(end));
        const auto [result, o, ended] = run({{node, at}}, end / 12);
        expect_lapacks_factors(result, o);
      }
  }
}

// Partial direct execution without data (Schaeli, Gerlach & Hersch, "A simulator for adaptive parallel applications",
// §7): the kernels are charged, not run, and no matrix is allocated, yet the same graph runs: as many operation steps
// as with the data.
TEST(LuSimulated, PartialDirectExecutionWithoutDataRunsTheSameGraph) {
  const auto steps = [](dps::sim::SimOptions options) {
    auto app = application(true, options);
    dps::MemoryTrace trace;
    app->trace_to(&trace);
    lu::set_kernels(lu::Kernels::measure(32));
    // The direct run skips its check, which the partial direct run skips by itself: nothing to check.
    const lu::Result result = lu::run(*app, Options{.n = 256, .r = 32, .check = options.pdexec}.resolved(app->nodes()));
    EXPECT_GT(result.seconds, 0);
    EXPECT_FALSE(result.residual.has_value());
    app->trace_to(nullptr);
    return trace.steps().size();
  };
  const std::size_t direct = steps({.nodes = 3});
  EXPECT_EQ(steps({.pdexec = true, .noalloc = true, .nodes = 3}), direct);
  lu::set_kernels(lu::Kernels(lu::KernelTimes{}));
}

// Copies that make messages are charged too (Schaeli et al., §4: memory operations "explicitly added"):
// with every other kernel free, making each copy 10 ms dearer lengthens the prediction by at least
// one copy, the panel's on the critical path.
TEST(LuSimulated, PartialDirectExecutionChargesTheCopiesThatMakeMessages) {
  const auto predicted = [](double copy) {
    auto app = application(true, {.pdexec = true, .noalloc = true, .nodes = 3});
    lu::set_kernels(lu::Kernels(lu::KernelTimes{.r = 32, .copy = copy}));
    return lu::run(*app, Options{.n = 256, .r = 32, .check = false}.resolved(app->nodes())).seconds;
  };
  const double free_copies = predicted(0);
  EXPECT_GE(predicted(0.01), free_copies + 0.01);
  lu::set_kernels(lu::Kernels(lu::KernelTimes{}));
}

// The kernel model reads back what it wrote; a file from before copies were charged charges none.
TEST(LuKernelModel, ReadsBackWhatItWroteAndAFileWithoutCopiesChargesNone) {
  lu::KernelModel model;
  model.sizes = {16, 32};
  model.multiply = {1e-6, 2e-10, 3};
  model.copy = {0, 4e-10, 2};
  const dps::test::Scratch scratch;  // a folder of its own: runs side by side do not share the file
  const std::string path = (scratch.dir / "lu_kernels.json").string();
  model.save(path);
  const lu::KernelModel back = lu::KernelModel::load(path);
  EXPECT_DOUBLE_EQ(back.at(32).multiply, model.at(32).multiply);
  EXPECT_DOUBLE_EQ(back.at(32).copy, 4e-10 * 32 * 32);

  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  j.erase("copy");
  std::ofstream(path) << j.dump();
  EXPECT_EQ(lu::KernelModel::load(path).at(32).copy, 0.0);
  EXPECT_DOUBLE_EQ(lu::KernelModel::load(path).at(32).multiply, model.at(32).multiply);
}

// The owner variant's update is measured on the application's layout and charged as such; where and
// when the kernels were measured travels with them; a file without an update charges it as multiply.
TEST(LuKernelModel, TheUpdateIsMeasuredOnTheMatrixLayoutAndChargedAsSuch) {
  const lu::KernelModel measured = lu::KernelModel::measure({16, 32}, 128);
  EXPECT_EQ(measured.n, 128);
  EXPECT_GT(measured.at(32).update, 0.0);
  EXPECT_FALSE(measured.measured_on.empty());
  EXPECT_EQ(measured.measured_at.size(), 24u) << measured.measured_at;
  EXPECT_EQ(lu::KernelModel::measure({16, 32}).at(32).update, 0.0) << "no matrix order, no update measured";

  lu::KernelModel model;
  model.sizes = {16, 32};
  model.multiply = {0, 2e-10, 3};
  model.update = {0, 6e-10, 3};
  model.n = 256;
  model.measured_on = "n1";
  model.measured_at = "2026-11-26T18:01:08+0000";
  const dps::test::Scratch scratch;  // a folder of its own: runs side by side do not share the file
  const std::string path = (scratch.dir / "lu_kernels_update.json").string();
  model.save(path);
  const lu::KernelModel back = lu::KernelModel::load(path);
  EXPECT_DOUBLE_EQ(back.at(32).update, 6e-10 * 32 * 32 * 32);
  EXPECT_EQ(back.n, 256);
  EXPECT_EQ(back.measured_on, "n1");
  EXPECT_EQ(back.measured_at, model.measured_at);

  // Charged: the owner variant's updates cost what the update says (with every other kernel free, 10 ms
  // dearer lengthens the prediction by at least one); a file without an update charges multiply's.
  const double free = owner_predicted({.r = 32});
  EXPECT_GE(owner_predicted({.r = 32, .update = 0.01}), free + 0.01);
  EXPECT_GE(owner_predicted({.r = 32, .multiply = 0.01}), free + 0.01) << "no update measured: charged as multiply";
  EXPECT_LT(owner_predicted({.r = 32, .multiply = 0.01, .update = 1e-9}), free + 0.001) << "measured: multiply's is not charged";
  lu::set_kernels(lu::Kernels(lu::KernelTimes{}));
}

// The row interchanges are measured on the matrix's layout in two parts: r pivots on r columns from
// memory (`swap`), and each further pivot on the same columns (`swap_more`), which the owner variant's
// deferred interchanges (n - r pivots on a block at once) pay. A file without the second charges
// every pivot as the first r.
TEST(LuKernelModel, TheSwapsBeyondTheFirstRPivotsOnABlockAreChargedApart) {
  const lu::KernelModel measured = lu::KernelModel::measure({32}, 512);
  EXPECT_GT(measured.at(32).swap, 0.0);
  EXPECT_GT(measured.at(32).swap_more, 0.0);
  EXPECT_EQ(lu::KernelModel::measure({32}).at(32).swap_more, 0.0) << "no matrix order, no second part";

  lu::KernelModel model;
  model.sizes = {16, 32};
  model.swap = {0, 1e-8, 2};
  model.swap_more = {0, 3e-9, 1};
  const dps::test::Scratch scratch;  // a folder of its own: runs side by side do not share the file
  const std::string path = (scratch.dir / "lu_kernels_swap.json").string();
  model.save(path);
  EXPECT_DOUBLE_EQ(lu::KernelModel::load(path).at(32).swap_more, 3e-9 * 32);
  std::ifstream in(path);
  nlohmann::json j = nlohmann::json::parse(in);
  j.erase("swap_more");
  std::ofstream(path) << j.dump();
  EXPECT_EQ(lu::KernelModel::load(path).at(32).swap_more, 0.0);

  // Charged, every other kernel free: the deferred interchanges of n = 256, r = 32 on 2 stripes
  // end the run, node 0's first block taking 7 × 32 pivots at once; each beyond the first 32 costs
  // swap_more, the first 32 on r columns swap's.
  const double free = owner_predicted({.r = 32});
  EXPECT_GE(owner_predicted({.r = 32, .swap_more = 0.001}), free + 6 * 32 * 0.001 - 1e-9) << "the first block's 6 x 32 further pivots";
  const double unmeasured = owner_predicted({.r = 32, .swap = 0.01});
  EXPECT_GE(unmeasured, free + 7 * 0.01) << "the first block's deferred interchanges, every pivot at swap's";
  EXPECT_LT(owner_predicted({.r = 32, .swap = 0.01, .swap_more = 1e-9}), unmeasured - 5 * 0.01)
      << "measured: the further pivots are not charged at swap's";
  lu::set_kernels(lu::Kernels(lu::KernelTimes{}));
}

}  // namespace
