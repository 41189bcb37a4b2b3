// dps-submit: queues a DPS program with the scheduler daemon (dps-scheduler) and prints its id, as the
// last line's JSON.
//
//   dps-submit --min 2 --max 6 --walltime 600 --output stencil.out -- stencil --n 4096 --resize-every 50
#include "client.hpp"

#include <dps/cli.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  return dps::run_main("dps-submit", [&] {
    std::vector<std::string> options(argv + 1, argv + argc);
    const std::vector<std::string> command = dps::words_after_dashes(options);
    std::string state, priority, output, error;
    long nodes = 0, min = 0, max = 0;
    double walltime = 3600;
    bool fixed = false;
    dps::Cli cli("dps-submit",
                 "Queues a DPS program with the scheduler daemon: dps-submit [options] -- PROGRAM ARGS...");
    cli.option("--nodes", nodes, "N  nodes it runs on throughout (a static job)")
        .option("--min", min, "N  nodes it starts on, a malleable job (default 1)")
        .option("--max", max, "M  the most nodes it may grow to (default: the pool's)")
        .flag("--static", fixed, "never resized (with --min: at that size)")
        .option("--walltime", walltime, "S  seconds after which it is killed (default 3600)")
        .option("--priority", priority, "CLASS  its class, one of the daemon's --classes (default its first)")
        .option("--output", output, "FILE  its standard output (default: the daemon's --logs, job-ID.out)")
        .option("--error", error, "FILE  its standard error (default: job-ID.err there)")
        .option("--state", state,
                "DIR  the daemon's state folder (default $DPS_SCHEDULER_STATE, else ~/.dps/scheduler)");
    if (!cli.parse(options)) return 0;
    if (command.empty()) throw std::invalid_argument("no program: dps-submit [options] -- PROGRAM ARGS...");
    if (nodes && (min || max)) throw std::invalid_argument("--nodes is a static job's size: no --min or --max with it");
    if (min && max && min > max)
      throw std::invalid_argument("--min " + std::to_string(min) + " is above --max " + std::to_string(max));
    nlohmann::json job{{"kind", "application"},
                       {"size", nodes ? nodes : std::max(min, 1L)},
                       {"walltime", walltime},
                       {"resizable", !nodes && !fixed},
                       {"command", command}};
    if (max) job["max_size"] = max;
    if (!priority.empty()) job["class"] = priority;
    nlohmann::json request{{"job", job}};
    const auto absolute = [](const std::string& file) { return std::filesystem::absolute(file).string(); };
    if (!output.empty()) request["output"] = absolute(output);
    if (!error.empty()) request["error"] = absolute(error);
    dps::cluster::Client daemon{dps::cluster::StateFolder(state)};
    const auto answer = daemon.ask("submit " + request.dump());
    std::printf("{\"id\": %s}\n", answer.empty() ? "null" : answer.back().c_str());
    return 0;
  });
}
