// Engine: actions, the CPUs' sharing, the network model's ends, and the event heap.
#include "dps/sim/engine.hpp"

#include "indexed_heap.hpp"
#include "network/network.hpp"
#include "progressive_filling.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <string>

namespace dps::sim {

class Engine::Queue final : public network::Events {
 public:
  explicit Queue(Engine& engine) : e_(engine) {}
  std::uint32_t add(std::uint32_t key) override {
    const ActionId id = e_.make(Kind::Network, {});
    e_.actions_[id].from = key;
    return id;
  }
  void schedule(std::uint32_t event, double time, std::uint64_t seq) override {
    Action& a = e_.actions_[event];
    a.finish = time;
    a.seq = seq;
    e_.heap_place(event);
  }
  void cancel(std::uint32_t event) override {
    if (e_.actions_[event].heap_at != kNone) e_.heap_erase(event);
  }

 private:
  Engine& e_;
};

Engine::Engine(ClusterModel model) : model_(std::move(model)) {
  for (const NodeGroup& g : model_.groups)
    for (std::size_t i = 0; i < g.count; ++i) {
      if (i % g.nodes_per_host == 0) {
        Host h{static_cast<double>(g.cores), static_cast<VNode>(nodes_.size()), 0};
        if (g.context_switch > 0 && g.time_slice > 0) h.slicing = g.time_slice / (g.time_slice + g.context_switch);
        if (g.quota > 0) {
          // Each host's period begins at its own phase, as each cgroup's timer began when it was set.
          const double phase = std::fmod(static_cast<double>(hosts_.size()) * 0.6180339887498949, 1.0);
          h.quota = g.quota * g.quota_period;
          h.period = g.quota_period;
          h.period_end = phase * g.quota_period;  // the first period, a part of one, has the whole budget
          h.budget = h.quota;
        }
        hosts_.push_back(h);
      }
      ++hosts_.back().count;
      Node n;
      n.cores = g.cores;
      n.workers = g.workers;
      n.speed = g.speed;
      n.host = static_cast<std::uint32_t>(hosts_.size() - 1);
      nodes_.push_back(std::move(n));
    }
  for (std::uint32_t h = 0; h < hosts_.size(); ++h)
    if (hosts_[h].quota > 0) {
      hosts_[h].event = make(Kind::Quota, {});
      actions_[hosts_[h].event].from = h;
    }
  usage_.resize(nodes_.size());
  queue_ = std::make_unique<Queue>(*this);
  network_ = network::make(model_, nodes_.size(), usage_, *queue_);
  if (per_byte()) sharing_ = std::make_unique<ProgressiveFilling>();
}

Engine::~Engine() = default;

VNode Engine::acquire(const void* owner) {
  for (VNode v = 0; v < nodes_.size(); ++v)
    if (!nodes_[v].owner) {
      nodes_[v].owner = owner;
      return v;
    }
  throw ModelError("the simulated cluster has no free node: all " + std::to_string(nodes_.size()) +
                   " are in use (give the model more nodes)");
}

void Engine::release(VNode node) { nodes_.at(node).owner = nullptr; }

// --- actions ---

Engine::ActionId Engine::make(Kind kind, Completion done) {
  ActionId id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = static_cast<ActionId>(actions_.size());
    actions_.emplace_back();
  }
  Action& a = actions_[id];
  a = Action{};
  a.kind = kind;
  a.done = done;
  a.seq = seq_++;
  a.updated = now_;
  return id;
}

void Engine::free(ActionId id) { free_.push_back(id); }

void Engine::compute(VNode node, double work, Completion done) { add_computation(Kind::Compute, node, work, done); }

void Engine::add_computation(Kind kind, VNode node, double work, Completion done) {
  const ActionId id = make(kind, done);
  Action& a = actions_[id];
  a.from = node;
  a.remaining = work;
  list_add(nodes_.at(node).running, a.at_from, id);
  reshare_cpu(node);
}

// A message has arrived: with a receive cost, it waits its turn on the node's network thread.
bool Engine::arrive(VNode node, double bytes, Completion done) {
  const double unpack_per_byte = model_.network.cpu_per_received_byte;
  if (unpack_per_byte <= 0) return false;
  Node& n = nodes_[node];
  if (!n.unpacking && bytes == 0) return false;  // nothing to unpack and nothing before it
  n.arrivals.push_back({bytes * unpack_per_byte, done});
  if (!n.unpacking) unpack_next(node);
  return true;
}

void Engine::unpack_next(VNode node) {
  Node& n = nodes_[node];
  if (n.arrivals_from == n.arrivals.size()) {
    n.arrivals.clear();
    n.arrivals_from = 0;
    return;
  }
  const Arrival next = n.arrivals[n.arrivals_from++];
  n.unpacking = true;
  add_computation(Kind::Unpack, node, next.work, next.done);
}

void Engine::transfer(VNode from, VNode to, double bytes, Completion done, Lane lane, SenderPaid paid) {
  assert(from != to);
  ++transfers_;
  bytes_ += bytes;
  if (model_.network.cpu_per_message > 0 && !paid.message) compute(from, model_.network.cpu_per_message, {});
  const double send_share = bytes > 0 ? std::clamp(1.0 - paid.bytes / bytes, 0.0, 1.0) : 1.0;
  if (model_.network.fifo) {
    Connection& c = connections_[std::uint64_t{from} << 32 | to];
    c.unsent += bytes;
    if (c.busy) {  // behind the message in progress on this pair, and the waiting ones it may not pass
      c.waiting.push({bytes, now_, send_share, done}, lane);
      return;
    }
    c.busy = true;
  }
  start_transfer(from, to, bytes, network_->latency(from, to), send_share, done);
}

void Engine::start_transfer(VNode from, VNode to, double bytes, double latency, double send_share, Completion done) {
  const ActionId id = make(Kind::Latency, done);
  Action& a = actions_[id];
  a.from = from;
  a.to = to;
  a.remaining = bytes;
  a.bytes = bytes;
  a.send_share = send_share;
  a.finish = now_ + latency;
  heap_place(id);
  ++nodes_.at(from).sending;
  nodes_[from].send_shares += send_share;
  ++nodes_.at(to).receiving;
  if (per_byte()) return;  // its CPU follows its bytes, which have not begun to flow
  if (model_.network.cpu_per_send > 0) reshare_cpu(from);
  if (model_.network.cpu_per_receive > 0) reshare_cpu(to);
}

double Engine::unsent(VNode from, VNode to) const {
  const auto c = connections_.find(std::uint64_t{from} << 32 | to);
  return c == connections_.end() ? 0.0 : c->second.unsent;
}

void Engine::timer(double time, Completion done) {
  const ActionId id = make(Kind::Timer, done);
  actions_[id].finish = std::max(time, now_);
  heap_place(id);
}

bool Engine::step() {
  if (heap_.empty()) return false;
  const ActionId id = heap_.front();
  Action& a = actions_[id];
  now_ = std::max(now_, a.finish);
  ++events_;
  heap_erase(id);
  if (a.kind == Kind::Latency && a.remaining > 0) {
    a.kind = Kind::Flow;
    if (per_byte()) {
      a.updated = now_;
      list_add(flows_, a.at_from, id);
      reshare_bytes();
    } else {
      network_->start(id, a.from, a.to, a.remaining, a.seq, now_);
    }
  } else if (a.kind == Kind::Network) {
    end(network_->due(a.from));  // the link's first flow
  } else if (a.kind == Kind::Quota) {
    quota_event(a.from);
  } else {
    end(id);
  }
  return true;
}

void Engine::advance_to(double time) {
  while (next_time() <= time) step();
  now_ = std::max(now_, time);
}

// The action is over: release what it held, then tell its listener (who may start new actions).
void Engine::end(ActionId id) {
  Action& a = actions_[id];
  const Completion done = a.done;
  const VNode from = a.from, to = a.to;
  switch (a.kind) {
    case Kind::Compute:
    case Kind::Unpack: {
      const bool unpacked = a.kind == Kind::Unpack;
      list_remove(nodes_[from].running, a.at_from);
      free(id);
      if (unpacked) {  // the network thread takes the next message waiting
        nodes_[from].unpacking = false;
        unpack_next(from);
      }
      reshare_cpu(from);
      break;
    }
    case Kind::Flow:
    case Kind::Latency: {
      const bool flowed = a.kind == Kind::Flow;
      if (flowed && per_byte()) list_remove(flows_, a.at_from);
      else if (flowed) network_->end(id, now_);
      const double bytes = a.bytes;
      Node& source = nodes_[from];
      source.send_shares = --source.sending == 0 ? 0.0 : source.send_shares - a.send_share;  // no drift left
      free(id);
      --nodes_[to].receiving;
      if (per_byte()) {
        if (flowed) reshare_bytes();
      } else {
        if (model_.network.cpu_per_send > 0) reshare_cpu(from);
        if (model_.network.cpu_per_receive > 0) reshare_cpu(to);
      }
      if (model_.network.cpu_per_message > 0) compute(to, model_.network.cpu_per_message, {});
      if (model_.network.fifo) {  // the next message on the pair; its latency ran while it waited
        Connection& c = connections_[std::uint64_t{from} << 32 | to];
        c.unsent = c.waiting.empty() ? 0.0 : c.unsent - bytes;  // no drift left
        if (c.waiting.empty()) {
          c.busy = false;
        } else {
          const Connection::Message next = c.waiting.front();
          c.waiting.pop_front();
          start_transfer(from, to, next.bytes, std::max(0.0, next.sent + network_->latency(from, to) - now_),
                         next.send_share, next.done);
        }
      }
      if (arrive(to, bytes, done)) return;  // delivered once unpacked
      break;
    }
    case Kind::Timer: free(id); break;
    case Kind::Network:
    case Kind::Quota: break;  // never end: step() handles them
  }
  if (done.listener) done.listener->finished(done.tag);
}

void Engine::settle(Action& a) const noexcept {
  a.remaining = std::max(0.0, a.remaining - a.rate * (now_ - a.updated));
  a.updated = now_;
}

void Engine::set_rate(ActionId id, double rate) {
  Action& a = actions_[id];
  if (a.rate == rate && (a.heap_at != kNone || rate == 0)) return;
  settle(a);
  a.rate = rate;
  a.finish = rate > 0 ? now_ + a.remaining / rate : kNever;
  if (rate > 0)
    heap_place(id);
  else if (a.heap_at != kNone)
    heap_erase(id);
}

// --- CPU: steps share the cores transfers leave them ---

double Engine::comm_cores(const Node& n) const noexcept {
  const bool per_link = model_.network.cpu_per != CommCpu::Transfer;
  // Per link: the link's sending CPU, less what the steps copied of the transfers sharing it (their mean share).
  const double sending = !per_link ? n.send_shares : n.sending > 0 ? n.send_shares / n.sending : 0.0;
  const double receiving = per_link ? std::min(1.0, static_cast<double>(n.receiving)) : n.receiving;
  return std::min<double>(n.cores, model_.network.cpu_per_send * sending + model_.network.cpu_per_receive * receiving);
}

// A host's cores, less what its transfers use, go in equal shares to the steps running on all its
// nodes (the OS shares a machine among its processes' threads), each step at most one core and each
// node within its own cores. More steps than cores take turns, and the switches cost the host.
void Engine::reshare_cpu(VNode v) {
  if (per_byte()) return reshare_bytes();
  Host& host = hosts_[nodes_[v].host];
  const VNode end = host.first + host.count;
  if (host.quota > 0) spend_quota(host);
  host.burn = 0;
  double comm = 0, steps = 0;
  for (VNode u = host.first; u < end; ++u) {
    comm += comm_cores(nodes_[u]);
    steps += static_cast<double>(nodes_[u].running.size());
  }
  const double cores = steps > host.cores ? host.cores * host.slicing : host.cores;
  const double host_share = steps > 0 ? std::max(0.0, cores - comm) / steps : 0.0;
  for (VNode u = host.first; u < end; ++u) {
    Node& n = nodes_[u];
    const double own = comm_cores(n);
    const double k = static_cast<double>(n.running.size());
    const double share = k > 0 && !host.throttled ? std::min({1.0, (n.cores - own) / k, host_share}) : 0.0;
    for (ActionId id : n.running) set_rate(id, n.speed * share);
    const double unpacking = n.unpacking ? share : 0.0;  // communication's CPU, not a step's
    usage_.set(u, Usage::StepCores, now_, k * share - unpacking);
    usage_.set(u, Usage::CommCores, now_, own + unpacking);
    host.burn += k * share + (host.throttled ? 0.0 : own);
  }
  schedule_quota(host);
}

// cpu_per byte: one max-min over the hosts' and nodes' cores and the nodes' links. A step grows to a
// core at most; a transfer uses its two links and, per byte, cpu_per_send / bandwidth of a core at its
// source and cpu_per_receive / bandwidth at its destination. A transfer's level is its busier end's
// share of a core (at level 1 it is a thread of that end busy copying), so a host shares its cores
// among steps and transfers as among threads. A host out of quota has no cores: its steps and the
// transfers to and from it stop.
void Engine::reshare_bytes() {
  const NetworkModel& net = model_.network;
  ProgressiveFilling& pf = *sharing_;
  pf.clear();
  solved_.clear();
  const auto host_of = [&](VNode v) { return static_cast<ProgressiveFilling::Id>(nodes_[v].host); };
  const auto node_of = [&](VNode v) { return static_cast<ProgressiveFilling::Id>(hosts_.size() + v); };
  const auto link_of = [&](VNode v, bool in) { return static_cast<ProgressiveFilling::Id>(hosts_.size() + nodes_.size() + 2 * v + in); };
  for (Host& h : hosts_) {
    if (h.quota > 0) spend_quota(h);
    std::size_t steps = 0;
    for (VNode v = h.first; v < h.first + h.count; ++v) steps += nodes_[v].running.size();
    pf.constraint(h.throttled ? 0.0 : static_cast<double>(steps) > h.cores ? h.cores * h.slicing : h.cores);
  }
  for (const Node& n : nodes_) pf.constraint(n.cores);
  for (std::size_t k = 0; k < 2 * nodes_.size(); ++k) pf.constraint(net.bandwidth);
  for (VNode v = 0; v < nodes_.size(); ++v)
    for (ActionId id : nodes_[v].running) {
      const auto step = pf.variable(1.0, 1.0);
      pf.use(step, node_of(v), 1.0);
      pf.use(step, host_of(v), 1.0);
      solved_.push_back(id);
    }
  const double receive = net.cpu_per_receive / net.bandwidth;
  // One speed for every flow, so that the links are shared max-min whatever each flow's step copied.
  const double busier = std::max(net.cpu_per_send, net.cpu_per_receive);
  const double speed = busier > 0 ? net.bandwidth / busier : net.bandwidth;
  for (ActionId id : flows_) {
    const Action& a = actions_[id];
    const double send = net.cpu_per_send * a.send_share / net.bandwidth;  // its step copied the rest
    const auto flow = pf.variable(speed, ProgressiveFilling::kUnbounded);
    pf.use(flow, link_of(a.from, false), 1.0);
    pf.use(flow, link_of(a.to, true), 1.0);
    for (const auto& [v, per] : {std::pair{a.from, send}, std::pair{a.to, receive}})
      if (per > 0) {
        pf.use(flow, node_of(v), per);
        pf.use(flow, host_of(v), per);
      }
    solved_.push_back(id);
  }
  pf.solve();
  // The rates, and what each node's cores and links are busy with from now on.
  for (VNode v = 0; v < nodes_.size(); ++v) {
    usage_.set(v, Usage::LinkOut, now_, pf.used(link_of(v, false)) / net.bandwidth);
    usage_.set(v, Usage::LinkIn, now_, pf.used(link_of(v, true)) / net.bandwidth);
  }
  std::vector<double>& comm = comm_scratch_;
  comm.assign(nodes_.size(), 0.0);
  for (ProgressiveFilling::Id k = 0; k < solved_.size(); ++k) {
    const ActionId id = solved_[k];
    Action& a = actions_[id];
    const double value = pf.value(k);
    if (a.kind == Kind::Flow) {
      set_rate(id, value);
      comm[a.from] += value * net.cpu_per_send * a.send_share / net.bandwidth;
      comm[a.to] += value * receive;
    } else {
      set_rate(id, nodes_[a.from].speed * value);
      if (a.kind == Kind::Unpack) comm[a.from] += value;
    }
  }
  for (VNode v = 0; v < nodes_.size(); ++v) {
    usage_.set(v, Usage::StepCores, now_, std::max(0.0, pf.used(node_of(v)) - comm[v]));
    usage_.set(v, Usage::CommCores, now_, comm[v]);
  }
  for (std::uint32_t h = 0; h < hosts_.size(); ++h) {
    hosts_[h].burn = pf.used(h);
    schedule_quota(hosts_[h]);
  }
}

void Engine::schedule_quota(Host& host) {
  if (host.quota == 0) return;
  // The next quota event: the budget spent at this burn, or the period's end (which refills it).
  Action& e = actions_[host.event];
  // Spent already, its event a hair late on the way: a reshare meanwhile must not push it later.
  if (host.budget == 0 && !host.throttled && e.heap_at != kNone && e.finish <= now_ + 1e-9 * host.period) return;
  // A hair late (10^-9 of a period), so that a step ending as the budget does ends first, not a period later.
  const double spent = host.burn > 0 && !host.throttled ? now_ + host.budget / host.burn + 1e-9 * host.period : kNever;
  const double next = std::min(spent, host.period_end);
  if (host.burn == 0 && !host.throttled) {  // idle: nothing to schedule; spend_quota catches up the periods
    if (e.heap_at != kNone) heap_erase(host.event);
    return;
  }
  if (e.finish == next && e.heap_at != kNone) return;
  if (e.heap_at != kNone) heap_erase(host.event);
  e.finish = next;
  e.seq = seq_++;
  heap_place(host.event);
}

// CFS bandwidth control: the budget goes at `burn` cores; each period refills it (unused CPU does not
// carry over); the host runs nothing once it is spent, until the period ends.
void Engine::spend_quota(Host& host) {
  host.budget = std::max(0.0, host.budget - host.burn * (now_ - host.spent_at));
  host.spent_at = now_;
  if (now_ >= host.period_end) {  // idle across period ends, or one ends now
    host.period_end += host.period * std::floor((now_ - host.period_end) / host.period + 1);
    host.budget = host.quota;
    host.throttled = false;
  }
}

// Either the period is over (spend_quota refills the budget) or the budget is spent before it.
void Engine::quota_event(std::uint32_t h) {
  Host& host = hosts_[h];
  const bool period_over = now_ >= host.period_end;
  spend_quota(host);
  if (!period_over) {
    host.budget = 0;
    host.throttled = true;
  }
  reshare_cpu(host.first);
}

// --- lists with O(1) removal: each action remembers its position ---

void Engine::list_add(std::vector<ActionId>& list, std::uint32_t& at, ActionId id) {
  at = static_cast<std::uint32_t>(list.size());
  list.push_back(id);
}

void Engine::list_remove(std::vector<ActionId>& list, std::uint32_t at) {
  const ActionId moved = list.back();
  list[at] = moved;
  list.pop_back();
  if (at < list.size()) actions_[moved].at_from = at;
}

// --- the event heap, by (finish, seq) ---

void Engine::heap_place(ActionId id) { heap::place(heap_, id, by_finish(), heap_at()); }

void Engine::heap_erase(ActionId id) { heap::remove(heap_, actions_[id].heap_at, by_finish(), heap_at()); }

}  // namespace dps::sim
