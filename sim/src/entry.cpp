// The backend of dps::Application(argc, argv) in programs linked with dps::sim (the <app>-sim
// executables, and the applications of a -DSIM=ON build): the simulated cluster of --model, or the default one.
#include "dps/application.hpp"
#include "dps/cli.hpp"
#include "dps/sim/sim_backend.hpp"
#include "dps/job_protocol.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

namespace dps::detail {

const char* command_line_backend_help() {
  return "  --nodes V           virtual nodes the application starts on (default: all of the model's, or 1)\n"
         "  --model FILE        the simulated cluster, JSON (default: 64 single-core nodes, 50 us, 117.5 MB/s)\n"
         "  --set PATH=VALUE    change a field of the model, e.g. --set network.sharing=maxmin\n"
         "  --pdexec            partial direct execution: dps::compute charges its estimate instead of running\n"
         "  --noalloc           large arrays allocate nothing (with --pdexec)\n"
         "  --measure K         time the first K runs of each dps::compute (per estimate), then charge their mean\n"
         "  --stats FILE        write per-node utilization and dynamic efficiency (JSON) at the end\n"
         "  --fail NODE@SECONDS kill virtual node NODE at that simulated time (repeatable; with --fault-tolerance\n"
         "                      the run goes on, its threads rebuilt from their checkpoints)\n";
}

std::unique_ptr<Backend> command_line_backend(CommandLine& c) {
  if (!c.hostfile.empty())
    throw std::invalid_argument("--hostfile starts processes on real hosts; a simulation takes its cluster from --model");
  std::string model_path;
  std::vector<std::string> sets, rest;
  sim::SimOptions options;
  auto value = [&](std::size_t& i, const std::string& option) -> std::string {
    if (i + 1 >= c.rest.size()) throw std::invalid_argument(option + " expects a value");
    return c.rest[++i];
  };
  for (std::size_t i = 0; i < c.rest.size(); ++i) {
    const std::string& arg = c.rest[i];
    if (arg == "--model") {
      model_path = value(i, arg);
    } else if (arg == "--set") {
      sets.push_back(value(i, arg));
    } else if (arg == "--pdexec") {
      options.pdexec = true;
    } else if (arg == "--noalloc") {
      options.noalloc = true;
    } else if (arg == "--measure") {
      options.measure = static_cast<unsigned>(std::min<std::size_t>(positive_count(arg, value(i, arg)), ~0u));
    } else if (arg == "--stats") {
      options.statistics = value(i, arg);
    } else if (arg == "--fail") {
      const std::string text = value(i, arg);
      const auto at = text.find('@');
      if (at == std::string::npos) throw std::invalid_argument("--fail expects NODE@SECONDS, got '" + text + "'");
      const long node = whole_number(arg, text.substr(0, at));
      if (node < 0 || node > 1'000'000) throw std::invalid_argument("--fail expects NODE@SECONDS, got '" + text + "'");
      options.failures.push_back({static_cast<NodeId>(node), positive_number(arg, text.substr(at + 1))});
    } else {
      rest.push_back(arg);
    }
  }
  c.rest = std::move(rest);
  // Run by dps-cluster: its scheduler gives the model and the nodes.
  if (std::getenv(job_protocol::kFd)) {
    if (!model_path.empty() || !sets.empty() || c.options.nodes)
      throw std::invalid_argument("a job of dps-cluster runs on the nodes its scheduler gives: no --nodes, --model or --set");
    const char* model = std::getenv(job_protocol::kModel);
    const char* nodes = std::getenv(job_protocol::kNodes);
    if (!model || !nodes) throw std::invalid_argument("dps-cluster gives a job DPS_CLUSTER_MODEL and DPS_CLUSTER_NODES too");
    model_path = model;
    c.options.nodes = positive_count(job_protocol::kNodes, nodes);
  }
  if (options.noalloc && !options.pdexec)
    throw std::invalid_argument("--noalloc needs --pdexec: computations that run for real need their data");
  if (options.measure && options.pdexec)
    throw std::invalid_argument("--measure and --pdexec exclude each other: one measures computations, one skips them");
  sim::ClusterModel model = model_path.empty() ? sim::ClusterModel::defaults(sets) : sim::ClusterModel::load(model_path, sets);
  if (const std::string w = model.calibration.warning(model_path); !w.empty() && !std::getenv(job_protocol::kFd)) {
    const std::string program = c.argc > 0 ? std::filesystem::path(c.argv[0]).filename().string() : "dps";
    std::fprintf(stderr, "%s: warning: %s\n", program.c_str(), w.c_str());  // (dps-cluster says it once for its jobs)
  }
  options.nodes = c.options.nodes ? c.options.nodes : model_path.empty() ? 1 : model.node_count();
  if (options.nodes > model.node_count())
    throw std::invalid_argument("--nodes " + std::to_string(options.nodes) + ": the simulated cluster has " +
                                std::to_string(model.node_count()) + " nodes");
  options.report = true;
  options.progress = !std::getenv(job_protocol::kFd) && isatty(STDOUT_FILENO) != 0;
  return std::make_unique<sim::SimBackend>(std::move(model), std::move(options));
}

}  // namespace dps::detail
