// Statistics of one simulated application: its counts, the nodes it holds, its phases, and the
// utilization and dynamic efficiency derived from the engine's timelines. The efficiency is counted as
// for a trace (dps/trace/efficiency.hpp): the nodes allocated (hosting a thread; node 0 always), and
// the core-seconds the steps on them computed.
#pragma once

#include "dps/kernel/envelope.hpp"
#include "dps/sim/engine.hpp"
#include "dps/trace/efficiency.hpp"

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
    double offset;  // the node's step core-seconds when it joined
    bool live;
  };
  struct Phase {
    std::string name;
    double begin, end = -1;
    double useful0;  // useful core-seconds when it began
    double useful = 0;
  };
  double steps_of(VNode v, double now) const;

  const Engine& engine_;
  std::map<NodeId, Held> nodes_;  // every node the application held, by id
  double banked_ = 0;             // useful core-seconds of nodes it left
  trace::Allocation allocation_;  // which of them were allocated when
  std::vector<Phase> phases_;
};

}  // namespace dps::sim
