// ClusterModel: the simulated cluster, read from a JSON file (which `calibrate` writes from
// measurements). Nodes come in groups that may differ (heterogeneous clusters); the network is a
// full-duplex star: a transfer of s bytes takes latency + s / bandwidth, each node's outgoing and
// incoming bandwidth shared among its concurrent transfers (Schaeli, Gerlach & Hersch, "A simulator for adaptive
// parallel applications", §4).
//
//   {
//     "groups":  [ { "name": "fast", "count": 4, "cores": 2, "speed": 1.0 },
//                  { "name": "slow", "count": 4, "cores": 1, "speed": 0.5, "workers": 2 } ],
//   (a group's "nodes_per_host": 4 puts every 4 consecutive nodes of it on one host whose `cores` they
//   share: node processes started on one machine, as `--nodes 4` does; "quota": 0.25 with
//   "quota_period_us": 4000 holds each host to a CPU quota, as a cgroup's cpu.max or a container's
//   CPU limit: full speed until it has used 1 ms of CPU in its 4 ms period, then nothing until the next)
//     "network": { "latency_us": 50, "bandwidth_MBps": 117.5, "sharing": "equal",
//                  "cpu_per_send": 0.05, "cpu_per_receive": 0.1, "cpu_per_message_us": 20,
//                  "cpu_per_received_MB_us": 250, "cpu_per_local_message_us": 0.4, "header_bytes": 0 }
//   }
//   (and, as calibrate writes it, where and when it was measured and whether to trust it:
//     "calibration": { "at": "2026-11-26T18:01:08+0000", "hosts": ["10.77.0.1", "10.77.0.2"],
//                      "trusted": false, "reason": "the calibration was not steady ..." })
//
// or, for a mesh of routers instead of a star (width × height must be the node count):
//     "network": { ..., "topology": { "kind": "mesh", "width": 4, "height": 2, "torus": false,
//                                      "link_bandwidth_MBps": 380, "hop_latency_us": 0.1 } }
// ("io_column": true adds a column of `height` I/O nodes on the west edge, the model's last nodes;
// "routers": [..] places node v on router routers[v], some routers empty; a group's "bandwidth_MBps"
// gives its nodes' links a bandwidth of their own: Mache's 64 MB/s I/O nodes)
// or for segments, one per node group, joined by a router (Weissman, "Scheduling Parallel Computations in a
// Heterogeneous Environment": r1 = 1.2 ms, r2 = 0.08 µs/byte):
//     "network": { ..., "topology": { "kind": "segments", "bandwidth_MBps": 1.25,
//                                      "router_latency_us": 1200, "router_bandwidth_MBps": 12.5 } }
//
//   auto model = dps::sim::ClusterModel::load("cluster.json", {"network.sharing=maxmin", "groups.0.count=16"});
//
// Speeds are relative to the machine running the simulation (direct execution) or to the machine the
// estimates of dps::compute were made on (partial direct execution). Bandwidth MB are 10^6 bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace dps::sim {

// A model that cannot be used; what() names the file and the field.
class ModelError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class CommCpu : std::uint8_t { Transfer, Link, Byte };

enum class Sharing {
  Equal,   // each of a link's n transfers gets bandwidth / n (Schaeli et al., §4)
  MaxMin,  // max-min fairness by progressive filling (what SimGrid does)
};

struct NodeGroup {
  std::string name;
  std::size_t count = 1;
  unsigned cores = 1;
  double speed = 1.0;    // relative: a step of t seconds at speed 1 takes t / speed
  unsigned workers = 0;  // steps that run at once, as the runtime's worker threads; 0: every one ready
  double bandwidth = 0;  // bytes per second of each node's link, each way; 0: the network's (mesh and segments only)
  int segment = -1;      // segments topology: the segment its nodes share (-1: one of its own, after the numbered ones)
  // Consecutive nodes of the group on one host: their steps and transfers share the host's `cores`, as
  // the processes of one machine do (each node may still use all of them when the others are idle).
  unsigned nodes_per_host = 1;
  // A CPU quota on each host (Linux CFS bandwidth control): `quota` cores' worth of CPU per period,
  // used at full speed, then the host's steps stop until the period ends. 0: none.
  double quota = 0;
  double quota_period = 0.1;  // seconds
  // Time slicing: with more steps running on a host than it has cores, the OS runs them in turns of
  // `time_slice` seconds, and each switch between them costs `context_switch` seconds of a core, so
  // the host does slice / (slice + switch) of the work meanwhile. 0: switches cost nothing.
  double time_slice = 0;
  double context_switch = 0;
};

enum class Topology {
  Star,  // every node linked to one switch (Schaeli et al., §4)
  Mesh,      // a 2-D mesh (or torus) of routers, one node each, XY routes (Mache)
  Segments,  // each node group shares one segment; segments joined by a router (Weissman)
};

// A mesh topology: node v at router (v mod width, v / width); each link between neighbouring routers
// carries `link_bandwidth` each way (0: the nodes' bandwidth), and each hop adds `hop_latency`.
// With an I/O column (Mache, "Parallel I/O- and Communication-Sensitive Scheduling on High-Performance Parallel
// Computers", ch. VII), the routers are (width + 1) × height: node v < width · height at (v mod width + 1, v / width),
// and the `height` nodes after them, the I/O nodes, at (0, v − width · height).
struct MeshShape {
  int width = 0, height = 0;
  bool torus = false;
  double link_bandwidth = 0;  // bytes per second
  double hop_latency = 0;     // seconds
  bool io_column = false;
  // Where each node sits: node v at router routers[v] (y · width + x), routers distinct; the mesh then
  // holds that many nodes, fewer than its routers if the placement leaves some empty. Empty: as above.
  std::vector<std::uint32_t> routers{};
  std::size_t nodes() const noexcept {  // the nodes it holds
    if (!routers.empty()) return routers.size();
    return static_cast<std::size_t>(width + (io_column ? 1 : 0)) * static_cast<std::size_t>(height);
  }
};

// Weissman's metasystem: the nodes of a group share its segment's bandwidth (0: the nodes'), and
// groups that name one "segment" share it; a message between segments crosses the router, which adds
// `router_latency` (r1) and passes `router_bandwidth` bytes per second (1 / r2) shared by the messages
// crossing it; with `router_per_pair`, each pair of segments has a router of its own, which only their
// messages share.
struct SegmentsShape {
  double bandwidth = 0;         // bytes per second
  double router_latency = 0;    // seconds
  double router_bandwidth = 0;  // bytes per second
  bool router_per_pair = false;  // a router of its own between each pair of segments (else one for all)
};

struct NetworkModel {
  double latency = 50e-6;        // seconds
  double bandwidth = 117.5e6;    // bytes per second, each direction of each node's link
  Sharing sharing = Sharing::Equal;
  double cpu_per_send = 0.0;     // fraction of a core used by each concurrent outgoing transfer
  double cpu_per_receive = 0.0;  // ... and by each concurrent incoming one
  // What those fractions are of:
  //   Transfer: each transfer in progress, its CPU taken first, the steps sharing what is left
  //             (Schaeli et al., §4);
  //   Link:     each direction of a node's link in use, however many transfers share it;
  //   Byte:     the link's full bandwidth: a transfer's CPU follows the bytes it moves, and the
  //             transfers and steps of a host share its cores max-min, a transfer going no faster
  //             than the CPU it gets at each end lets it (an OS sharing its cores among the threads
  //             that compute and those that copy to and from sockets). Star networks only; the
  //             links are shared max-min, whatever `sharing` says.
  CommCpu cpu_per = CommCpu::Transfer;
  double header_bytes = 0.0;     // added to every message between nodes
  // true: one connection per node pair, as TCP: a message waits for the one before it on its pair
  // (and its latency overlaps that wait). false: every message is a flow of its own (SimGrid's model).
  bool fifo = false;
  Topology topology = Topology::Star;
  MeshShape mesh;          // when topology is Mesh
  SegmentsShape segments;  // when topology is Segments
  // The CPU a message costs each end beyond its bytes' (system calls, wakeups, the runtime's handling),
  // in seconds at speed 1: its sender's when it is sent, its receiver's when it arrives.
  double cpu_per_message = 0.0;
  // The CPU a message between two threads of one node costs the step that posts it, in seconds at
  // speed 1: the runtime's handling alone (an envelope queued, its thread scheduled, the operation
  // resumed), which steps of a few microseconds pay as much as their own work.
  double cpu_per_local_message = 0.0;
  // The CPU each received byte costs its receiver before the message is handled, in seconds at speed 1:
  // the copy out of the socket into memory the process has not touched yet, and that memory's
  // first-touch page faults (an application keeps what it receives, so large messages land in fresh
  // pages). The node's network thread unpacks one message at a time, beside the steps.
  double cpu_per_received_byte = 0.0;
  // What one non-blocking write into an idle connection takes, in bytes: the sender's socket buffer.
  // A step copies up to that much of what it sends to each other node into the socket itself
  // (the runtime's direct writes), at cpu_per_send / bandwidth per byte, ahead of what it does next;
  // the transfer charges its source the sending CPU of the rest only. 0: the transfers pay it all.
  // With `flows` connections nothing is on its way to fill the buffer: each message finds it empty.
  double send_buffer = 0.0;
};

// Where and when a model was measured, and whether its figures hold: a model calibrate wrote from
// unsteady readings predicts what those readings said, and every simulation on it says so.
struct Calibration {
  std::string at;                  // when (ISO 8601); empty: a model not measured (written by hand)
  std::vector<std::string> hosts;  // the hosts measured, node 0's first
  bool trusted = true;
  std::string reason;  // why not, when not trusted
  // What a program using the model at `path` warns: "the model PATH is not to be trusted: REASON";
  // empty when it is trusted.
  std::string warning(std::string_view path) const;
};

struct ClusterModel {
  std::vector<NodeGroup> groups{NodeGroup{"nodes", 64, 1, 1.0}};
  NetworkModel network;
  Calibration calibration;

  std::size_t node_count() const noexcept;
  const NodeGroup& group_of(std::size_t node) const;  // node: 0 .. node_count() - 1

  // Parses and checks a model; `origin` (a file name) starts every error message.
  static ClusterModel parse(std::string_view json, std::string_view origin = "model",
                            const std::vector<std::string>& overrides = {});
  static ClusterModel load(const std::string& path, const std::vector<std::string>& overrides = {});
  // The defaults above with the overrides applied (no file).
  static ClusterModel defaults(const std::vector<std::string>& overrides = {});
  std::string to_json() const;  // what parse() reads back
};

}  // namespace dps::sim
