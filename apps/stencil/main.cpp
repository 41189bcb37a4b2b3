// stencil: 5-point Jacobi on an n × n grid held by block threads of a DPS flow graph, malleable: it
// grows and shrinks between iterations, redistributing the grid. stencil-sim predicts the same run.
// The last line is JSON with n, iterations, threads, nodes, time_s (predicted_s when simulated),
// mlups, checksum and resizes.
// With --checkpoint-dir DIR the run is written there between calls; --restart DIR goes on from it.
//
//   stencil --nodes 2 --n 4096 --iterations 200                       # bench-stencil's run
//   stencil --nodes 2 --decomposition blocks --resize 50:4,100:3       # grows to 4 threads, then 3
//   stencil --nodes 4 --policy reshape --max-threads 16 --per-node 2   # ReSHAPE's rule decides
// Run by dps-cluster (an application job), it asks the cluster's scheduler at every resize point.
//   stencil-sim --model cluster.json --nodes 4 --pdexec --noalloc --partition speed
//   stencil --hostfile hosts --cluster cluster.json --partition model --speeds slow=0.3
//   stencil --nodes 4 --iterations 5000 --checkpoint-dir ckpt; stencil --nodes 3 --iterations 5000 --restart ckpt
#include "cluster_file.hpp"
#include "result_line.hpp"
#include "stencil.hpp"

#include <dps/cli.hpp>
#include <dps/dps.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>

namespace {

using apps::kProgram;

// "NODE=SPEED[,...]" or "GROUP=SPEED[,...]" (a group of --cluster: each of its nodes), over what
// the cluster file says.
std::map<dps::NodeId, double> speeds(const std::string& text, const stencil::ClusterFile* cluster,
                                     const std::string& cluster_path) {
  std::map<dps::NodeId, double> result;
  if (cluster)
    for (std::size_t k = 0; k < cluster->nodes.size(); ++k) result[static_cast<dps::NodeId>(k)] = cluster->nodes[k].speed;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const auto equals = item.find('=');
    double speed = 0;
    std::size_t used = 0;
    try {
      if (equals != std::string::npos) speed = std::stod(item.substr(equals + 1), &used);
    } catch (const std::exception&) {
    }
    if (equals == std::string::npos || used != item.size() - equals - 1 || !(speed > 0))
      throw std::invalid_argument("--speeds expects NODE=SPEED with a positive speed, got '" + item + "'");
    const std::string name = item.substr(0, equals);
    if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) {
      result[static_cast<dps::NodeId>(dps::whole_number("--speeds", name))] = speed;
      continue;
    }
    if (!cluster) throw std::invalid_argument("--speeds: '" + name + "' is not a node number, and no --cluster names groups");
    bool known = false;
    for (std::size_t k = 0; k < cluster->nodes.size(); ++k)
      if (cluster->nodes[k].group == name) result[static_cast<dps::NodeId>(k)] = speed, known = true;
    if (!known) {
      std::string groups;
      for (const std::string& g : cluster->groups()) groups += (groups.empty() ? "" : ", ") + g;
      throw std::invalid_argument("--speeds: no group '" + name + "' in " + cluster_path + " (its groups: " + groups + ")");
    }
  }
  return result;
}

dps::ReshapePolicy::Topology topology(stencil::Decomposition d) {
  return d == stencil::Decomposition::Blocks ? dps::ReshapePolicy::Topology::NearlySquare
                                             : dps::ReshapePolicy::Topology::Arbitrary;
}

}  // namespace

int main(int argc, char** argv) {
  return dps::run_main(kProgram, [&] {
    std::string figures;
    int code = 0;
    {
      dps::Application app(argc, argv);  // returns on node 0 only
      long n = 4096, iterations = 200, threads = 0, per_node = 1, resize_every = 0, max_threads = 0, check_every = 0;
      double tolerance = 0, threshold = 0.05, sweep_ns = 0;
      bool verify = false;
      std::string decomposition = "strips", resize, policy, partition = "equal", speed_list, cluster_path;
      dps::Cli cli(kProgram,
                   "5-point Jacobi on an n x n grid (top edge 1, other edges 0) held by block threads of a DPS flow "
                   "graph, which grow and shrink between iterations.");
      cli.option("--n", n, "grid size, boundaries included (default 4096)")
          .option("--iterations", iterations, "iterations (default 200)")
          .option("--decomposition", decomposition, "strips (rows, default) or blocks (a nearly-square grid)")
          .option("--threads", threads, "block threads at the start (default: --per-node on every node)")
          .option("--per-node", per_node, "block threads per node: a resize adds or removes nodes to match (default 1)")
          .option("--resize", resize, "I:P[,I:P...]  after iteration I, continue on P block threads")
          .option("--policy", policy, "reshape: ReSHAPE's rule decides at every resize point (grow while it pays, keep the sweet spot)")
          .option("--max-threads", max_threads, "the most block threads --policy may grow to (default: 4 x the start)")
          .option("--resize-every", resize_every, "with --policy, a resize point every this many iterations (default: a tenth)")
          .option("--threshold", threshold, "with --policy, the iteration-time gain a growth must bring (default 0.05)")
          .option("--partition", partition,
                  "equal (default), speed (rows or blocks in proportion to the nodes' speeds) or model (strips: "
                  "Weissman's balance of each thread's halo messages and sweep)")
          .option("--cluster", cluster_path, "FILE  a cluster model (calibrate writes one): the nodes' speeds and the network, for the partitions")
          .option("--speeds", speed_list, "NODE=SPEED or GROUP=SPEED[,...]  speeds for the partitions (default: --cluster's, or the simulator's model)")
          .option("--sweep-cost", sweep_ns,
                  "NS  a sweep's cost per point at speed 1, for partial direct execution and --partition model "
                  "(default: measured here at the starting block shape)")
          .option("--tolerance", tolerance, "stop once the residual is below it (default: run every iteration)")
          .option("--check-every", check_every, "measure the residual every this many iterations (default 10 with a tolerance)")
          .flag("--verify", verify, "gather the grid and compare it, bit for bit, with a serial Jacobi's (exit 1 if it differs)");
      if (!cli.parse(app.args(), dps::Application::options_help())) return 0;
      std::optional<stencil::ClusterFile> cluster;
      if (!cluster_path.empty()) cluster = stencil::ClusterFile::load(cluster_path);
      stencil::Options o{.n = n,
                         .iterations = iterations,
                         .decomposition = stencil::decomposition_named(decomposition),
                         .threads = threads,
                         .per_node = per_node,
                         .resizes = dps::resize_points("--resize", resize, "ITERATION:THREADS"),
                         .resize_every = resize_every,
                         .partition = stencil::partition_named(partition),
                         .speeds = speeds(speed_list, cluster ? &*cluster : nullptr, cluster_path),
                         .tolerance = tolerance,
                         .check_every = check_every,
                         .keep_grid = verify};
      if (cluster) o.latency = cluster->latency, o.bandwidth = cluster->bandwidth;
      const long start = threads > 0 ? threads : per_node * static_cast<long>(app.nodes());
      const auto reshape = dps::policy_named(policy, topology(o.decomposition), static_cast<std::size_t>(start), max_threads, threshold);
      if (reshape) {
        o.policy = reshape.get();
      } else if (dps::ResizePolicy* scheduler = app.resize_policy(); scheduler && resize.empty()) {
        // A job of dps-cluster: its scheduler answers the resize points, in nodes, one thread each.
        if (per_node != 1 || threads != 0) throw std::invalid_argument("a job of dps-cluster runs one thread per node: no --per-node or --threads");
        if (max_threads != 0) throw std::invalid_argument("--max-threads goes with --policy reshape");
        o.policy = scheduler;
      } else if (max_threads != 0 || resize_every != 0) {
        throw std::invalid_argument("--max-threads and --resize-every go with --policy reshape");
      }
      o = o.resolved(app.nodes());
      // The sweep's cost per point, measured here for blocks of the starting shape: what partial direct
      // execution charges, and what the model partition weighs rows with.
      stencil::SweepCost cost;
      if (sweep_ns < 0) throw std::invalid_argument("--sweep-cost must be positive");
      if (sweep_ns > 0) {
        cost.per_point = sweep_ns * 1e-9;
      } else if (app.models_compute() || o.partition == stencil::Partition::Model) {
        const auto l = stencil::layout_for(static_cast<std::size_t>(o.n - 2), static_cast<std::size_t>(o.threads),
                                           o.decomposition, {});
        cost = stencil::SweepCost::measure(l.rows().count(0), l.cols().count(0));
      }
      o.per_point = cost.per_point;
      if (app.models_compute()) stencil::set_sweep_cost(cost);

      const stencil::Result r = stencil::run(app, o);
      std::optional<bool> verified;
      if (verify && r.grid) {
        const std::vector<double> serial = stencil::serial_jacobi(static_cast<std::size_t>(o.n), r.iterations);
        std::size_t differ = 0;
        for (std::size_t k = 0; k < serial.size(); ++k) differ += serial[k] != r.grid->values[k];
        verified = differ == 0;
        if (differ) {
          std::fprintf(stderr, "%s: %zu of the %zu grid points differ from a serial Jacobi's\n", kProgram, differ, serial.size());
          code = 1;
        }
      }
      std::vector<apps::ResultLine> resize_log;
      for (const auto& z : r.resizes)
        resize_log.push_back(apps::ResultLine()
                                 .add("after", z.iteration)
                                 .add("from", z.from)
                                 .add("to", z.to)
                                 .add("seconds", z.seconds, "%.6f")
                                 .add("redistribution_s", z.redistribution_s, "%.6f")
                                 .add("moved_bytes", z.moved_bytes)
                                 .add("busiest_bytes", z.busiest_bytes));
      figures =
          apps::ResultLine()
              .add("n", o.n)
              .add("iterations", r.iterations)
              .add("decomposition", stencil::name(o.decomposition))
              .add("partition", stencil::name(o.partition))
              .add("threads", r.threads)
              .add("nodes", r.nodes)
              .seconds(r.seconds)
              .add("mlups", r.mlups, "%.1f")
              .add("checksum", r.checksum, "%.10e")
              .add("residual", r.residual, "%.6e")
              .add("resizes", r.resizes.size())
              .add("verified", verified)
              .add("restarted_from", r.restarted_from >= 0 ? std::optional<long>(r.restarted_from) : std::nullopt)
              .add("resize_log", resize_log)
              .add("iteration_seconds", r.iteration_seconds, "%.6f")
              .add("rows", r.rows)
              // what the sweep was charged at, for --sweep-cost (null: not measured)
              .add("sweep_ns", cost.per_point > 0 ? std::optional<double>(cost.per_point * 1e9) : std::nullopt, "%.4f")
              .json();
    }
    std::printf("%s\n", figures.c_str());
    return code;
  });
}
