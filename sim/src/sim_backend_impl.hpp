// SimBackend::Impl, the simulated backend's state and steps, shared by the files that define its parts:
// sim_backend.cpp (nodes, the loop, the kernel's hooks), sim_steps.cpp (threads and their steps),
// sim_deliveries.cpp (envelopes, results and migrations between nodes), sim_failures.cpp (--fail).
#pragma once

#include "dps/sim/engine.hpp"
#include "dps/sim/sim_backend.hpp"
#include "statistics.hpp"

#include "dps/errors.hpp"
#include "dps/kernel/recovery_log.hpp"
#include "dps/kernel/runtime.hpp"
#include "dps/kernel/simulation_hooks.hpp"
#include "dps/kernel/thread.hpp"
#include "dps/kernel/worker_policy.hpp"
#include "dps/trace.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

namespace dps::sim {

namespace worker_policy = detail::worker_policy;

inline constexpr std::uint64_t kStepTag = 0, kDeliveryTag = 1, kFailureTag = 2, kDetectionTag = 3;
inline constexpr int kKindShift = 62;
constexpr std::uint64_t tag(std::uint64_t kind, std::uint64_t index) { return kind << kKindShift | index; }

// Seconds as the messages print them.
std::string format_seconds(double seconds);

struct SimBackend::Impl final : Listener, TraceSink, SimulationHooks {
  // What a step sent: delivered when it ends. Threads are named by uid (0: the result of the step's
  // call): one may be gone when its message arrives, which then goes where its route says now.
  struct Effect {
    std::uint64_t to;
    Envelope* e;
    SenderPaid paid;    // for another node: what the step paid of its sending (charge_sending)
    VNode paid_to = 0;  // ... for that node: delivered elsewhere, the message is sent anew
  };
  struct Move {
    NodeId to;
    std::string state;
    std::function<void(std::exception_ptr)> arrived;
  };
  // A DPS thread as the simulator runs it: one step at a time, none while it travels, taking its turns
  // on a worker or inline on its node's network thread as the worker policy says (worker_policy.hpp).
  // Where it is (State) and what it holds to run (Runner) change only by these transitions:
  //   kick:       Idle with work -> Ready (in `ready`), or Parked when urgent and no worker is free
  //   take_worker / take_network: Runner None -> Worker / Network; take_worker may park it instead
  //   a worker passed on (release_worker): Parked -> Idle holding it, then kick
  //   execute:    Ready -> Running (its step, until its computation ends)
  //   finish:     Running -> Idle, then start_move (-> Moving) or kick, then end_turn (the runner goes
  //               when its turn is over)
  //   arrive:     Moving -> Idle on the new node, then kick
  struct Slot {
    enum class State : std::uint8_t {
      Idle,     // in no line and not running (with or without work: `wanted`)
      Ready,    // in `ready`: runs a step when the loop reaches it
      Parked,   // waiting for one of its node's workers (a model may limit them)
      Running,  // a step runs: its computation has not ended
      Moving,   // migrating: its state is on the way
    };
    enum class Runner : std::uint8_t {
      None,
      Worker,   // one of its node's workers
      Network,  // its node's network thread: an inline turn
    };
    Thread* thread = nullptr;
    State state = State::Idle;
    Runner runner = Runner::None;
    bool wanted = false;  // it has work (scheduled, and its last run said there is more)
    bool urgent = false;  // woken by an urgent operation's input: parks before the others
    NodeId worker_node = 0;
    unsigned streak = 0;  // steps of its turn on its runner
    unsigned handed = 0;  // inline: messages from other nodes its network thread read meanwhile
    NodeId node = 0;      // where the current step runs
    double start = 0, work = 0;
    std::size_t running = 0;  // its computation, in `running`
    std::vector<Effect> effects;
    std::vector<std::shared_ptr<const detail::Checkpoint>> checkpoints;  // to its buddy when it ends
    std::optional<StepEvent> step;  // the operation step the kernel reported, if any
    std::optional<Move> move;
  };
  struct Delivery {
    enum class Kind : std::uint8_t { Envelope, Result, Migration, Checkpoint } kind;
    NodeId from, to_node;
    std::uint64_t to;
    Envelope* e;
    double start, bytes;
    SenderPaid paid;
    std::shared_ptr<const detail::Checkpoint> checkpoint{};
  };
  struct Backup {
    std::shared_ptr<const detail::Checkpoint> checkpoint;
    NodeId node;
  };
  struct Mean {
    unsigned n = 0;
    double sum = 0;
  };

  Impl(std::shared_ptr<Engine> shared, SimOptions opts);

  // --- the kernel's simulation hooks (below, after SimBackend's own) ---
  bool send_result(NodeId from, Envelope* e) override;
  bool models_compute() const override;
  bool allocates_payloads() const override;
  void charge(Thread& thread, double seconds) override;
  ComputePlan plan_compute(Thread& thread, const void* site, double estimate) override;
  void computed(Thread& thread, const void* site, double estimate, double cpu_seconds) override;
  TraceSink* trace_through(TraceSink* sink) override;
  void drive_until(const std::function<bool()>& done) override;
  void advance_to(double time) override;

  // --- nodes ---

  NodeId add_node();
  void remove_node(NodeId node);
  VNode vnode(NodeId node) const { return vnodes.at(node); }

  // --- threads and their steps ---

  Slot& slot(const Thread& t) { return slots[t.uid()]; }  // a node-based map: references stay valid

  // The runtime frees `t`: its slot goes too, once nothing of it is left in the simulation.
  bool forget(const Thread& t) override;

  void schedule(Thread& t, Priority priority);
  void kick(Slot& s);
  void run_ready();

  // A node whose model limits its workers runs that many steps at once: a thread with work waits in
  // line for one (parks), then keeps it for its turn.
  bool take_worker(Slot& s);

  void hold_worker(Slot& s, NodeId node);
  void take_network(Slot& s, NodeId node);
  void release_network(Slot& s);
  void release_runner(Slot& s);
  bool urgent_parked(NodeId node) const { return !parked[node].empty() && parked[node].front()->urgent; }
  void release_worker(Slot& s);

  // A step ended: the thread's turn on its runner goes on while it has work, as the worker policy
  // says; an inline turn also ends once the thread is no longer quick. With work left, the thread then
  // waits for a worker (run_ready). A real network thread reads the messages that come meanwhile only
  // after the inline turn, each of which then starts a turn of its own while the thread keeps up: each
  // adds a step to this one.
  void end_turn(Slot& s);

  // One atomic step, run now for real; it takes simulated time from here on.
  void execute(Slot& s);

  // The runtime's steps write what they send to other nodes themselves (Connection's direct
  // writes): each such message's own CPU, and the copy of as much of it as the socket's buffer
  // takes, are part of the step, and what the step sends after it leaves that much later. What is
  // on its way to that node fills the buffer first, and so does what the node's steps copied for it
  // and have not sent yet (their messages leave when they end). The copy takes cpu_per_send /
  // bandwidth of the node's core per byte, as the transfer would have. A message to a thread of the
  // same node costs the step the runtime's handling of it.
  void charge_sending(Slot& s);

  // A message copied by its step leaves it: from now on the engine holds its bytes (unsent).
  void sent(VNode from, const Effect& f);

  double wire_bytes(const Envelope& e) const;
  void finish(Slot& s);

  // --- envelopes, results and migrations between nodes ---

  // What a step sends leaves when it ends; what main sends (a call's input) leaves now.
  void send(NodeId from, std::uint64_t to, Envelope* e);

  // The node an envelope for thread `to` goes to now (a call's result, `to` 0: node 0); none when that
  // thread is gone (the runtime redirects it).
  std::optional<NodeId> destination(std::uint64_t to) const;

  void deliver(NodeId from, std::uint64_t to, Envelope* e, SenderPaid paid = {}, VNode paid_to = 0);

  template <class T>
  static std::size_t take_index(std::vector<T>& items, std::vector<std::size_t>& free, T item) {
    if (free.empty()) {
      items.push_back(std::move(item));
      return items.size() - 1;
    }
    const std::size_t index = free.back();
    free.pop_back();
    items[index] = std::move(item);
    return index;
  }

  void transfer(const Delivery& d);
  void arrive(std::size_t index);
  void start_move(Slot& s);
  void complete(Envelope* e) { runtime->deliver_result(e); }

  // --- failures (--fail NODE@SECONDS) ---

  // The node after `node` among the live ones: it holds the checkpoints of `node`'s threads.
  NodeId buddy(NodeId node) const;

  void send_checkpoint(NodeId from, std::uint64_t uid, std::shared_ptr<const detail::Checkpoint> checkpoint);

  // `holder` holds thread `uid`'s checkpoint, and tells the thread.
  void hold(std::uint64_t uid, std::shared_ptr<const detail::Checkpoint> checkpoint, NodeId holder);

  // A message for a node that is gone: under fault tolerance its sender sends it again to where the
  // thread is rebuilt; otherwise its call fails, as a send over a closed connection does.
  void lost(NodeId dest, Envelope* e);

  // The node stops at once: its steps' work and what they were to send are lost, and so is what it
  // held of other nodes' checkpoints. Node 0 hears of it once its connection closes, a latency later.
  void fail_node(NodeId node);

  // The thread has no checkpoint held elsewhere: it makes one now, even if nothing wakes it.
  void wake_to_checkpoint(Thread& t);

  void stop_thread(Slot& s);

  // --- Listener: an action of this application ended ---

  void finished(std::uint64_t t) override;

  // --- TraceSink: the kernel reports here; steps get their simulated times, then go to the user's sink ---

  void step(const StepEvent& e) override;
  void transfer(const TransferEvent& e) override;
  void lifecycle(const LifecycleEvent& e) override;
  void phase(const PhaseEvent& e) override;

  // --- the loop ---

  void check_not_in_step(const char* what) const;
  bool step_engine();
  void drive(const std::function<bool()>& done);
  void advance(double time);
  void quiesce();
  void show_progress(bool last);
  Report report() const;

  std::shared_ptr<Engine> engine;
  SimOptions options;
  Statistics stats;
  Runtime* runtime = nullptr;
  TraceSink* user = nullptr;

  std::vector<VNode> vnodes;  // by NodeId, including removed nodes
  std::vector<NodeId> live;
  std::vector<bool> dead;         // by NodeId: failed
  std::vector<bool> unrecovered;  // ... and its threads were not rebuilt: messages for them fail their calls
  std::unordered_map<std::uint64_t, Backup> backups;  // by thread uid: its last checkpoint a live node holds
  std::unordered_map<std::uint64_t, Slot> slots;      // by thread uid, until the runtime frees the thread
  std::deque<Slot*> ready;                            // threads to run a step now, in order
  std::vector<unsigned> workers_used;                 // by node: workers held
  std::vector<std::deque<Slot*>> parked;              // by node: threads waiting for a worker
  std::vector<Slot*> inline_turn;                     // by node: the quick thread its network thread runs
  bool arriving = false;                              // a message from another node is being delivered
  Slot* current = nullptr;                            // the step running
  std::vector<Delivery> deliveries;
  std::vector<std::uint64_t> running;  // the uids of the threads whose steps compute (0: their node failed)
  std::vector<std::size_t> free_running;
  // By from << 32 | to: what steps of one node copied into their sockets for another, not sent yet.
  struct Copied {
    double bytes = 0;
    std::size_t messages = 0;
  };
  std::unordered_map<std::uint64_t, Copied> copying;
  std::vector<std::size_t> free_deliveries;
  std::uint64_t outstanding = 0;  // this application's computations and transfers in the engine
  std::map<std::pair<const void*, double>, Mean> means;
  bool stopped = false;
  double ended = 0;
  std::chrono::steady_clock::time_point started, shown;
  std::uint64_t since_progress = 0;
};

}  // namespace dps::sim
