// bench-pingpong: one object bounced between two node processes over TCP loopback, one in flight at a
// time (a split with a window of 1, a leaf on the other node, the merge back home): one-way latency
// for 8 bytes and bandwidth for 1 MiB, against Open MPI's ping-pong (peers/mpi_pingpong.c,
// --mca btl tcp,self) run in the same benchmark. Repetitions interleave both sides; the last line is
// JSON with the medians.
#include "support.hpp"

#include <dps/cli.hpp>
#include <dps/dps.hpp>
#include <dps/large_array.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
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


// Open MPI's one-way latency (µs) for 8 B and bandwidth (MB/s) for 1 MiB, or nothing without MPI.
bool run_mpi(double& latency_us, double& bandwidth) {
#ifdef DPS_MPI_PINGPONG
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const std::string cmd = std::string(DPS_MPIEXEC) + " -np 2 --mca btl tcp,self " + DPS_MPI_PINGPONG + " 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE*)> out(popen(cmd.c_str(), "r"), pclose);
  if (!out) return false;
  std::array<char, 256> line;
  bool lat = false, bw = false;
  while (fgets(line.data(), line.size(), out.get())) {
    int size = 0;
    double us = 0, mbps = 0;
    if (std::sscanf(line.data(), "size=%d oneway_us=%lf MBps=%lf", &size, &us, &mbps) != 3) continue;
    if (size == 8) latency_us = us, lat = true;
    if (size == 1048576) bandwidth = mbps, bw = true;
  }
  return lat && bw;
#else
  (void)latency_us, (void)bandwidth;
  return false;
#endif
}

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
    if (!cli.parse(app.args(), "")) return 0;

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
      double pl = 0, pb = 0;
      if (run_mpi(pl, pb)) peer_lat.push_back(pl), peer_bw.push_back(pb);
      std::printf("run %ld: dps %.2f us %.0f MB/s, mpi %.2f us %.0f MB/s\n", r + 1, lat.back(), bw.back(), pl, pb);
      std::fflush(stdout);
    }
    const double l = median(lat), b = median(bw);
    const double pl = peer_lat.empty() ? 0 : median(peer_lat), pb = peer_bw.empty() ? 0 : median(peer_bw);
    std::printf(
        "{\"latency_us\": %.2f, \"bandwidth_MBps\": %.0f, \"peer_latency_us\": %.2f, \"peer_bandwidth_MBps\": %.0f, "
        "\"latency_ratio\": %.3f, \"bandwidth_ratio\": %.3f}\n",
        l, b, pl, pb, pl > 0 ? l / pl : 0.0, pb > 0 ? b / pb : 0.0);
    return 0;
  });
}
