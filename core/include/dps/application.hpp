// Application: one DPS program instance; what `main` creates first. It owns the runtime and picks
// the backend: N nodes in this process for now (the TCP and simulated backends come in through the
// same constructor). Several applications can live in one process.
//
//   int main(int argc, char** argv) {
//     dps::Application app(argc, argv);                        // --nodes N --workers W
//     auto master  = app.threads<Master>("master", 1);
//     auto workers = app.threads<Worker>("workers", app.nodes());
//     auto graph   = app.graph(dps::op<Cut>(master) >> dps::op<Add>(workers) >> dps::op<Gather>(master));
//     Partial total = graph.call(Range{0, 1'000'000}).get();
//   }
#pragma once

#include "dps/backend.hpp"
#include "dps/graph.hpp"
#include "dps/thread_state.hpp"
#include "dps/threads.hpp"
#include "dps/trace.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dps {

struct ApplicationOptions {
  std::size_t nodes = 4;
  std::size_t workers = 0;  // OS threads running DPS threads; 0: the cores, shared by a host's node processes
};

// What the command line asks for (Application::options_help lists it).
struct CommandLine {
  ApplicationOptions options{.nodes = 0};  // 0: --nodes not given
  bool in_process = false;  // --local: every node in this process (LocalBackend)
  std::string hostfile;     // --hostfile FILE: the hosts node processes are started on
  std::string trace;        // --trace FILE: node 0 writes the run's trace there
  // --fault-tolerance [--checkpoint-every SECONDS] [--checkpoint-ops K]: threads checkpoint to other
  // nodes, and a run survives the loss of a node other than 0 (docs/fault-tolerance.md); 0: off.
  // Only K given: no interval in seconds (infinity).
  double checkpoint_every = 0;
  std::uint64_t checkpoint_operations = 0;  // 0: none
  // --checkpoint-dir DIR: Application::checkpoint writes the run there, at most every
  // --checkpoint-every seconds (1 by default); --restart DIR: the run goes on from the one there.
  std::string checkpoint_dir, restart;
  double disk_checkpoint_every = 0;
  bool replace = false;  // --replace: a node started in place of a failed one takes its rebuilt threads
  std::vector<std::string> rest;
  int argc = 0;
  char** argv = nullptr;
};

class TraceFile;

namespace detail {
struct RunImage;  // a disk checkpoint (core/src/run_image.hpp)
class Replacement;  // --replace (core/src/replacement.hpp)
// The backend of Application(argc, argv). Defined by the backend library the program links:
// dps::dps (node processes over TCP) or dps::sim (the simulator), which takes its own options out of
// command_line.rest; the help lists those options.
std::unique_ptr<Backend> command_line_backend(CommandLine& command_line);
const char* command_line_backend_help();
// A new thread collection of the application's runtime (application.cpp).
ThreadsCore& make_collection(Runtime& runtime, std::string name, StateFactory factory, const StateType& state,
                             bool default_state, Backups backups);
}  // namespace detail

class JobLink;
class ResizePolicy;

// A user phase (e.g. an LU iteration), recorded in the trace from construction to end().
class [[nodiscard]] Phase {
 public:
  Phase(Runtime& runtime, std::string name);
  Phase(Phase&& other) noexcept;
  Phase& operator=(Phase&&) = delete;
  ~Phase() { end(); }
  void end();

 private:
  Runtime* runtime_;
  std::string name_;
};

class Application {
 public:
  explicit Application(ApplicationOptions options = {});
  // Reads --nodes N, --workers W, --hostfile FILE, --local, --trace FILE, --fault-tolerance,
  // --checkpoint-every S, --checkpoint-ops K, --checkpoint-dir DIR, --restart DIR and --replace; every other argument
  // is left in args(). Throws std::invalid_argument with a one-line reason on a bad value. On a cluster, this
  // constructor returns on node 0 only: in the other node processes it serves until node 0's application ends, then
  // ends the process.
  Application(int argc, char** argv) : Application(parse(argc, argv), &detail::command_line_backend) {}
  // Runs on a given backend (the simulator and TCP backends, or a test's).
  explicit Application(std::unique_ptr<Backend> backend);
  ~Application();
  Application(const Application&) = delete;
  Application& operator=(const Application&) = delete;

  // The options the backend reads (inline: the backend library that defines it comes after the kernel).
  static std::string options_help() {
    return std::string(detail::command_line_backend_help()) +
           "  --trace FILE        write the run's trace there (docs/trace-format.md; open it with dps-viewer)\n"
           "  --fault-tolerance   threads checkpoint to other nodes, so the run survives the loss of a node\n"
           "                      (docs/fault-tolerance.md)\n"
           "  --checkpoint-every S  seconds between a thread's checkpoints (default 1)\n"
           "  --checkpoint-ops K  a thread's checkpoint after K operations too (alone: after K only)\n"
           "  --checkpoint-dir DIR  between calls, the run's threads and progress are written there\n"
           "  --restart DIR       go on from the checkpoint in DIR (written by --checkpoint-dir)\n"
           "  --replace           a node started in place of a failed one (on the hostfile's next slot)\n"
           "                      takes the threads rebuilt after it failed\n";
  }
  static CommandLine parse(int argc, char** argv);
  const std::vector<std::string>& args() const noexcept { return args_; }

  // Seconds since the application started: simulated time in a simulation.
  double now() const;
  // Lets time pass: sleeps, or runs the simulated cluster that long (main's own code takes no
  // simulated time). E.g. remove threads 2 s into a call: f = g.call(x); app.sleep_for(2s); ...
  template <class Rep, class Period>
  void sleep_for(std::chrono::duration<Rep, Period> duration) {
    sleep_until(now() + std::chrono::duration<double>(duration).count());
  }
  void sleep_until(double time);

  std::size_t nodes() const;
  std::vector<NodeId> node_ids() const;
  NodeId local_node() const;       // the node `main` runs on (where a coordinating thread goes)
  unsigned cores(NodeId node) const;  // 0 when unknown
  std::size_t workers() const;        // OS threads running DPS threads in this process
  // A node's speed per core relative to the model's reference (simulated), 0 when unknown: what a
  // partition by speed weighs nodes with.
  double speed(NodeId node) const;

  // Under simulation main's code takes no simulated time, and partial direct execution
  // (models_compute) charges dps::compute's estimates instead of running them; without
  // allocates_payloads (NOALLOC) LargeArrays hold no data. A check of results needs all three false.
  bool simulated() const;
  bool models_compute() const;
  bool allocates_payloads() const;
  // The scheduler that answers this application's resize points when one runs it as a job (a
  // cluster's scheduler, simulated or real: job_protocol.hpp); null otherwise (see resize_policy.hpp).
  ResizePolicy* resize_policy() const;
  NodeId add_node();
  // Whether add_node can start a node (not when an external launcher, srun or mpirun, fixed them):
  // an application that may grow again keeps the nodes it cannot get back.
  bool can_add_nodes() const;
  std::vector<NodeId> add_nodes(std::size_t count);  // their processes start together
  // Migrates every thread of `node` to the other nodes, then stops it.
  void remove_node(NodeId node);

  // Under --fault-tolerance, Backups::None spares a collection its checkpoints: losing one of its
  // threads then fails the calls (threads.hpp).
  template <class State>
  Threads<State> threads(std::string name, std::size_t count, Backups backups = Backups::Kept) {
    return make_threads<State>(
        std::move(name), count, [](std::size_t) { return State{}; }, true, backups);
  }
  // make(index) builds the state of the index-th thread, also for threads added later. On a cluster
  // it runs on node 0, and the state travels (cereal) to the thread's node.
  template <class State, class Make>
  Threads<State> threads(std::string name, std::size_t count, Make make, Backups backups = Backups::Kept) {
    return make_threads<State>(std::move(name), count, std::move(make), false, backups);
  }

  template <class In, class Out>
  Graph<In, Out> graph(const Chain<In, Out>& chain, std::string name = "graph") {
    return Graph<In, Out>(*runtime_, chain, std::move(name));
  }

  // --- disk checkpoints (docs/fault-tolerance.md) ---
  // Between two calls (none running): with --checkpoint-dir, writes every thread's state and
  // `progress` (what main needs to go on: e.g. the iterations done) there, when --checkpoint-every
  // seconds passed since the last one, or since the first point marked (the run as it begins holds
  // nothing a restart needs); returns whether it wrote. Without the option it does nothing.
  template <class Progress>
  bool checkpoint(const Progress& progress) {
    static_assert(detail::serializable_state<Progress>, "dps: a checkpoint's progress needs a cereal serialize()");
    return checkpoint_due() && (write_checkpoint(encoded(progress)), true);
  }
  // With --checkpoint-dir: a program whose work is one long call splits it, to mark points between.
  bool checkpoints_to_disk() const noexcept { return !checkpoint_dir_.empty(); }
  // With --restart DIR, the progress of the checkpoint there; each collection made after this call
  // has its threads made, index by index as they are added, with the states it holds (a collection
  // made before it, under --restart, is refused: the program does not know where it goes on from).
  // Without the option, nothing.
  template <class Progress>
  std::optional<Progress> restarted() const {
    if (const std::string* progress = restart_progress()) return decoded<Progress>(*progress);
    return std::nullopt;
  }

  void trace_to(TraceSink* sink);
  // A user phase of the trace, from now until the returned guard ends (keep it in a variable).
  [[nodiscard]] Phase phase(std::string name) { return Phase(*runtime_, std::move(name)); }

  // The kernel running the application (opaque here: for the kernel's own tools and tests).
  Runtime& runtime() noexcept { return *runtime_; }

 private:
  using BackendMaker = std::unique_ptr<Backend> (*)(CommandLine&);
  Application(CommandLine command_line, BackendMaker make);
  void start(std::unique_ptr<Backend> backend, double checkpoint_every = 0, std::uint64_t checkpoint_operations = 0);
  void trace_cores(NodeId node);
  bool checkpoint_due();  // marks the point: the first starts the clock
  void write_checkpoint(std::string progress);
  const std::string* restart_progress() const;
  // The factory of collection `name`: the restart's images first, index by index, then `make`.
  detail::StateFactory restoring(const std::string& name, const detail::StateType& state, detail::StateFactory make);
  template <class State, class Make>
  Threads<State> make_threads(std::string name, std::size_t count, Make make, bool default_state, Backups backups) {
    (void)&detail::state_type_at_startup<State>;
    detail::StateFactory factory = [make](std::size_t index) {
      return std::unique_ptr<detail::StateBox>(new detail::StateBoxOf<State>(make(index)));
    };
    if (restart_) factory = restoring(name, detail::state_type<State>(), std::move(factory)), default_state = false;
    ThreadsCore& core = detail::make_collection(*runtime_, std::move(name), std::move(factory),
                                                detail::state_type<State>(), default_state, backups);
    Threads<State> handle(core);
    handle.add(count);
    return handle;
  }

  std::vector<std::string> args_;
  std::unique_ptr<detail::Replacement> replacement_;  // --replace; stopped before the runtime goes
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<TraceFile> trace_file_;  // --trace
  std::unique_ptr<JobLink> job_link_;      // run as a job of a cluster's scheduler
  std::string program_;                    // argv[0]'s name: what a disk checkpoint says wrote it
  std::string checkpoint_dir_;             // --checkpoint-dir
  double disk_checkpoint_every_ = 0;
  double last_disk_checkpoint_ = 0, disk_checkpoint_cost_ = 0;  // when the last ended (or the first mark), its cost
  std::unique_ptr<detail::RunImage> restart_;                   // --restart
  mutable bool restart_asked_ = false;                          // restarted() was called
  bool checkpoint_marked_ = false;                              // checkpoint() was called
  int unwinding_at_start_ = 0;             // std::uncaught_exceptions() then: the job ends, or fails
  bool owns_context_ = false;
};

}  // namespace dps
