// What a trace says of the recoveries of a fault-tolerant run (docs/fault-tolerance.md): for each
// node that failed, the threads rebuilt for it, when the last of them had handled again all it was
// sent again, and the work they did again meanwhile.
//
//   for (const dps::trace::Recovery& r : dps::trace::recoveries(dps::trace::read("run.dpstrace")))
//     std::printf("node %u: %zu threads, %.3f s\n", r.node, r.threads.size(), r.seconds());
#pragma once

#include "dps/trace/records.hpp"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dps::trace {

struct Recovery {
  std::uint32_t node = 0;              // the node that failed
  double failed = 0;                   // when it was declared failed
  double ended = 0;                    // when the last thread rebuilt for it replayed (`failed` if none did)
  std::vector<std::uint64_t> threads;  // rebuilt for it, in the order they were
  std::size_t replayed = 0;            // of them, those whose replay ended
  // The steps its rebuilt threads ran between their restoration and the end of their replay
  // (checkpoints aside), summed per node they were rebuilt on: the largest such sum, the work
  // done again on the critical path.
  double replayed_work = 0;
  std::size_t steps_again = 0;  // those steps, on every node: the objects handled again, one step each for leaves
  double seconds() const noexcept { return ended - failed; }
};

// In the order the nodes failed.
std::vector<Recovery> recoveries(const Trace& trace);

}  // namespace dps::trace
