// Allocation strategies (seed 002): Paging takes the lowest-numbered idle nodes, Random a seeded
// sample, MC the cheapest rectangle-and-shells around an idle node; the cluster simulation places
// jobs with them.
#include <dps/cluster/allocation.hpp>
#include <dps/cluster/backfilling.hpp>
#include <dps/cluster/contention.hpp>
#include <dps/cluster/simulation.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>

namespace dps::cluster {
namespace {

using sim::Mesh;

std::vector<Node> sorted(std::vector<Node> v) {
  std::sort(v.begin(), v.end());
  return v;
}

TEST(Allocation, PagingTakesTheLowestNumberedIdleNodes) {
  std::vector<bool> idle(16, true);
  idle[1] = false;
  Paging paging;
  EXPECT_EQ(paging.place(idle, 4, {}), (std::vector<Node>{0, 2, 3, 4}));
  EXPECT_THROW(paging.place(std::vector<bool>(3, true), 4, {}), std::logic_error);
}

TEST(Allocation, RandomTakesDistinctIdleNodesTheSameForTheSameSeed) {
  std::vector<bool> idle(64, true);
  for (Node n = 0; n < 64; n += 3) idle[n] = false;
  RandomAllocation a(7), b(7), c(8);
  const auto x = a.place(idle, 10, {}), y = b.place(idle, 10, {}), z = c.place(idle, 10, {});
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
  EXPECT_EQ(std::set<Node>(x.begin(), x.end()).size(), 10u);
  for (const Node n : x) EXPECT_TRUE(idle[n]);
}

// MC on a 4×4 mesh, a request of 4 (a 2×2 rectangle). Around (0, 0) the rectangle reaches out of the
// mesh: shell 0 holds (0, 0) only; shell 1 adds (0, 1), (1, 0), (1, 1): cost 3. Around (1, 1) the
// rectangle is whole: cost 0, which MC takes; with node 5 = (1, 1) busy, the first whole idle 2×2 is
// around (3, 1).
// MBS on an idle 8×8 mesh: 6 = 4 + 1 + 1, the 2×2 block in the corner, then two nodes of the next 2×2
// block, split once: its second node is taken from the block already split.
TEST(Allocation, MultipleBuddySplitsARequestIntoBaseFourBlocks) {
  const sim::Mesh mesh(8, 8);
  MultipleBuddy mbs(mesh);
  EXPECT_EQ(mbs.place(std::vector<bool>(64, true), 6, {}), (std::vector<Node>{0, 1, 8, 9, 2, 3}));
  // A size with no idle block passes its request down: on a checkerboard no 2×2 block is idle.
  std::vector<bool> checkerboard(16);
  for (Node n = 0; n < 16; ++n) checkerboard[n] = (n % 4 + n / 4) % 2 == 0;
  MultipleBuddy small(sim::Mesh(4, 4));
  EXPECT_EQ(small.place(checkerboard, 4, {}), (std::vector<Node>{0, 2, 5, 7}));
  // Blocks already split go first: with node 0 busy, a 1-node request takes node 1, not a whole block.
  std::vector<bool> one_busy(64, true);
  one_busy[0] = false;
  EXPECT_EQ(mbs.place(one_busy, 1, {}), (std::vector<Node>{1}));
  EXPECT_EQ(mbs.place(one_busy, 4, {}), (std::vector<Node>{2, 3, 10, 11}));
}

// MC Elongated fills whole columns: a job of 8 on an idle 8×4 mesh gets two full columns, where MC
// takes a 3×3 square less one.
TEST(Allocation, MinimizeContentionElongatedTakesFullColumns) {
  const sim::Mesh mesh(8, 4);
  MinimizeContention elongated(mesh, MinimizeContention::Shape::Columns), mc(mesh);
  EXPECT_EQ(elongated.name(), "mc-elongated");
  const std::vector<bool> idle(32, true);
  EXPECT_EQ(sorted(elongated.place(idle, 8, {})), (std::vector<Node>{0, 1, 8, 9, 16, 17, 24, 25}));
  const Dispersal square = dispersal(mesh, mc.place(idle, 8, {}));
  EXPECT_EQ(square.nodes_affected, 9u);
  // Smaller than a column: one column, MC's order inside it.
  const std::vector<Node> two = elongated.place(idle, 2, {});
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(mesh.at(two[0]).x, mesh.at(two[1]).x);
}

TEST(Allocation, MinimizeContentionTakesTheCheapestRectangleAndShells) {
  const Mesh mesh(4, 4);
  MinimizeContention mc(mesh);
  EXPECT_EQ(MinimizeContention::shape(4), (std::pair{2, 2}));
  EXPECT_EQ(MinimizeContention::shape(3), (std::pair{2, 2}));
  EXPECT_EQ(MinimizeContention::shape(6), (std::pair{3, 2}));
  std::vector<bool> idle(16, true);
  const auto [corner, cost] = mc.around(idle, 4, mesh.node({0, 0}), 2, 2);
  EXPECT_EQ(cost, 3u);
  EXPECT_EQ(sorted(corner), (std::vector<Node>{0, 1, 4, 5}));
  EXPECT_EQ(sorted(mc.place(idle, 4, {})), (std::vector<Node>{0, 1, 4, 5}));
  idle[5] = false;
  EXPECT_EQ(sorted(mc.place(idle, 4, {})), (std::vector<Node>{2, 3, 6, 7}));
  // Nothing whole left: the cheapest scattered choice, still 4 idle nodes.
  std::vector<bool> sparse(16, false);
  for (const Node n : {0, 2, 8, 10, 15}) sparse[n] = true;
  const auto scattered = mc.place(sparse, 4, {});
  ASSERT_EQ(scattered.size(), 4u);
  for (const Node n : scattered) EXPECT_TRUE(sparse[n]);
  EXPECT_THROW(mc.place(std::vector<bool>(9, true), 4, {}), std::invalid_argument) << "a cluster that is not its mesh";
}

// Two 4-node jobs on a 4×4 mesh: MC gives each a 2×2 block, Paging a row of 4.
// Two rigid jobs of 4 nodes at once on 16.
Workload two_jobs_of_four() {
  return {.jobs = {Job{.id = 1, .kind = JobKind::Rigid, .submit = 0, .size = 4, .walltime = 10, .runtime = 10},
                   Job{.id = 2, .kind = JobKind::Rigid, .submit = 0, .size = 4, .walltime = 10, .runtime = 10}},
          .nodes = 16,
          .classes = {{"normal", 0}}};
}

TEST(Allocation, TheClusterSimulationPlacesJobsWithTheAllocator) {
  const Mesh mesh(4, 4);
  const Workload w = two_jobs_of_four();
  auto placed = [&](Allocator* allocator) {
    EasyBackfilling easy;
    Simulation simulation(w, easy, {.gantt = true, .allocator = allocator});
    simulation.run();
    std::map<std::uint64_t, std::vector<Node>> nodes;
    for (const Segment& s : simulation.gantt()) nodes[s.job->id].push_back(s.node);
    return nodes;
  };
  MinimizeContention mc(mesh);
  Paging paging;
  const auto by_mc = placed(&mc), by_paging = placed(&paging);
  EXPECT_EQ(sorted(by_mc.at(1)), (std::vector<Node>{0, 1, 4, 5}));
  EXPECT_EQ(sorted(by_mc.at(2)), (std::vector<Node>{2, 3, 6, 7}));
  EXPECT_EQ(sorted(by_paging.at(1)), (std::vector<Node>{0, 1, 2, 3}));
  EXPECT_LT(dispersal(mesh, by_mc.at(2)).average_distance, dispersal(mesh, by_paging.at(2)).average_distance);
  EXPECT_EQ(placed(nullptr), by_paging) << "the default is paging";
}

// Given the mesh, the results hold each job's dispersal at its start and their means: two 2×2 blocks
// (MC) against two rows of 4 (paging).
TEST(Allocation, TheResultsHoldTheJobsDispersalOnTheMesh) {
  const Mesh mesh(4, 4);
  const Workload w = two_jobs_of_four();
  EasyBackfilling easy;
  MinimizeContention mc(mesh);
  Paging paging;
  const Results square = Simulation(w, easy, {.allocator = &mc, .mesh = &mesh}).run();
  const Results rows = Simulation(w, easy, {.allocator = &paging, .mesh = &mesh}).run();
  ASSERT_TRUE(square.on_mesh);
  EXPECT_EQ(square.jobs[0].placed.nodes_affected, 4u);
  EXPECT_DOUBLE_EQ(square.mean_average_distance, 16.0 / 12);  // a 2×2 block: 8 ordered pairs at 1, 4 at 2
  EXPECT_DOUBLE_EQ(rows.mean_average_distance, 20.0 / 12);   // a row of 4: Σ over ordered pairs 20
  EXPECT_DOUBLE_EQ(square.mean_links_affected, 4);
  EXPECT_NE(square.json().find("\"dispersal\": {\"average_distance\": 1.3333"), std::string::npos) << square.json();
  EXPECT_FALSE(Simulation(w, easy, {}).run().on_mesh);
  EXPECT_EQ(Simulation(w, easy, {}).run().json().find("dispersal"), std::string::npos);
}

}  // namespace
}  // namespace dps::cluster
