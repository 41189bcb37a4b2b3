// calibrate on four namespaced hosts (scripts/netns-cluster) whose links are limited to 100 Mbit/s and
// whose CPU to half a core: the model it writes must say so (its figures checked in measuring builds,
// measuring.hpp). Needs root; skips with a message otherwise.
#include "measuring.hpp"
#include "netns_cluster.hpp"
#include "processes.hpp"

#include <dps/sim/model.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

namespace dps::test {
namespace {

constexpr int kHosts = 4, kMbit = 100, kCpuPercent = 50;

TEST(Calibrate, MeasuresTheLinksAndTheCpuShareOfANamespacedCluster) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root for network namespaces, tc and cgroups (CI runs it as root)";
  NetnsCluster cluster(kHosts, kMbit, kCpuPercent, "dpsc-");
  ASSERT_TRUE(cluster.up) << cluster.up_output;
  Scratch files;
  const std::string model_path = (files.dir / "cluster.json").string();
  std::string out;
  // Where the figures are not checked (sanitizer builds), the shortest run gives the same structure.
  const std::string effort = kMeasures ? " --seconds 2 --rounds 3" : " --seconds 0.3 --rounds 3";
  const int status = shell(cluster.in_host(0) + " " + net::shell_word(CALIBRATE) + " --hostfile " +
                               cluster.hostfile(files) + " --out " + model_path + effort + " --bytes 1048576",
                           out);
  ASSERT_EQ(status, 0) << out;
  std::printf("%s", out.c_str());
  const sim::ClusterModel model = sim::ClusterModel::load(model_path);

  ASSERT_EQ(model.node_count(), static_cast<std::size_t>(kHosts));
  std::vector<double> speeds;
  for (const sim::NodeGroup& g : model.groups) {
    EXPECT_EQ(g.cores, 1u) << g.name << ": half a core rounds down to one";
    EXPECT_EQ(g.nodes_per_host, 1u) << g.name << ": each namespace is a host of its own";
    EXPECT_EQ(g.quota, 0.0) << g.name << ": a quota is modelled only with --quotas";
    EXPECT_GT(g.speed, 0.0) << g.name;
    speeds.insert(speeds.end(), g.count, g.speed);
  }
  EXPECT_GT(model.network.bandwidth, 0.0);
  EXPECT_GT(model.network.latency, 0.0);
  EXPECT_GT(model.network.cpu_per_send, 0.0) << "sending costs some CPU";
  EXPECT_GT(model.network.cpu_per_receive, 0.0);
  EXPECT_GE(model.network.cpu_per_message, 0.0);
  EXPECT_GE(model.network.cpu_per_received_byte, 0.0);
  EXPECT_GT(model.network.cpu_per_local_message, 0.0) << "a message that stays on its node costs the runtime some CPU";
  EXPECT_GE(model.network.send_buffer, 4096.0) << "a TCP socket's send buffer";
  EXPECT_GE(model.groups[0].time_slice, 0.0);
  EXPECT_GE(model.groups[0].context_switch, 0.0);
  if (kMeasures) {  // the figures, where the build does not slow what it measures
    // A loop gets half of a core's time: about 0.5, where unthrottled would be about 1. One node's
    // figure comes from one loop, which has read from 0.24 to 0.79 on these identical hosts (thread
    // CPU time varies when the machine's other CPU is busy); their median is steadier.
    for (const double speed : speeds) {
      EXPECT_GT(speed, 0.15);
      EXPECT_LT(speed, 0.95) << "throttled";
    }
    std::sort(speeds.begin(), speeds.end());
    const double median = (speeds[speeds.size() / 2 - 1] + speeds[speeds.size() / 2]) / 2;  // kHosts is even
    EXPECT_GT(median, 0.3);
    EXPECT_LT(median, 0.85) << "unthrottled would be about 1";
    const double link = kMbit * 1e6 / 8;  // bytes per second, before TCP/IP headers
    EXPECT_GT(model.network.bandwidth, 0.7 * link);
    EXPECT_LT(model.network.bandwidth, 1.05 * link);
    EXPECT_LT(model.network.latency, 5e-3);
    EXPECT_LT(model.network.cpu_per_send, 0.5) << "at 12.5 MB/s, far from a core";
    EXPECT_LT(model.network.cpu_per_receive, 0.5);
    EXPECT_LT(model.network.cpu_per_message, model.network.latency)
        << "an empty message's CPU at each end, within its trip";
    // Fresh pages cost their faults (about 0.8 ms per MB in this virtual machine), far more than a
    // copy into pages already touched; thread CPU time, so the quota does not count.
    EXPECT_GT(model.network.cpu_per_received_byte, 50e-12) << "first touch costs more than 50 us per MB";
    EXPECT_LT(model.network.cpu_per_received_byte, 20e-9) << "and less than 20 ms per MB";
    // The runtime's handling of a message between threads of a node: about 0.2 us on these CPUs, at
    // speed 1 (the half core's wall time times its speed).
    EXPECT_GT(model.network.cpu_per_local_message, 20e-9);
    EXPECT_LT(model.network.cpu_per_local_message, 20e-6) << "far less than a message between nodes";
    // Two busy threads on one CPU take turns: Linux gives them a few milliseconds each (CFS's slice),
    // and a switch costs microseconds.
    EXPECT_GT(model.groups[0].time_slice, 0.2e-3);
    EXPECT_LT(model.groups[0].time_slice, 100e-3);
    EXPECT_LT(model.groups[0].context_switch, model.groups[0].time_slice / 10);
  }
  const std::string json = out.substr(out.rfind('{'));
  EXPECT_EQ(json.find("\"nodes\": 4"), 1u) << "the last line is the JSON";
  EXPECT_NE(json.find("\"speed_spread\": "), std::string::npos) << "calibrate reports its confidence";
  EXPECT_NE(json.find("\"steady\": "), std::string::npos);
  EXPECT_NE(json.find("\"cpu_per_message_us\": "), std::string::npos);
  EXPECT_NE(json.find("\"cpu_per_received_MB_us\": "), std::string::npos);
  EXPECT_NE(json.find("\"cpu_per_local_message_us\": "), std::string::npos);
  EXPECT_NE(json.find("\"send_buffer_bytes\": "), std::string::npos);
  EXPECT_NE(json.find("\"time_slice_us\": "), std::string::npos);
  EXPECT_NE(json.find("\"context_switch_us\": "), std::string::npos);
  // Where and when, and whether to trust it: said in the JSON and recorded in the model.
  EXPECT_NE(json.find(model.calibration.trusted ? "\"trusted\": true" : "\"trusted\": false"), std::string::npos) << json;
  EXPECT_EQ(model.calibration.trusted, json.find("\"steady\": true") != std::string::npos) << json;
  EXPECT_EQ(model.calibration.reason.empty(), model.calibration.trusted);
  ASSERT_EQ(model.calibration.hosts.size(), static_cast<std::size_t>(kHosts));
  for (int i = 0; i < kHosts; ++i)  // the hosts' addresses tell the namespaced hosts apart
    EXPECT_NE(model.calibration.hosts[static_cast<std::size_t>(i)].find("10.77.0." + std::to_string(i + 1)), std::string::npos)
        << model.calibration.hosts[static_cast<std::size_t>(i)];
  EXPECT_EQ(model.calibration.at.size(), 24u) << "ISO 8601 with the zone: " << model.calibration.at;
}

// Node processes started on one machine (--nodes 3) share its cores: one host holding the three, each
// process running the workers the runtime gives it (the machine's CPUs over the three).
TEST(Calibrate, NodeProcessesOnOneMachineAreOneHost) {
  Scratch files;
  const std::string model_path = (files.dir / "local.json").string();
  std::string out;
  const int status = shell(net::shell_word(CALIBRATE) + " --nodes 3 --seconds 0.2 --pairs 1 --out " + model_path, out);
  ASSERT_EQ(status, 0) << out;
  const sim::ClusterModel model = sim::ClusterModel::load(model_path);
  ASSERT_EQ(model.groups.size(), 1u) << out;
  EXPECT_EQ(model.groups[0].count, 3u);
  EXPECT_EQ(model.groups[0].nodes_per_host, 3u);
  EXPECT_EQ(model.groups[0].workers, std::max(1u, std::thread::hardware_concurrency() / 3)) << out;
}

}  // namespace
}  // namespace dps::test
