// bench-ft: what fault tolerance costs without a failure. LU (n = 4096) and the stencil (n = 4096,
// 200 iterations) on 2 node processes over TCP loopback, each with --fault-tolerance and without it,
// interleaved, medians of the repetitions; the results must not differ.
//
//   bench-ft                              # 5 repetitions, a checkpoint a second (the default)
//   bench-ft --repeat 3 --checkpoint-every 0.2
//
// The last line is JSON: overhead_lu and overhead_stencil (fractions, Goal <= 0.05), with the times
// they come from, and whether each result was the same with and without.
#include "median.hpp"
#include "peer.hpp"

#include <dps/cli.hpp>

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
    dps::Cli cli("bench-ft", "LU and the stencil on 2 node processes, with --fault-tolerance and without.");
    cli.option("--repeat", repeat, "repetitions; medians count (default 5)")
        .option("--checkpoint-every", every, "S  seconds between a thread's checkpoints (default 1, the option's)");
    if (!cli.parse(argc, argv)) return 0;
    if (repeat < 1) throw std::invalid_argument("--repeat must be positive");
    if (!(every > 0)) throw std::invalid_argument("--checkpoint-every must be positive");
    const std::string ft = "--fault-tolerance --checkpoint-every " + std::to_string(every);
    Side lu, stencil;
    for (long k = 0; k < repeat; ++k) {
      measure(lu, std::string(DPS_LU) + " --nodes 2 --n 4096", ft, "residual");
      measure(stencil, std::string(DPS_STENCIL) + " --nodes 2 --n 4096 --iterations 200", ft, "checksum");
    }
    std::printf(
        "{\"checkpoint_every\": %g, \"overhead_lu\": %.4f, \"lu_s\": %.3f, \"lu_ft_s\": %.3f, \"lu_same\": %s, "
        "\"overhead_stencil\": %.4f, \"stencil_s\": %.3f, \"stencil_ft_s\": %.3f, \"stencil_same\": %s, "
        "\"goal\": 0.05}\n",
        every, lu.overhead(), median(lu.plain), median(lu.tolerant), lu.same ? "true" : "false", stencil.overhead(),
        median(stencil.plain), median(stencil.tolerant), stencil.same ? "true" : "false");
    return 0;
  });
}
