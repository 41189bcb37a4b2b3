// SimBackend: DPS threads as simulated strands, their atomic steps as computations on virtual nodes,
// their envelopes as transfers, all released when the step that produced them ends (Schaeli, Gerlach & Hersch, "A
// simulator for adaptive parallel applications", Fig. 5). This file: its nodes, its loop, what the kernel
// reports to it and asks of it; threads and steps in sim_steps.cpp, what travels between nodes in
// sim_deliveries.cpp, failures in sim_failures.cpp, the state they share in sim_backend_impl.hpp.
#include "sim_backend_impl.hpp"

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace dps::sim {

namespace {

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

}  // namespace

std::string format_seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", seconds);
  return text;
}

SimBackend::Impl::Impl(std::shared_ptr<Engine> shared, SimOptions opts)
    : engine(std::move(shared)), options(std::move(opts)), stats(*engine), started(std::chrono::steady_clock::now()) {
  if (options.nodes == 0) throw std::invalid_argument("a simulated application needs at least one node");
  if (options.nodes > engine->size())
    throw ModelError("the application asks for " + std::to_string(options.nodes) +
                     " nodes, the simulated cluster has " + std::to_string(engine->size()));
  try {
    for (std::size_t i = 0; i < options.nodes; ++i) add_node();
  } catch (...) {
    for (VNode v : vnodes) engine->release(v);  // the cluster is not left with nodes nobody owns
    throw;
  }
  for (const SimOptions::Failure& f : options.failures) {
    if (f.node == 0 || f.node >= options.nodes)
      throw std::invalid_argument("--fail " + std::to_string(f.node) + "@" + format_seconds(f.time) + ": " +
                                  (f.node == 0
                                       ? "node 0 coordinates the application; its loss is not simulated"
                                       : "the application starts on nodes 0 to " + std::to_string(options.nodes - 1)));
    engine->timer(f.time, {this, tag(kFailureTag, f.node)});
  }
}

std::string Report::json() const {
  char line[512];
  std::snprintf(line, sizeof line,
                "{\"predicted_s\": %.9g, \"wall_s\": %.3f, \"peak_rss_mb\": %.1f, \"ops\": %llu, \"steps\": %llu, "
                "\"messages\": %llu, \"bytes\": %.0f, \"efficiency\": %.4f, \"nodes\": %zu}",
                predicted_s, wall_s, peak_rss_mb, static_cast<unsigned long long>(ops),
                static_cast<unsigned long long>(steps), static_cast<unsigned long long>(messages), bytes, efficiency,
                nodes);
  return line;
}

NodeId SimBackend::Impl::add_node() {
  const VNode v = engine->acquire(this);
  const auto id = static_cast<NodeId>(vnodes.size());
  vnodes.push_back(v);
  live.push_back(id);
  dead.push_back(false);
  unrecovered.push_back(false);
  workers_used.push_back(0);
  inline_turn.push_back(nullptr);
  parked.emplace_back();
  stats.node_joined(id, v, engine->now());
  return id;
}

void SimBackend::Impl::remove_node(NodeId node) {
  if (node == 0) throw std::invalid_argument("node 0 coordinates the application and cannot be removed");
  auto it = std::find(live.begin(), live.end(), node);
  if (it == live.end()) throw std::invalid_argument("no node " + std::to_string(node));
  live.erase(it);
  engine->release(vnodes[node]);
  stats.node_left(node, engine->now());
}

void SimBackend::Impl::finished(std::uint64_t t) {
  const std::uint64_t index = t & ((std::uint64_t{1} << kKindShift) - 1);
  switch (t >> kKindShift) {
    case kStepTag: {
      --outstanding;
      const std::uint64_t uid = std::exchange(running[index], 0);
      free_running.push_back(index);
      if (uid) finish(slots.at(uid));  // else its node failed meanwhile
      break;
    }
    case kDeliveryTag: --outstanding, arrive(index); break;
    case kFailureTag: fail_node(static_cast<NodeId>(index)); break;
    case kDetectionTag:
      --outstanding;
      if (!stopped && !runtime->node_failed(static_cast<NodeId>(index),
                                            "it was killed at t = " + format_seconds(engine->now()) + " s"))
        unrecovered[index] = true;
      break;
  }
}

void SimBackend::Impl::step(const StepEvent& e) {
  if (current)
    current->step = e;
  else if (user)
    user->step(e);
}

void SimBackend::Impl::transfer(const TransferEvent& e) {
  if (user) user->transfer(e);
}

void SimBackend::Impl::lifecycle(const LifecycleEvent& e) {
  const double now = engine->now();
  switch (e.kind) {
    case Lifecycle::ThreadAdded: stats.threads_changed(e.node, +1, now); break;
    case Lifecycle::ThreadRemoved: stats.threads_changed(e.node, -1, now); break;
    case Lifecycle::ThreadMigrated:
    case Lifecycle::ThreadRestored:
      stats.threads_changed(e.node, -1, now);
      stats.threads_changed(e.to, +1, now);
      break;
    case Lifecycle::NodeAdded:
    case Lifecycle::NodeRemoved:
    case Lifecycle::NodeFailed: break;  // add_node, remove_node and fail_node saw them
    case Lifecycle::ThreadReplayed: break;
  }
  if (user) user->lifecycle(e);
}

void SimBackend::Impl::phase(const PhaseEvent& e) {
  stats.phase(e.name, e.begin, engine->now());
  if (user) user->phase(e);
}

void SimBackend::Impl::check_not_in_step(const char* what) const {
  if (current)
    throw std::logic_error(std::string("an operation on ") + current->thread->name() + " " + what +
                           " inside its step: a simulated step cannot wait for the simulation");
}

bool SimBackend::Impl::step_engine() {
  if (!engine->step()) return false;
  if (options.progress && (++since_progress & 0x3fff) == 0) show_progress(false);
  return true;
}

void SimBackend::Impl::drive(const std::function<bool()>& done) {
  check_not_in_step("waits for a future");
  for (;;) {
    run_ready();
    if (done()) return runtime->recovered() ? quiesce() : void();
    if (outstanding == 0)
      throw std::runtime_error("simulation: at t = " + format_seconds(engine->now()) +
                               " s nothing is left to run, but the application waits for a result that can never "
                               "come (a deadlock in the flow graph?)");
    step_engine();
  }
}

void SimBackend::Impl::advance(double time) {
  check_not_in_step("sleeps");
  for (;;) {
    run_ready();
    if (engine->next_time() > time) break;
    step_engine();
  }
  engine->advance_to(time);
}

void SimBackend::Impl::quiesce() {
  for (;;) {
    run_ready();
    if (outstanding == 0) return;
    step_engine();
  }
}

void SimBackend::Impl::show_progress(bool last) {
  const auto now = std::chrono::steady_clock::now();
  if (!last && now - shown < std::chrono::milliseconds(500)) return;
  shown = now;
  std::fprintf(stderr, "\rsim: %.6g s simulated, %llu steps, %llu messages, %.1f s wall%s", engine->now(),
               static_cast<unsigned long long>(stats.steps), static_cast<unsigned long long>(stats.messages),
               std::chrono::duration<double>(now - started).count(), last ? "\n" : "");
  std::fflush(stderr);
}

Report SimBackend::Impl::report() const {
  Report r;
  r.predicted_s = stopped ? ended : engine->now();
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  r.peak_rss_mb = peak_rss_mb();
  r.ops = stats.ops;
  r.steps = stats.steps;
  r.messages = stats.messages;
  r.bytes = stats.bytes;
  r.efficiency = stats.efficiency(r.predicted_s);
  r.nodes = live.size();
  return r;
}

SimBackend::SimBackend(const SimulatedCluster& cluster, SimOptions options)
    : impl_(std::make_unique<Impl>(cluster.engine_, std::move(options))) {}

SimBackend::SimBackend(ClusterModel model, SimOptions options)
    : SimBackend(SimulatedCluster(std::move(model)), std::move(options)) {}

SimBackend::~SimBackend() {
  Impl& s = *impl_;
  if (s.options.progress && s.stats.steps > 0) s.show_progress(true);
  if (!s.options.statistics.empty()) {
    std::ofstream out(s.options.statistics);
    write_statistics(out);
    if (!out) std::fprintf(stderr, "sim: cannot write the statistics to %s\n", s.options.statistics.c_str());
  }
  if (s.options.report && s.stats.steps > 0) std::printf("%s\n", report().json().c_str());  // not after --help
  for (NodeId n = 0; n < s.vnodes.size(); ++n)
    if (s.dead[n] || std::find(s.live.begin(), s.live.end(), n) != s.live.end()) s.engine->release(s.vnode(n));
}

Report SimBackend::report() const { return impl_->report(); }
void SimBackend::write_statistics(std::ostream& out) const {
  impl_->stats.write(out, impl_->stopped ? impl_->ended : impl_->engine->now());
}

void SimBackend::attach(Runtime& runtime) { impl_->runtime = &runtime; }
std::vector<NodeId> SimBackend::nodes() const { return impl_->live; }
NodeId SimBackend::add_node() { return impl_->add_node(); }
void SimBackend::remove_node(NodeId node) { impl_->remove_node(node); }
void SimBackend::schedule(Thread& thread, Priority priority) { impl_->schedule(thread, priority); }

void SimBackend::send(NodeId from, Thread& to, Envelope* e) { impl_->send(from, to.uid(), e); }


bool SimBackend::migrate(Thread& thread, NodeId to, std::string state, std::function<void(std::exception_ptr)> arrived) {
  Impl::Slot& s = impl_->slot(thread);
  s.move = Impl::Move{to, std::move(state), std::move(arrived)};
  if (impl_->current != &s) impl_->start_move(s);  // not from a step of its own: it leaves now, else when it ends
  return true;
}

void SimBackend::quiesce() { impl_->quiesce(); }

void SimBackend::stop() {
  if (impl_->stopped) return;
  impl_->ended = impl_->engine->now();
  impl_->stopped = true;
}

double SimBackend::now() const { return impl_->engine->now(); }

unsigned SimBackend::cores(NodeId node) const { return impl_->engine->cores(impl_->vnode(node)); }
double SimBackend::speed(NodeId node) const { return impl_->engine->speed(impl_->vnode(node)); }
SimulationHooks* SimBackend::simulation() noexcept { return impl_.get(); }

void SimBackend::keep_backup(Thread& thread, std::shared_ptr<const detail::Checkpoint> checkpoint) {
  Impl& s = *impl_;
  if (s.current && s.current->thread == &thread) {
    s.current->checkpoints.push_back(std::move(checkpoint));  // it leaves when the step ends
  } else {  // as created: node 0 made the state, and holds it
    s.hold(thread.uid(), std::move(checkpoint), 0);
  }
}

Backend::Backup SimBackend::backup(std::uint64_t uid, bool) const {  // held as decoded: no cost to give
  const auto it = impl_->backups.find(uid);
  if (it == impl_->backups.end()) return {};
  return {it->second.checkpoint, it->second.node, it->second.checkpoint->epoch};
}

// --- the kernel's simulation hooks ---

bool SimBackend::Impl::send_result(NodeId from, Envelope* e) {
  send(from, 0, e);
  return true;
}

bool SimBackend::Impl::models_compute() const { return options.pdexec; }
bool SimBackend::Impl::allocates_payloads() const { return !options.noalloc; }

void SimBackend::Impl::charge(Thread&, double seconds) {
  if (current) current->work += seconds;
}

ComputePlan SimBackend::Impl::plan_compute(Thread& thread, const void* site, double estimate) {
  if (options.pdexec) {
    charge(thread, estimate);
    return ComputePlan::Skip;
  }
  if (options.measure == 0) return ComputePlan::Run;
  const Mean& m = means[{site, estimate}];
  if (m.n < options.measure) return ComputePlan::Measure;
  charge(thread, m.sum / m.n);
  return ComputePlan::Skip;
}

void SimBackend::Impl::computed(Thread&, const void* site, double estimate, double cpu_seconds) {
  Mean& m = means[{site, estimate}];
  ++m.n;
  m.sum += cpu_seconds;
}

TraceSink* SimBackend::Impl::trace_through(TraceSink* sink) {
  user = sink;
  return this;
}

void SimBackend::Impl::drive_until(const std::function<bool()>& done) { drive(done); }
void SimBackend::Impl::advance_to(double time) { advance(time); }

}  // namespace dps::sim
