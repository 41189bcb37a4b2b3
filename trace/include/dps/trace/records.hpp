// The records of a DPS trace file (docs/trace-format.md), as the reader returns them and the
// writer takes them. Names (collections, operations, phases, info) are interned: records carry ids
// into Trace::names. Times are seconds on the run's clock (node 0's, or the simulated one).
//
//   dps::trace::Trace t = dps::trace::read("run.dpstrace");
//   for (const auto& s : t.steps) std::cout << t.names[s.operation] << " " << s.end - s.start << "\n";
//
// This library depends on the standard library only: the viewer and the tools read traces without
// the runtime.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dps::trace {

using NameId = std::uint32_t;

// One atomic step of an operation on a thread (Schaeli, Gerlach & Hersch, "A simulator for adaptive parallel
// applications", §3).
struct Step {
  std::uint32_t node = 0;
  std::uint64_t thread = 0;  // unique in the application
  NameId collection = 0, operation = 0;
  std::uint64_t call = 0;
  double start = 0, end = 0;
};

struct Transfer {
  std::uint32_t from = 0, to = 0;
  std::uint64_t bytes = 0;
  double start = 0, end = 0;
};

enum class Change : std::uint8_t {
  ThreadAdded,
  ThreadRemoved,
  ThreadMigrated,
  NodeAdded,
  NodeRemoved,
  NodeFailed,
  ThreadRestored,  // rebuilt from its checkpoint after its node (`node`) failed, now on `to`
  ThreadReplayed,  // rebuilt, it handled again all it was sent again (on `node`): its recovery ended
};
constexpr bool of_thread(Change c) noexcept { return c <= Change::ThreadMigrated || c >= Change::ThreadRestored; }
constexpr bool moves(Change c) noexcept { return c == Change::ThreadMigrated || c == Change::ThreadRestored; }
const char* describe(Change c);  // "thread added", ...

struct Lifecycle {
  Change kind = Change::ThreadAdded;
  std::uint64_t thread = 0;  // 0 for node changes
  NameId collection = 0;     // the empty name for node changes
  std::uint32_t node = 0;    // the thread's node (its old node when migrated), or the node itself
  std::uint32_t to = 0;      // the new node of a migrated thread
  double time = 0;
};

// A user phase (e.g. LU iteration k) begins or ends.
struct Phase {
  NameId name = 0;
  bool begin = true;
  double time = 0;
};

// A quantity sampled over time (a cluster's queue length, ...): `value` from `time` until the next
// sample of the same name.
struct Counter {
  NameId name = 0;
  double value = 0;
  double time = 0;
};

// A key and a value about the run ("clock": "simulated", "program": "lu", ...).
struct Info {
  NameId key = 0, value = 0;
};

// A whole trace, in the order the records were written.
struct Trace {
  std::vector<std::string> names;
  std::vector<Step> steps;
  std::vector<Transfer> transfers;
  std::vector<Lifecycle> changes;
  std::vector<Phase> phases;
  std::vector<Counter> counters;
  std::vector<Info> info;
  // Read with Partial::accept from a file a run did not finish: the byte offset and reason it
  // stops at. Empty for a complete file.
  std::string damage;

  std::size_t events() const noexcept {
    return steps.size() + transfers.size() + changes.size() + phases.size() + counters.size();
  }
  // The value of info `key`, or "" when the run did not record it.
  std::string info_value(const std::string& key) const;
};

}  // namespace dps::trace
