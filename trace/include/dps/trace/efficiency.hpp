// Dynamic efficiency: useful computation ÷ (allocated cores × time), Schaeli, Gerlach & Hersch, "A simulator for
// adaptive parallel applications", §5.4. A node is allocated while it hosts a thread of the application, node 0 (which
// coordinates) always, so removing threads from a node releases it (the paper's Fig. 12–13). What a trace says
// (statistics.hpp) and what the simulator predicts (its statistics file) are counted here alike: each tells an
// Allocation which nodes host threads when, and divides the core-seconds its steps computed by the ones allocated.
//
//   dps::trace::Allocation held;
//   held.always(0, 0.0);              // node 0, from the start
//   held.threads(1, +1, 0.0);         // node 1 hosts a thread ...
//   held.threads(1, -1, 5.0);         // ... until 5 s: released
//   held.core_seconds(0.0, 10.0);     // 15 core-seconds allocated in [0, 10] (one core each)
//   dps::trace::efficiency(12.5, 15); // 0.83
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <utility>
#include <vector>

namespace dps::trace {

class Allocation {
 public:
  // A node of the application, allocated only while it hosts a thread (or always()).
  void node(std::uint32_t node) { nodes_.try_emplace(node); }
  // `node` hosts `delta` more (fewer) threads from `time` on. Changes come in time order; a thread
  // leaving a node where none was seen coming (tracing began later) was there from time 0.
  void threads(std::uint32_t node, int delta, double time);
  // `node` is allocated from `time` on, whatever threads it hosts.
  void always(std::uint32_t node, double time);
  // `node` left the application at `time`: allocated no more.
  void leave(std::uint32_t node, double time);
  // Its cores (1 until said), which allocated seconds count.
  void cores(std::uint32_t node, unsigned cores) { nodes_[node].cores = cores; }

  bool knows(std::uint32_t node) const { return nodes_.contains(node); }
  // The nodes allocated at some time, in order.
  std::vector<std::uint32_t> allocated_nodes() const;
  // Seconds `node` was allocated up to `until`; within [from, to].
  double seconds(std::uint32_t node, double until) const;
  double seconds(std::uint32_t node, double from, double to) const;
  // Core-seconds of every node within [from, to].
  double core_seconds(double from, double to) const;
  // Adds each node's allocated core-seconds up to `until` to `bins`, of `width` seconds from `origin`
  // (what comes before the first or after the last goes to it).
  void add_to_bins(std::vector<double>& bins, double origin, double width, double until) const;

 private:
  struct Node {
    unsigned cores = 1;
    int threads = 0;
    double since = 0;                             // when its threads' interval began
    double always = -1;                           // >= 0: allocated from then on
    double left = -1;                             // >= 0: gone since then
    std::vector<std::pair<double, double>> held;  // closed intervals of threads
  };
  // Its intervals, the open one (or always()'s) closed at `until`, to `each(from, to)`.
  template <class F>
  static void intervals(const Node& n, double until, F each);

  std::map<std::uint32_t, Node> nodes_;
};

// Useful ÷ allocated core-seconds: the dynamic efficiency of a run, a phase or a bin (0 when nothing
// was allocated).
inline double efficiency(double useful, double allocated) noexcept { return allocated > 0 ? useful / allocated : 0.0; }
// Per bin, as long as `allocated` (a bin without useful core-seconds has none).
std::vector<double> efficiency_over_time(std::span<const double> useful, std::span<const double> allocated);

}  // namespace dps::trace
