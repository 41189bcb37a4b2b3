// dps-scheduler on loopback (hosts 127.0.0.1 to 127.0.0.4, reached through a remote shell that runs
// here): a workload of a malleable stencil, LU and the TSP ends with each result right under FCFS, EASY
// and ReSHAPE's PBA-PR, no node ever held by two jobs at once (the Gantt chart it writes), PBA-PR
// growing and shrinking the stencil; a job that fails frees its hosts for the next; serving, it takes
// clients' submissions and cancellations (one while the job grows), and refuses a stranger's.
#include <dps/trace/reader.hpp>

#include "measuring.hpp"
#include "scratch.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <thread>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace dps {
namespace {

struct Outcome {
  int status = -1;
  std::string last_line, errors;
  trace::Trace trace;
};

std::string text_of_command(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen(command.c_str(), "r")) {
    char chunk[4096];
    for (std::size_t n; (n = std::fread(chunk, 1, sizeof chunk, p)) > 0;) out.append(chunk, n);
    ::pclose(p);
  }
  return out;
}

struct Pool {
  test::Scratch s;
  // A daemon leaves its jobs running when it goes (a restarted one takes them back): a test that
  // fails midway leaves none behind, found by their output in the pool's folder.
  ~Pool() {
    std::error_code ignored;
    for (const auto& process : std::filesystem::directory_iterator("/proc", ignored)) {
      const auto output = std::filesystem::read_symlink(process.path() / "fd" / "1", ignored);
      const std::string pid = process.path().filename().string();
      if (!ignored && output.string().starts_with(s.dir.string() + "/") && pid.find_first_not_of("0123456789") == std::string::npos)
        ::kill(std::stoi(pid), SIGKILL);
    }
  }
  std::filesystem::path rsh = s.write("rsh", "#!/bin/sh\nhost=$1; shift\nexec sh -c \"$*\"\n", true);
  std::filesystem::path hosts = s.write("hosts", "127.0.0.1\n127.0.0.2\n127.0.0.3\n127.0.0.4\n");

  // dps-scheduler --workload: its status, last line, standard error and trace; its state in
  // state-SCHEDULER, its jobs' output in logs-SCHEDULER.
  // Its files' names: the scheduler's, or its library's (libmine).
  static std::string tag(const std::string& scheduler) { return std::filesystem::path(scheduler).stem().string(); }
  std::string batch(const std::string& scheduler, const std::string& workload) const {
    const std::string t = tag(scheduler);
    const auto w = s.write("workload-" + t + ".json", workload);
    return "cd " + s.dir.string() + " && DPS_RSH=" + rsh.string() + " exec " + DPS_SCHEDULER + " --hostfile " +
           hosts.string() + " --scheduler " + scheduler + " --workload " + w.string() + " --state state-" + t +
           " --logs logs-" + t + " --trace " + t + ".dpstrace > out-" + t + " 2> err-" + t;
  }
  Outcome run(const std::string& scheduler, const std::string& workload) const {
    Outcome r;
    const std::string t = tag(scheduler);
    r.status = WEXITSTATUS(std::system(batch(scheduler, workload).c_str()));
    r.last_line = test::last_line(s.read("out-" + t));
    r.errors = s.read("err-" + t);
    if (const auto trace = s.dir / (t + ".dpstrace"); std::filesystem::exists(trace))
      r.trace = trace::read(trace.string());
    return r;
  }
  std::string output(const std::string& scheduler, int job) const {
    return test::last_line(s.read("logs-" + scheduler + "/job-" + std::to_string(job) + ".out"));
  }
};

// The stencil asks every 50 iterations: PBA-PR grows it into the idle hosts, then takes it back to the
// size before a growth that did not pay (ReSHAPE probes for its sweet spot).
constexpr const char* kWorkload = R"({"nodes": 4, "jobs": [
  {"kind": "application", "submit": 0, "size": 1, "max_size": 3, "walltime": 300,
   "command": ["stencil", "--n", "1024", "--iterations", "1500", "--resize-every", "50", "--verify"]},
  {"kind": "application", "submit": 2, "size": 3, "walltime": 300, "command": ["lu", "--n", "1536", "--r", "192"]},
  {"kind": "application", "submit": 2.5, "size": 2, "walltime": 300, "resizable": false,
   "command": ["tsp", ")" DPS_TSPLIB_DIR R"(/att48.tsp"]}]})";

TEST(SchedulerDaemon, ThreeJobsEndRightUnderEachSchedulerAndNoNodeIsHeldTwice) {
  Pool pool;
  for (const std::string scheduler : {"fcfs", "easy", "pba-pr"}) {
    SCOPED_TRACE(scheduler);
    const Outcome r = pool.run(scheduler, kWorkload);
    ASSERT_EQ(r.status, 0) << r.errors;
    EXPECT_NE(r.last_line.find("\"jobs\": 3, \"failed\": 0"), std::string::npos) << r.last_line;
    EXPECT_NE(pool.output(scheduler, 1).find("\"verified\": true"), std::string::npos) << pool.output(scheduler, 1);
    EXPECT_NE(pool.output(scheduler, 3).find("\"length\": 10628, \"optimal\": 10628"), std::string::npos)
        << pool.output(scheduler, 3);
    EXPECT_NE(pool.output(scheduler, 2).find("\"residual\""), std::string::npos) << pool.output(scheduler, 2);
    // Each node's bars, by start: none begins before the one before it ended.
    std::map<std::uint32_t, std::vector<std::pair<double, double>>> bars;
    std::size_t grew = 0, shrank = 0;
    for (const trace::Step& s : r.trace.steps) {
      const std::string& name = r.trace.names[s.operation];
      if (name == "grow")
        ++grew;
      else if (name == "shrink")
        ++shrank;
      else
        bars[s.node].emplace_back(s.start, s.end);
    }
    for (auto& [node, held] : bars) {
      std::sort(held.begin(), held.end());
      for (std::size_t k = 1; k < held.size(); ++k)
        EXPECT_GE(held[k].first, held[k - 1].second) << "node " << node << " held twice";
    }
    EXPECT_EQ(r.trace.info_value("clock"), "real");
    const std::string said = pool.s.read("logs-" + scheduler + "/job-1.err");
    EXPECT_NE(said.find("dps: the scheduler answered "), std::string::npos) << "how long its points waited: " << said;
    if (scheduler != "pba-pr") {
      EXPECT_EQ(grew + shrank, 0u);
    } else if (test::kMeasures) {  // when the stencil's first points come before LU arrives: real time
      EXPECT_GE(grew, 1u);
      EXPECT_GE(shrank, 1u);
    }
  }
}

// --predict: the same workload under a scheduler of the same name in the simulated cluster, its -sim
// programs on the model; its figures beside the real ones, its Gantt chart beside the real one.
TEST(SchedulerDaemon, APredictionOfTheWorkloadComesBesideTheRealRun) {
  Pool pool;
  const std::string workload = R"({"jobs": [
    {"kind": "application", "submit": 0, "size": 2, "walltime": 300, "command": ["stencil", "--n", "512", "--iterations", "100"]},
    {"kind": "application", "submit": 0.1, "size": 3, "walltime": 300, "resizable": false,
     "command": ["tsp", ")" DPS_TSPLIB_DIR R"(/gr17.tsp"]}]})";
  std::system((pool.batch("easy", workload) + " --predict " DPS_MODELS_DIR "/gigabit-32.json --jobs easy.csv").c_str());
  // Each job's row, real and predicted: id,kind,class,submit,size,start,end,...
  for (const std::string csv : {"easy.csv", "easy-predicted.csv"}) {
    std::istringstream rows(pool.s.read(csv));
    std::string line;
    std::size_t jobs = 0;
    while (std::getline(rows, line)) jobs += line.starts_with("1,") || line.starts_with("2,");
    EXPECT_EQ(jobs, 2u) << csv << ": " << pool.s.read(csv);
  }
  const std::string last = test::last_line(pool.s.read("out-easy"));
  double real = 0, predicted = 0, turnaround = 0;
  ASSERT_EQ(std::sscanf(last.c_str() + last.find("\"makespan_s\""), "\"makespan_s\": %lf", &real), 1) << last;
  ASSERT_EQ(
      std::sscanf(last.c_str() + last.find("\"predicted_makespan_s\""),
                  "\"predicted_makespan_s\": %lf, \"predicted_mean_wait_s\": %*f, \"predicted_mean_turnaround_s\": %lf",
                  &predicted, &turnaround),
      2)
      << last;
  EXPECT_GT(real, 0);
  EXPECT_GT(predicted, 0);
  EXPECT_GT(turnaround, 0);
  const trace::Trace t = trace::read((pool.s.dir / "easy-predicted.dpstrace").string());
  EXPECT_EQ(t.info_value("clock"), "simulated");
  EXPECT_EQ(t.info_value("scheduler"), "easy");
  EXPECT_EQ(trace::read((pool.s.dir / "easy.dpstrace").string()).info_value("clock"), "real");
}

// --what-if: greedy-r grows a stencil into every idle host; asked first, the simulator says a 128-point
// grid over Fast Ethernet gains nothing from a second node (no growth), a 2048-point one over gigabit
// does (it grows once its forecasts are in).
TEST(SchedulerDaemon, WhatIfGrowsAJobOnlyWhereItsPredictionPays) {
  Pool pool;
  const auto run = [&](const std::string& n, const std::string& iterations, const std::string& model) {
    const std::string workload =
        R"({"jobs": [{"kind": "application", "submit": 0, "size": 1, "max_size": 3, "walltime": 300,
      "command": ["stencil", "--n", ")" +
        n + R"(", "--iterations", ")" + iterations + R"(", "--resize-every", "30"]}]})";
    std::system((pool.batch("greedy-r", workload) + " --what-if " DPS_MODELS_DIR "/" + model).c_str());
    return test::last_line(pool.s.read("out-greedy-r"));
  };
  const std::string tiny = run("128", "6000", "fast-ethernet-32.json");
  EXPECT_NE(tiny.find("\"failed\": 0"), std::string::npos) << tiny;
  EXPECT_NE(tiny.find("\"resizes\": 0, \"refused_growths\": "), std::string::npos) << tiny;
  EXPECT_EQ(tiny.find("\"refused_growths\": 0"), std::string::npos) << "greedy-r asked to grow it: " << tiny;
  const std::string big = run("2048", "600", "gigabit-32.json");
  EXPECT_NE(big.find("\"failed\": 0"), std::string::npos) << big;
  if (test::kMeasures) {  // its forecasts come in time when the build is not a sanitizer's
    EXPECT_EQ(big.find("\"resizes\": 0,"), std::string::npos) << big;
  }
}

// A user's scheduler, a library built apart (tests/scheduler_plugin/smallest_first.cpp), runs real jobs
// as the built-in ones do: of the two jobs queued behind the first, the smaller starts first.
TEST(SchedulerDaemon, AUsersSchedulerLibraryRunsRealJobs) {
  Pool pool;
  const Outcome r = pool.run(DPS_SMALLEST_FIRST, R"({"jobs": [
    {"kind": "application", "submit": 0, "size": 4, "walltime": 60, "resizable": false,
     "command": ["stencil", "--n", "2048", "--iterations", "400"]},
    {"kind": "application", "submit": 0.1, "size": 4, "walltime": 60, "resizable": false,
     "command": ["tsp", ")" DPS_TSPLIB_DIR R"(/gr17.tsp"]},
    {"kind": "application", "submit": 0.2, "size": 1, "max_size": 3, "walltime": 120,
     "command": ["stencil", "--n", "1024", "--iterations", "600", "--resize-every", "50", "--verify"]}]})");
  ASSERT_EQ(r.status, 0) << r.errors;
  EXPECT_NE(r.last_line.find("\"scheduler\": \"smallest-first\", \"hosts\": 4, \"jobs\": 3, \"failed\": 0"),
            std::string::npos)
      << r.last_line;
  EXPECT_NE(pool.output("libsmallest_first", 3).find("\"verified\": true"), std::string::npos);
  // The stencil (1 node) started before the 3-node TSP that came before it: its bar's start, per node.
  double stencil = 1e9, tsp = 1e9;
  for (const trace::Step& step : r.trace.steps) {
    const std::string& name = r.trace.names[step.operation];
    if (name == "job 3") stencil = std::min(stencil, step.start);
    if (name == "job 2") tsp = std::min(tsp, step.start);
  }
  EXPECT_LT(stencil, tsp);
}

TEST(SchedulerDaemon, AJobThatFailsFreesItsHostsForTheNext) {
  Pool pool;
  const Outcome r = pool.run("fcfs", R"({"nodes": 4, "jobs": [
    {"kind": "application", "submit": 0, "size": 4, "walltime": 60, "command": ["stencil", "--n", "rings"]},
    {"kind": "application", "submit": 0.1, "size": 4, "walltime": 60, "command": ["stencil", "--n", "256", "--iterations", "20"]}]})");
  EXPECT_EQ(r.status, 1) << "a failed job fails the run";
  EXPECT_NE(r.last_line.find("\"jobs\": 2, \"failed\": 1"), std::string::npos) << r.last_line;
  EXPECT_NE(r.errors.find("dps-scheduler: job 1: exited with status 2: stencil: --n expects"), std::string::npos)
      << r.errors;
  EXPECT_NE(pool.output("fcfs", 2).find("\"iterations\": 20"), std::string::npos)
      << "the second ran on the hosts the first left";
}

// A daemon serving in the background, its state in the pool's folder, and its clients.
struct Serving {
  const Pool& pool;
  pid_t pid = -1;
  explicit Serving(const Pool& p, const std::string& scheduler) : pool(p) {
    const std::string command = "cd " + pool.s.dir.string() + " && DPS_RSH=" + pool.rsh.string() + " exec " +
                                DPS_SCHEDULER + " --hostfile " + pool.hosts.string() + " --scheduler " + scheduler +
                                " --state state --logs logs --trace serving.dpstrace > serving.out 2> serving.err";
    const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
    if (::posix_spawn(&pid, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ) != 0)
      throw std::runtime_error("no shell");
    for (int k = 0; k < 200 && !std::filesystem::exists(pool.s.dir / "state" / "address"); ++k)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  ~Serving() {
    if (pid > 0) ::kill(pid, SIGKILL), ::waitpid(pid, nullptr, 0);
  }
  // A client's command; its standard output (and error after it), and its status.
  std::pair<int, std::string> client(const std::string& tool, const std::string& args,
                                     const std::string& state = "state") const {
    const auto out = pool.s.dir / "client.out";
    const std::string command = "cd " + pool.s.dir.string() + " && " + DPS_CLIENTS + std::string("/") + tool +
                                " --state " + state + " " + args + " > " + out.string() + " 2>&1";
    const int status = WEXITSTATUS(std::system(command.c_str()));
    return {status, pool.s.read("client.out")};
  }
  std::string state_of(int id) const {  // in dps-queue's table
    std::istringstream table(client("dps-queue", "").second);
    for (std::string line; std::getline(table, line);) {
      std::istringstream words(line);
      int job = 0;
      std::string state;
      if (words >> job >> state && job == id) return state;
    }
    return "";
  }
  std::string stop() {  // SIGTERM: the last line it prints
    ::kill(pid, SIGTERM);
    ::waitpid(pid, nullptr, 0);
    pid = -1;
    return test::last_line(pool.s.read("serving.out"));
  }
};

TEST(SchedulerDaemon, ClientsSubmitListAndCancelAndAStrangerIsRefused) {
  Pool pool;
  Serving daemon(pool, "easy");
  const auto [submitted, id] = daemon.client("dps-submit", "--nodes 3 -- stencil --n 1024 --iterations 100000");
  ASSERT_EQ(submitted, 0) << id;
  EXPECT_EQ(test::last_line(id), "{\"id\": 1}");
  EXPECT_EQ(test::last_line(daemon.client("dps-submit", "--nodes 2 -- tsp " DPS_TSPLIB_DIR "/att48.tsp").second),
            "{\"id\": 2}");
  EXPECT_EQ(test::last_line(daemon.client("dps-submit", "--nodes 1 -- tsp " DPS_TSPLIB_DIR "/gr17.tsp").second),
            "{\"id\": 3}");
  for (int k = 0; k < 400 && daemon.state_of(3) != "done"; ++k)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_EQ(daemon.state_of(1), "running");
  EXPECT_EQ(daemon.state_of(2), "queued") << "2 nodes asked, 1 idle beside the stencil";
  EXPECT_EQ(daemon.state_of(3), "done") << "EASY backfills it on the idle node";
  EXPECT_EQ(daemon.client("dps-cancel", "2").first, 0);
  EXPECT_EQ(daemon.state_of(2), "cancelled");
  EXPECT_EQ(daemon.client("dps-cancel", "1").first, 0);
  for (int k = 0; k < 400 && daemon.state_of(1) != "cancelled"; ++k)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_EQ(daemon.state_of(1), "cancelled");
  const auto [over, why] = daemon.client("dps-cancel", "1");
  EXPECT_EQ(over, 2);
  EXPECT_EQ(why, "dps-cancel: job 1 is over\n");
  const auto [wide, too_wide] = daemon.client("dps-submit", "--nodes 5 -- stencil");
  EXPECT_EQ(wide, 2);
  EXPECT_EQ(too_wide, "dps-submit: the job asks 5 nodes, the pool has 4\n");
  // A stranger: the daemon's address, another secret.
  std::filesystem::create_directories(pool.s.dir / "stranger");
  std::filesystem::copy_file(pool.s.dir / "state" / "address", pool.s.dir / "stranger" / "address");
  std::ofstream(pool.s.dir / "stranger" / "secret") << std::string(64, 'a') << "\n";
  const auto [refused, said] = daemon.client("dps-queue", "", "stranger");
  EXPECT_EQ(refused, 2);
  EXPECT_NE(said.find("refused client: not the cluster's secret"), std::string::npos) << said;
  EXPECT_EQ(daemon.client("dps-submit", "--nodes 1 -- tsp " DPS_TSPLIB_DIR "/gr17.tsp", "stranger").first, 2);
  const std::string last = daemon.stop();
  EXPECT_NE(last.find("\"jobs\": 3, \"failed\": 0, \"cancelled\": 2"), std::string::npos) << last;
}

// SIGKILLed while the stencil runs and the others wait, the daemon started again on its state folder
// takes its jobs back from its journal: the stencil, which waited for it at a resize point, goes on
// over a new link; the others run; every result is right.
TEST(SchedulerDaemon, TheDaemonKilledMidWorkloadAndStartedAgainFinishesIt) {
  Pool pool;
  const std::string workload = R"({"jobs": [
    {"kind": "application", "submit": 0, "size": 1, "max_size": 3, "walltime": 300,
     "command": ["stencil", "--n", "1024", "--iterations", "3000", "--resize-every", "50", "--verify"]},
    {"kind": "application", "submit": 1.5, "size": 2, "walltime": 300, "command": ["lu", "--n", "1536", "--r", "192"]},
    {"kind": "application", "submit": 2, "size": 2, "walltime": 300, "resizable": false,
     "command": ["tsp", ")" DPS_TSPLIB_DIR R"(/att48.tsp"]}]})";
  const std::string command = pool.batch("pba-pr", workload);
  const char* argv[] = {"/bin/sh", "-c", command.c_str(), nullptr};
  pid_t first = -1;
  ASSERT_EQ(::posix_spawn(&first, argv[0], nullptr, nullptr, const_cast<char**>(argv), environ), 0);
  const auto queue = [&] {
    return text_of_command(std::string(DPS_CLIENTS) + "/dps-queue --state " + (pool.s.dir / "state-pba-pr").string());
  };
  std::string table;
  for (int k = 0; k < 400 && table.find("\"id\":1,\"nodes\"") == std::string::npos; ++k) {
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
    table = queue();
    if (table.find("\"state\":\"running\"") == std::string::npos) table.clear();
  }
  ASSERT_FALSE(table.empty()) << "the stencil never ran";
  ::kill(first, SIGKILL);
  ::waitpid(first, nullptr, 0);
  const Outcome r = pool.run("pba-pr", workload);
  ASSERT_EQ(r.status, 0) << r.errors;
  EXPECT_NE(r.errors.find("dps-scheduler: 3 jobs taken back from state-pba-pr/journal.sqlite"), std::string::npos)
      << r.errors;
  EXPECT_NE(r.last_line.find("\"jobs\": 3, \"failed\": 0"), std::string::npos) << r.last_line;
  EXPECT_NE(pool.output("pba-pr", 1).find("\"verified\": true"), std::string::npos) << pool.output("pba-pr", 1);
  EXPECT_NE(pool.output("pba-pr", 3).find("\"length\": 10628, \"optimal\": 10628"), std::string::npos);
}

// Cancelled as soon as dps-queue shows it grew: mid-redistribution, or just after. Its processes go,
// its hosts come back: a job of the whole pool runs next. (Its points are 200 iterations apart, a
// fraction of a second: a growth that did not pay, on a loaded machine, is undone at the next one,
// and the table must show it first.)
TEST(SchedulerDaemon, AJobCancelledWhileItGrowsFreesEveryHost) {
  Pool pool;
  Serving daemon(pool, "greedy-r");
  ASSERT_EQ(
      daemon.client("dps-submit", "--min 1 --max 4 -- stencil --n 2050 --iterations 100000 --resize-every 200").first,
      0);
  std::string table;
  for (int k = 0; k < 800; ++k) {
    table = daemon.client("dps-queue", "").second;
    if (table.find("\"nodes\":1,") == std::string::npos && table.find("\"state\":\"running\"") != std::string::npos)
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(table.find("\"nodes\":1,"), std::string::npos) << "it never grew: " << table;
  EXPECT_EQ(daemon.client("dps-cancel", "1").first, 0);
  ASSERT_EQ(daemon.client("dps-submit", "--nodes 4 -- tsp " DPS_TSPLIB_DIR "/gr17.tsp").first, 0);
  for (int k = 0; k < 400 && daemon.state_of(2) != "done"; ++k)
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  EXPECT_EQ(daemon.state_of(1), "cancelled");
  EXPECT_EQ(daemon.state_of(2), "done") << "the whole pool, free again";
  EXPECT_NE(std::system("pgrep -f '[s]tencil --n 2050' > /dev/null"), 0) << "a process of the cancelled job is left";
}

}  // namespace
}  // namespace dps
