// bench-pingpong: one object bounced between two node processes over TCP loopback, one in flight at a
// time (a split with a window of 1, a leaf on the other node, the merge back home): one-way latency
// for 8 bytes and bandwidth for 1 MiB, against Open MPI's ping-pong (peers/mpi_pingpong.c, --mca btl
// tcp,self) run in the same benchmark. Repetitions interleave both sides; the last line is JSON with
// the medians. A peer that fails stops the benchmark (exit code 2).
//
//   bench-pingpong --repeat 9
//   bench-pingpong --mpiexec /opt/openmpi/bin/mpirun
#include "peer.hpp"
#include "support.hpp"

#include <dps/cli.hpp>
#include <dps/dps.hpp>
#include <dps/large_array.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Ping {
  dps::LargeArray<char> data;
  template <class A>
  void serialize(A& a) {
    a(data);
  }
};
struct Bounce {
  long rounds;
  std::size_t bytes;
  template <class A>
  void serialize(A& a) {
    a(rounds, bytes);
  }
};

struct Serve : dps::Split<Bounce, Ping> {
  dps::Step execute(Bounce b) {
    for (long i = 0; i < b.rounds; ++i) {
      Ping p{dps::LargeArray<char>(b.bytes)};
      co_await post(std::move(p));
    }
  }
};
struct Echo : dps::Leaf<Ping, Ping> {
  Ping execute(Ping p) { return p; }
};
struct Catch : dps::Merge<Ping, Bounce> {
  dps::Step execute(Ping p) {
    long n = 1;
    std::size_t bytes = p.data.size();
    while (auto q = co_await next()) ++n;
    co_await post(Bounce{n, bytes});
  }
};

#ifdef DPS_MPI_PINGPONG
// Open MPI's one-way latency (µs) for 8 B and bandwidth (MB/s) for 1 MiB, from one run of its ping-pong.
struct MpiFigures {
  double latency_us = 0, bandwidth = 0;
};
MpiFigures run_mpi(const std::string& command) {
  MpiFigures f;
  bool lat = false, bw = false;
  for (const std::string& line : run_lines(command)) {
    int size = 0;
    double us = 0, mbps = 0;
    if (std::sscanf(line.c_str(), "size=%d oneway_us=%lf MBps=%lf", &size, &us, &mbps) != 3) continue;
    if (size == 8) f.latency_us = us, lat = true;
    if (size == 1048576) f.bandwidth = mbps, bw = true;
  }
  if (!lat || !bw) throw std::runtime_error("'" + command + "' printed no figures for 8 B and 1 MiB");
  return f;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  return dps::run_main("bench-pingpong", [&] {
    const auto application = two_node_application(argc, argv);
    dps::Application& app = *application;

    long rounds = 20000, big_rounds = 500, repeat = 5;
    dps::Cli cli("bench-pingpong",
                 "Ping-pong between two node processes over TCP loopback, against Open MPI's from the same run.");
    cli.option("--rounds", rounds, "round trips of 8 bytes per measure (default 20000)")
        .option("--big-rounds", big_rounds, "round trips of 1 MiB per measure (default 500)")
        .option("--repeat", repeat, "measures of each side (default 5)");
#ifdef DPS_MPI_PINGPONG
    std::string mpiexec = DPS_MPIEXEC;
    cli.option("--mpiexec", mpiexec, "the MPI launcher that runs the peer (default " DPS_MPIEXEC ")");
    const bool with_peer = true;
#else
    const bool with_peer = false;  // built without MPI
#endif
    if (!cli.parse(app.args(), "")) return 0;
    if (rounds < 1 || big_rounds < 1 || repeat < 1)
      throw std::invalid_argument("--rounds, --big-rounds and --repeat must be positive");

    auto home = app.threads<dps::Stateless>("home", 1);
    auto away = app.threads<dps::Stateless>("away", 0);
    away.add_on(1);
    auto graph = app.graph(dps::op<Serve>(home).window(1) >> dps::op<Echo>(away) >> dps::op<Catch>(home));
    auto one_way = [&](long n, std::size_t bytes) {
      const auto t0 = std::chrono::steady_clock::now();
      const Bounce b = graph.call(Bounce{n, bytes}).get();
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      if (b.rounds != n || b.bytes != bytes) throw std::runtime_error("lost pings");
      return s / static_cast<double>(2 * n);
    };
    one_way(1000, 8);  // warm-up
    one_way(20, 1 << 20);

    std::vector<double> lat, bw, peer_lat, peer_bw;
    for (long r = 0; r < repeat; ++r) {
      lat.push_back(one_way(rounds, 8) * 1e6);
      bw.push_back((1 << 20) / one_way(big_rounds, 1 << 20) / 1e6);
#ifdef DPS_MPI_PINGPONG
      const MpiFigures mpi = run_mpi(mpi_command(mpiexec, 2, DPS_MPI_PINGPONG));
      peer_lat.push_back(mpi.latency_us), peer_bw.push_back(mpi.bandwidth);
      std::printf("run %ld: dps %.2f us %.0f MB/s, mpi %.2f us %.0f MB/s\n", r + 1, lat.back(), bw.back(),
                  mpi.latency_us, mpi.bandwidth);
#else
      std::printf("run %ld: dps %.2f us %.0f MB/s\n", r + 1, lat.back(), bw.back());
#endif
      std::fflush(stdout);
    }
    const double l = median(lat), b = median(bw);
    if (!with_peer) std::printf("no peer: built without MPI\n");
    std::optional<double> pl, pb;
    if (with_peer) pl = median(peer_lat), pb = median(peer_bw);
    std::printf(
        "{\"latency_us\": %.2f, \"bandwidth_MBps\": %.0f, \"peer_latency_us\": %s, \"peer_bandwidth_MBps\": %s, "
        "\"latency_ratio\": %s, \"bandwidth_ratio\": %s}\n",
        l, b, number_or_null(pl, "%.2f").c_str(), number_or_null(pb, "%.0f").c_str(),
        number_or_null(pl ? std::optional(l / *pl) : std::nullopt).c_str(),
        number_or_null(pb ? std::optional(b / *pb) : std::nullopt).c_str());
    return 0;
  });
}
