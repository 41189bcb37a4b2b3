// Statistics of one simulated application: its counts, the nodes it holds and which of them are
// allocated (host a thread; node 0 always), its phases, and the utilization and dynamic efficiency
// (useful computation / (allocated cores x time), Schaeli, Gerlach & Hersch, "A simulator for adaptive parallel
// applications", §5.4) derived from the engine's timelines.
#pragma once

#include "dps/kernel/envelope.hpp"
#include "dps/sim/engine.hpp"

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace dps::sim {

class Statistics {
 public:
  explicit Statistics(const Engine& engine) : engine_(engine) {}

  std::uint64_t ops = 0, steps = 0, messages = 0, local_messages = 0;
  double bytes = 0;

  void node_joined(NodeId node, VNode v, double now);
  void node_left(NodeId node, double now);
  void threads_changed(NodeId node, int delta, double now);
  void phase(std::string_view name, bool begin, double now);

  double useful(double now) const;     // core-seconds of steps on the nodes while held
  double allocated(double now) const;  // core-seconds of allocated nodes
  double efficiency(double now) const;
  void write(std::ostream& out, double now) const;

 private:
  struct Held {
    VNode v;
    double since;
    double offset;  // the node's step core-seconds when it joined
    bool live;
    int threads = 0;
  };
  struct Phase {
    std::string name;
    double begin, end = -1;
    double useful0, allocated0;
    double useful = 0, allocated = 0;
  };
  void reallocate(double now);
  double steps_of(VNode v, double now) const;

  const Engine& engine_;
  std::map<NodeId, Held> nodes_;  // every node the application held, by id
  double banked_ = 0;             // useful core-seconds of nodes it left
  Timeline allocated_;            // cores of allocated nodes
  std::vector<Phase> phases_;
};

}  // namespace dps::sim
