// Workloads: the SWF reader on the Parallel Workloads Archive's NASA iPSC/860 trace and on bad lines,
// the archive's conventions, JSON workload files, the synthetic mix of Sudarsan, Ribbens & Varadarajan
// ("Priority-enabled Scheduling for Resizable Parallel Applications", §4), and its speedup model.
#include <dps/cluster/speedup.hpp>
#include <dps/cluster/workload.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

namespace dps::cluster {
namespace {

const std::string kNasa = std::string(DPS_SOURCE_DIR) + "/data/swf/NASA-iPSC-1993-3.1-cln.swf.gz";

std::string swf_error(const std::string& text) {
  try {
    parse_swf(text, "t.swf");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(Swf, ReadsTheArchivesNasaTraceWithItsHeader) {
  const SwfTrace t = read_swf(kNasa);
  EXPECT_EQ(t.jobs.size(), 18239u) << "MaxJobs in its header";
  EXPECT_EQ(t.header_value("MaxJobs"), "18239");
  EXPECT_EQ(t.max_procs, 128);
  EXPECT_EQ(t.max_nodes, 128);
  EXPECT_EQ(t.header_value("Computer"), "Intel iPSC/860");
  ASSERT_EQ(t.queues.size(), 2u);
  EXPECT_EQ(t.queues[0], "interactive");
  EXPECT_EQ(t.queues[1], "batch");
  // Its first line: "1 0 -1 1451 128 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1".
  const SwfJob& first = t.jobs.front();
  EXPECT_EQ(first.number, 1);
  EXPECT_EQ(first.submit, 0);
  EXPECT_EQ(first.wait, -1);
  EXPECT_EQ(first.runtime, 1451);
  EXPECT_EQ(first.allocated, 128);
  EXPECT_EQ(first.requested_time, -1);
  EXPECT_EQ(first.user, 1);
  EXPECT_EQ(first.group, 1);
  EXPECT_EQ(first.queue, -1);
  EXPECT_TRUE(std::is_sorted(t.jobs.begin(), t.jobs.end(), [](const SwfJob& a, const SwfJob& b) { return a.submit < b.submit; }));
}

TEST(Swf, AMalformedLineIsNamedWithItsField) {
  const std::string header = "; MaxProcs: 8\n";
  EXPECT_EQ(swf_error(header + "1 0 -1 10 4 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n2 5 -1 1O 4 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n"),
            "t.swf:3: field 4 (run time): '1O' is not a number");
  EXPECT_EQ(swf_error("1 0 -1 10 4 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1\n"), "t.swf:1: 17 fields; an SWF line has 18");
  EXPECT_EQ(swf_error("1 0 -1 10 4.5 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n"),
            "t.swf:1: field 5 (allocated processors): 4.500000 is not a whole number");
  EXPECT_EQ(swf_error("; MaxProcs: many\n"), "t.swf:1: MaxProcs: 'many' is not a positive number");
  EXPECT_EQ(swf_error("1 -1 -1 10 4 -1 -1 -1 -1 -1 -1 1 1 -1 -1 -1 -1 -1\n"),
            "t.swf:1: field 2 (submit time) is unknown; a job needs one");
  EXPECT_THROW(read_swf("/nonexistent/trace.swf"), std::runtime_error);
}

TEST(Swf, JobsFollowTheArchivesConventions) {
  // Allocated processors, else requested; the requested time, else the run time, as the walltime;
  // a job with no size or no run time known is unusable; the queues name the classes.
  const SwfTrace t = parse_swf(
      "; MaxProcs: 16\n; Queue: 0 short\n"
      "1 0 -1 100 4 -1 -1 8 300 -1 1 1 1 -1 0 -1 -1 -1\n"
      "2 5 -1 50 -1 -1 -1 8 -1 -1 1 1 1 -1 1 -1 -1 -1\n"
      "3 6 -1 -1 4 -1 -1 -1 -1 -1 1 1 1 -1 0 -1 -1 -1\n"
      "4 7 -1 20 32 -1 -1 -1 -1 -1 1 1 1 -1 -1 -1 -1 -1\n");
  const Workload w = from_swf(t);
  EXPECT_EQ(w.nodes, 16u);
  ASSERT_EQ(w.jobs.size(), 2u);
  EXPECT_EQ(w.unusable, 1u);
  EXPECT_EQ(w.skipped, 1u) << "job 4 needs 32 of 16 nodes";
  EXPECT_EQ(w.jobs[0].size, 4u);
  EXPECT_EQ(w.jobs[0].walltime, 300);
  EXPECT_EQ(w.jobs[1].size, 8u);
  EXPECT_EQ(w.jobs[1].walltime, 50);
  EXPECT_EQ(w.classes[w.jobs[0].klass].name, "short");
  EXPECT_EQ(w.classes[w.jobs[1].klass].name, "queue 1");
  EXPECT_THROW(from_swf(t, {.strict = true}), std::runtime_error);
  EXPECT_EQ(from_swf(t, {.nodes = 64}).skipped, 0u);
}

TEST(Swf, TheNasaTraceOnHalfItsNodesSkipsTheWideJobs) {
  const SwfTrace t = read_swf(kNasa);
  const auto wide = std::count_if(t.jobs.begin(), t.jobs.end(), [](const SwfJob& j) { return j.allocated > 64; });
  ASSERT_GT(wide, 0);
  const Workload w = from_swf(t, {.nodes = 64});
  EXPECT_EQ(w.skipped, static_cast<std::size_t>(wide));
  EXPECT_EQ(w.jobs.size() + w.skipped + w.unusable, t.jobs.size());
  EXPECT_TRUE(std::all_of(w.jobs.begin(), w.jobs.end(), [](const Job& j) { return j.size <= 64; }));
  try {
    from_swf(t, {.nodes = 64, .strict = true});
    ADD_FAILURE() << "a wide job under --strict";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("nodes, the cluster has 64"), std::string::npos) << e.what();
  }
}

std::string json_error(const std::string& text) {
  try {
    from_json(text, "w.json");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST(WorkloadFile, MixesKindsAndChecksEveryKey) {
  const Workload w = from_json(R"({"nodes": 64, "classes": [{"name": "gold"}, {"name": "platinum", "priority": 10}],
    "jobs": [{"kind": "rigid", "submit": 5, "size": 8, "runtime": 60, "count": 2},
             {"kind": "malleable", "size": 4, "iterations": 3, "iteration_s": 2, "topology": "power-of-2",
              "walltime": 100, "class": "platinum"},
             {"kind": "application", "size": 2, "walltime": 50, "command": ["stencil-sim", "--n", "512"]}]})",
                               "w.json");
  ASSERT_EQ(w.jobs.size(), 4u);
  EXPECT_EQ(w.jobs[0].kind, JobKind::Malleable) << "sorted by submit time";
  EXPECT_EQ(w.jobs[0].topology, ProcessorTopology::PowerOfTwo);
  EXPECT_EQ(w.classes[w.jobs[0].klass].priority, 10);
  EXPECT_EQ(w.jobs[1].command.size(), 3u);
  EXPECT_EQ(w.jobs[2].walltime, 60) << "a rigid job's walltime is its run time unless given";
  EXPECT_EQ(w.jobs[3].submit, 5);
  EXPECT_EQ(json_error(R"({"nodes": 8, "jobs": [{"kind": "rigid", "size": 2, "runtime": 1, "walltme": 5}]})"),
            "w.json: jobs[0]: \"walltme\" is not a key of this entry");
  EXPECT_EQ(json_error(R"({"nodes": 8, "jobs": [{"kind": "rigid", "size": 0, "runtime": 1}]})"),
            "w.json: jobs[0]: \"size\" expects a positive integer, got 0");
  EXPECT_EQ(json_error(R"({"nodes": 8, "jobs": [{"kind": "elastic", "size": 2}]})"),
            "w.json: jobs[0]: \"kind\" expects rigid, malleable, application, traffic, reshape-mix or traffic-stream, got 'elastic'");
  EXPECT_EQ(json_error(R"({"nodes": 8, "jobs": [{"kind": "rigid", "size": 2, "runtime": 1, "class": "gold"}]})"),
            "w.json: jobs[0]: no class 'gold' (\"classes\" names them)");
  EXPECT_EQ(json_error(R"({"jobs": [{"kind": "rigid", "size": 2, "runtime": 1}]})"),
            "w.json: the cluster's size is unknown: give --procs or --model");
  EXPECT_EQ(json_error("{\"nodes\": 8, \"jobs\": [").rfind("w.json: not JSON: ", 0), 0u);
}

TEST(WorkloadFile, PoissonArrivalsAreSeededAndHaveTheirMean) {
  const std::string text = R"({"nodes": 8, "seed": 11, "arrivals": {"mean_s": 20},
                              "jobs": [{"kind": "rigid", "size": 1, "runtime": 5, "count": 4000}]})";
  const Workload a = from_json(text, "a.json"), b = from_json(text, "b.json");
  ASSERT_EQ(a.jobs.size(), 4000u);
  for (std::size_t i = 0; i < a.jobs.size(); ++i) ASSERT_EQ(a.jobs[i].submit, b.jobs[i].submit);
  const double mean = a.jobs.back().submit / 3999.0;
  EXPECT_NEAR(mean, 20, 20 * 4 / std::sqrt(3999.0)) << "four standard errors";
  const Workload c = from_json(R"({"nodes": 8, "seed": 12, "arrivals": {"mean_s": 20},
                                  "jobs": [{"kind": "rigid", "size": 1, "runtime": 5, "count": 4000}]})", "c.json");
  EXPECT_NE(c.jobs[1].submit, a.jobs[1].submit);
}

TEST(WorkloadFile, SeedOnesMixHasItsShares) {
  const std::vector<Job> jobs = reshape_mix({.jobs = 120, .resizable = 0.5, .platinum = 0.25, .seed = 5}, 0, 1);
  ASSERT_EQ(jobs.size(), 120u);
  std::map<double, int> by_iteration;
  int resizable = 0, platinum = 0, square = 0, power = 0;
  for (const Job& j : jobs) {
    ++by_iteration[j.iteration_s];
    resizable += j.resizable;
    platinum += j.klass == 1;
    square += j.topology == ProcessorTopology::NearlySquare;
    power += j.topology == ProcessorTopology::PowerOfTwo;
    EXPECT_EQ(j.iterations, 7);
    const std::size_t expected = j.iteration_s == 8 ? (j.topology == ProcessorTopology::PowerOfTwo ? 32 : 35)
                               : j.iteration_s == 20 ? (j.topology == ProcessorTopology::PowerOfTwo ? 64 : 81)
                                                     : (j.topology == ProcessorTopology::PowerOfTwo ? 128 : 136);
    EXPECT_EQ(j.size, expected);
    EXPECT_EQ(j.walltime, j.iteration_s == 8 ? 156 : j.iteration_s == 20 ? 240 : 324);
  }
  EXPECT_EQ(by_iteration[8], 40);
  EXPECT_EQ(by_iteration[20], 40);
  EXPECT_EQ(by_iteration[32], 40);
  EXPECT_EQ(resizable, 60);
  EXPECT_EQ(platinum, 30);
  EXPECT_NEAR(square, 36, 15) << "30 % nearly-square";
  EXPECT_NEAR(power, 12, 10) << "10 % power-of-2";
}

TEST(SyntheticSpeedup, FollowsSeedOnesModelAndRemembersWhatItRan) {
  SyntheticSpeedup job(35, 8.0, 0.8);
  EXPECT_DOUBLE_EQ(job.resize(35, 45), 8.0 / std::pow(45.0 / 35, 0.8 * 10 / 35));
  const double at55 = job.resize(45, 55);
  EXPECT_DOUBLE_EQ(at55, job.at(45) / std::pow(55.0 / 45, 0.8 * 10 / 45));
  EXPECT_LT(job.at(45) / at55, 8.0 / job.at(45)) << "diminishing returns in steps";
  EXPECT_EQ(job.resize(55, 35), 8.0) << "back to a size it ran: the time it had";
  EXPECT_EQ(job.resize(35, 55), at55);
  EXPECT_DOUBLE_EQ(job.resize(35, 7), 8.0 * 5) << "below the start size: linear";
  EXPECT_THROW(job.at(100), std::out_of_range);
  EXPECT_THROW(SyntheticSpeedup(4, 1, 1.5), std::invalid_argument);
  // The path dependence of Sudarsan et al.'s Fig. 2: 400 -> 2000 at once is 125x.
  EXPECT_NEAR(SyntheticSpeedup::factor(400, 2000, 0.75), 125, 1e-9);
}

}  // namespace
}  // namespace dps::cluster
