// Engine: the simulated cluster's clock and resources, one event loop on one OS thread. It knows
// nothing of DPS: it runs computations on virtual nodes and transfers between them, and tells a
// Listener when each one ends. Resources are shared as they are in the model (seed 004 §4):
//   - a node's running computations share its cores, minus what its transfers use
//     (cpu_per_send / cpu_per_receive of a core each), at the node's speed;
//   - a transfer waits out the latency, then its bytes flow at a rate set by the sharing of the
//     source's outgoing and the destination's incoming bandwidth (equal shares, or max-min);
//   - with fifo connections, a node pair's messages go one after another, as on one TCP connection,
//     but for urgent ones, which pass the bulk messages waiting (dps/lane.hpp).
// Deterministic: events at equal times run in the order their actions started. A transfer is bound to
// its bottleneck link; the transfers bound to a link go at one rate, so the link keeps one clock and
// one event for all of them, and a busy link's rate changes in O(1).
//
//   sim::Engine engine(sim::ClusterModel::load("cluster.json"));
//   engine.compute(1, 0.5, {&listener, 7});         // 0.5 s of work on node 1; listener.finished(7)
//   engine.transfer(0, 1, 1e6, {&listener, 8});     // 1 MB from node 0 to node 1
//   while (engine.step()) {}                         // until nothing is left
//
// Several applications can share one engine, each on virtual nodes it acquires.
#pragma once

#include "dps/lane.hpp"
#include "dps/sim/model.hpp"
#include "dps/sim/usage.hpp"

#include <cstdint>
#include <deque>
#include <limits>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dps::sim {

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

class Engine {
 public:
  static constexpr double kNever = std::numeric_limits<double>::infinity();

  explicit Engine(ClusterModel model);

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
  void transfer(VNode from, VNode to, double bytes, Completion done, Lane lane = Lane::ordered);
  // At `time` (not before now).
  void timer(double time, Completion done);

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
  using LinkId = std::uint32_t;  // 2 * node: its outgoing link; 2 * node + 1: its incoming link
  static constexpr std::uint32_t kNone = ~0u;
  // A link with more flows than this finds the flows whose bottleneck may change among those whose
  // other link is as busy (`near`), instead of looking at all of them.
  static constexpr std::uint32_t kNear = 8;
  enum class Kind : std::uint8_t { Compute, Latency, Flow, Timer, Front };

  struct Action {
    Kind kind = Kind::Timer;
    VNode from = 0, to = 0;     // compute: the node (in from); front: the link (in from)
    double remaining = 0;       // compute: work; latency: bytes
    double rate = 0;            // compute: per second
    double updated = 0;         // compute: when remaining was last brought up to date
    double finish = kNever;
    std::uint64_t seq = 0;      // start order: breaks ties between equal finish times
    std::uint32_t heap_at = kNone;
    std::uint32_t at_from = kNone, at_to = kNone;  // compute: in its node's list; flow: in its links' lists
    // A flow goes at the rate of the link it is bound to (its bottleneck), whose clock counts the
    // bytes each of its flows has moved: the flow ends when that clock reads `vfinish`.
    LinkId bound = kNone;
    std::uint32_t bound_at = kNone;  // in that link's heap
    double vfinish = 0;
    double since = 0, vsince = 0;    // when it was bound there, and that link's clock then
    std::uint32_t mark = 0, local = 0;  // max-min: component search
    Completion done;
  };

  // A node pair's connection (fifo networks): the messages waiting behind the one in progress.
  struct Connection {
    bool busy = false;
    struct Message {
      double bytes, sent;  // sent: when it was asked for
      Completion done;
    };
    LaneQueue<Message> waiting;
  };

  struct Node {
    unsigned cores = 1, workers = 0;
    double speed = 1;
    const void* owner = nullptr;
    std::vector<ActionId> running;  // computations
    std::uint32_t sending = 0, receiving = 0;  // transfers in progress, for their CPU cost
  };

  // One direction of a node's connection to the switch.
  struct Link {
    // The flows in their bandwidth phase, by how busy their other link is: [0, near) it has >= kNear
    // flows, [near, multi) 2 to kNear - 1, [multi, size) this flow alone.
    std::vector<ActionId> flows;
    std::uint32_t near = 0, multi = 0;
    std::vector<ActionId> bound;  // heap by (vfinish, seq): the flows going at `rate`
    double rate = 0;              // bytes per second of each bound flow
    double clock = 0, clock_at = 0;  // bytes a bound flow has moved, as of clock_at
    ActionId front = kNone;       // in the event heap when the first bound flow ends
    bool dirty = false;           // its front and usage to bring up to date
    std::uint32_t mark = 0, local = 0;  // max-min: component search
  };

  ActionId make(Kind kind, Completion done);
  void free(ActionId id);
  void set_rate(ActionId id, double rate);
  void settle(Action& a) const noexcept;  // remaining as of now
  void end(ActionId id);
  void reshare_cpu(VNode node);

  // Network.
  static LinkId out_link(VNode v) noexcept { return 2 * v; }
  static LinkId in_link(VNode v) noexcept { return 2 * v + 1; }
  LinkId partner(const Action& flow, LinkId link) const noexcept {
    return link == out_link(flow.from) ? in_link(flow.to) : out_link(flow.from);
  }
  double clock_now(const Link& link) const noexcept { return link.clock + link.rate * (now_ - link.clock_at); }
  void flow_starts(ActionId id);
  void start_transfer(VNode from, VNode to, double bytes, double latency, Completion done);
  void flow_ends(ActionId id);
  void advance(LinkId link);             // its clock to now; its front and usage to redo
  std::uint32_t& position(ActionId flow, LinkId link) noexcept;  // in the link's list
  void list_leave(LinkId link, ActionId id);
  void place(LinkId link, ActionId id, std::uint32_t Link::*end, bool inside);
  void set_near(LinkId link, ActionId id, bool near) { place(link, id, &Link::near, near); }
  void set_multi(LinkId link, ActionId id, bool multi) { place(link, id, &Link::multi, multi); }
  bool alone(LinkId link) const noexcept { return links_[link].flows.size() == 1; }
  // A flow that is alone on one of its links has its bottleneck on the other (on its outgoing link
  // when alone on both): max-min binds it there and never searches it.
  bool leaf(const Action& flow) const noexcept { return alone(out_link(flow.from)) || alone(in_link(flow.to)); }
  LinkId leaf_side(const Action& flow) const noexcept {
    return alone(in_link(flow.to)) ? out_link(flow.from) : in_link(flow.to);
  }
  void recount(LinkId link, std::size_t before);  // its flows' partners see its new count
  void bind(ActionId id, LinkId link);   // the flow goes at this link's rate from now on
  void unbind(ActionId id);              // ... no longer; `remaining` says what it has left
  void rebind(ActionId id, LinkId link);
  void reshare_network(LinkId out, LinkId in, ActionId joined);
  void reshare_equal(LinkId out, LinkId in, ActionId joined);
  void reshare_maxmin(LinkId out, LinkId in);
  void visit(LinkId link);
  void settle_links();                   // fronts and usage of the links that changed
  auto by_vfinish() const noexcept {  // a link's bound flows, first to end first
    return [this](ActionId a, ActionId b) {
      const Action &x = actions_[a], &y = actions_[b];
      return x.vfinish < y.vfinish || (x.vfinish == y.vfinish && x.seq < y.seq);
    };
  }
  auto bound_at() noexcept {
    return [this](ActionId a) -> std::uint32_t& { return actions_[a].bound_at; };
  }

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
  std::vector<Link> links_;
  std::unordered_map<std::uint64_t, Connection> connections_;  // fifo networks: by from << 32 | to
  std::vector<Action> actions_;
  std::vector<ActionId> free_;
  std::vector<ActionId> heap_;
  std::uint64_t seq_ = 0;
  std::uint64_t transfers_ = 0, events_ = 0;
  double bytes_ = 0;
  Usage usage_;
  std::vector<LinkId> dirty_;

  // Max-min scratch space, kept to avoid allocating per event.
  struct Fill {
    LinkId link;
    double capacity;
    std::uint32_t unfrozen;
  };
  std::vector<Fill> fills_;
  std::vector<ActionId> component_;
  std::vector<LinkId> frozen_by_;
  std::vector<std::pair<double, std::uint32_t>> levels_;  // (share, fill) min-heap
  std::uint32_t epoch_ = 0;
};

}  // namespace dps::sim
