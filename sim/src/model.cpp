// ClusterModel: JSON in and out, every field checked and named in errors.
#include "dps/sim/model.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

namespace dps::sim {

namespace {

using nlohmann::json;

class Reader {
 public:
  explicit Reader(std::string_view origin) : origin_(origin) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw ModelError(origin_ + ": " + field + " " + what);
  }

  const json& field(const json& object, const std::string& path, const char* key) const {
    auto it = object.find(key);
    if (it == object.end()) fail(path + key, "is missing");
    return *it;
  }

  void only(const json& object, const std::string& path, std::set<std::string> keys) const {
    if (!object.is_object()) fail(path.empty() ? "the model" : path.substr(0, path.size() - 1), "must be an object");
    for (const auto& [key, value] : object.items())
      if (!keys.contains(key)) fail(path + key, "is not a field of the model");
  }

  double number(const json& object, const std::string& path, const char* key, bool positive) const {
    const json& v = field(object, path, key);
    if (!v.is_number()) fail(path + key, "must be a number, got " + v.dump());
    const double x = v.get<double>();
    if (!std::isfinite(x) || x < 0 || (positive && x == 0))
      fail(path + key, std::string(positive ? "must be positive" : "must not be negative") + ", got " + v.dump());
    return x;
  }

  double optional_number(const json& object, const std::string& path, const char* key, double fallback) const {
    return object.contains(key) ? number(object, path, key, false) : fallback;
  }

  std::size_t count(const json& object, const std::string& path, const char* key) const {
    const json& v = field(object, path, key);
    if (!v.is_number_integer() || v.get<long long>() < 1)
      fail(path + key, "must be a positive integer, got " + v.dump());
    return v.get<std::size_t>();
  }

 private:
  std::string origin_;
};

// "network.latency_us=2", "groups.1.speed=0.5": the value is JSON if it parses, a string otherwise.
void apply(json& root, const std::string& assignment, const Reader& reader) {
  const auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    reader.fail("override '" + assignment + "'", "must be PATH=VALUE, e.g. network.latency_us=2");
  json* at = &root;
  std::stringstream path(assignment.substr(0, eq));
  for (std::string part; std::getline(path, part, '.');) {
    if (at->is_array()) {
      std::size_t index = 0;
      try {
        index = std::stoul(part);
      } catch (const std::exception&) {
        reader.fail("override '" + assignment + "'", "indexes a list with '" + part + "'");
      }
      if (index >= at->size()) reader.fail("override '" + assignment + "'", "indexes past the end of a list");
      at = &(*at)[index];
    } else {
      at = &(*at)[part];
    }
  }
  const std::string value = assignment.substr(eq + 1);
  json parsed = json::parse(value, nullptr, false);
  *at = parsed.is_discarded() ? json(value) : std::move(parsed);
}

// Unit conversions leave tails (1350e-6 * 1e6 = 1349.9999999999998): 12 digits say what was meant.
double tidy(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.12g", x);
  return std::strtod(text, nullptr);
}

Calibration calibration(const json& c, const Reader& r) {
  r.only(c, "calibration.", {"at", "hosts", "trusted", "reason"});
  const auto text = [&](const char* key) {
    if (!c.contains(key)) return std::string();
    if (!c[key].is_string()) r.fail(std::string("calibration.") + key, "must be a string, got " + c[key].dump());
    return c[key].get<std::string>();
  };
  Calibration out{text("at"), {}, true, text("reason")};
  if (c.contains("hosts")) {
    if (!c["hosts"].is_array()) r.fail("calibration.hosts", "must be a list of host names, got " + c["hosts"].dump());
    for (const json& h : c["hosts"]) {
      if (!h.is_string()) r.fail("calibration.hosts", "must be a list of host names, got " + h.dump());
      out.hosts.push_back(h.get<std::string>());
    }
  }
  if (c.contains("trusted")) {
    if (!c["trusted"].is_boolean()) r.fail("calibration.trusted", "must be true or false, got " + c["trusted"].dump());
    out.trusted = c["trusted"].get<bool>();
  }
  if (!out.trusted && out.reason.empty()) r.fail("calibration.reason", "must say why the model is not trusted");
  return out;
}

json defaults_json() {
  const ClusterModel d{};
  return json::parse(d.to_json());
}

ClusterModel check(const json& root, const Reader& r) {
  r.only(root, "", {"name", "notes", "groups", "network", "calibration"});
  ClusterModel m;
  if (root.contains("calibration")) m.calibration = calibration(root["calibration"], r);
  m.groups.clear();
  const json& groups = r.field(root, "", "groups");
  if (!groups.is_array() || groups.empty()) r.fail("groups", "must be a non-empty list of node groups");
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const std::string path = "groups[" + std::to_string(i) + "].";
    const json& g = groups[i];
    r.only(g, path,
           {"name", "count", "cores", "speed", "workers", "bandwidth_MBps", "segment", "nodes_per_host", "quota",
            "quota_period_us", "time_slice_us", "context_switch_us"});
    NodeGroup group;
    group.name = g.contains("name") && g["name"].is_string() ? g["name"].get<std::string>() : "group" + std::to_string(i);
    group.count = r.count(g, path, "count");
    group.cores = g.contains("cores") ? static_cast<unsigned>(r.count(g, path, "cores")) : 1u;
    group.speed = r.number(g, path, "speed", true);
    group.workers = g.contains("workers") ? static_cast<unsigned>(r.count(g, path, "workers")) : 0u;
    group.bandwidth = r.optional_number(g, path, "bandwidth_MBps", 0.0) * 1e6;
    group.nodes_per_host = g.contains("nodes_per_host") ? static_cast<unsigned>(r.count(g, path, "nodes_per_host")) : 1u;
    if (group.count % group.nodes_per_host != 0)
      r.fail(path + "nodes_per_host", "must divide the group's count (" + std::to_string(group.count) + "), got " +
                                          std::to_string(group.nodes_per_host));
    group.quota = r.optional_number(g, path, "quota", 0.0);
    if (group.quota > group.cores)
      r.fail(path + "quota", "must be at most the host's cores (" + std::to_string(group.cores) + "), got " + g["quota"].dump());
    group.quota_period = r.optional_number(g, path, "quota_period_us", 1e5) * 1e-6;
    if (group.quota_period < 1e-4 || group.quota_period > 1)
      r.fail(path + "quota_period_us", "must be from 100 to 1000000, got " + g["quota_period_us"].dump());
    group.time_slice = r.optional_number(g, path, "time_slice_us", 0.0) * 1e-6;
    group.context_switch = r.optional_number(g, path, "context_switch_us", 0.0) * 1e-6;
    if (group.context_switch > 0 && group.time_slice == 0)
      r.fail(path + "time_slice_us",
             "must be positive with a context_switch_us, got " + g.value("time_slice_us", json(0)).dump());
    if (g.contains("segment")) {
      const json& v = g["segment"];
      if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() > 65535)
        r.fail(path + "segment", "must be an integer from 0 to 65535, got " + v.dump());
      group.segment = v.get<int>();
    }
    m.groups.push_back(std::move(group));
  }
  const json& n = r.field(root, "", "network");
  r.only(n, "network.",
         {"latency_us", "bandwidth_MBps", "sharing", "cpu_per_send", "cpu_per_receive", "header_bytes", "connections",
          "cpu_per", "cpu_per_message_us", "cpu_per_received_MB_us", "cpu_per_local_message_us", "send_buffer_bytes",
          "topology"});
  m.network.latency = r.number(n, "network.", "latency_us", false) * 1e-6;
  m.network.bandwidth = r.number(n, "network.", "bandwidth_MBps", true) * 1e6;
  const json& sharing = r.field(n, "network.", "sharing");
  if (sharing == "equal")
    m.network.sharing = Sharing::Equal;
  else if (sharing == "maxmin")
    m.network.sharing = Sharing::MaxMin;
  else
    r.fail("network.sharing", "must be \"equal\" or \"maxmin\", got " + sharing.dump());
  m.network.cpu_per_send = r.optional_number(n, "network.", "cpu_per_send", 0.0);
  m.network.cpu_per_receive = r.optional_number(n, "network.", "cpu_per_receive", 0.0);
  m.network.header_bytes = r.optional_number(n, "network.", "header_bytes", 0.0);
  m.network.cpu_per_message = r.optional_number(n, "network.", "cpu_per_message_us", 0.0) * 1e-6;
  m.network.cpu_per_received_byte = r.optional_number(n, "network.", "cpu_per_received_MB_us", 0.0) * 1e-12;
  m.network.cpu_per_local_message = r.optional_number(n, "network.", "cpu_per_local_message_us", 0.0) * 1e-6;
  m.network.send_buffer = r.optional_number(n, "network.", "send_buffer_bytes", 0.0);
  if (n.contains("connections")) {
    const json& c = n["connections"];
    if (c != "fifo" && c != "flows") r.fail("network.connections", "must be \"fifo\" or \"flows\", got " + c.dump());
    m.network.fifo = c == "fifo";
  }
  if (n.contains("cpu_per")) {
    const json& c = n["cpu_per"];
    if (c != "transfer" && c != "link" && c != "byte")
      r.fail("network.cpu_per", "must be \"transfer\", \"link\" or \"byte\", got " + c.dump());
    m.network.cpu_per = c == "link" ? CommCpu::Link : c == "byte" ? CommCpu::Byte : CommCpu::Transfer;
  }
  if (n.contains("topology")) {
    const json& t = n["topology"];
    const std::string path = "network.topology.";
    const json& kind = r.field(t, path, "kind");
    if (kind == "segments") {
      r.only(t, path, {"kind", "bandwidth_MBps", "router_latency_us", "router_bandwidth_MBps", "router_per_pair"});
      m.network.topology = Topology::Segments;
      m.network.segments.bandwidth = r.optional_number(t, path, "bandwidth_MBps", 0.0) * 1e6;
      m.network.segments.router_latency = r.number(t, path, "router_latency_us", false) * 1e-6;
      m.network.segments.router_bandwidth = r.number(t, path, "router_bandwidth_MBps", true) * 1e6;
      if (t.contains("router_per_pair")) {
        if (!t["router_per_pair"].is_boolean()) r.fail(path + "router_per_pair", "must be true or false, got " + t["router_per_pair"].dump());
        m.network.segments.router_per_pair = t["router_per_pair"].get<bool>();
      }
    } else if (kind == "mesh") {
      r.only(t, path, {"kind", "width", "height", "torus", "io_column", "routers", "link_bandwidth_MBps", "hop_latency_us"});
      MeshShape& mesh = m.network.mesh;
      m.network.topology = Topology::Mesh;
      mesh.width = static_cast<int>(r.count(t, path, "width"));
      mesh.height = static_cast<int>(r.count(t, path, "height"));
      if (t.contains("torus")) {
        if (!t["torus"].is_boolean()) r.fail(path + "torus", "must be true or false, got " + t["torus"].dump());
        mesh.torus = t["torus"].get<bool>();
      }
      if (t.contains("io_column")) {
        if (!t["io_column"].is_boolean()) r.fail(path + "io_column", "must be true or false, got " + t["io_column"].dump());
        mesh.io_column = t["io_column"].get<bool>();
      }
      mesh.link_bandwidth = r.optional_number(t, path, "link_bandwidth_MBps", 0.0) * 1e6;
      mesh.hop_latency = r.optional_number(t, path, "hop_latency_us", 0.0) * 1e-6;
      if (t.contains("routers")) {
        const json& list = t["routers"];
        const std::size_t grid = static_cast<std::size_t>(mesh.width) * static_cast<std::size_t>(mesh.height);
        if (mesh.io_column) r.fail(path + "routers", "places nodes on a mesh without a column of I/O nodes");
        if (!list.is_array() || list.empty()) r.fail(path + "routers", "must be a list of router numbers, one per node");
        std::vector<bool> taken(grid, false);
        for (const json& v : list) {
          if (!v.is_number_integer() || v.get<long long>() < 0 || v.get<long long>() >= static_cast<long long>(grid))
            r.fail(path + "routers", "must hold router numbers from 0 to " + std::to_string(grid - 1) + ", got " + v.dump());
          if (taken[v.get<std::size_t>()]) r.fail(path + "routers", "places two nodes on router " + v.dump());
          taken[v.get<std::size_t>()] = true;
          mesh.routers.push_back(v.get<std::uint32_t>());
        }
      }
      const std::size_t routers = mesh.nodes();
      if (routers != m.node_count())
        r.fail("network.topology", "is a " + std::to_string(mesh.width) + "x" + std::to_string(mesh.height) + " mesh" +
                                       (mesh.io_column ? " with a column of I/O nodes" : "") +
                                       (mesh.routers.empty() ? " of " + std::to_string(routers) + " routers, one per node,"
                                                             : " with " + std::to_string(routers) + " nodes placed,") +
                                       " but the groups have " + std::to_string(m.node_count()) + " nodes");
      if (mesh.torus && (mesh.width < 3 || mesh.height < 3)) r.fail("network.topology", "is a torus: its sides must be 3 or more");
      if (mesh.torus && mesh.io_column) r.fail("network.topology", "is a torus: it has no west edge for a column of I/O nodes");
    } else if (kind != "star") {
      r.fail(path + "kind", "must be \"star\", \"mesh\" or \"segments\", got " + kind.dump());
    }
  }
  for (std::size_t i = 0; i < m.groups.size(); ++i)
    if (m.groups[i].segment >= 0 && m.network.topology != Topology::Segments)
      r.fail("groups[" + std::to_string(i) + "].segment", "needs the segments topology");
  if (m.network.cpu_per == CommCpu::Byte && m.network.topology != Topology::Star)
    r.fail("network.cpu_per", "\"byte\" needs a star network");
  for (std::size_t i = 0; i < m.groups.size(); ++i)
    if (m.groups[i].bandwidth > 0 && m.network.topology == Topology::Star)
      r.fail("groups[" + std::to_string(i) + "].bandwidth_MBps", "needs a mesh or segments topology: a star's links all have the network's");
  return m;
}

}  // namespace

std::size_t ClusterModel::node_count() const noexcept {
  std::size_t n = 0;
  for (const auto& g : groups) n += g.count;
  return n;
}

const NodeGroup& ClusterModel::group_of(std::size_t node) const {
  for (const auto& g : groups) {
    if (node < g.count) return g;
    node -= g.count;
  }
  throw std::out_of_range("the model has " + std::to_string(node_count()) + " nodes");
}

ClusterModel ClusterModel::parse(std::string_view text, std::string_view origin,
                                 const std::vector<std::string>& overrides) {
  const Reader reader(origin);
  json root;
  try {
    root = json::parse(text);
  } catch (const json::parse_error& e) {
    reader.fail("is not JSON:", std::string(e.what()).substr(std::string(e.what()).find(']') + 2));
  }
  for (const auto& o : overrides) apply(root, o, reader);
  return check(root, reader);
}

std::string Calibration::warning(std::string_view path) const {
  if (trusted) return {};
  return "the model " + std::string(path) + " is not to be trusted: " + reason;
}

ClusterModel ClusterModel::load(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path + ": cannot be read");
  std::stringstream text;
  text << in.rdbuf();
  return parse(text.str(), path, overrides);
}

ClusterModel ClusterModel::defaults(const std::vector<std::string>& overrides) {
  const Reader reader("the default model");
  json root = defaults_json();
  for (const auto& o : overrides) apply(root, o, reader);
  return check(root, reader);
}

std::string ClusterModel::to_json() const {
  json groups_json = json::array();
  for (const auto& g : groups) {
    groups_json.push_back({{"name", g.name}, {"count", g.count}, {"cores", g.cores}, {"speed", g.speed}});
    if (g.workers > 0) groups_json.back()["workers"] = g.workers;
    if (g.bandwidth > 0) groups_json.back()["bandwidth_MBps"] = tidy(g.bandwidth / 1e6);
    if (g.segment >= 0) groups_json.back()["segment"] = g.segment;
    if (g.nodes_per_host > 1) groups_json.back()["nodes_per_host"] = g.nodes_per_host;
    if (g.quota > 0) {
      groups_json.back()["quota"] = tidy(g.quota);
      groups_json.back()["quota_period_us"] = tidy(g.quota_period * 1e6);
    }
    if (g.time_slice > 0) {
      groups_json.back()["time_slice_us"] = tidy(g.time_slice * 1e6);
      groups_json.back()["context_switch_us"] = tidy(g.context_switch * 1e6);
    }
  }
  const json root = {
      {"groups", groups_json},
      {"network",
       {{"latency_us", tidy(network.latency * 1e6)},
        {"bandwidth_MBps", tidy(network.bandwidth / 1e6)},
        {"sharing", network.sharing == Sharing::Equal ? "equal" : "maxmin"},
        {"cpu_per_send", network.cpu_per_send},
        {"cpu_per_receive", network.cpu_per_receive},
        {"header_bytes", network.header_bytes},
        {"connections", network.fifo ? "fifo" : "flows"},
        {"cpu_per", network.cpu_per == CommCpu::Link ? "link" : network.cpu_per == CommCpu::Byte ? "byte" : "transfer"}}}};
  json out = root;
  if (network.cpu_per_message > 0) out["network"]["cpu_per_message_us"] = tidy(network.cpu_per_message * 1e6);
  if (network.cpu_per_received_byte > 0)
    out["network"]["cpu_per_received_MB_us"] = tidy(network.cpu_per_received_byte * 1e12);
  if (network.cpu_per_local_message > 0)
    out["network"]["cpu_per_local_message_us"] = tidy(network.cpu_per_local_message * 1e6);
  if (network.send_buffer > 0) out["network"]["send_buffer_bytes"] = tidy(network.send_buffer);
  if (network.topology == Topology::Mesh)
    out["network"]["topology"] = {{"kind", "mesh"},
                                  {"width", network.mesh.width},
                                  {"height", network.mesh.height},
                                  {"torus", network.mesh.torus},
                                  {"io_column", network.mesh.io_column},
                                  {"link_bandwidth_MBps", tidy(network.mesh.link_bandwidth / 1e6)},
                                  {"hop_latency_us", tidy(network.mesh.hop_latency * 1e6)}};
  if (network.topology == Topology::Mesh && !network.mesh.routers.empty()) out["network"]["topology"]["routers"] = network.mesh.routers;
  if (network.topology == Topology::Segments)
    out["network"]["topology"] = {{"kind", "segments"},
                                  {"bandwidth_MBps", tidy(network.segments.bandwidth / 1e6)},
                                  {"router_latency_us", tidy(network.segments.router_latency * 1e6)},
                                  {"router_bandwidth_MBps", tidy(network.segments.router_bandwidth / 1e6)},
                                  {"router_per_pair", network.segments.router_per_pair}};
  if (!calibration.at.empty() || !calibration.hosts.empty() || !calibration.trusted) {
    out["calibration"] = {{"at", calibration.at}, {"hosts", calibration.hosts}, {"trusted", calibration.trusted}};
    if (!calibration.reason.empty()) out["calibration"]["reason"] = calibration.reason;
  }
  return out.dump(2) + "\n";
}

}  // namespace dps::sim
