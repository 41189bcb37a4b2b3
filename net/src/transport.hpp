// Transport: the connections of this node process to the others. It listens (within --ports when
// given) and connects, proves every connection knows the application's secret before it carries
// anything (HMAC challenge-response, auth.hpp), keeps connections alive (heartbeats from a thread of
// its own; a silent peer is closed), and moves frames: any thread sends envelopes and directives,
// and what arrives goes to the Transport::Handler on the network thread, which runs asio and, for
// quick DPS threads, the threads themselves.
//
//   Transport transport(process, secret, options, handler);
//   transport.start();                              // the network and heartbeat threads
//   transport.listen(address);                      // accepting
//   transport.connect(endpoint);                    // authenticated, or throws
//   transport.send_directive(node, Ready{me});      // from any thread
//   transport.stop_heart();  transport.shut_down(goodbye);   // at the end
#pragma once

#include "node_process.hpp"

#include "dps/kernel/epochs.hpp"
#include "dps/net/auth.hpp"
#include "dps/net/connection.hpp"
#include "dps/net/protocol.hpp"
#include "dps/net/tcp_backend.hpp"

#include <asio.hpp>

#include <array>
#include <atomic>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace dps::net {

inline constexpr std::size_t kMaxNodes = 4096;

class Transport final : Connection::Handler {
 public:
  // What the rest of the backend does with what arrives.
  class Handler {
   public:
    virtual ~Handler() = default;
    // Network thread, from an authenticated peer: a frame whose last byte was read at `received`.
    virtual void on_envelope(const FrameHeader& header, double received, std::span<const std::byte> body,
                             WireBuffer* buffer) = 0;
    virtual void on_directive(Connection& from, std::span<const std::byte> body) = 0;
    // Network thread: the connection to `node` closed (peer(node) no longer finds it).
    virtual void on_lost(NodeId node, const std::string& reason) = 0;
    // Heartbeat thread, once a heartbeat period.
    virtual void on_heartbeat() = 0;
  };

  // Reads $DPS_POLL_US (throws std::runtime_error when it is not a number).
  Transport(NodeProcess& process, const Secret& secret, const TcpOptions& options, Handler& handler);
  ~Transport() override;

  void start();  // the network and heartbeat threads, and the watch over silent peers
  void stop_heart();
  // The end: no more accepting; every connection closes once what is queued was written, with a
  // last Goodbye when `goodbye()` (asked on the network thread) says the application ended normally.
  // Returns once the network thread ended.
  void shut_down(const std::function<bool()>& goodbye);
  void abandon();  // the backend could not form: the threads end at once

  // Listens on `on`: at a port of options.ports, or any when none were given.
  void listen(const asio::ip::address& on);
  void listen(const asio::ip::address& on, std::uint16_t port);
  const Endpoint& endpoint() const noexcept { return endpoint_; }  // where this process listens
  asio::ip::address resolve(const std::string& host);              // a host name or address, IPv4 preferred
  asio::ip::address route_to(const std::string& host);             // this host's address on the route to `host`
  // Authenticated, or throws; a refused connection is tried again for `patience` seconds.
  std::shared_ptr<Connection> connect(const Endpoint& to, double patience = 0);

  Connection* peer(NodeId node) const noexcept;  // hold an EpochGuard while using it
  // False when there is no connection to `to` or it was sealed: `frame` is still the caller's.
  bool offer(NodeId to, Outgoing& frame);
  void send_frame(NodeId to, Outgoing frame);  // throws NodeFailure where offer() is false
  Outgoing directive_frame(const Directive& d, const Payload* payload = nullptr) const;
  void send_directive(NodeId to, const Directive& d, const Payload* payload = nullptr);
  // A directive followed by a large block, sent from where it lies (a thread's image).
  void send_directive(NodeId to, const Directive& d, std::string attached);
  // A directive followed by a block encoded by `block` (read as one std::string), whose large parts
  // are sent from where they lie in `keep` (a thread's checkpoint), kept until the frame is written.
  void send_directive(NodeId to, const Directive& d, WireWriter& block, const std::vector<std::byte>& block_head,
                      std::shared_ptr<const void> keep);
  // An answer: sent, or dropped when `to` is gone (its loss is handled where its connection closed).
  void tell(NodeId to, const Directive& d) noexcept;

  // Runs `f` on the network thread; returns once it ran (what the thread was doing is finished).
  void on_network(const std::function<void()>& f);
  bool on_network_thread() const noexcept { return std::this_thread::get_id() == network_.get_id(); }
  // The network thread ran a DPS thread: it polls a while before it sleeps (run_network).
  void ran_a_thread() noexcept { ran_here_ = true; }

 private:
  // Connection::Handler
  void on_frame(Connection& from, const FrameHeader& header, std::span<const std::byte> body) override;
  void on_closed(Connection& connection, const std::string& reason) override;
  double now() const noexcept override { return process_.now(); }

  bool try_listen(const asio::ip::address& on, std::uint16_t port, asio::error_code& ec);
  void accept_next();
  void handshake(Connection& c, const FrameHeader& header, std::span<const std::byte> body);
  void authenticated(Connection& c, std::uint32_t node);
  void bury(Connection& c);
  void run_network();
  void send_heartbeats();  // the heartbeat thread
  void watch();            // network thread: silent peers closed

  NodeProcess& process_;
  const Secret& secret_;
  const TcpOptions& options_;
  Handler& handler_;
  double poll_us_;

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_{io_.get_executor()};
  asio::ip::tcp::acceptor acceptor_{io_};
  asio::steady_timer watchdog_{io_};
  Endpoint endpoint_;
  std::thread network_;
  bool ran_here_ = false;  // network thread: it ran a DPS thread since it last looked
  std::thread heart_;
  bool heart_stops_ = false;  // under process_.mu

  std::vector<std::shared_ptr<Connection>> connections_;  // open ones (owned here), under process_.mu
  // peer() is read without a lock: a closed connection goes to the graveyard, freed once no reader
  // (inside an EpochGuard) can hold it.
  std::array<std::atomic<Connection*>, kMaxNodes> peers_{};
  detail::Graveyard graveyard_;

  struct Handshake {
    Nonce mine{}, theirs{};
    std::uint32_t node = UINT32_MAX;
    bool connector = false;
  };
  std::unordered_map<const Connection*, Handshake> handshakes_;  // network thread
};

}  // namespace dps::net
