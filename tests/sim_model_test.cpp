// Cluster model files: what they hold, and a one-line error naming the field for every bad one.
#include <dps/sim/model.hpp>

#include <gtest/gtest.h>

#include <string>

namespace dps::sim {
namespace {

const std::string kGood = R"({
  "groups": [ { "name": "fast", "count": 4, "cores": 2, "speed": 1.0, "workers": 3, "nodes_per_host": 2 },
              { "name": "slow", "count": 2, "speed": 0.5, "quota": 0.25, "quota_period_us": 4000,
                "time_slice_us": 3000, "context_switch_us": 20 } ],
  "network": { "latency_us": 1350, "bandwidth_MBps": 11.85, "sharing": "equal",
               "cpu_per_send": 0.1, "cpu_per_receive": 0.2, "cpu_per_message_us": 20,
               "cpu_per_received_MB_us": 250, "cpu_per_local_message_us": 0.4,
               "send_buffer_bytes": 2500000 }
})";

std::string error_of(const std::string& json, const std::vector<std::string>& overrides = {}) {
  try {
    ClusterModel::parse(json, "cluster.json", overrides);
  } catch (const ModelError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SimModel, ReadsGroupsAndNetworkInSiUnits) {
  const ClusterModel m = ClusterModel::parse(kGood);
  ASSERT_EQ(m.groups.size(), 2u);
  EXPECT_EQ(m.node_count(), 6u);
  EXPECT_EQ(m.groups[0].cores, 2u);
  EXPECT_EQ(m.groups[1].cores, 1u) << "cores default to 1";
  EXPECT_EQ(m.groups[0].workers, 3u);
  EXPECT_EQ(m.groups[1].workers, 0u) << "no limit on the steps running at once by default";
  EXPECT_EQ(m.groups[0].nodes_per_host, 2u);
  EXPECT_EQ(m.groups[1].nodes_per_host, 1u) << "a host of its own by default";
  EXPECT_DOUBLE_EQ(m.groups[1].quota, 0.25);
  EXPECT_DOUBLE_EQ(m.groups[1].quota_period, 0.004);
  EXPECT_DOUBLE_EQ(m.groups[0].quota, 0.0) << "no quota by default";
  EXPECT_EQ(m.group_of(3).name, "fast");
  EXPECT_EQ(m.group_of(4).name, "slow");
  EXPECT_DOUBLE_EQ(m.network.latency, 1350e-6);
  EXPECT_DOUBLE_EQ(m.network.bandwidth, 11.85e6);
  EXPECT_EQ(m.network.sharing, Sharing::Equal);
  EXPECT_DOUBLE_EQ(m.network.cpu_per_receive, 0.2);
  EXPECT_DOUBLE_EQ(m.network.header_bytes, 0.0);
  EXPECT_DOUBLE_EQ(m.network.cpu_per_message, 20e-6);
  EXPECT_DOUBLE_EQ(ClusterModel::defaults().network.cpu_per_message, 0.0) << "none by default";
  EXPECT_DOUBLE_EQ(m.network.cpu_per_received_byte, 250e-12);
  EXPECT_DOUBLE_EQ(ClusterModel::defaults().network.cpu_per_received_byte, 0.0) << "none by default";
  EXPECT_DOUBLE_EQ(m.network.cpu_per_local_message, 0.4e-6);
  EXPECT_DOUBLE_EQ(ClusterModel::defaults().network.cpu_per_local_message, 0.0) << "none by default";
  EXPECT_DOUBLE_EQ(m.network.send_buffer, 2.5e6);
  EXPECT_DOUBLE_EQ(ClusterModel::defaults().network.send_buffer, 0.0) << "the transfers pay all by default";
}

TEST(SimModel, WritesWhatItReads) {
  const ClusterModel m = ClusterModel::parse(kGood);
  const ClusterModel again = ClusterModel::parse(m.to_json());
  EXPECT_EQ(again.to_json(), m.to_json());
  EXPECT_EQ(again.node_count(), 6u);
  EXPECT_EQ(again.groups[0].workers, 3u);
  EXPECT_EQ(again.groups[0].nodes_per_host, 2u);
  EXPECT_DOUBLE_EQ(again.groups[1].quota_period, 0.004);
  EXPECT_DOUBLE_EQ(again.network.cpu_per_message, 20e-6);
  EXPECT_DOUBLE_EQ(again.network.cpu_per_received_byte, 250e-12);
  EXPECT_DOUBLE_EQ(again.network.cpu_per_local_message, 0.4e-6);
  EXPECT_DOUBLE_EQ(again.network.send_buffer, 2.5e6);
  EXPECT_DOUBLE_EQ(again.groups[1].time_slice, 3e-3);
  EXPECT_DOUBLE_EQ(again.groups[1].context_switch, 20e-6);
  EXPECT_DOUBLE_EQ(again.groups[0].context_switch, 0.0) << "none by default";
}

TEST(SimModel, OverridesChangeFieldsBeforeTheyAreChecked) {
  const ClusterModel m = ClusterModel::parse(kGood, "cluster.json", {"network.sharing=maxmin", "groups.1.count=10"});
  EXPECT_EQ(m.network.sharing, Sharing::MaxMin);
  EXPECT_EQ(m.node_count(), 14u);
  EXPECT_EQ(error_of(kGood, {"network.latency_us=-3"}), "cluster.json: network.latency_us must not be negative, got -3");
  EXPECT_EQ(error_of(kGood, {"network.send_buffer_bytes=-1"}),
            "cluster.json: network.send_buffer_bytes must not be negative, got -1");
  EXPECT_EQ(error_of(kGood, {"groups.1.time_slice_us=0"}),
            "cluster.json: groups[1].time_slice_us must be positive with a context_switch_us, got 0");
  EXPECT_EQ(error_of(kGood, {"groups.5.count=1"}), "cluster.json: override 'groups.5.count=1' indexes past the end of a list");
  EXPECT_EQ(error_of(kGood, {"latency"}), "cluster.json: override 'latency' must be PATH=VALUE, e.g. network.latency_us=2");
  EXPECT_EQ(ClusterModel::defaults({"groups.0.count=8"}).node_count(), 8u);
  const ClusterModel bytes = ClusterModel::parse(kGood, "cluster.json", {"network.cpu_per=byte"});
  EXPECT_EQ(bytes.network.cpu_per, CommCpu::Byte);
  EXPECT_EQ(ClusterModel::parse(bytes.to_json()).network.cpu_per, CommCpu::Byte) << "written as read";
  EXPECT_EQ(error_of(kGood, {"network.cpu_per=bytes"}),
            R"(cluster.json: network.cpu_per must be "transfer", "link" or "byte", got "bytes")");
  EXPECT_EQ(error_of(kGood, {"network.cpu_per=byte", R"(network.topology={"kind": "mesh", "width": 3, "height": 2})"}),
            R"(cluster.json: network.cpu_per "byte" needs a star network)");
}

TEST(SimModel, EveryBadModelNamesItsField) {
  auto with = [](const std::string& from, const std::string& to) {
    std::string json = kGood;
    json.replace(json.find(from), from.size(), to);
    return json;
  };
  EXPECT_EQ(error_of(with(R"("latency_us": 1350, )", "")), "cluster.json: network.latency_us is missing");
  EXPECT_EQ(error_of(with("11.85", "-1")), "cluster.json: network.bandwidth_MBps must be positive, got -1");
  EXPECT_EQ(error_of(with("11.85", "0")), "cluster.json: network.bandwidth_MBps must be positive, got 0");
  EXPECT_EQ(error_of(with(R"("equal")", R"("fair")")),
            R"(cluster.json: network.sharing must be "equal" or "maxmin", got "fair")");
  EXPECT_EQ(error_of(with(R"("count": 4)", R"("count": 0)")),
            "cluster.json: groups[0].count must be a positive integer, got 0");
  EXPECT_EQ(error_of(with(R"("workers": 3)", R"("workers": 0)")),
            "cluster.json: groups[0].workers must be a positive integer, got 0");
  EXPECT_EQ(error_of(with(R"("nodes_per_host": 2)", R"("nodes_per_host": 3)")),
            "cluster.json: groups[0].nodes_per_host must divide the group's count (4), got 3");
  EXPECT_EQ(error_of(with(R"("quota": 0.25)", R"("quota": 1.5)")),
            "cluster.json: groups[1].quota must be at most the host's cores (1), got 1.5");
  EXPECT_EQ(error_of(with(R"("quota_period_us": 4000)", R"("quota_period_us": 10)")),
            "cluster.json: groups[1].quota_period_us must be from 100 to 1000000, got 10");
  EXPECT_EQ(error_of(with(R"("cpu_per_message_us": 20)", R"("cpu_per_message_us": "a few")")),
            R"(cluster.json: network.cpu_per_message_us must be a number, got "a few")");
  EXPECT_EQ(error_of(with(R"("speed": 0.5)", R"("speed": "fast")")),
            R"(cluster.json: groups[1].speed must be a number, got "fast")");
  EXPECT_EQ(error_of(with(R"("cores": 2)", R"("cores": 2, "memory": 4)")),
            "cluster.json: groups[0].memory is not a field of the model");
  EXPECT_EQ(error_of(with("\"cpu_per_send\": 0.1", "\"cpu_per_send\": -0.1")),
            "cluster.json: network.cpu_per_send must not be negative, got -0.1");
  EXPECT_EQ(error_of(R"({"groups": [], "network": {}})"), "cluster.json: groups must be a non-empty list of node groups");
  EXPECT_EQ(error_of("{\"groups\": "), "cluster.json: is not JSON: parse error at line 1, column 12: syntax error while parsing value - unexpected end of input; expected '[', '{', or a literal");
  EXPECT_EQ(error_of("[1, 2]"), "cluster.json: the model must be an object");
}

// Where and when calibrate measured a model, and whether to trust it, read back as written; a model
// written by hand has no record and is trusted.
TEST(SimModel, RecordsWhereAndWhenItWasMeasuredAndWhetherToTrustIt) {
  EXPECT_TRUE(ClusterModel::parse(kGood).calibration.trusted);
  EXPECT_TRUE(ClusterModel::parse(kGood).calibration.at.empty());
  EXPECT_EQ(ClusterModel::parse(kGood).to_json().find("calibration"), std::string::npos) << "nothing to record";
  std::string json = kGood;
  json.insert(json.rfind('}'), R"(, "calibration": {"at": "2026-11-26T18:01:08+0000", "hosts": ["n1 10.0.0.1", "n2 10.0.0.2"],
                                  "trusted": false, "reason": "the speed readings did not settle"})");
  const ClusterModel m = ClusterModel::parse(json);
  EXPECT_EQ(m.calibration.at, "2026-11-26T18:01:08+0000");
  EXPECT_EQ(m.calibration.hosts, (std::vector<std::string>{"n1 10.0.0.1", "n2 10.0.0.2"}));
  EXPECT_FALSE(m.calibration.trusted);
  EXPECT_EQ(m.calibration.reason, "the speed readings did not settle");
  EXPECT_EQ(m.calibration.warning("c.json"), "the model c.json is not to be trusted: the speed readings did not settle");
  EXPECT_EQ(ClusterModel::parse(kGood).calibration.warning("c.json"), "") << "a trusted model says nothing";
  const ClusterModel again = ClusterModel::parse(m.to_json());
  EXPECT_EQ(again.to_json(), m.to_json());
  EXPECT_FALSE(again.calibration.trusted);

  auto with = [&](const std::string& calibration) {
    std::string bad = kGood;
    bad.insert(bad.rfind('}'), ", \"calibration\": " + calibration);
    return error_of(bad);
  };
  EXPECT_EQ(with(R"({"trusted": "no", "reason": "r"})"), R"(cluster.json: calibration.trusted must be true or false, got "no")");
  EXPECT_EQ(with(R"({"trusted": false})"), "cluster.json: calibration.reason must say why the model is not trusted");
  EXPECT_EQ(with(R"({"hosts": "n1"})"), R"(cluster.json: calibration.hosts must be a list of host names, got "n1")");
  EXPECT_EQ(with(R"({"at": 2026})"), "cluster.json: calibration.at must be a string, got 2026");
  EXPECT_EQ(with(R"({"when": "now"})"), "cluster.json: calibration.when is not a field of the model");
}

// A mesh of routers, one node each (Mache, "Parallel I/O- and Communication-Sensitive Scheduling on High-Performance
// Parallel Computers"), instead of the star; what does not fit is one line.
TEST(SimModel, AMeshTopologyHoldsOneNodePerRouter) {
  const std::string mesh = ", \"topology\": {\"kind\": \"mesh\", \"width\": 3, \"height\": 2, \"link_bandwidth_MBps\": 380, \"hop_latency_us\": 0.5}";
  std::string text = kGood;
  text.insert(text.rfind('}', text.rfind('}') - 1), mesh);
  const ClusterModel m = ClusterModel::parse(text);
  EXPECT_EQ(m.network.topology, Topology::Mesh);
  EXPECT_EQ(m.network.mesh.width, 3);
  EXPECT_EQ(m.network.mesh.height, 2);
  EXPECT_FALSE(m.network.mesh.torus);
  EXPECT_DOUBLE_EQ(m.network.mesh.link_bandwidth, 380e6);
  EXPECT_DOUBLE_EQ(m.network.mesh.hop_latency, 0.5e-6);
  EXPECT_EQ(ClusterModel::parse(m.to_json()).to_json(), m.to_json());
  EXPECT_EQ(ClusterModel::parse(kGood).network.topology, Topology::Star) << "the star unless the file says otherwise";
  EXPECT_EQ(error_of(text, {"network.topology.width=4"}),
            "cluster.json: network.topology is a 4x2 mesh of 8 routers, one per node, but the groups have 6 nodes");
  EXPECT_EQ(error_of(text, {"network.topology.kind=ring"}),
            "cluster.json: network.topology.kind must be \"star\", \"mesh\" or \"segments\", got \"ring\"");
  EXPECT_EQ(error_of(text, {"network.topology.torus=true"}), "cluster.json: network.topology is a torus: its sides must be 3 or more");
  EXPECT_EQ(error_of(text, {"network.topology.depth=2"}), "cluster.json: network.topology.depth is not a field of the model");
}

// Mache's I/O nodes: a column west of the mesh, `height` more nodes, the model's last; a group's own
// bandwidth (their 64 MB/s), which a star cannot have.
TEST(SimModel, AMeshWithAColumnOfIoNodesAndTheirBandwidth) {
  const std::string mesh = ", \"topology\": {\"kind\": \"mesh\", \"width\": 2, \"height\": 2, \"io_column\": true}";
  std::string text = kGood;
  text.insert(text.rfind('}', text.rfind('}') - 1), mesh);
  const ClusterModel m = ClusterModel::parse(text, "cluster.json", {"groups.1.bandwidth_MBps=64"});
  EXPECT_TRUE(m.network.mesh.io_column);
  EXPECT_EQ(m.network.mesh.nodes(), 6u);
  EXPECT_DOUBLE_EQ(m.groups[1].bandwidth, 64e6);
  EXPECT_EQ(ClusterModel::parse(m.to_json()).to_json(), m.to_json());
  EXPECT_EQ(error_of(text, {"network.topology.io_column=false"}),
            "cluster.json: network.topology is a 2x2 mesh of 4 routers, one per node, but the groups have 6 nodes");
  EXPECT_EQ(error_of(text, {"network.topology.width=3"}),
            "cluster.json: network.topology is a 3x2 mesh with a column of I/O nodes of 8 routers, one per node, but the groups have 6 nodes");
  EXPECT_EQ(error_of(text, {"network.topology.io_column=1"}), "cluster.json: network.topology.io_column must be true or false, got 1");
  EXPECT_EQ(error_of(kGood, {"groups.0.bandwidth_MBps=64"}),
            "cluster.json: groups[0].bandwidth_MBps needs a mesh or segments topology: a star's links all have the network's");
}

// Nodes placed on chosen routers of a larger mesh (an application's placement): distinct routers
// inside it, as many as the nodes.
TEST(SimModel, AMeshPlacesEachNodeOnTheRouterItNames) {
  const std::string mesh = ", \"topology\": {\"kind\": \"mesh\", \"width\": 4, \"height\": 4, \"routers\": [0, 5, 10, 15, 3, 12]}";
  std::string text = kGood;
  text.insert(text.rfind('}', text.rfind('}') - 1), mesh);
  const ClusterModel m = ClusterModel::parse(text);
  EXPECT_EQ(m.network.mesh.routers, (std::vector<std::uint32_t>{0, 5, 10, 15, 3, 12}));
  EXPECT_EQ(ClusterModel::parse(m.to_json()).to_json(), m.to_json());
  EXPECT_EQ(error_of(text, {"network.topology.routers=[0, 5, 10, 15, 3, 16]"}),
            "cluster.json: network.topology.routers must hold router numbers from 0 to 15, got 16");
  EXPECT_EQ(error_of(text, {"network.topology.routers=[0, 5, 10, 15, 3, 5]"}), "cluster.json: network.topology.routers places two nodes on router 5");
  EXPECT_EQ(error_of(text, {"network.topology.routers=[0, 5]"}),
            "cluster.json: network.topology is a 4x4 mesh with 2 nodes placed, but the groups have 6 nodes");
}

// Groups that name one segment share it (the random placement of Weissman ("Scheduling Parallel Computations in a
// Heterogeneous Environment"): processors of one cluster scattered along the node order).
TEST(SimModel, GroupsThatNameOneSegmentShareIt) {
  const std::string segments = ", \"topology\": {\"kind\": \"segments\", \"router_latency_us\": 1200, \"router_bandwidth_MBps\": 12.5}";
  std::string text = kGood;
  text.insert(text.rfind('}', text.rfind('}') - 1), segments);
  const ClusterModel m = ClusterModel::parse(text, "cluster.json", {"groups.0.segment=1", "groups.1.segment=0"});
  EXPECT_EQ(m.groups[0].segment, 1);
  EXPECT_EQ(ClusterModel::parse(m.to_json()).to_json(), m.to_json());
  EXPECT_EQ(error_of(text, {"groups.0.segment=-1"}), "cluster.json: groups[0].segment must be an integer from 0 to 65535, got -1");
  EXPECT_EQ(error_of(kGood, {"groups.0.segment=0"}), "cluster.json: groups[0].segment needs the segments topology");
}

// Weissman's segments, one per node group, and the router between them.
TEST(SimModel, SegmentsJoinedByARouter) {
  const std::string segments =
      ", \"topology\": {\"kind\": \"segments\", \"bandwidth_MBps\": 1.25, \"router_latency_us\": 1200, \"router_bandwidth_MBps\": 12.5}";
  std::string text = kGood;
  text.insert(text.rfind('}', text.rfind('}') - 1), segments);
  const ClusterModel m = ClusterModel::parse(text);
  EXPECT_EQ(m.network.topology, Topology::Segments);
  EXPECT_DOUBLE_EQ(m.network.segments.bandwidth, 1.25e6);
  EXPECT_DOUBLE_EQ(m.network.segments.router_latency, 1.2e-3);
  EXPECT_DOUBLE_EQ(m.network.segments.router_bandwidth, 12.5e6);
  EXPECT_EQ(ClusterModel::parse(m.to_json()).to_json(), m.to_json());
  EXPECT_EQ(error_of(text, {"network.topology.router_bandwidth_MBps=0"}),
            "cluster.json: network.topology.router_bandwidth_MBps must be positive, got 0");
  EXPECT_EQ(error_of(text, {"network.topology.width=2"}), "cluster.json: network.topology.width is not a field of the model");
  EXPECT_TRUE(ClusterModel::parse(text, "cluster.json", {"network.topology.router_per_pair=true"}).network.segments.router_per_pair);
  EXPECT_EQ(error_of(text, {"network.topology.router_per_pair=2"}), "cluster.json: network.topology.router_per_pair must be true or false, got 2");
}

TEST(SimModel, AMissingFileIsAnError) {
  EXPECT_THROW(ClusterModel::load("/nonexistent/cluster.json"), ModelError);
}

}  // namespace
}  // namespace dps::sim
