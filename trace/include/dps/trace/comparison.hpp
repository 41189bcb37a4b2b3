// Where a simulated run's prediction differs from the real run of the same application: the run's
// duration, and per kind of operation, per phase and per pair of nodes the real and simulated
// counts, durations and bytes side by side, largest differences first.
//
//   const dps::trace::Trace real = dps::trace::read("lu-real.dpstrace");
//   const dps::trace::Trace sim = dps::trace::read("lu-sim.dpstrace");
//   const dps::trace::Comparison c = dps::trace::compare(real, sim);
//   for (const auto& op : c.operations)
//     std::printf("%s: %+.6f s (%+.1f %%)\n", op.name.c_str(), op.total.difference(), 100 * op.total.relative());
#pragma once

#include "dps/trace/records.hpp"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace dps::trace {

// One quantity in the real run and in the simulated one.
struct Versus {
  double real = 0, simulated = 0;

  double difference() const noexcept { return simulated - real; }
  // The difference ÷ real: 0 when both are 0, NaN when only the real one is (JSON null).
  double relative() const noexcept {
    if (real != 0) return difference() / real;
    return simulated == 0 ? 0.0 : std::numeric_limits<double>::quiet_NaN();
  }
};

// A kind of operation ("workers/Factor": collection/operation) and its steps, or a phase name and
// its spans (phase_spans). Missing from one run: zeros on that side.
struct DurationRow {
  std::string name;
  Versus count;        // steps or spans
  Versus total, mean;  // seconds
};

// The transfers from one node to another; `total` is their network time, real (from the first byte
// sent to the last byte read) against simulated.
struct PairRow {
  std::uint32_t from = 0, to = 0;
  Versus count, bytes;
  Versus total;  // seconds
};

// Each list ordered by the largest absolute difference first: of `total` for operations and phases;
// of `bytes`, then of `total`, for pairs. Equal differences in name (or node) order.
struct Comparison {
  Versus duration;  // seconds from the first event to the last (run_span)
  std::vector<DurationRow> operations;
  std::vector<DurationRow> phases;
  std::vector<PairRow> pairs;
};

Comparison compare(const Trace& real, const Trace& simulated);

// The comparison as one JSON object, every row (what `dps-trace compare` prints last).
std::string to_json(const Comparison& comparison);

}  // namespace dps::trace
