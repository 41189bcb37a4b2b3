// calibrate: measures a real cluster and writes the simulator's model of it (Schaeli, Gerlach & Hersch, "A simulator
// for adaptive parallel applications", §4). It is a DPS application: run it on the nodes to model, as any application
// runs.
//
//   calibrate --hostfile hosts --out cluster.json     # then: app-sim --model cluster.json
//   calibrate --nodes 4 --out local.json              # processes on this machine
//
// What it measures, one node at a time so that measurements do not disturb each other:
//   - latency: half the round trip of an empty message between node 0 and node k, one at a time;
//   - bandwidth: large messages from node 0 to node k, one at a time, in five rounds:
//     s / (the median round's time per message - 2 l);
//   - cpu_per_send / cpu_per_receive: the CPU node 0's and node k's processes used meanwhile, per
//     second of transfer in progress, over the node's speed: a fraction of the node's own core;
//   - cpu_per_message: the CPU both processes used over the latency's round trips, per message and
//     end, less what those fractions charge an empty message (system calls, wakeups, the runtime);
//   - send_buffer: node 0's socket send buffer to node k after the large messages, as the kernel has
//     grown it: how much of a message a step writes into the socket itself (a non-blocking write);
//   - time_slice / context_switch: on node k, two busy threads held to one CPU: their median turn,
//     and their median switch less the timer's interrupt a lone busy thread sees (host_probes.hpp);
//   - cpu_per_local_message: on node k, empty objects from a split to a leaf and on to a merge, all
//     on one thread of the node, the median of 5 bursts: the wall time per message (times the node's
//     speed), the runtime's handling of a message that stays on its node;
//   - cpu_per_received_byte: on node k, a copy of --bytes into memory the process has not touched
//     (mapped, copied into, unmapped) less the same copy into memory it has, per byte: the first
//     touch of the fresh buffers an application's received messages land in, which calibrate's own
//     messages (read into one reused block) do not pay;
//   - speed: the wall time of a fixed loop on each node alone, against its thread CPU time on node 0
//     (the simulator measures steps by thread CPU time, so a node as fast as node 0's machine and not
//     throttled has speed 1). Each loop spans many periods of a CPU quota, and the nodes are measured
//     round after round until each one's last readings agree (--tolerance): a node's speed is the
//     median of its readings, their spread is reported as the calibration's confidence;
//   - CPU quota (--quotas): a busy thread's stalls (a cgroup's cpu.max, a container's CPU limit under
//     a core), their mean period and the share of it the thread runs: the model holds the node to
//     that share of each period, and its speed is the one it runs at meanwhile;
//   - cores: CPU seconds per wall second of the loop run on every CPU the process may use (so a
//     cgroup quota of half a core gives one core at speed 0.5);
//   - workers: the worker threads each node process runs (that many steps run at once there);
//   - hosts: node processes on one machine (same host name and network namespace) share its cores:
//     the model puts them on one host ("nodes_per_host"), each measured alone.
// Network figures are medians over node pairs (0, k). Hosts in a row with the same nodes, cores,
// workers and quota, and speeds within 10 %, form one group. Last line: JSON with the figures.
#include "host_probes.hpp"
#include "median.hpp"
#include "provenance.hpp"

#include <cereal/types/string.hpp>
#include <dps/cli.hpp>
#include <dps/dps.hpp>
#include <dps/kernel/context.hpp>  // which backend runs the calling step
#include <dps/kernel/runtime.hpp>
#include <dps/net/tcp_backend.hpp>
#include <dps/sim/model.hpp>
#include <dps/trace/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

using calibrate::clock_seconds;
using calibrate::find_quota;
using calibrate::first_touch_per_byte;
using calibrate::host_key;
using calibrate::loop;
using calibrate::Quota;
using calibrate::Slicing;
using calibrate::time_slicing;
using calibrate::usable_cores;

constexpr std::size_t kMaxBytes = std::size_t{1} << 30;

// What a message carries is written from one block of zeros and read into a per-thread block, so
// that what is measured is moving the bytes, not making them. main() sizes the block first.
const char* zeros(std::size_t bytes) {
  static std::vector<char> block;
  if (bytes > kMaxBytes) throw std::invalid_argument("--bytes is at most " + std::to_string(kMaxBytes));
  if (block.size() < bytes) block.resize(bytes);
  return block.data();
}
char* scratch(std::size_t bytes) {
  thread_local std::vector<char> block;
  if (bytes > kMaxBytes) throw std::length_error("a calibration message of " + std::to_string(bytes) + " bytes");
  if (block.size() < bytes) block.resize(bytes);
  return block.data();
}

struct Blob {
  long target = 0;
  std::size_t bytes = 0;
  template <class A>
  void save(A& a) const {
    a(target, bytes);
    a(cereal::binary_data(zeros(bytes), bytes));
  }
  template <class A>
  void load(A& a) {
    a(target, bytes);
    a(cereal::binary_data(scratch(bytes), bytes));
  }
};
struct Order {
  long target = 0, count = 0;
  std::size_t bytes = 0;
  template <class A>
  void serialize(A& a) {
    a(target, count, bytes);
  }
};
struct Ack {
  long node = 0;
  template <class A>
  void serialize(A& a) {
    a(node);
  }
};
struct Tally {
  long count = 0;
  template <class A>
  void serialize(A& a) {
    a(count);
  }
};

// `count` messages of `bytes` to node `target`; under a window of one, each leaves when the last one's
// acknowledgement is back.
struct Emit : dps::Split<Order, Blob> {
  dps::Step execute(Order o) {
    for (long i = 0; i < o.count; ++i) co_await post(Blob{o.target, o.bytes});
  }
};
struct Echo : dps::Leaf<Blob, Ack> {
  Ack execute(const Blob&) { return {static_cast<long>(node())}; }
};
struct Count : dps::Merge<Ack, Tally> {
  dps::Step execute(Ack) {
    Tally t{1};
    while (auto more = co_await next()) ++t.count;
    co_await post(t);
  }
};

// `count` empty objects from a split to a leaf and on to a merge, all on node `target`'s one probe
// thread: the wall time from the split's start to the merge's end over the 2 × count messages that
// stay on the node is the runtime's handling of such a message (the operations do nothing).
struct Hop {
  long target = 0;
  double start = 0;  // the split's start, CLOCK_MONOTONIC
  template <class A>
  void serialize(A& a) {
    a(target, start);
  }
};
struct LocalCost {
  long node = 0, messages = 0;
  double seconds = 0;
  template <class A>
  void serialize(A& a) {
    a(node, messages, seconds);
  }
};
struct Scatter : dps::Split<Order, Hop> {
  dps::Step execute(Order o) {
    const double start = clock_seconds(CLOCK_MONOTONIC);
    for (long i = 0; i < o.count; ++i) co_await post(Hop{o.target, start});
  }
};
struct Bounce : dps::Leaf<Hop, Hop> {
  Hop execute(const Hop& h) { return h; }
};
struct Gather : dps::Merge<Hop, LocalCost> {
  dps::Step execute(Hop h) {
    long received = 1;
    while (auto more = co_await next()) ++received;
    co_await post(LocalCost{static_cast<long>(node()), 2 * received, clock_seconds(CLOCK_MONOTONIC) - h.start});
  }
};

// A node's process: its CPU time so far, its cores, and (when asked) how long a fixed loop takes there.
struct Probe {
  long target = 0, iterations = 0;
  double stall_seconds = 0;    // > 0: look for a CPU quota's stalls this long
  std::size_t touch_bytes = 0;  // > 0: time the first touch of fresh memory, this many bytes at a time
  double slicing_seconds = 0;   // > 0: time two busy threads taking turns on one CPU, this long
  template <class A>
  void serialize(A& a) {
    a(target, iterations, stall_seconds, touch_bytes, slicing_seconds);
  }
};
struct Sample {
  long node = 0;
  unsigned cores = 1, workers = 1;
  std::uint64_t host = 0;  // the same for node processes on one machine
  double process_cpu_s = 0, loop_cpu_s = 0, loop_wall_s = 0, loop_sum = 0;
  double quota_period_s = 0, quota_share = 0;  // a CPU quota found: its period and share of it; else 0
  double touch_s_per_byte = 0;                 // the first touch of fresh memory, CPU seconds per byte
  double slice_s = 0, switch_s = 0;            // time slicing: a turn, and what a switch costs
  std::string host_name;                       // as the model records it
  template <class A>
  void serialize(A& a) {
    a(node, cores, workers, host, process_cpu_s, loop_cpu_s, loop_wall_s, loop_sum, quota_period_s, quota_share,
      touch_s_per_byte, slice_s, switch_s, host_name);
  }
};

// The worker threads of the process running the calling step (the TCP backend's; else one per CPU).
unsigned workers_here() {
  const auto* tcp = dynamic_cast<const dps::net::TcpBackend*>(&dps::detail::current().runtime->backend());
  return static_cast<unsigned>(tcp ? tcp->workers() : std::max(1u, std::thread::hardware_concurrency()));
}

const std::string& this_host() {  // as the model records it: asked once per process
  static const std::string name = measured_on();
  return name;
}

struct Forward : dps::Split<Probe, Probe> {
  dps::Step execute(Probe p) { co_await post(std::move(p)); }
};
struct Measure : dps::Leaf<Probe, Sample> {
  Sample execute(const Probe& p) {
    Sample s{.node = static_cast<long>(node()),
             .workers = workers_here(),
             .host = host_key(),
             .process_cpu_s = clock_seconds(CLOCK_PROCESS_CPUTIME_ID),
             .host_name = this_host()};
    if (p.iterations > 0) {
      const double cpu = clock_seconds(CLOCK_THREAD_CPUTIME_ID), wall = clock_seconds(CLOCK_MONOTONIC);
      s.loop_sum = loop(p.iterations);
      s.loop_cpu_s = clock_seconds(CLOCK_THREAD_CPUTIME_ID) - cpu;
      s.loop_wall_s = clock_seconds(CLOCK_MONOTONIC) - wall;
      s.cores = usable_cores(p.iterations);
    }
    if (p.stall_seconds > 0) {
      const Quota q = find_quota(p.stall_seconds);
      s.quota_period_s = q.period;
      s.quota_share = q.share;
    }
    if (p.touch_bytes > 0) s.touch_s_per_byte = first_touch_per_byte(p.touch_bytes);
    if (p.slicing_seconds > 0) {
      const Slicing slicing = time_slicing(p.slicing_seconds);
      s.slice_s = slicing.slice;
      s.switch_s = slicing.switch_cost;
    }
    return s;
  }
};
struct Return : dps::Merge<Sample, Sample> {
  dps::Step execute(Sample s) {
    while (auto more = co_await next()) (void)more;  // there is one
    co_await post(s);
  }
};

double round_to(double x, int digits) {  // significant digits, for a model file people read
  if (x == 0) return 0;
  const double scale = std::pow(10.0, digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(x)))));
  return std::round(x * scale) / scale;
}

constexpr int kBandwidthRounds = 5;
constexpr long kLocalMessages = 40000;  // a burst on one node: some 20 ms

struct Link {
  double latency = 0, bandwidth = 0, cpu_per_send = 0, cpu_per_receive = 0, cpu_per_message = 0;
};

template <class Graph, class Samples>
Link measure_link(Graph& stream, Samples& sample, long k, std::size_t bytes, double seconds) {
  using Clock = std::chrono::steady_clock;
  auto timed = [&](long count, std::size_t size) {
    const auto start = Clock::now();
    const Tally t = stream.call(Order{k, count, size}).get();
    if (t.count != count) throw std::runtime_error("node " + std::to_string(k) + " acknowledged " +
                                                   std::to_string(t.count) + " of " + std::to_string(count) + " messages");
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  Link link;
  // Latency: round trips of empty messages, as many as fill a quarter of the time.
  const double trial = timed(20, 0) / 20;
  const long trips = std::clamp(static_cast<long>(seconds / 4 / trial), 20L, 200000L);
  const double trips_cpu = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
  const Sample trips_before = sample.call(Probe{k, 0}).get();
  link.latency = timed(trips, 0) / static_cast<double>(trips) / 2;
  const Sample trips_after = sample.call(Probe{k, 0}).get();
  // Both processes' CPU over the round trips: each trip is a send and a receive at each end.
  const double per_end =
      (clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - trips_cpu + trips_after.process_cpu_s - trips_before.process_cpu_s) /
      static_cast<double>(4 * trips);
  // Bandwidth and the CPU that moving the bytes takes at both ends, over half the time, in rounds:
  // the median round's time per message, so that one stall (a host throttled by its CPU quota while
  // the window is full) does not set the link's figure.
  const double one = timed(1, bytes);
  const long per_round = std::clamp(static_cast<long>(seconds / 2 / kBandwidthRounds / one), 1L, 2000L);
  const double sender_cpu = clock_seconds(CLOCK_PROCESS_CPUTIME_ID);
  const Sample before = sample.call(Probe{k, 0}).get();
  std::vector<double> round_times;
  for (int round = 0; round < kBandwidthRounds; ++round) round_times.push_back(timed(per_round, bytes));
  const Sample after = sample.call(Probe{k, 0}).get();
  const double sent_cpu = clock_seconds(CLOCK_PROCESS_CPUTIME_ID) - sender_cpu;
  const long count = per_round * kBandwidthRounds;
  const double per = median(round_times) / static_cast<double>(per_round) - 2 * link.latency;  // s / b
  if (per <= 0)
    throw std::runtime_error("node " + std::to_string(k) + ": messages of " + std::to_string(bytes) +
                             " bytes take no longer than empty ones (a larger --bytes?)");
  link.bandwidth = static_cast<double>(bytes) / per;
  const double busy = static_cast<double>(count) * (link.latency + per);  // a transfer in progress
  link.cpu_per_send = std::clamp(sent_cpu / busy, 0.0, 1.0);
  link.cpu_per_receive = std::clamp((after.process_cpu_s - before.process_cpu_s) / busy, 0.0, 1.0);
  // A message's own CPU at each end: what an empty one took, less what the transfers' share charges it.
  link.cpu_per_message = std::max(0.0, per_end - (link.cpu_per_send + link.cpu_per_receive) / 2 * link.latency);
  return link;
}

// The nodes on each node's host; hosts must hold consecutive nodes (as launchers start them), else
// the model could not say which share.
std::vector<unsigned> nodes_per_host(const std::vector<Sample>& nodes) {
  std::vector<unsigned> per_host(nodes.size(), 1);
  for (std::size_t first = 0, end = 0; first < nodes.size(); first = end) {
    end = first + 1;
    while (end < nodes.size() && nodes[end].host == nodes[first].host) ++end;
    for (std::size_t i = end; i < nodes.size(); ++i)
      if (nodes[i].host == nodes[first].host)
        throw std::runtime_error("node " + std::to_string(i) + " shares node " + std::to_string(first) +
                                 "'s host but not its neighbours': the model holds hosts of consecutive nodes");
    for (std::size_t i = first; i < end; ++i) per_host[i] = static_cast<unsigned>(end - first);
  }
  return per_host;
}

// Consecutive hosts with the same nodes, cores, workers and CPU quota, and speeds within 10 % of their
// group's mean, form a group.
std::vector<dps::sim::NodeGroup> group(const std::vector<Sample>& nodes, const std::vector<double>& speeds,
                                       const std::vector<Quota>& quotas) {
  const auto close = [](double a, double b) { return std::fabs(a - b) <= 0.1 * std::max(a, b); };
  const std::vector<unsigned> per_host = nodes_per_host(nodes);
  std::vector<dps::sim::NodeGroup> groups;
  std::vector<double> sums, periods;  // of the group's speeds and quota periods
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const double mean = groups.empty() ? 0 : sums.back() / static_cast<double>(groups.back().count);
    const bool host_begins = i == 0 || nodes[i].host != nodes[i - 1].host;
    if (!groups.empty() && (!host_begins || (groups.back().nodes_per_host == per_host[i] &&
                                             groups.back().cores == nodes[i].cores &&
                                             groups.back().workers == nodes[i].workers &&
                                             close(groups.back().quota, quotas[i].share) &&
                                             std::fabs(speeds[i] - mean) <= 0.1 * mean))) {
      ++groups.back().count;
      sums.back() += speeds[i];
      periods.back() += quotas[i].period;
    } else {
      groups.push_back({"", 1, nodes[i].cores, 0, nodes[i].workers});
      groups.back().nodes_per_host = per_host[i];
      groups.back().quota = quotas[i].share;  // its period: the mean of the group's, below
      sums.push_back(speeds[i]);
      periods.push_back(quotas[i].period);
    }
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    groups[g].name = groups.size() == 1 ? "nodes" : "group" + std::to_string(g);
    groups[g].speed = round_to(sums[g] / static_cast<double>(groups[g].count), 3);
    if (groups[g].quota > 0) groups[g].quota_period = round_to(periods[g] / static_cast<double>(groups[g].count), 2);
  }
  return groups;
}

void write_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    if (!out.flush()) throw std::runtime_error("cannot write " + temporary);
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) throw std::runtime_error("cannot write " + path + ": " + error.message());
}

}  // namespace

int main(int argc, char** argv) {
  return dps::run_main("calibrate", [&] {
    // Node processes are what it measures: --local (every node in this process) would run the speed
    // rounds before the bandwidth showed that there is no network.
    const bool in_process = dps::Application::parse(argc, argv).in_process;
    dps::Application app(argc, argv);
    std::string out = "cluster.json";
    double seconds = 2;
    long bytes = 4 << 20, pairs = 3, rounds = 8;
    double tolerance = 0.01;
    bool quotas_wanted = false;
    dps::Cli cli("calibrate",
                 "Measures the nodes it runs on (latency, bandwidth, CPU used by transfers, node speeds and "
                 "cores) and writes the simulator's cluster model.");
    cli.option("--out", out, "the model file to write (default cluster.json)")
        .option("--seconds", seconds, "time spent on each measurement of a link (default 2)")
        .option("--bytes", bytes, "size of the messages that measure bandwidth (default 4194304)")
        .option("--pairs", pairs, "links measured: node 0 with nodes 1 .. pairs (default 3)")
        .option("--tolerance", tolerance,
                "speeds are measured round after round until each node's last three readings are within this "
                "fraction of each other (default 0.01)")
        .option("--rounds", rounds, "the most rounds of speed readings (default 8; at least 3)")
        .flag("--quotas", quotas_wanted,
              "look for CPU quotas (cgroup cpu.max, container CPU limits under a core) and model them: the node "
              "then runs at its full speed and stops for the rest of each period once its share is used "
              "(default: a quota makes a uniformly slower node)");
    if (!cli.parse(app.args(), dps::Application::options_help())) return 0;
    if (in_process)
      throw std::invalid_argument(
          "--local runs every node in this process, and calibrate measures node processes and the network between "
          "them (--nodes N or --hostfile FILE)");
    if (app.nodes() < 2) throw std::invalid_argument("calibrate needs at least two nodes (--nodes N or --hostfile FILE)");
    if (seconds <= 0) throw std::invalid_argument("--seconds must be positive");
    if (bytes < 1024) throw std::invalid_argument("--bytes must be at least 1024");
    if (pairs < 1) throw std::invalid_argument("--pairs must be at least 1");
    if (!(tolerance > 0)) throw std::invalid_argument("--tolerance must be positive");
    if (rounds < 3) throw std::invalid_argument("--rounds must be at least 3");
    zeros(static_cast<std::size_t>(bytes));  // checks the size

    const auto nodes = static_cast<long>(app.nodes());
    auto master = app.threads<dps::Stateless>("master", 1);
    auto probes = app.threads<dps::Stateless>("probes", app.nodes());  // probe i on node i
    auto on_target = [](const auto& o) { return static_cast<std::size_t>(o.target); };  // probe k on node k
    auto stream = app.graph(dps::op<Emit>(master).window(1) >> dps::op<Echo>(probes, on_target) >> dps::op<Count>(master));
    auto sample = app.graph(dps::op<Forward>(master) >> dps::op<Measure>(probes, on_target) >> dps::op<Return>(master));
    auto local = app.graph(dps::op<Scatter>(probes, on_target) >> dps::op<Bounce>(probes, on_target) >>
                           dps::op<Gather>(probes, on_target));

    // Node speeds and cores: the same loop, a quarter of `seconds` of CPU on node 0, on each node alone
    // (so that a quota's periods and other hosts' work do not set a node's figure), in rounds until
    // every node's last three readings agree. Node 0's CPU time for the loop, the unit, is read
    // every round too.
    long iterations = 1 << 20;
    while (sample.call(Probe{0, iterations}).get().loop_cpu_s < 0.05) iterations *= 2;
    iterations = static_cast<long>(static_cast<double>(iterations) * (seconds / 4) /
                                   sample.call(Probe{0, iterations}).get().loop_cpu_s);
    const auto checked = [](Sample s, long k) {
      if (s.node != k) throw std::runtime_error("probe " + std::to_string(k) + " ran on node " + std::to_string(s.node));
      return s;
    };
    std::vector<Sample> samples;
    std::vector<std::vector<double>> walls(static_cast<std::size_t>(nodes));
    std::vector<double> unit;  // node 0's CPU seconds for the loop
    auto spread = [](const std::vector<double>& v) {
      const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
      return (*hi - *lo) / median(v);
    };
    auto last_three_spread = [&](const std::vector<double>& v) {
      return spread({v.end() - std::min<std::ptrdiff_t>(3, std::ssize(v)), v.end()});
    };
    auto last_three_agree = [&](const std::vector<double>& v) { return v.size() >= 3 && last_three_spread(v) <= tolerance; };
    bool steady = false;
    for (long round = 0; round < rounds && !steady; ++round) {
      for (long k = 0; k < nodes; ++k) {
        const Sample s = checked(sample.call(Probe{k, iterations}).get(), k);
        if (round == 0) samples.push_back(s);
        if (k == 0) unit.push_back(s.loop_cpu_s);
        walls[static_cast<std::size_t>(k)].push_back(s.loop_wall_s);
      }
      steady = last_three_agree(unit) && std::all_of(walls.begin(), walls.end(), last_three_agree);
    }
    std::vector<double> speeds, speed_spreads;
    for (const auto& w : walls) {
      speeds.push_back(median(unit) / median(w));
      speed_spreads.push_back(spread(w));
    }
    const double unit_spread = spread(unit);
    const double worst_spread = std::max(unit_spread, *std::max_element(speed_spreads.begin(), speed_spreads.end()));
    // Readings that did not settle say something else ran on the hosts meanwhile: the model then
    // predicts what that disturbed machine did, and says so.
    std::string distrust;
    if (!steady) {
      std::size_t worst = 0;
      for (std::size_t i = 1; i < walls.size(); ++i)
        if (last_three_spread(walls[i]) > last_three_spread(walls[worst])) worst = i;
      char text[200];
      std::snprintf(text, sizeof text,
                    "the speed readings did not settle in %zu rounds: node %zu's last three spread %.1f %%, node 0's "
                    "CPU time %.1f %% (--tolerance %.1f %%)",
                    unit.size(), worst, 100 * last_three_spread(walls[worst]), 100 * last_three_spread(unit),
                    100 * tolerance);
      distrust = text;
    }

    // CPU quotas (--quotas): a node held to one runs at its speed while it has budget, the share of
    // each period the model then holds it to (the speeds above are the average: speed × share).
    std::vector<Quota> quotas(static_cast<std::size_t>(nodes));
    for (long k = 0; k < nodes && quotas_wanted; ++k) {
      const auto i = static_cast<std::size_t>(k);
      const Sample s = checked(sample.call(Probe{k, 0, std::max(0.5, seconds / 4)}).get(), k);
      quotas[i] = {round_to(s.quota_period_s, 2), round_to(s.quota_share, 3)};
    }
    // The model's speed of a node under a quota: while it runs.
    std::vector<double> model_speeds = speeds;
    for (std::size_t i = 0; i < quotas.size(); ++i)
      if (quotas[i].share > 0) model_speeds[i] /= quotas[i].share;

    // The links between node 0 and the first `pairs` other nodes.
    std::vector<double> latency, bandwidth, send, receive, per_message, per_received_byte, per_local_message;
    std::vector<double> send_buffer, slices, switches;
    const auto* tcp = dynamic_cast<const dps::net::TcpBackend*>(&app.runtime().backend());
    for (long k = 1; k <= std::min(pairs, nodes - 1); ++k) {
      const Link link = measure_link(stream, sample, k, static_cast<std::size_t>(bytes), seconds);
      latency.push_back(link.latency);
      bandwidth.push_back(link.bandwidth);
      // As fractions of the nodes' own cores (the model's unit): CPU time over capacity, the speed
      // (which, for a node under a quota, is its speed while it runs).
      send.push_back(std::min(1.0, link.cpu_per_send / model_speeds[0]));
      receive.push_back(std::min(1.0, link.cpu_per_receive / model_speeds[static_cast<std::size_t>(k)]));
      per_message.push_back(link.cpu_per_message);
      send_buffer.push_back(tcp ? static_cast<double>(tcp->send_buffer(static_cast<dps::NodeId>(k))) : 0.0);
      const Sample touch = checked(sample.call(Probe{k, 0, 0, static_cast<std::size_t>(bytes), 0.25}).get(), k);
      per_received_byte.push_back(touch.touch_s_per_byte);
      if (touch.slice_s > 0) {
        slices.push_back(touch.slice_s);
        switches.push_back(touch.switch_s);
      }
      // Node k's own messages, as seconds at speed 1: the median of 5 bursts.
      std::vector<double> bursts;
      for (int burst = 0; burst < 5; ++burst) {
        const LocalCost c = local.call(Order{k, kLocalMessages / 2, 0}).get();
        if (c.node != k || c.messages != kLocalMessages)
          throw std::runtime_error("node " + std::to_string(k) + "'s burst ran on node " + std::to_string(c.node) +
                                   " with " + std::to_string(c.messages) + " of " + std::to_string(kLocalMessages) +
                                   " messages");
        bursts.push_back(c.seconds / static_cast<double>(c.messages) * model_speeds[static_cast<std::size_t>(k)]);
      }
      per_local_message.push_back(median(bursts));
      std::printf(
          "node 0 -> %ld: latency %.1f us, bandwidth %.1f MB/s, cpu per send %.3f, per receive %.3f, per message "
          "%.1f us, per received MB %.0f us, send buffer %.0f KiB; on node %ld, per local message %.2f us, time "
          "slice %.2f ms, context switch %.1f us\n",
          k, link.latency * 1e6, link.bandwidth / 1e6, link.cpu_per_send, link.cpu_per_receive,
          link.cpu_per_message * 1e6, touch.touch_s_per_byte * 1e12, send_buffer.back() / 1024, k,
          per_local_message.back() * 1e6, touch.slice_s * 1e3, touch.switch_s * 1e6);
    }
    for (long k = 0; k < nodes; ++k) {
      const auto i = static_cast<std::size_t>(k);
      std::printf("node %ld: %u cores, %u workers, speed %.3f (%zu readings, spread %.1f %%)", k, samples[i].cores,
                  samples[i].workers, speeds[i], walls[i].size(), 100 * speed_spreads[i]);
      if (quotas[i].share > 0)
        std::printf(", a CPU quota of %.2f of a core per %.2f ms", quotas[i].share, quotas[i].period * 1e3);
      std::printf("\n");
    }

    dps::sim::ClusterModel model;
    model.groups = group(samples, model_speeds, quotas);
    if (!slices.empty())  // measured on nodes 1 .. pairs, the hosts' kind
      for (dps::sim::NodeGroup& g : model.groups) {
        g.time_slice = round_to(median(slices), 2);
        g.context_switch = round_to(median(switches), 2);
      }
    model.network.latency = round_to(median(latency), 3);
    model.network.fifo = true;          // measured over TCP: one connection per node pair,
    model.network.cpu_per = dps::sim::CommCpu::Link;  // whose CPU follows the bytes on the link
    model.network.bandwidth = round_to(median(bandwidth), 3);
    model.network.cpu_per_send = round_to(median(send), 2);
    model.network.cpu_per_receive = round_to(median(receive), 2);
    model.network.cpu_per_message = round_to(median(per_message), 2);
    model.network.cpu_per_received_byte = round_to(median(per_received_byte), 2);
    model.network.cpu_per_local_message = round_to(median(per_local_message), 2);
    model.network.send_buffer = round_to(median(send_buffer), 3);
    model.calibration = {measured_at(), {}, distrust.empty(), distrust};
    for (const Sample& s : samples) model.calibration.hosts.push_back(s.host_name);
    write_atomically(out, model.to_json());
    dps::sim::ClusterModel::load(out);  // what we wrote reads back

    std::ostringstream json;
    json.precision(6);
    json << "{\"nodes\": " << nodes << ", \"groups\": " << model.groups.size()
         << ", \"latency_us\": " << model.network.latency * 1e6
         << ", \"bandwidth_MBps\": " << model.network.bandwidth / 1e6
         << ", \"cpu_per_send\": " << model.network.cpu_per_send
         << ", \"cpu_per_receive\": " << model.network.cpu_per_receive
         << ", \"cpu_per_message_us\": " << model.network.cpu_per_message * 1e6
         << ", \"cpu_per_received_MB_us\": " << model.network.cpu_per_received_byte * 1e12
         << ", \"cpu_per_local_message_us\": " << model.network.cpu_per_local_message * 1e6
         << ", \"send_buffer_bytes\": " << model.network.send_buffer
         << ", \"time_slice_us\": " << model.groups[0].time_slice * 1e6
         << ", \"context_switch_us\": " << model.groups[0].context_switch * 1e6 << ", \"speeds\": [";
    for (std::size_t i = 0; i < speeds.size(); ++i) json << (i ? ", " : "") << round_to(speeds[i], 3);
    json << "], \"quotas\": [";
    for (std::size_t i = 0; i < quotas.size(); ++i) json << (i ? ", " : "") << quotas[i].share;
    json << "], \"speed_rounds\": " << walls[0].size() << ", \"speed_spread\": " << round_to(worst_spread, 3)
         << ", \"steady\": " << (steady ? "true" : "false") << ", \"trusted\": " << (distrust.empty() ? "true" : "false")
         << ", \"trust_reason\": " << dps::trace::json::quoted(distrust) << ", \"out\": " << dps::trace::json::quoted(out) << "}";
    if (!distrust.empty()) std::fprintf(stderr, "calibrate: warning: %s\n", model.calibration.warning(out).c_str());
    std::printf("wrote %s\n%s\n", out.c_str(), json.str().c_str());
    return 0;
  });
}
