// The exporters on a small hand-built trace (golden_exports.hpp): the output equals the golden files
// in tests/golden (reviewed by eye; rewritten only by the separate step their README describes), the
// Chrome JSON parses back into the events it must hold, and the Paje file is well formed (every event
// defined before use, with its fields, in time order, on containers that exist).
#include "golden_exports.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace dps::trace {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// An exporter whose output changed on purpose gets its golden files rewritten by hand, and the
// difference reviewed: `cmake --build build --target regenerate-golden` (tests/golden/README.md).
TEST(TraceExport, EachExportEqualsItsGoldenFile) {
  for (const golden::File& file : golden::kFiles) {
    SCOPED_TRACE(file.name);
    EXPECT_EQ(file.produce(), read(std::string(DPS_SOURCE_DIR) + "/tests/golden/" + file.name));
  }
}

TEST(TraceExport, ChromeJsonHoldsEveryStepTransferPhaseAndCounter) {
  const auto j = nlohmann::json::parse(golden::chrome());
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
  // The counters worked out by hand from the steps, in 2 ms bins: each node's busy share, and the
  // dynamic efficiency, the steps' core-seconds over the cores of the two nodes hosting a thread
  // (0 and 1, then 0 and 2 once the worker migrated at 4 ms).
  std::map<std::pair<std::string, int>, std::vector<double>> series;  // (counter, node): its values in time order
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "C") series[{e["name"], e["pid"]}].push_back(e["args"].begin()->get<double>());
  const std::map<std::pair<std::string, int>, std::vector<double>> by_hand = {
      {{"cpu", 0}, {0.5, 0, 0, 0.4}},
      {{"cpu", 1}, {0.25, 0.75, 0, 0}},
      {{"cpu", 2}, {0, 0, 0.5, 0.5}},
      {{"dynamic efficiency", 0}, {0.375, 0.375, 0.25, 0.45}}};
  ASSERT_EQ(series.size(), by_hand.size());
  for (const auto& [counter, values] : by_hand) {
    SCOPED_TRACE(counter.first + " on node " + std::to_string(counter.second));
    ASSERT_EQ(series[counter].size(), values.size());
    for (std::size_t b = 0; b < values.size(); ++b) EXPECT_NEAR(series[counter][b], values[b], 1e-9) << "bin " << b;
  }
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
  std::map<std::string, std::pair<std::string, std::vector<std::string>>> defs;  // id -> name, field names
  std::string defining;
  std::set<std::string> types, containers = {"0"}, values;
  double last_time = 0;
  int states = 0, links = 0;
  std::vector<double> efficiency;
  std::istringstream in(golden::paje());
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
      if (event == "PajeSetVariable") efficiency.push_back(std::stod(v["Value"]));
      if (event == "PajeStartLink") {
        EXPECT_TRUE(containers.contains(v["StartContainer"]));
        ++links;
      }
    }
  }
  EXPECT_EQ(states, 2 * 4);
  EXPECT_EQ(links, 2);
  const std::vector<double> by_hand = {0.375, 0.375, 0.25, 0.45};  // as in the Chrome export's counters
  ASSERT_EQ(efficiency.size(), by_hand.size());
  for (std::size_t b = 0; b < by_hand.size(); ++b) EXPECT_NEAR(efficiency[b], by_hand[b], 1e-6) << "bin " << b;
  EXPECT_EQ(containers, std::set<std::string>{"0"}) << "every container destroyed at the end";
}

}  // namespace
}  // namespace dps::trace
