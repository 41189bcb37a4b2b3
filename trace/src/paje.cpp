// Paje (the trace format ViTE opens): a header defining each event's fields, then events in time
// order. Containers: the program, a node per node, a thread per (thread, node) it ran on (a
// container cannot move: a migrated thread gets one on each node). Operations are states of thread
// containers, transfers links between nodes, changes events, dynamic efficiency a variable.
#include "dps/trace/export.hpp"
#include "dps/trace/statistics.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

namespace dps::trace {

namespace {

constexpr const char* kHeader = R"(%EventDef PajeDefineContainerType 0
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineStateType 1
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineEventType 2
% Alias string
% Type string
% Name string
%EndEventDef
%EventDef PajeDefineVariableType 3
% Alias string
% Type string
% Name string
% Color color
%EndEventDef
%EventDef PajeDefineLinkType 4
% Alias string
% Type string
% StartContainerType string
% EndContainerType string
% Name string
%EndEventDef
%EventDef PajeDefineEntityValue 5
% Alias string
% Type string
% Name string
% Color color
%EndEventDef
%EventDef PajeCreateContainer 6
% Time date
% Alias string
% Type string
% Container string
% Name string
%EndEventDef
%EventDef PajeDestroyContainer 7
% Time date
% Type string
% Name string
%EndEventDef
%EventDef PajeSetState 8
% Time date
% Type string
% Container string
% Value string
%EndEventDef
%EventDef PajeNewEvent 9
% Time date
% Type string
% Container string
% Value string
%EndEventDef
%EventDef PajeSetVariable 10
% Time date
% Type string
% Container string
% Value double
%EndEventDef
%EventDef PajeStartLink 11
% Time date
% Type string
% Container string
% Value string
% StartContainer string
% Key string
%EndEventDef
%EventDef PajeEndLink 12
% Time date
% Type string
% Container string
% Value string
% EndContainer string
% Key string
%EndEventDef
0 CT_Program 0 "Program"
0 CT_Node CT_Program "Node"
0 CT_Thread CT_Node "Thread"
1 ST_Operation CT_Thread "Operation"
2 ET_Change CT_Thread "Thread change"
2 ET_NodeChange CT_Node "Node change"
3 VT_Efficiency CT_Program "Dynamic efficiency" "0 0 1"
4 LT_Transfer CT_Program CT_Node CT_Node "Transfer"
5 idle ST_Operation "idle" "1 1 1"
)";

// The fields of one line, space-separated.
template <class... Fields>
std::string line(const Fields&... fields) {
  std::string out;
  ((out += fields, out += ' '), ...);
  out.pop_back();
  return out;
}

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) out += c == '"' ? '\'' : c;
  return out + "\"";
}

std::string time(double t) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9f", t);
  return text;
}

// A color for the i-th operation, spread around the hue circle.
std::string color(std::size_t i) {
  const double h = static_cast<double>(i) * 0.618033988749895, f = h - static_cast<int>(h);
  const double r = 0.5 + 0.4 * std::max(-1.0, std::min(1.0, 3 * std::abs(f * 2 - 1) - 1)),
               g = 0.5 + 0.4 * std::max(-1.0, std::min(1.0, 2 - 3 * std::abs(f * 2 - 2.0 / 3))),
               b = 0.5 + 0.4 * std::max(-1.0, std::min(1.0, 2 - 3 * std::abs(f * 2 - 4.0 / 3)));
  char text[48];
  std::snprintf(text, sizeof text, "\"%.2f %.2f %.2f\"", r, g, b);
  return text;
}

}  // namespace

void write_paje(const Trace& t, std::ostream& out, std::size_t bins) {
  const Summary summary = summarize(t, bins);
  out << kHeader;
  std::map<NameId, std::string> values;  // operation -> entity value alias
  for (const Step& s : t.steps)
    if (!values.contains(s.operation)) {
      const std::string alias = "op" + std::to_string(values.size());
      out << "5 " << alias << " ST_Operation " << quoted(t.names[s.operation]) << ' ' << color(values.size()) << '\n';
      values.emplace(s.operation, alias);
    }

  // Events sorted by time; at one time, ends before starts (a step ending as the next begins).
  struct Line {
    double time;
    int order;  // 0 ends, 1 the rest
    std::size_t seq;
    std::string text;
  };
  std::vector<Line> lines;
  auto add = [&](double at, int order, std::string text) { lines.push_back({at, order, lines.size(), std::move(text)}); };
  // Strings are built by appending: GCC 12 warns falsely (-Wrestrict) on "literal" + std::string.
  auto node = [](std::uint32_t n) { return std::string("N").append(std::to_string(n)); };
  auto thread = [](std::uint32_t n, std::uint64_t uid) {
    return std::string("T").append(std::to_string(uid)).append("_").append(std::to_string(n));
  };

  const std::string start = time(summary.start), end = time(summary.end);
  out << "6 " << start << " P CT_Program 0 \"DPS\"\n";
  std::set<std::pair<std::uint32_t, std::uint64_t>> threads;
  for (const NodeSummary& n : summary.nodes)
    out << "6 " << start << ' ' << node(n.node) << " CT_Node P \"node " << n.node << "\"\n";
  for (const Step& s : t.steps)
    if (threads.emplace(s.node, s.thread).second)
      out << "6 " << start << ' ' << thread(s.node, s.thread) << " CT_Thread " << node(s.node) << ' '
          << quoted(t.names[s.collection] + " #" + std::to_string(s.thread)) << '\n';

  for (const Step& s : t.steps) {
    add(s.start, 1, line("8", time(s.start), "ST_Operation", thread(s.node, s.thread), values[s.operation]));
    add(s.end, 0, line("8", time(s.end), "ST_Operation", thread(s.node, s.thread), "idle"));
  }
  for (std::size_t i = 0; i < t.transfers.size(); ++i) {
    const Transfer& x = t.transfers[i];
    const std::string key = std::string("k").append(std::to_string(i)), bytes = quoted(std::to_string(x.bytes).append(" bytes"));
    add(x.start, 1, line("11", time(x.start), "LT_Transfer P", bytes, node(x.from), key));
    add(x.end, 1, line("12", time(x.end), "LT_Transfer P", bytes, node(x.to), key));
  }
  for (const Lifecycle& c : t.changes) {
    std::string name = describe(c.kind);
    if (moves(c.kind)) name.append(" to node ").append(std::to_string(c.to));
    if (of_thread(c.kind) && threads.contains({c.node, c.thread}))
      add(c.time, 1, line("9", time(c.time), "ET_Change", thread(c.node, c.thread), quoted(name)));
    else if (!of_thread(c.kind))
      add(c.time, 1, line("9", time(c.time), "ET_NodeChange", node(c.node), quoted(name)));
  }
  for (std::size_t b = 0; b < summary.efficiency_over_time.size(); ++b) {
    const double at = summary.start + summary.bin * static_cast<double>(b);
    char value[32];
    std::snprintf(value, sizeof value, "%.6f", summary.efficiency_over_time[b]);
    add(at, 1, line("10", time(at), "VT_Efficiency P", value));
  }
  std::sort(lines.begin(), lines.end(), [](const Line& a, const Line& b) {
    return std::tie(a.time, a.order, a.seq) < std::tie(b.time, b.order, b.seq);
  });
  for (const Line& l : lines) out << l.text << '\n';
  for (const auto& [n, uid] : threads) out << "7 " << end << " CT_Thread " << thread(n, uid) << '\n';
  for (const NodeSummary& n : summary.nodes) out << "7 " << end << " CT_Node " << node(n.node) << '\n';
  out << "7 " << end << " CT_Program P\n";
}

}  // namespace dps::trace
