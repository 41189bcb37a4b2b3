// dps-scheduler: a real cluster's scheduler daemon. It owns the hosts of a hostfile (or of the Slurm
// allocation it runs in), runs one of the schedulers dps-cluster simulates (the same objects), starts
// real DPS programs on the hosts it grants, and answers their resize points over TCP. Clients holding
// its state folder's secret submit, list and cancel jobs (dps-submit, dps-queue, dps-cancel); with
// --workload it runs a workload of application jobs to its end, else it serves until SIGINT or
// SIGTERM. The last line is JSON: jobs, failed, cancelled, makespan_s, mean_wait_s,
// mean_turnaround_s, utilization, resizes; with --predict MODEL, the same workload under the same
// scheduler simulated by dps-cluster's engine on that model adds predicted_makespan_s,
// predicted_mean_wait_s and predicted_mean_turnaround_s.
//
//   dps-scheduler --hostfile hosts --scheduler pba-pr --workload jobs.json --trace real.dpstrace
//   dps-scheduler --hostfile hosts --scheduler easy --listen head:7700 &   dps-submit -- lu --n 4096
#include "daemon.hpp"
#include "state_folder.hpp"

#include <dps/cli.hpp>
#include <dps/cluster/gantt.hpp>
#include <dps/cluster/hostlist.hpp>
#include <dps/cluster/reshape.hpp>
#include <dps/cluster/schedulers.hpp>
#include <dps/cluster/simulation.hpp>
#include <dps/cluster/workload.hpp>
#include <dps/net/launcher.hpp>
#include <dps/sim/model.hpp>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

volatile std::sig_atomic_t stopping = 0;
void stop(int) { stopping = 1; }

// "gold=0,platinum=1000" (empty: one class, normal).
std::vector<dps::cluster::JobClass> parse_classes(const std::string& text) {
  std::vector<dps::cluster::JobClass> classes;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find(',', at), text.size());
    const std::string item = text.substr(at, end - at);
    const auto equals = item.find('=');
    char* rest = nullptr;
    const double priority = equals == std::string::npos ? 0 : std::strtod(item.c_str() + equals + 1, &rest);
    if (equals == 0 || equals == std::string::npos || rest == item.c_str() + equals + 1 || *rest)
      throw std::invalid_argument("--classes expects NAME=PRIORITY[,...], got '" + text + "'");
    classes.push_back({item.substr(0, equals), priority});
    at = end + 1;
  }
  if (classes.empty()) classes.push_back({"normal", 0});
  return classes;
}

// The workload's prediction: its jobs' -sim programs (each application builds PROGRAM and
// PROGRAM-sim) under a scheduler of the same name, on `model`; their output in logs/predicted.
dps::cluster::Results predict(dps::cluster::Workload workload, const std::string& scheduler, double threshold,
                              const std::string& model, const std::string& logs, const std::string& trace,
                              const std::string& jobs) {
  for (dps::cluster::Job& job : workload.jobs) job.command.front() += "-sim";
  const auto policy = dps::cluster::scheduler_from_options(scheduler, threshold);
  dps::cluster::Simulation simulation(
      workload, *policy, {.gantt = !trace.empty(), .model = model, .logs = (logs.empty() ? "." : logs) + "/predicted"});
  dps::cluster::Results results = simulation.run();
  if (!trace.empty())
    dps::cluster::write_trace(simulation.gantt(), results, trace, {.program = "dps-scheduler --predict"});
  if (!jobs.empty()) results.write_jobs_csv(jobs);
  return results;
}

// FILE.dpstrace -> FILE-predicted.dpstrace; FILE.csv -> FILE-predicted.csv; nothing for no file.
std::string predicted(const std::string& path, const std::string& extension) {
  if (path.empty()) return path;
  const std::string stem = path.ends_with(extension) ? path.substr(0, path.size() - extension.size()) : path;
  return stem + "-predicted" + extension;
}

}  // namespace

int main(int argc, char** argv) {
  return dps::run_main("dps-scheduler", [&] {
    std::string hostfile, scheduler = "easy", workload_path, listen = "127.0.0.1:0", logs, trace_path, state,
                          class_list, model, what_if, jobs_path;
    double threshold = 0;
    dps::Cli cli("dps-scheduler",
                 "Schedules real DPS programs on a pool of hosts: starts them, resizes them, frees their hosts.");
    cli.option("--hostfile", hostfile,
               "the pool: lines 'host [slots]', a node per slot (default: the Slurm allocation, SLURM_JOB_NODELIST)")
        .option("--scheduler", scheduler,
                "who starts and resizes jobs: " + dps::cluster::scheduler_list() + " (default easy)")
        .option("--threshold", threshold,
                "ReSHAPE's schedulers: the expand potential a job needs to grow (default 0.2)")
        .option("--workload", workload_path,
                "run these application jobs (dps-cluster's JSON, real programs) to their end, then exit")
        .option("--predict", model,
                "MODEL  with --workload: simulate it too, under the same scheduler, on this cluster model "
                "(calibrate's, of these hosts); the trace's prediction in FILE-predicted.dpstrace")
        .option("--what-if", what_if,
                "MODEL  before a growth, predict the job on this model (its -sim program, partial direct "
                "execution) at both sizes, and grow only where it pays")
        .option("--listen", listen,
                "HOST:PORT where jobs and clients reach the daemon (default 127.0.0.1 and any port)")
        .option("--state", state,
                "DIR  where the daemon keeps its address and the cluster's secret, which clients read "
                "(default $DPS_SCHEDULER_STATE, else ~/.dps/scheduler)")
        .option("--classes", class_list,
                "NAME=PRIORITY[,...]  the user classes submissions name (default: one, normal=0)")
        .option("--logs", logs, "jobs' output, job-ID.out and job-ID.err, when they name none (default: here)")
        .option("--trace", trace_path, "write the cluster's Gantt chart, utilization and queue length (dps-viewer)")
        .option("--jobs", jobs_path,
                "write each job's submit, start, end and sizes over time to this CSV file (dps-cluster's); "
                "the prediction's in FILE-predicted.csv");
    if (!cli.parse(argc, argv)) return 0;
    const std::vector<std::string> slots =
        !hostfile.empty()
            ? dps::net::read_hostfile(hostfile)
            : dps::cluster::slurm_slots(std::getenv("SLURM_JOB_NODELIST"), std::getenv("SLURM_JOB_CPUS_PER_NODE"));
    const auto policy = dps::cluster::scheduler_from_options(scheduler, threshold);
    std::optional<dps::cluster::Workload> workload;
    std::vector<dps::cluster::JobClass> classes = parse_classes(class_list);
    if (!workload_path.empty()) {
      if (!class_list.empty()) throw std::invalid_argument("--classes are the workload's own with --workload");
      workload = dps::cluster::load_workload(workload_path, {.nodes = slots.size(), .strict = true});
      if (workload->jobs.empty()) throw std::runtime_error(workload_path + ": no job to run");
      classes = workload->classes;
      for (const dps::cluster::Job& job : workload->jobs)
        dps::cluster::Daemon::check(job, slots.size());  // before any state
    }
    if (!model.empty() && !workload)
      throw std::invalid_argument("--predict goes with --workload: it simulates that workload");
    if (!model.empty()) {
      const auto m = dps::sim::ClusterModel::load(model);
      if (m.node_count() < slots.size())
        throw std::invalid_argument("--predict " + model + " has " + std::to_string(m.node_count()) +
                                    " nodes, the pool " + std::to_string(slots.size()));
    }
    const dps::cluster::StateFolder folder(state);
    dps::cluster::Daemon daemon({.slots = slots,
                                 .rsh = dps::net::rsh_command(),
                                 .listen = listen,
                                 .logs = logs.empty() ? "." : logs,
                                 .gantt = !trace_path.empty(),
                                 .secret = folder.own_secret(),
                                 .journal = folder.path() + "/journal.sqlite",
                                 .what_if = what_if},
                                *policy, classes);
    folder.publish(daemon.address());
    if (daemon.resumed())
      std::fprintf(stderr, "dps-scheduler: %zu jobs taken back from %s/journal.sqlite\n", daemon.resumed(),
                   folder.path().c_str());
    if (workload) {
      if (!daemon.resumed())  // else the journal holds this workload, as far as it went
        for (const dps::cluster::Job& job : workload->jobs) daemon.submit(job);
      daemon.run_until_done();
      daemon.forget();
    } else {
      std::signal(SIGINT, stop);
      std::signal(SIGTERM, stop);
      std::fprintf(stderr, "dps-scheduler: serving %zu nodes at %s (state in %s)\n", slots.size(),
                   daemon.address().c_str(), folder.path().c_str());
      daemon.serve_until(stopping);
    }
    const auto o = daemon.outcome();
    for (const std::string& reason : o.reasons) std::fprintf(stderr, "dps-scheduler: %s\n", reason.c_str());
    if (!trace_path.empty())
      dps::cluster::write_trace(daemon.gantt(), o.results, trace_path,
                                {.program = "dps-scheduler", .simulated = false});
    if (!jobs_path.empty()) o.results.write_jobs_csv(jobs_path);
    const auto& r = o.results;
    std::string prediction;
    if (!model.empty()) {
      const auto p = predict(*workload, scheduler, threshold, model, logs, predicted(trace_path, ".dpstrace"),
                             predicted(jobs_path, ".csv"));
      char figures[200];
      std::snprintf(
          figures, sizeof figures,
          ", \"predicted_makespan_s\": %.6g, \"predicted_mean_wait_s\": %.6g, \"predicted_mean_turnaround_s\": %.6g",
          p.makespan_s, p.mean_wait_s, p.mean_completion_s);
      prediction = figures;
    }
    std::printf(
        "{\"scheduler\": \"%s\", \"hosts\": %zu, \"jobs\": %zu, \"failed\": %zu, \"cancelled\": %zu, \"makespan_s\": "
        "%.6g, "
        "\"mean_wait_s\": %.6g, \"mean_turnaround_s\": %.6g, \"mean_execution_s\": %.6g, \"utilization\": %.4f, "
        "\"resizes\": %zu, \"refused_growths\": %zu%s}\n",
        r.scheduler.c_str(), r.nodes, r.jobs.size(), o.failed, o.cancelled, r.makespan_s, r.mean_wait_s,
        r.mean_completion_s, r.mean_execution_s, r.utilization, r.resizes, daemon.refused_growths(),
        prediction.c_str());
    return o.failed ? 1 : 0;
  });
}
