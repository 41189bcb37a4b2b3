// Statistics: useful core-seconds, allocation, phases, and the statistics file.
#include "statistics.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <ostream>

namespace dps::sim {

double Statistics::steps_of(VNode v, double now) const {
  return engine_.usage().at(v, Usage::StepCores).total(now);
}

void Statistics::node_joined(NodeId node, VNode v, double now) {
  nodes_[node] = Held{v, steps_of(v, now), true};
  allocation_.cores(node, engine_.cores(v));
  if (node == 0)
    allocation_.always(node, now);
  else
    allocation_.node(node);
}

void Statistics::node_left(NodeId node, double now) {
  Held& h = nodes_.at(node);
  banked_ += steps_of(h.v, now) - h.offset;
  h.live = false;
  allocation_.leave(node, now);
}

void Statistics::threads_changed(NodeId node, int delta, double now) {
  if (nodes_.contains(node)) allocation_.threads(node, delta, now);
}

double Statistics::useful(double now) const {
  double total = banked_;
  for (const auto& [id, h] : nodes_)
    if (h.live) total += steps_of(h.v, now) - h.offset;
  return total;
}

double Statistics::allocated(double now) const { return allocation_.core_seconds(0, now); }

double Statistics::efficiency(double now) const { return trace::efficiency(useful(now), allocated(now)); }

void Statistics::phase(std::string_view name, bool begin, double now) {
  if (begin) {
    phases_.push_back(Phase{std::string(name), now, -1, useful(now)});
    return;
  }
  for (auto it = phases_.rbegin(); it != phases_.rend(); ++it)
    if (it->end < 0 && it->name == name) {
      it->end = now;
      it->useful = useful(now) - it->useful0;
      return;
    }
}

void Statistics::write(std::ostream& out, double now) const {
  using json = nlohmann::ordered_json;  // fields in the order written
  const Usage& usage = engine_.usage();
  // One bin width for every series: the widest any of them had to take, and wide enough for the run.
  double width = Timeline::width_for(now);
  for (const auto& [id, h] : nodes_)
    for (std::size_t s = 0; s < Usage::kSeries; ++s) width = std::max(width, usage.at(h.v, Usage::Series(s)).width());
  auto per_second = [&](std::vector<double> bins, double scale) {
    for (double& b : bins) b /= width * scale;
    return bins;
  };

  json nodes = json::array();
  std::vector<double> useful_bins;
  for (const auto& [id, h] : nodes_) {
    const double cores = engine_.cores(h.v);
    const auto step_bins = usage.at(h.v, Usage::StepCores).bins(now, width);
    const auto comm_bins = usage.at(h.v, Usage::CommCores).bins(now, width);
    useful_bins.resize(std::max(useful_bins.size(), step_bins.size()), 0.0);
    for (std::size_t i = 0; i < step_bins.size(); ++i) useful_bins[i] += step_bins[i];
    std::vector<double> cpu(step_bins.size());
    for (std::size_t i = 0; i < cpu.size(); ++i) cpu[i] = (step_bins[i] + comm_bins[i]) / (width * cores);
    const double span = std::max(now, 1e-300);
    nodes.push_back({{"node", id},
                     {"virtual_node", h.v},
                     {"group", engine_.model().group_of(h.v).name},
                     {"cores", engine_.cores(h.v)},
                     {"speed", engine_.speed(h.v)},
                     {"cpu_steps", usage.at(h.v, Usage::StepCores).total(now) / (span * cores)},
                     {"cpu_communication", usage.at(h.v, Usage::CommCores).total(now) / (span * cores)},
                     {"link_out", usage.at(h.v, Usage::LinkOut).total(now) / span},
                     {"link_in", usage.at(h.v, Usage::LinkIn).total(now) / span},
                     {"cpu_over_time", cpu},
                     {"link_out_over_time", per_second(usage.at(h.v, Usage::LinkOut).bins(now, width), 1.0)},
                     {"link_in_over_time", per_second(usage.at(h.v, Usage::LinkIn).bins(now, width), 1.0)}});
  }
  std::vector<double> allocated_bins(static_cast<std::size_t>(std::ceil(now / width)), 0.0);
  allocation_.add_to_bins(allocated_bins, 0, width, now);
  const std::vector<double> over_time = trace::efficiency_over_time(useful_bins, allocated_bins);
  json phases = json::array();
  for (const Phase& p : phases_)
    if (p.end >= 0)
      phases.push_back({{"name", p.name},
                        {"start_s", p.begin},
                        {"end_s", p.end},
                        {"efficiency", trace::efficiency(p.useful, allocation_.core_seconds(p.begin, p.end))}});
  const json root = {{"predicted_s", now},
                     {"ops", ops},
                     {"steps", steps},
                     {"messages", messages},
                     {"local_messages", local_messages},
                     {"bytes", bytes},
                     {"efficiency", efficiency(now)},
                     {"bin_s", width},
                     {"efficiency_over_time", over_time},
                     {"phases", phases},
                     {"nodes", nodes}};
  out << root.dump(1) << "\n";
}

}  // namespace dps::sim
