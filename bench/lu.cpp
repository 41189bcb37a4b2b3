// bench-lu: block LU on 2 node processes over TCP loopback against ScaLAPACK pdgetrf on 2 MPI
// processes and LAPACK dgetrf on 2 threads, from the same run (interleaved repetitions, medians);
// then the simulator's figures: partial direct execution without data of n = 2592, r = 81 on 8
// nodes (time and memory), and direct execution's overhead over a serial run.
//
//   bench-lu                       # n = 2592 and 4096, 3 repetitions
//   bench-lu --sizes 4096 --repeat 5 --lu-options "--r 256 --window 16"
//
// The last line is JSON: gflops, scalapack_gflops and lapack_gflops are those of n = 4096.
#include "median.hpp"
#include "peer.hpp"

#include <dps/cli.hpp>

#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Figures {
  std::vector<double> ours, scalapack, lapack;
};

double wall_seconds(const std::string& command, std::string* last = nullptr) {
  const auto start = std::chrono::steady_clock::now();
  const std::string line = run_peer(command);
  if (last) *last = line;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string peer_or_none(const std::vector<double>& v) {
  return number_or_null(v.empty() ? std::nullopt : std::optional(median(v)), "%.3f");
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return dps::run_main("bench-lu", [&] {
    std::string sizes = "2592,4096", lu_options, peers = "on";
    long repeat = 3;
    dps::Cli cli("bench-lu", "Block LU on 2 node processes against ScaLAPACK (2 MPI processes) and LAPACK (2 threads).");
    cli.option("--sizes", sizes, "matrix orders, comma separated (default 2592,4096)")
        .option("--repeat", repeat, "repetitions; medians count (default 3)")
        .option("--lu-options", lu_options, "more options for lu (default none: lu picks its variant and block size)")
        .option("--peers", peers, "on (default) or off");
#ifdef DPS_SCALAPACK_LU
    std::string mpiexec = DPS_MPIEXEC;
    cli.option("--mpiexec", mpiexec, "the MPI launcher that runs ScaLAPACK (default " DPS_MPIEXEC ")");
#endif
    if (!cli.parse(argc, argv)) return 0;
    if (repeat < 1) throw std::invalid_argument("--repeat must be positive");
    if (peers != "on" && peers != "off") throw std::invalid_argument("--peers is on or off");
    std::vector<int> orders;
    std::stringstream list(sizes);
    for (std::string item; std::getline(list, item, ',');) orders.push_back(std::stoi(item));

    std::map<int, Figures> figures;
    std::string last_ours;
    for (long k = 0; k < repeat; ++k)
      for (const int n : orders) {
        Figures& f = figures[n];
        // The residual is checked on the first repetition only (it is not timed, but takes a while).
        const std::string ours = run_peer(std::string(DPS_LU) + " --nodes 2 --n " + std::to_string(n) + " " + lu_options +
                                          (k == 0 ? "" : " --no-check") + " 2>&1");
        f.ours.push_back(field(ours, "gflops"));
        if (k == 0) last_ours = ours;
        std::printf("n=%d ours: %s\n", n, ours.c_str());
        if (peers != "on") continue;
#ifdef DPS_LAPACK_LU
        f.lapack.push_back(field(run_peer("OPENBLAS_NUM_THREADS=2 " DPS_LAPACK_LU " " + std::to_string(n)), "gflops"));
#endif
#ifdef DPS_SCALAPACK_LU
        f.scalapack.push_back(field(run_peer("OPENBLAS_NUM_THREADS=1 " +
                                             mpi_command(mpiexec, 2, DPS_SCALAPACK_LU " " + std::to_string(n) + " 64")),
                                    "gflops"));
#endif
        std::printf("n=%d lapack %s scalapack %s GFLOP/s\n", n, f.lapack.empty() ? "-" : std::to_string(f.lapack.back()).c_str(),
                    f.scalapack.empty() ? "-" : std::to_string(f.scalapack.back()).c_str());
      }

    // The simulator: partial direct execution without data (Schaeli, Gerlach & Hersch, "A simulator for adaptive
    // parallel applications", §7, ~22 000 operations).
    const std::vector<std::string> pdexec =
        run_lines(std::string(DPS_LU_SIM) + " --nodes 8 --n 2592 --r 81 --variant pipelined --pdexec --noalloc 2>&1");
    if (pdexec.size() < 2) throw std::runtime_error("lu-sim printed no report");
    const std::string& report = pdexec[pdexec.size() - 2];
    const double pdexec_s = field(report, "wall_s"), pdexec_mb = field(report, "peak_rss_mb");
    std::printf("simulation, PDEXEC NOALLOC n=2592 r=81 8 nodes: %s\n", report.c_str());
    // Direct execution against the serial run of the same program (Schaeli et al., Table 1: basic, r = 216).
    std::vector<double> simulated, serial;
    for (long k = 0; k < repeat; ++k) {
      simulated.push_back(wall_seconds(std::string(DPS_LU_SIM) + " --nodes 8 --n 2592 --r 216 --variant basic --no-check"));
      serial.push_back(wall_seconds(std::string(DPS_LU) +
                                    " --local --nodes 1 --workers 1 --n 2592 --r 216 --variant basic --no-check"));
    }
    const double overhead = median(simulated) / median(serial) - 1;
    std::printf("direct execution: simulated %.3f s, serial %.3f s: overhead %.1f %%\n", median(simulated), median(serial),
                100 * overhead);

    const int big = orders.back();
    const Figures& f = figures[big];
    std::printf("{\"n\": %d, \"gflops\": %.3f, \"scalapack_gflops\": %s, \"lapack_gflops\": %s, ", big, median(f.ours),
                peer_or_none(f.scalapack).c_str(), peer_or_none(f.lapack).c_str());
    for (const auto& [n, g] : figures)
      if (n != big)
        std::printf("\"n%d\": {\"gflops\": %.3f, \"scalapack_gflops\": %s, \"lapack_gflops\": %s}, ", n, median(g.ours),
                    peer_or_none(g.scalapack).c_str(), peer_or_none(g.lapack).c_str());
    std::printf("\"sim_pdexec_s\": %.3f, \"sim_pdexec_mb\": %.1f, \"sim_direct_overhead\": %.4f}\n", pdexec_s, pdexec_mb,
                overhead);
    return 0;
  });
}
