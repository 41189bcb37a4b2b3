// bench-stencil: the stencil (5-point Jacobi, n = 4096, 200 iterations) on 2 node processes over TCP
// loopback against the MPI peer on 2 ranks (peers/mpi_jacobi.c, --mca btl tcp,self, the
// textbook MPI_Sendrecv strips), and on 1 node against 1 rank, from the same run (interleaved
// repetitions, medians). Both print the sum of the interior to 11 digits: they must agree.
//
//   bench-stencil                        # 5 repetitions
//   bench-stencil --n 2048 --repeat 3 --stencil-options "--decomposition blocks"
//
// The last line is JSON: mlups, peer_mlups, ratio, checksum_equal, and one_node's.
#include "median.hpp"
#include "peer.hpp"

#include <dps/cli.hpp>

#include <cstdio>
#include <string>
#include <vector>

namespace {

// The checksum as printed (%.10e by both): compared as text, digit for digit.
std::string checksum_text(const std::string& line) {
  const auto at = line.find("checksum");
  if (at == std::string::npos) throw std::runtime_error("no checksum in '" + line + "'");
  const auto from = line.find_first_not_of(" =:\"", at + 8);
  return line.substr(from, line.find_first_of(" ,}\n", from) - from);
}

struct Side {
  std::vector<double> ours, peer;
  bool checksums_equal = true;
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return dps::run_main("bench-stencil", [&] {
    long n = 4096, iterations = 200, repeat = 5;
    std::string options, mpiexec = DPS_MPIEXEC;
    dps::Cli cli("bench-stencil", "The stencil on 2 node processes (and 1) against MPI Jacobi on 2 ranks (and 1).");
    cli.option("--n", n, "grid size (default 4096)")
        .option("--iterations", iterations, "iterations (default 200)")
        .option("--repeat", repeat, "repetitions; medians count (default 5)")
        .option("--stencil-options", options, "more options for stencil (default none)")
        .option("--mpiexec", mpiexec, "the MPI launcher that runs the peer (default " DPS_MPIEXEC ")");
    if (!cli.parse(argc, argv)) return 0;
    if (repeat < 1) throw std::invalid_argument("--repeat must be positive");
    const std::string size = " " + std::to_string(n) + " " + std::to_string(iterations);
    Side two, one;
    for (long k = 0; k < repeat; ++k)
      for (int nodes : {2, 1}) {
        Side& side = nodes == 2 ? two : one;
        const std::string ours = run_peer(std::string(DPS_STENCIL) + " --nodes " + std::to_string(nodes) + " --n " +
                                          std::to_string(n) + " --iterations " + std::to_string(iterations) + " " + options);
        const std::string peer = run_peer(mpi_command(mpiexec, nodes, DPS_MPI_JACOBI + size));
        side.ours.push_back(field(ours, "mlups"));
        side.peer.push_back(field(peer, "mlups"));
        side.checksums_equal = side.checksums_equal && checksum_text(ours) == checksum_text(peer);
        std::printf("%d node%s: ours %.1f MLUPS (checksum %s), peer %.1f MLUPS (checksum %s)\n", nodes, nodes > 1 ? "s" : "",
                    side.ours.back(), checksum_text(ours).c_str(), side.peer.back(), checksum_text(peer).c_str());
      }
    std::printf("{\"n\": %ld, \"iterations\": %ld, \"mlups\": %.1f, \"peer_mlups\": %.1f, \"ratio\": %.3f, \"checksum_equal\": %s, "
                "\"one_node\": {\"mlups\": %.1f, \"peer_mlups\": %.1f, \"ratio\": %.3f, \"checksum_equal\": %s}}\n",
                n, iterations, median(two.ours), median(two.peer), median(two.ours) / median(two.peer),
                two.checksums_equal ? "true" : "false", median(one.ours), median(one.peer),
                median(one.ours) / median(one.peer), one.checksums_equal ? "true" : "false");
    return 0;
  });
}
