// tsp: the exact optimum of a symmetric TSPLIB instance by parallel branch and bound (Held–Karp
// 1-tree bounds), worker threads load-balanced by a conductor, added and removed during the search.
// tsp-sim predicts the same search (the same tree: the bounds run for real, PDEXEC charges their model).
// The last line is JSON with instance, cities, length, optimal, nodes_explored, time_s (predicted_s).
//
//   tsp data/tsplib/berlin52.tsp --nodes 2
//   tsp data/tsplib/eil51.tsp --nodes 3 --threads 4 --resize 10:2,20:6
//   tsp data/tsplib/eil51.tsp --cold --policy reshape --max-threads 8 --rounds 4   # ReSHAPE's rule decides
// Run by dps-cluster (an application job), it asks the cluster's scheduler at every resize point.
//   tsp-sim data/tsplib/att48.tsp --model cluster.json --nodes 8 --pdexec
#include "result_line.hpp"
#include "solver.hpp"

#include <dps/cli.hpp>
#include <dps/dps.hpp>
#include <dps/resize_policy.hpp>

#include <cstdio>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>

namespace {

using apps::kProgram;

// "ROUND:THREADS[,...]": after that many rounds, continue on that many worker threads.
std::map<long, std::size_t> resizes(const std::string& text) {
  std::map<long, std::size_t> points;
  for (const auto& [after, threads] : dps::resize_points("--resize", text, "ROUND:THREADS")) {
    if (after < 1 || threads < 1)
      throw std::invalid_argument("--resize " + std::to_string(after) + ":" + std::to_string(threads) + ": rounds and threads start at 1");
    points[after] = static_cast<std::size_t>(threads);
  }
  return points;
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return dps::run_main(kProgram, [&] {
    std::string output;  // printed once the application has ended (the simulator prints its own figures then)
    int code = 0;
    {
      dps::Application app(argc, argv);  // returns on node 0 only
      std::vector<std::string> args = app.args();
      const std::string file = !args.empty() && !args[0].starts_with("-") ? args[0] : "";
      if (!file.empty()) args.erase(args.begin());
      long threads = 0, per_node = 1, budget = 0, rounds = 16, kicks = 0, max_threads = 0;
      double tree_cost_ns = 0, threshold = 0.05;
      bool cold = false, reproducible = false;
      std::string resize_list, policy;
      dps::Cli cli(std::string(kProgram) + " FILE.tsp", "The optimal tour of a symmetric TSPLIB instance, by branch and bound on DPS worker threads.");
      cli.option("--threads", threads, "worker threads at the start (default: --per-node on every node)")
          .option("--per-node", per_node, "worker threads per node: a resize adds or removes nodes to match (default 1)")
          .option("--budget", budget, "1-trees a worker's bounds compute per round (default: about 15 ms of them)")
          .option("--rounds", rounds, "rounds per call of the search graph, between resize points (default 16)")
          .option("--resize", resize_list, "R:P[,R:P...]  after round R, continue on P worker threads (their work handed on)")
          .option("--policy", policy, "reshape: ReSHAPE's rule decides after every --rounds rounds (grow while the search gets faster)")
          .option("--max-threads", max_threads, "the most worker threads --policy may grow to (default: 4 x the start)")
          .option("--threshold", threshold, "with --policy, the gain a growth must bring (default 0.05)")
          .option("--kicks", kicks, "the first tour's iterated local search: kicks over all workers (default: 10 x cities)")
          .flag("--cold", cold, "start without a first tour: the search finds every tour itself (a larger tree)")
          .flag("--reproducible", reproducible, "tours found mid-round reach the other workers at its end, not at once: the same tree in every run, real or simulated")
          .option("--tree-cost", tree_cost_ns, "NS  a 1-tree's cost per city squared, for partial direct execution (default: measured here)");
      if (!cli.parse(args, dps::Application::options_help())) return 0;
      if (file.empty()) throw std::invalid_argument("give a TSPLIB file: " + std::string(kProgram) + " FILE.tsp [options]");
      if (threads == 0) threads = per_node * static_cast<long>(app.nodes());
      if (threads < 1 || per_node < 1 || rounds < 1 || budget < 0 || kicks < 0 || tree_cost_ns < 0)
        throw std::invalid_argument("--threads, --per-node and --rounds must be at least 1, --budget, --kicks and --tree-cost not negative");
      tsp::SolveOptions o{static_cast<std::size_t>(threads), static_cast<std::size_t>(per_node), budget, rounds,
                          resizes(resize_list), nullptr, static_cast<int>(kicks), cold, reproducible};
      const auto reshape = dps::policy_named(policy, dps::ProcessorTopology::Arbitrary, o.threads, max_threads, threshold);
      if (reshape) {
        o.policy = reshape.get();
      } else if (dps::ResizePolicy* scheduler = app.resize_policy(); scheduler && o.resizes.empty()) {
        // A job of dps-cluster: its scheduler answers the resize points, in nodes, one worker each.
        if (per_node != 1 || threads != static_cast<long>(app.nodes()))
          throw std::invalid_argument("a job of dps-cluster runs one worker per node: no --per-node or --threads");
        if (max_threads != 0) throw std::invalid_argument("--max-threads goes with --policy reshape");
        o.policy = scheduler;
      } else if (max_threads != 0) {
        throw std::invalid_argument("--max-threads goes with --policy reshape");
      }
      const tsp::Instance instance = tsp::read_tsplib(file);
      const bool charged = app.models_compute();
      if (charged) {
        tsp::set_tree_cost(tree_cost_ns > 0 ? tsp::TreeCost{tree_cost_ns * 1e-9} : tsp::TreeCost::measure(instance));
        tree_cost_ns = tsp::tree_cost().per_city_squared * 1e9;
      }
      const tsp::Result r = tsp::solve(app, instance, o);
      std::vector<apps::ResultLine> log;
      for (const tsp::Resized& z : r.resizes)
        log.push_back(
            apps::ResultLine().add("after", z.after).add("threads", z.threads).add("nodes", z.nodes).add("handed", z.handed));
      const auto optima = tsp::optima_beside(file);
      const auto optimum = optima.find(instance.name);
      const bool knows = optimum != optima.end();
      output = "tour:";
      for (int city : r.tour) output += " " + std::to_string(city + 1);
      apps::ResultLine line;
      line.add("instance", instance.name)
          .add("cities", instance.n)
          .add("length", r.length)
          .add("optimal", knows ? std::optional(optimum->second) : std::nullopt)
          .add("nodes_explored", r.explored)
          .seconds(r.seconds)
          .add("threads", r.resizes.empty() ? o.threads : r.resizes.back().threads)
          .add("nodes", app.nodes())
          .add("rounds", r.rounds)
          .add("root_bound", r.root_bound, "%.3f")
          .add("first_tour", o.cold ? std::nullopt : std::optional(r.first_tour))
          .add("bounds_shared", r.shared)
          .add("resizes", log);
      // What the bounds were charged: give it to the next runs (--tree-cost) to compare like with like.
      if (charged) line.add("tree_cost_ns", tree_cost_ns, "%.4f");
      if (r.restarted_from) line.add("restarted_from", *r.restarted_from);  // --restart
      output += "\n" + line.json();
      if (knows && optimum->second != r.length) {
        std::fprintf(stderr, "%s: found a tour of %ld, but the optimum is %ld\n", kProgram, r.length, optimum->second);
        code = 1;
      }
    }
    std::printf("%s\n", output.c_str());
    return code;
  });
}
