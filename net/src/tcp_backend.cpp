// TcpBackend, transport: listening and connecting, authenticating connections, liveness
// (heartbeats, silence), moving frames, and the Backend interface. Forming the application is in
// membership.cpp, replicating the structure in replica.cpp.
#include "tcp_backend_impl.hpp"

#include "dps/errors.hpp"
#include "dps/net/codec.hpp"
#include "dps/kernel/thread.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <future>
#include <optional>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

namespace dps::net {

namespace {

// The fixed-size bodies of the handshake frames.
template <class... Parts>
std::vector<std::byte> bytes_of(const Parts&... parts) {
  std::vector<std::byte> out;
  (out.insert(out.end(), reinterpret_cast<const std::byte*>(&parts), reinterpret_cast<const std::byte*>(&parts) + sizeof parts),
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

}  // namespace

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", s);
  return text;
}

void TcpBackend::Impl::stop_heart() {
  {
    std::lock_guard lock(mu);
    heart_stops = true;
  }
  changed.notify_all();
  if (heart.joinable()) heart.join();
}

TcpBackend::Impl::~Impl() {
  stop_heart();
  {
    std::lock_guard lock(mu);
    ending = true;
  }
  // Write what is queued, close, then stop once the closings have run (timers may be pending). After
  // a normal end each peer hears Goodbye last, so that it takes the close for what it is, not a loss.
  asio::post(io, [this] {
    asio::error_code ec;
    acceptor.close(ec);
    bool goodbye;
    {
      std::lock_guard lock(mu);
      goodbye = orderly;
    }
    for (auto& c : connections) {
      if (goodbye && c->authenticated) c->seal(directive_frame(Goodbye{}));
      c->finish("the application ended");
    }
  });
  {
    std::unique_lock lock(mu);
    changed.wait_for(lock, std::chrono::seconds(5), [&] {
      return std::none_of(peers.begin(), peers.end(), [](const auto& p) { return p.load() != nullptr; });
    });
  }
  asio::post(io, [this] {
    for (auto& c : connections) c->close("the application ended");
    asio::post(io, [this] { io.stop(); });
  });
  work.reset();
  if (network.joinable()) network.join();
  if (launcher) launcher->reap(5);
}

void TcpBackend::Impl::listen(const asio::ip::address& on, std::uint16_t port) {
  asio::ip::tcp::endpoint ep(on, port);
  acceptor.open(ep.protocol());
  acceptor.set_option(asio::ip::tcp::acceptor::reuse_address(true));
  asio::error_code ec;
  acceptor.bind(ep, ec);
  if (ec) throw std::runtime_error("cannot listen on " + on.to_string() + ":" + std::to_string(port) + ": " + ec.message());
  acceptor.listen();
  endpoint = {me, on.to_string(), acceptor.local_endpoint().port()};
  asio::post(io, [this] { accept_next(); });
}

void TcpBackend::Impl::accept_next() {
  acceptor.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (ec) return;  // closed
    auto c = std::make_shared<Connection>(std::move(socket), *this, options.max_frame);
    {
      std::lock_guard lock(mu);
      connections.push_back(c);
    }
    handshakes[c.get()] = Handshake{};
    c->start();
    // A peer that does not authenticate in time is dropped.
    auto timer = std::make_shared<asio::steady_timer>(io, std::chrono::seconds(5));
    timer->async_wait([weak = std::weak_ptr(c), timer](const asio::error_code& e) {
      if (auto c = weak.lock(); c && !e && !c->authenticated) c->close("no authentication within 5 s");
    });
    accept_next();
  });
}

// A host name or address, IPv4 preferred.
asio::ip::address TcpBackend::Impl::resolve(const std::string& host) {
  asio::error_code ec;
  const auto address = asio::ip::make_address(host, ec);
  if (!ec) return address;
  asio::ip::tcp::resolver resolver(io);
  const auto found = resolver.resolve(host, "", ec);
  if (ec || found.empty()) throw std::runtime_error("cannot resolve host '" + host + "': " + ec.message());
  for (const auto& entry : found)
    if (entry.endpoint().address().is_v4()) return entry.endpoint().address();
  return found.begin()->endpoint().address();
}

std::shared_ptr<Connection> TcpBackend::Impl::connect(const Endpoint& to, double patience) {
  asio::ip::tcp::socket socket(io);
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
  auto c = std::make_shared<Connection>(std::move(socket), *this, options.max_frame);
  {
    std::lock_guard lock(mu);
    connections.push_back(c);
  }
  asio::post(io, [this, c, node = to.node] {
    Handshake& hs = handshakes[c.get()];
    hs.connector = true;
    hs.node = node;
    hs.mine = fresh_nonce();
    c->start();
    c->send(raw_frame(FrameKind::Hello, me, bytes_of(me, hs.mine)));
  });
  wait_for([&] { return peer(to.node) == c.get(); }, "the connection to node " + std::to_string(to.node), 10);
  return c;
}

// The network thread. After it ran a thread itself (see schedule) it keeps polling for `poll_us`
// before it sleeps in epoll: the answer to what it sent usually comes sooner than a sleeping thread
// wakes. Otherwise it sleeps at once, leaving the cores to the strands.
void TcpBackend::Impl::run_network() {
  const auto spin = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(options.poll_us * 1e-6));
  auto ran = std::chrono::steady_clock::time_point{};
  while (!io.stopped()) {
    if (std::chrono::steady_clock::now() - ran < spin ? io.poll() : io.run_one()) {
      if (std::exchange(ran_here, false)) ran = std::chrono::steady_clock::now();
    }
  }
}

// Heartbeats come from a thread of their own, so that a long step the network thread runs does not
// silence this process: every connection hears something at least every `heartbeat` seconds. The
// thread also writes what waits on each connection (pump), for a heartbeat queued behind a large
// frame would otherwise wait for the network thread.
void TcpBackend::Impl::send_heartbeats() {
  const auto period = std::chrono::duration<double>(options.heartbeat);
  std::unique_lock lock(mu);
  while (!changed.wait_for(lock, period, [&] { return heart_stops; })) {
    lock.unlock();
    for (NodeId node = 0; node < kMaxNodes; ++node) {
      detail::EpochGuard guard;
      Connection* c = peer(node);
      if (!c) continue;
      if (!c->spoke()) c->send(raw_frame(FrameKind::Heartbeat, me, {}));
      c->pump();
    }
    if (me != 0) remote_trace.flush();
    lock.lock();
  }
}

// A connection silent for `silence` seconds has a hung or unreachable node at its end (a dead one
// closes its connections itself). Judged on the network thread, which reads: after it was busy
// (a long step run here), silence says nothing about the others and is not judged.
void TcpBackend::Impl::watch() {
  const auto period = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(options.heartbeat));
  const auto due = std::chrono::steady_clock::now() + period;
  watchdog.expires_at(due);
  watchdog.async_wait([this, due, period](const asio::error_code& ec) {
    if (ec) return;
    const auto now = std::chrono::steady_clock::now();
    const bool was_busy = now - due > period;
    const auto silent_since = now - std::chrono::duration<double>(options.silence);
    for (NodeId node = 0; node < kMaxNodes; ++node) {
      detail::EpochGuard guard;
      Connection* c = peer(node);
      if (!c) continue;
      if (was_busy)
        c->heard = std::max(c->heard, now - period);
      else if (c->heard < silent_since)
        c->close("silent for " + seconds_text(options.silence) + " (the node hangs or cannot be reached)");
    }
    watch();
  });
}

void TcpBackend::Impl::sealed_by(NodeId node) {
  {
    std::lock_guard lock(mu);
    if (!unsealed || unsealed->erase(node) == 0 || !unsealed->empty()) return;
    ending = true;
  }
  changed.notify_all();
}

double TcpBackend::Impl::now() const noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() +
         clock_offset.load(std::memory_order_relaxed);
}

void TcpBackend::Impl::log(const std::string& line) const {
  std::cerr << "dps: node " + std::to_string(me) + ": " + line + "\n" << std::flush;
}

// ---------------------------------------------------------------------------------------------
// Frames

Connection* TcpBackend::Impl::peer(NodeId node) const noexcept {
  return node < kMaxNodes ? peers[node].load(std::memory_order_acquire) : nullptr;
}

bool TcpBackend::Impl::offer(NodeId to, Outgoing& frame) {
  detail::EpochGuard guard;
  Connection* c = peer(to);
  return c && c->send(std::move(frame));
}

void TcpBackend::Impl::send_frame(NodeId to, Outgoing frame) {
  if (!offer(to, frame)) throw NodeFailure(to, peer(to) ? "it left" : "no connection to it");
}

Outgoing TcpBackend::Impl::directive_frame(const Directive& d, const Payload* payload) const {
  Outgoing f;
  WireWriter out(f.head, SIZE_MAX);
  out(d);
  if (payload) payload->save(out);
  f.segments = out.segments();
  f.header.kind = FrameKind::Directive;
  f.header.sender = me;
  f.header.length = static_cast<std::uint32_t>(out.size());
  return f;
}

void TcpBackend::Impl::send_directive(NodeId to, const Directive& d, const Payload* payload) {
  send_frame(to, directive_frame(d, payload));
}

void TcpBackend::Impl::send_directive(NodeId to, const Directive& d, std::string attached) {
  Outgoing f;
  WireWriter out(f.head, SIZE_MAX);  // the directive is copied: it may be a temporary
  out(d);
  out(static_cast<std::uint64_t>(attached.size()));  // a std::string as cereal writes one: its size, then its bytes
  const std::size_t size = out.size() + attached.size();
  if (size > options.max_frame)
    throw std::length_error("a directive of " + std::to_string(size) + " bytes exceeds the frame limit of " +
                            std::to_string(options.max_frame));
  if (attached.size() < WireWriter::kReferenceAbove) {  // small (maybe inside the string object): copied
    out.write(attached.data(), attached.size());
    f.segments = out.segments();
  } else {  // large: sent from the string's buffer, which moves with it
    f.segments = out.segments();
    f.attached = std::move(attached);
    f.segments.push_back({reinterpret_cast<const std::byte*>(f.attached.data()), f.attached.size()});
  }
  f.header.kind = FrameKind::Directive;
  f.header.sender = me;
  f.header.length = static_cast<std::uint32_t>(size);
  send_frame(to, std::move(f));
}

void TcpBackend::Impl::on_network(const std::function<void()>& f) {
  if (std::this_thread::get_id() == network.get_id()) return f();
  std::promise<void> ran;
  asio::post(io, [&] {
    f();
    ran.set_value();
  });
  ran.get_future().wait();
}

void TcpBackend::Impl::tell(NodeId to, const Directive& d) noexcept {
  try {
    send_directive(to, d);
  } catch (const std::exception& e) {
    log("could not answer node " + std::to_string(to) + ": " + e.what());
  }
}

std::vector<NodeId> TcpBackend::Impl::others(NodeId skip) const {
  std::lock_guard lock(mu);
  std::vector<NodeId> out;
  for (NodeId n : live)
    if (n != me && n != skip) out.push_back(n);
  return out;
}

void TcpBackend::Impl::broadcast(const Directive& d) {
  for (NodeId n : others()) send_directive(n, d);
}

void TcpBackend::Impl::tell_all(const Directive& d) noexcept {
  for (NodeId n : others()) {
    try {
      send_directive(n, d);
    } catch (const std::exception&) {  // it needs to hear no more
    }
  }
}

void TcpBackend::Impl::on_frame(Connection& from, const FrameHeader& header, std::span<const std::byte> body) {
  if (!from.authenticated) return handshake(from, header, body);
  if (header.sender != from.peer)
    return from.close("frame claims to come from node " + std::to_string(header.sender) + ", connection is node " +
                      std::to_string(from.peer) + "'s");
  try {
    switch (header.kind) {
      case FrameKind::Envelope: return on_envelope(header, from.received(), body, from.frame_buffer());
      case FrameKind::Directive: return on_directive(from, body);
      case FrameKind::Heartbeat: return;
      default: return from.close("unexpected frame kind " + std::to_string(static_cast<int>(header.kind)));
    }
  } catch (const std::exception& e) {
    from.close(std::string("malformed frame: ") + e.what());
  }
}

void TcpBackend::Impl::handshake(Connection& c, const FrameHeader& header, std::span<const std::byte> body) {
  auto it = handshakes.find(&c);
  if (it == handshakes.end()) return c.close("unauthenticated frame");
  Handshake& hs = it->second;
  try {
    WireReader in(body);
    if (!hs.connector && header.kind == FrameKind::Hello && hs.node == UINT32_MAX) {
      hs.node = in.get<std::uint32_t>();
      in.read(hs.theirs.data(), hs.theirs.size());
      if (!in.done() || hs.node >= kMaxNodes || hs.node == me) return c.close("malformed hello");
      hs.mine = fresh_nonce();
      c.send(raw_frame(FrameKind::Challenge, me, bytes_of(me, hs.mine, secret.prove("acceptor", hs.theirs, hs.mine))));
    } else if (!hs.connector && header.kind == FrameKind::Proof && hs.node != UINT32_MAX) {
      Digest proof;
      in.read(proof.data(), proof.size());
      if (!in.done() || !same(proof, secret.prove("connector", hs.mine, hs.theirs)))
        return c.close("authentication failed: the peer does not know the application's secret");
      authenticated(c, hs.node);
    } else if (hs.connector && header.kind == FrameKind::Challenge) {
      const auto node = in.get<std::uint32_t>();
      in.read(hs.theirs.data(), hs.theirs.size());
      Digest proof;
      in.read(proof.data(), proof.size());
      if (!in.done() || !same(proof, secret.prove("acceptor", hs.mine, hs.theirs)))
        return c.close("authentication failed: the peer does not know the application's secret");
      if (node != hs.node)
        return c.close("reached node " + std::to_string(node) + " instead of node " + std::to_string(hs.node));
      c.send(raw_frame(FrameKind::Proof, me, bytes_of(secret.prove("connector", hs.theirs, hs.mine))));
      authenticated(c, hs.node);
    } else {
      c.close("unauthenticated frame (kind " + std::to_string(static_cast<int>(header.kind)) + ")");
    }
  } catch (const WireError& e) {
    c.close(std::string("malformed handshake: ") + e.what());
  }
}

void TcpBackend::Impl::authenticated(Connection& c, std::uint32_t node) {
  handshakes.erase(&c);
  {
    std::lock_guard lock(mu);
    if (peer(node)) return c.close("a second connection from node " + std::to_string(node));
    c.authenticated = true;
    c.peer = node;
    peers[node].store(&c, std::memory_order_release);
  }
  changed.notify_all();
}

// A closed connection leaves `connections`; it is freed once no reader of peer() can hold it (asio's
// handlers still running on it hold it too).
void TcpBackend::Impl::bury(Connection& c) {
  std::shared_ptr<Connection> closed;
  {
    std::lock_guard lock(mu);
    auto it = std::find_if(connections.begin(), connections.end(), [&](const auto& p) { return p.get() == &c; });
    if (it == connections.end()) return;
    closed = std::move(*it);
    connections.erase(it);
  }
  graveyard.bury([closed = std::move(closed)] { return true; });
  graveyard.collect();
}

void TcpBackend::Impl::on_closed(Connection& c, const std::string& reason) {
  handshakes.erase(&c);
  if (!c.authenticated) {
    bury(c);
    log("refused a connection from " + c.remote() + ": " + reason);
    return;
  }
  std::string lost;
  bool quiet = false;
  {
    std::lock_guard lock(mu);
    if (peer(c.peer) == &c) peers[c.peer].store(nullptr, std::memory_order_release);
    quiet = ending || departed.contains(c.peer);
  }
  bury(c);  // once unpublished: a sender that still found it holds a guard
  changed.notify_all();
  sealed_by(c.peer);
  // Migrations and retirements it was to answer for will not complete, even when it left on purpose.
  const auto gone = std::make_exception_ptr(NodeFailure(c.peer, reason));
  for (Migration& m : take_answerable_by(migrations, c.peer)) m.done(gone);
  for (Retirement& r : take_answerable_by(retirements, c.peer)) r.hand_back(nullptr, gone);
  if (quiet) return;
  {
    std::lock_guard lock(mu);
    live.erase(c.peer);
    if (me != 0 && c.peer == 0) {
      failure = "node 0 is gone (" + reason + ")";
      exit_status = 1;
      ending = true;
    } else {
      lost = reason;
      if (me == 0 && runtime == nullptr)
        failure = "node " + std::to_string(c.peer) + " failed while starting: " + reason;
    }
  }
  changed.notify_all();
  if (me != 0 && c.peer == 0) {
    log("node 0 is gone (" + reason + "): leaving");
  } else if (!lost.empty()) {
    // Calls are node 0's: it fails them, for its own losses and for those the others report.
    log("lost node " + std::to_string(c.peer) + ": " + lost);
    if (me == 0 && runtime) runtime->fail_calls(std::make_exception_ptr(NodeFailure(c.peer, lost)));
    if (me != 0) tell(0, PeerLost{c.peer, lost});
  }
}

// ---------------------------------------------------------------------------------------------
// TcpBackend: the Backend interface

TcpBackend::TcpBackend(TcpOptions options) : impl_(std::make_unique<Impl>(*this, std::move(options))) {}

TcpBackend::~TcpBackend() { stop(); }

void TcpBackend::attach(Runtime& runtime) {
  runtime.link(this);  // before the network thread sees the runtime: its directives use the link
  {
    std::lock_guard lock(impl_->mu);
    impl_->runtime = &runtime;
    impl_->kernel = &runtime;
  }
  impl_->changed.notify_all();
}

std::vector<NodeId> TcpBackend::nodes() const {
  std::lock_guard lock(impl_->mu);
  return {impl_->live.begin(), impl_->live.end()};
}

NodeId TcpBackend::local_node() const { return impl_->me; }

bool TcpBackend::hosts(NodeId node) const { return node == impl_->me; }

std::string TcpBackend::address() const { return impl_->endpoint.host + ":" + std::to_string(impl_->endpoint.port); }

// A message the network thread delivers to a quick thread is handled right there.
void TcpBackend::schedule(Thread& thread, Priority priority) {
  if (std::this_thread::get_id() != impl_->network.get_id()) return impl_->strands.schedule(thread, priority);
  if (impl_->strands.run_here(thread, priority)) impl_->ran_here = true;
}

void TcpBackend::send(NodeId /*from: this node*/, Thread& to, Envelope* e) {
  NodeId node = to.node();
  if (node == impl_->me) return impl_->kernel->enqueue(to, e);  // it arrived here meanwhile
  Outgoing f;
  f.lane = lane_of(e->kind);
  f.envelope.reset(e);
  f.head.reserve(128);
  WireWriter out(f.head);
  try {
    encode(*e, to, out);
    f.segments = out.segments();
    const std::size_t size = out.size();
    if (size > impl_->options.max_frame)
      throw std::length_error("an object of " + std::to_string(size) + " bytes exceeds the frame limit of " +
                              std::to_string(impl_->options.max_frame));
    f.header.length = static_cast<std::uint32_t>(size);
    f.header.sender = impl_->me;
    // Traced by the node that receives it (Impl::on_envelope). Refused: `node` left after `to` moved
    // away from it, and the network thread, which sealed the connection, learnt where `to` went first.
    while (!impl_->offer(node, f)) {
      if (to.node() == node) throw NodeFailure(node, impl_->peer(node) ? "it left" : "no connection to it");
      node = to.node();
      if (node == impl_->me) return impl_->kernel->enqueue(to, f.envelope.release());
    }
  } catch (...) {  // data or control, its call cannot go on without it
    if (e->call) impl_->kernel->fail_call(e->call, std::current_exception());
  }
}

void TcpBackend::quiesce() { impl_->strands.quiesce(); }

double TcpBackend::now() const { return impl_->now(); }

void TcpBackend::stop() {
  Impl& i = *impl_;
  if (i.me == 0) {
    bool first;
    {
      std::lock_guard lock(i.mu);
      first = !i.ending;
      i.ending = true;
      i.orderly = true;
    }
    if (first) {
      // Tell the others, then give them a moment to leave on their own.
      const std::vector<NodeId> others = i.others();
      for (NodeId n : others) {
        try {
          i.send_directive(n, Shutdown{});
        } catch (const std::exception&) {
        }
      }
      std::unique_lock lock(i.mu);
      i.changed.wait_for(lock, std::chrono::seconds(5), [&] {
        return std::none_of(others.begin(), others.end(), [&](NodeId n) { return i.peer(n); });
      });
    }
  }
  // From now on the network thread delivers nothing: it learns so between two frames.
  i.on_network([&] {
    std::lock_guard lock(i.mu);
    i.runtime = nullptr;
    i.stopped = true;
  });
}

int TcpBackend::serve() {
  std::unique_lock lock(impl_->mu);
  impl_->changed.wait(lock, [&] { return impl_->ending; });
  return impl_->exit_status;
}

}  // namespace dps::net
