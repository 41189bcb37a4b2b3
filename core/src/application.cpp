// Application: options, the backend choice, node changes and phases.
#include "dps/application.hpp"

#include "dps/cli.hpp"
#include "dps/job_protocol.hpp"
#include "dps/kernel/context.hpp"
#include "dps/kernel/job_link.hpp"
#include "dps/kernel/runtime.hpp"
#include "dps/local_backend.hpp"
#include "dps/trace_file.hpp"
#include "replacement.hpp"
#include "run_image.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <utility>

#ifdef __GLIBC__
#include <malloc.h>
#endif

namespace dps {

namespace {

constexpr double kDefaultCheckpointEvery = 1.0;  // seconds
void mark_phase(Runtime& runtime, std::string_view name, bool begin) {
  if (TraceSink* sink = runtime.tracer()) sink->phase({name, begin, runtime.now()});
}
}  // namespace

Phase::Phase(Runtime& runtime, std::string name) : runtime_(&runtime), name_(std::move(name)) {
  mark_phase(*runtime_, name_, true);
}

Phase::Phase(Phase&& other) noexcept
    : runtime_(std::exchange(other.runtime_, nullptr)), name_(std::move(other.name_)) {}

void Phase::end() {
  if (!runtime_) return;
  mark_phase(*runtime_, name_, false);
  runtime_ = nullptr;
}

namespace {

// Payloads are large arrays made and freed per message. glibc maps each large one afresh and
// returns freed memory to the system, so every message pays a page fault per 4 KiB (microseconds
// each in a VM: 7 % of an LU run's CPU). Freed memory is kept for the next payload instead, unless
// the user tuned malloc through GLIBC_TUNABLES.
void keep_freed_memory() {
#ifdef __GLIBC__
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables && std::string_view(tunables).find("glibc.malloc.") != std::string_view::npos) return;
  mallopt(M_MMAP_THRESHOLD, 32 << 20);  // glibc's largest
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

std::unique_ptr<Backend> local(const ApplicationOptions& options) {
  if (options.nodes == 0) throw std::invalid_argument("--nodes expects a positive integer, got '0'");
  return std::make_unique<LocalBackend>(options.nodes, options.workers);
}
}  // namespace

Application::Application(ApplicationOptions options) { start(local(options)); }

Application::Application(std::unique_ptr<Backend> backend) { start(std::move(backend)); }

CommandLine Application::parse(int argc, char** argv) {
  CommandLine c;
  c.argc = argc;
  c.argv = argv;
  bool fault_tolerance = false, every_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--nodes" || arg == "--workers") {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " expects a value");
      (arg == "--nodes" ? c.options.nodes : c.options.workers) = positive_count(arg, argv[++i]);
    } else if (arg == "--hostfile" || arg == "--trace") {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " expects a file");
      (arg == "--hostfile" ? c.hostfile : c.trace) = argv[++i];
    } else if (arg == "--local") {
      c.in_process = true;
    } else if (arg == "--replace") {
      c.replace = true;
    } else if (arg == "--fault-tolerance") {
      fault_tolerance = true;
    } else if (arg == "--checkpoint-every") {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " expects a number of seconds");
      c.checkpoint_every = positive_number(arg, argv[++i]);
      every_given = true;
    } else if (arg == "--checkpoint-dir" || arg == "--restart") {
      if (i + 1 >= argc || !*argv[i + 1]) throw std::invalid_argument(arg + " expects a directory");
      (arg == "--checkpoint-dir" ? c.checkpoint_dir : c.restart) = argv[++i];
    } else if (arg == "--checkpoint-ops") {
      if (i + 1 >= argc) throw std::invalid_argument(arg + " expects a number of operations");
      c.checkpoint_operations = positive_count(arg, argv[++i]);
    } else {
      c.rest.push_back(arg);
    }
  }
  if (every_given && !fault_tolerance && c.checkpoint_dir.empty())
    throw std::invalid_argument("--checkpoint-every needs --fault-tolerance or --checkpoint-dir");
  if (!c.checkpoint_dir.empty()) c.disk_checkpoint_every = every_given ? c.checkpoint_every : kDefaultCheckpointEvery;
  if (!fault_tolerance) c.checkpoint_every = 0;
  if (c.checkpoint_operations && !fault_tolerance)
    throw std::invalid_argument("--checkpoint-ops needs --fault-tolerance");
  if (c.replace && !fault_tolerance) throw std::invalid_argument("--replace needs --fault-tolerance");
  if (fault_tolerance && !every_given)
    c.checkpoint_every = c.checkpoint_operations ? std::numeric_limits<double>::infinity() : kDefaultCheckpointEvery;
  return c;
}

Application::Application(CommandLine command_line, BackendMaker make) {
  if (command_line.in_process) {
    if (!command_line.hostfile.empty()) throw std::invalid_argument("--local runs every node in this process: no --hostfile");
    command_line.options.nodes = std::max<std::size_t>(command_line.options.nodes, 1);
    start(local(command_line.options), command_line.checkpoint_every, command_line.checkpoint_operations);
  } else {
    start(make(command_line), command_line.checkpoint_every, command_line.checkpoint_operations);
  }
  args_ = std::move(command_line.rest);
  program_ = command_line.argc > 0 ? std::string(command_line.argv[0]) : std::string();
  program_ = program_.substr(program_.find_last_of('/') + 1);
  if (!runtime_->coordinates()) {  // another node's process: it serves, then ends here
    const int status = backend_->serve();
    runtime_.reset();
    backend_.reset();
    std::exit(status);
  }
  if (command_line.replace) {
    if (simulated())
      throw std::invalid_argument("--replace is not simulated yet: the simulator rebuilds on the survivors");
    if (!can_add_nodes())
      throw std::invalid_argument(
          "--replace starts nodes, and this application cannot: srun or mpirun fixed its nodes");
    replacement_ = std::make_unique<detail::Replacement>(*this);
    runtime_->on_recovered([r = replacement_.get()](NodeId failed, std::vector<std::uint64_t> threads) {
      r->request(failed, std::move(threads));
    });
  }
  if (!command_line.restart.empty())
    restart_ = std::make_unique<detail::RunImage>(detail::read_run_image(command_line.restart, program_));
  checkpoint_dir_ = command_line.checkpoint_dir;
  disk_checkpoint_every_ = command_line.disk_checkpoint_every;
  if (!command_line.trace.empty()) {
    trace_file_ = std::make_unique<TraceFile>(command_line.trace);
    std::string command = command_line.argv[0];
    for (int i = 1; i < command_line.argc; ++i) command += std::string(" ") + command_line.argv[i];
    trace_file_->info("command", command);
    trace_file_->info("backend", backend_->name());
    trace_file_->info("nodes", std::to_string(nodes()));
    for (NodeId node : node_ids()) trace_cores(node);
    trace_to(trace_file_.get());
  }
}

void Application::start(std::unique_ptr<Backend> backend, double checkpoint_every,
                        std::uint64_t checkpoint_operations) {
  keep_freed_memory();
  backend_ = std::move(backend);
  if (checkpoint_every > 0 && nodes() < 2)
    throw std::invalid_argument(
        "--fault-tolerance needs at least two nodes: a thread's checkpoint is held by another node");
  runtime_ = std::make_unique<Runtime>(*backend_, checkpoint_every, checkpoint_operations);
  // Run by a cluster's scheduler: it answers the resize points and grants the nodes (those the
  // application starts on, then what it answers).
  unwinding_at_start_ = std::uncaught_exceptions();
  int scheduler = backend_->scheduler_socket();
  if (const char* fd = std::getenv(job_protocol::kFd); scheduler < 0 && fd)
    scheduler = static_cast<int>(whole_number(job_protocol::kFd, fd));
  if (scheduler >= 0) job_link_ = std::make_unique<JobLink>(scheduler, nodes(), *backend_);
  // Payloads built by main (before calls) follow this application's allocation policy.
  if (!detail::current().runtime) {
    detail::current().runtime = runtime_.get();
    owns_context_ = true;
  }
}

Application::~Application() {
  // Its scheduler hears of the job's end; not when an error tears the application down.
  const bool normal_end = std::uncaught_exceptions() == unwinding_at_start_;
  if (job_link_ && normal_end) job_link_->ended();
  if (!checkpoint_dir_.empty() && !checkpoint_marked_ && normal_end)
    std::fprintf(stderr,
                 "dps: --checkpoint-dir %s: %s marks no point between calls to checkpoint at "
                 "(Application::checkpoint): nothing was written\n",
                 checkpoint_dir_.c_str(), program_.c_str());
  if (trace_file_) {
    try {
      trace_to(nullptr);  // every node's events reach the file first
      trace_file_->close();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dps: the trace is incomplete: %s\n", e.what());
    }
  }
  if (replacement_) replacement_->stop();  // requests the network thread makes now are dropped
  if (owns_context_ && detail::current().runtime == runtime_.get()) detail::current().runtime = nullptr;
  runtime_.reset();
  backend_.reset();
  replacement_.reset();
}

void Application::sleep_until(double time) {
  if (SimulationHooks* sim = backend_->simulation()) return sim->advance_to(time);
  const double left = time - now();
  if (left > 0) std::this_thread::sleep_for(std::chrono::duration<double>(left));
}

// Statistics need each node's cores: the file says what the backend knows.
void Application::trace_cores(NodeId node) {
  if (const unsigned cores = backend_->cores(node); trace_file_ && cores > 0)
    trace_file_->info("cores." + std::to_string(node), std::to_string(cores));
}

double Application::now() const { return backend_->now(); }
std::size_t Application::nodes() const { return backend_->nodes().size(); }
std::vector<NodeId> Application::node_ids() const { return backend_->nodes(); }
NodeId Application::local_node() const { return backend_->local_node(); }
bool Application::can_add_nodes() const { return backend_->can_add_nodes(); }
unsigned Application::cores(NodeId node) const { return backend_->cores(node); }
std::size_t Application::workers() const { return backend_->workers(); }
double Application::speed(NodeId node) const { return backend_->speed(node); }
bool Application::simulated() const { return backend_->simulation() != nullptr; }
bool Application::models_compute() const {
  SimulationHooks* sim = backend_->simulation();
  return sim && sim->models_compute();
}
bool Application::allocates_payloads() const {
  SimulationHooks* sim = backend_->simulation();
  return !sim || sim->allocates_payloads();
}
ResizePolicy* Application::resize_policy() const { return job_link_.get(); }
void Application::trace_to(TraceSink* sink) { runtime_->trace_to(sink); }

// --- disk checkpoints ---

// Like a thread's checkpoints, at most 5 % of the run: the interval is at least 20 times the last one's cost.
bool Application::checkpoint_due() {
  if (!std::exchange(checkpoint_marked_, true)) {
    last_disk_checkpoint_ = now();  // the first point: the states as made (or restarted), nothing to save
    return false;
  }
  return !checkpoint_dir_.empty() &&
         now() - last_disk_checkpoint_ >= std::max(disk_checkpoint_every_, 20 * disk_checkpoint_cost_);
}

void Application::write_checkpoint(std::string progress) {
  if (const std::size_t running = runtime_->calls_in_progress())
    throw std::logic_error("Application::checkpoint is taken between calls: " + std::to_string(running) +
                           " call(s) still run");
  const double start = now();
  detail::RunImage image{program_, std::move(progress), start, {}};
  std::mutex mu;
  std::exception_ptr error;
  std::size_t waiting = 0;
  const std::vector<ThreadsCore*> collections = runtime_->collections();
  for (ThreadsCore* c : collections) {
    image.collections.push_back({c->name(), c->state_type().key, std::vector<std::string>(c->size())});
    waiting += c->size();
  }
  Promise<void> all(backend_.get());
  if (!waiting) all.set();
  auto slot = image.collections.begin();
  for (ThreadsCore* c : collections) {
    for (std::size_t i = 0; i < slot->images.size(); ++i)  // the threads counted in `waiting`
      detail::snapshot_thread(*c, i,
                              [&mu, &error, &waiting, &taken_to = slot->images[i], all](
                                  std::string taken, std::exception_ptr failure) mutable {
                                std::lock_guard lock(mu);
                                if (failure && !error) error = failure;
                                taken_to = std::move(taken);
                                if (--waiting == 0) all.set();
                              });
    ++slot;
  }
  all.future().get();
  if (error) std::rethrow_exception(error);
  detail::write_run_image(checkpoint_dir_, image);
  last_disk_checkpoint_ = now();
  disk_checkpoint_cost_ = last_disk_checkpoint_ - start;
}

const std::string* Application::restart_progress() const {
  restart_asked_ = true;
  return restart_ ? &restart_->progress : nullptr;
}

detail::StateFactory Application::restoring(const std::string& name, const detail::StateType& state,
                                            detail::StateFactory make) {
  if (!restart_asked_)
    throw std::invalid_argument("--restart: " + program_ + " cannot go on from a checkpoint (it made collection '" +
                                name + "' before asking Application::restarted)");
  std::optional<detail::CollectionImage> saved = restart_->take(name);
  if (!saved) return make;
  if (saved->state_type != state.key)
    throw std::invalid_argument("--restart: collection '" + name + "' held " +
                                detail::demangle(saved->state_type.c_str()) + " in the checkpoint, not " +
                                detail::demangle(state.key.c_str()));
  // Each image once, for the thread first added at its index.
  auto left = std::make_shared<std::vector<std::string>>(std::move(saved->images));
  auto used = std::make_shared<std::vector<bool>>(left->size());
  return [left, used, make = std::move(make), &state](std::size_t index) {
    if (index >= left->size() || (*used)[index]) return make(index);
    (*used)[index] = true;
    auto box = state.make_default ? state.make_default() : make(index);
    box->load(std::exchange((*left)[index], {}));
    return box;
  };
}

ThreadsCore& detail::make_collection(Runtime& runtime, std::string name, StateFactory factory, const StateType& state,
                                     bool default_state, Backups backups) {
  return runtime.make_collection(std::move(name), std::move(factory), state, default_state, backups);
}

NodeId Application::add_node() { return add_nodes(1).front(); }

std::vector<NodeId> Application::add_nodes(std::size_t count) {
  if (job_link_ && nodes() + count > job_link_->granted())
    throw std::logic_error("the cluster's scheduler gave this job " + std::to_string(job_link_->granted()) + " nodes");
  const std::vector<NodeId> added = backend_->add_nodes(count);
  for (NodeId node : added) {
    trace_cores(node);
    runtime_->lifecycle(Lifecycle::NodeAdded, nullptr, node);
  }
  return added;
}

void Application::remove_node(NodeId node) {
  std::vector<NodeId> others = backend_->nodes();
  if (std::find(others.begin(), others.end(), node) == others.end())
    throw std::invalid_argument("no node " + std::to_string(node));
  if (node == backend_->local_node())
    throw std::invalid_argument("node " + std::to_string(node) + " coordinates the application and cannot be removed");
  std::erase(others, node);
  // From now on a failure rebuilds no thread there, and the threads rebuilt before are in place: all
  // of the node's threads are found and moved away.
  runtime_->leaving(node);
  struct Left {
    Runtime& runtime;
    NodeId node;
    ~Left() { runtime.left(node); }
  } left{*runtime_, node};
  std::vector<Future<void>> moves;
  std::size_t k = 0;
  {
    detail::EpochGuard guard;
    for (Thread* t : runtime_->threads())
      if (t->node() == node && t->collection().index_of(*t) >= 0)
        moves.push_back(runtime_->migrate(*t, others[k++ % others.size()]));
  }
  for (auto& m : moves) m.get();
  backend_->remove_node(node);
  if (job_link_) job_link_->released(backend_->released_host(node));
  runtime_->lifecycle(Lifecycle::NodeRemoved, nullptr, node);
}

}  // namespace dps
