// Meshes, XY routes and the placement metrics of Mache ("Parallel I/O- and Communication-Sensitive Scheduling on
// High-Performance Parallel Computers"): his Tables 5 and 6 (max_contention and B_NET of five layouts of n compute
// nodes against n I/O nodes) by route counting, Fig. 37's two layouts, the dispersal worked examples.
#include <dps/cluster/contention.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

namespace dps::cluster {
namespace {

TEST(Mesh, RoutesGoXFirstThenYOneLinkPerHop) {
  const Mesh mesh(8, 6);
  std::vector<Mesh::Link> hops;
  mesh.route(mesh.node({1, 1}), mesh.node({4, 3}), hops);
  ASSERT_EQ(hops.size(), 5u);
  EXPECT_EQ(mesh.distance(mesh.node({1, 1}), mesh.node({4, 3})), 5);
  Mesh::Node at = mesh.node({1, 1});
  for (std::size_t k = 0; k < hops.size(); ++k) {
    EXPECT_EQ(mesh.from(hops[k]), at) << "hop " << k << " leaves where the last one arrived";
    at = mesh.to(hops[k]);
    EXPECT_EQ(mesh.at(at).y, k < 3 ? 1 : 1 + static_cast<int>(k) - 2) << "X first, then Y";
  }
  EXPECT_EQ(at, mesh.node({4, 3}));
  hops.clear();
  mesh.route(mesh.node({4, 3}), mesh.node({1, 1}), hops);
  EXPECT_EQ(mesh.at(mesh.to(hops.front())), (Mesh::Point{3, 3})) << "back: west first, on other links";
  hops.clear();
  mesh.route(5, 5, hops);
  EXPECT_TRUE(hops.empty());
  const Mesh torus(8, 6, true);
  EXPECT_EQ(torus.distance(torus.node({0, 0}), torus.node({7, 5})), 2) << "round the edges";
  EXPECT_THROW(mesh.at(48), std::out_of_range);
  EXPECT_THROW(mesh.node({8, 0}), std::out_of_range);
  EXPECT_THROW(Mesh(0, 4), std::invalid_argument);
  EXPECT_THROW(Mesh(2, 4, true), std::invalid_argument);
}

// n I/O nodes in column 0 (rows 0 .. n−1), n compute nodes east of them; write: every compute node
// sends to every I/O node; read: the other way.
struct Layout {
  const char* name;
  std::function<Mesh::Point(int i, int n)> place;  // the i-th compute node
  std::function<double(double n)> write, read;     // Table 5/6's max_contention
};

std::uint32_t contention(int n, const Layout& layout, bool write) {
  const Mesh mesh(n + 2, n);
  std::vector<std::pair<Mesh::Node, Mesh::Node>> pairs;
  for (int i = 0; i < n; ++i)
    for (int s = 0; s < n; ++s) {
      const Mesh::Node compute = mesh.node(layout.place(i, n)), io = mesh.node({0, s});
      pairs.push_back(write ? std::pair{compute, io} : std::pair{io, compute});
    }
  return link_contention(mesh, pairs).max;
}

TEST(Contention, MachesTablesFiveAndSixByRouteCounting) {
  const auto root = [](int n) { return static_cast<int>(std::lround(std::sqrt(n))); };
  const Layout layouts[] = {
      {"diagonal", [](int i, int) { return Mesh::Point{1 + i, i}; }, [](double n) { return n * n / 4; },
       [](double n) { return n; }},
      {"parallel", [](int i, int n) { return Mesh::Point{n / 2, i}; }, [](double n) { return n * n / 4; },
       [](double n) { return n * n / 4; }},
      {"block center", [&](int i, int n) { const int r = root(n); return Mesh::Point{1 + i % r, (n - r) / 2 + i / r}; },
       [](double n) { return n * (n - std::sqrt(n)) / 2; }, [](double n) { return std::sqrt(n) * (n - std::sqrt(n)) / 2; }},
      {"block corner", [&](int i, int n) { const int r = root(n); return Mesh::Point{1 + i % r, i / r}; },
       [](double n) { return n * (n - std::sqrt(n)); }, [](double n) { return std::sqrt(n) * (n - std::sqrt(n)); }},
      {"orthogonal", [](int i, int n) { return Mesh::Point{1 + i, n / 2}; }, [](double n) { return n * n; },
       [](double n) { return n; }},
  };
  for (const int n : {16, 64})
    for (const Layout& l : layouts) {
      const std::uint32_t write = contention(n, l, true), read = contention(n, l, false);
      EXPECT_EQ(write, l.write(n)) << l.name << ", n = " << n << ", write";
      EXPECT_EQ(read, l.read(n)) << l.name << ", n = " << n << ", read";
      // Theorems 1 and 2: mn/4 <= max_contention <= mn, so B_l <= B_NET <= 4 B_l.
      const double b_net = network_bandwidth(n, n, 1.0, write);
      EXPECT_GE(b_net, 1.0 - 1e-12) << l.name;
      EXPECT_LE(b_net, 4.0 + 1e-12) << l.name;
    }
  EXPECT_DOUBLE_EQ(network_bandwidth(16, 16, 380e6, 16 * 16 / 4), 4 * 380e6) << "the diagonal's 4 B_l";
}

// Fig. 37: two compute nodes each send 256 MB to each of two I/O nodes, 64 MB/s everywhere. In one
// row the last link carries all 4 pairs: 16 s, 64 MB/s; in the I/O nodes' rows, 2 each: 8 s, 128 MB/s.
TEST(Contention, FigureThirtySevensTwoLayouts) {
  const Mesh mesh(4, 2);
  const Mesh::Node io0 = mesh.node({0, 0}), io1 = mesh.node({0, 1});
  auto seconds = [&](Mesh::Node a, Mesh::Node b) {
    const Contention c = link_contention(mesh, {{a, io0}, {a, io1}, {b, io0}, {b, io1}});
    return c.max * 256.0 / 64.0;  // the hotspot's pairs, each 256 MB, through 64 MB/s
  };
  EXPECT_EQ(seconds(mesh.node({1, 0}), mesh.node({2, 0})), 16);
  EXPECT_EQ(seconds(mesh.node({1, 0}), mesh.node({1, 1})), 8);
  EXPECT_EQ(1024 / seconds(mesh.node({1, 0}), mesh.node({1, 1})), 128) << "MB/s";
}

// Fig. 48/50: a job of 14 compute nodes writing to 16 I/O nodes (column 0 of a 16-row mesh), s of
// them at or above I/O row i. The two links of the I/O column between rows i − 1 and i carry
// (14 − s)·(16 − i) and s·i pairs; over s, the larger of the two is least at 14, 26, ..., 56 (= mn/4),
// ..., 14.
TEST(Contention, FigureFortyEightsRowMinimaOnASixteenBySixteenMesh) {
  const int m = 16, n = 14;
  const Mesh mesh(1 + n, m);
  const std::vector<std::uint32_t> expected{14, 26, 36, 44, 50, 54, 56, 56, 56, 54, 50, 44, 36, 26, 14};
  for (int i = 1; i < m; ++i) {
    std::uint32_t least = UINT32_MAX;
    for (int s = 0; s <= n; ++s) {
      std::vector<std::pair<Mesh::Node, Mesh::Node>> pairs;
      for (int k = 0; k < n; ++k) {
        const Mesh::Node compute = mesh.node({1 + k, k < s ? i : i - 1});  // a row each side of the link
        for (int r = 0; r < m; ++r) pairs.emplace_back(compute, mesh.node({0, r}));
      }
      const Contention c = link_contention(mesh, pairs);
      const Mesh::Node below = mesh.node({0, i - 1}), above = mesh.node({0, i});
      least = std::min(least, std::max(c.per_link[mesh.link(below, Mesh::North)], c.per_link[mesh.link(above, Mesh::South)]));
    }
    EXPECT_EQ(least, expected[static_cast<std::size_t>(i - 1)]) << "I/O link " << i;
  }
}

TEST(Contention, RepeatedPairsCountOnceAndTheHotspotIsNamed) {
  const Mesh mesh(3, 1);
  const Contention c = link_contention(mesh, {{0, 2}, {0, 2}, {1, 2}});
  EXPECT_EQ(c.max, 2u);
  EXPECT_EQ(mesh.from(c.hotspot), 1u);
  EXPECT_EQ(mesh.to(c.hotspot), 2u);
  EXPECT_THROW(network_bandwidth(1, 1, 1.0, 0), std::invalid_argument);
}

// The dispersal worked examples: a 4×4 block (16 nodes affected, 24 links), the corners of a 4×4
// square (16, 12), and a job on 4 rows and 4 of the 8 columns it spans (32, 7·4 + 3·4 = 40).
TEST(Dispersal, TheWorkedExamples) {
  const Mesh mesh(16, 16);
  std::vector<Mesh::Node> block, corners, spread;
  for (int y = 0; y < 4; ++y)
    for (int x = 0; x < 4; ++x) block.push_back(mesh.node({x, y}));
  for (const Mesh::Point p : {Mesh::Point{0, 0}, {3, 0}, {0, 3}, {3, 3}}) corners.push_back(mesh.node(p));
  for (int y = 0; y < 4; ++y)
    for (const int x : {0, 2, 5, 7}) spread.push_back(mesh.node({x, y}));
  const Dispersal b = dispersal(mesh, block), c = dispersal(mesh, corners), s = dispersal(mesh, spread);
  EXPECT_EQ(b.nodes_affected, 16u);
  EXPECT_EQ(b.links_affected, 24u);
  EXPECT_EQ(c.nodes_affected, 16u);
  EXPECT_EQ(c.links_affected, 12u);
  EXPECT_EQ(s.nodes_affected, 32u);
  EXPECT_EQ(s.links_affected, 40u);
  EXPECT_EQ(c.diameter, 6);
  EXPECT_EQ(c.summed_distance, 4u * 3 + 2u * 6) << "four sides of 3, two diagonals of 6";
  EXPECT_DOUBLE_EQ(c.average_distance, 2.0 * 24 / (4 * 3));
  EXPECT_EQ(c.distance_from_center, 3u + 3 + 6);
  EXPECT_THROW(dispersal(mesh, {}), std::invalid_argument);
}

}  // namespace
}  // namespace dps::cluster
