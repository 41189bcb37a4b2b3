// A cluster of hosts emulated on this machine (scripts/netns-cluster): a network namespace per host at
// 10.77.0.(i+1), each link limited with tc tbf, each host's CPU with a cgroup quota. Up while the
// object lives; needs root. Tests that use it hold the ctest lock "netns-cluster" (one subnet).
//
//   NetnsCluster cluster(4, 100, 50, "dpst-");    // 4 hosts, 100 Mbit/s links, half a core each
//   ASSERT_TRUE(cluster.up) << cluster.up_output;
//   shell(cluster.in_host(0, "DPS_RSH=" + ...) + " ./app --hostfile " + cluster.hostfile(files), out);
#pragma once

#include "processes.hpp"

#include <string>

namespace dps::test {

struct NetnsCluster {
  std::string script = std::string(DPS_SOURCE_DIR) + "/scripts/netns-cluster";
  int hosts;
  std::string prefix, up_output;
  bool up = false;

  NetnsCluster(int host_count, int mbit, int cpu_percent, std::string name_prefix)
      : hosts(host_count), prefix(std::move(name_prefix)) {
    up = shell(script + " up " + std::to_string(hosts) + " --rate " + std::to_string(mbit) + "mbit --cpu " +
                   std::to_string(cpu_percent) + " --prefix " + prefix,
               up_output) == 0;
  }
  ~NetnsCluster() {
    std::string out;
    shell(script + " down --prefix " + prefix, out);
  }

  // A hostfile naming every host, one slot each.
  std::string hostfile(const Scratch& files) const {
    std::string text;
    for (int i = 0; i < hosts; ++i) text += "10.77.0." + std::to_string(i + 1) + "\n";
    return files.write("hosts", text).string();
  }
  // Shell words that run a command in host `i`, where node 0 starts the others through the cluster's rsh.
  std::string in_host(int i, const std::string& environment = "") const {
    return environment + " DPS_RSH=" + net::shell_word(script + " rsh --prefix " + prefix) + " " + script +
           " exec --prefix " + prefix + " " + std::to_string(i);
  }
};

}  // namespace dps::test
