// Statistics of a trace: allocation from the lifecycle records, busy time from the steps, bytes
// from the transfers, integrated over the run, its phases and equal bins.
#include "dps/trace/statistics.hpp"

#include "bins.hpp"
#include "dps/trace/efficiency.hpp"
#include "dps/trace/json.hpp"

#include <algorithm>
#include <charconv>
#include <map>
#include <stdexcept>

namespace dps::trace {

namespace {

// Which nodes are allocated when, from the lifecycle records (Allocation's rule); node 0 coordinates
// throughout, and a node that ran steps without a recorded thread (tracing began after its threads
// were made) is taken as allocated throughout.
Allocation allocation(const Trace& t, double start) {
  std::vector<const Lifecycle*> changes;
  for (const Lifecycle& c : t.changes) changes.push_back(&c);
  std::stable_sort(changes.begin(), changes.end(), [](auto* a, auto* b) { return a->time < b->time; });
  Allocation held;
  for (const Lifecycle* c : changes) {
    switch (c->kind) {
      case Change::ThreadAdded: held.threads(c->node, +1, c->time); break;
      case Change::ThreadRemoved: held.threads(c->node, -1, c->time); break;
      case Change::ThreadMigrated:
      case Change::ThreadRestored: held.threads(c->node, -1, c->time), held.threads(c->to, +1, c->time); break;
      case Change::NodeAdded:
      case Change::NodeRemoved:
      case Change::NodeFailed: held.node(c->node); break;
      case Change::ThreadReplayed: break;
    }
  }
  held.always(0, start);
  for (const Step& s : t.steps)
    if (!held.knows(s.node)) held.always(s.node, start);
  return held;
}

// The most steps a node ran at the same time.
// Edges sorted: at equal times an end (-1) comes before a start (+1).
unsigned widest(const std::vector<std::pair<double, int>>& edges) {
  int running = 0, most = 1;
  for (const auto& [time, delta] : edges) most = std::max(most, running += delta);
  return static_cast<unsigned>(most);
}

// A stretch of time during which a node had `cores` of its cores busy.
struct Busy {
  double from, to, cores;
};

// The busy stretches of a node from its steps' sorted edges: as many cores as steps ran, at most
// all of them. Steps sharing a core (a simulated node's sharing model, or an oversubscribed real
// host) each last longer, but the node is no busier than its cores.
std::vector<Busy> busy_stretches(const std::vector<std::pair<double, int>>& edges, unsigned cores) {
  std::vector<Busy> out;
  int running = 0;
  for (std::size_t i = 0; i < edges.size(); ++i) {
    running += edges[i].second;
    if (i + 1 < edges.size() && running > 0 && edges[i + 1].first > edges[i].first)
      out.push_back({edges[i].first, edges[i + 1].first, static_cast<double>(std::min<unsigned>(running, cores))});
  }
  return out;
}

}  // namespace

RunSpan run_span(const Trace& t) {
  double first = 1e300, last = -1e300;
  auto see = [&](double a, double b) { first = std::min(first, a), last = std::max(last, b); };
  for (const Step& x : t.steps) see(x.start, x.end);
  for (const Transfer& x : t.transfers) see(x.start, x.end);
  for (const Lifecycle& x : t.changes) see(x.time, x.time);
  for (const Phase& x : t.phases) see(x.time, x.time);
  for (const Counter& x : t.counters) see(x.time, x.time);
  if (first > last) return {};  // no events
  return {first, last};
}

std::vector<PhaseSpan> phase_spans(const Trace& t, double run_end) {
  std::vector<PhaseSpan> spans;
  std::map<NameId, std::vector<std::size_t>> open;  // name -> its unended spans
  // In time order: phases marked on other nodes reach the file in batches, an end maybe before its
  // begin; at equal times a begin comes first.
  std::vector<Phase> phases(t.phases);
  std::stable_sort(phases.begin(), phases.end(),
                   [](const Phase& a, const Phase& b) { return a.time < b.time || (a.time == b.time && a.begin > b.begin); });
  for (const Phase& p : phases) {
    if (p.begin) {
      open[p.name].push_back(spans.size());
      spans.push_back({p.name, p.time, run_end});
    } else if (auto& stack = open[p.name]; !stack.empty()) {
      spans[stack.back()].end = p.time;
      stack.pop_back();
    }
  }
  return spans;
}

// Each counter as a step function from its first sample to the run's end, spread over the bins.
void summarize_counters(const Trace& t, Summary& s, std::size_t bins) {
  std::map<NameId, std::vector<const Counter*>> by_name;
  std::vector<NameId> order;
  for (const Counter& c : t.counters) {
    auto& samples = by_name[c.name];
    if (samples.empty()) order.push_back(c.name);
    samples.push_back(&c);
  }
  for (const NameId name : order) {
    auto& samples = by_name[name];
    std::stable_sort(samples.begin(), samples.end(), [](auto* a, auto* b) { return a->time < b->time; });
    CounterSummary c{t.names[name], -HUGE_VAL, 0, std::vector<double>(bins, 0.0)};
    double weighted = 0;
    for (std::size_t k = 0; k < samples.size(); ++k) {
      const double from = samples[k]->time, to = k + 1 < samples.size() ? samples[k + 1]->time : s.end;
      c.max = std::max(c.max, samples[k]->value);
      weighted += samples[k]->value * (to - from);
      spread(c.over_time, s.start, s.bin, from, to, samples[k]->value * (to - from) / s.bin);
    }
    const double span = s.end - samples.front()->time;
    c.mean = span > 0 ? weighted / span : samples.back()->value;
    s.counters.push_back(std::move(c));
  }
}

Summary summarize(const Trace& t, std::size_t bins) {
  if (bins == 0) throw std::invalid_argument("a summary needs at least one bin");
  Summary s;
  s.steps = t.steps.size();
  s.transfers = t.transfers.size();
  const RunSpan run = run_span(t);
  const double first = run.start, last = run.end;
  s.start = first;
  s.end = last;
  s.duration = last - first;
  s.bin = s.duration > 0 ? s.duration / static_cast<double>(bins) : 1.0;

  Allocation held = allocation(t, first);
  std::map<std::uint32_t, NodeSummary> nodes;
  std::map<std::uint32_t, std::vector<std::pair<double, int>>> edges;
  auto node = [&](std::uint32_t id) -> NodeSummary& {
    NodeSummary& n = nodes[id];
    if (n.cpu_over_time.empty()) {
      n.node = id;
      n.cpu_over_time.assign(bins, 0.0);
      n.out_over_time.assign(bins, 0.0);
      n.in_over_time.assign(bins, 0.0);
    }
    return n;
  };
  for (const std::uint32_t id : held.allocated_nodes()) node(id);
  for (const Step& x : t.steps) {
    node(x.node);
    edges[x.node].emplace_back(x.start, +1);
    edges[x.node].emplace_back(x.end, -1);
  }
  for (const Transfer& x : t.transfers) {
    s.bytes += x.bytes;
    node(x.from).bytes_out += x.bytes;
    node(x.to).bytes_in += x.bytes;
    spread(node(x.from).out_over_time, first, s.bin, x.start, x.end, static_cast<double>(x.bytes) / s.bin);
    spread(node(x.to).in_over_time, first, s.bin, x.start, x.end, static_cast<double>(x.bytes) / s.bin);
  }

  std::vector<double> useful(bins, 0.0), allocated(bins, 0.0);
  std::map<std::uint32_t, std::vector<Busy>> busy;
  for (auto& [id, n] : nodes) {
    std::sort(edges[id].begin(), edges[id].end());
    const std::string text = t.info_value("cores." + std::to_string(id));
    unsigned cores = 0;
    std::from_chars(text.data(), text.data() + text.size(), cores);
    n.cores_known = cores > 0;
    n.cores = n.cores_known ? cores : widest(edges[id]);
    busy[id] = busy_stretches(edges[id], n.cores);
    for (const Busy& x : busy[id]) {
      n.busy += x.cores * (x.to - x.from);
      spread(n.cpu_over_time, first, s.bin, x.from, x.to, x.cores * (x.to - x.from));
    }
    for (std::size_t b = 0; b < bins; ++b) {
      useful[b] += n.cpu_over_time[b];
      n.cpu_over_time[b] /= n.cores * s.bin;
    }
    held.cores(id, n.cores);
    n.allocated = held.seconds(id, last);
    n.cpu = s.duration > 0 ? n.busy / (n.cores * s.duration) : 0.0;
    s.useful += n.busy;
    s.allocated += n.cores * n.allocated;
    s.nodes.push_back(std::move(n));
  }
  held.add_to_bins(allocated, first, s.bin, last);
  s.efficiency = efficiency(s.useful, s.allocated);
  s.efficiency_over_time = efficiency_over_time(useful, allocated);

  summarize_counters(t, s, bins);
  for (const PhaseSpan& span : phase_spans(t, last)) s.phases.push_back({t.names[span.name], span.begin, span.end});
  for (PhaseSummary& p : s.phases) {
    for (const auto& [id, stretches] : busy)
      for (const Busy& x : stretches) p.useful += x.cores * overlap(x.from, x.to, p.begin, p.end);
    p.allocated = held.core_seconds(p.begin, p.end);
    p.efficiency = efficiency(p.useful, p.allocated);
  }
  return s;
}

std::string to_json(const Summary& s) {
  using json::number;
  std::string out = "{\"duration_s\": " + number(s.duration) + ", \"start_s\": " + number(s.start) +
                    ", \"steps\": " + std::to_string(s.steps) + ", \"transfers\": " + std::to_string(s.transfers) +
                    ", \"bytes\": " + std::to_string(s.bytes) + ", \"efficiency\": " + number(s.efficiency) +
                    ", \"nodes\": [";
  for (std::size_t i = 0; i < s.nodes.size(); ++i) {
    const NodeSummary& n = s.nodes[i];
    out += std::string(i ? ", " : "") + "{\"node\": " + std::to_string(n.node) + ", \"cores\": " +
           std::to_string(n.cores) + ", \"cpu\": " + number(n.cpu) + ", \"busy_s\": " + number(n.busy) +
           ", \"allocated_s\": " + number(n.allocated) + ", \"bytes_out\": " + std::to_string(n.bytes_out) +
           ", \"bytes_in\": " + std::to_string(n.bytes_in) + "}";
  }
  out += "], \"phases\": [";
  for (std::size_t i = 0; i < s.phases.size(); ++i) {
    const PhaseSummary& p = s.phases[i];
    out += std::string(i ? ", " : "") + "{\"name\": " + json::quoted(p.name) + ", \"begin_s\": " + number(p.begin) +
           ", \"end_s\": " + number(p.end) + ", \"efficiency\": " + number(p.efficiency) + "}";
  }
  out += "]";
  if (!s.counters.empty()) {  // only in traces that have them
    out += ", \"counters\": [";
    for (std::size_t i = 0; i < s.counters.size(); ++i)
      out += std::string(i ? ", " : "") + "{\"name\": " + json::quoted(s.counters[i].name) + ", \"max\": " +
             number(s.counters[i].max) + ", \"mean\": " + number(s.counters[i].mean) + "}";
    out += "]";
  }
  return out + "}";
}

}  // namespace dps::trace
