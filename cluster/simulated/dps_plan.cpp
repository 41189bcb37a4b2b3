// dps-plan: before submitting a job, its predicted time and dynamic efficiency at each node count, from
// its -sim program on a cluster model, and the size to ask for (where one more step stops paying). The
// last line is JSON: sizes (nodes, predicted_s, efficiency) and recommended_nodes.
//
//   dps-plan --model cluster.json --max 8 -- stencil-sim --n 4096 --iterations 200 --pdexec --sweep-cost 0.6
#include <dps/cli.hpp>
#include <dps/cluster/plan.hpp>

#include <algorithm>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  return dps::run_main("dps-plan", [&] {
    std::vector<std::string> options(argv + 1, argv + argc);
    const std::vector<std::string> command = dps::words_after_dashes(options);
    std::string model;
    long max = 8, min = 1;
    double threshold = 0.05;
    dps::Cli cli(
        "dps-plan",
        "Predicts a job's time at each node count and recommends one: dps-plan [options] -- PROGRAM-sim ARGS...");
    cli.option("--model", model,
               "FILE  the cluster model (calibrate's, of the hosts it will run on; default: the program's)")
        .option("--min", min, "N  the fewest nodes to try (default 1)")
        .option("--max", max, "N  the most nodes to try (default 8)")
        .option("--threshold", threshold,
                "T  the share of the time one more node must cut to be worth it (default 0.05)");
    if (!cli.parse(options)) return 0;
    if (command.empty()) throw std::invalid_argument("no program: dps-plan [options] -- PROGRAM-sim ARGS...");
    if (min < 1 || max < min)
      throw std::invalid_argument("--min and --max expect 1 <= MIN <= MAX, got " + std::to_string(min) + " and " +
                                  std::to_string(max));
    if (!(threshold >= 0 && threshold < 1)) throw std::invalid_argument("--threshold expects a share from 0 to 1");
    dps::cluster::PlanOptions o{.sizes = {}, .model = model, .threshold = threshold};
    for (long n = min; n <= max; ++n) o.sizes.push_back(static_cast<std::size_t>(n));
    const dps::cluster::Plan p = dps::cluster::plan(command, o);
    std::printf("%6s %12s %9s %11s\n", "nodes", "predicted_s", "speedup", "efficiency");
    std::string sizes;
    for (const auto& s : p.sizes) {
      std::printf("%6zu %12.4f %9.2f %11.3f%s\n", s.nodes, s.predicted_s, p.sizes.front().predicted_s / s.predicted_s,
                  s.efficiency, s.nodes == p.recommended ? "   <- recommended" : "");
      char item[128];
      std::snprintf(item, sizeof item, "%s{\"nodes\": %zu, \"predicted_s\": %.6g, \"efficiency\": %.4f}",
                    sizes.empty() ? "" : ", ", s.nodes, s.predicted_s, s.efficiency);
      sizes += item;
    }
    std::printf("{\"program\": \"%s\", \"sizes\": [%s], \"recommended_nodes\": %zu}\n", command.front().c_str(),
                sizes.c_str(), p.recommended);
    return 0;
  });
}
