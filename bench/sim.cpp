// bench-sim: the simulator against SimGrid. First the cross-check: the same master-worker flow graph
// (split -> leaves on worker nodes -> merge, flow-controlled) simulated by our simulator and by SimGrid
// configured to the same model (peers/simgrid_flowgraph.cpp), on six scenarios; then the speed: our
// messages simulated per wall second on the scenario of the SimGrid peer program
// (peers/simgrid_splitmerge.cpp, `sg_splitmerge M N`), against the peer's from the same run.
//
//   bench-sim                                   # cross-check, then speed on 100000 messages, 8 workers
//   bench-sim --messages 1000000 --workers 1023 --peer off --sharing equal  # scale: 1024 virtual nodes
//   bench-sim --workers 1023 --mesh 32x32 --peer off   # the speed on a 32x32 mesh against the star's
//
// Ours runs in partial direct execution with NOALLOC: leaves charge flops / 1e9 s, payloads hold no data.
// Last line: {"msgs_per_s", "peer_msgs_per_s", "ratio", "max_rel_err", ...}.
#include "peer.hpp"
#include "support.hpp"

#include <dps/cli.hpp>
#include <dps/dps.hpp>
#include <dps/mesh.hpp>
#include <dps/sim/sim_backend.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Scenario {
  long workers = 8, messages = 100000;
  double bytes = 1000, result_bytes = 1000, flops = 1e6;
  long window = -1;  // -1: one per worker; 0: none
  double latency = 1e-4, bandwidth = 1.25e8;
  std::vector<double> speeds{1.0};
  dps::sim::Sharing sharing = dps::sim::Sharing::MaxMin;
  int mesh_width = 0, mesh_height = 0;  // > 0: the nodes on a mesh of routers (the master at a corner)

  long flow_window() const { return window < 0 ? workers : window; }
  std::string peer_arguments() const {
    std::ostringstream a;
    a.precision(17);
    a << " --workers " << workers << " --messages " << messages << " --bytes " << bytes << " --result-bytes "
      << result_bytes << " --flops " << flops << " --window " << flow_window() << " --latency " << latency
      << " --bandwidth " << bandwidth << " --speeds ";
    for (std::size_t i = 0; i < speeds.size(); ++i) a << (i ? "," : "") << speeds[i];
    return a.str();
  }
};

// A message of exactly `bytes` on the wire: the array's 8-byte size, then its data.
struct Message {
  dps::LargeArray<char> data;
  template <class A>
  void serialize(A& ar) {
    ar(data);
  }
  static Message of(double bytes) { return {dps::LargeArray<char>(static_cast<std::size_t>(bytes) - 8)}; }
};
struct Order {
  long messages = 0;
  double bytes = 0;
  template <class A>
  void serialize(A& ar) {
    ar(messages, bytes);
  }
};
struct Total {
  long results = 0;
  template <class A>
  void serialize(A& ar) {
    ar(results);
  }
};

struct Feed : dps::Split<Order, Message> {
  dps::Step execute(Order o) {
    for (long i = 0; i < o.messages; ++i) co_await post(Message::of(o.bytes));
  }
};
struct Work : dps::Leaf<Message, Message> {
  static inline double seconds = 1e-3, result_bytes = 1000;
  Message execute(const Message&) {
    dps::compute(seconds, [] {});
    return Message::of(result_bytes);
  }
};
struct Count : dps::Merge<Message, Total> {
  dps::Step execute(Message) {
    long n = 1;
    while (co_await next()) ++n;
    co_await post(Total{n});
  }
};

struct Outcome {
  double simulated_s = 0, wall_s = 0, peak_rss_mb = 0;
};

Outcome simulate(const Scenario& s) {
  dps::sim::ClusterModel model;
  model.groups = {dps::sim::NodeGroup{"master", 1, 1, 1.0}};
  for (long w = 0; w < s.workers; ++w) {
    const double speed = s.speeds[static_cast<std::size_t>(w) % s.speeds.size()];
    if (model.groups.size() > 1 && model.groups.back().speed == speed)
      ++model.groups.back().count;
    else
      model.groups.push_back({"workers" + std::to_string(model.groups.size()), 1, 1, speed});
  }
  model.network.latency = s.latency;
  model.network.bandwidth = s.bandwidth;
  model.network.sharing = s.sharing;
  if (s.mesh_width > 0) {
    model.network.topology = dps::sim::Topology::Mesh;
    model.network.mesh = {s.mesh_width, s.mesh_height, false, s.bandwidth, 0.0};
  }
  const auto nodes = static_cast<std::size_t>(s.workers + 1);
  auto backend = std::make_unique<dps::sim::SimBackend>(
      model, dps::sim::SimOptions{.pdexec = true, .noalloc = true, .nodes = nodes});
  const dps::sim::SimBackend& simulator = *backend;
  dps::Application app(std::move(backend));
  Work::seconds = s.flops / 1e9;
  Work::result_bytes = s.result_bytes;
  auto master = app.threads<dps::Stateless>("master", 1);
  auto workers = app.threads<dps::Stateless>("workers", 0);
  for (dps::NodeId n = 1; n < nodes; ++n) workers.add_on(n);
  auto feed = dps::op<Feed>(master).window(static_cast<std::uint32_t>(s.flow_window()));  // 0: none
  auto graph = app.graph(feed >> dps::op<Work>(workers) >> dps::op<Count>(master));
  const auto start = std::chrono::steady_clock::now();
  const Total t = graph.call(Order{s.messages, s.bytes}).get();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (t.results != s.messages) throw std::runtime_error("the merge counted " + std::to_string(t.results) + " results");
  return {app.now(), wall, simulator.report().peak_rss_mb};
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each scenario's line as it ends
  return dps::run_main("bench-sim", [&] {
    Scenario speed;
    std::string peer = "on", sharing = "maxmin", mesh;
    long repeat = 3;
    dps::Cli cli("bench-sim", "Cross-checks the simulator with SimGrid, then compares their speeds.");
    cli.option("--messages", speed.messages, "messages of the speed scenario (default 100000)")
        .option("--workers", speed.workers, "worker nodes of the speed scenario (default 8)")
        .option("--repeat", repeat, "runs of the speed scenario; the median counts (default 3)")
        .option("--sharing", sharing, "bandwidth sharing of the speed scenario: maxmin (default) or equal")
        .option("--peer", peer, "on (default): run SimGrid too; off: only ours (scale runs)")
        .option("--mesh", mesh, "WxH: the speed scenario on a mesh of W x H = workers + 1 nodes too, against the star's");
    std::vector<std::string> args(argv + 1, argv + argc);
    if (!cli.parse(args)) return 0;
    if (speed.messages < 1 || speed.workers < 1 || repeat < 1)
      throw std::invalid_argument("--messages, --workers and --repeat must be positive");
    if (sharing != "maxmin" && sharing != "equal") throw std::invalid_argument("--sharing is maxmin or equal");
    if (peer != "on" && peer != "off") throw std::invalid_argument("--peer is on or off");
    speed.sharing = sharing == "equal" ? dps::sim::Sharing::Equal : dps::sim::Sharing::MaxMin;
    Scenario on_mesh = speed;
    if (!mesh.empty()) {
      const dps::Mesh grid = dps::Mesh::parse("--mesh", mesh);
      on_mesh.mesh_width = grid.width();
      on_mesh.mesh_height = grid.height();
      if (grid.size() != static_cast<std::size_t>(speed.workers + 1))
        throw std::invalid_argument("--mesh " + mesh + " must hold the workers and the master: " + std::to_string(speed.workers + 1) +
                                    " nodes");
    }
    const bool with_peer = peer == "on";
#if !defined(DPS_SIMGRID_FLOWGRAPH)
    if (with_peer) throw std::runtime_error("built without SimGrid (libsimgrid-dev): run with --peer off");
#endif

    double max_rel_err = 0;
    if (with_peer) {
#if defined(DPS_SIMGRID_FLOWGRAPH)
      std::vector<std::pair<std::string, Scenario>> checks = {
          {"8 workers, 1 kB", {.workers = 8, .messages = 10000}},
          {"32 workers, 100 kB out", {.workers = 32, .messages = 20000, .bytes = 100000, .flops = 2e6}},
          {"4 workers, 1 MB out, 500 kB back",
           {.workers = 4, .messages = 5000, .bytes = 1e6, .result_bytes = 5e5, .flops = 1e7}},
          {"8 workers, speeds 1,2,0.5,4", {.workers = 8, .messages = 10000, .flops = 5e6, .speeds = {1, 2, 0.5, 4}}},
          {"4 workers, window 32 (more flows than workers)",
           {.workers = 4, .messages = 4000, .bytes = 200000, .window = 32}},
          {"16 workers, no window", {.workers = 16, .messages = 8000, .bytes = 50000, .window = 0}},
      };
      std::printf("%-48s %16s %16s %10s\n", "cross-check scenario", "ours [s]", "SimGrid [s]", "rel. err");
      for (const auto& [name, s] : checks) {
        const Outcome ours = simulate(s);
        const double theirs = field(run_peer(std::string(DPS_SIMGRID_FLOWGRAPH) + s.peer_arguments()), "simulated_s");
        const double err = std::fabs(ours.simulated_s - theirs) / theirs;
        max_rel_err = std::max(max_rel_err, err);
        std::printf("%-48s %16.9f %16.9f %10.2e\n", name.c_str(), ours.simulated_s, theirs, err);
      }
#endif
    }

    std::vector<double> ours_rate, peer_rate, mesh_rate;
    Outcome last;
    for (long i = 0; i < repeat; ++i) {
      last = simulate(speed);
      ours_rate.push_back(static_cast<double>(speed.messages) / last.wall_s);
      if (on_mesh.mesh_width > 0) mesh_rate.push_back(static_cast<double>(speed.messages) / simulate(on_mesh).wall_s);
#if defined(DPS_SIMGRID_SPLITMERGE)
      if (with_peer) {
        const std::string out = run_peer(std::string(DPS_SIMGRID_SPLITMERGE) + " " + std::to_string(speed.messages) +
                                         " " + std::to_string(speed.workers));
        peer_rate.push_back(field(out, "msgs_per_wall_s"));
      }
#endif
    }
    const double ours = median(ours_rate);
    const std::optional<double> theirs = peer_rate.empty() ? std::nullopt : std::optional(median(peer_rate));
    const std::optional<double> on_the_mesh = mesh_rate.empty() ? std::nullopt : std::optional(median(mesh_rate));
    std::printf("speed: %ld messages, %ld workers: ours %.0f messages/s (%.3f s simulated in %.3f s)", speed.messages,
                speed.workers, ours, last.simulated_s, last.wall_s);
    if (theirs) std::printf(", SimGrid %.0f messages/s", *theirs);
    if (on_the_mesh)
      std::printf(", on the %s mesh %.0f messages/s (%.2f of the star's)", mesh.c_str(), *on_the_mesh,
                  *on_the_mesh / ours);
    std::printf("\n");
    // Without SimGrid (--peer off) its figures are null, and so are the mesh's without --mesh.
    std::printf(
        "{\"messages\": %ld, \"workers\": %ld, \"msgs_per_s\": %.0f, \"peer_msgs_per_s\": %s, \"ratio\": %s, "
        "\"max_rel_err\": %s, \"simulated_s\": %.9g, \"wall_s\": %.3f, \"peak_rss_mb\": %.1f, \"mesh_msgs_per_s\": %s, "
        "\"mesh_ratio\": %s}\n",
        speed.messages, speed.workers, ours, number_or_null(theirs, "%.0f").c_str(),
        number_or_null(theirs ? std::optional(ours / *theirs) : std::nullopt, "%.2f").c_str(),
        number_or_null(with_peer ? std::optional(max_rel_err) : std::nullopt, "%.3e").c_str(), last.simulated_s,
        last.wall_s, last.peak_rss_mb, number_or_null(on_the_mesh, "%.0f").c_str(),
        number_or_null(on_the_mesh ? std::optional(*on_the_mesh / ours) : std::nullopt, "%.2f").c_str());
    return 0;
  });
}
