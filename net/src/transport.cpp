// Transport: listening and connecting, the handshake, heartbeats and silence, moving frames.
#include "transport.hpp"

#include "dps/errors.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <future>
#include <stdexcept>

namespace dps::net {

namespace {

// The fixed-size bodies of the handshake frames.
template <class... Parts>
std::vector<std::byte> bytes_of(const Parts&... parts) {
  std::vector<std::byte> out;
  (out.insert(out.end(), reinterpret_cast<const std::byte*>(&parts),
              reinterpret_cast<const std::byte*>(&parts) + sizeof parts),
   ...);
  return out;
}

Outgoing raw_frame(FrameKind kind, NodeId sender, std::vector<std::byte> body) {
  Outgoing f;
  f.header.kind = kind;
  f.header.sender = sender;
  f.header.length = static_cast<std::uint32_t>(body.size());
  f.segments.push_back({nullptr, body.size()});
  f.head = std::move(body);
  return f;
}

double poll_from_environment(double poll_us) {
  const char* text = std::getenv("DPS_POLL_US");
  if (!text || !*text) return poll_us;
  char* end = nullptr;
  const double us = std::strtod(text, &end);
  if (*end != '\0' || !(us >= 0))
    throw std::runtime_error("DPS_POLL_US must be a number of microseconds, got '" + std::string(text) + "'");
  return us;
}

}  // namespace

PortRange PortRange::parse(const std::string& text) {
  const auto bad = [&] {
    return std::invalid_argument("--ports expects a range LOW-HIGH of ports from 1 to 65535 (e.g. 40000-40100), got '" +
                                 text + "'");
  };
  const auto dash = text.find('-');
  if (dash == std::string::npos) throw bad();
  unsigned first = 0, last = 0;
  const char* end = text.data() + text.size();
  const auto a = std::from_chars(text.data(), text.data() + dash, first);
  const auto b = std::from_chars(text.data() + dash + 1, end, last);
  if (a.ec != std::errc() || a.ptr != text.data() + dash || b.ec != std::errc() || b.ptr != end || first == 0 ||
      last > 65535 || first > last)
    throw bad();
  return {static_cast<std::uint16_t>(first), static_cast<std::uint16_t>(last)};
}

std::string PortRange::text() const { return std::to_string(first) + "-" + std::to_string(last); }

Transport::Transport(NodeProcess& process, const Secret& secret, const TcpOptions& options, Handler& handler)
    : process_(process),
      secret_(secret),
      options_(options),
      handler_(handler),
      poll_us_(poll_from_environment(options.poll_us)) {}

Transport::~Transport() = default;

void Transport::start() {
  network_ = std::thread([this] { run_network(); });
  heart_ = std::thread([this] { send_heartbeats(); });
  asio::post(io_, [this] { watch(); });
}

void Transport::stop_heart() {
  {
    std::lock_guard lock(process_.mu);
    heart_stops_ = true;
  }
  process_.changed.notify_all();
  if (heart_.joinable()) heart_.join();
}

void Transport::shut_down(const std::function<bool()>& goodbye) {
  // Write what is queued, close, then stop once the closings have run (timers may be pending). After
  // a normal end each peer hears Goodbye last, so that it takes the close for what it is, not a loss.
  asio::post(io_, [this, goodbye] {
    asio::error_code ec;
    acceptor_.close(ec);
    const bool last_word = goodbye();
    for (auto& c : connections_) {
      if (last_word && c->authenticated) c->seal(directive_frame(Goodbye{}));
      c->finish("the application ended");
    }
  });
  {
    std::unique_lock lock(process_.mu);
    process_.changed.wait_for(lock, std::chrono::seconds(5), [&] {
      return std::none_of(peers_.begin(), peers_.end(), [](const auto& p) { return p.load() != nullptr; });
    });
  }
  asio::post(io_, [this] {
    for (auto& c : connections_) c->close("the application ended");
    asio::post(io_, [this] { io_.stop(); });
  });
  work_.reset();
  if (network_.joinable()) network_.join();
}

void Transport::abandon() {
  stop_heart();
  work_.reset();
  io_.stop();
  if (network_.joinable()) network_.join();
}

// ---------------------------------------------------------------------------------------------
// Listening and connecting

void Transport::listen(const asio::ip::address& on) {
  const PortRange& ports = options_.ports;
  if (ports.any()) return listen(on, 0);
  // Node n tries the n-th port first: the node processes of one host seldom try the same.
  const unsigned count = ports.last - ports.first + 1u;
  for (unsigned k = 0; k < count; ++k) {
    const auto port = static_cast<std::uint16_t>(ports.first + (process_.me + k) % count);
    asio::error_code ec;
    if (try_listen(on, port, ec)) return;
    if (ec != asio::error::address_in_use)
      throw std::runtime_error("cannot listen on " + on.to_string() + ":" + std::to_string(port) + ": " + ec.message());
  }
  throw std::runtime_error("no free port in --ports " + ports.text() + " on " + on.to_string() + ": all " +
                           std::to_string(count) + " are in use");
}

void Transport::listen(const asio::ip::address& on, std::uint16_t port) {
  asio::error_code ec;
  if (!try_listen(on, port, ec))
    throw std::runtime_error("cannot listen on " + on.to_string() + ":" + std::to_string(port) + ": " + ec.message());
}

// False, with why in `ec`, when the port is taken (two processes may bind one port before either
// listens: the second learns it at listen()).
bool Transport::try_listen(const asio::ip::address& on, std::uint16_t port, asio::error_code& ec) {
  asio::ip::tcp::endpoint ep(on, port);
  acceptor_.open(ep.protocol());
  acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    asio::error_code ignored;
    acceptor_.close(ignored);
    return false;
  }
  endpoint_ = {process_.me, on.to_string(), acceptor_.local_endpoint().port()};
  asio::post(io_, [this] { accept_next(); });
  return true;
}

void Transport::accept_next() {
  acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (ec) return;  // closed
    auto c =
        std::make_shared<Connection>(std::move(socket), static_cast<Connection::Handler&>(*this), options_.max_frame);
    {
      std::lock_guard lock(process_.mu);
      connections_.push_back(c);
    }
    handshakes_[c.get()] = Handshake{};
    c->start();
    // A peer that does not authenticate in time is dropped.
    auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::seconds(5));
    timer->async_wait([weak = std::weak_ptr(c), timer](const asio::error_code& e) {
      if (auto c = weak.lock(); c && !e && !c->authenticated) c->close("no authentication within 5 s");
    });
    accept_next();
  });
}

asio::ip::address Transport::resolve(const std::string& host) {
  asio::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (!ec) return address;
  asio::ip::tcp::resolver resolver(io_);
  const auto found = resolver.resolve(host, "", ec);
  if (ec || found.empty()) throw std::runtime_error("cannot resolve host '" + host + "': " + ec.message());
  for (const auto& entry : found)
    if (entry.endpoint().address().is_v4()) return entry.endpoint().address();
  return found.begin()->endpoint().address();
}

// A connected UDP socket learns the interface without sending anything.
asio::ip::address Transport::route_to(const std::string& host) {
  asio::ip::udp::socket probe(io_);
  asio::error_code ec;
  probe.connect({resolve(host), 9}, ec);
  if (ec) throw std::runtime_error("no route to host '" + host + "': " + ec.message());
  return probe.local_endpoint().address();
}

std::shared_ptr<Connection> Transport::connect(const Endpoint& to, double patience) {
  asio::ip::tcp::socket socket(io_);
  asio::error_code ec;
  const auto address = resolve(to.host);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(patience);
  for (;;) {
    socket.connect({address, to.port}, ec);
    if (ec != asio::error::connection_refused || std::chrono::steady_clock::now() >= deadline) break;
    socket.close();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (ec)
    throw std::runtime_error("cannot connect to node " + std::to_string(to.node) + " at " + to.host + ":" +
                             std::to_string(to.port) + ": " + ec.message());
  auto c =
      std::make_shared<Connection>(std::move(socket), static_cast<Connection::Handler&>(*this), options_.max_frame);
  {
    std::lock_guard lock(process_.mu);
    connections_.push_back(c);
  }
  asio::post(io_, [this, c, node = to.node] {
    Handshake& hs = handshakes_[c.get()];
    hs.connector = true;
    hs.node = node;
    hs.mine = fresh_nonce();
    c->start();
    c->send(raw_frame(FrameKind::Hello, process_.me, bytes_of(process_.me, hs.mine)));
  });
  const auto open = [&] { return std::ranges::find(connections_, c) != connections_.end(); };  // under mu
  process_.wait_for([&] { return peer(to.node) == c.get() || !open(); },
                    "the connection to node " + std::to_string(to.node), 10);
  std::lock_guard lock(process_.mu);
  if (peer(to.node) != c.get())
    throw std::runtime_error("node " + std::to_string(to.node) + " closed the connection before it was authenticated");
  return c;
}

// ---------------------------------------------------------------------------------------------
// The network and heartbeat threads

// After the network thread ran a DPS thread itself (TcpBackend::schedule) it keeps polling for
// `poll_us` before it sleeps in epoll: the answer to what it sent usually comes sooner than a
// sleeping thread wakes. Otherwise it sleeps at once, leaving the cores to the strands.
void Transport::run_network() {
  const auto spin =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(poll_us_ * 1e-6));
  auto ran = std::chrono::steady_clock::time_point{};
  while (!io_.stopped()) {
    if (std::chrono::steady_clock::now() - ran < spin ? io_.poll() : io_.run_one()) {
      if (std::exchange(ran_here_, false)) ran = std::chrono::steady_clock::now();
    }
  }
}

// Heartbeats come from a thread of their own, so that a long step the network thread runs does not
// silence this process: every connection hears something at least every `heartbeat` seconds. The
// thread also writes what waits on each connection (pump), for a heartbeat queued behind a large
// frame would otherwise wait for the network thread.
void Transport::send_heartbeats() {
  const auto period = std::chrono::duration<double>(options_.heartbeat);
  std::unique_lock lock(process_.mu);
  while (!process_.changed.wait_for(lock, period, [&] { return heart_stops_; })) {
    lock.unlock();
    for (NodeId node = 0; node < kMaxNodes; ++node) {
      detail::EpochGuard guard;
      Connection* c = peer(node);
      if (!c) continue;
      if (!c->spoke()) c->send(raw_frame(FrameKind::Heartbeat, process_.me, {}));
      c->pump();
    }
    handler_.on_heartbeat();
    lock.lock();
  }
}

// A connection silent for `silence` seconds has a hung or unreachable node at its end (a dead one
// closes its connections itself). Judged on the network thread, which reads: after it was busy
// (a long step run here), silence says nothing about the others and is not judged.
void Transport::watch() {
  const auto period =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(options_.heartbeat));
  const auto due = std::chrono::steady_clock::now() + period;
  watchdog_.expires_at(due);
  watchdog_.async_wait([this, due, period](const asio::error_code& ec) {
    if (ec) return;
    const auto now = std::chrono::steady_clock::now();
    const bool was_busy = now - due > period;
    const auto silent_since = now - std::chrono::duration<double>(options_.silence);
    for (NodeId node = 0; node < kMaxNodes; ++node) {
      detail::EpochGuard guard;
      Connection* c = peer(node);
      if (!c) continue;
      if (was_busy)
        c->heard = std::max(c->heard, now - period);
      else if (c->heard < silent_since)
        c->close("silent for " + seconds_text(options_.silence) + " (the node hangs or cannot be reached)");
    }
    watch();
  });
}

void Transport::on_network(const std::function<void()>& f) {
  if (on_network_thread()) return f();
  std::promise<void> ran;
  asio::post(io_, [&] {
    f();
    ran.set_value();
  });
  ran.get_future().wait();
}

// ---------------------------------------------------------------------------------------------
// Frames

Connection* Transport::peer(NodeId node) const noexcept {
  return node < kMaxNodes ? peers_[node].load(std::memory_order_acquire) : nullptr;
}

bool Transport::offer(NodeId to, Outgoing& frame) {
  detail::EpochGuard guard;
  Connection* c = peer(to);
  return c && c->send(std::move(frame));
}

void Transport::send_frame(NodeId to, Outgoing frame) {
  if (!offer(to, frame)) throw NodeFailure(to, peer(to) ? "it left" : "no connection to it");
}

Outgoing Transport::directive_frame(const Directive& d, const Payload* payload) const {
  Outgoing f;
  WireWriter out(f.head, SIZE_MAX);
  out(d);
  if (payload) payload->save(out);
  f.segments = out.segments();
  f.header.kind = FrameKind::Directive;
  f.header.sender = process_.me;
  f.header.length = static_cast<std::uint32_t>(out.size());
  return f;
}

void Transport::send_directive(NodeId to, const Directive& d, const Payload* payload) {
  send_frame(to, directive_frame(d, payload));
}

void Transport::send_directive(NodeId to, const Directive& d, std::string attached) {
  auto kept = std::make_shared<const std::string>(std::move(attached));
  std::vector<std::byte> none;
  WireWriter block(none);
  block.write(kept->data(), kept->size());
  send_directive(to, d, block, none, std::move(kept));
}

void Transport::send_directive(NodeId to, const Directive& d, WireWriter& block,
                               const std::vector<std::byte>& block_head, std::shared_ptr<const void> keep) {
  Outgoing f;
  WireWriter out(f.head, SIZE_MAX);  // the directive is copied: it may be a temporary
  out(d);
  const std::size_t block_size = block.size();
  out(static_cast<std::uint64_t>(block_size));  // as cereal writes a std::string: its size, then its bytes
  const std::size_t size = out.size() + block_size;
  if (size > options_.max_frame)
    throw std::length_error("a directive of " + std::to_string(size) + " bytes exceeds the frame limit of " +
                            std::to_string(options_.max_frame));
  f.segments = out.segments();
  f.head.insert(f.head.end(), block_head.begin(), block_head.end());  // the block's bytes written inline follow
  f.segments.insert(f.segments.end(), block.segments().begin(), block.segments().end());
  f.attached = std::move(keep);
  f.header.kind = FrameKind::Directive;
  f.header.sender = process_.me;
  f.header.length = static_cast<std::uint32_t>(size);
  send_frame(to, std::move(f));
}

void Transport::tell(NodeId to, const Directive& d) noexcept {
  try {
    send_directive(to, d);
  } catch (const std::exception& e) {
    process_.log("could not answer node " + std::to_string(to) + ": " + e.what());
  }
}

void Transport::on_frame(Connection& from, const FrameHeader& header, std::span<const std::byte> body) {
  if (!from.authenticated) return handshake(from, header, body);
  if (header.sender != from.peer)
    return from.close("frame claims to come from node " + std::to_string(header.sender) + ", connection is node " +
                      std::to_string(from.peer) + "'s");
  try {
    switch (header.kind) {
      case FrameKind::Envelope: return handler_.on_envelope(header, from.received(), body, from.frame_buffer());
      case FrameKind::Directive: return handler_.on_directive(from, body);
      case FrameKind::Heartbeat: return;
      default: return from.close("unexpected frame kind " + std::to_string(static_cast<int>(header.kind)));
    }
  } catch (const std::exception& e) {
    from.close(std::string("malformed frame: ") + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Authentication and the end of connections

void Transport::handshake(Connection& c, const FrameHeader& header, std::span<const std::byte> body) {
  auto it = handshakes_.find(&c);
  if (it == handshakes_.end()) return c.close("unauthenticated frame");
  Handshake& hs = it->second;
  const NodeId me = process_.me;
  try {
    WireReader in(body);
    if (!hs.connector && header.kind == FrameKind::Hello && hs.node == UINT32_MAX) {
      hs.node = in.get<std::uint32_t>();
      in.read(hs.theirs.data(), hs.theirs.size());
      if (!in.done() || hs.node >= kMaxNodes || hs.node == me) return c.close("malformed hello");
      hs.mine = fresh_nonce();
      c.send(raw_frame(FrameKind::Challenge, me, bytes_of(me, hs.mine, secret_.prove("acceptor", hs.theirs, hs.mine))));
    } else if (!hs.connector && header.kind == FrameKind::Proof && hs.node != UINT32_MAX) {
      Digest proof;
      in.read(proof.data(), proof.size());
      if (!in.done() || !same(proof, secret_.prove("connector", hs.mine, hs.theirs)))
        return c.close("authentication failed: the peer does not know the application's secret");
      authenticated(c, hs.node);
    } else if (hs.connector && header.kind == FrameKind::Challenge) {
      const auto node = in.get<std::uint32_t>();
      in.read(hs.theirs.data(), hs.theirs.size());
      Digest proof;
      in.read(proof.data(), proof.size());
      if (!in.done() || !same(proof, secret_.prove("acceptor", hs.mine, hs.theirs)))
        return c.close("authentication failed: the peer does not know the application's secret");
      if (node != hs.node)
        return c.close("reached node " + std::to_string(node) + " instead of node " + std::to_string(hs.node));
      c.send(raw_frame(FrameKind::Proof, me, bytes_of(secret_.prove("connector", hs.theirs, hs.mine))));
      authenticated(c, hs.node);
    } else {
      c.close("unauthenticated frame (kind " + std::to_string(static_cast<int>(header.kind)) + ")");
    }
  } catch (const WireError& e) {
    c.close(std::string("malformed handshake: ") + e.what());
  }
}

void Transport::authenticated(Connection& c, std::uint32_t node) {
  handshakes_.erase(&c);
  {
    std::lock_guard lock(process_.mu);
    if (peer(node)) return c.close("a second connection from node " + std::to_string(node));
    c.authenticated = true;
    c.peer = node;
    peers_[node].store(&c, std::memory_order_release);
  }
  process_.changed.notify_all();
}

// A closed connection leaves `connections_`; it is freed once no reader of peer() can hold it (asio's
// handlers still running on it hold it too).
void Transport::bury(Connection& c) {
  std::shared_ptr<Connection> closed;
  {
    std::lock_guard lock(process_.mu);
    auto it = std::find_if(connections_.begin(), connections_.end(), [&](const auto& p) { return p.get() == &c; });
    if (it == connections_.end()) return;
    closed = std::move(*it);
    connections_.erase(it);
  }
  graveyard_.bury([closed = std::move(closed)] { return true; });
  graveyard_.collect();
}

void Transport::on_closed(Connection& c, const std::string& reason) {
  const auto hs = handshakes_.find(&c);
  const bool connector = hs != handshakes_.end() && hs->second.connector;
  if (hs != handshakes_.end()) handshakes_.erase(hs);
  if (!c.authenticated) {
    bury(c);
    process_.changed.notify_all();  // connect() says why
    if (!connector) process_.log("refused a connection from " + c.remote() + ": " + reason);
    return;
  }
  const NodeId node = c.peer;
  {
    std::lock_guard lock(process_.mu);
    if (peer(node) == &c) peers_[node].store(nullptr, std::memory_order_release);
  }
  bury(c);  // once unpublished: a sender that still found it holds a guard
  process_.changed.notify_all();
  handler_.on_lost(node, reason);
}

}  // namespace dps::net
