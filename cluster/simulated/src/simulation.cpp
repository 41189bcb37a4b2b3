// The cluster simulation's event loop: arrivals come from the workload in submit order, the other
// events (iteration ends, run ends, kills) from a heap; the scheduler acts after each instant.
#include "dps/cluster/simulation.hpp"

#include "application_job.hpp"
#include "draws.hpp"
#include "dps/cluster/dispatcher.hpp"
#include "dps/cluster/speedup.hpp"
#include "dps/sim/engine.hpp"
#include "dps/sim/model.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <queue>
#include <random>
#include <stdexcept>
#include <string>

namespace dps::cluster {

namespace {

// At one instant: iterations end before runs end, kills come after both (a job done at its walltime
// is done, not killed); arrivals are taken before all of them. Message: an application job's.
enum class EventKind : std::uint8_t { Point, Message, End, Kill };

struct Event {
  double time;
  EventKind kind;
  std::uint64_t seq;
  std::uint32_t job;
  bool operator>(const Event& o) const noexcept {
    if (time != o.time) return time > o.time;
    if (kind != o.kind) return kind > o.kind;
    return seq > o.seq;
  }
};

enum class State : std::uint8_t { Pending, Queued, Running, Done };

}  // namespace

struct Simulation::Impl final : sim::Listener {
  Impl(const Workload& w, Scheduler& s, SimulationOptions o)
      : workload(w), options(std::move(o)), dispatcher(w.nodes, s, {.gantt = options.gantt, .allocator = options.allocator, .expected_jobs = w.jobs.size()}),
        cluster(dispatcher.cluster()), state(w.jobs.size(), State::Pending), models(w.jobs.size()), sending(w.jobs.size()),
        processes(w.jobs.size()), inbox(w.jobs.size()) {
    if (options.io_column) {
      if (!options.mesh || options.mesh->torus()) throw std::invalid_argument("I/O nodes west of the mesh need a mesh, not a torus");
      io.emplace(*options.mesh);
    }
  }

  std::uint32_t index(const Job& job) const { return static_cast<std::uint32_t>(&job - workload.jobs.data()); }
  void push(double time, EventKind kind, std::uint32_t job) { events.push({time, kind, seq++, job}); }

  // A job the scheduler started: its first events.
  void begin(Running& r) {
    const Job& job = *r.job;
    const std::uint32_t i = index(job);
    state[i] = State::Running;
    if (options.mesh) placed(dispatcher.record(r), r.nodes);
    switch (job.kind) {
      case JobKind::Rigid:
        push(r.start + std::min(job.runtime, job.walltime), job.runtime > job.walltime ? EventKind::Kill : EventKind::End, i);
        break;
      case JobKind::Malleable:
        models[i].emplace(job.size, job.iteration_s, job.alpha);
        push(r.start + job.iteration_s, EventKind::Point, i);
        push(r.start + job.walltime, EventKind::Kill, i);
        break;
      case JobKind::Application:
        processes[i] = std::make_unique<ApplicationProcess>(job, r.size(), model_path(), logs() + "/job-" + std::to_string(job.id) + ".log");
        pending.push_back(i);
        push(r.start + job.walltime, EventKind::Kill, i);
        break;
      case JobKind::Traffic: {
        Sending& s = sending[i];
        s.left.assign(r.size(), job.messages);
        s.busy = r.size();
        s.random.seed(job.id);
        for (std::size_t k = 0; k < r.size(); ++k) send(i, k);
        push(r.start + job.walltime, EventKind::Kill, i);
        break;
      }
    }
  }

  // Traffic jobs: one engine carries all their messages over the mesh (and its I/O column), so jobs
  // share its links.
  sim::Engine& network() {
    if (network_) return *network_;
    if (!options.mesh) throw std::runtime_error("traffic jobs send their messages over a mesh: the simulation needs one");
    const Mesh& mesh = *options.mesh;
    sim::ClusterModel model;
    model.groups = {sim::NodeGroup{.name = "nodes", .count = mesh.size()}};
    if (io) model.groups.push_back(sim::NodeGroup{.name = "io", .count = io->io_nodes(), .bandwidth = options.io_bandwidth});
    model.network.latency = 0;
    model.network.bandwidth = options.link_bandwidth;
    model.network.sharing = options.sharing;
    model.network.topology = sim::Topology::Mesh;
    model.network.mesh = {.width = mesh.width(), .height = mesh.height(), .torus = mesh.torus(),
                          .link_bandwidth = options.link_bandwidth, .hop_latency = options.hop_latency, .io_column = io.has_value()};
    network_ = std::make_unique<sim::Engine>(std::move(model));
    return *network_;
  }

  // The next message of the job's k-th node, if it has one left; the job's end after its last node's last.
  void send(std::uint32_t i, std::size_t k) {
    const Running& r = dispatcher.running(i);
    const Job& job = *r.job;
    Sending& s = sending[i];
    while (s.left[k] > 0) {
      --s.left[k];
      sim::VNode to;
      if (draws::uniform(s.random) < job.io_share) {
        if (!io) throw std::runtime_error("job " + std::to_string(job.id) + " writes to I/O nodes: the simulation has none (--io-column)");
        to = static_cast<sim::VNode>(cluster.nodes() + draws::below(s.random, io->io_nodes()));  // the I/O nodes come last
      } else if (r.size() > 1) {
        std::size_t other = draws::below(s.random, r.size() - 1);
        to = r.nodes[other >= k ? other + 1 : other];
      } else {
        continue;  // a lone node's messages to its own job go nowhere
      }
      network().transfer(r.nodes[k], to, job.message_bytes, {this, std::uint64_t{i} << 32 | k});
      return;
    }
    if (--s.busy == 0) push(network().now(), EventKind::End, i);
  }
  void finished(std::uint64_t tag) override {
    const auto i = static_cast<std::uint32_t>(tag >> 32);
    if (state[i] == State::Running) send(i, tag & 0xffffffffu);  // else killed: its messages in flight are let go
  }

  // Its nodes on the mesh: dispersal, contention, balance, and the system's with I/O nodes.
  void placed(JobRecord& record, const std::vector<Node>& nodes) {
    record.placed = dispersal(*options.mesh, nodes);
    record.contention = all_to_all_contention(*options.mesh, nodes).peak();
    if (!io) return;
    record.balance = io->balance(nodes);
    busy_nodes.clear();
    for (const Running* r : cluster.running()) busy_nodes.insert(busy_nodes.end(), r->nodes.begin(), r->nodes.end());
    system_balance.push_back(io->balance(busy_nodes));
    io_contention.push_back(io->write_contention(busy_nodes).max);
  }

  // Application jobs: the folder of their output, and the model they run on.
  const std::string& logs() {
    if (!log_folder.empty()) return log_folder;
    if (!options.logs.empty()) {
      std::filesystem::create_directories(options.logs);
      return log_folder = options.logs;
    }
    std::string pattern = (std::filesystem::temp_directory_path() / "dps-cluster-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("cannot make a folder for the application jobs' output");
    temporary = pattern;
    return log_folder = pattern;
  }
  const std::string& model_path() {
    if (!model_file.empty()) return model_file;
    if (!options.model.empty()) return model_file = options.model;
    model_file = logs() + "/cluster-model.json";
    std::ofstream out(model_file);
    out << sim::ClusterModel::defaults({"groups.0.count=" + std::to_string(workload.nodes)}).to_json();
    if (!out.flush()) throw std::runtime_error("cannot write " + model_file);
    return model_file;
  }

  // Every application job that ran since it was last heard from: its next message, as an event.
  void drain() {
    for (const std::uint32_t i : pending) {
      inbox[i] = processes[i]->next();
      push(std::max(cluster.now(), dispatcher.running(i).start + inbox[i].time), EventKind::Message, i);
    }
    pending.clear();
  }

  // An application job's message: a resize point, nodes it gave back, or its end.
  void message(std::uint32_t i) {
    using Kind = job_protocol::Message::Kind;
    const job_protocol::Message& m = inbox[i];
    Running& r = dispatcher.running(i);
    const Job& job = *r.job;
    if (m.kind == Kind::End) {
      processes[i]->finish();
      processes[i].reset();
      return end(i, false);
    }
    if (m.kind == Kind::Release) {
      if (m.nodes >= r.size())
        throw std::runtime_error("job " + std::to_string(job.id) + " gave back " + std::to_string(m.nodes) + " of its " +
                                 std::to_string(r.size()) + " nodes");
      dispatcher.shrink(r, m.nodes);
      pending.push_back(i);
      return;
    }
    const std::size_t size = r.size();
    if (m.nodes != size)
      throw std::runtime_error("job " + std::to_string(job.id) + " reports " + std::to_string(m.nodes) +
                               " nodes at its resize point; the cluster gave it " + std::to_string(size));
    r.iteration = m.iteration;
    r.iteration_s = m.iteration_s;
    r.last_point = cluster.now();
    const std::size_t target =
        job.resizable ? dispatcher.resize(r, {.iteration = m.iteration, .size = size, .iteration_seconds = m.iteration_s,
                                              .redistribution_seconds = m.redistribution_s})
                      : size;
    processes[i]->answer(target);
    pending.push_back(i);
  }

  void end(std::uint32_t i, bool killed) {
    state[i] = State::Done;
    dispatcher.end(dispatcher.running(i), killed);
  }

  // A malleable job ended an iteration: done, or on at the size the scheduler says.
  void point(std::uint32_t i) {
    Running& r = dispatcher.running(i);
    const Job& job = *r.job;
    SyntheticSpeedup& model = *models[i];
    const std::size_t size = r.size();
    r.iteration += 1;
    r.iteration_s = model.at(size);
    r.last_point = cluster.now();
    if (r.iteration >= job.iterations) return end(i, false);
    const std::size_t target =
        job.resizable ? dispatcher.resize(r, {.iteration = r.iteration, .size = size, .iteration_seconds = r.iteration_s,
                                              .redistribution_seconds = redistributed[i] ? job.redistribution_s : 0})
                      : size;
    double pause = 0;
    if (target != size) {
      if (target < size) dispatcher.shrink(r, size - target);
      redistributed[i] = true;
      pause = job.redistribution_s;
    }
    push(cluster.now() + pause + model.resize(size, target), EventKind::Point, i);
  }

  void handle(const Event& e) {
    if (state[e.job] != State::Running) return;  // a kill or an iteration of a job already gone
    switch (e.kind) {
      case EventKind::Point: return point(e.job);
      case EventKind::Message: return message(e.job);
      case EventKind::End: return end(e.job, false);
      case EventKind::Kill:
        if (processes[e.job]) processes[e.job]->kill(), processes[e.job].reset();
        return end(e.job, true);
    }
  }

  Results run() {
    const auto wall = std::chrono::steady_clock::now();
    redistributed.assign(workload.jobs.size(), false);
    const std::vector<Job>& jobs = workload.jobs;
    std::size_t next = 0;  // the next arrival
    std::uint64_t steps = 0, shown = 0;
    auto last_shown = wall - std::chrono::seconds(1);
    while (next < jobs.size() || !events.empty()) {
      const double t = std::min(next < jobs.size() ? jobs[next].submit : HUGE_VAL, events.empty() ? HUGE_VAL : events.top().time);
      if (network_ && network_->next_time() <= t) {  // a message arrives first (and may end its job then)
        network_->step();
        ++steps;
        continue;
      }
      if (network_) network_->advance_to(t);
      dispatcher.advance(t);
      for (; next < jobs.size() && jobs[next].submit <= t; ++next) {
        state[next] = State::Queued;
        dispatcher.arrive(jobs[next]);
        ++steps;
      }
      while (!events.empty() && events.top().time <= t) {
        const Event e = events.top();
        events.pop();
        handle(e);
        ++steps;
      }
      for (Running* r : dispatcher.schedule()) begin(*r);
      dispatcher.sample();
      drain();  // the jobs started or answered now: their next messages, before the next instant
      if (events.empty() && next == jobs.size() && !cluster.queue().empty())
        throw std::runtime_error("scheduler " + dispatcher.scheduler().name() + ": leaves " + std::to_string(cluster.queue().size()) +
                                 " jobs waiting on an idle cluster");
      if (options.progress && steps >= shown) {  // every 4096 events, at most twice a second
        shown = steps + 4096;
        const auto now = std::chrono::steady_clock::now();
        if (now - last_shown >= std::chrono::milliseconds(500)) {
          last_shown = now;
          options.progress(t, dispatcher.done());
        }
      }
    }
    return results(std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count(), steps);
  }

  Results results(double wall_s, std::uint64_t steps) const {
    Results r = dispatcher.results(workload.classes, options.tau_s);
    r.skipped = workload.skipped;
    r.unusable = workload.unusable;
    r.events = steps;
    r.wall_s = wall_s;
    if (r.jobs.empty()) return r;
    const auto n = static_cast<double>(r.jobs.size());
    if (options.mesh) {
      r.on_mesh = true;
      for (const JobRecord& j : r.jobs) {
        r.mean_average_distance += j.placed.average_distance / n;
        r.mean_nodes_affected += static_cast<double>(j.placed.nodes_affected) / n;
        r.mean_links_affected += static_cast<double>(j.placed.links_affected) / n;
        r.mean_max_contention += j.contention.max / n;
      }
    }
    if (io && !system_balance.empty()) {
      r.io_column = true;
      const auto starts = static_cast<double>(system_balance.size());
      for (std::size_t k = 0; k < system_balance.size(); ++k) {
        r.balance_factor += static_cast<double>(std::labs(system_balance[k])) / starts;
        r.mean_io_contention += io_contention[k] / starts;
      }
    }
    return r;
  }

  const Workload& workload;
  SimulationOptions options;
  Dispatcher dispatcher;
  const Cluster& cluster;
  std::vector<State> state;
  std::vector<std::optional<SyntheticSpeedup>> models;
  std::vector<bool> redistributed;  // resized at least once: its last resize redistributed
  // Traffic jobs: messages left per node, nodes still sending, where their messages go.
  struct Sending {
    std::vector<long> left;
    std::size_t busy = 0;
    std::mt19937_64 random;
  };
  std::vector<Sending> sending;
  std::unique_ptr<sim::Engine> network_;
  std::optional<IoColumn> io;  // with SimulationOptions::io_column
  std::vector<Node> busy_nodes;  // scratch
  std::vector<long> system_balance;  // at each job's start
  std::vector<std::uint32_t> io_contention;  // ... the max_contention of writes
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events;
  std::uint64_t seq = 0;
  // Application jobs.
  std::vector<std::unique_ptr<ApplicationProcess>> processes;
  std::vector<job_protocol::Message> inbox;  // each one's next message
  std::vector<std::uint32_t> pending;             // ran since last heard from
  std::string log_folder, model_file, temporary;

  ~Impl() {
    processes.clear();
    std::error_code ignored;
    if (!temporary.empty()) std::filesystem::remove_all(temporary, ignored);
  }
};

Simulation::Simulation(const Workload& workload, Scheduler& scheduler, SimulationOptions options)
    : impl_(std::make_unique<Impl>(workload, scheduler, std::move(options))) {}
Simulation::~Simulation() = default;

Results Simulation::run() { return impl_->run(); }
const Gantt& Simulation::gantt() const { return impl_->dispatcher.gantt(); }

}  // namespace dps::cluster
