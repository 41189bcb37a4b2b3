// dps-scheduler: a real cluster's scheduler daemon. It owns the hosts of a hostfile (or of the Slurm
// allocation it runs in), runs one of the schedulers dps-cluster simulates (the same objects), starts
// real DPS programs on the hosts it grants, and answers their resize points over TCP. With
// --workload it runs a workload of application jobs to its end; the last line is JSON: jobs, failed,
// makespan_s, mean_wait_s, mean_turnaround_s, utilization, resizes.
//
//   dps-scheduler --hostfile hosts --scheduler pba-pr --workload jobs.json --trace real.dpstrace
#include "daemon.hpp"

#include <dps/cli.hpp>
#include <dps/cluster/gantt.hpp>
#include <dps/cluster/hostlist.hpp>
#include <dps/cluster/reshape.hpp>
#include <dps/cluster/schedulers.hpp>
#include <dps/cluster/workload.hpp>
#include <dps/net/launcher.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
  return dps::run_main("dps-scheduler", [&] {
    std::string hostfile, scheduler = "easy", workload_path, listen = "127.0.0.1:0", logs, trace_path;
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
                "run these application jobs (dps-cluster's JSON, real programs) to their end")
        .option("--listen", listen, "HOST:PORT where jobs reach the daemon (default 127.0.0.1 and any port)")
        .option("--logs", logs, "jobs' output, job-ID.out and job-ID.err (default: here)")
        .option("--trace", trace_path, "write the cluster's Gantt chart, utilization and queue length (dps-viewer)");
    if (!cli.parse(argc, argv)) return 0;
    if (workload_path.empty())
      throw std::invalid_argument("--workload is missing: the daemon runs a workload for now (--help says more)");
    std::vector<std::string> slots =
        !hostfile.empty()
            ? dps::net::read_hostfile(hostfile)
            : dps::cluster::slurm_slots(std::getenv("SLURM_JOB_NODELIST"), std::getenv("SLURM_JOB_CPUS_PER_NODE"));
    dps::cluster::ReshapeOptions tuning;
    if (threshold > 0) {
      const auto& reshape = dps::cluster::ReshapeScheduler::scenarios();
      if (std::find(reshape.begin(), reshape.end(), scheduler) == reshape.end())
        throw std::invalid_argument("--threshold is ReSHAPE's: it goes with --scheduler " +
                                    dps::cluster::scheduler_list() + ", not '" + scheduler + "'");
      tuning.threshold = threshold;
    }
    std::unique_ptr<dps::cluster::Scheduler> policy;
    try {
      policy = dps::cluster::scheduler_named(scheduler, tuning);
    } catch (const std::invalid_argument&) {
      throw std::invalid_argument("--scheduler expects one of " + dps::cluster::scheduler_list() + ", got '" +
                                  scheduler + "'");
    }
    const dps::cluster::Workload workload =
        dps::cluster::load_workload(workload_path, {.nodes = slots.size(), .strict = true});
    if (workload.jobs.empty()) throw std::runtime_error(workload_path + ": no job to run");
    dps::cluster::Daemon daemon({.slots = slots,
                                 .rsh = dps::net::rsh_command(),
                                 .listen = listen,
                                 .logs = logs.empty() ? "." : logs,
                                 .gantt = !trace_path.empty()},
                                *policy, workload.classes);
    for (const dps::cluster::Job& job : workload.jobs) daemon.submit(job);
    daemon.run_until_done();
    const auto o = daemon.outcome();
    for (const std::string& reason : o.reasons) std::fprintf(stderr, "dps-scheduler: %s\n", reason.c_str());
    if (!trace_path.empty())
      dps::cluster::write_trace(daemon.gantt(), o.results, trace_path,
                                {.program = "dps-scheduler", .simulated = false});
    const auto& r = o.results;
    std::printf(
        "{\"scheduler\": \"%s\", \"hosts\": %zu, \"jobs\": %zu, \"failed\": %zu, \"makespan_s\": %.6g, "
        "\"mean_wait_s\": %.6g, "
        "\"mean_turnaround_s\": %.6g, \"mean_execution_s\": %.6g, \"utilization\": %.4f, \"resizes\": %zu}\n",
        r.scheduler.c_str(), r.nodes, r.jobs.size(), o.failed, r.makespan_s, r.mean_wait_s, r.mean_completion_s,
        r.mean_execution_s, r.utilization, r.resizes);
    return o.failed ? 1 : 0;
  });
}
