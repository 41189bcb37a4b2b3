// bench-placement: the allocation study of Mache ("Parallel I/O- and Communication-Sensitive Scheduling on
// High-Performance Parallel Computers") rerun in the cluster simulator: streams of traffic jobs (exponential sizes of
// mean 16, Poisson arrivals, FCFS) on its 22 × 16 mesh with 16 I/O nodes in a column west, each strategy on the same
// streams (seeds 1..N, means over them), each I/O share at the same offered load (--load):
//   - Table 8: the balance factor and the writes' max_contention of each strategy, beside his;
//   - Table 9: the mean service time of each strategy as the I/O share of the messages goes from 100 %
//     to 0 %, its rank, and the winner beside his;
//   - dispersal: contiguous < MBS < Paging < Random, by average distance and by the contention of each
//     job's own messages.
// Prints Markdown tables (docs/topology.md), then one line of JSON.
//
//   bench-placement --seeds 3
#include <dps/cli.hpp>
#include <dps/cluster/allocation.hpp>
#include <dps/cluster/backfilling.hpp>
#include <dps/cluster/simulation.hpp>
#include <dps/cluster/workload.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

using dps::cluster::Results;

struct Setup {
  long seeds = 3;
  long jobs = 1000;
  double load = 0.6;
  long messages = 8;
  double bytes = 262144;
  double io_MBps = 0;
};

struct Figures {  // means over the seeds
  double balance_factor = 0, io_contention = 0, service_s = 0, wait_s = 0, utilization = 0, distance = 0, contention = 0;
};

const dps::Mesh kMesh(22, 16);

dps::cluster::Results simulate(const Setup& s, const std::string& strategy, double io_share, double arrival_s, std::size_t jobs,
                               std::uint64_t seed) {
  const dps::cluster::Workload w{
      .jobs = dps::cluster::traffic_stream({.jobs = jobs, .mean_arrival_s = arrival_s, .messages = s.messages, .message_bytes = s.bytes,
                                            .io_share = io_share, .seed = seed},
                                           kMesh.size()),
      .nodes = kMesh.size(),
      .classes = {{"normal", 0}}};
  auto allocator = dps::cluster::allocator_named("--strategy", strategy, &kMesh, seed);
  dps::cluster::Fcfs fcfs;
  return dps::cluster::Simulation(w, fcfs, {.allocator = allocator.get(), .mesh = &kMesh, .io_column = true, .io_bandwidth = s.io_MBps * 1e6})
      .run();
}

// The mean interarrival at which Paging keeps `load` of the nodes busy at this I/O share: from a
// job's node-seconds alone, refined by the node-seconds jobs take at that interarrival, contention
// included (three rounds of 300 jobs).
double arrival_for(const Setup& s, double io_share, double load) {
  auto node_seconds = [](const Results& r) {
    double sum = 0;
    for (const auto& j : r.jobs) sum += j.node_seconds() / static_cast<double>(r.jobs.size());
    return sum;
  };
  const double nodes = static_cast<double>(kMesh.size());
  double arrival = node_seconds(simulate(s, "paging", io_share, 1e3, 200, 1)) / (nodes * load);
  for (int round = 0; round < 3; ++round) {
    const Results r = simulate(s, "paging", io_share, arrival, 300, 1);
    arrival *= r.utilization / load;
  }
  return arrival;
}

Figures run(const Setup& s, const std::string& strategy, double io_share, double load) {
  Figures f;
  const double arrival_s = arrival_for(s, io_share, load);
  for (long seed = 1; seed <= s.seeds; ++seed) {
    const Results r = simulate(s, strategy, io_share, arrival_s, static_cast<std::size_t>(s.jobs), static_cast<std::uint64_t>(seed));
    const double n = static_cast<double>(s.seeds);
    f.balance_factor += r.balance_factor / n, f.io_contention += r.mean_io_contention / n, f.service_s += r.mean_execution_s / n;
    f.wait_s += r.mean_wait_s / n, f.utilization += r.utilization / n, f.distance += r.mean_average_distance / n;
    f.contention += r.mean_max_contention / n;
  }
  return f;
}

double correlation(const std::vector<double>& x, const std::vector<double>& y) {
  const auto n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) mx += x[i] / n, my += y[i] / n;
  double sxy = 0, sxx = 0, syy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx), syy += (y[i] - my) * (y[i] - my);
  return sxy / std::sqrt(sxx * syy);
}

}  // namespace

int main(int argc, char** argv) {
  return dps::run_main("bench-placement", [&] {
    Setup s;
    double table8_share = 1, table8_load = 0.9;
    dps::Cli cli("bench-placement",
                 "The allocation study of Mache (Parallel I/O- and Communication-Sensitive Scheduling on "
                 "High-Performance Parallel Computers) in the cluster simulator, beside the dissertation's tables.");
    cli.option("--seeds", s.seeds, "streams each figure is averaged over (default 3)")
        .option("--jobs", s.jobs, "jobs per stream (default 1000, as the dissertation's)")
        .option("--load", s.load, "the offered load: each I/O share's mean interarrival gives it (default 0.6)")
        .option("--messages", s.messages, "messages per node of each job (default 8)")
        .option("--bytes", s.bytes, "bytes per message (default 262144)")
        .option("--io-MBps", s.io_MBps, "an I/O node's bandwidth (default 0: a link's, 380)")
        .option("--table8-share", table8_share, "the I/O share of Table 8's streams (default 1: all writes)")
        .option("--table8-load", table8_load, "Table 8's load, heavy as the dissertation's interarrival 500 (default 0.9)");
    if (!cli.parse(argc, argv)) return 0;
    if (s.seeds < 1 || s.jobs < 1 || s.messages < 1 || !(s.load > 0) || !(s.bytes > 0))
      throw std::invalid_argument("--seeds, --jobs, --messages, --load and --bytes expect positive numbers");
    std::ostringstream json;
    json << "{\"seeds\": " << s.seeds << ", \"jobs\": " << s.jobs << ", \"load\": " << s.load;

    // Table 8: Mache's balance factor and max_contention at interarrival 500 (SDSC trace).
    struct Mache8 {
      const char* strategy;
      double balance_factor, max_contention;
    };
    const Mache8 table8[] = {{"paging", 32.14, 1336.48}, {"mbs", 19.72, 1224.90}, {"mc", 15.43, 1199.34},
                             {"mc-elongated", 7.01, 1152.98}, {"random", 4.43, 1140.74}, {"plas", 0.69, 1124.88}};
    std::printf("### Table 8: balance factor and max_contention (22x16 mesh, 16 I/O nodes west, I/O share %.0f %%, load %.2f)\n\n",
                100 * table8_share, table8_load);
    std::printf("| strategy | balance factor | Mache's | max_contention | Mache's | utilization |\n|---|---|---|---|---|---|\n");
    std::vector<double> balance, contention, his_balance, his_contention;
    json << ", \"table8\": {";
    for (const Mache8& m : table8) {
      const Figures f = run(s, m.strategy, table8_share, table8_load);
      std::printf("| %s | %.2f | %.2f | %.1f | %.2f | %.2f |\n", m.strategy, f.balance_factor, m.balance_factor, f.io_contention,
                  m.max_contention, f.utilization);
      balance.push_back(f.balance_factor), contention.push_back(f.io_contention);
      his_balance.push_back(m.balance_factor), his_contention.push_back(m.max_contention);
      json << (m.strategy == table8[0].strategy ? "" : ", ") << "\"" << m.strategy << "\": {\"balance_factor\": " << f.balance_factor
           << ", \"max_contention\": " << f.io_contention << "}";
    }
    const double ours = correlation(balance, contention), his = correlation(his_balance, his_contention);
    std::printf("\nCorrelation of balance factor and max_contention: %.3f (Mache's %.3f).\n\n", ours, his);
    json << "}, \"table8_correlation\": " << ours << ", \"table8_correlation_mache\": " << his;

    // Table 9: service time by I/O share; his winners: PLAS at 100-60 %, MC Elongated at 40-20 %, MC at 0 %.
    const std::vector<std::string> strategies{"paging", "mbs", "mc", "mc-elongated", "random", "plas"};
    const std::map<int, std::string> his_winner{{100, "plas"}, {80, "plas"}, {60, "plas"}, {40, "mc-elongated"}, {20, "mc-elongated"}, {0, "mc"}};
    std::printf("### Table 9: mean service time in ms (rank) by I/O share, load %.2f\n\n| I/O share |", s.load);
    for (const auto& name : strategies) std::printf(" %s |", name.c_str());
    std::printf(" winner | Mache's winner |\n|---|");
    for (std::size_t k = 0; k <= strategies.size(); ++k) std::printf("---|");
    std::printf("---|\n");
    json << ", \"table9\": {";
    int agree = 0;
    for (int share = 100; share >= 0; share -= 20) {
      std::vector<double> service;
      for (const auto& name : strategies) service.push_back(run(s, name, share / 100.0, s.load).service_s);
      std::printf("| %d %% |", share);
      json << (share == 100 ? "" : ", ") << "\"" << share << "\": {";
      for (std::size_t k = 0; k < strategies.size(); ++k) {
        const auto rank = 1 + std::count_if(service.begin(), service.end(), [&](double x) { return x < service[k]; });
        std::printf(" %.2f (%ld) |", 1e3 * service[k], static_cast<long>(rank));
        json << (k ? ", " : "") << "\"" << strategies[k] << "\": " << service[k];
      }
      const std::string winner = strategies[static_cast<std::size_t>(std::min_element(service.begin(), service.end()) - service.begin())];
      agree += winner == his_winner.at(share);
      std::printf(" %s | %s |\n", winner.c_str(), his_winner.at(share).c_str());
      json << ", \"winner\": \"" << winner << "\"}";
    }
    std::printf("\nThe winner agrees with Mache's at %d of 6 I/O shares.\n\n", agree);
    json << "}, \"table9_winners_agree\": " << agree;

    // Dispersal, no I/O: contiguous < MBS < Paging < Random.
    std::printf("### Dispersal and contention of each job's own messages (I/O share 0)\n\n");
    std::printf("| strategy | mean average distance | mean max_contention | mean wait s | utilization |\n|---|---|---|---|---|\n");
    json << ", \"dispersal\": {";
    bool first = true;
    for (const std::string name : {"first-fit", "best-fit", "mc", "mbs", "paging", "random"}) {
      const Figures f = run(s, name, 0, s.load);
      std::printf("| %s | %.3f | %.2f | %.4f | %.2f |\n", name.c_str(), f.distance, f.contention, f.wait_s, f.utilization);
      json << (first ? "" : ", ") << "\"" << name << "\": {\"average_distance\": " << f.distance << ", \"max_contention\": " << f.contention
           << ", \"wait_s\": " << f.wait_s << "}";
      first = false;
    }
    json << "}}";
    std::printf("\n%s\n", json.str().c_str());
    return 0;
  });
}
