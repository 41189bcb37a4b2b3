// bench-ft: what fault tolerance costs without a failure. LU (n = 4096) and the stencil (n = 4096,
// 200 iterations) on 2 node processes over TCP loopback, each with --fault-tolerance and without it,
// interleaved, medians of the repetitions; the results must not differ. Then bench-checkpoint: a
// checkpoint of 256 MiB against copying it once over loopback, and (--netns, as root) over a 1 Gbit/s
// link between hosts of a namespace cluster.
//
//   bench-ft                              # 5 repetitions, a checkpoint a second (the default)
//   bench-ft --repeat 3 --checkpoint-every 0.2 --netns
//
// The last line is JSON: overhead_lu and overhead_stencil (fractions, Goal <= 0.05), with the times
// they come from, and whether each result was the same with and without; checkpoint_ratio (Goal <=
// 1.5, the largest of loopback's and the namespace cluster's) with each.
#include "median.hpp"
#include "peer.hpp"

#include <dps/cli.hpp>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace {

// A field's text as printed (the checksum, the residual): compared digit for digit.
std::string text_of(const std::string& line, const std::string& name) {
  const auto at = line.find("\"" + name + "\"");
  if (at == std::string::npos) throw std::runtime_error("no " + name + " in '" + line + "'");
  const auto from = line.find_first_not_of(" :", at + name.size() + 2);
  return line.substr(from, line.find_first_of(" ,}\n", from) - from);
}

struct Side {
  std::vector<double> plain, tolerant;  // seconds
  bool same = true;
  double overhead() const { return median(tolerant) / median(plain) - 1; }
};

void measure(Side& side, const std::string& command, const std::string& ft, const std::string& result) {
  const std::string plain = run_peer(command), tolerant = run_peer(command + " " + ft);
  side.plain.push_back(field(plain, "time_s"));
  side.tolerant.push_back(field(tolerant, "time_s"));
  side.same = side.same && text_of(plain, result) == text_of(tolerant, result);
  std::printf("%s: %.3f s, with fault tolerance %.3f s (%s %s / %s)\n", command.c_str(), side.plain.back(),
              side.tolerant.back(), result.c_str(), text_of(plain, result).c_str(), text_of(tolerant, result).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return dps::run_main("bench-ft", [&] {
    long repeat = 5;
    double every = 1;
    bool netns = false;
    dps::Cli cli("bench-ft", "LU and the stencil on 2 node processes, with --fault-tolerance and without.");
    cli.option("--repeat", repeat, "repetitions; medians count (default 5)")
        .option("--checkpoint-every", every, "S  seconds between a thread's checkpoints (default 1, the option's)")
        .flag("--netns", netns, "also a checkpoint over a 1 Gbit/s link of a namespace cluster (needs root)");
    if (!cli.parse(argc, argv)) return 0;
    if (repeat < 1) throw std::invalid_argument("--repeat must be positive");
    if (!(every > 0)) throw std::invalid_argument("--checkpoint-every must be positive");
    const std::string ft = "--fault-tolerance --checkpoint-every " + std::to_string(every);
    Side lu, stencil;
    for (long k = 0; k < repeat; ++k) {
      measure(lu, std::string(DPS_LU) + " --nodes 2 --n 4096", ft, "residual");
      measure(stencil, std::string(DPS_STENCIL) + " --nodes 2 --n 4096 --iterations 200", ft, "checksum");
    }
    const std::string checkpoint = std::string(DPS_BENCH_CHECKPOINT) + " --repeat " + std::to_string(repeat);
    const double loopback = field(run_peer(checkpoint), "checkpoint_ratio");
    std::printf("checkpoint of 256 MiB on loopback: %.3f times the copy\n", loopback);
    std::string over_link = "null";
    if (netns) {
      const std::string script = std::string(DPS_SOURCE_DIR) + "/scripts/netns-cluster";
      const std::string hosts = "/tmp/bench-ft-hosts";
      run_lines(script + " up 3 --rate 1gbit --prefix dpsft- && printf '10.77.0.1\\n10.77.0.2\\n10.77.0.3\\n' > " +
                hosts);
      std::string line;
      try {
        line = run_peer("DPS_RSH=\"" + script + " rsh --prefix dpsft-\" " + script + " exec --prefix dpsft- 0 " +
                        checkpoint + " --hostfile " + hosts + " --link-mbit 1000");
      } catch (...) {
        run_lines(script + " down --prefix dpsft-");
        throw;
      }
      run_lines(script + " down --prefix dpsft-");
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.3f", field(line, "checkpoint_ratio"));
      over_link = ratio;
      std::printf("checkpoint of 256 MiB over 1 Gbit/s: %s times the copy\n", over_link.c_str());
    }
    std::printf(
        "{\"checkpoint_every\": %g, \"overhead_lu\": %.4f, \"lu_s\": %.3f, \"lu_ft_s\": %.3f, \"lu_same\": %s, "
        "\"overhead_stencil\": %.4f, \"stencil_s\": %.3f, \"stencil_ft_s\": %.3f, \"stencil_same\": %s, "
        "\"goal\": 0.05, \"checkpoint_ratio\": %.3f, \"checkpoint_ratio_loopback\": %.3f, "
        "\"checkpoint_ratio_1gbit\": %s, \"checkpoint_goal\": 1.5}\n",
        every, lu.overhead(), median(lu.plain), median(lu.tolerant), lu.same ? "true" : "false", stencil.overhead(),
        median(stencil.plain), median(stencil.tolerant), stencil.same ? "true" : "false",
        netns ? std::max(loopback, std::stod(over_link)) : loopback, loopback, over_link.c_str());
    return 0;
  });
}
