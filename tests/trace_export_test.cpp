// The exporters on a small hand-built trace: the output equals the golden files in tests/golden
// (reviewed by eye, regenerated with DPS_REGENERATE_GOLDEN=1), the Chrome JSON parses back into the
// events it must hold, and the Paje file is well formed (every event defined before use, with its
// fields, in time order, on containers that exist).
#include <dps/trace/export.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace dps::trace {
namespace {

// Two nodes; a worker on node 1 migrates to node 2 mid-run; one transfer each way; a phase.
Trace small() {
  Trace t;
  t.names = {"master", "workers", "split", "leaf", "merge", "iteration 1", "backend", "sim", "cores.0", "1"};
  t.info = {{6, 7}, {8, 9}};
  t.changes = {{Change::ThreadAdded, 1, 0, 0, 0, 0.0},
               {Change::ThreadAdded, 2, 1, 1, 0, 0.0},
               {Change::ThreadMigrated, 2, 1, 1, 2, 0.004}};
  t.phases = {{5, true, 0.0}, {5, false, 0.008}};
  t.steps = {{0, 1, 0, 2, 1, 0.0, 0.001},
             {1, 2, 1, 3, 1, 0.0015, 0.0035},
             {2, 2, 1, 3, 1, 0.005, 0.007},
             {0, 1, 0, 4, 1, 0.0072, 0.008}};
  t.transfers = {{0, 1, 16, 0.001, 0.0015}, {2, 0, 24, 0.007, 0.0072}};
  return t;
}

std::string golden(const std::string& name, const std::string& produced) {
  const std::string path = std::string(DPS_SOURCE_DIR) + "/tests/golden/" + name;
  if (std::getenv("DPS_REGENERATE_GOLDEN")) std::ofstream(path, std::ios::binary) << produced;
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TraceExport, ChromeJsonHoldsEveryStepTransferPhaseAndCounter) {
  std::ostringstream out;
  write_chrome(small(), out, 4);
  EXPECT_EQ(out.str(), golden("small.chrome.json", out.str()));
  const auto j = nlohmann::json::parse(out.str());
  EXPECT_EQ(j["otherData"]["backend"], "sim");
  std::map<std::string, int> phases;
  std::set<std::pair<int, long>> step_tracks;
  std::set<std::string> process_names;
  int flows = 0, counters = 0;
  for (const auto& e : j["traceEvents"]) {
    const std::string ph = e["ph"];
    ++phases[ph];
    if (ph == "X" && e["cat"] != "transfer") step_tracks.emplace(e["pid"], e["tid"]);
    if (ph == "M" && e["name"] == "process_name") process_names.insert(e["args"]["name"]);
    if (ph == "s" || ph == "f") ++flows;
    if (ph == "C" && e["name"] == "dynamic efficiency") ++counters;
  }
  EXPECT_EQ(step_tracks, (std::set<std::pair<int, long>>{{0, 1}, {1, 2}, {2, 2}})) << "a track per thread per node";
  EXPECT_EQ(process_names, (std::set<std::string>{"node 0", "node 1", "node 2"}));
  EXPECT_EQ(phases["X"], 4 + 2 * 2) << "steps, and a send and a receive slice per transfer";
  EXPECT_EQ(flows, 4);
  EXPECT_EQ(phases["b"], 1);
  EXPECT_EQ(phases["e"], 1);
  EXPECT_EQ(phases["i"], 3);
  EXPECT_EQ(counters, 4);
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "X" && e["name"] == "leaf" && e["pid"] == 1) {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 1500);
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 2000);
    }
}

// The fields of a Paje line: words, or "quoted strings".
std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < line.size();) {
    if (line[i] == ' ') {
      ++i;
    } else if (line[i] == '"') {
      const std::size_t end = line.find('"', i + 1);
      EXPECT_NE(end, std::string::npos) << line;
      out.push_back(line.substr(i + 1, end - i - 1));
      i = end + 1;
    } else {
      const std::size_t end = std::min(line.find(' ', i), line.size());
      out.push_back(line.substr(i, end - i));
      i = end;
    }
  }
  return out;
}

TEST(TraceExport, PajeIsWellFormed) {
  std::ostringstream out;
  write_paje(small(), out, 4);
  EXPECT_EQ(out.str(), golden("small.paje", out.str()));
  std::map<std::string, std::pair<std::string, std::vector<std::string>>> defs;  // id -> name, field names
  std::string defining;
  std::set<std::string> types, containers = {"0"}, values;
  double last_time = 0;
  int states = 0, links = 0;
  std::istringstream in(out.str());
  for (std::string line; std::getline(in, line);) {
    SCOPED_TRACE(line);
    if (line.starts_with("%EventDef")) {
      const auto f = fields(line.substr(1));
      ASSERT_EQ(f.size(), 3u);
      defining = f[2];
      defs[defining].first = f[1];
      continue;
    }
    if (line == "%EndEventDef") {
      defining.clear();
      continue;
    }
    if (line.starts_with("%")) {
      ASSERT_FALSE(defining.empty()) << "a field outside a definition";
      defs[defining].second.push_back(fields(line.substr(1))[0]);
      continue;
    }
    const auto f = fields(line);
    ASSERT_TRUE(defs.contains(f[0])) << "event " << f[0] << " used before its definition";
    const auto& [event, names] = defs[f[0]];
    ASSERT_EQ(f.size(), names.size() + 1) << event;
    std::map<std::string, std::string> v;
    for (std::size_t i = 0; i < names.size(); ++i) v[names[i]] = f[i + 1];
    if (v.contains("Time")) {
      const double t = std::stod(v["Time"]);
      EXPECT_GE(t, last_time) << "events in time order";
      last_time = t;
    }
    if (event.starts_with("PajeDefine") && event != "PajeDefineEntityValue") {
      if (v.contains("Type")) {
        EXPECT_TRUE(v["Type"] == "0" || types.contains(v["Type"])) << "parent type defined";
      }
      types.insert(v["Alias"]);
    } else if (event == "PajeDefineEntityValue") {
      values.insert(v["Alias"]);
    } else if (event == "PajeCreateContainer") {
      EXPECT_TRUE(containers.contains(v["Container"])) << "parent container exists";
      containers.insert(v["Alias"]);
    } else if (event == "PajeDestroyContainer") {
      EXPECT_EQ(containers.erase(v["Name"]), 1u);
    } else {
      EXPECT_TRUE(types.contains(v["Type"]));
      EXPECT_TRUE(containers.contains(v["Container"])) << "container " << v["Container"];
      if (event == "PajeSetState") {
        EXPECT_TRUE(values.contains(v["Value"]));
        ++states;
      }
      if (event == "PajeStartLink") {
        EXPECT_TRUE(containers.contains(v["StartContainer"]));
        ++links;
      }
    }
  }
  EXPECT_EQ(states, 2 * 4);
  EXPECT_EQ(links, 2);
  EXPECT_EQ(containers, std::set<std::string>{"0"}) << "every container destroyed at the end";
}

}  // namespace
}  // namespace dps::trace
