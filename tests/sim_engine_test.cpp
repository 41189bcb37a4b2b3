// The simulator's engine against exact analytic cases: transfer times, bandwidth sharing (equal and
// max-min), cores shared by steps, node speed, and the CPU that transfers take from steps.
#include <dps/sim/engine.hpp>
#include <dps/sim/mesh.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

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

// Three messages on one node pair, and one on another pair into the same node. With flows each is
// a flow of its own and they share; with fifo connections the pair's messages go one after another
// (the later ones' latency overlapped their wait), while the other pair still shares the link.
TEST(SimEngine, FifoConnectionsSendAPairsMessagesOneAfterAnother) {
  const double s = 1e6, t = s / kBandwidth;
  for (const bool fifo : {false, true}) {
    ClusterModel m = star(3);
    m.network.fifo = fifo;
    Engine engine(m);
    Clock clock(engine);
    for (std::uint64_t k = 1; k <= 3; ++k) engine.transfer(0, 1, s, {&clock, k});
    while (engine.step()) {}
    if (!fifo) {
      for (std::uint64_t k = 1; k <= 3; ++k) expect_near_relative(clock.ended.at(k), kLatency + 3 * t);
    } else {
      for (std::uint64_t k = 1; k <= 3; ++k) expect_near_relative(clock.ended.at(k), kLatency + static_cast<double>(k) * t);
    }
  }
  ClusterModel m = star(3);
  m.network.fifo = true;
  Engine engine(m);
  Clock clock(engine);
  engine.transfer(0, 2, s, {&clock, 1});
  engine.transfer(0, 2, s, {&clock, 2});
  engine.transfer(1, 2, s, {&clock, 3});  // another pair: shares node 2's incoming link
  while (engine.step()) {}
  expect_near_relative(clock.ended.at(1), kLatency + 2 * t);  // half the link while 3 flows
  expect_near_relative(clock.ended.at(3), kLatency + 2 * t);
  expect_near_relative(clock.ended.at(2), kLatency + 3 * t);  // then the whole link
}

// On a fifo pair, an urgent message passes the bulk ones waiting, but not the one in progress, nor an
// ordered one, nor an earlier urgent one: bulk 1 is on its way; bulk 2, ordered 3, bulk 4 and 5 wait;
// urgent 6 and 7 go after 3, before 4.
TEST(SimEngine, AnUrgentMessagePassesTheBulkWaitingOnItsPairAndNothingElse) {
  const double s = 1e6, t = s / kBandwidth;
  ClusterModel m = star(2);
  m.network.fifo = true;
  Engine engine(m);
  Clock clock(engine);
  const Lane lanes[] = {Lane::bulk, Lane::bulk, Lane::ordered, Lane::bulk, Lane::bulk, Lane::urgent, Lane::urgent};
  for (std::uint64_t k = 1; k <= 7; ++k) engine.transfer(0, 1, s, {&clock, k}, lanes[k - 1]);
  while (engine.step()) {}
  const std::uint64_t order[] = {1, 2, 3, 6, 7, 4, 5};
  for (std::size_t place = 0; place < 7; ++place)
    expect_near_relative(clock.ended.at(order[place]), kLatency + static_cast<double>(place + 1) * t);
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

// Two transfers out of node 0 at once, beside a step there: per transfer they take 2 × 0.25 of its
// core; per link, 0.25 (the link carries the same bytes per second however many share it).
TEST(SimEngine, CommunicationCpuPerTransferOrPerLink) {
  for (const bool per_link : {false, true}) {
    ClusterModel m = star(3);
    m.network.cpu_per_send = 0.25;
    m.network.cpu_per_link = per_link;
    Engine engine(m);
    Clock clock(engine);
    const double s = 1.25e7;  // alone 0.1 s; two share node 0's link: both end at l + 0.2 s
    engine.compute(0, 1.0, {&clock, 1});
    engine.transfer(0, 1, s, {&clock, 2});
    engine.transfer(0, 2, s, {&clock, 3});
    while (engine.step()) {}
    const double t = kLatency + 2 * s / kBandwidth, used = per_link ? 0.25 : 0.5;
    expect_near_relative(clock.ended.at(3), t);
    expect_near_relative(clock.ended.at(1), t + (1.0 - (1 - used) * t));
  }
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

// --- against a brute-force reference: every rate recomputed at every event ---

struct Transfer {
  VNode from, to;
  double start, bytes;
};

// A network as the reference sees it: the links each transfer crosses, their capacities, its latency.
struct Links {
  std::vector<double> capacity;
  std::function<std::vector<std::size_t>(VNode, VNode)> route;
  std::function<double(VNode, VNode)> latency;
};

Links star_links(std::size_t nodes) {  // 2v: v's outgoing link, 2v + 1: its incoming one
  return {std::vector<double>(2 * nodes, kBandwidth),
          [](VNode f, VNode t) { return std::vector<std::size_t>{2 * f, 2 * t + 1}; },
          [](VNode, VNode) { return kLatency; }};
}

// Rates of the flows in their bandwidth phase, each given by its links, as the model defines them.
std::vector<double> reference_rates(const std::vector<std::vector<std::size_t>>& flows, const std::vector<double>& capacity,
                                    Sharing sharing) {
  std::vector<double> count(capacity.size(), 0), rate(flows.size(), 0);
  for (const auto& route : flows)
    for (std::size_t l : route) ++count[l];
  if (sharing == Sharing::Equal) {
    for (std::size_t k = 0; k < flows.size(); ++k) {
      rate[k] = 1e300;
      for (std::size_t l : flows[k]) rate[k] = std::min(rate[k], capacity[l] / count[l]);
    }
    return rate;
  }
  std::vector<double> left = capacity;
  std::vector<bool> fixed(flows.size(), false);
  for (std::size_t unfixed = flows.size(); unfixed > 0;) {  // progressive filling, one level at a time
    double level = 1e300;
    for (std::size_t l = 0; l < capacity.size(); ++l)
      if (count[l] > 0) level = std::min(level, left[l] / count[l]);
    std::vector<std::size_t> at_level;
    for (std::size_t k = 0; k < flows.size(); ++k) {
      if (fixed[k]) continue;
      for (std::size_t l : flows[k])
        if (left[l] / count[l] == level) {
          at_level.push_back(k);
          break;
        }
    }
    for (std::size_t k : at_level) {
      fixed[k] = true, rate[k] = level, --unfixed;
      for (std::size_t l : flows[k]) left[l] -= level, --count[l];
    }
  }
  return rate;
}

std::vector<double> reference_finishes(const std::vector<Transfer>& transfers, const Links& links, Sharing sharing) {
  std::vector<double> finish(transfers.size(), -1), left(transfers.size());
  for (std::size_t k = 0; k < transfers.size(); ++k) left[k] = transfers[k].bytes;
  for (double now = 0;;) {
    std::vector<std::size_t> active;
    std::vector<std::vector<std::size_t>> flows;
    double next = 1e300;
    for (std::size_t k = 0; k < transfers.size(); ++k) {
      if (finish[k] >= 0) continue;
      const double flowing = transfers[k].start + links.latency(transfers[k].from, transfers[k].to);
      if (flowing > now) {
        next = std::min(next, flowing);
      } else {
        active.push_back(k);
        flows.push_back(links.route(transfers[k].from, transfers[k].to));
      }
    }
    if (active.empty() && next == 1e300) return finish;
    const std::vector<double> rate = reference_rates(flows, links.capacity, sharing);
    for (std::size_t j = 0; j < active.size(); ++j) next = std::min(next, now + left[active[j]] / rate[j]);
    for (std::size_t j = 0; j < active.size(); ++j) {
      const std::size_t k = active[j];
      left[k] -= rate[j] * (next - now);
      if (left[k] <= 1e-9 * transfers[k].bytes) finish[k] = next;
    }
    now = next;
  }
}

// Starts each transfer at its time.
struct Starter final : Listener {
  Starter(Engine& e, const std::vector<Transfer>& t, Listener& done) : engine(e), transfers(t), clock(done) {}
  void finished(std::uint64_t k) override {
    const Transfer& t = transfers[k];
    engine.transfer(t.from, t.to, t.bytes, {&clock, k});
  }
  Engine& engine;
  const std::vector<Transfer>& transfers;
  Listener& clock;
};

// Two busy hubs (more flows than the engine's shortcut threshold) and random pairs: flows change
// bottleneck many times, from one link to the other.
std::vector<Transfer> busy_traffic(std::size_t nodes, std::size_t count, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<VNode> node(0, static_cast<VNode>(nodes - 1));
  std::uniform_real_distribution<double> start(0, 0.02), bytes(1e3, 1e6);
  std::vector<Transfer> out;
  while (out.size() < count) {
    VNode from = node(random), to = node(random);
    if (out.size() % 3 == 0) from = 0;  // hub sending
    if (out.size() % 3 == 1) to = 1;    // hub receiving
    if (from != to) out.push_back({from, to, start(random), bytes(random)});
  }
  return out;
}

// A master and many workers, orders out and results back, and some traffic between workers: most
// flows are alone on the worker's link (max-min fixes them on the master's without searching them),
// and flows become alone, or stop being, all the time.
std::vector<Transfer> master_worker_traffic(std::size_t nodes, std::size_t count, unsigned seed) {
  std::mt19937 random(seed);
  std::uniform_int_distribution<VNode> worker(1, static_cast<VNode>(nodes - 1));
  std::uniform_real_distribution<double> start(0, 0.02), bytes(1e3, 1e6);
  std::vector<Transfer> out;
  while (out.size() < count) {
    const VNode w = worker(random), v = worker(random);
    switch (out.size() % 5) {
      case 4: if (w != v) out.push_back({w, v, start(random), bytes(random)}); break;
      case 1: case 3: out.push_back({w, 0, start(random), bytes(random)}); break;
      default: out.push_back({0, w, start(random), bytes(random)});
    }
  }
  return out;
}

using Traffic = std::vector<Transfer> (*)(std::size_t nodes, std::size_t count, unsigned seed);

void expect_matches_reference(Sharing sharing, Traffic traffic = busy_traffic, std::size_t nodes = 12,
                              const ClusterModel* model = nullptr, const Links* links = nullptr, std::size_t count = 300) {
  const ClusterModel stars = star(nodes, sharing);
  const Links star_network = star_links(nodes);
  for (unsigned seed = 1; seed <= 3; ++seed) {
    const std::vector<Transfer> transfers = traffic(nodes, count, seed);
    Engine engine(model ? *model : stars);
    Clock clock(engine);
    Starter starter(engine, transfers, clock);
    for (std::size_t k = 0; k < transfers.size(); ++k) engine.timer(transfers[k].start, {&starter, k});
    while (engine.step()) {}
    const std::vector<double> want = reference_finishes(transfers, links ? *links : star_network, sharing);
    for (std::size_t k = 0; k < transfers.size(); ++k) {
      SCOPED_TRACE("seed " + std::to_string(seed) + ", transfer " + std::to_string(k));
      expect_near_relative(clock.ended.at(k), want[k]);
    }
  }
}

TEST(SimEngine, EqualSharingMatchesRecomputingEveryRateAtEveryEvent) { expect_matches_reference(Sharing::Equal); }
TEST(SimEngine, MaxMinSharingMatchesRecomputingEveryRateAtEveryEvent) { expect_matches_reference(Sharing::MaxMin); }
TEST(SimEngine, MaxMinSharingOfAMasterAndManyWorkersMatchesRecomputingEveryRate) {
  expect_matches_reference(Sharing::MaxMin, master_worker_traffic, 40);
}

// --- meshes (seed 002): XY routes, each link shared by the flows crossing it ---

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

TEST(SimEngine, EqualSharingOnAMeshMatchesRecomputingEveryRateAtEveryEvent) {
  const ClusterModel m = mesh(4, 3, Sharing::Equal, kBandwidth / 3);
  const Links links = mesh_links(m);
  expect_matches_reference(Sharing::Equal, busy_traffic, 12, &m, &links);
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

// --- segments (seed 003): each cluster's nodes share its segment, a router joins the clusters ---

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

TEST(SimEngine, SharingOnSegmentsMatchesRecomputingEveryRateAtEveryEvent) {
  for (const Sharing sharing : {Sharing::Equal, Sharing::MaxMin}) {
    const ClusterModel m = segmented({5, 4, 3}, sharing, kBandwidth / 2, kBandwidth / 3);
    const Links links = segment_links(m);
    expect_matches_reference(sharing, busy_traffic, 12, &m, &links);
  }
}

}  // namespace
}  // namespace dps::sim
