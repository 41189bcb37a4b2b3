// bench-ft: what fault tolerance costs without a failure, and what a failure costs. LU (n = 4096) and
// the stencil (n = 4096, 200 iterations) on 2 node processes over TCP loopback, each with
// --fault-tolerance and without it, interleaved, medians of the repetitions; the results must not
// differ. Then the same stencil on 3 node processes, traced, node 2 SIGKILLed once it used --kill-cpu
// seconds of CPU (scripts/kill-a-node): its recovery, from the failure to the end of the last rebuilt
// thread's replay (dps/trace/recovery.hpp), against its bound, 0.5 s plus the lost states at the
// link's rate plus the work done again; and the simulator's prediction of that run (stencil-sim on
// the model calibrate measures of the 3 node processes, node 2 failing as far into the iteration
// the trace says it failed in). Then bench-checkpoint: a checkpoint of 256 MiB against copying
// it once over loopback, and (--netns, as root) over a 1 Gbit/s link between hosts of a namespace
// cluster.
//
//   bench-ft                              # 5 repetitions, a checkpoint a second (the default)
//   bench-ft --repeat 3 --checkpoint-every 0.2 --netns
//
// The last line is JSON: overhead_lu and overhead_stencil (fractions, Goal <= 0.05), with the times
// they come from, and whether each result was the same with and without; recovery_s and
// recovery_bound_s (medians; Goal recovery_s <= recovery_bound_s) and whether the recovered runs'
// checksums were those of the runs without failure; predicted_error, the median of |predicted -
// real| / real over the recovered runs (Goal <= 0.1), with both times; checkpoint_ratio (Goal <= 1.5, the largest of
// loopback's and the namespace cluster's) with each.
#include "median.hpp"
#include "peer.hpp"

#include <dps/cli.hpp>
#include <dps/trace/reader.hpp>
#include <dps/trace/recovery.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

// A field's text as printed (the checksum, the residual): compared digit for digit.
std::string text_of(const std::string& line, const std::string& name) {
  const auto at = line.find("\"" + name + "\"");
  if (at == std::string::npos) throw std::runtime_error("no " + name + " in '" + line + "'");
  const auto from = line.find_first_not_of(" :", at + name.size() + 2);
  return line.substr(from, line.find_first_of(" ,}\n", from) - from);
}

struct Side {
  std::vector<double> plain, tolerant;  // seconds
  bool same = true;
  double overhead() const { return median(tolerant) / median(plain) - 1; }
};

void measure(Side& side, const std::string& command, const std::string& ft, const std::string& result) {
  const std::string plain = run_peer(command), tolerant = run_peer(command + " " + ft);
  side.plain.push_back(field(plain, "time_s"));
  side.tolerant.push_back(field(tolerant, "time_s"));
  side.same = side.same && text_of(plain, result) == text_of(tolerant, result);
  std::printf("%s: %.3f s, with fault tolerance %.3f s (%s %s / %s)\n", command.c_str(), side.plain.back(),
              side.tolerant.back(), result.c_str(), text_of(plain, result).c_str(), text_of(tolerant, result).c_str());
}

// Where a run was at `time`: the iteration under way (its phase "iteration K") and how far into it.
struct Progress {
  long iteration = 0;
  double fraction = 0;
};

// The spans of the phases "iteration K" of a trace, by K.
std::map<long, std::pair<double, double>> iterations(const dps::trace::Trace& t) {
  std::map<long, std::pair<double, double>> out;
  for (const dps::trace::Phase& p : t.phases) {
    const std::string& name = t.names.at(p.name);
    if (!name.starts_with("iteration ")) continue;
    auto& span = out[std::stol(name.substr(10))];
    (p.begin ? span.first : span.second) = p.time;
  }
  return out;
}

Progress progress_at(const dps::trace::Trace& t, double time) {
  for (const auto& [k, span] : iterations(t))
    if (span.first <= time && time < span.second) return {k, (time - span.first) / (span.second - span.first)};
  throw std::runtime_error("the trace has no iteration under way at " + std::to_string(time) + " s");
}

double time_at(const dps::trace::Trace& t, Progress p) {
  const auto spans = iterations(t);
  const auto it = spans.find(p.iteration);
  if (it == spans.end()) throw std::runtime_error("the trace has no iteration " + std::to_string(p.iteration));
  return it->second.first + p.fraction * (it->second.second - it->second.first);
}

// The stencil's recoveries, each from a run killed once.
struct Recoveries {
  std::vector<double> seconds, bounds, work, lost_mib;
  std::vector<double> real_s, predicted_s, errors;  // the whole run's
  bool same = true;
};

// `command` (the stencil on 3 node processes) traced, node 2 killed once it used `cpu` s of CPU, and
// the recovery its trace records. The lost states are the rebuilt threads' blocks of the n x n grid.
// `simulated` is the same run in the simulator, to which " --fail 2@SECONDS" is added: node 2 fails
// as far into the same iteration as it did in the real run (the simulated run is faster or slower, and
// its setup takes another time: the same moment would lose other work, or come after the end).
void recover(Recoveries& out, const std::string& command, const std::string& simulated, double cpu, long n,
             double bytes_per_s, const std::string& checksum) {
  const std::string trace = "/tmp/bench-ft-recovery.dpstrace";
  const std::string line = run_peer(std::string(DPS_SOURCE_DIR) + "/scripts/kill-a-node " + std::to_string(cpu) +
                                    " 2 " + command + " --trace " + trace + " 2>/dev/null");
  const dps::trace::Trace real = dps::trace::read(trace);
  const std::vector<dps::trace::Recovery> found = dps::trace::recoveries(real);
  std::remove(trace.c_str());
  if (found.size() != 1 || found[0].threads.empty() || found[0].replayed != found[0].threads.size())
    throw std::runtime_error("the stencil's trace records no whole recovery of node 2: " + line);
  const dps::trace::Recovery& r = found[0];
  const double lost = static_cast<double>(r.threads.size()) * static_cast<double>(n) * static_cast<double>(n) * 8 /
                      field(line, "threads");
  out.seconds.push_back(r.seconds());
  out.work.push_back(r.replayed_work);
  out.lost_mib.push_back(lost / (1 << 20));
  out.bounds.push_back(0.5 + lost / bytes_per_s + r.replayed_work);
  out.same = out.same && text_of(line, "checksum") == checksum;
  const Progress at = progress_at(real, r.failed);
  run_peer(simulated + " --trace " + trace + " 2>/dev/null");
  const double when = time_at(dps::trace::read(trace), at);
  std::remove(trace.c_str());
  char failed[32];
  std::snprintf(failed, sizeof failed, "%.4f", when);
  const std::string prediction = run_peer(simulated + " --fail 2@" + failed + " 2>/dev/null");
  out.same = out.same && text_of(prediction, "checksum") == checksum;
  out.real_s.push_back(field(line, "time_s"));
  out.predicted_s.push_back(field(prediction, "predicted_s"));
  out.errors.push_back(std::abs(out.predicted_s.back() - out.real_s.back()) / out.real_s.back());
  std::printf(
      "node 2 killed at %.4f s (%.0f %% into iteration %ld; simulated at %s s): %zu thread(s) rebuilt, %.1f MiB, "
      "recovered in %.3f s (bound %.3f s: %.3f s done again), checksum %s; the run %.3f s, predicted %.3f s\n",
      r.failed, 100 * at.fraction, at.iteration, failed, r.threads.size(), out.lost_mib.back(), r.seconds(),
      out.bounds.back(), r.replayed_work, text_of(line, "checksum").c_str(), out.real_s.back(), out.predicted_s.back());
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  return dps::run_main("bench-ft", [&] {
    long repeat = 5;
    double every = 1;
    bool netns = false;
    double kill_cpu = 0.5;
    dps::Cli cli("bench-ft", "LU and the stencil on 2 node processes, with --fault-tolerance and without.");
    cli.option("--repeat", repeat, "repetitions; medians count (default 5)")
        .option("--checkpoint-every", every, "S  seconds between a thread's checkpoints (default 1, the option's)")
        .option("--kill-cpu", kill_cpu, "S  CPU seconds node 2 uses before it is killed (default 0.5)")
        .flag("--netns", netns, "also a checkpoint over a 1 Gbit/s link of a namespace cluster (needs root)");
    if (!cli.parse(argc, argv)) return 0;
    if (repeat < 1) throw std::invalid_argument("--repeat must be positive");
    if (!(every > 0)) throw std::invalid_argument("--checkpoint-every must be positive");
    if (!(kill_cpu > 0)) throw std::invalid_argument("--kill-cpu must be positive");
    const std::string ft = "--fault-tolerance --checkpoint-every " + std::to_string(every);
    Side lu, stencil;
    for (long k = 0; k < repeat; ++k) {
      measure(lu, std::string(DPS_LU) + " --nodes 2 --n 4096", ft, "residual");
      measure(stencil, std::string(DPS_STENCIL) + " --nodes 2 --n 4096 --iterations 200", ft, "checksum");
    }
    const std::string checkpoint = std::string(DPS_BENCH_CHECKPOINT) + " --repeat " + std::to_string(repeat);
    const std::string on_loopback = run_peer(checkpoint);
    const double loopback = field(on_loopback, "checkpoint_ratio");
    std::printf("checkpoint of 256 MiB on loopback: %.3f times the copy\n", loopback);
    const double loopback_bytes_per_s = field(on_loopback, "mib") * (1 << 20) / field(on_loopback, "copy_s");
    Recoveries recovered;
    const std::string checksum =
        text_of(run_peer(std::string(DPS_STENCIL) + " --nodes 2 --n 4096 --iterations 200"), "checksum");
    const std::string model = "/tmp/bench-ft-model.json";
    run_lines(std::string(DPS_CALIBRATE) + " --nodes 3 --seconds 0.5 --out " + model);
    const std::string stencil_run = " --nodes 3 --n 4096 --iterations 200 " + ft;
    for (long k = 0; k < repeat; ++k)
      recover(recovered, DPS_STENCIL + stencil_run, DPS_STENCIL_SIM + stencil_run + " --model " + model, kill_cpu, 4096,
              loopback_bytes_per_s, checksum);
    std::remove(model.c_str());
    std::string over_link = "null";
    if (netns) {
      const std::string script = std::string(DPS_SOURCE_DIR) + "/scripts/netns-cluster";
      const std::string hosts = "/tmp/bench-ft-hosts";
      run_lines(script + " up 3 --rate 1gbit --prefix dpsft- && printf '10.77.0.1\\n10.77.0.2\\n10.77.0.3\\n' > " +
                hosts);
      std::string line;
      try {
        line = run_peer("DPS_RSH=\"" + script + " rsh --prefix dpsft-\" " + script + " exec --prefix dpsft- 0 " +
                        checkpoint + " --hostfile " + hosts + " --link-mbit 1000");
      } catch (...) {
        run_lines(script + " down --prefix dpsft-");
        throw;
      }
      run_lines(script + " down --prefix dpsft-");
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.3f", field(line, "checkpoint_ratio"));
      over_link = ratio;
      std::printf("checkpoint of 256 MiB over 1 Gbit/s: %s times the copy\n", over_link.c_str());
    }
    std::printf(
        "{\"checkpoint_every\": %g, \"overhead_lu\": %.4f, \"lu_s\": %.3f, \"lu_ft_s\": %.3f, \"lu_same\": %s, "
        "\"overhead_stencil\": %.4f, \"stencil_s\": %.3f, \"stencil_ft_s\": %.3f, \"stencil_same\": %s, "
        "\"goal\": 0.05, \"recovery_s\": %.3f, \"recovery_bound_s\": %.3f, \"recovery_replayed_work_s\": %.3f, "
        "\"recovery_lost_mib\": %.1f, \"recovery_same\": %s, \"predicted_error\": %.4f, \"recovered_run_s\": %.3f, "
        "\"recovered_run_predicted_s\": %.3f, \"predicted_goal\": 0.1, "
        "\"checkpoint_ratio\": %.3f, \"checkpoint_ratio_loopback\": %.3f, "
        "\"checkpoint_ratio_1gbit\": %s, \"checkpoint_goal\": 1.5}\n",
        every, lu.overhead(), median(lu.plain), median(lu.tolerant), lu.same ? "true" : "false", stencil.overhead(),
        median(stencil.plain), median(stencil.tolerant), stencil.same ? "true" : "false", median(recovered.seconds),
        median(recovered.bounds), median(recovered.work), median(recovered.lost_mib), recovered.same ? "true" : "false",
        median(recovered.errors), median(recovered.real_s), median(recovered.predicted_s),
        netns ? std::max(loopback, std::stod(over_link)) : loopback, loopback, over_link.c_str());
    return 0;
  });
}
