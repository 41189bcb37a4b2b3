// Chrome trace JSON (the Trace Event Format that Perfetto and chrome://tracing open): times in
// microseconds; a process per node; a track per thread (tid = thread uid) and one for the network
// (tid 0: uids start at 1); a flow per transfer from the sender's network track to the receiver's.
#include "dps/trace/export.hpp"
#include "dps/trace/statistics.hpp"

#include "dps/trace/json.hpp"

#include <map>
#include <ostream>
#include <set>
#include <vector>

namespace dps::trace {

namespace {

std::string us(double seconds) { return json::number(seconds * 1e6); }

}  // namespace

void write_chrome(const Trace& t, std::ostream& out, std::size_t bins) {
  const Summary summary = summarize(t, bins);
  bool first = true;
  auto event = [&](const std::string& fields) {
    out << (first ? "\n" : ",\n") << '{' << fields << '}';
    first = false;
  };
  auto track = [](std::uint32_t node, std::uint64_t tid) {
    return "\"pid\": " + std::to_string(node) + ", \"tid\": " + std::to_string(tid);
  };
  out << "{\"displayTimeUnit\": \"ms\", \"otherData\": {";
  for (std::size_t i = 0; i < t.info.size(); ++i)
    out << (i ? ", " : "") << json::quoted(t.names[t.info[i].key]) << ": " << json::quoted(t.names[t.info[i].value]);
  out << "},\n\"traceEvents\": [";

  // Names of processes and tracks; a thread's collection is the one it ran steps for.
  std::set<std::uint32_t> nodes;
  std::map<std::pair<std::uint32_t, std::uint64_t>, NameId> threads;
  for (const NodeSummary& n : summary.nodes) nodes.insert(n.node);
  for (const Step& s : t.steps) threads.try_emplace({s.node, s.thread}, s.collection);
  for (std::uint32_t node : nodes) {
    event("\"ph\": \"M\", \"name\": \"process_name\", " + track(node, 0) + ", \"args\": {\"name\": \"node " +
          std::to_string(node) + "\"}");
    event("\"ph\": \"M\", \"name\": \"process_sort_index\", " + track(node, 0) + ", \"args\": {\"sort_index\": " +
          std::to_string(node) + "}");
    event("\"ph\": \"M\", \"name\": \"thread_name\", " + track(node, 0) + ", \"args\": {\"name\": \"network\"}");
  }
  for (const auto& [where, collection] : threads)
    event("\"ph\": \"M\", \"name\": \"thread_name\", " + track(where.first, where.second) + ", \"args\": {\"name\": " +
          json::quoted(t.names[collection] + " #" + std::to_string(where.second)) + "}");

  for (const Step& s : t.steps)
    event("\"ph\": \"X\", " + track(s.node, s.thread) + ", \"name\": " + json::quoted(t.names[s.operation]) +
          ", \"cat\": " + json::quoted(t.names[s.collection]) + ", \"ts\": " + us(s.start) + ", \"dur\": " +
          us(s.end - s.start) + ", \"args\": {\"call\": " + std::to_string(s.call) + "}");
  for (std::size_t i = 0; i < t.transfers.size(); ++i) {
    const Transfer& x = t.transfers[i];
    const std::string bytes = std::to_string(x.bytes), id = std::to_string(i + 1);
    event("\"ph\": \"X\", " + track(x.from, 0) + ", \"name\": \"send\", \"cat\": \"transfer\", \"ts\": " + us(x.start) +
          ", \"dur\": " + us(x.end - x.start) + ", \"args\": {\"bytes\": " + bytes + ", \"to\": " +
          std::to_string(x.to) + "}");
    event("\"ph\": \"X\", " + track(x.to, 0) + ", \"name\": \"receive\", \"cat\": \"transfer\", \"ts\": " +
          us(x.start) + ", \"dur\": " + us(x.end - x.start) + ", \"args\": {\"bytes\": " + bytes + ", \"from\": " +
          std::to_string(x.from) + "}");
    event("\"ph\": \"s\", " + track(x.from, 0) + ", \"name\": \"transfer\", \"cat\": \"transfer\", \"id\": " + id +
          ", \"ts\": " + us(x.start));
    event("\"ph\": \"f\", \"bp\": \"e\", " + track(x.to, 0) + ", \"name\": \"transfer\", \"cat\": \"transfer\", \"id\": " +
          id + ", \"ts\": " + us(x.start));
  }
  for (const Lifecycle& c : t.changes) {
    const bool thread_change = of_thread(c.kind);
    std::string name = describe(c.kind);
    if (moves(c.kind)) name += " to node " + std::to_string(c.to);
    event("\"ph\": \"i\", \"s\": \"" + std::string(thread_change ? "t" : "p") + "\", " +
          track(c.node, thread_change ? c.thread : 0) + ", \"name\": " + json::quoted(name) + ", \"ts\": " + us(c.time));
  }
  // Phases as async slices on node 0.
  for (std::size_t i = 0; i < summary.phases.size(); ++i) {
    const PhaseSummary& p = summary.phases[i];
    const std::string fields = track(0, 0) + ", \"cat\": \"phase\", \"id\": " + std::to_string(i + 1) +
                               ", \"name\": " + json::quoted(p.name) + ", \"ts\": ";
    event("\"ph\": \"b\", " + fields + us(p.begin));
    event("\"ph\": \"e\", " + fields + us(p.end));
  }
  for (std::size_t b = 0; b < summary.efficiency_over_time.size(); ++b) {
    const std::string ts = us(summary.start + summary.bin * static_cast<double>(b));
    event("\"ph\": \"C\", " + track(0, 0) + ", \"name\": \"dynamic efficiency\", \"ts\": " + ts +
          ", \"args\": {\"efficiency\": " + json::number(summary.efficiency_over_time[b]) + "}");
    for (const NodeSummary& n : summary.nodes)
      event("\"ph\": \"C\", " + track(n.node, 0) + ", \"name\": \"cpu\", \"ts\": " + ts + ", \"args\": {\"cpu\": " +
            json::number(n.cpu_over_time[b]) + "}");
  }
  for (const Counter& c : t.counters)  // the trace's own counters, sample by sample
    event("\"ph\": \"C\", " + track(0, 0) + ", \"name\": " + json::quoted(t.names[c.name]) + ", \"ts\": " + us(c.time) +
          ", \"args\": {\"value\": " + json::number(c.value) + "}");
  out << "\n]}\n";
}

}  // namespace dps::trace
