// Membership: who this process is, forming the application, nodes added, removed and lost, the
// clock, and the end.
#include "membership.hpp"

#include "dps/kernel/strands.hpp"
#include "dps/errors.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
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

}  // namespace

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

Identity Identity::of_this_process(TcpOptions& options) {
  Identity id;
  const std::string node_text = env("DPS_NODE");
  // A rank 0 without DPS_COORDINATOR is not taken for one: inside a Slurm batch script (which has
  // SLURM_PROCID and SLURM_NTASKS too) it starts its nodes itself. Other ranks need it to join.
  std::optional<ExternalRank> rank = node_text.empty() ? external_rank() : std::nullopt;
  if (rank && rank->rank == 0 && env("DPS_COORDINATOR").empty()) rank.reset();
  if (!node_text.empty()) {
    unsigned n = 0;
    if (std::from_chars(node_text.data(), node_text.data() + node_text.size(), n).ec != std::errc() || n == 0 ||
        n >= kMaxNodes)
      throw std::runtime_error("DPS_NODE must be a node number from 1 to " + std::to_string(kMaxNodes - 1) + ", got '" +
                               node_text + "'");
    id.me = n;
  } else if (rank) {
    id.started_by = rank->launcher;
    if (rank->size > kMaxNodes) throw std::runtime_error("at most " + std::to_string(kMaxNodes) + " nodes");
    if (options.nodes != 0 && options.nodes != rank->size)
      throw std::runtime_error("--nodes " + std::to_string(options.nodes) + " disagrees with the " +
                               std::to_string(rank->size) + " processes " + id.started_by + " started");
    if (!options.hostfile.empty()) throw std::runtime_error(id.started_by + " started this application: no --hostfile");
    id.me = rank->rank;
    options.nodes = rank->size;
  }
  const std::string hex = env("DPS_SECRET");
  if (hex.empty() && id.me != 0)
    throw std::runtime_error("DPS_SECRET is not set: node " + std::to_string(id.me) + " cannot authenticate");
  if (hex.empty() && rank)
    throw std::runtime_error("DPS_SECRET is not set: under " + id.started_by +
                             " every process needs the same secret (export DPS_SECRET=$(openssl rand -hex 32))");
  id.secret = hex.empty() ? Secret::generate() : Secret::from_hex(hex);
  return id;
}

Membership::Membership(NodeProcess& process, const Identity& identity, TcpOptions& options, Transport& transport,
                       RemoteTraces& traces)
    : process_(process),
      secret_(identity.secret),
      started_by_(identity.started_by),
      options_(options),
      transport_(transport),
      traces_(traces) {}

void Membership::form() {
  if (process_.me != 0) return join();
  if (!started_by_.empty()) {
    const Endpoint at = coordinator();
    if (!options_.ports.holds(at.port))
      throw std::runtime_error("DPS_COORDINATOR's port " + std::to_string(at.port) + " is outside --ports " +
                               options_.ports.text());
    transport_.listen(transport_.resolve(at.host), at.port);
  } else if (!options_.hostfile.empty() || !options_.hosts.empty()) {
    auto slots = options_.hosts.empty() ? read_hostfile(options_.hostfile) : options_.hosts;
    if (options_.nodes == 0 || !options_.hosts.empty()) options_.nodes = slots.size();
    transport_.listen(facing(slots));
    remote_ = new RemoteLauncher(std::move(slots), rsh_command());
    launcher_.reset(remote_);
  } else {
    transport_.listen(asio::ip::address_v4::loopback());
    launcher_ = std::make_unique<LocalLauncher>();
  }
  start_instances();
}

// Where node 0 listens for a hostfile's instances: the interface that routes to their hosts, or
// every interface when they differ. Each host is told the address of node 0 it reaches (`reach_`).
asio::ip::address Membership::facing(const std::vector<std::string>& slots) {
  std::optional<asio::ip::address> common;
  bool differ = false;
  for (const std::string& host : slots) {
    if (reach_.contains(host)) continue;
    const asio::ip::address here = transport_.route_to(host);
    reach_[host] = here.to_string();
    differ |= common && *common != here;
    common = here;
  }
  if (!differ) return common.value_or(asio::ip::address_v4::loopback());
  process_.log("the hostfile's hosts are reached through different interfaces: listening on all of them");
  return asio::ip::address_v4::any();
}

Endpoint Membership::coordinator() const {
  const std::string text = env("DPS_COORDINATOR");
  if (text.empty()) {
    const std::string how =
        started_by_.empty()
            ? "node " + std::to_string(process_.me) + " cannot join"
            : "under " + started_by_ + " it names node 0's host and a free port, e.g. DPS_COORDINATOR=host0:7077";
    throw std::runtime_error("DPS_COORDINATOR is not set: " + how);
  }
  return parse_endpoint(text, 0);
}

template <class Pred>
void Membership::wait_for_instances(Pred done, const std::string& what, const std::vector<NodeId>& nodes) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(options_.join_timeout);
  std::unique_lock lock(process_.mu);
  while (process_.failure.empty() && !done()) {
    for (NodeId node : nodes)
      if (const std::string how = launcher_ ? launcher_->ended(node) : ""; !how.empty())
        throw std::runtime_error("the process of node " + std::to_string(node) + " " + how + " before joining");
    if (std::chrono::steady_clock::now() >= deadline)
      throw std::runtime_error("timed out after " + seconds_text(options_.join_timeout) + " waiting for " + what);
    process_.changed.wait_for(lock, std::chrono::milliseconds(20));
  }
  if (!process_.failure.empty()) throw std::runtime_error(process_.failure);
}

void Membership::start_instances() {
  const std::size_t n = std::max<std::size_t>(options_.nodes, 1);
  if (n > kMaxNodes) throw std::runtime_error("at most " + std::to_string(kMaxNodes) + " nodes");
  {
    std::lock_guard lock(process_.mu);
    live_.insert(0);
    next_node_ = static_cast<NodeId>(n);
  }
  if (n == 1) return;
  std::vector<NodeId> starting;
  for (NodeId node = 1; node < n; ++node) starting.push_back(node);
  if (launcher_)
    for (NodeId node : starting) launch(node);
  wait_for_instances([&] { return joined_.size() == n - 1; },
                     launcher_
                         ? std::to_string(n - 1) + " node processes to join"
                         : "the " + std::to_string(n - 1) + " other processes " + started_by_ + " started to join",
                     starting);
  Members m{{transport_.endpoint()}};
  for (const auto& [node, j] : joined_) m.nodes.push_back(j.self);
  {
    std::lock_guard lock(process_.mu);
    for (const Endpoint& e : m.nodes) live_.insert(e.node);
  }
  broadcast(m);
  process_.wait_for([&] { return ready_.size() == n - 1; }, "the node processes to connect to each other",
                    options_.join_timeout);
  for (NodeId node = 1; node < n; ++node) align_clock(node);
}

void Membership::launch(NodeId node) {
  if (!launcher_)
    throw std::runtime_error(started_by_ +
                             " started this application, so it cannot start more nodes: "
                             "start it with --nodes or --hostfile instead");
  if (!options_.hosts.empty() && node >= options_.hosts.size()) {  // a cluster job's growth: on a granted host
    std::lock_guard lock(process_.mu);
    if (granted_.empty())
      throw std::runtime_error("the cluster's scheduler granted no host for node " + std::to_string(node));
    remote_->place(node, std::move(granted_.front()));
    granted_.pop_front();
  }
  std::vector<std::string> argv = options_.argv;
  if (argv.empty()) argv.emplace_back();
  argv[0] = self_executable();
  const Endpoint& zero = transport_.endpoint();
  const std::string address = remote_ ? reach_.at(remote_->host(node)) : zero.host;  // as that host reaches it
  launcher_->start(node, argv,
                   {{"DPS_NODE", std::to_string(node)},
                    {"DPS_COORDINATOR", address + ":" + std::to_string(zero.port)},
                    {"DPS_SECRET", secret_.hex()},
                    {"DPS_HOST_PROCESSES", std::to_string(processes_beside(node))}});
}

// The node processes on the host of `node` once it runs: every node number handed out and not
// removed there (lost ones too: a count a little high only costs a worker). Node 0's host is this one.
std::size_t Membership::processes_beside(NodeId node) const {
  std::lock_guard lock(process_.mu);
  const auto host = [&](NodeId n) { return remote_ && n != 0 ? remote_->host(n) : std::string(); };
  std::size_t count = 0;
  for (NodeId n = 0; n < next_node_; ++n) count += !departed_.contains(n) && host(n) == host(node);
  return count;
}

void Membership::join() {
  // srun and mpirun start every process at once: node 0 may not listen yet.
  auto c = transport_.connect(coordinator(), started_by_.empty() ? 0 : options_.join_timeout);
  // Listen where node 0 reached us from: the interface the application uses, and only that one.
  transport_.listen(c->socket().local_endpoint().address());
  transport_.send_directive(
      0, Join{transport_.endpoint(), static_cast<std::int64_t>(::getpid()), dps::detail::usable_cpus()});
  process_.wait_for([&] { return members_.has_value(); }, "the list of nodes", options_.join_timeout);
  std::vector<Endpoint> others;  // the Members directive made them live
  {
    std::lock_guard lock(process_.mu);
    for (const Endpoint& e : members_->nodes)
      if (e.node != 0 && e.node != process_.me) others.push_back(e);
  }
  for (const Endpoint& e : others) {
    if (e.node > process_.me) continue;
    try {
      transport_.connect(e);
    } catch (const std::exception& error) {  // it failed meanwhile: node 0 hears of it and decides
      lost(e.node, error.what());
    }
  }
  process_.wait_for(  // lost ones too
      [&] {
        return std::all_of(others.begin(), others.end(),
                           [&](const Endpoint& e) { return transport_.peer(e.node) || !live_.contains(e.node); });
      },
      "connections from the other nodes", options_.join_timeout);
  transport_.send_directive(0, Ready{process_.me});
}

// Node 0's clock is the application's: a node learns the offset of its own from a few ping
// exchanges, keeping the one with the shortest round trip (the least queueing in it).
void Membership::align_clock(NodeId node) {
  constexpr int kRounds = 8;
  double best_rtt = 1e300, best_offset = 0;
  for (int round = 0; round < kRounds; ++round) {
    {
      std::lock_guard lock(process_.mu);
      clock_replies_.clear();
    }
    const double sent = process_.now();
    transport_.send_directive(node, ClockPing{sent});
    process_.wait_for([&] { return !clock_replies_.empty(); },
                      "node " + std::to_string(node) + " to answer a clock ping", 10);
    const double back = process_.now();
    double remote;
    {
      std::lock_guard lock(process_.mu);
      remote = clock_replies_.front();
    }
    if (back - sent < best_rtt) {
      best_rtt = back - sent;
      best_offset = (sent + back) / 2 - remote;
    }
  }
  transport_.send_directive(node, ClockOffset{best_offset});
}

// ---------------------------------------------------------------------------------------------
// Nodes added and removed while the application runs

// The new instance connects to every node, is brought up to date with the structure, and only then
// becomes one of the nodes the others hear of.
std::vector<NodeId> Membership::add_nodes(std::size_t count, const std::function<void(NodeId)>& catch_up) {
  if (process_.me != 0) throw std::logic_error("only node 0 adds nodes");
  std::vector<NodeId> added;
  {
    std::lock_guard lock(process_.mu);
    if (next_node_ + count > kMaxNodes) throw std::runtime_error("at most " + std::to_string(kMaxNodes - 1) + " nodes");
    for (std::size_t k = 0; k < count; ++k) added.push_back(next_node_++);
  }
  for (NodeId node : added) launch(node);  // their processes start meanwhile
  for (NodeId node : added) integrate(node, catch_up);
  return added;
}

void Membership::integrate(NodeId node, const std::function<void(NodeId)>& catch_up) {
  wait_for_instances([&] { return joined_.contains(node); }, "node " + std::to_string(node) + " to join", {node});
  Members m{{transport_.endpoint()}};
  {
    std::lock_guard lock(process_.mu);
    for (NodeId n : live_)
      if (n != 0) m.nodes.push_back(joined_.at(n).self);
  }
  m.nodes.push_back(joined_.at(node).self);
  transport_.send_directive(node, m);
  process_.wait_for([&] { return ready_.contains(node); }, "node " + std::to_string(node) + " to connect to the others",
                    options_.join_timeout);
  align_clock(node);
  catch_up(node);
  {
    std::lock_guard lock(process_.mu);
    live_.insert(node);
    std::erase_if(m.nodes, [&](const Endpoint& e) { return e.node != 0 && !live_.contains(e.node); });  // failed since
  }
  for (const Endpoint& e : m.nodes)
    if (e.node != 0 && e.node != node) transport_.send_directive(e.node, m);
}

// The kernel has moved the node's threads away: it is told to leave (protocol.hpp, Leaving).
void Membership::remove_node(NodeId node) {
  if (node == 0) throw std::invalid_argument("node 0 coordinates the application and cannot be removed");
  {
    std::lock_guard lock(process_.mu);
    if (!live_.contains(node)) throw std::invalid_argument("no node " + std::to_string(node));
    live_.erase(node);
    departed_.insert(node);
  }
  transport_.send_directive(node, Leaving{node});
  process_.wait_for([&] { return transport_.peer(node) == nullptr; }, "node " + std::to_string(node) + " to leave", 10);
}

void Membership::grant(const std::vector<std::string>& hosts) {
  if (options_.hosts.empty()) throw std::logic_error("hosts are granted to a real cluster's job only");
  facing(hosts);  // how each reaches node 0
  std::lock_guard lock(process_.mu);
  granted_.insert(granted_.end(), hosts.begin(), hosts.end());
}

std::string Membership::released_host(NodeId node) {
  if (!remote_) return {};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (launcher_->ended(node).empty() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  return remote_->host(node);
}

std::vector<std::string> Membership::held_hosts() const {
  std::vector<std::string> hosts;
  if (options_.hosts.empty() || !remote_) return hosts;
  for (const NodeId node : nodes()) hosts.push_back(remote_->host(node));  // node 0's: the first granted
  return hosts;
}

unsigned Membership::cores(NodeId node) const {
  if (node == process_.me) return dps::detail::usable_cpus();
  std::lock_guard lock(process_.mu);
  auto it = joined_.find(node);
  return it == joined_.end() ? 0 : it->second.cores;
}

long Membership::process_id(NodeId node) const {
  if (node == process_.me) return static_cast<long>(::getpid());
  std::lock_guard lock(process_.mu);
  auto it = joined_.find(node);
  return it == joined_.end() ? -1 : static_cast<long>(it->second.pid);
}

std::vector<NodeId> Membership::nodes() const {
  std::lock_guard lock(process_.mu);
  return {live_.begin(), live_.end()};
}

std::string Membership::host_of(NodeId node) const {
  if (node == process_.me) return transport_.endpoint().host;
  std::lock_guard lock(process_.mu);
  if (auto j = joined_.find(node); j != joined_.end()) return j->second.self.host;  // node 0
  if (members_)
    for (const Endpoint& e : members_->nodes)
      if (e.node == node) return e.host;
  return {};
}

std::vector<NodeId> Membership::others(NodeId skip) const {
  std::lock_guard lock(process_.mu);
  std::vector<NodeId> out;
  for (NodeId n : live_)
    if (n != process_.me && n != skip) out.push_back(n);
  return out;
}

void Membership::broadcast(const Directive& d) {
  for (NodeId n : others()) send_unless_lost(n, d);
}

void Membership::send_unless_lost(NodeId node, const Directive& d) {
  try {
    transport_.send_directive(node, d);
  } catch (const NodeFailure&) {
    if (transport_.peer(node)) throw;
  }
}

void Membership::tell_all(const Directive& d) noexcept {
  for (NodeId n : others()) {
    try {
      transport_.send_directive(n, d);
    } catch (const std::exception&) {  // it needs to hear no more
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The end of nodes and of the application

void Membership::stop() {
  if (process_.me != 0) return;
  bool first;
  {
    std::lock_guard lock(process_.mu);
    first = !ending_;
    ending_ = true;
    orderly_ = true;
  }
  if (!first) return;
  // Tell the others, then give them a moment to leave on their own.
  const std::vector<NodeId> told = others();
  for (NodeId n : told) {
    try {
      transport_.send_directive(n, Shutdown{});
    } catch (const std::exception&) {
    }
  }
  std::unique_lock lock(process_.mu);
  process_.changed.wait_for(lock, std::chrono::seconds(5), [&] {
    return std::none_of(told.begin(), told.end(), [&](NodeId n) { return transport_.peer(n); });
  });
}

int Membership::serve() {
  std::unique_lock lock(process_.mu);
  process_.changed.wait(lock, [&] { return ending_; });
  return exit_status_;
}

bool Membership::expects_close(NodeId node) const {
  std::lock_guard lock(process_.mu);
  return ending_ || departed_.contains(node);
}

bool Membership::ending() const {
  std::lock_guard lock(process_.mu);
  return ending_;
}

void Membership::sealed_by(NodeId node) {
  {
    std::lock_guard lock(process_.mu);
    if (!unsealed_ || unsealed_->erase(node) == 0 || !unsealed_->empty()) return;
    ending_ = true;
  }
  process_.changed.notify_all();
}

void Membership::lost(NodeId node, const std::string& reason) {
  const NodeId me = process_.me;
  std::string lost;
  {
    std::lock_guard lock(process_.mu);
    if (failed_.contains(node)) return;  // recovered from already
    live_.erase(node);
    if (me != 0) failed_.insert(node);  // a list of members that still names it does not bring it back
    if (me != 0 && node == 0) {
      process_.failure = "node 0 is gone (" + reason + ")";
      exit_status_ = 1;
      ending_ = true;
    } else {
      lost = reason;
      if (me == 0 && process_.runtime == nullptr)
        process_.failure = "node " + std::to_string(node) + " failed while starting: " + reason;
    }
  }
  process_.changed.notify_all();
  if (me != 0 && node == 0) {
    process_.log("node 0 is gone (" + reason + "): leaving");
  } else if (!lost.empty()) {
    // Calls are node 0's: it fails them, or rebuilds the node's threads (fault tolerance), for its
    // own losses; the others report theirs.
    process_.log("lost node " + std::to_string(node) + ": " + lost);
    if (me == 0 && process_.runtime) {
      if (process_.runtime->fault_tolerant()) failed(node);
      process_.runtime->node_failed(node, lost);
    }
    if (me != 0) transport_.tell(0, PeerLost{node, lost});
  }
}

void Membership::failed(NodeId node) {
  std::lock_guard lock(process_.mu);
  live_.erase(node);
  failed_.insert(node);
}

void Membership::end() {
  std::lock_guard lock(process_.mu);
  ending_ = true;
}

bool Membership::ended_normally() const {
  std::lock_guard lock(process_.mu);
  return orderly_;
}

void Membership::reap() {
  if (launcher_) launcher_->reap(5);
}

// ---------------------------------------------------------------------------------------------
// Directives

void Membership::handle(Join& d, Incoming& in) {
  in.nothing_follows();
  if (process_.me != 0 || d.self.node != in.sender) throw WireError("unexpected join");
  {
    std::lock_guard lock(process_.mu);
    joined_[in.sender] = d;
  }
  process_.changed.notify_all();
}

void Membership::handle(Members& d, Incoming& in) {
  in.nothing_follows();
  {
    std::lock_guard lock(process_.mu);
    members_ = d;
    for (const Endpoint& e : d.nodes)
      if (!failed_.contains(e.node)) live_.insert(e.node);
  }
  process_.changed.notify_all();
}

void Membership::handle(Leaving& d, Incoming& in) {
  in.nothing_follows();
  if (in.sender != 0 || d.node != process_.me) throw WireError("unexpected leaving");
  traces_.flush();
  std::set<NodeId> told;
  for (NodeId n : others()) {
    Outgoing departing = transport_.directive_frame(Departing{});
    if (transport_.offer(n, departing)) told.insert(n);
  }
  {
    std::lock_guard lock(process_.mu);
    unsealed_ = std::move(told);
    ending_ = unsealed_->empty();
  }
  process_.changed.notify_all();
}

void Membership::handle(Departing&, Incoming& in) {
  in.nothing_follows();
  {
    std::lock_guard lock(process_.mu);
    live_.erase(in.sender);
    departed_.insert(in.sender);
  }
  process_.changed.notify_all();
  in.connection.seal(transport_.directive_frame(Sealed{}));
}

void Membership::handle(Sealed&, Incoming& in) {
  in.nothing_follows();
  sealed_by(in.sender);
}

void Membership::handle(Ready&, Incoming& in) {
  in.nothing_follows();
  {
    std::lock_guard lock(process_.mu);
    ready_.insert(in.sender);
  }
  process_.changed.notify_all();
}

void Membership::handle(ClockPing& d, Incoming& in) {
  in.nothing_follows();
  transport_.tell(in.sender, ClockPong{d.sent, process_.now()});
}

void Membership::handle(ClockPong& d, Incoming& in) {
  in.nothing_follows();
  {
    std::lock_guard lock(process_.mu);
    clock_replies_.push_back(d.here);
  }
  process_.changed.notify_all();
}

void Membership::handle(ClockOffset& d, Incoming& in) {
  in.nothing_follows();
  process_.set_clock_offset(d.offset);
}

void Membership::handle(Shutdown&, Incoming& in) {
  in.nothing_follows();
  traces_.flush();  // before the connections close
  {
    std::lock_guard lock(process_.mu);
    ending_ = true;
    orderly_ = true;
  }
  process_.changed.notify_all();
}

void Membership::handle(Goodbye&, Incoming& in) {
  in.nothing_follows();
  std::lock_guard lock(process_.mu);
  departed_.insert(in.sender);  // its connection closes next, on purpose
}

void Membership::handle(PeerLost& d, Incoming& in) {
  in.nothing_follows();
  if (process_.me != 0) throw WireError("unexpected peer lost");
  const std::string reason = "node " + std::to_string(in.sender) + " lost its connection to it: " + d.reason;
  Runtime* rt = process_.attached();
  if (!rt) return;
  if (rt->fault_tolerant()) {  // node 0 declares a node failed on its own evidence only (its connection)
    process_.log("node " + std::to_string(d.node) + ": " + reason);
    return rt->peer_lost(in.sender, d.node);
  }
  rt->fail_calls(std::make_exception_ptr(NodeFailure(d.node, reason)));
}

}  // namespace dps::net
