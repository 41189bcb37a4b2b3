// What a trace says about its run: duration, each node's CPU and network use over time, and the
// dynamic efficiency — useful computation ÷ (allocated cores × time), Schaeli, Gerlach & Hersch, "A simulator for
// adaptive parallel applications", §5.4 — over the run, per user phase and over time. A node is allocated while it
// hosts a thread of the application (node 0 always), so removing threads from a node releases it, as in the paper's
// Fig. 12–13 (efficiency.hpp counts it, for the simulator's statistics too).
//
//   const dps::trace::Trace t = dps::trace::read("run.dpstrace");
//   const dps::trace::Summary s = dps::trace::summarize(t);
//   std::printf("%.3f s, efficiency %.2f\n", s.duration, s.efficiency);
#pragma once

#include "dps/trace/records.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace dps::trace {

struct NodeSummary {
  std::uint32_t node = 0;
  unsigned cores = 1;
  bool cores_known = false;  // from the trace; otherwise the most steps the node ran at once
  double busy = 0;           // core-seconds of steps: while k steps run, min(k, cores) cores are busy
  double allocated = 0;      // seconds the node was allocated
  double cpu = 0;            // busy ÷ (cores × duration)
  std::uint64_t bytes_out = 0, bytes_in = 0;
  std::vector<double> cpu_over_time;        // per bin: busy core-seconds ÷ (cores × bin width)
  std::vector<double> out_over_time, in_over_time;  // per bin: bytes per second
};

struct PhaseSummary {
  std::string name;
  double begin = 0, end = 0;
  double useful = 0, allocated = 0;  // core-seconds
  double efficiency = 0;
};

// A counter of the trace (its samples held until the next), per bin its time-weighted mean.
struct CounterSummary {
  std::string name;
  double max = 0, mean = 0;  // over the run, from its first sample
  std::vector<double> over_time;
};

struct Summary {
  double start = 0, end = 0, duration = 0;  // from the first event to the last
  std::uint64_t steps = 0, transfers = 0, bytes = 0;
  double useful = 0, allocated = 0, efficiency = 0;  // core-seconds, and their ratio
  double bin = 0;                                    // seconds per bin of the series
  std::vector<double> efficiency_over_time;
  std::vector<NodeSummary> nodes;                    // by node number
  std::vector<PhaseSummary> phases;                  // in the order they began
  std::vector<CounterSummary> counters;              // in the order their names first appear
};

// The run from its first event to its last ({0, 0} without events), as summarize() takes it.
struct RunSpan {
  double start = 0, end = 0;
};
RunSpan run_span(const Trace& trace);

// A user phase from its begin to the next end of the same name (repeated or nested phases pair as a
// stack). One never ended ends at `run_end`; an end without its begin (tracing began inside the
// phase) is skipped. Paired in time order (records from other nodes come in batches); in the order
// the phases began.
struct PhaseSpan {
  NameId name = 0;
  double begin = 0, end = 0;
};
std::vector<PhaseSpan> phase_spans(const Trace& trace, double run_end);

// `bins` > 0: the length of every series.
Summary summarize(const Trace& trace, std::size_t bins = 200);

// The summary as one JSON object (what `dps-trace summary` prints last).
std::string to_json(const Summary& summary);

}  // namespace dps::trace
