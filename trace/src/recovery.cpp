#include "dps/trace/recovery.hpp"

#include <algorithm>
#include <map>
#include <string>

namespace dps::trace {

std::vector<Recovery> recoveries(const Trace& trace) {
  std::vector<Recovery> out;
  struct Rebuilt {
    std::size_t recovery = 0;
    std::uint32_t at = 0;  // the node it was rebuilt on
    double restored = 0, replayed = -1;
  };
  std::map<std::uint64_t, std::vector<Rebuilt>> rebuilt;  // by thread, in order
  for (const Lifecycle& c : trace.changes) {
    if (c.kind == Change::NodeFailed) out.push_back({c.node, c.time, c.time, {}, 0, 0, 0});
    if (c.kind == Change::ThreadRestored) {
      const auto failure = std::find_if(out.rbegin(), out.rend(), [&](const Recovery& r) { return r.node == c.node; });
      if (failure == out.rend()) continue;  // a trace cut before the failure
      const auto index = static_cast<std::size_t>(out.rend() - failure - 1);
      out[index].threads.push_back(c.thread);
      rebuilt[c.thread].push_back({index, c.to, c.time, -1});
    }
    if (c.kind == Change::ThreadReplayed) {
      const auto it = rebuilt.find(c.thread);
      if (it == rebuilt.end() || it->second.back().replayed >= 0 || c.time < it->second.back().restored) continue;
      it->second.back().replayed = c.time;
      Recovery& r = out[it->second.back().recovery];
      r.ended = std::max(r.ended, c.time);
      ++r.replayed;
    }
  }
  const auto checkpoint = std::find(trace.names.begin(), trace.names.end(), std::string("checkpoint"));
  const auto checkpoint_id = static_cast<NameId>(checkpoint - trace.names.begin());
  std::map<std::pair<std::size_t, std::uint32_t>, double> work;  // by (recovery, node)
  for (const Step& s : trace.steps) {
    const auto it = rebuilt.find(s.thread);
    if (it == rebuilt.end() || s.operation == checkpoint_id) continue;
    for (const Rebuilt& b : it->second)
      if (s.node == b.at && s.start >= b.restored && b.replayed >= 0 && s.end <= b.replayed) {
        work[{b.recovery, b.at}] += s.end - s.start;
        ++out[b.recovery].steps_again;
      }
  }
  for (const auto& [key, seconds] : work)
    out[key.first].replayed_work = std::max(out[key.first].replayed_work, seconds);
  return out;
}

}  // namespace dps::trace
