// The state of a TcpBackend, shared by its two halves: the transport and membership
// (tcp_backend.cpp) and the replication of the kernel's structure (replica.cpp).
#pragma once

#include "remote_trace.hpp"

#include "dps/kernel/strands.hpp"
#include "dps/net/auth.hpp"
#include "dps/net/connection.hpp"
#include "dps/net/launcher.hpp"
#include "dps/net/protocol.hpp"
#include "dps/net/tcp_backend.hpp"
#include "dps/kernel/runtime.hpp"

#include <asio.hpp>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace dps::net {

inline constexpr std::size_t kMaxNodes = 4096;

GraphCreated graph_image(const GraphCore& graph);  // throws GraphError if a route cannot travel

struct TcpBackend::Impl final : Connection::Handler {
  Impl(TcpBackend& self, TcpOptions options);
  ~Impl() override;

  // --- transport (tcp_backend.cpp) ---
  void listen(const asio::ip::address& on, std::uint16_t port = 0);
  asio::ip::address resolve(const std::string& host);
  asio::ip::address facing(const std::vector<std::string>& slots);  // node 0 with a hostfile
  Endpoint coordinator() const;                                     // where node 0 listens
  void accept_next();
  // Authenticated, or throws; a refused connection is tried again for `patience` seconds.
  std::shared_ptr<Connection> connect(const Endpoint& to, double patience = 0);
  void on_frame(Connection& from, const FrameHeader& header, std::span<const std::byte> body) override;
  void on_closed(Connection& connection, const std::string& reason) override;
  void handshake(Connection& c, const FrameHeader& header, std::span<const std::byte> body);
  void authenticated(Connection& c, std::uint32_t node);
  Connection* peer(NodeId node) const noexcept;  // hold an EpochGuard while using it
  void bury(Connection& c);
  // False when there is no connection to `to` or it was sealed: `frame` is still the caller's.
  bool offer(NodeId to, Outgoing& frame);
  void send_frame(NodeId to, Outgoing frame);  // throws NodeFailure where offer() is false
  Outgoing directive_frame(const Directive& d, const Payload* payload = nullptr) const;
  void send_directive(NodeId to, const Directive& d, const Payload* payload = nullptr);
  // An answer: sent, or dropped when `to` is gone (its loss is handled where its connection closed).
  void tell(NodeId to, const Directive& d) noexcept;
  // Runs `f` on the network thread; returns once it ran (what the thread was doing is finished).
  void on_network(const std::function<void()>& f);
  // A directive followed by a large block, sent from where it lies (a thread's image).
  void send_directive(NodeId to, const Directive& d, std::string attached);
  std::vector<NodeId> others(NodeId skip = UINT32_MAX) const;  // live nodes but this one (and `skip`)
  void broadcast(const Directive& d);                          // to every other live node
  void tell_all(const Directive& d) noexcept;  // the same; a node that cannot be told is leaving or lost
  void start_instances();              // node 0: start (unless srun or mpirun did) and wait for them
  void launch(NodeId node);            // node 0: start the instance of `node` (integrate() waits for it)
  std::size_t processes_beside(NodeId node) const;  // node 0: node processes on the host of `node`
  void join();                         // other nodes
  void align_clock(NodeId node);       // node 0
  void integrate(NodeId node);         // node 0: a launched instance joins, meets the others, learns the structure
  void run_network();
  void send_heartbeats();              // the heart thread
  void stop_heart();
  void watch();                        // network thread: silent peers closed
  template <class Pred>
  void wait_for(Pred done, const std::string& what, double seconds);
  // Node 0, while instances start: as wait_for, but the end of one of `nodes`' processes fails it at once.
  template <class Pred>
  void wait_for_instances(Pred done, const std::string& what, const std::vector<NodeId>& nodes);
  void log(const std::string& line) const;
  // The leaving node: `node` will send nothing more (it sealed, or its connection closed). Once
  // none will, this node ends; its strands forward what reached it before the process goes.
  void sealed_by(NodeId node);
  double now() const noexcept override;  // node 0's clock

  // --- replication (replica.cpp) ---
  Runtime* attached();  // network thread: waits for attach(); null once stopped
  void on_directive(Connection& from, std::span<const std::byte> body);
  // A frame whose last byte was read at `received`: traced as a transfer, then delivered.
  void on_envelope(const FrameHeader& header, double received, std::span<const std::byte> body, WireBuffer* buffer);
  void deliver(Runtime& rt, std::span<const std::byte> body, WireBuffer* buffer = nullptr);
  void unpark(Runtime& rt, std::uint64_t key);
  void send_structure(NodeId to);  // node 0, to a process that joins late
  void apply(Connection& from, Directive& d, WireReader& rest);

  TcpBackend& self;
  TcpOptions options;
  Secret secret;
  NodeId me = 0;
  std::string started_by;      // the external launcher (srun, mpirun) that started the processes, if any
  Runtime* runtime = nullptr;  // what the network thread delivers to: set by attach(), reset by stop()
  Runtime* kernel = nullptr;   // what strands send for: set by attach(), valid until they quiesced
  bool stopped = false;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::atomic<double> clock_offset{0};

  detail::Strands strands;

  // The network thread.
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work{io.get_executor()};
  asio::ip::tcp::acceptor acceptor{io};
  asio::steady_timer watchdog{io};
  Endpoint endpoint;  // where this process listens
  std::thread network;
  bool ran_here = false;  // network thread: it ran a DPS thread since it last looked
  std::thread heart;
  bool heart_stops = false;  // under mu

  mutable std::mutex mu;
  std::condition_variable changed;
  std::vector<std::shared_ptr<Connection>> connections;  // open ones (owned here)
  // peer() is read without a lock: a closed connection goes to the graveyard, freed once no reader
  // (inside an EpochGuard) can hold it.
  std::array<std::atomic<Connection*>, kMaxNodes> peers{};
  detail::Graveyard graveyard;
  std::set<NodeId> live;                 // nodes of the application
  NodeId next_node = 1;                  // node 0: the id the next started instance gets
  std::set<NodeId> departed;             // removed on purpose: their connections close quietly
  std::map<NodeId, Join> joined;         // node 0: instances that joined
  std::set<NodeId> ready;                // node 0: instances connected to all others
  std::optional<Members> members;        // others: the membership node 0 announced
  std::vector<double> clock_replies;     // node 0, during align_clocks: (pong.here, rtt, offset) triples
  bool ending = false;                   // node 0 said Shutdown, or we are closing
  bool orderly = false;                  // the application ended normally: connections close with Goodbye
  // While this node leaves: the nodes told Departing that have not sealed their connection to it.
  std::optional<std::set<NodeId>> unsealed;
  int exit_status = 0;
  std::string failure;                   // why the application cannot go on

  struct Handshake {
    Nonce mine{}, theirs{};
    std::uint32_t node = UINT32_MAX;
    bool connector = false;
  };
  std::unordered_map<const Connection*, Handshake> handshakes;  // network thread

  // Requests this process made to others (retire, migrate), by id.
  std::atomic<std::uint64_t> next_request{0};
  struct Retirement {
    HandBack hand_back;
    const detail::StateType* type = nullptr;
    NodeId answers = 0;  // the thread's host (it failing fails the retirement)
  };
  std::unordered_map<std::uint64_t, Retirement> retirements;
  struct Migration {
    Done done;
    NodeId answers = 0;     // the node whose MigrateDone completes it (it failing fails the migration)
    bool departed = true;   // false while the thread's host has sent its image but not yet let it go
    bool answered = false;  // MigrateDone came before that: it completes once the thread departed
    std::string error = {};  // of that early answer
  };
  std::unordered_map<std::uint64_t, Migration> migrations;
  // MigrateDone: the Done to call now, or empty (answered already, or kept until let_go()).
  Done answer_migration(std::uint64_t request, const std::string& error);
  void let_go(std::uint64_t request);  // the host let the thread go: an early answer completes
  // The request `request` taken out of `requests`, or a default one when it was answered already.
  template <class Request>
  Request take(std::unordered_map<std::uint64_t, Request>& requests, std::uint64_t request) {
    std::lock_guard lock(mu);
    auto it = requests.find(request);
    if (it == requests.end()) return {};
    Request r = std::move(it->second);
    requests.erase(it);
    return r;
  }
  // The requests `node` was to answer, taken out (it is gone).
  template <class Request>
  std::vector<Request> take_answerable_by(std::unordered_map<std::uint64_t, Request>& requests, NodeId node) {
    std::vector<Request> out;
    std::lock_guard lock(mu);
    std::erase_if(requests, [&](auto& r) {
      if (r.second.answers != node) return false;
      out.push_back(std::move(r.second));
      return true;
    });
    return out;
  }

  // Envelope frames naming a thread or graph whose directive has not arrived yet (network thread).
  std::unordered_map<std::uint64_t, std::vector<std::vector<std::byte>>> parked;

  std::unique_ptr<Launcher> launcher;
  RemoteLauncher* remote = nullptr;                   // the launcher, when it starts instances on hosts
  std::unordered_map<std::string, std::string> reach; // hostfile host -> node 0's address seen from it

  // Traces: the sink of this process while node 0 traces (others), and node 0's trace collections
  // under way: request -> the nodes that answered.
  RemoteTrace remote_trace{[this](TraceBatch&& batch) {
    try {
      send_directive(0, batch);
    } catch (const std::exception&) {  // node 0 is gone: nobody to trace for
    }
  }};
  std::unordered_map<std::uint64_t, std::set<NodeId>> trace_flushes;
};

std::string seconds_text(double s);  // "3 s", "0.5 s"

template <class Pred>
void TcpBackend::Impl::wait_for(Pred done, const std::string& what, double seconds) {
  std::unique_lock lock(mu);
  const bool ok = changed.wait_for(lock, std::chrono::duration<double>(seconds), [&] {
    return !failure.empty() || done();
  });
  if (!failure.empty()) throw std::runtime_error(failure);
  if (!ok) throw std::runtime_error("timed out after " + seconds_text(seconds) + " waiting for " + what);
}

}  // namespace dps::net
