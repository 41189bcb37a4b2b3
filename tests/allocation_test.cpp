// Allocation strategies (Mache, "Parallel I/O- and Communication-Sensitive Scheduling on High-Performance Parallel
// Computers"): Paging takes the lowest-numbered idle nodes, Random a seeded sample, MC the cheapest
// rectangle-and-shells around an idle node; the cluster simulation places jobs with them.
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

// A job holding the 4×4 block at (4, 4) of an 8×8 mesh grows by 4. Started afresh, MBS, MC and PLAS
// take nodes far from it (the first whole 2×2 block at (0, 0); the cheapest rectangle there; the west
// column below the middle); a growth lands next to what the job holds: MC and PLAS one hop away, MBS
// an adjacent aligned 2×2 block.
TEST(Allocation, AGrowthLandsNextToTheNodesTheJobHolds) {
  const Mesh mesh(8, 8);
  std::vector<Node> held;
  std::vector<bool> idle(mesh.size(), true);
  for (int y = 4; y < 8; ++y)
    for (int x = 4; x < 8; ++x) held.push_back(mesh.node({x, y})), idle[held.back()] = false;
  auto farthest = [&](const std::vector<Node>& nodes) {
    int far = 0;
    for (const Node n : nodes) {
      int near = static_cast<int>(mesh.size());
      for (const Node h : held) near = std::min(near, mesh.distance(n, h));
      far = std::max(far, near);
    }
    return far;
  };
  MultipleBuddy mbs(mesh);
  MinimizeContention mc(mesh), elongated(mesh, MinimizeContention::Shape::Columns);
  Plas plas(mesh);
  for (Allocator* a : std::initializer_list<Allocator*>{&mbs, &mc, &elongated, &plas}) {
    SCOPED_TRACE(a->name());
    const std::vector<Node> grown = a->place(idle, 4, held);
    ASSERT_EQ(std::set<Node>(grown.begin(), grown.end()).size(), 4u);
    for (const Node n : grown) EXPECT_TRUE(idle[n]);
    EXPECT_LE(farthest(grown), a->name() == "mbs" ? 2 : 1);
    EXPECT_GT(farthest(a->place(idle, 4, {})), 2);  // what the rule gives a job that holds nothing
  }
}

// MC on a 4×4 mesh, a request of 4 (a 2×2 rectangle). Around (0, 0) the rectangle reaches out of the
// mesh: shell 0 holds (0, 0) only; shell 1 adds (0, 1), (1, 0), (1, 1): cost 3. Around (1, 1) the
// rectangle is whole: cost 0, which MC takes; with node 5 = (1, 1) busy, the first whole idle 2×2 is
// around (3, 1).
// MBS on an idle 8×8 mesh: 6 = 4 + 1 + 1, the 2×2 block in the corner, then two nodes of the next 2×2
// block, split once: its second node is taken from the block already split.
TEST(Allocation, MultipleBuddySplitsARequestIntoBaseFourBlocks) {
  const Mesh mesh(8, 8);
  MultipleBuddy mbs(mesh);
  EXPECT_EQ(mbs.place(std::vector<bool>(64, true), 6, {}), (std::vector<Node>{0, 1, 8, 9, 2, 3}));
  // A size with no idle block passes its request down: on a checkerboard no 2×2 block is idle.
  std::vector<bool> checkerboard(16);
  for (Node n = 0; n < 16; ++n) checkerboard[n] = (n % 4 + n / 4) % 2 == 0;
  MultipleBuddy small(Mesh(4, 4));
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
  const Mesh mesh(8, 4);
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
    for (const Segment& s : simulation.gantt().segments) nodes[s.job->id].push_back(s.node);
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

namespace dps::cluster {
namespace {

// First Fit on an 8×4 mesh whose right half is busy but for a 2×2 hole at (5, 1): a 4-node request
// (2×2) goes to the first idle rectangle, (0, 0); Best Fit fills the hole, whose border is all busy.
TEST(Allocation, FirstFitTakesTheFirstRectangleBestFitTheSnuggest) {
  const Mesh mesh(8, 4);
  std::vector<bool> idle(mesh.size(), true);
  for (int y = 0; y < 4; ++y)
    for (int x = 4; x < 8; ++x) idle[mesh.node({x, y})] = (x == 5 || x == 6) && (y == 1 || y == 2);
  Contiguous first(mesh, Contiguous::Fit::First), best(mesh, Contiguous::Fit::Best);
  EXPECT_EQ(sorted(first.place(idle, 4, {})), (std::vector<Node>{0, 1, 8, 9}));
  EXPECT_EQ(sorted(best.place(idle, 4, {})), (std::vector<Node>{13, 14, 21, 22}));
  EXPECT_EQ(sorted(first.place(idle, 3, {})), (std::vector<Node>{0, 1, 8})) << "a 2x2 rectangle, its first 3 nodes row by row";
}

// A checkerboard has half its nodes idle and no idle pair side by side: a contiguous strategy cannot
// place 2, the others can; the cluster's schedulers ask before they start a job.
TEST(Allocation, ContiguousStrategiesRefuseWhatFitsNoRectangle) {
  const Mesh mesh(4, 4);
  std::vector<bool> idle(mesh.size());
  for (Node n = 0; n < idle.size(); ++n) idle[n] = (mesh.at(n).x + mesh.at(n).y) % 2 == 0;
  Contiguous first(mesh, Contiguous::Fit::First);
  Paging paging;
  EXPECT_TRUE(first.fits(idle, 1));
  EXPECT_FALSE(first.fits(idle, 2));
  EXPECT_TRUE(paging.fits(idle, 8));
  EXPECT_FALSE(paging.fits(idle, 9));
  EXPECT_THROW(first.place(idle, 2, {}), std::logic_error);
  EXPECT_EQ(first.place(idle, 2, {1}).size(), 2u) << "a growth takes the nearest idle nodes";
  // On 4x4: a job of 1 at (0, 0), one of 6 (3x2) beside it; the 9 nodes left are idle but hold no
  // 3x3 rectangle, so under First Fit the third job waits for the second's end.
  auto job = [](std::uint64_t id, std::size_t size) {
    return Job{.id = id, .kind = JobKind::Rigid, .submit = 0, .size = size, .walltime = 10, .runtime = 10};
  };
  const Workload w{.jobs = {job(1, 1), job(2, 6), job(3, 9)}, .nodes = 16, .classes = {{"normal", 0}}};
  Fcfs fcfs;
  const Results contiguous = Simulation(w, fcfs, {.allocator = &first, .mesh = &mesh}).run();
  const Results paged = Simulation(w, fcfs, {.allocator = &paging, .mesh = &mesh}).run();
  EXPECT_EQ(contiguous.jobs[1].start, 0);
  EXPECT_EQ(contiguous.jobs[2].start, 10);
  EXPECT_EQ(paged.jobs[2].start, 0);
  EXPECT_EQ(contiguous.jobs[2].placed.nodes_affected, 9u) << "then a 3x3 block";
}

// PLAS on a 4×4 mesh (the middle I/O link between rows 1 and 2): from an empty machine, 3 nodes go
// above, below, above, in column 0, middle-out; the next job starts below, to even the balance.
TEST(Allocation, PlasKeepsTheSystemBalanced) {
  const Mesh mesh(4, 4);
  std::vector<bool> idle(mesh.size(), true);
  Plas plas(mesh);
  const auto first = plas.place(idle, 3, {});
  EXPECT_EQ(first, (std::vector<Node>{8, 4, 12}));
  for (const Node n : first) idle[n] = false;
  EXPECT_EQ(plas.place(idle, 2, {}), (std::vector<Node>{0, 9}));
  const IoColumn io(mesh);
  EXPECT_EQ(io.balance(first), 1);
  EXPECT_EQ(io.balance({0, 9}), 0);
}

// A 4-node job placed by Paging on a 4×4 mesh holds row 0, all below the middle I/O link: balance −4;
// its writes to the 4 I/O nodes west all cross the link west of (0, 0) in the whole mesh, then go north:
// the west-bound channel into column 0 of row 0 carries 4 senders × 4 receivers.
TEST(Allocation, TheResultsHoldTheBalanceFactorAndTheWritesContention) {
  const Mesh mesh(4, 4);
  const Workload w{.jobs = {Job{.id = 1, .kind = JobKind::Rigid, .submit = 0, .size = 4, .walltime = 10, .runtime = 10}},
                   .nodes = 16,
                   .classes = {{"normal", 0}}};
  Fcfs fcfs;
  Paging paging;
  Plas plas(mesh);
  const Results rows = Simulation(w, fcfs, {.allocator = &paging, .mesh = &mesh, .io_column = true}).run();
  ASSERT_TRUE(rows.io_column);
  EXPECT_EQ(rows.jobs[0].balance, -4);
  EXPECT_DOUBLE_EQ(rows.balance_factor, 4);
  EXPECT_DOUBLE_EQ(rows.mean_io_contention, 16);
  const IoColumn io(mesh);
  const Contention c = io.write_contention({0, 1, 2, 3});
  EXPECT_EQ(c.max, 16u);
  EXPECT_EQ(c.hotspot, io.whole().link(io.whole().node({1, 0}), Mesh::West));
  EXPECT_EQ(rows.jobs[0].contention.max, 4u) << "a row of 4 all to all: the middle east-bound link carries 2 x 2";
  const Results balanced = Simulation(w, fcfs, {.allocator = &plas, .mesh = &mesh, .io_column = true}).run();
  EXPECT_DOUBLE_EQ(balanced.balance_factor, 0);
  EXPECT_LT(balanced.mean_io_contention, rows.mean_io_contention);
  EXPECT_NE(rows.json().find("\"io\": {\"balance_factor\": 4.000, \"max_contention\": 16.00}"), std::string::npos) << rows.json();
  // Per job in the CSV: a row of 4 spans 4 nodes and 3 links; its hotspot, the link east out of router 1.
  EXPECT_NE(rows.jobs_csv().find(",killed,average_distance,nodes_affected,links_affected,max_contention,hotspot,balance,sizes\n"),
            std::string::npos) << rows.jobs_csv();
  EXPECT_NE(rows.jobs_csv().find(",0,1.6667,4,3,4,1E,-4,0:4\n"), std::string::npos) << rows.jobs_csv();
}

TEST(Allocation, NamedStrategies) {
  const Mesh mesh(4, 4);
  for (const std::string name : {"paging", "random", "first-fit", "best-fit", "mbs", "mc", "mc-elongated", "plas"})
    EXPECT_EQ(allocator_named("--allocation", name, &mesh)->name(), name);
  EXPECT_THROW(allocator_named("--allocation", "buddy", &mesh), std::invalid_argument);
  EXPECT_THROW(allocator_named("--allocation", "plas", nullptr), std::invalid_argument);
  EXPECT_EQ(allocator_named("--allocation", "random", nullptr)->name(), "random");
}

}  // namespace
}  // namespace dps::cluster
