// Engine: the simulated cluster's clock and resources, one event loop on one OS thread. It knows
// nothing of DPS: it runs computations on virtual nodes and transfers between them, and tells a
// Listener when each one ends. Resources are shared as they are in the model (seed 004 §4):
//   - a node's running computations share its cores, minus what its transfers use
//     (cpu_per_send / cpu_per_receive of a core each), at the node's speed;
//   - a transfer waits out the latency, then its bytes flow at a rate set by the sharing of the
//     source's outgoing and the destination's incoming bandwidth (equal shares, or max-min).
// Deterministic: events at equal times run in the order their actions started.
//
//   sim::Engine engine(sim::ClusterModel::load("cluster.json"));
//   engine.compute(1, 0.5, {&listener, 7});         // 0.5 s of work on node 1; listener.finished(7)
//   engine.transfer(0, 1, 1e6, {&listener, 8});     // 1 MB from node 0 to node 1
//   while (engine.step()) {}                         // until nothing is left
//
// Several applications can share one engine, each on virtual nodes it acquires.
#pragma once

#include "dps/sim/model.hpp"
#include "dps/sim/usage.hpp"

#include <cstdint>
#include <limits>
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
  double speed(VNode node) const { return nodes_.at(node).speed; }

  // Virtual nodes belong to at most one application at a time.
  VNode acquire(const void* owner);  // the lowest free node; throws ModelError when none is free
  void release(VNode node);
  const void* owner(VNode node) const { return nodes_.at(node).owner; }

  // `work` seconds of one core at speed 1, on `node`.
  void compute(VNode node, double work, Completion done);
  // `bytes` from one node to another (from != to: same-node transfers are free, no action).
  void transfer(VNode from, VNode to, double bytes, Completion done);
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
  static constexpr std::uint32_t kNone = ~0u;
  enum class Kind : std::uint8_t { Compute, Latency, Flow, Timer };

  struct Action {
    Kind kind = Kind::Timer;
    VNode from = 0, to = 0;     // compute: the node (in from)
    double remaining = 0;       // work, or bytes
    double rate = 0;            // per second
    double updated = 0;         // when remaining was last brought up to date
    double finish = kNever;
    std::uint64_t seq = 0;      // start order: breaks ties between equal finish times
    std::uint32_t heap_at = kNone;
    std::uint32_t at_from = kNone, at_to = kNone;  // positions in the nodes' lists
    std::uint32_t mark = 0, local = 0;             // max-min: component search
    Completion done;
  };

  struct Node {
    unsigned cores = 1;
    double speed = 1;
    const void* owner = nullptr;
    std::vector<ActionId> running;  // computations
    std::vector<ActionId> out, in;  // flows in their bandwidth phase
    std::uint32_t sending = 0, receiving = 0;  // transfers in progress, for their CPU cost
    double out_rate = 0, in_rate = 0;           // bytes per second flowing
    std::uint32_t mark_out = 0, mark_in = 0;    // max-min: component search
    std::uint32_t local_out = 0, local_in = 0;
    bool dirty = false;                         // link usage to record
  };

  ActionId make(Kind kind, Completion done);
  void free(ActionId id);
  void set_rate(ActionId id, double rate);
  void settle(Action& a) const noexcept;  // remaining as of now
  void end(ActionId id);
  void flow_starts(ActionId id);
  void flow_ends(ActionId id);
  void reshare_cpu(VNode node);
  void reshare_network(VNode from, VNode to);
  void reshare_equal(VNode from, VNode to);
  void reshare_maxmin(VNode from, VNode to);
  void touch(VNode node);      // its link usage changed
  void record_links();         // ... record it for every touched node
  void visit(VNode node, bool out);
  static void list_add(std::vector<ActionId>& list, std::uint32_t& at, ActionId id);
  void list_remove(std::vector<ActionId>& list, std::uint32_t at, bool from_side);

  // Indexed binary heap of actions by (finish, seq).
  bool earlier(ActionId a, ActionId b) const noexcept {
    const Action &x = actions_[a], &y = actions_[b];
    return x.finish < y.finish || (x.finish == y.finish && x.seq < y.seq);
  }
  void heap_place(ActionId id);  // insert, or move after its key changed
  void heap_erase(ActionId id);
  void sift_up(std::uint32_t i);
  void sift_down(std::uint32_t i);

  ClusterModel model_;
  double now_ = 0;
  std::vector<Node> nodes_;
  std::vector<Action> actions_;
  std::vector<ActionId> free_;
  std::vector<ActionId> heap_;
  std::uint64_t seq_ = 0;
  std::uint64_t transfers_ = 0, events_ = 0;
  double bytes_ = 0;
  Usage usage_;

  // Max-min scratch space, kept to avoid allocating per event.
  struct Link {
    VNode node;
    bool out;
    double capacity;
    std::uint32_t unfrozen;
  };
  std::vector<Link> links_;
  std::vector<ActionId> component_;
  std::vector<double> rates_;
  std::vector<char> frozen_;
  std::vector<std::pair<double, std::uint32_t>> levels_;  // (share, link) min-heap
  std::uint32_t epoch_ = 0;
  std::vector<VNode> touched_;
};

}  // namespace dps::sim
