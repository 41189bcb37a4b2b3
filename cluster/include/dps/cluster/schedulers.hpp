// The built-in schedulers by name, as dps-cluster's --scheduler takes them: fcfs, easy, conservative,
// and ReSHAPE's scenarios (pba-q, fair-q, fcfs-li-q, greedy-r, fair-r, pba-pr, fcfs-pr, max-b-pr); a
// name with a '/' is a library's path, its scheduler loaded (scheduler_plugin.hpp).
//
//   std::unique_ptr<dps::cluster::Scheduler> s = dps::cluster::scheduler_named("pba-pr");
#pragma once

#include "dps/cluster/reshape.hpp"

#include <memory>
#include <string>
#include <vector>

namespace dps::cluster {

const std::vector<std::string>& scheduler_names();
std::string scheduler_list();  // the names, "fcfs, easy, ..."
bool names_a_library(const std::string& name);  // a path (a '/' in it): a scheduler library's
// `tuning` sets the ReSHAPE scenarios' threshold, window and priority weights. Throws
// std::invalid_argument "no scheduler 'NAME' (fcfs, easy, ...)".
std::unique_ptr<Scheduler> scheduler_named(const std::string& name, const ReshapeOptions& tuning = {});
// As the cluster programs' options name it: --scheduler NAME and ReSHAPE's --threshold T (0: not
// given). Throws std::invalid_argument with a one-line reason naming the option.
std::unique_ptr<Scheduler> scheduler_from_options(const std::string& name, double threshold);

}  // namespace dps::cluster
