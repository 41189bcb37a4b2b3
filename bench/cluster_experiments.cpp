// bench-cluster-experiments: the experiments of Sudarsan, Ribbens & Varadarajan ("Priority-enabled Scheduling for
// Resizable Parallel Applications", §4; its setup 2: 400 nodes, 120 synthetic malleable jobs, Poisson arrivals of mean
// 32 s) rerun in the cluster simulator, each averaged over 7 workloads (seeds 1–7) as the paper averages 7 job mixes:
// the scenarios against static scheduling with backfill, the share of resizable jobs, and user priorities. Prints
// Markdown tables with the paper's figures beside ours (docs/cluster-scheduling.md), then one line of JSON.
//
//   bench-cluster-experiments --seeds 7
#include <dps/cli.hpp>
#include <dps/cluster/backfilling.hpp>
#include <dps/cluster/reshape.hpp>
#include <dps/cluster/schedulers.hpp>
#include <dps/cluster/simulation.hpp>
#include <dps/cluster/workload.hpp>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using dps::cluster::Results;
using dps::cluster::Workload;

struct Mean {  // over the workloads
  double utilization = 0, completion = 0, execution = 0, wait = 0;
  std::map<std::string, double> class_completion;
  void add(const Results& r, double n) {
    utilization += r.utilization / n, completion += r.mean_completion_s / n, execution += r.mean_execution_s / n;
    wait += r.mean_wait_s / n;
    for (const auto& c : r.classes) class_completion[c.name] += c.mean_completion_s / n;
  }
};

Workload mix(std::uint64_t seed, double resizable, double platinum, bool frozen = false) {
  Workload w{.jobs = dps::cluster::reshape_mix({.jobs = 120, .resizable = resizable, .platinum = platinum, .seed = seed}, 0, 1),
             .nodes = 400,
             .classes = {{"gold", 0}, {"platinum", 1000}}};
  for (auto& j : w.jobs) {
    j.priority = w.classes[j.klass].priority;
    if (frozen) j.resizable = false;  // a static run of the same jobs
  }
  return w;
}

dps::cluster::ReshapeOptions tuning;

Mean average(long seeds, const std::string& scheduler, double resizable, double platinum = 0, bool frozen = false) {
  Mean m;
  for (long s = 1; s <= seeds; ++s) {
    const Workload w = mix(static_cast<std::uint64_t>(s), resizable, platinum, frozen);
    auto policy = dps::cluster::scheduler_named(scheduler, tuning);
    m.add(dps::cluster::Simulation(w, *policy).run(), static_cast<double>(seeds));
  }
  return m;
}

double gain(double base, double x) { return 100 * (base - x) / base; }

#if defined(DPS_LU_SIM) && defined(DPS_STENCIL_SIM)
// The "kill 4 after iteration 1" of Schaeli, Gerlach & Hersch ("A simulator for adaptive parallel applications",
// Fig. 13) as a scheduler's decision: the LU job gives back 4 of its 8 nodes at its first resize point; every other job
// keeps its size; the queue is EASY's.
struct KillFourAfterIterationOne final : dps::cluster::Scheduler {
  std::uint64_t lu = 0;
  std::string name() const override { return "kill 4 after iteration 1"; }
  void schedule(dps::cluster::Cluster& c) override { dps::cluster::easy_backfill(c, c.queue()); }
  std::size_t resize(dps::cluster::Cluster&, const dps::cluster::Running& job, const dps::ResizePoint& point) override {
    return job.job->id == lu && point.iteration == 1 ? point.size - 4 : point.size;
  }
};

// Application jobs (PDEXEC) and rigid ones on 16 simulated nodes: the LU of Schaeli et al. (§7; n = 2592,
// r = 324, basic, 8 column blocks on 4 nodes, 8 multipliers) on 8 nodes, two stencils (4096², 1000
// iterations, a resize point every 100) on 4, and rigid background jobs queued behind them.
Workload application_mix() {
  using dps::cluster::Job;
  using dps::cluster::JobKind;
  Workload w{.jobs = {}, .nodes = 16, .classes = {{"normal", 0}}};
  const std::vector<std::string> lu{DPS_LU_SIM, "--n", "2592", "--r", "324", "--variant", "basic", "--column-nodes", "4",
                                    "--pdexec", "--noalloc", "--kernels", DPS_LU_KERNELS};
  const std::vector<std::string> stencil{DPS_STENCIL_SIM, "--n", "4096", "--iterations", "1000", "--resize-every", "100",
                                         "--pdexec", "--noalloc", "--sweep-cost", "0.6"};
  std::uint64_t id = 0;
  auto application = [&](double submit, std::size_t size, const std::vector<std::string>& command) {
    w.jobs.push_back(Job{.id = ++id, .kind = JobKind::Application, .submit = submit, .size = size, .walltime = 600, .command = command});
  };
  auto rigid = [&](double submit, std::size_t size, double runtime) {
    w.jobs.push_back(Job{.id = ++id, .kind = JobKind::Rigid, .submit = submit, .size = size, .walltime = runtime, .runtime = runtime});
  };
  application(0, 8, lu);
  application(0, 4, stencil);
  rigid(0.1, 4, 3);
  rigid(0.2, 4, 2);
  rigid(0.3, 8, 2);
  application(0.4, 4, stencil);
  rigid(0.5, 4, 1.5);
  rigid(0.6, 2, 2.5);
  return w;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  return dps::run_main("bench-cluster-experiments", [&] {
    long seeds = 7, window = static_cast<long>(tuning.window);
    dps::Cli cli("bench-cluster-experiments",
                 "The scheduling experiments of Sudarsan, Ribbens & Varadarajan (Priority-enabled Scheduling for "
                 "Resizable Parallel Applications, §4) in the cluster simulator, beside the paper's figures.");
    cli.option("--seeds", seeds, "workloads each figure is averaged over (default 7, as the paper)")
        .option("--threshold", tuning.threshold, "the expand potential a growth needs (default 0.2)")
        .option("--window", window, "sizes the expand potential is fitted over (default 3)");
    if (!cli.parse(argc, argv)) return 0;
    if (seeds < 1 || window < 2) throw std::invalid_argument("--seeds expects a positive number, --window 2 or more");
    tuning.window = static_cast<std::size_t>(window);
    std::ostringstream json;
    json << "{\"seeds\": " << seeds;

    // 1. All jobs resizable, aging priority only (Sudarsan et al., §4.2, Table 2 of its figures).
    struct Paper {
      const char* name;
      double utilization, completion, execution, wait;
    };
    const Paper paper[] = {{"easy", 83.6, 647.6, 141.7, 529.3},
                           {"fcfs-pr", 87.0, 546.7, 138.8, 421.5},
                           {"max-b-pr", 93.7, 605.9, 128.6, 483.9},
                           {"pba-pr", 92.0, 572.2, 131.5, 459.8}};
    std::printf("### All jobs resizable (Sudarsan et al., §4.2), means over %ld workloads\n\n", seeds);
    std::printf("| scenario | utilization %% (paper) | completion s (paper) | improvement | execution s (paper) | improvement | wait s (paper) |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    Mean base;
    json << ", \"resizable\": {";
    for (const Paper& p : paper) {
      const Mean m = average(seeds, p.name, 1.0);
      if (std::string(p.name) == "easy") base = m;
      std::printf("| %s | %.1f (%.1f) | %.1f (%.1f) | %.1f %% (%.1f %%) | %.1f (%.1f) | %.1f %% (%.1f %%) | %.1f (%.1f) |\n",
                  std::string(p.name) == "easy" ? "Static + backfill (easy)" : p.name, 100 * m.utilization, p.utilization,
                  m.completion, p.completion, gain(base.completion, m.completion), gain(paper[0].completion, p.completion),
                  m.execution, p.execution, gain(base.execution, m.execution), gain(paper[0].execution, p.execution), m.wait,
                  p.wait);
      json << (p.name == paper[0].name ? "" : ", ") << "\"" << p.name << "\": {\"utilization\": " << m.utilization
           << ", \"completion_s\": " << m.completion << ", \"execution_s\": " << m.execution
           << ", \"wait_s\": " << m.wait << ", \"completion_gain_pct\": " << gain(base.completion, m.completion)
           << ", \"paper_completion_gain_pct\": " << gain(paper[0].completion, p.completion) << "}";
    }
    json << "}";
    std::printf("\nThe other scenarios and schedulers on the same workloads (no figures in the paper):\n\n");
    std::printf("| scheduler | utilization %% | completion s | execution s | wait s |\n|---|---|---|---|---|\n");
    for (const char* s : {"fcfs", "conservative", "pba-q", "fair-q", "fcfs-li-q", "greedy-r", "fair-r"}) {
      const Mean m = average(seeds, s, 1.0);
      std::printf("| %s | %.1f | %.1f | %.1f | %.1f |\n", s, 100 * m.utilization, m.completion, m.execution, m.wait);
    }

    // 2. The share of resizable jobs, PBA-PR (Sudarsan et al., §4.3).
    const double shares[] = {0.25, 0.5, 0.75, 1.0};
    const double paper_utilization[] = {85.4, 87.1, 89.5, 91.4}, paper_completion[] = {5.5, 10.6, 14.6, 16.56};
    std::printf("\n### Share of resizable jobs, PBA-PR against static (Sudarsan et al., §4.3)\n\n");
    std::printf("| resizable | utilization %% (paper) | completion improvement (paper) |\n|---|---|---|\n");
    std::printf("| static | %.1f (83) | — |\n", 100 * base.utilization);
    json << ", \"share\": {";
    for (int k = 0; k < 4; ++k) {
      const Mean m = average(seeds, "pba-pr", shares[k]);
      std::printf("| %.0f %% | %.1f (%.1f) | %.1f %% (%.2f %%) |\n", 100 * shares[k], 100 * m.utilization, paper_utilization[k],
                  gain(base.completion, m.completion), paper_completion[k]);
      json << (k ? ", " : "") << "\"" << shares[k] << "\": {\"utilization\": " << m.utilization
           << ", \"completion_gain_pct\": " << gain(base.completion, m.completion) << "}";
    }
    json << "}";

    // 3. User priorities: half the jobs platinum, half resizable (Sudarsan et al., §4.4).
    struct Case {
      const char* label;
      const char* scheduler;
      bool frozen;
      double paper, paper_gold, paper_platinum;
    };
    const Case cases[] = {{"static, no priority", "easy", true, 639.5, 645.7, 633.2},
                          {"static, priority", "pba-pr", true, 581.4, 968.6, 194.2},
                          {"PBA, no priority", "pba-q", false, 571.2, -1, -1},
                          {"PBA, priority", "pba-pr", false, 535.8, 884.2, 187.5}};
    std::printf("\n### User priorities: 50 %% platinum, 50 %% resizable (Sudarsan et al., §4.4), mean completion s\n\n");
    std::printf("| run | all (paper) | gold (paper) | platinum (paper) |\n|---|---|---|---|\n");
    json << ", \"priority\": {";
    for (const Case& c : cases) {
      Mean m = average(seeds, c.scheduler, 0.5, 0.5, c.frozen);
      auto paper_text = [](double x) { return x < 0 ? std::string("—") : std::to_string(x).substr(0, std::to_string(x).find('.') + 2); };
      std::printf("| %s | %.1f (%.1f) | %.1f (%s) | %.1f (%s) |\n", c.label, m.completion, c.paper, m.class_completion["gold"],
                  paper_text(c.paper_gold).c_str(), m.class_completion["platinum"], paper_text(c.paper_platinum).c_str());
      json << (c.label == cases[0].label ? "" : ", ") << "\"" << c.label << "\": {\"completion_s\": " << m.completion
           << ", \"gold_s\": " << m.class_completion["gold"] << ", \"platinum_s\": " << m.class_completion["platinum"] << "}";
    }
    json << "}";
#if defined(DPS_LU_SIM) && defined(DPS_STENCIL_SIM)
    // 4. Application jobs, run by partial direct execution in the same simulated cluster.
    std::printf("\n### Application jobs: LU and stencils (PDEXEC) with rigid jobs on 16 nodes\n\n");
    std::printf("| scheduler | makespan s | mean wait s | utilization %% | LU execution s | LU node-seconds | resizes |\n");
    std::printf("|---|---|---|---|---|---|---|\n");
    const Workload apps = application_mix();
    KillFourAfterIterationOne kill;
    kill.lu = apps.jobs.front().id;
    auto easy = dps::cluster::scheduler_named("easy");
    auto pba = dps::cluster::scheduler_named("pba-q", tuning);
    auto greedy = dps::cluster::scheduler_named("greedy-r", tuning);
    json << ", \"applications\": {";
    bool first_row = true;
    for (dps::cluster::Scheduler* s : {easy.get(), static_cast<dps::cluster::Scheduler*>(&kill), pba.get(), greedy.get()}) {
      const Results r = dps::cluster::Simulation(apps, *s).run();
      const dps::cluster::JobRecord& lu = r.jobs.front();
      std::printf("| %s | %.2f | %.2f | %.1f | %.2f | %.1f | %zu |\n", s->name().c_str(), r.makespan_s, r.mean_wait_s,
                  100 * r.utilization, lu.execution(), lu.node_seconds(), r.resizes);
      json << (first_row ? "" : ", ") << "\"" << s->name() << "\": {\"makespan_s\": " << r.makespan_s
           << ", \"mean_wait_s\": " << r.mean_wait_s << ", \"utilization\": " << r.utilization
           << ", \"lu_execution_s\": " << lu.execution() << ", \"lu_node_seconds\": " << lu.node_seconds() << "}";
      first_row = false;
    }
    json << "}";
#endif
    json << "}";
    std::printf("\n%s\n", json.str().c_str());
    return 0;
  });
}
