// Application jobs: real DPS programs (stencil-sim, tsp-sim) run by the cluster simulation as processes of
// their own, resized at their resize points by the cluster's scheduler, with their own simulated
// redistribution; the same result as a static run; failures named.
#include <dps/cluster/backfilling.hpp>
#include <dps/cluster/simulation.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace dps::cluster {
namespace {

Job stencil(std::vector<std::string> more, std::size_t size = 2, double walltime = 1000) {
  std::vector<std::string> command{DPS_STENCIL_SIM, "--n", "258", "--iterations", "30", "--resize-every", "10", "--verify"};
  command.insert(command.end(), more.begin(), more.end());
  return Job{.id = 1, .kind = JobKind::Application, .submit = 0, .size = size, .walltime = walltime, .command = command};
}

Workload on(std::size_t nodes, std::vector<Job> jobs) {
  return Workload{.jobs = std::move(jobs), .nodes = nodes, .classes = {{"normal", 0}}};
}

// Answers the k-th resize point from a script, and keeps the sizes it was asked at.
struct Scripted final : Scheduler {
  std::vector<std::size_t> script;
  std::vector<ResizePoint> seen;
  std::string name() const override { return "scripted"; }
  void schedule(Cluster& c) override { EasyBackfilling().schedule(c); }
  std::size_t resize(Cluster&, const Running&, const ResizePoint& point) override {
    seen.push_back(point);
    return seen.size() <= script.size() ? script[seen.size() - 1] : point.size;
  }
};

std::string field(const std::string& log, const std::string& key) {  // from the job's last JSON line
  std::smatch m;
  if (!std::regex_search(log, m, std::regex("\"" + key + "\": ([^,}]+)"))) return "";
  return m[1];
}

std::string read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class ClusterApplication : public ::testing::Test {
 protected:
  std::filesystem::path logs = std::filesystem::path(::testing::TempDir()) / ("cluster-app-" + std::to_string(::getpid()));
  void TearDown() override { std::filesystem::remove_all(logs); }
};

TEST_F(ClusterApplication, AJobResizedTwoFourThreeByTheSchedulerEndsAsAStaticRun) {
  const Workload resized_workload = on(8, {stencil({})});
  Scripted script;
  script.script = {4, 3};
  Simulation resized(resized_workload, script, {.gantt = true, .logs = (logs / "resized").string()});
  const Results r = resized.run();
  const std::string log = read(logs / "resized" / "job-1.log");
  EXPECT_EQ(field(log, "verified"), "true") << log;
  EXPECT_EQ(field(log, "resizes"), "2") << log;
  ASSERT_EQ(script.seen.size(), 2u) << "resize points after iterations 10 and 20";
  EXPECT_EQ(script.seen[0].size, 2u);
  EXPECT_EQ(script.seen[0].iteration, 10);
  EXPECT_EQ(script.seen[1].size, 4u);
  EXPECT_GT(script.seen[1].redistribution_seconds, 0) << "the growth's redistribution, simulated by the job";
  ASSERT_EQ(r.jobs[0].sizes.size(), 3u);
  EXPECT_EQ(r.jobs[0].sizes[1].second, 4u);
  EXPECT_EQ(r.jobs[0].sizes[2].second, 3u) << "the node it gave back, when it gave it back";
  EXPECT_GT(r.jobs[0].sizes[2].first, r.jobs[0].sizes[1].first);
  EXPECT_EQ(r.resizes, 2u);
  std::set<Node> held;
  for (const Segment& g : resized.gantt().segments) held.insert(g.node);
  EXPECT_EQ(held.size(), 4u);

  const Workload static_workload = on(8, {stencil({})});
  Scripted keep;
  const Results s = Simulation(static_workload, keep, {.logs = (logs / "static").string()}).run();
  const std::string static_log = read(logs / "static" / "job-1.log");
  EXPECT_EQ(field(static_log, "resizes"), "0");
  EXPECT_EQ(field(static_log, "checksum"), field(log, "checksum")) << "the same grid";
  EXPECT_FALSE(field(log, "checksum").empty());
  EXPECT_EQ(s.jobs[0].sizes.size(), 1u);
}

// The TSP's resize points are its segments' ends (every 2 rounds here): the scheduler grows it to 4
// nodes, then shrinks it to 1, and it still proves the optimum.
TEST_F(ClusterApplication, ATspJobAsksTheSchedulerAtEverySegmentsEnd) {
  const Job tsp{.id = 1, .kind = JobKind::Application, .submit = 0, .size = 2, .walltime = 1000,
                .command = {DPS_TSP_SIM, DPS_TSPLIB_DIR "/eil51.tsp", "--cold", "--rounds", "2", "--budget", "30", "--pdexec",
                            "--tree-cost", "4"}};
  Scripted script;
  script.script = {4, 1};
  const Results r = Simulation(on(8, {tsp}), script, {.logs = logs.string()}).run();
  const std::string log = read(logs / "job-1.log");
  EXPECT_EQ(field(log, "length"), "426") << log;
  EXPECT_EQ(field(log, "optimal"), "426") << log;
  ASSERT_GE(script.seen.size(), 3u) << log;
  EXPECT_EQ(script.seen[0].iteration, 2);
  EXPECT_EQ(script.seen[0].size, 2u);
  EXPECT_EQ(script.seen[1].size, 4u);
  EXPECT_EQ(script.seen[2].size, 1u);
  ASSERT_EQ(r.jobs[0].sizes.size(), 3u);
  EXPECT_EQ(r.jobs[0].sizes[1].second, 4u);
  EXPECT_EQ(r.jobs[0].sizes[2].second, 1u) << "the three nodes it gave back, at one instant";
  Job per_node = tsp;
  per_node.command.insert(per_node.command.end(), {"--per-node", "2"});
  try {
    Simulation(on(8, {per_node}), script, {.logs = logs.string()}).run();
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("one worker per node"), std::string::npos) << e.what();
  }
}

TEST_F(ClusterApplication, AJobWhoseCommandFailsIsNamedWithItsLastWords) {
  Scripted keep;
  const Workload bad = on(4, {stencil({"--decomposition", "rings"})});
  try {
    Simulation(bad, keep, {.logs = logs.string()}).run();
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("job 1 (" DPS_STENCIL_SIM ") exited with status 2 before its end: stencil-sim: "), std::string::npos) << what;
    EXPECT_NE(what.find("rings"), std::string::npos) << what;
  }
  Job missing = stencil({});
  missing.command = {"/nonexistent/program"};
  const Workload nowhere = on(4, {missing});
  EXPECT_THROW(Simulation(nowhere, keep, {.logs = logs.string()}).run(), std::runtime_error);
  const Workload per_node = on(4, {stencil({"--per-node", "2"})});
  try {
    Simulation(per_node, keep, {.logs = logs.string()}).run();
    ADD_FAILURE() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("one thread per node"), std::string::npos) << e.what();
  }
}

TEST_F(ClusterApplication, AJobIsKilledAtItsWalltime) {
  Scripted keep;
  const Workload w = on(4, {stencil({}, 2, 1e-4), Job{.id = 2, .kind = JobKind::Rigid, .submit = 0, .size = 4, .walltime = 1, .runtime = 1}});
  const Results r = Simulation(w, keep, {.logs = logs.string()}).run();
  EXPECT_TRUE(r.jobs[0].killed);
  EXPECT_DOUBLE_EQ(r.jobs[0].end, 1e-4);
  EXPECT_DOUBLE_EQ(r.jobs[1].start, 1e-4) << "its nodes free at the kill";
}

}  // namespace
}  // namespace dps::cluster
