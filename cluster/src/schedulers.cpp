#include "dps/cluster/schedulers.hpp"

#include "dps/cluster/backfilling.hpp"
#include "dps/cluster/reshape.hpp"
#include "dps/cluster/scheduler_plugin.hpp"

#include <algorithm>
#include <stdexcept>

namespace dps::cluster {

const std::vector<std::string>& scheduler_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v{"fcfs", "easy", "conservative"};
    for (const std::string& s : ReshapeScheduler::scenarios()) v.push_back(s);
    return v;
  }();
  return names;
}

std::string scheduler_list() {
  std::string list;
  for (const std::string& n : scheduler_names()) list += (list.empty() ? "" : ", ") + n;
  return list;
}

bool names_a_library(const std::string& name) { return name.find('/') != std::string::npos; }

std::unique_ptr<Scheduler> scheduler_named(const std::string& name, const ReshapeOptions& tuning) {
  if (names_a_library(name)) return load_scheduler(name);
  if (name == "fcfs") return std::make_unique<Fcfs>();
  if (name == "easy") return std::make_unique<EasyBackfilling>();
  if (name == "conservative") return std::make_unique<ConservativeBackfilling>();
  for (const std::string& s : ReshapeScheduler::scenarios())
    if (name == s) return ReshapeScheduler::scenario(name, tuning);
  throw std::invalid_argument("no scheduler '" + name + "' (" + scheduler_list() + ", or a library's path)");
}

std::unique_ptr<Scheduler> scheduler_from_options(const std::string& name, double threshold) {
  ReshapeOptions tuning;
  if (threshold > 0) {
    const auto& reshape = ReshapeScheduler::scenarios();
    if (std::find(reshape.begin(), reshape.end(), name) == reshape.end()) {
      std::string names;
      for (const std::string& s : reshape) names += (names.empty() ? "" : ", ") + s;
      throw std::invalid_argument("--threshold is ReSHAPE's: it goes with --scheduler " + names + ", not '" + name +
                                  "'");
    }
    tuning.threshold = threshold;
  }
  if (names_a_library(name)) return load_scheduler(name);  // its errors name the path
  try {
    return scheduler_named(name, tuning);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("--scheduler expects one of " + scheduler_list() +
                                ", or a scheduler library's path (./libmine.so), got '" + name + "'");
  }
}

}  // namespace dps::cluster
