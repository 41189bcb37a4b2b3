// Engine: the simulated cluster's clock and resources, one event loop on one OS thread. It knows
// nothing of DPS: it runs computations on virtual nodes and transfers between them, and tells a
// Listener when each one ends. Resources are shared as they are in the model (Schaeli, Gerlach & Hersch, "A simulator
// for adaptive parallel applications", §4):
//   - a node's running computations share its cores, minus what its transfers use
//     (cpu_per_send / cpu_per_receive of a core each), at the node's speed; nodes on one host share
//     its cores, which lose their context switches' time while more steps run than there are cores
//     (time_slice, context_switch), and a host under a CPU quota stops once it has used its period's share; a
//     message's own CPU (cpu_per_message) is a computation at each end, sent and arrived, unless
//     the caller paid the sender's already (SenderPaid: a step that writes what it sends, its bytes'
//     copy into the socket among them);
//   - an arrived message is unpacked before it is delivered (cpu_per_received_byte: the copy out of
//     the socket into fresh memory and that memory's first-touch faults), one message at a time per
//     node, in arrival order, as a node process's one network thread reads them, beside the steps;
//   - a transfer waits out the latency, then its bytes flow at a rate set by the sharing of the
//     source's outgoing and the destination's incoming bandwidth (equal shares, or max-min);
//   - with "cpu_per": "byte", a transfer's CPU follows the bytes it moves instead, and the steps and
//     transfers share the hosts' cores and the links in one max-min (progressive_filling.hpp): a
//     transfer goes no faster than the CPU it gets at each end lets it, as an OS shares its cores
//     among the threads that compute and those that copy to and from sockets;
//   - with fifo connections, a node pair's messages go one after another, as on one TCP connection,
//     but for urgent ones, which pass the bulk messages waiting (dps/lane.hpp).
// Deterministic: events at equal times run in the order their actions started. How transfers share
// the links is a network model's, each in a file of its own (src/network/); it schedules the ends of
// its links in the engine's queue.
//
//   sim::Engine engine(sim::ClusterModel::load("cluster.json"));
//   engine.compute(1, 0.5, {&listener, 7});         // 0.5 s of work on node 1; listener.finished(7)
//   engine.transfer(0, 1, 1e6, {&listener, 8});     // 1 MB from node 0 to node 1
//   while (engine.step()) {}                         // until nothing is left
//
// Several applications can share one engine, each on virtual nodes it acquires.
#pragma once

#include "dps/kernel/lane.hpp"
#include "dps/sim/model.hpp"
#include "dps/sim/usage.hpp"

#include <cstdint>
#include <deque>
#include <limits>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dps::sim {

namespace network {
class Model;
}
class ProgressiveFilling;

using VNode = std::uint32_t;  // a virtual node: 0 .. size() - 1, in the model's group order

// Told when an action ends; the tag says which.
class Listener {
 public:
  virtual void finished(std::uint64_t tag) = 0;

 protected:
  ~Listener() = default;
};

struct Completion {
  Listener* listener = nullptr;
  std::uint64_t tag = 0;
};

// What the caller paid already of a message's CPU at its source (the DPS runtime's steps write what
// they send themselves): its own CPU (cpu_per_message; else a computation of its own there), and the
// copy of its first `bytes` into the socket, whose CPU the transfer then charges only for the rest.
struct SenderPaid {
  bool message = false;
  double bytes = 0;
};

class Engine {
 public:
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  explicit Engine(ClusterModel model);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  const ClusterModel& model() const noexcept { return model_; }
  double now() const noexcept { return now_; }
  std::size_t size() const noexcept { return nodes_.size(); }
  unsigned cores(VNode node) const { return nodes_.at(node).cores; }
  unsigned workers(VNode node) const { return nodes_.at(node).workers; }  // 0: no limit
  double speed(VNode node) const { return nodes_.at(node).speed; }

  // Virtual nodes belong to at most one application at a time.
  VNode acquire(const void* owner);  // the lowest free node; throws ModelError when none is free
  void release(VNode node);
  const void* owner(VNode node) const { return nodes_.at(node).owner; }

  // `work` seconds of one core at speed 1, on `node`.
  void compute(VNode node, double work, Completion done);
  // `bytes` from one node to another (from != to: same-node transfers are free, no action).
  void transfer(VNode from, VNode to, double bytes, Completion done, Lane lane = Lane::ordered, SenderPaid paid = {});
  // At `time` (not before now).
  void timer(double time, Completion done);
  // The bytes of the messages from one node to another that have not arrived yet, as a TCP
  // connection's send buffer holds them (fifo networks; 0 on others, whose messages are flows). A
  // message counts whole until it arrives, where a socket frees its bytes as they are acknowledged.
  double unsent(VNode from, VNode to) const;

  // Runs the earliest event (its listener may start new actions); false when nothing is pending.
  bool step();
  double next_time() const noexcept { return heap_.empty() ? kNever : actions_[heap_.front()].finish; }
  // Runs every event up to `time`, then the clock reads `time`.
  void advance_to(double time);

  // Statistics.
  const Usage& usage() const noexcept { return usage_; }
  Usage& usage() noexcept { return usage_; }
  std::uint64_t transfers() const noexcept { return transfers_; }
  double bytes() const noexcept { return bytes_; }
  std::uint64_t events() const noexcept { return events_; }

 private:
  using ActionId = std::uint32_t;
  static constexpr std::uint32_t kNone = ~0u;
  // Network: the end of a network model's link (its first flow's), which it schedules itself.
  // Quota: a host's next quota event (its budget spent, or its period over), which it keeps.
  // Unpack: a computation on the receiving node (its network thread) that delivers its message when it ends.
  enum class Kind : std::uint8_t { Compute, Latency, Flow, Timer, Network, Quota, Unpack };

  struct Action {
    Kind kind = Kind::Timer;
    VNode from = 0, to = 0;     // compute: the node (in from); network: the model's key
    double remaining = 0;       // compute: work; latency: bytes
    double bytes = 0;           // latency and flow: the message's size
    double send_share = 1;      // latency and flow: of its bytes, those whose sending CPU it charges
    double rate = 0;            // compute: per second
    double updated = 0;         // compute: when remaining was last brought up to date
    double finish = kNever;
    std::uint64_t seq = 0;      // start order: breaks ties between equal finish times
    std::uint32_t heap_at = kNone;
    std::uint32_t at_from = kNone;  // compute: in its node's list; flow (cpu_per byte): in flows_
    Completion done;
  };

  // A node pair's connection (fifo networks): the messages waiting behind the one in progress.
  struct Connection {
    bool busy = false;
    double unsent = 0;  // bytes of its messages not arrived yet
    struct Message {
      double bytes, sent;  // sent: when it was asked for
      double send_share;
      Completion done;
    };
    LaneQueue<Message> waiting;
  };

  // A message arrived and waiting for the node's network thread to unpack it.
  struct Arrival {
    double work;
    Completion done;
  };

  struct Node {
    unsigned cores = 1, workers = 0;
    double speed = 1;
    std::uint32_t host = 0;  // into hosts_
    const void* owner = nullptr;
    std::vector<ActionId> running;  // computations, the message being unpacked among them
    std::uint32_t sending = 0, receiving = 0;  // transfers in progress, for their CPU cost
    double send_shares = 0;                    // the sending ones' send_share, summed
    bool unpacking = false;                    // a Kind::Unpack in running
    std::vector<Arrival> arrivals;             // waiting to be unpacked, from arrivals_from on
    std::size_t arrivals_from = 0;
  };
  // The machine a group's consecutive nodes share (one node each without nodes_per_host), and its
  // CPU quota: `budget` core-seconds left in the period ending at `period_end`, spent at `burn` (the
  // cores its steps and transfers use) since `spent_at`.
  struct Host {
    double cores = 1;
    VNode first = 0, count = 1;  // its nodes
    double slicing = 1;          // of its cores' work done while more steps run than it has cores
    double quota = 0, period = 0;  // core-seconds per period (0: no quota), seconds
    double budget = 0, period_end = 0, burn = 0, spent_at = 0;
    bool throttled = false;
    ActionId event = kNone;  // Kind::Quota, in the heap while the host burns or waits
  };

  ActionId make(Kind kind, Completion done);
  void free(ActionId id);
  void set_rate(ActionId id, double rate);
  void settle(Action& a) const noexcept;  // remaining as of now
  void end(ActionId id);
  void reshare_cpu(VNode node);  // and of the nodes sharing its host
  void reshare_bytes();          // cpu_per byte: every step's and transfer's rate, at once
  bool per_byte() const noexcept { return model_.network.cpu_per == CommCpu::Byte; }
  void schedule_quota(Host& host);  // its next quota event, at its burn as of now
  void spend_quota(Host& host);  // the budget as of now
  void quota_event(std::uint32_t host);
  double comm_cores(const Node& n) const noexcept;
  void start_transfer(VNode from, VNode to, double bytes, double latency, double send_share, Completion done);
  void add_computation(Kind kind, VNode node, double work, Completion done);
  bool arrive(VNode node, double bytes, Completion done);  // false: delivered at once
  void unpack_next(VNode node);

  static void list_add(std::vector<ActionId>& list, std::uint32_t& at, ActionId id);
  void list_remove(std::vector<ActionId>& list, std::uint32_t at);  // a computation

  // Indexed binary heap of actions by (finish, seq).
  auto by_finish() const noexcept {
    return [this](ActionId a, ActionId b) {
      const Action &x = actions_[a], &y = actions_[b];
      return x.finish < y.finish || (x.finish == y.finish && x.seq < y.seq);
    };
  }
  auto heap_at() noexcept {
    return [this](ActionId a) -> std::uint32_t& { return actions_[a].heap_at; };
  }
  void heap_place(ActionId id);  // insert, or move after its key changed
  void heap_erase(ActionId id);

  ClusterModel model_;
  double now_ = 0;
  std::vector<Node> nodes_;
  std::vector<Host> hosts_;
  std::unordered_map<std::uint64_t, Connection> connections_;  // fifo networks: by from << 32 | to
  std::vector<Action> actions_;
  std::vector<ActionId> free_;
  std::vector<ActionId> heap_;
  std::uint64_t seq_ = 0;
  std::uint64_t transfers_ = 0, events_ = 0;
  double bytes_ = 0;
  Usage usage_;
  class Queue;  // the heap as the network model sees it (engine.cpp)
  std::unique_ptr<Queue> queue_;
  std::unique_ptr<network::Model> network_;  // the model's sharing of the links (src/network/)
  // cpu_per byte: the transfers in their bandwidth phase, which the engine runs itself, and the
  // system their rates and the steps' are solved in.
  std::vector<ActionId> flows_;
  std::unique_ptr<ProgressiveFilling> sharing_;
  std::vector<ActionId> solved_;  // by variable: the action it is the rate of
  std::vector<double> comm_scratch_;  // by node: the cores its transfers and unpacking use
};

}  // namespace dps::sim
