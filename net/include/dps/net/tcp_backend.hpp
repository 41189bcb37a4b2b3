// TcpBackend: the backend of real runs on a cluster. One process per node, all running the same
// executable; node 0 runs `main` and makes the calls, the others serve: they host their share of the
// DPS threads (strands on a TBB arena, as in LocalBackend) and keep a replica of the structure node 0
// owns. One TCP connection per pair of nodes (TCP_NODELAY), framed messages, cereal payloads;
// envelopes between threads of one node are moved, never serialized.
//
// dps::Application picks it from the command line and the environment:
//   app --nodes 4                  node 0 starts 3 more processes of `app` on this machine
//   app --hostfile hosts           ... on the hosts of the file, over ssh (or $DPS_RSH)
//   app --hostfile hosts --ports 40000-40100    every node process listens on a port of that range
//   DPS_COORDINATOR=host0:7077 DPS_SECRET=... srun -n 4 app      (or mpirun): ranks become nodes
// The instances node 0 starts find DPS_NODE, DPS_COORDINATOR and DPS_SECRET in their environment.
//
// Every connection proves it knows the application's secret (HMAC challenge-response) before it
// may carry anything; a frame that is malformed, oversized or unauthenticated closes its connection
// with a logged reason. Clocks are aligned on node 0's at start, so traces from all nodes line up.
//
// It is a front over three parts (net/src): the transport (sockets, framing, the handshake,
// heartbeats), membership (joining, leaving, failures, the clock) and replication (the structure,
// envelopes, threads that move, calls: the kernel's ClusterLink); remote traces are a fourth.
#pragma once

#include "dps/backend.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dps::net {

// The ports the node processes listen on, both ends included (--ports); by default, any the system
// gives. Only listening sockets: connections a process opens leave from ports the system picks.
struct PortRange {
  std::uint16_t first = 0, last = 0;  // 0: any

  // "LOW-HIGH", e.g. "40000-40100"; throws std::invalid_argument with a one-line reason.
  static PortRange parse(const std::string& text);
  bool any() const noexcept { return first == 0; }
  bool holds(std::uint16_t port) const noexcept { return any() || (port >= first && port <= last); }
  std::string text() const;  // "40000-40100"
};

struct TcpOptions {
  std::size_t nodes = 0;              // node 0: processes of the application (itself included);
                                      // 0: the hostfile's slots, else 1
  std::string hostfile;               // node 0: start the others on these hosts (RemoteLauncher)
  std::vector<std::string> hosts;     // node 0 of a real cluster's job: node n on hosts[n] (node 0's first),
                                      // the nodes added later on the hosts its scheduler grants
  std::size_t workers = 0;            // OS threads running DPS threads in each process; 0: the host's
                                      // cores shared among the node processes on it
  std::vector<std::string> argv;      // node 0: what the other instances run (argv[0] is replaced)
  PortRange ports;                    // where this process listens (the instances read --ports from argv)
  std::size_t max_frame = 1u << 30;   // a larger frame closes its connection
  double join_timeout = 30;           // seconds node 0 waits for the instances it started
  double heartbeat = 0.5;             // seconds between heartbeats on a connection with nothing to send
  double silence = 3;                 // a peer silent this long has failed (hung, or its network is down)
  double poll_us = 50;                // the network thread polls this long after running a thread ($DPS_POLL_US)
};

class TcpBackend final : public Backend {
 public:
  // Node 0 when DPS_NODE is unset (it starts the others), else the instance DPS_NODE names.
  // Throws std::runtime_error with a one-line reason when the application cannot form.
  explicit TcpBackend(TcpOptions options);
  ~TcpBackend() override;

  // Backend
  std::string_view name() const override { return "tcp"; }
  void attach(Runtime& runtime) override;  // links the runtime to the replication (its ClusterLink)
  std::vector<NodeId> nodes() const override;
  NodeId local_node() const override;
  bool hosts(NodeId node) const override;
  NodeId add_node() override;
  std::vector<NodeId> add_nodes(std::size_t count) override;  // their instances start together
  bool can_add_nodes() const override;
  std::size_t workers() const noexcept override;  // this process's (TcpOptions::workers)
  void remove_node(NodeId node) override;
  int scheduler_socket() override;  // DPS_CLUSTER_ADDRESS's, as job DPS_CLUSTER_JOB
  void grant_hosts(std::vector<std::string> hosts) override;
  std::string released_host(NodeId node) override;
  std::vector<std::string> held_hosts() const override;
  void schedule(Thread& thread, Priority priority) override;
  void send(NodeId from, Thread& to, Envelope* e) override;
  bool migrate(Thread& thread, NodeId to, std::string state, std::function<void(std::exception_ptr)> arrived) override;
  void quiesce() override;
  void stop() override;
  double now() const override;
  unsigned cores(NodeId node) const override;  // node 0 knows every node's
  int serve() override;
  // Fault tolerance: each thread's checkpoints go to the next live node (net/src/backups.hpp).
  bool keeps_backups() const override { return true; }
  void keep_backup(Thread& thread, std::shared_ptr<const detail::Checkpoint> checkpoint) override;
  Backup backup(std::uint64_t uid, bool with_checkpoint) const override;

  // Where this process listens ("address:port"), and the process id of a node's instance (node 0).
  std::string address() const;
  long process_id(NodeId node) const;
  // The send buffer of this process's connection to `node`, as the kernel has grown it: what one
  // non-blocking write takes when the connection is idle (calibrate's send_buffer). 0: no connection.
  std::size_t send_buffer(NodeId node) const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace dps::net
