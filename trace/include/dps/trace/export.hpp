// A trace in the formats other tools open:
// - Chrome trace JSON (Perfetto, chrome://tracing): one process per node, one track per thread,
//   transfers as flows between the nodes' network tracks, phases as async slices, and counters for
//   dynamic efficiency and each node's CPU use;
// - Paje (ViTE): containers program > node > thread, operations as states, transfers as links,
//   thread and node changes as events, dynamic efficiency as a variable.
//
//   const auto t = dps::trace::read("run.dpstrace");
//   std::ofstream json("run.json");
//   dps::trace::write_chrome(t, json);
#pragma once

#include "dps/trace/records.hpp"

#include <cstddef>
#include <iosfwd>

namespace dps::trace {

// `bins`: the points of the counters (dynamic efficiency, CPU use) over the run.
void write_chrome(const Trace& trace, std::ostream& out, std::size_t bins = 200);
void write_paje(const Trace& trace, std::ostream& out, std::size_t bins = 200);

}  // namespace dps::trace
