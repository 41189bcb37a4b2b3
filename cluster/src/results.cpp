#include "dps/cluster/results.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace dps::cluster {

double JobRecord::node_seconds() const noexcept {
  double total = 0;
  for (std::size_t k = 0; k < sizes.size(); ++k) {
    const double until = k + 1 < sizes.size() ? sizes[k + 1].first : end;
    total += static_cast<double>(sizes[k].second) * (until - sizes[k].first);
  }
  return total;
}

std::string Results::json() const {
  std::ostringstream out;
  char buffer[512];
  std::snprintf(buffer, sizeof buffer,
                "{\"scheduler\": \"%s\", \"nodes\": %zu, \"jobs\": %zu, \"skipped\": %zu, \"unusable\": %zu, "
                "\"killed\": %zu, \"resizes\": %zu, \"makespan_s\": %.6g, \"utilization\": %.4f, \"mean_wait_s\": %.6g, "
                "\"mean_completion_s\": %.6g, \"mean_execution_s\": %.6g, \"mean_bounded_slowdown\": %.6g, \"tau_s\": %g",
                scheduler.c_str(), nodes, jobs.size(), skipped, unusable, killed, resizes, makespan_s, utilization,
                mean_wait_s, mean_completion_s, mean_execution_s, mean_bounded_slowdown, tau_s);
  out << buffer << ", \"classes\": {";
  for (std::size_t k = 0; k < classes.size(); ++k) {
    const ClassFigures& c = classes[k];
    std::snprintf(buffer, sizeof buffer,
                  "%s\"%s\": {\"jobs\": %zu, \"mean_wait_s\": %.6g, \"mean_completion_s\": %.6g, \"mean_execution_s\": %.6g}",
                  k ? ", " : "", c.name.c_str(), c.jobs, c.mean_wait_s, c.mean_completion_s, c.mean_execution_s);
    out << buffer;
  }
  out << "}";
  if (on_mesh) {
    std::snprintf(buffer, sizeof buffer,
                  ", \"dispersal\": {\"average_distance\": %.4f, \"nodes_affected\": %.3f, \"links_affected\": %.3f, "
                  "\"max_contention\": %.3f}",
                  mean_average_distance, mean_nodes_affected, mean_links_affected, mean_max_contention);
    out << buffer;
  }
  if (io_column) {
    std::snprintf(buffer, sizeof buffer, ", \"io\": {\"balance_factor\": %.3f, \"max_contention\": %.2f}", balance_factor,
                  mean_io_contention);
    out << buffer;
  }
  const double rate = wall_s > 0 ? static_cast<double>(jobs.size()) / wall_s : 0;
  std::snprintf(buffer, sizeof buffer, ", \"events\": %llu, \"wall_s\": %.4f, \"jobs_per_s\": %.0f}",
                static_cast<unsigned long long>(events), wall_s, rate);
  out << buffer;
  return out.str();
}

std::string Results::jobs_csv() const {
  std::ostringstream out;
  out << "id,kind,class,submit,size,start,end,wait,execution,killed,"
      << (on_mesh ? "average_distance,nodes_affected,links_affected,max_contention,hotspot," : "") << (io_column ? "balance," : "")
      << "sizes\n";
  char buffer[256];
  for (const JobRecord& j : jobs) {
    std::snprintf(buffer, sizeof buffer, "%llu,%s,%s,%.6f,%zu,%.6f,%.6f,%.6f,%.6f,%d,", static_cast<unsigned long long>(j.job->id),
                  describe(j.job->kind), j.job->klass < class_names.size() ? class_names[j.job->klass].c_str() : "?", j.job->submit, j.job->size, j.start, j.end,
                  j.wait(), j.execution(), j.killed ? 1 : 0);
    out << buffer;
    if (on_mesh) {  // the hotspot as its router and direction: 35E is the link east out of router 35
      std::snprintf(buffer, sizeof buffer, "%.4f,%zu,%zu,%u,%u%c,", j.placed.average_distance, j.placed.nodes_affected,
                    j.placed.links_affected, j.contention.max, j.contention.hotspot / 4, "EWNS"[j.contention.hotspot % 4]);
      out << buffer;
    }
    if (io_column) out << j.balance << ",";
    for (std::size_t k = 0; k < j.sizes.size(); ++k) out << (k ? " " : "") << j.sizes[k].first << ":" << j.sizes[k].second;
    out << "\n";
  }
  return out.str();
}

void Results::write_jobs_csv(const std::string& path) const {
  std::ofstream out(path);
  out << jobs_csv();
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

}  // namespace dps::cluster
