// SimBackend: DPS threads as simulated strands, their atomic steps as computations on virtual nodes,
// their envelopes as transfers, all released when the step that produced them ends (Schaeli, Gerlach & Hersch, "A
// simulator for adaptive parallel applications", Fig. 5).
#include "dps/sim/sim_backend.hpp"

#include "dps/sim/engine.hpp"

#include "dps/kernel/simulation_hooks.hpp"
#include "statistics.hpp"

#include "dps/kernel/worker_policy.hpp"
#include "dps/errors.hpp"
#include "dps/kernel/recovery_log.hpp"
#include "dps/kernel/runtime.hpp"
#include "dps/kernel/thread.hpp"
#include "dps/trace.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <map>
#include <optional>
#include <unordered_map>
#include <stdexcept>

namespace dps::sim {

namespace worker_policy = detail::worker_policy;

namespace {

constexpr std::uint64_t kStepTag = 0, kDeliveryTag = 1, kFailureTag = 2, kDetectionTag = 3;
constexpr int kKindShift = 62;
constexpr std::uint64_t tag(std::uint64_t kind, std::uint64_t index) { return kind << kKindShift | index; }


double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

std::string format(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", seconds);
  return text;
}

}  // namespace

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

  Impl(std::shared_ptr<Engine> shared, SimOptions opts)
      : engine(std::move(shared)), options(std::move(opts)), stats(*engine), started(std::chrono::steady_clock::now()) {
    if (options.nodes == 0) throw std::invalid_argument("a simulated application needs at least one node");
    if (options.nodes > engine->size())
      throw ModelError("the application asks for " + std::to_string(options.nodes) + " nodes, the simulated cluster has " +
                       std::to_string(engine->size()));
    try {
      for (std::size_t i = 0; i < options.nodes; ++i) add_node();
    } catch (...) {
      for (VNode v : vnodes) engine->release(v);  // the cluster is not left with nodes nobody owns
      throw;
    }
    for (const SimOptions::Failure& f : options.failures) {
      if (f.node == 0 || f.node >= options.nodes)
        throw std::invalid_argument("--fail " + std::to_string(f.node) + "@" + format(f.time) + ": " +
                                    (f.node == 0 ? "node 0 coordinates the application; its loss is not simulated"
                                                 : "the application starts on nodes 0 to " + std::to_string(options.nodes - 1)));
      engine->timer(f.time, {this, tag(kFailureTag, f.node)});
    }
  }

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

  NodeId add_node() {
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

  void remove_node(NodeId node) {
    if (node == 0) throw std::invalid_argument("node 0 coordinates the application and cannot be removed");
    auto it = std::find(live.begin(), live.end(), node);
    if (it == live.end()) throw std::invalid_argument("no node " + std::to_string(node));
    live.erase(it);
    engine->release(vnodes[node]);
    stats.node_left(node, engine->now());
  }

  VNode vnode(NodeId node) const { return vnodes.at(node); }

  // --- threads and their steps ---

  Slot& slot(const Thread& t) { return slots[t.uid()]; }  // a node-based map: references stay valid

  // The runtime frees `t`: its slot goes too, once nothing of it is left in the simulation.
  bool forget(const Thread& t) override {
    auto it = slots.find(t.uid());
    if (it == slots.end()) return true;
    const Slot& s = it->second;
    if (&s == current || s.state != Slot::State::Idle || s.runner != Slot::Runner::None || s.move || !s.effects.empty() ||
        !s.checkpoints.empty())
      return false;
    slots.erase(it);
    return true;
  }

  void schedule(Thread& t, Priority priority) {
    Slot& s = slot(t);
    s.thread = &t;
    s.wanted = true;
    s.urgent = priority == Priority::Urgent;
    // A quick thread that a message from another node wakes takes its turn on the network thread that
    // received it, if that thread runs none already: no worker needed.
    const NodeId node = t.node();
    if (arriving && s.state == Slot::State::Idle && s.runner == Slot::Runner::None &&
        worker_policy::runs_inline(t, inline_turn[node] != nullptr))
      take_network(s, node);
    kick(s);
  }

  void kick(Slot& s) {
    if (!s.wanted || s.state != Slot::State::Idle || stopped || dead[s.thread->node()]) return;  // (until rebuilt)
    // An urgent thread parks at once, ahead of the others: the worker that the step which woke it
    // frees next passes to it.
    if (s.urgent && s.runner == Slot::Runner::None && !take_worker(s)) return;
    s.state = Slot::State::Ready;
    ready.push_back(&s);
  }

  void run_ready() {
    while (!ready.empty()) {
      Slot& s = *ready.front();
      ready.pop_front();
      s.state = Slot::State::Idle;
      if (!s.wanted || stopped) {
        release_runner(s);
        continue;
      }
      if (s.runner != Slot::Runner::None || take_worker(s)) execute(s);
    }
  }

  // A node whose model limits its workers runs that many steps at once: a thread with work waits in
  // line for one (parks), then keeps it for its turn.
  bool take_worker(Slot& s) {
    const NodeId node = s.thread->node();
    const unsigned limit = engine->workers(vnode(node));
    if (limit > 0 && workers_used[node] >= limit) {
      s.state = Slot::State::Parked;
      std::deque<Slot*>& waiting = parked[node];
      waiting.insert(worker_policy::place(waiting, s.urgent, [](const Slot* x) { return x->urgent; }), &s);
      return false;
    }
    ++workers_used[node];
    hold_worker(s, node);
    return true;
  }

  void hold_worker(Slot& s, NodeId node) {
    s.runner = Slot::Runner::Worker;
    s.worker_node = node;
    s.streak = 0;
  }

  void take_network(Slot& s, NodeId node) {
    s.runner = Slot::Runner::Network;
    s.node = node;
    s.streak = 0;
    s.handed = 0;
    inline_turn[node] = &s;
  }

  void release_network(Slot& s) {
    s.runner = Slot::Runner::None;
    inline_turn[s.node] = nullptr;
  }

  void release_runner(Slot& s) {
    if (s.runner == Slot::Runner::Worker) release_worker(s);
    if (s.runner == Slot::Runner::Network) release_network(s);
  }

  bool urgent_parked(NodeId node) const { return !parked[node].empty() && parked[node].front()->urgent; }

  void release_worker(Slot& s) {
    s.runner = Slot::Runner::None;
    std::deque<Slot*>& waiting = parked[s.worker_node];
    if (waiting.empty()) {
      --workers_used[s.worker_node];
      return;
    }
    Slot& next = *waiting.front();  // the worker passes to the first in line
    waiting.pop_front();
    next.state = Slot::State::Idle;
    hold_worker(next, s.worker_node);
    kick(next);
    if (next.state != Slot::State::Ready) release_worker(next);  // no longer runnable: the next one in line
  }

  // A step ended: the thread's turn on its runner goes on while it has work, as the worker policy
  // says; an inline turn also ends once the thread is no longer quick. With work left, the thread then
  // waits for a worker (run_ready). A real network thread reads the messages that come meanwhile only
  // after the inline turn, each of which then starts a turn of its own while the thread keeps up: each
  // adds a step to this one.
  void end_turn(Slot& s) {
    const bool more = s.state == Slot::State::Ready;
    switch (s.runner) {
      case Slot::Runner::None: break;
      case Slot::Runner::Worker:
        if (!more || worker_policy::turn_ends(++s.streak, worker_policy::kBudget, urgent_parked(s.worker_node)))
          release_worker(s);
        break;
      case Slot::Runner::Network:
        if (!more || s.thread->pace() != Thread::Pace::Quick ||
            worker_policy::turn_ends(++s.streak, worker_policy::kInlineBudget + s.handed, urgent_parked(s.node)))
          release_network(s);
        break;
    }
  }

  // One atomic step, run now for real; it takes simulated time from here on.
  void execute(Slot& s) {
    Thread& t = *s.thread;
    s.state = Slot::State::Running;
    s.urgent = false;  // it got a worker: later waits are ordinary
    s.node = t.node();
    s.start = engine->now();
    s.work = 0;
    s.step.reset();
    current = &s;
    const bool direct = !options.pdexec;
    const double cpu = direct ? detail::thread_cpu_seconds() : 0.0;
    bool more = false;
    try {
      detail::EpochGuard guard;
      more = t.run(1);
    } catch (...) {
      current = nullptr;
      s.state = Slot::State::Idle;
      throw;
    }
    if (direct) s.work += detail::thread_cpu_seconds() - cpu;
    charge_sending(s);
    current = nullptr;
    s.wanted = more;
    ++stats.steps;
    if (s.work > 0) {
      ++outstanding;
      s.running = take_index(running, free_running, t.uid());
      engine->compute(vnode(s.node), s.work, {this, tag(kStepTag, s.running)});
    } else {
      finish(s);
    }
  }

  // The runtime's steps write what they send to other nodes themselves (Connection's direct
  // writes): each such message's own CPU, and the copy of as much of it as the socket's buffer
  // takes, are part of the step, and what the step sends after it leaves that much later. What is
  // on its way to that node fills the buffer first, and so does what the node's steps copied for it
  // and have not sent yet (their messages leave when they end). The copy takes cpu_per_send /
  // bandwidth of the node's core per byte, as the transfer would have. A message to a thread of the
  // same node costs the step the runtime's handling of it.
  void charge_sending(Slot& s) {
    const NetworkModel& net = engine->model().network;
    const VNode from = vnode(s.node);
    const double per_byte = net.send_buffer > 0 ? net.cpu_per_send / net.bandwidth * engine->speed(from) : 0.0;
    if (net.cpu_per_message == 0 && net.cpu_per_local_message == 0 && per_byte == 0) return;
    for (Effect& f : s.effects) {
      const auto dest = destination(f.to);
      if (!dest) continue;
      const VNode to = vnode(*dest);
      if (to == from) {
        s.work += net.cpu_per_local_message;
        continue;
      }
      f.paid.message = true;
      f.paid_to = to;
      s.work += net.cpu_per_message;
      if (per_byte == 0) continue;
      Copied& copied = copying[std::uint64_t{from} << 32 | to];
      f.paid.bytes = std::clamp(net.send_buffer - engine->unsent(from, to) - copied.bytes, 0.0, wire_bytes(*f.e));
      copied.bytes += f.paid.bytes;
      ++copied.messages;
      s.work += f.paid.bytes * per_byte;
    }
  }

  // A message copied by its step leaves it: from now on the engine holds its bytes (unsent).
  void sent(VNode from, const Effect& f) {
    const auto at = copying.find(std::uint64_t{from} << 32 | f.paid_to);
    if (at == copying.end()) return;
    at->second.bytes -= f.paid.bytes;
    if (--at->second.messages == 0) copying.erase(at);  // no drift left
  }

  double wire_bytes(const Envelope& e) const {
    return (e.kind == Message::Data ? static_cast<double>(e.payload.wire_size())
                                    : static_cast<double>(kControlWireBytes)) +
           (e.determinants ? static_cast<double>(e.determinants->bytes()) : 0.0) + engine->model().network.header_bytes;
  }

  void finish(Slot& s) {
    s.state = Slot::State::Idle;
    s.thread->ran_for(engine->now() - s.start);  // its pace, as the strands judge it
    if (s.step) {
      ++stats.ops;
      if (user) {
        StepEvent e = *s.step;
        e.start = s.start;
        e.end = engine->now();
        user->step(e);
      }
      s.step.reset();
    }
    for (const Effect& f : s.effects) {
      if (f.paid.bytes > 0) sent(vnode(s.node), f);
      deliver(s.node, f.to, f.e, f.paid, f.paid_to);
    }
    s.effects.clear();
    for (auto& c : s.checkpoints) send_checkpoint(s.node, s.thread->uid(), std::move(c));
    s.checkpoints.clear();
    if (s.move) start_move(s);
    kick(s);
    end_turn(s);
  }

  // --- envelopes, results and migrations between nodes ---

  // What a step sends leaves when it ends; what main sends (a call's input) leaves now.
  void send(NodeId from, std::uint64_t to, Envelope* e) {
    if (current)
      current->effects.push_back({to, e, {}});
    else
      deliver(from, to, e);
  }

  // The node an envelope for thread `to` goes to now (a call's result, `to` 0: node 0); none when that
  // thread is gone (the runtime redirects it).
  std::optional<NodeId> destination(std::uint64_t to) const {
    if (!to) return NodeId{0};
    const Thread* thread = runtime->thread(to);
    return thread ? std::optional<NodeId>(thread->node()) : std::nullopt;
  }

  void deliver(NodeId from, std::uint64_t to, Envelope* e, SenderPaid paid = {}, VNode paid_to = 0) {
    if (stopped) {
      delete e;
      return;
    }
    Thread* thread = to ? runtime->thread(to) : nullptr;
    if (to && !thread) return runtime->redirect(from, e);
    const NodeId dest = thread ? thread->node() : 0;
    if (dead[dest]) return lost(dest, e);
    if (vnode(from) == vnode(dest)) {
      ++stats.local_messages;
      if (thread)
        runtime->enqueue(*thread, e);
      else
        complete(e);
      return;
    }
    if (vnode(dest) != paid_to) paid = {};  // its thread moved since: written to another node
    transfer(Delivery{to ? Delivery::Kind::Envelope : Delivery::Kind::Result, from, dest, to, e, engine->now(),
                      wire_bytes(*e), paid});
  }

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

  void transfer(const Delivery& d) {
    const std::size_t index = take_index(deliveries, free_deliveries, d);
    ++outstanding;
    ++stats.messages;
    stats.bytes += d.bytes;
    const Lane lane = d.kind == Delivery::Kind::Envelope ? lane_of(d.e->kind) : Lane::ordered;
    engine->transfer(vnode(d.from), vnode(d.to_node), d.bytes, {this, tag(kDeliveryTag, index)}, lane, d.paid);
  }

  void arrive(std::size_t index) {
    Delivery d = std::move(deliveries[index]);
    deliveries[index].checkpoint.reset();
    free_deliveries.push_back(index);
    if (user) user->transfer({d.from, d.to_node, static_cast<std::uint64_t>(d.bytes), d.start, engine->now()});
    if ((dead[d.from] || dead[d.to_node]) && d.kind != Delivery::Kind::Migration) {  // lost with its node's sockets
      delete d.e;
      return;
    }
    switch (d.kind) {
      case Delivery::Kind::Envelope:
        if (stopped) {
          delete d.e;
        } else if (Thread* to = runtime->thread(d.to); !to) {
          runtime->redirect(d.to_node, d.e);  // gone meanwhile
        } else if (to->node() != d.to_node) {
          deliver(d.to_node, d.to, d.e);  // the thread moved on meanwhile: forwarded
        } else {
          // Read by the network thread that may run it inline: a step more for its turn (end_turn).
          if (Slot* s = inline_turn[d.to_node]; s && s->thread == to) ++s->handed;
          arriving = true;
          runtime->enqueue(*to, d.e);
          arriving = false;
        }
        break;
      case Delivery::Kind::Result:
        if (stopped)
          delete d.e;
        else
          complete(d.e);
        break;
      case Delivery::Kind::Migration: {
        Slot& s = slots.at(d.to);  // a moving thread stays until it arrived
        Move m = std::move(*s.move);
        s.move.reset();
        s.state = Slot::State::Idle;
        if (dead[d.from] || dead[d.to_node]) {  // it stays where it was, or was rebuilt from its checkpoint
          const NodeId failed = dead[d.from] ? d.from : d.to_node;
          m.arrived(std::make_exception_ptr(NodeFailure(failed, "it failed while " + s.thread->name() + " migrated")));
        } else {
          s.thread->relocate(m.to, m.state);
          // On node 0 it covered what it handled at once: a checkpoint from before it is no good.
          if (d.from == 0) backups.erase(d.to);
          if (runtime->fault_tolerant()) wake_to_checkpoint(*s.thread);
          m.arrived(nullptr);
        }
        kick(s);
        break;
      }
      case Delivery::Kind::Checkpoint: {
        Thread* t = runtime->thread(d.to);
        if (stopped || !t || dead[t->node()]) break;
        hold(d.to, std::move(d.checkpoint), d.to_node);
        break;
      }
    }
  }

  void complete(Envelope* e) { runtime->deliver_result(e); }

  // --- failures (--fail NODE@SECONDS) ---

  // The node after `node` among the live ones: it holds the checkpoints of `node`'s threads.
  NodeId buddy(NodeId node) const {
    auto it = std::upper_bound(live.begin(), live.end(), node);
    if (it == live.end()) it = live.begin();
    return *it;
  }

  void send_checkpoint(NodeId from, std::uint64_t uid, std::shared_ptr<const detail::Checkpoint> checkpoint) {
    if (dead[from]) return;
    const NodeId holder = buddy(from);
    if (holder == from) return;  // no other node left to hold it
    const double bytes = static_cast<double>(checkpoint->bytes()) + engine->model().network.header_bytes;
    transfer(Delivery{Delivery::Kind::Checkpoint, from, holder, uid, nullptr, engine->now(), bytes, {}, std::move(checkpoint)});
  }

  // `holder` holds thread `uid`'s checkpoint, and tells the thread.
  void hold(std::uint64_t uid, std::shared_ptr<const detail::Checkpoint> checkpoint, NodeId holder) {
    if (const auto it = backups.find(uid); it != backups.end() && it->second.checkpoint->epoch > checkpoint->epoch) return;
    auto* e = new Envelope;
    e->kind = Message::Stored;
    e->count = checkpoint->epoch;
    backups[uid] = Backup{std::move(checkpoint), holder};
    deliver(holder, uid, e);
  }

  // A message for a node that is gone: under fault tolerance its sender sends it again to where the
  // thread is rebuilt; otherwise its call fails, as a send over a closed connection does.
  void lost(NodeId dest, Envelope* e) {
    if ((!runtime->fault_tolerant() || unrecovered[dest]) && e->kind == Message::Data)
      runtime->fail_call(e->call, std::make_exception_ptr(NodeFailure(dest, "it was killed (--fail)")));
    delete e;
  }

  // The node stops at once: its steps' work and what they were to send are lost, and so is what it
  // held of other nodes' checkpoints. Node 0 hears of it once its connection closes, a latency later.
  void fail_node(NodeId node) {
    if (stopped || dead[node]) return;
    auto it = std::find(live.begin(), live.end(), node);
    if (it == live.end()) return;  // removed before
    live.erase(it);
    dead[node] = true;
    stats.node_left(node, engine->now());
    for (auto& [uid, s] : slots)
      if (s.thread && s.thread->node() == node && s.state != Slot::State::Moving) stop_thread(s);
    parked[node].clear();
    inline_turn[node] = nullptr;
    workers_used[node] = 0;
    // Threads whose checkpoints it held make new ones at once.
    std::erase_if(backups, [this, node](const auto& entry) {
      if (entry.second.node != node) return false;
      if (Thread* t = runtime->thread(entry.first); t && !dead[t->node()]) wake_to_checkpoint(*t);
      return true;
    });
    ++outstanding;  // the detection: the run waits for it
    engine->timer(engine->now() + engine->model().network.latency, {this, tag(kDetectionTag, node)});
  }

  // The thread has no checkpoint held elsewhere: it makes one now, even if nothing wakes it.
  void wake_to_checkpoint(Thread& t) {
    t.backup_lost();
    Slot& s = slot(t);
    s.thread = &t;
    s.wanted = true;
    kick(s);
  }

  void stop_thread(Slot& s) {
    if (s.state == Slot::State::Running) running[s.running] = 0;  // its computation ends unseen
    if (s.state == Slot::State::Ready) std::erase(ready, &s);
    for (const Effect& f : s.effects) {
      if (f.paid.bytes > 0) sent(vnode(s.node), f);
      delete f.e;
    }
    s.effects.clear();
    s.checkpoints.clear();
    s.step.reset();
    if (s.move) {  // decided by the step that was lost: the thread is rebuilt from its checkpoint instead
      std::exchange(s.move, std::nullopt)->arrived(std::make_exception_ptr(
          NodeFailure(s.node, "it failed before " + s.thread->name() + " could migrate")));
    }
    s.state = Slot::State::Idle;
    s.runner = Slot::Runner::None;
    s.wanted = false;
  }

  void start_move(Slot& s) {
    if (s.state != Slot::State::Idle)  // the kernel migrates a thread from its own step (Thread::settle)
      throw std::logic_error(s.thread->name() + " migrates while it waits to run a step");
    s.state = Slot::State::Moving;
    const double bytes = static_cast<double>(s.move->state.size()) + engine->model().network.header_bytes;
    transfer(
        Delivery{Delivery::Kind::Migration, s.node, s.move->to, s.thread->uid(), nullptr, engine->now(), bytes, {}});
  }

  // --- Listener: an action of this application ended ---

  void finished(std::uint64_t t) override {
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
        if (!stopped && !runtime->node_failed(static_cast<NodeId>(index), "it was killed at t = " + format(engine->now()) + " s"))
          unrecovered[index] = true;
        break;
    }
  }

  // --- TraceSink: the kernel reports here; steps get their simulated times, then go to the user's sink ---

  void step(const StepEvent& e) override {
    if (current)
      current->step = e;
    else if (user)
      user->step(e);
  }
  void transfer(const TransferEvent& e) override {
    if (user) user->transfer(e);
  }
  void lifecycle(const LifecycleEvent& e) override {
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
  void phase(const PhaseEvent& e) override {
    stats.phase(e.name, e.begin, engine->now());
    if (user) user->phase(e);
  }

  // --- the loop ---

  void check_not_in_step(const char* what) const {
    if (current)
      throw std::logic_error(std::string("an operation on ") + current->thread->name() + " " + what +
                             " inside its step: a simulated step cannot wait for the simulation");
  }

  bool step_engine() {
    if (!engine->step()) return false;
    if (options.progress && (++since_progress & 0x3fff) == 0) show_progress(false);
    return true;
  }

  void drive(const std::function<bool()>& done) {
    check_not_in_step("waits for a future");
    for (;;) {
      run_ready();
      if (done()) return runtime->recovered() ? quiesce() : void();
      if (outstanding == 0)
        throw std::runtime_error("simulation: at t = " + format(engine->now()) +
                                 " s nothing is left to run, but the application waits for a result that can never "
                                 "come (a deadlock in the flow graph?)");
      step_engine();
    }
  }

  void advance(double time) {
    check_not_in_step("sleeps");
    for (;;) {
      run_ready();
      if (engine->next_time() > time) break;
      step_engine();
    }
    engine->advance_to(time);
  }

  void quiesce() {
    for (;;) {
      run_ready();
      if (outstanding == 0) return;
      step_engine();
    }
  }

  void show_progress(bool last) {
    const auto now = std::chrono::steady_clock::now();
    if (!last && now - shown < std::chrono::milliseconds(500)) return;
    shown = now;
    std::fprintf(stderr, "\rsim: %.6g s simulated, %llu steps, %llu messages, %.1f s wall%s", engine->now(),
                 static_cast<unsigned long long>(stats.steps), static_cast<unsigned long long>(stats.messages),
                 std::chrono::duration<double>(now - started).count(), last ? "\n" : "");
    std::fflush(stderr);
  }

  Report report() const {
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

  std::shared_ptr<Engine> engine;
  SimOptions options;
  Statistics stats;
  Runtime* runtime = nullptr;
  TraceSink* user = nullptr;

  std::vector<VNode> vnodes;  // by NodeId, including removed nodes
  std::vector<NodeId> live;
  std::vector<bool> dead;     // by NodeId: failed
  std::vector<bool> unrecovered;  // ... and its threads were not rebuilt: messages for them fail their calls
  std::unordered_map<std::uint64_t, Backup> backups;  // by thread uid: its last checkpoint a live node holds
  std::unordered_map<std::uint64_t, Slot> slots;  // by thread uid, until the runtime frees the thread
  std::deque<Slot*> ready;    // threads to run a step now, in order
  std::vector<unsigned> workers_used;         // by node: workers held
  std::vector<std::deque<Slot*>> parked;      // by node: threads waiting for a worker
  std::vector<Slot*> inline_turn;             // by node: the quick thread its network thread runs
  bool arriving = false;                      // a message from another node is being delivered
  Slot* current = nullptr;    // the step running
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
