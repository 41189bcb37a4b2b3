// The simulator's engine checked against a brute-force reference that recomputes every rate at every
// event, and what the engine's tests share: a star of known latency and bandwidth, a clock of the
// actions' ends, relative comparison. Used by sim_engine_test (the star) and sim_topology_test
// (meshes, tori, segments).
//
//   expect_matches_reference(Sharing::MaxMin, busy_traffic, 12, &model, &links);
#pragma once

#include <dps/sim/engine.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace dps::sim::checks {

constexpr double kLatency = 1e-4;      // s
constexpr double kBandwidth = 1.25e8;  // bytes/s
constexpr double kTolerance = 1e-9;    // relative

inline ClusterModel star(std::size_t nodes, Sharing sharing = Sharing::Equal) {
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

inline void expect_near_relative(double got, double want) { EXPECT_NEAR(got, want, want * kTolerance) << "want " << want; }


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

inline Links star_links(std::size_t nodes) {  // 2v: v's outgoing link, 2v + 1: its incoming one
  return {std::vector<double>(2 * nodes, kBandwidth),
          [](VNode f, VNode t) { return std::vector<std::size_t>{2 * f, 2 * t + 1}; },
          [](VNode, VNode) { return kLatency; }};
}

// Rates of the flows in their bandwidth phase, each given by its links, as the model defines them.
inline std::vector<double> reference_rates(const std::vector<std::vector<std::size_t>>& flows, const std::vector<double>& capacity,
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

inline std::vector<double> reference_finishes(const std::vector<Transfer>& transfers, const Links& links, Sharing sharing) {
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
inline std::vector<Transfer> busy_traffic(std::size_t nodes, std::size_t count, unsigned seed) {
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
inline std::vector<Transfer> master_worker_traffic(std::size_t nodes, std::size_t count, unsigned seed) {
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

inline void expect_matches_reference(Sharing sharing, Traffic traffic = busy_traffic, std::size_t nodes = 12,
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

}  // namespace dps::sim::checks
