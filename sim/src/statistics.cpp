// Statistics: allocation, phases, and the statistics file.
#include "statistics.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ostream>

namespace dps::sim {

double Statistics::steps_of(VNode v, double now) const {
  return engine_.usage().at(v, Usage::StepCores).total(now);
}

void Statistics::node_joined(NodeId node, VNode v, double now) {
  nodes_[node] = Held{v, now, steps_of(v, now), true};
  reallocate(now);
}

void Statistics::node_left(NodeId node, double now) {
  Held& h = nodes_.at(node);
  banked_ += steps_of(h.v, now) - h.offset;
  h.live = false;
  h.threads = 0;
  reallocate(now);
}

void Statistics::threads_changed(NodeId node, int delta, double now) {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return;
  it->second.threads += delta;
  reallocate(now);
}

void Statistics::reallocate(double now) {
  double cores = 0;
  for (const auto& [id, h] : nodes_)
    if (h.live && (id == 0 || h.threads > 0)) cores += engine_.cores(h.v);
  allocated_.set(now, cores);
}

double Statistics::useful(double now) const {
  double total = banked_;
  for (const auto& [id, h] : nodes_)
    if (h.live) total += steps_of(h.v, now) - h.offset;
  return total;
}

double Statistics::allocated(double now) const { return allocated_.total(now); }

double Statistics::efficiency(double now) const {
  const double a = allocated(now);
  return a > 0 ? useful(now) / a : 0.0;
}

void Statistics::phase(std::string_view name, bool begin, double now) {
  if (begin) {
    phases_.push_back(Phase{std::string(name), now, -1, useful(now), allocated(now)});
    return;
  }
  for (auto it = phases_.rbegin(); it != phases_.rend(); ++it)
    if (it->end < 0 && it->name == name) {
      it->end = now;
      it->useful = useful(now) - it->useful0;
      it->allocated = allocated(now) - it->allocated0;
      return;
    }
}

void Statistics::write(std::ostream& out, double now) const {
  using json = nlohmann::ordered_json;  // fields in the order written
  const Usage& usage = engine_.usage();
  // One bin width for every series: the widest any of them had to take.
  double width = allocated_.width();
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
  const auto allocated_bins = allocated_.bins(now, width);
  std::vector<double> over_time(allocated_bins.size(), 0.0);
  for (std::size_t i = 0; i < over_time.size() && i < useful_bins.size(); ++i)
    over_time[i] = allocated_bins[i] > 0 ? useful_bins[i] / allocated_bins[i] : 0.0;
  json phases = json::array();
  for (const Phase& p : phases_)
    if (p.end >= 0)
      phases.push_back({{"name", p.name},
                        {"start_s", p.begin},
                        {"end_s", p.end},
                        {"efficiency", p.allocated > 0 ? p.useful / p.allocated : 0.0}});
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
