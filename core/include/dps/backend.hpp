// Backend: the narrow interface between the kernel and the world it runs in. The kernel decides what
// runs where and in which order; a backend provides nodes, runs DPS threads on them, moves envelopes
// between nodes and keeps the clock. Three implementations: LocalBackend (N nodes in one process on a
// TBB arena), the TCP backend (net/) and the simulator (sim/, virtual time, one OS thread).
//
//   class MyBackend final : public dps::Backend {
//     void schedule(dps::Thread& t, dps::Priority) override { pool.submit([&t, this] { while (t.run(256)) {} }); }
//     ...
//   };
#pragma once

#include "dps/ids.hpp"
#include "dps/priority.hpp"

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dps {

struct Envelope;
class Runtime;
namespace detail {
struct Checkpoint;
}
class SimulationHooks;
class Thread;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;

  // Called once by the Runtime that owns this backend, before anything runs.
  virtual void attach(Runtime& runtime) = 0;

  // --- nodes ---
  virtual std::vector<NodeId> nodes() const = 0;  // live nodes, ascending
  virtual NodeId local_node() const = 0;          // the node of this process (node 0 makes the calls)
  // Whether `node` lives in this process (every node, for backends without processes of their own).
  virtual bool hosts(NodeId node) const {
    (void)node;
    return true;
  }
  virtual NodeId add_node() = 0;                  // starts a node (the launcher starts an instance)
  // Starts `count` nodes; a backend whose nodes take time to start starts them all at once.
  virtual std::vector<NodeId> add_nodes(std::size_t count) {
    std::vector<NodeId> added;
    for (std::size_t k = 0; k < count; ++k) added.push_back(add_node());
    return added;
  }
  virtual void remove_node(NodeId node) = 0;      // the kernel has moved every thread away first
  // Whether add_node can start a node (not when an external launcher, srun or mpirun, fixed them):
  // an application that may grow again keeps the nodes it cannot get back.
  virtual bool can_add_nodes() const { return true; }
  // Run as a job of a real cluster's scheduler (dps-scheduler, job_protocol.hpp): the socket to it,
  // connected and authenticated, and again when it went away (a daemon restarting; -1: not such a
  // job; a simulated cluster's job finds its socket in DPS_CLUSTER_FD); the hosts a growth was granted on, where the
  // next nodes start; and the host of a removed node, once its process ended. Backends without hosts have none of
  // these.
  virtual int scheduler_socket() { return -1; }
  virtual void grant_hosts(std::vector<std::string> hosts) { (void)hosts; }
  virtual std::string released_host(NodeId node) { return (void)node, std::string(); }
  virtual std::vector<std::string> held_hosts() const { return {}; }  // a host per live node, node 0's first

  // --- execution ---
  // `thread` has work: call thread.run(budget) on its node until it returns false; run(1) is one atomic
  // step. Never called again for the same thread before run() returned false (the mailbox guarantees
  // one schedule in flight).
  // An urgent thread runs before the threads of its node that wait, where the backend can.
  virtual void schedule(Thread& thread, Priority priority) = 0;
  // Deliver `e` to `to`, which runs on another node than `from` (same-node delivery bypasses the
  // backend: it is a move, unless steps yield). The backend eventually calls runtime.enqueue(to, e)
  // where `to` lives.
  virtual void send(NodeId from, Thread& to, Envelope* e) = 0;
  // Move a thread's serialized state to `to`; the thread's mailbox follows it. `arrived` runs exactly
  // once: when the thread runs on `to`, or with the error that kept it here or lost it on the way.
  // Returns whether the thread left (false: it stays here, and `arrived` has the reason).
  virtual bool migrate(Thread& thread, NodeId to, std::string state, std::function<void(std::exception_ptr)> arrived) = 0;
  // Block until no thread is scheduled or running (used at shutdown).
  virtual void quiesce() = 0;
  // The runtime is going: deliver nothing more to it (first thing its destructor does).
  virtual void stop() {}
  // A process other than node 0 serves until node 0 ends the application; returns its exit status.
  virtual int serve() { return 0; }

  // --- fault tolerance (docs/fault-tolerance.md) ---
  // Whether it keeps threads' checkpoints on other nodes, and rebuilds a failed node's threads.
  virtual bool keeps_backups() const { return false; }
  // Keep `checkpoint` of `thread` on another node than the thread's; once that node holds it, the
  // thread is sent Message::Stored with its epoch.
  virtual void keep_backup(Thread& thread, std::shared_ptr<const detail::Checkpoint> checkpoint) {
    (void)thread, (void)checkpoint;
  }
  // The last checkpoint of thread `uid` that a live node holds, and that node; none: epoch 0. The
  // checkpoint itself only `with_checkpoint` (decoding a large image costs: planning needs none).
  struct Backup {
    std::shared_ptr<const detail::Checkpoint> checkpoint;  // null where another process holds it
    NodeId node = 0;
    std::uint32_t epoch = 0;  // 0: none
  };
  virtual Backup backup(std::uint64_t uid, bool with_checkpoint) const {
    return (void)uid, (void)with_checkpoint, Backup{};
  }

  // --- time and modelling ---
  virtual unsigned cores(NodeId node) const { return (void)node, 0u; }  // a node's cores, 0 when unknown
  // The OS threads that run DPS threads in this process (the simulator's one runs them all).
  virtual std::size_t workers() const noexcept { return 1; }
  // A node's relative speed per core (the simulator's model), 0 when unknown: what a partition by
  // speed weighs nodes with.
  virtual double speed(NodeId node) const { return (void)node, 0.0; }
  virtual double now() const = 0;  // seconds since the application started (virtual under simulation)

  // What only a simulator does (the kernel's SimulationHooks); null for a backend that runs for real.
  virtual SimulationHooks* simulation() noexcept { return nullptr; }
};

}  // namespace dps
