#include "daemon_parts.hpp"

#include <chrono>

namespace dps::cluster {

double wall_clock() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

nlohmann::json workload_entry(const Job& job, const std::vector<JobClass>& classes) {
  nlohmann::json j{{"kind", "application"},    {"submit", job.submit},       {"size", job.size},
                   {"walltime", job.walltime}, {"resizable", job.resizable}, {"class", classes.at(job.klass).name},
                   {"command", job.command}};
  if (job.max_size) j["max_size"] = job.max_size;
  return j;
}
std::optional<Job> job_of(const nlohmann::json& entry, const std::vector<JobClass>& classes, std::size_t nodes,
                          const std::string& where) {
  nlohmann::json workload{{"jobs", nlohmann::json::array({entry})}, {"classes", nlohmann::json::array()}};
  for (const JobClass& k : classes) workload["classes"].push_back({{"name", k.name}, {"priority", k.priority}});
  Workload w = from_json(workload.dump(), where, {.nodes = nodes});
  if (w.jobs.empty()) return std::nullopt;  // wider than the pool: left out
  return std::move(w.jobs.front());
}

std::string joined(const std::vector<std::string>& words, char separator) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : std::string(1, separator)) + w;
  return out;
}

}  // namespace dps::cluster
