// What the golden files in tests/golden hold: the exports of one small hand-built trace. Shared by
// trace_export_test, which compares, and golden_writer, which rewrites the files (README there).
#pragma once

#include <dps/trace/export.hpp>

#include <array>
#include <sstream>
#include <string>

namespace dps::trace::golden {

// Two nodes; a worker on node 1 migrates to node 2 mid-run; one transfer each way; a phase.
inline Trace small() {
  Trace t;
  t.names = {"master", "workers", "split", "leaf", "merge", "iteration 1", "backend", "sim", "cores.0", "1"};
  t.info = {{6, 7}, {8, 9}};
  t.changes = {{Change::ThreadAdded, 1, 0, 0, 0, 0.0},
               {Change::ThreadAdded, 2, 1, 1, 0, 0.0},
               {Change::ThreadMigrated, 2, 1, 1, 2, 0.004}};
  t.phases = {{5, true, 0.0}, {5, false, 0.008}};
  t.steps = {{0, 1, 0, 2, 1, 0.0, 0.001},
             {1, 2, 1, 3, 1, 0.0015, 0.0035},
             {2, 2, 1, 3, 1, 0.005, 0.007},
             {0, 1, 0, 4, 1, 0.0072, 0.008}};
  t.transfers = {{0, 1, 16, 0.001, 0.0015}, {2, 0, 24, 0.007, 0.0072}};
  return t;
}

constexpr std::size_t kBins = 4;  // of 2 ms over the trace's 8 ms

inline std::string chrome() {
  std::ostringstream out;
  write_chrome(small(), out, kBins);
  return out.str();
}

inline std::string paje() {
  std::ostringstream out;
  write_paje(small(), out, kBins);
  return out.str();
}

struct File {
  const char* name;  // in tests/golden
  std::string (*produce)();
};
inline constexpr std::array<File, 2> kFiles{{{"small.chrome.json", chrome}, {"small.paje", paje}}};

}  // namespace dps::trace::golden
