#include "cluster_file.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
#include <stdexcept>

namespace stencil {

std::vector<std::string> ClusterFile::groups() const {
  std::vector<std::string> names;
  for (const Node& n : nodes)
    if (names.empty() || names.back() != n.group) names.push_back(n.group);
  return names;
}

ClusterFile ClusterFile::load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("--cluster: cannot read '" + path + "'");
  const auto bad = [&](const std::string& what) { return std::invalid_argument("--cluster " + path + ": " + what); };
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception&) {
    throw bad("not JSON");
  }
  ClusterFile c;
  try {
    for (const auto& g : j.at("groups")) {
      const std::string name = g.at("name").get<std::string>();
      const auto count = g.at("count").get<long>();
      const double speed = g.value("speed", 1.0);
      if (count < 1 || !(speed > 0)) throw bad("group '" + name + "' needs a count of 1 or more and a positive speed");
      for (long k = 0; k < count; ++k) c.nodes.push_back({name, speed});
    }
    const auto& network = j.at("network");
    c.latency = network.at("latency_us").get<double>() * 1e-6;
    c.bandwidth = network.at("bandwidth_MBps").get<double>() * 1e6;
  } catch (const nlohmann::json::exception& e) {
    throw bad(std::string("no valid ") + (e.id == 403 ? "field" : "value") + " where groups[].name, count, speed and "
              "network.latency_us, bandwidth_MBps are expected");
  }
  if (c.nodes.empty()) throw bad("no groups");
  if (!(c.latency >= 0) || !(c.bandwidth > 0)) throw bad("network.latency_us must be 0 or more and bandwidth_MBps positive");
  return c;
}

}  // namespace stencil
