// TcpBackend, membership: who this process is (an instance node 0 started, a rank of srun or
// mpirun, or node 0), starting and joining the instances, the clock, and nodes added and removed.
#include "tcp_backend_impl.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <thread>

namespace dps::net {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

Endpoint parse_endpoint(const std::string& text, NodeId node) {
  const auto colon = text.rfind(':');
  unsigned port = 0;
  if (colon == std::string::npos ||
      std::from_chars(text.data() + colon + 1, text.data() + text.size(), port).ec != std::errc() || port == 0 ||
      port > 65535)
    throw std::runtime_error("DPS_COORDINATOR must be host:port, got '" + text + "'");
  return {node, text.substr(0, colon), static_cast<std::uint16_t>(port)};
}

// Node processes that share a host share the CPUs they may use: unless told, each runs as many workers as its
// share. Node 0 tells the processes it starts how many share their host (DPS_HOST_PROCESSES); srun
// and mpirun tell theirs; node 0 started with --nodes runs them all here.
TcpOptions with_workers(TcpOptions o) {
  if (o.workers != 0) return o;
  std::size_t sharing = 1;
  if (const std::string told = env("DPS_HOST_PROCESSES"); !told.empty()) {
    sharing = std::strtoul(told.c_str(), nullptr, 10);
  } else if (const auto rank = external_rank()) {
    sharing = rank->on_host;
  } else if (o.hostfile.empty()) {
    sharing = o.nodes;
  }
  o.workers = std::max<std::size_t>(1, dps::detail::usable_cpus() / std::max<std::size_t>(1, sharing));
  return o;
}

}  // namespace

TcpBackend::Impl::Impl(TcpBackend& self, TcpOptions o)
    : self(self), options(with_workers(std::move(o))), strands(options.workers) {
  // Who this process is: an instance node 0 started, a rank of srun or mpirun, or node 0.
  const std::string node_text = env("DPS_NODE");
  // A rank 0 without DPS_COORDINATOR is not taken for one: inside a Slurm batch script (which has
  // SLURM_PROCID and SLURM_NTASKS too) it starts its nodes itself. Other ranks need it to join.
  std::optional<ExternalRank> rank = node_text.empty() ? external_rank() : std::nullopt;
  if (rank && rank->rank == 0 && env("DPS_COORDINATOR").empty()) rank.reset();
  if (!node_text.empty()) {
    unsigned n = 0;
    if (std::from_chars(node_text.data(), node_text.data() + node_text.size(), n).ec != std::errc() || n == 0 ||
        n >= kMaxNodes)
      throw std::runtime_error("DPS_NODE must be a node number from 1 to " + std::to_string(kMaxNodes - 1) +
                               ", got '" + node_text + "'");
    me = n;
  } else if (rank) {
    started_by = rank->launcher;
    if (rank->size > kMaxNodes) throw std::runtime_error("at most " + std::to_string(kMaxNodes) + " nodes");
    if (options.nodes != 0 && options.nodes != rank->size)
      throw std::runtime_error("--nodes " + std::to_string(options.nodes) + " disagrees with the " +
                               std::to_string(rank->size) + " processes " + started_by + " started");
    if (!options.hostfile.empty()) throw std::runtime_error(started_by + " started this application: no --hostfile");
    me = rank->rank;
    options.nodes = rank->size;
  }
  const std::string hex = env("DPS_SECRET");
  if (hex.empty() && me != 0)
    throw std::runtime_error("DPS_SECRET is not set: node " + std::to_string(me) + " cannot authenticate");
  if (hex.empty() && rank)
    throw std::runtime_error("DPS_SECRET is not set: under " + started_by +
                             " every process needs the same secret (export DPS_SECRET=$(openssl rand -hex 32))");
  secret = hex.empty() ? Secret::generate() : Secret::from_hex(hex);

  if (const std::string poll = env("DPS_POLL_US"); !poll.empty()) {
    char* end = nullptr;
    options.poll_us = std::strtod(poll.c_str(), &end);
    if (*end != '\0' || !(options.poll_us >= 0))
      throw std::runtime_error("DPS_POLL_US must be a number of microseconds, got '" + poll + "'");
  }
  network = std::thread([this] { run_network(); });
  heart = std::thread([this] { send_heartbeats(); });
  asio::post(io, [this] { watch(); });
  try {
    if (me != 0) {
      join();
    } else if (rank) {
      const Endpoint at = coordinator();
      listen(resolve(at.host), at.port);
      start_instances();
    } else if (!options.hostfile.empty()) {
      auto slots = read_hostfile(options.hostfile);
      if (options.nodes == 0) options.nodes = slots.size();
      listen(facing(slots));
      remote = new RemoteLauncher(std::move(slots), rsh_command());
      launcher.reset(remote);
      start_instances();
    } else {
      listen(asio::ip::address_v4::loopback());
      launcher = std::make_unique<LocalLauncher>();
      start_instances();
    }
  } catch (...) {
    stop_heart();
    work.reset();
    io.stop();
    network.join();
    throw;
  }
}

// Where node 0 listens for a hostfile's instances: the interface that routes to their hosts (a
// connected UDP socket learns it without sending anything), or every interface when they differ.
// Each host is told the address of node 0 it reaches (`reach`).
asio::ip::address TcpBackend::Impl::facing(const std::vector<std::string>& slots) {
  std::optional<asio::ip::address> common;
  bool differ = false;
  for (const std::string& host : slots) {
    if (reach.contains(host)) continue;
    asio::ip::udp::socket probe(io);
    asio::error_code ec;
    probe.connect({resolve(host), 9}, ec);
    if (ec) throw std::runtime_error("no route to host '" + host + "': " + ec.message());
    const asio::ip::address here = probe.local_endpoint().address();
    reach[host] = here.to_string();
    differ |= common && *common != here;
    common = here;
  }
  if (!differ) return common.value_or(asio::ip::address_v4::loopback());
  log("the hostfile's hosts are reached through different interfaces: listening on all of them");
  return asio::ip::address_v4::any();
}

Endpoint TcpBackend::Impl::coordinator() const {
  const std::string text = env("DPS_COORDINATOR");
  if (text.empty()) {
    const std::string how = started_by.empty() ? "node " + std::to_string(me) + " cannot join"
                                               : "under " + started_by + " it names node 0's host and a free port, e.g. DPS_COORDINATOR=host0:7077";
    throw std::runtime_error("DPS_COORDINATOR is not set: " + how);
  }
  return parse_endpoint(text, 0);
}

template <class Pred>
void TcpBackend::Impl::wait_for_instances(Pred done, const std::string& what, const std::vector<NodeId>& nodes) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options.join_timeout);
  std::unique_lock lock(mu);
  while (failure.empty() && !done()) {
    for (NodeId node : nodes)
      if (const std::string how = launcher ? launcher->ended(node) : ""; !how.empty())
        throw std::runtime_error("the process of node " + std::to_string(node) + " " + how + " before joining");
    if (std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error("timed out after " + seconds_text(options.join_timeout) + " waiting for " + what);
    changed.wait_for(lock, std::chrono::milliseconds(20));
  }
  if (!failure.empty()) throw std::runtime_error(failure);
}

void TcpBackend::Impl::start_instances() {
  const std::size_t n = std::max<std::size_t>(options.nodes, 1);
  if (n > kMaxNodes) throw std::runtime_error("at most " + std::to_string(kMaxNodes) + " nodes");
  {
    std::lock_guard lock(mu);
    live.insert(0);
    next_node = static_cast<NodeId>(n);
  }
  if (n == 1) return;
  std::vector<NodeId> starting;
  for (NodeId node = 1; node < n; ++node) starting.push_back(node);
  if (launcher)
    for (NodeId node : starting) launch(node);
  wait_for_instances([&] { return joined.size() == n - 1; },
                     launcher ? std::to_string(n - 1) + " node processes to join"
                              : "the " + std::to_string(n - 1) + " other processes " + started_by + " started to join",
                     starting);
  Members m{{endpoint}};
  for (const auto& [node, j] : joined) m.nodes.push_back(j.self);
  {
    std::lock_guard lock(mu);
    for (const Endpoint& e : m.nodes) live.insert(e.node);
  }
  broadcast(m);
  wait_for([&] { return ready.size() == n - 1; }, "the node processes to connect to each other", options.join_timeout);
  for (NodeId node = 1; node < n; ++node) align_clock(node);
}

void TcpBackend::Impl::launch(NodeId node) {
  if (!launcher)
    throw std::runtime_error(started_by + " started this application, so it cannot start more nodes: "
                             "start it with --nodes or --hostfile instead");
  std::vector<std::string> argv = options.argv;
  if (argv.empty()) argv.emplace_back();
  argv[0] = self_executable();
  const std::string zero = remote ? reach.at(remote->host(node)) : endpoint.host;  // as that host reaches it
  launcher->start(node, argv,
                  {{"DPS_NODE", std::to_string(node)},
                   {"DPS_COORDINATOR", zero + ":" + std::to_string(endpoint.port)},
                   {"DPS_SECRET", secret.hex()},
                   {"DPS_HOST_PROCESSES", std::to_string(processes_beside(node))}});
}

// The node processes on the host of `node` once it runs: every node number handed out and not
// removed there (lost ones too: a count a little high only costs a worker). Node 0's host is this one.
std::size_t TcpBackend::Impl::processes_beside(NodeId node) const {
  std::lock_guard lock(mu);
  const auto host = [&](NodeId n) { return remote && n != 0 ? remote->host(n) : std::string(); };
  std::size_t count = 0;
  for (NodeId n = 0; n < next_node; ++n)
    count += !departed.contains(n) && host(n) == host(node);
  return count;
}

void TcpBackend::Impl::join() {
  // srun and mpirun start every process at once: node 0 may not listen yet.
  auto c = connect(coordinator(), started_by.empty() ? 0 : options.join_timeout);
  // Listen where node 0 reached us from: the interface the application uses, and only that one.
  listen(c->socket().local_endpoint().address());
  send_directive(0, Join{endpoint, static_cast<std::int64_t>(::getpid()), dps::detail::usable_cpus()});
  wait_for([&] { return members.has_value(); }, "the list of nodes", options.join_timeout);
  std::vector<Endpoint> others;  // the Members directive made them live
  {
    std::lock_guard lock(mu);
    for (const Endpoint& e : members->nodes)
      if (e.node != 0 && e.node != me) others.push_back(e);
  }
  for (const Endpoint& e : others)
    if (e.node < me) connect(e);
  wait_for([&] { return std::all_of(others.begin(), others.end(), [&](const Endpoint& e) { return peer(e.node); }); },
           "connections from the other nodes", options.join_timeout);
  send_directive(0, Ready{me});
}

// Node 0's clock is the application's: a node learns the offset of its own from a few ping
// exchanges, keeping the one with the shortest round trip (the least queueing in it).
void TcpBackend::Impl::align_clock(NodeId node) {
  constexpr int kRounds = 8;
  double best_rtt = 1e300, best_offset = 0;
  for (int round = 0; round < kRounds; ++round) {
    {
      std::lock_guard lock(mu);
      clock_replies.clear();
    }
    const double sent = now();
    send_directive(node, ClockPing{sent});
    wait_for([&] { return !clock_replies.empty(); }, "node " + std::to_string(node) + " to answer a clock ping", 10);
    const double back = now();
    double remote;
    {
      std::lock_guard lock(mu);
      remote = clock_replies.front();
    }
    if (back - sent < best_rtt) {
      best_rtt = back - sent;
      best_offset = (sent + back) / 2 - remote;
    }
  }
  send_directive(node, ClockOffset{best_offset});
}

// The new instance connects to every node, is brought up to date with the structure, and only then
// becomes one of the nodes the others hear of.
NodeId TcpBackend::add_node() { return add_nodes(1).front(); }

std::vector<NodeId> TcpBackend::add_nodes(std::size_t count) {
  Impl& i = *impl_;
  if (i.me != 0) throw std::logic_error("only node 0 adds nodes");
  std::vector<NodeId> added;
  {
    std::lock_guard lock(i.mu);
    if (i.next_node + count > kMaxNodes) throw std::runtime_error("at most " + std::to_string(kMaxNodes - 1) + " nodes");
    for (std::size_t k = 0; k < count; ++k) added.push_back(i.next_node++);
  }
  for (NodeId node : added) i.launch(node);  // their processes start meanwhile
  for (NodeId node : added) i.integrate(node);
  return added;
}

void TcpBackend::Impl::integrate(NodeId node) {
  wait_for_instances([&] { return joined.contains(node); }, "node " + std::to_string(node) + " to join", {node});
  Members m{{endpoint}};
  {
    std::lock_guard lock(mu);
    for (NodeId n : live)
      if (n != 0) m.nodes.push_back(joined.at(n).self);
  }
  m.nodes.push_back(joined.at(node).self);
  send_directive(node, m);
  wait_for([&] { return ready.contains(node); }, "node " + std::to_string(node) + " to connect to the others",
             options.join_timeout);
  align_clock(node);
  send_structure(node);
  {
    std::lock_guard lock(mu);
    live.insert(node);
  }
  for (const Endpoint& e : m.nodes)
    if (e.node != 0 && e.node != node) send_directive(e.node, m);
}

bool TcpBackend::can_add_nodes() const { return impl_->launcher != nullptr; }

std::size_t TcpBackend::workers() const noexcept { return impl_->strands.workers(); }

// The kernel has moved the node's threads away: it is told to leave (protocol.hpp, Leaving).
void TcpBackend::remove_node(NodeId node) {
  Impl& i = *impl_;
  if (node == 0) throw std::invalid_argument("node 0 coordinates the application and cannot be removed");
  {
    std::lock_guard lock(i.mu);
    if (!i.live.contains(node)) throw std::invalid_argument("no node " + std::to_string(node));
    i.live.erase(node);
    i.departed.insert(node);
  }
  i.send_directive(node, Leaving{node});
  i.wait_for([&] { return i.peer(node) == nullptr; }, "node " + std::to_string(node) + " to leave", 10);
}

unsigned TcpBackend::cores(NodeId node) const {
  if (node == impl_->me) return dps::detail::usable_cpus();
  std::lock_guard lock(impl_->mu);
  auto it = impl_->joined.find(node);
  return it == impl_->joined.end() ? 0 : it->second.cores;
}

long TcpBackend::process_id(NodeId node) const {
  if (node == impl_->me) return static_cast<long>(::getpid());
  std::lock_guard lock(impl_->mu);
  auto it = impl_->joined.find(node);
  return it == impl_->joined.end() ? -1 : static_cast<long>(it->second.pid);
}

}  // namespace dps::net
