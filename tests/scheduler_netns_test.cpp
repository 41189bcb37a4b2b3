// dps-scheduler on a cluster of network namespaces (tests/netns_cluster.hpp): the daemon in host 0, its
// pool hosts 1 to 3, each reached through the cluster's remote shell. A stencil that greedy-r grows
// runs its node processes in the hosts granted it, a TSP beside it, each result right.
#include "netns_cluster.hpp"

#include <dps/trace/reader.hpp>

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

namespace dps::test {
namespace {

TEST(SchedulerNetns, JobsRunOnTheHostsTheDaemonGrantsAcrossNamespaces) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for network namespaces, tc and cgroups (CI runs it as root)";
  NetnsCluster cluster(4, 1000, 50, "dpss-");
  ASSERT_TRUE(cluster.up) << cluster.up_output;
  Scratch files;
  const auto hosts = files.write("hosts", "10.77.0.2\n10.77.0.3\n10.77.0.4\n");
  // The remote shell, logging each host it is asked to reach: the daemon's and the jobs' node 0's.
  const auto rsh = files.write("rsh",
                               "#!/bin/sh\necho \"$1\" >> " + net::shell_word((files.dir / "reached").string()) +
                                   "\nexec " + cluster.script + " rsh --prefix " + cluster.prefix + " \"$@\"\n",
                               true);
  const auto workload = files.write("workload.json", R"({"jobs": [
    {"kind": "application", "submit": 0, "size": 1, "max_size": 3, "walltime": 120,
     "command": ["stencil", "--n", "1024", "--iterations", "600", "--resize-every", "30", "--verify"]},
    {"kind": "application", "submit": 0.5, "size": 1, "walltime": 120, "resizable": false,
     "command": ["tsp", ")" DPS_TSPLIB_DIR R"(/gr17.tsp"]}]})");
  const std::string command =
      "cd " + files.dir.string() + " && DPS_RSH=" + rsh.string() + " " + cluster.script + " exec --prefix " +
      cluster.prefix + " 0 " + DPS_SCHEDULER + " --hostfile " + hosts.string() +
      " --listen 10.77.0.1:0 --scheduler greedy-r --state state --logs logs --trace real.dpstrace --workload " +
      workload.string();
  std::string out;
  const int status = shell(command, out);
  ASSERT_EQ(status, 0) << out;
  EXPECT_NE(last_line(out).find("\"jobs\": 2, \"failed\": 0"), std::string::npos) << out;
  EXPECT_NE(last_line(files.read("logs/job-1.out")).find("\"verified\": true"), std::string::npos);
  EXPECT_NE(last_line(files.read("logs/job-2.out")).find("\"length\": 2085, \"optimal\": 2085"), std::string::npos);
  // Only pool hosts, more than one.
  std::set<std::string> reached;
  std::istringstream log(files.read("reached"));
  for (std::string host; std::getline(log, host);) reached.insert(host);
  EXPECT_GE(reached.size(), 2u) << "the stencil grew onto a second host";
  for (const std::string& host : reached)
    EXPECT_TRUE(host == "10.77.0.2" || host == "10.77.0.3" || host == "10.77.0.4") << host;
  const trace::Trace t = trace::read((files.dir / "real.dpstrace").string());
  std::set<std::uint32_t> held;
  for (const trace::Step& s : t.steps)
    if (t.names[s.operation] == "job 1") held.insert(s.node);
  EXPECT_GE(held.size(), 2u) << "job 1 held more than one node";
}

}  // namespace
}  // namespace dps::test
