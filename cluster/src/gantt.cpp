#include "dps/cluster/gantt.hpp"

#include <dps/trace/writer.hpp>

#include <algorithm>
#include <stdexcept>

namespace dps::cluster {

void write_trace(const Gantt& gantt, const Results& results, const std::string& path, const TraceHeader& header) {
  if (gantt.samples.empty() && !results.jobs.empty())
    throw std::logic_error("a cluster trace needs the run to keep its Gantt chart (SimulationOptions::gantt)");
  trace::TraceWriter out(path);
  out.info("clock", header.simulated ? "simulated" : "real");
  out.info("backend", "cluster");
  out.info("program", header.program);
  out.info("scheduler", results.scheduler);
  out.info("nodes", std::to_string(results.nodes));
  const trace::NameId node = out.name("node"), grow = out.name("grow"), shrink = out.name("shrink");
  std::vector<Segment> segments = gantt.segments;
  std::sort(segments.begin(), segments.end(), [](const Segment& a, const Segment& b) {
    return a.start < b.start || (a.start == b.start && a.node < b.node);
  });
  for (const Segment& s : segments)
    out.write(trace::Step{.node = s.node, .thread = s.node, .collection = node, .operation = out.name("job " + std::to_string(s.job->id)),
                          .call = s.job->id, .start = s.start, .end = s.end});
  for (const Gantt::Resize& r : gantt.resizes)
    out.write(trace::Step{.node = r.node, .thread = r.node, .collection = node, .operation = r.grew ? grow : shrink,
                          .call = r.job->id, .start = r.time, .end = r.time});
  const trace::NameId utilization = out.name("utilization"), queued = out.name("queued jobs");
  for (const Gantt::Sample& s : gantt.samples) {
    out.write(trace::Counter{.name = utilization, .value = static_cast<double>(s.busy) / static_cast<double>(results.nodes), .time = s.time});
    out.write(trace::Counter{.name = queued, .value = static_cast<double>(s.queued), .time = s.time});
  }
  out.close();
}

}  // namespace dps::cluster
