// The network topologies in the engine: meshes and tori with XY routes (Mache, "Parallel I/O- and
// Communication-Sensitive Scheduling on High-Performance Parallel Computers": a latency per hop, links
// shared by the flows crossing them, I/O columns, placed nodes, Fig. 37) and the segments of Weissman
// ("Scheduling Parallel Computations in a Heterogeneous Environment") joined by routers, exactly and against recomputing every rate at every event; the tori's
// routes, times and shares also against routes worked out by hand, not by the code's own router.
#include "sim_reference.hpp"

#include <dps/mesh.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace dps::sim {
namespace {

using namespace checks;

// --- meshes (Mache): XY routes, each link shared by the flows crossing it ---

constexpr double kHop = 2e-6;  // s

ClusterModel mesh(int width, int height, Sharing sharing, double link_bandwidth = kBandwidth, bool torus = false) {
  ClusterModel m = star(static_cast<std::size_t>(width * height), sharing);
  m.network.topology = Topology::Mesh;
  m.network.mesh = {width, height, torus, link_bandwidth, kHop};
  return m;
}

Links mesh_links(const ClusterModel& m) {
  const auto grid = std::make_shared<Mesh>(m.network.mesh.width, m.network.mesh.height, m.network.mesh.torus);
  const std::size_t nodes = grid->size();
  std::vector<double> capacity(2 * nodes, m.network.bandwidth);
  capacity.resize(2 * nodes + grid->links(), m.network.mesh.link_bandwidth);
  return {capacity,
          [grid, nodes](VNode f, VNode t) {
            std::vector<Mesh::Link> hops;
            grid->route(f, t, hops);
            std::vector<std::size_t> route{2 * std::size_t{f}};
            for (Mesh::Link h : hops) route.push_back(2 * nodes + h);
            route.push_back(2 * std::size_t{t} + 1);
            return route;
          },
          [grid, m](VNode f, VNode t) { return m.network.latency + grid->distance(f, t) * m.network.mesh.hop_latency; }};
}

TEST(SimEngine, OnAMeshATransferTakesALatencyPerHop) {
  Engine engine(mesh(4, 3, Sharing::Equal));
  Clock clock(engine);
  const double s = 1e6;
  engine.transfer(0, 11, s, {&clock, 1});  // (0, 0) to (3, 2): 5 hops
  engine.transfer(5, 6, s, {&clock, 2});   // (1, 1) to (2, 1): 1 hop
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(1), kLatency + 5 * kHop + s / kBandwidth);
  expect_near_relative(clock.ended.at(2), kLatency + 1 * kHop + s / kBandwidth);
}

// A 2×2 mesh with its I/O column: nodes 0..3 at (1, 0), (2, 0), (1, 1), (2, 1); I/O nodes 4, 5 at (0, 0),
// (0, 1), their links at a bandwidth of their own. Node 3 writes to I/O node 4: west 2 hops, south 1.
TEST(SimEngine, OnAMeshWithAnIoColumnTheIoNodesSitWest) {
  for (const Sharing sharing : {Sharing::Equal, Sharing::MaxMin}) {
    ClusterModel m = star(6, sharing);
    m.groups = {{.name = "compute", .count = 4}, {.name = "io", .count = 2, .bandwidth = kBandwidth / 4}};
    m.network.topology = Topology::Mesh;
    m.network.mesh = {.width = 2, .height = 2, .link_bandwidth = kBandwidth, .hop_latency = kHop, .io_column = true};
    Engine engine(m);
    Clock clock(engine);
    const double s = 1e6;
    engine.transfer(3, 4, s, {&clock, 1});
    engine.transfer(0, 1, s, {&clock, 2});
    while (engine.step()) {}
    expect_near_relative(clock.ended.at(1), kLatency + 3 * kHop + s / (kBandwidth / 4));
    expect_near_relative(clock.ended.at(2), kLatency + kHop + s / kBandwidth);
  }
}

// Three nodes placed on a 4×4 mesh at routers 0, 15 and 1: 0 to 1 is 6 hops, 0 to 2 one.
TEST(SimEngine, OnAMeshNodesSitOnTheRoutersTheModelPlacesThemOn) {
  ClusterModel m = star(3, Sharing::Equal);
  m.network.topology = Topology::Mesh;
  m.network.mesh = {.width = 4, .height = 4, .link_bandwidth = kBandwidth, .hop_latency = kHop, .routers = {0, 15, 1}};
  Engine engine(m);
  Clock clock(engine);
  const double s = 1e6;
  engine.transfer(0, 1, s, {&clock, 1});
  engine.transfer(2, 0, s, {&clock, 2});
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(1), kLatency + 6 * kHop + s / kBandwidth);
  expect_near_relative(clock.ended.at(2), kLatency + 1 * kHop + s / kBandwidth);
}

TEST(SimEngine, TwoFlowsShareAMeshLinkTheyBothCrossAndNotDisjointOnes) {
  for (const Sharing sharing : {Sharing::Equal, Sharing::MaxMin}) {
    Engine engine(mesh(4, 1, sharing));
    Clock clock(engine);
    const double s = 1e6;
    engine.transfer(0, 2, s, {&clock, 1});  // both cross the link from (1, 0) to (2, 0)
    engine.transfer(1, 3, s, {&clock, 2});
    while (engine.step()) {}
    expect_near_relative(clock.ended.at(1), kLatency + 2 * kHop + s / (kBandwidth / 2));
    expect_near_relative(clock.ended.at(2), kLatency + 2 * kHop + s / (kBandwidth / 2));
    Engine apart(mesh(4, 1, sharing));
    Clock alone(apart);
    apart.transfer(0, 1, s, {&alone, 1});  // disjoint links, nodes and routers
    apart.transfer(2, 3, s, {&alone, 2});
    while (apart.step()) {}
    expect_near_relative(alone.ended.at(1), kLatency + kHop + s / kBandwidth);
    expect_near_relative(alone.ended.at(2), kLatency + kHop + s / kBandwidth);
  }
}

// Mache's Fig. 37: two compute nodes each send 256 MB to each of two I/O nodes in the west column,
// 64 MB/s everywhere. In a row with an I/O node, all four flows cross one link (max_contention 4):
// 16 s, 64 MB/s; one above the other, at most two do: 8 s, 128 MB/s.
TEST(SimEngine, MachesFig37TwoLayoutsOnAMeshTake16And8Seconds) {
  const double mb = 1e6, bytes = 256 * mb;
  for (const Sharing sharing : {Sharing::Equal, Sharing::MaxMin}) {
    ClusterModel m = mesh(3, 2, sharing, 64 * mb);  // I/O nodes 0 at (0, 0) and 3 at (0, 1)
    m.network.bandwidth = 64 * mb;
    m.network.latency = 0;
    m.network.mesh.hop_latency = 0;
    for (const auto& [layout, seconds] : std::vector<std::pair<std::vector<VNode>, double>>{{{1, 2}, 16}, {{1, 4}, 8}}) {
      Engine engine(m);
      Clock clock(engine);
      std::uint64_t tag = 0;
      for (VNode compute : layout)
        for (VNode io : {0u, 3u}) engine.transfer(compute, io, bytes, {&clock, tag++});
      while (engine.step()) {}
      expect_near_relative(engine.now(), seconds);
      expect_near_relative(4 * bytes / engine.now() / mb, 4 * 256 / seconds);
    }
  }
}

TEST(SimEngine, EqualSharingOnAMeshAndATorusMatchesRecomputingEveryRateAtEveryEvent) {
  for (const bool torus : {false, true}) {
    const ClusterModel m = mesh(4, 3, Sharing::Equal, kBandwidth / 3, torus);
    const Links links = mesh_links(m);
    expect_matches_reference(Sharing::Equal, busy_traffic, 12, &m, &links);
  }
}

// Writes to the I/O nodes of a column west of a mesh (the last `height` nodes, slower), among random
// pairs, most at once: many flows bound to the I/O nodes' links cross links whose shares change
// together, so each bound link's heap of them has several keys changed by one event.
std::vector<Transfer> io_traffic(std::size_t nodes, std::size_t count, unsigned seed) {
  const auto io = static_cast<VNode>(nodes / 9);  // a 2·io × io mesh and io I/O nodes: 2 io² + io = nodes
  std::mt19937 random(seed);
  std::uniform_int_distribution<VNode> compute(0, static_cast<VNode>(nodes) - io - 1), writes(static_cast<VNode>(nodes) - io, static_cast<VNode>(nodes) - 1);
  std::uniform_real_distribution<double> start(0, 0.002), bytes(1e3, 1e6);
  std::vector<Transfer> out;
  while (out.size() < count) {
    const VNode from = compute(random), to = out.size() % 3 ? writes(random) : compute(random);
    if (from != to) out.push_back({from, to, start(random), bytes(random)});
  }
  return out;
}

void expect_io_column_matches_reference(Sharing sharing, int height, std::size_t count) {
  const int width = 2 * height, columns = width + 1;
  const auto compute = static_cast<std::size_t>(width * height), nodes = compute + static_cast<std::size_t>(height);
  ClusterModel m = star(nodes, sharing);
  m.groups = {{.name = "compute", .count = compute}, {.name = "io", .count = static_cast<std::size_t>(height), .bandwidth = kBandwidth / 8}};
  m.network.topology = Topology::Mesh;
  m.network.mesh = {.width = width, .height = height, .link_bandwidth = kBandwidth / 3, .hop_latency = kHop, .io_column = true};
  const auto grid = std::make_shared<Mesh>(columns, height);
  auto router = [=](VNode v) {
    return v < compute ? (v / static_cast<VNode>(width)) * static_cast<VNode>(columns) + v % static_cast<VNode>(width) + 1
                       : (v - static_cast<VNode>(compute)) * static_cast<VNode>(columns);
  };
  std::vector<double> capacity(2 * nodes, m.network.bandwidth);
  std::fill(capacity.begin() + static_cast<std::ptrdiff_t>(2 * compute), capacity.end(), kBandwidth / 8);
  capacity.resize(2 * nodes + grid->links(), m.network.mesh.link_bandwidth);
  const Links links{capacity,
                    [=](VNode f, VNode t) {
                      std::vector<Mesh::Link> hops;
                      grid->route(router(f), router(t), hops);
                      std::vector<std::size_t> route{2 * std::size_t{f}};
                      for (Mesh::Link h : hops) route.push_back(2 * nodes + h);
                      route.push_back(2 * std::size_t{t} + 1);
                      return route;
                    },
                    [=](VNode f, VNode t) { return m.network.latency + grid->distance(router(f), router(t)) * m.network.mesh.hop_latency; }};
  expect_matches_reference(sharing, io_traffic, nodes, &m, &links, count);
}

TEST(SimEngine, EqualAndMaxMinSharingOfWritesToAnIoColumnMatchRecomputingEveryRate) {
  expect_io_column_matches_reference(Sharing::MaxMin, 4, 300);
  expect_io_column_matches_reference(Sharing::Equal, 4, 300);
  expect_io_column_matches_reference(Sharing::Equal, 8, 800);  // 144 nodes, hundreds of flows at once
}

TEST(SimEngine, MaxMinSharingOnAMeshAndATorusMatchesRecomputingEveryRateAtEveryEvent) {
  for (const bool torus : {false, true}) {
    const ClusterModel m = mesh(4, 3, Sharing::MaxMin, kBandwidth / 3, torus);
    const Links links = mesh_links(m);
    expect_matches_reference(Sharing::MaxMin, busy_traffic, 12, &m, &links);
  }
}

// --- tori: each dimension crossed the shorter way round, east or north on a tie; worked by hand, so
// that the router the references above share with the engine is checked against something else ---

using enum Mesh::Direction;

struct Hop {  // the link leaving `node` towards `direction`
  Mesh::Node node;
  Mesh::Direction direction;
};

// Node y · width + x is at (x, y): on a 4×4 torus node 7 is at (3, 1), on a 5×3 one at (2, 1).
TEST(SimEngine, TorusRoutesWrapTheShorterWayRoundAsWorkedByHand) {
  struct Case {
    int width, height;
    Mesh::Node from, to;
    std::vector<Hop> hops;
  };
  const std::vector<Case> cases = {
      {4, 4, 0, 3, {{0, West}}},                 // (0, 0) to (3, 0): 1 west over the edge, not 3 east
      {4, 4, 0, 12, {{0, South}}},               // (0, 0) to (0, 3): 1 south over the edge
      {4, 4, 15, 0, {{15, East}, {12, North}}},  // (3, 3) to (0, 0): over both edges, 2 hops (6 on a mesh)
      {4, 4, 7, 5, {{7, East}, {4, East}}},      // (3, 1) to (1, 1): 2 either way, east on the tie, over the edge
      {4, 4, 9, 1, {{9, North}, {13, North}}},   // (1, 2) to (1, 0): 2 either way, north, over the edge
      {4, 4, 0, 10, {{0, East}, {1, East}, {2, North}, {6, North}}},  // (0, 0) to (2, 2): ties in both, inside
      {4, 4, 1, 15, {{1, East}, {2, East}, {3, South}}},  // (1, 0) to (3, 3): a tie east, then 1 south over the edge
      {5, 3, 14, 0, {{14, East}, {10, North}}},           // (4, 2) to (0, 0): over both edges
      {5, 3, 5, 8, {{5, West}, {9, West}}},               // (0, 1) to (3, 1): 2 west over the edge, not 3 east
      {5, 3, 2, 12, {{2, South}}},                        // (2, 0) to (2, 2): 1 south over the edge, not 2 north
      {3, 5, 12, 3, {{12, North}, {0, North}}},           // (0, 4) to (0, 1): 2 north over the edge, not 3 south
      {3, 5, 0, 9, {{0, South}, {12, South}}},            // (0, 0) to (0, 3): 2 south over the edge, not 3 north
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::to_string(c.width) + "x" + std::to_string(c.height) + " torus, " + std::to_string(c.from) +
                 " to " + std::to_string(c.to));
    const Mesh torus(c.width, c.height, true);
    std::vector<Mesh::Link> want, got;
    for (const Hop& h : c.hops) want.push_back(torus.link(h.node, h.direction));
    torus.route(c.from, c.to, got);
    EXPECT_EQ(got, want);
    EXPECT_EQ(torus.distance(c.from, c.to), static_cast<int>(c.hops.size()));
    for (std::size_t k = 0; k < c.hops.size(); ++k)  // each link leads where the next leaves, the last to the end
      EXPECT_EQ(torus.to(want[k]), k + 1 < c.hops.size() ? c.hops[k + 1].node : c.to) << "hop " << k;
  }
}

TEST(SimEngine, OnATorusATransferTakesALatencyPerHopOfItsRouteOverTheEdges) {
  const double s = 1e6;
  for (const auto& [from, to, hops] :
       std::vector<std::tuple<VNode, VNode, int>>{{0, 3, 1}, {0, 12, 1}, {15, 0, 2}, {1, 15, 3}}) {
    Engine engine(mesh(4, 4, Sharing::Equal, kBandwidth, true));
    Clock clock(engine);
    engine.transfer(from, to, s, {&clock, 1});
    while (engine.step()) {}
    expect_near_relative(clock.ended.at(1), kLatency + hops * kHop + s / kBandwidth);
  }
}

// Two pairs of flows on a 4×4 torus, each pair meeting on one link only if its tied route goes east
// (0's east link), or north (15's north link, over the edge); going west or south, no flow shares.
TEST(SimEngine, OnATorusTiedRoutesGoEastAndNorthAndShareTheLinksTheyMeetOn) {
  const double s = 1e6;
  for (const Sharing sharing : {Sharing::Equal, Sharing::MaxMin}) {
    Engine engine(mesh(4, 4, sharing, kBandwidth, true));
    Clock clock(engine);
    engine.transfer(3, 1, s, {&clock, 1});   // (3, 0) to (1, 0), a tie: 3 east over the edge to 0, 0 east
    engine.transfer(0, 5, s, {&clock, 2});   // (0, 0) to (1, 1): 0 east, 1 north
    engine.transfer(15, 7, s, {&clock, 3});  // (3, 3) to (3, 1), a tie: 15 north over the edge to 3, 3 north
    engine.transfer(14, 3, s, {&clock, 4});  // (2, 3) to (3, 0): 14 east, 15 north over the edge
    while (engine.step()) {}
    for (std::uint64_t tag = 1; tag <= 4; ++tag)
      expect_near_relative(clock.ended.at(tag), kLatency + 2 * kHop + s / (kBandwidth / 2));
  }
}

// Three flows cross the link over the edge of a 5×3 torus from (4, 0) to (0, 0), at half the nodes'
// bandwidth; a fourth shares the next link (0 east) with one of them. Each of the three gets a third
// of the edge link, a sixth of a node's bandwidth. The fourth gets half of its link under equal
// sharing (its share there, whatever the other flow uses), what the other leaves under max-min.
TEST(SimEngine, FlowsOverATorusEdgeShareItEquallyAndEqualSharingGivesNoLeftovers) {
  const double s = 1e6, b = kBandwidth;
  for (const auto& [sharing, fourth] :
       std::vector<std::pair<Sharing, double>>{{Sharing::Equal, b / 4}, {Sharing::MaxMin, b / 2 - b / 6}}) {
    ClusterModel m = mesh(5, 3, sharing, b / 2, true);
    m.network.mesh.hop_latency = 0;  // all four start flowing at once
    Engine engine(m);
    Clock clock(engine);
    engine.transfer(4, 0, s, {&clock, 1});  // 4 east over the edge
    engine.transfer(3, 0, s, {&clock, 2});  // 3 east, 4 east over the edge (2 hops, not 3 west)
    engine.transfer(4, 1, s, {&clock, 3});  // 4 east over the edge, 0 east
    engine.transfer(0, 1, s, {&clock, 4});  // 0 east
    while (engine.step()) {}
    for (std::uint64_t tag = 1; tag <= 3; ++tag) expect_near_relative(clock.ended.at(tag), kLatency + s / (b / 6));
    expect_near_relative(clock.ended.at(4), kLatency + s / fourth);
  }
}

// --- segments (Weissman): each cluster's nodes share its segment, a router joins the clusters ---

constexpr double kRouterLatency = 1.2e-3;  // s (Weissman's r1)

// Groups of `sizes` nodes, each on its own segment of `segment` bytes/s; the router passes `router`.
ClusterModel segmented(std::vector<std::size_t> sizes, Sharing sharing, double segment, double router) {
  ClusterModel m = star(1, sharing);
  m.groups.clear();
  for (std::size_t g = 0; g < sizes.size(); ++g) m.groups.push_back(NodeGroup{"cluster" + std::to_string(g), sizes[g], 1, 1.0});
  m.network.topology = Topology::Segments;
  m.network.segments = {segment, kRouterLatency, router};
  return m;
}

Links segment_links(const ClusterModel& m) {
  std::vector<std::size_t> group_of;
  for (std::size_t g = 0; g < m.groups.size(); ++g) group_of.insert(group_of.end(), m.groups[g].count, g);
  const std::size_t nodes = group_of.size(), router = 2 * nodes + m.groups.size();
  std::vector<double> capacity(2 * nodes, m.network.bandwidth);
  capacity.resize(router, m.network.segments.bandwidth);
  capacity.push_back(m.network.segments.router_bandwidth);
  return {capacity,
          [group_of, nodes, router](VNode f, VNode t) {
            std::vector<std::size_t> route{2 * std::size_t{f}, 2 * nodes + group_of[f]};
            if (group_of[t] != group_of[f]) route.insert(route.end(), {router, 2 * nodes + group_of[t]});
            route.push_back(2 * std::size_t{t} + 1);
            return route;
          },
          [group_of, m](VNode f, VNode t) { return m.network.latency + (group_of[f] != group_of[t] ? kRouterLatency : 0.0); }};
}

TEST(SimEngine, OnSegmentsAClustersNodesShareItsSegmentAndOnlyCrossingMessagesTheRouter) {
  const double segment = kBandwidth / 2, router = kBandwidth / 8, s = 1e6;
  for (const Sharing sharing : {Sharing::Equal, Sharing::MaxMin}) {
    const ClusterModel m = segmented({2, 2}, sharing, segment, router);  // nodes 0, 1 | 2, 3
    Engine within(m);
    Clock a(within);
    within.transfer(0, 1, s, {&a, 1});  // both on cluster 0's segment, one each way
    within.transfer(1, 0, s, {&a, 2});
    within.transfer(2, 3, s, {&a, 3});  // alone on cluster 1's
    while (within.step()) {}
    expect_near_relative(a.ended.at(1), kLatency + s / (segment / 2));
    expect_near_relative(a.ended.at(2), kLatency + s / (segment / 2));
    expect_near_relative(a.ended.at(3), kLatency + s / segment);
    Engine across(m);
    Clock b(across);
    across.transfer(0, 2, s, {&b, 1});  // both cross the router
    across.transfer(3, 1, s, {&b, 2});
    while (across.step()) {}
    expect_near_relative(b.ended.at(1), kLatency + kRouterLatency + s / (router / 2));
    expect_near_relative(b.ended.at(2), kLatency + kRouterLatency + s / (router / 2));
  }
}

// Three segments: with one router, messages 0 → 2 (segments 0 to 1) and 3 → 4 (1 to 2) share it; with
// a router per pair, they cross different routers.
TEST(SimEngine, WithARouterPerPairOfSegmentsOnlyThatPairsMessagesShareIt) {
  const double segment = kBandwidth, router = kBandwidth / 8, s = 1e6;
  for (const bool per_pair : {false, true}) {
    ClusterModel m = segmented({2, 2, 2}, Sharing::Equal, segment, router);  // nodes 0, 1 | 2, 3 | 4, 5
    m.network.segments.router_per_pair = per_pair;
    Engine engine(m);
    Clock clock(engine);
    engine.transfer(0, 2, s, {&clock, 1});
    engine.transfer(3, 4, s, {&clock, 2});
    while (engine.step()) {}
    const double shared = per_pair ? router : router / 2;
    expect_near_relative(clock.ended.at(1), kLatency + kRouterLatency + s / shared);
    expect_near_relative(clock.ended.at(2), kLatency + kRouterLatency + s / shared);
  }
}

// Segments a group names are shared: groups 0 and 2 on segment 0, group 1 on segment 1; 0 → 2 stays
// on segment 0 (no router), 0 → 1 crosses the router.
TEST(SimEngine, GroupsThatNameOneSegmentShareItAndOnlyCrossingMessagesTheRouter) {
  ClusterModel m = star(3, Sharing::Equal);
  m.groups = {{.name = "a", .count = 1, .segment = 0}, {.name = "b", .count = 1, .segment = 1}, {.name = "c", .count = 1, .segment = 0}};
  m.network.topology = Topology::Segments;
  m.network.segments = {.bandwidth = kBandwidth, .router_latency = 1e-3, .router_bandwidth = kBandwidth};
  Engine engine(m);
  Clock clock(engine);
  const double s = 1e6;
  engine.transfer(0, 2, s, {&clock, 1});
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(1), kLatency + s / kBandwidth);
  engine.transfer(0, 1, s, {&clock, 2});
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(2) - clock.ended.at(1), kLatency + 1e-3 + s / kBandwidth);
}

TEST(SimEngine, SharingOnSegmentsMatchesRecomputingEveryRateAtEveryEvent) {
  for (const Sharing sharing : {Sharing::Equal, Sharing::MaxMin}) {
    const ClusterModel m = segmented({5, 4, 3}, sharing, kBandwidth / 2, kBandwidth / 3);
    const Links links = segment_links(m);
    expect_matches_reference(sharing, busy_traffic, 12, &m, &links);
  }
}


}  // namespace
}  // namespace dps::sim
