// Membership: which node processes form the application. Who this process is (node 0, an instance
// node 0 started, or a rank of srun or mpirun); node 0 starting the instances, each joining and
// meeting the others; nodes added and removed while the application runs; the loss of a node;
// aligning every node's clock on node 0's; and the application's end.
//
//   Membership membership(process, identity, options, transport, traces);
//   membership.form();                           // in every process: throws with a one-line reason
//   membership.add_nodes(2, catch_up);           // node 0
//   int status = membership.serve();             // the others: once node 0 ended the application
#pragma once

#include "incoming.hpp"
#include "node_process.hpp"
#include "remote_trace.hpp"
#include "transport.hpp"

#include "dps/net/auth.hpp"
#include "dps/net/launcher.hpp"
#include "dps/net/protocol.hpp"
#include "dps/net/tcp_backend.hpp"

#include <asio.hpp>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace dps::net {

// Who this process is, from its environment: node 0 (when DPS_NODE is unset; it starts the others,
// or srun or mpirun did), the instance DPS_NODE names, or a rank of srun or mpirun; and the
// application's secret.
struct Identity {
  NodeId me = 0;
  std::string started_by;  // the external launcher (srun, mpirun) that started the processes, if any
  Secret secret;
  // May set options.nodes (the launcher's count). Throws std::runtime_error with a one-line reason.
  static Identity of_this_process(TcpOptions& options);
};

// `options` with its workers set: unless given, the CPUs this process may use over the node
// processes sharing its host.
TcpOptions with_workers(TcpOptions options);

class Membership {
 public:
  using Handles = DirectiveKinds<Join, Members, Leaving, Departing, Sealed, Ready, ClockPing, ClockPong, ClockOffset,
                                 Shutdown, Goodbye, PeerLost>;

  Membership(NodeProcess& process, const Identity& identity, TcpOptions& options, Transport& transport,
             RemoteTraces& traces);

  // Node 0 listens and starts the instances (or waits for those srun or mpirun started) until all
  // joined, met each other and aligned their clocks; another process joins node 0 and meets the
  // others. Throws std::runtime_error with a one-line reason.
  void form();

  std::vector<NodeId> nodes() const;                           // live nodes, ascending
  // The host `node` runs on, as the address it listens at (node processes of one host share it);
  // empty when unknown.
  std::string host_of(NodeId node) const;
  std::vector<NodeId> others(NodeId skip = UINT32_MAX) const;  // live nodes but this one (and `skip`)
  void broadcast(const Directive& d);                          // to every other live node, skipping the lost
  // To a live node; nothing if it was lost meanwhile (its connection is gone: what it would have
  // heard no longer matters, its loss is being handled). Throws as send_directive if it left.
  void send_unless_lost(NodeId node, const Directive& d);
  void tell_all(const Directive& d) noexcept;  // the same; a node that cannot be told is leaving or lost

  // Node 0. Added nodes' instances start together; `catch_up` brings each up to date with the
  // application's structure before the others hear of it.
  bool can_add_nodes() const noexcept { return launcher_ != nullptr; }
  std::vector<NodeId> add_nodes(std::size_t count, const std::function<void(NodeId)>& catch_up);
  void remove_node(NodeId node);  // its threads have moved away
  // A real cluster's job (TcpOptions::hosts): the hosts its scheduler granted for the nodes to come,
  // and the host a removed node ran on, once its process ended (at most 10 s after it left).
  void grant(const std::vector<std::string>& hosts);
  std::string released_host(NodeId node);
  std::vector<std::string> held_hosts() const;  // a cluster job's: a host per live node, node 0's first
  unsigned cores(NodeId node) const;
  long process_id(NodeId node) const;
  void stop();  // tells the others the application ended; returns once they left, or after 5 s

  int serve();  // the other nodes: returns once the application ended, with this process's exit status

  // A connection closed (Transport::Handler::on_lost): was that expected (the node left, or the
  // application ends)? Then sealed_by(); then, unless expected, lost().
  bool expects_close(NodeId node) const;
  bool ending() const;  // the application ends: every connection closes
  // The leaving node: `node` will send nothing more (it sealed, or its connection closed). Once
  // none will, this node ends; its strands forward what reached it before the process goes.
  void sealed_by(NodeId node);
  void lost(NodeId node, const std::string& reason);
  // Node 0 declared `node` failed and rebuilds its threads elsewhere: it is no member any more, and
  // its connection closing later is no news.
  void failed(NodeId node);

  void end();                   // the backend is going: connections that close now were expected to
  bool ended_normally() const;  // the application ended normally: connections close with Goodbye
  void reap();                  // node 0: waits a little for the instances it started to exit

  void handle(Join& d, Incoming& in);
  void handle(Members& d, Incoming& in);
  void handle(Leaving& d, Incoming& in);
  void handle(Departing& d, Incoming& in);
  void handle(Sealed& d, Incoming& in);
  void handle(Ready& d, Incoming& in);
  void handle(ClockPing& d, Incoming& in);
  void handle(ClockPong& d, Incoming& in);
  void handle(ClockOffset& d, Incoming& in);
  void handle(Shutdown& d, Incoming& in);
  void handle(Goodbye& d, Incoming& in);
  void handle(PeerLost& d, Incoming& in);

 private:
  asio::ip::address facing(const std::vector<std::string>& slots);  // node 0 with a hostfile
  Endpoint coordinator() const;                                     // where node 0 listens
  void start_instances();                           // node 0: start them (unless srun or mpirun did) and wait for them
  void launch(NodeId node);                         // node 0: start the instance of `node` (integrate() waits for it)
  std::size_t processes_beside(NodeId node) const;  // node 0: node processes on the host of `node`
  void join();                                      // the other nodes
  void align_clock(NodeId node);                    // node 0
  // Node 0: a launched instance joins, meets the others, learns the structure (catch_up).
  void integrate(NodeId node, const std::function<void(NodeId)>& catch_up);
  // Node 0, while instances start: as NodeProcess::wait_for, but the end of one of `nodes`'
  // processes fails it at once.
  template <class Pred>
  void wait_for_instances(Pred done, const std::string& what, const std::vector<NodeId>& nodes);

  NodeProcess& process_;
  const Secret& secret_;
  const std::string started_by_;
  TcpOptions& options_;
  Transport& transport_;
  RemoteTraces& traces_;

  // Under process_.mu:
  std::set<NodeId> live_;              // nodes of the application
  NodeId next_node_ = 1;               // node 0: the id the next started instance gets
  std::set<NodeId> departed_;          // removed on purpose: their connections close quietly
  std::set<NodeId> failed_;            // node 0: declared failed under fault tolerance; others: lost
  std::map<NodeId, Join> joined_;      // node 0: instances that joined
  std::set<NodeId> ready_;             // node 0: instances connected to all others
  std::optional<Members> members_;     // others: the membership node 0 announced
  std::vector<double> clock_replies_;  // node 0, while it aligns a clock: the node's clock in its pongs
  bool ending_ = false;                // node 0 said Shutdown, or we are closing
  bool orderly_ = false;               // the application ended normally
  // While this node leaves: the nodes told Departing that have not sealed their connection to it.
  std::optional<std::set<NodeId>> unsealed_;
  int exit_status_ = 0;

  std::unique_ptr<Launcher> launcher_;
  RemoteLauncher* remote_ = nullptr;                    // the launcher, when it starts instances on hosts
  std::unordered_map<std::string, std::string> reach_;  // hostfile host -> node 0's address seen from it
  std::deque<std::string> granted_;                     // a cluster job's hosts granted, not used yet
};

}  // namespace dps::net
