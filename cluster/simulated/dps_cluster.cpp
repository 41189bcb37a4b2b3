// dps-cluster: a workload run on a simulated cluster under a scheduler: rigid jobs from an SWF trace
// of the Parallel Workloads Archive, synthetic malleable jobs (Sudarsan, Ribbens & Varadarajan, "Priority-enabled
// Scheduling for Resizable Parallel Applications", §4.1) from a JSON workload. The last line is JSON: jobs, makespan_s,
// utilization, mean_wait_s, mean_bounded_slowdown, ...
//
//   dps-cluster --workload data/swf/NASA-iPSC-1993-3.1-cln.swf.gz --scheduler easy
//   dps-cluster --workload mix.json --scheduler conservative --jobs jobs.csv
//   dps-cluster --workload docs/cluster/setup2.json --scheduler max-b-pr --threshold 0.05
#include <dps/cli.hpp>
#include <dps/cluster/reshape.hpp>
#include <dps/cluster/schedulers.hpp>
#include <dps/cluster/simulation.hpp>
#include <dps/cluster/workload.hpp>
#include <dps/mesh.hpp>
#include <dps/sim/model.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
  return dps::run_main("dps-cluster", [&] {
    std::string workload_path, scheduler = "easy", jobs_path, model_path, logs, trace_path, mesh_text, allocation = "paging";
    long procs = 0;
    double tau = 10, threshold = 0;  // threshold 0: not given (Cli takes positive numbers only)
    bool strict = false, io_column = false;
    dps::Cli cli("dps-cluster", "Simulates a workload of jobs on a cluster under a scheduler.");
    cli.option("--workload", workload_path, "the jobs: an SWF trace (.swf, .swf.gz) or a workload file (.json)")
        .option("--scheduler", scheduler, "who starts and resizes jobs: " + dps::cluster::scheduler_list() + " (default easy)")
        .option("--threshold", threshold, "ReSHAPE's schedulers: the expand potential a job needs to grow (default 0.2)")
        .option("--procs", procs, "nodes of the cluster (default: the trace's MaxProcs, the workload's \"nodes\")")
        .flag("--strict", strict, "a job wider than the cluster is an error (default: skipped and counted)")
        .option("--tau", tau, "bounded slowdown's threshold in seconds (default 10)")
        .option("--jobs", jobs_path, "write each job's submit, start, end and sizes over time to this CSV file")
        .option("--model", model_path, "the cluster model application jobs simulate themselves on, and the cluster's size when nothing else "
                                      "gives it (default: single-core nodes, 50 us, 117.5 MB/s, as many as the cluster's)")
        .option("--logs", logs, "keep application jobs' output here, job-ID.log (default: a temporary folder)")
        .option("--trace", trace_path, "write the cluster's Gantt chart, utilization and queue length (dps-viewer, dps-trace plot)")
        .option("--mesh", mesh_text, "WxH  the cluster's nodes as a 2-D mesh, node y*W + x (placement strategies use it)")
        .flag("--io-column", io_column, "I/O nodes in a column west of --mesh: the JSON holds the balance factor and their contention")
        .option("--allocation", allocation,
                "which idle nodes a job gets: paging (default: the lowest-numbered), random, or on --mesh first-fit, best-fit, mbs, mc, mc-elongated, plas");
    if (!cli.parse(argc, argv)) return 0;
    if (workload_path.empty()) throw std::invalid_argument("--workload is missing (--help says more)");
    if (procs < 0) throw std::invalid_argument("--procs expects a positive number of nodes");
    if (!(tau > 0)) throw std::invalid_argument("--tau expects a positive number of seconds");
    auto policy = dps::cluster::scheduler_from_options(scheduler, threshold);
    std::size_t model_nodes = 0;
    if (!model_path.empty()) {
      const auto model = dps::sim::ClusterModel::load(model_path);
      model_nodes = model.node_count();
      if (const std::string w = model.calibration.warning(model_path); !w.empty())  // its jobs do not say it each
        std::fprintf(stderr, "dps-cluster: warning: %s\n", w.c_str());
    }
    const dps::cluster::Workload workload = dps::cluster::load_workload(
        workload_path, {.nodes = static_cast<std::size_t>(procs), .fallback_nodes = model_nodes, .strict = strict});
    if (model_nodes && model_nodes < workload.nodes)
      throw std::invalid_argument("--model " + model_path + " has " + std::to_string(model_nodes) + " nodes, the cluster " +
                                  std::to_string(workload.nodes));
    if (workload.jobs.empty()) throw std::runtime_error(workload_path + ": no job to run");

    std::unique_ptr<dps::cluster::Allocator> allocator;
    std::optional<dps::Mesh> mesh;
    if (!mesh_text.empty()) {
      mesh = dps::Mesh::parse("--mesh", mesh_text);
      if (mesh->size() != workload.nodes)
        throw std::invalid_argument("--mesh " + mesh_text + " holds " + std::to_string(mesh->size()) + " nodes, the cluster has " +
                                    std::to_string(workload.nodes));
    }
    if (io_column && !mesh) throw std::invalid_argument("--io-column puts I/O nodes west of a mesh: give --mesh WIDTHxHEIGHT");
    if (allocation != "paging") allocator = dps::cluster::allocator_named("--allocation", allocation, mesh ? &*mesh : nullptr);
    dps::cluster::SimulationOptions options{.tau_s = tau, .gantt = !trace_path.empty(), .model = model_path, .logs = logs,
                                            .allocator = allocator.get(), .mesh = mesh ? &*mesh : nullptr, .io_column = io_column};
    const bool terminal = isatty(STDERR_FILENO) != 0;
    if (terminal)
      options.progress = [&](double now, std::size_t done) {
        std::fprintf(stderr, "\rdps-cluster: %.0f s simulated, %zu of %zu jobs done ", now, done, workload.jobs.size());
      };
    dps::cluster::Simulation simulation(workload, *policy, options);
    const dps::cluster::Results results = simulation.run();
    if (terminal) std::fprintf(stderr, "\r\033[K");
    if (!trace_path.empty()) dps::cluster::write_trace(simulation.gantt(), results, trace_path);
    if (!jobs_path.empty()) results.write_jobs_csv(jobs_path);
    std::printf("%s\n", results.json().c_str());
    return 0;
  });
}
