// Engine: actions, their rates under the sharing models, and the event heap.
#include "dps/sim/engine.hpp"

#include <algorithm>
#include <cassert>
#include <functional>
#include <span>
#include <string>

namespace dps::sim {

// --- indexed binary heaps of actions: `before` orders them, `position` is where each one sits ---

namespace {

template <class Before, class Position>
void sift_up(std::vector<std::uint32_t>& heap, std::uint32_t i, Before before, Position position) {
  const std::uint32_t id = heap[i];
  while (i > 0) {
    const std::uint32_t parent = (i - 1) / 2;
    if (!before(id, heap[parent])) break;
    heap[i] = heap[parent];
    position(heap[i]) = i;
    i = parent;
  }
  heap[i] = id;
  position(id) = i;
}

template <class Before, class Position>
void sift_down(std::vector<std::uint32_t>& heap, std::uint32_t i, Before before, Position position) {
  const std::uint32_t id = heap[i];
  const auto n = static_cast<std::uint32_t>(heap.size());
  for (;;) {
    std::uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap[child + 1], heap[child])) ++child;
    if (!before(heap[child], id)) break;
    heap[i] = heap[child];
    position(heap[i]) = i;
    i = child;
  }
  heap[i] = id;
  position(id) = i;
}

template <class Before, class Position>
void heap_insert(std::vector<std::uint32_t>& heap, std::uint32_t id, Before before, Position position) {
  position(id) = static_cast<std::uint32_t>(heap.size());
  heap.push_back(id);
  sift_up(heap, position(id), before, position);
}

template <class Before, class Position>
void heap_remove(std::vector<std::uint32_t>& heap, std::uint32_t at, Before before, Position position) {
  position(heap[at]) = ~0u;
  const std::uint32_t last = heap.back();
  heap.pop_back();
  if (at == heap.size()) return;
  heap[at] = last;
  position(last) = at;
  sift_up(heap, at, before, position);
  sift_down(heap, position(last), before, position);
}

}  // namespace

Engine::Engine(ClusterModel model) : model_(std::move(model)) {
  for (const NodeGroup& g : model_.groups)
    for (std::size_t i = 0; i < g.count; ++i) {
      Node n;
      n.cores = g.cores;
      n.workers = g.workers;
      n.speed = g.speed;
      nodes_.push_back(std::move(n));
    }
  usage_.resize(nodes_.size());
  links_.resize(2 * nodes_.size());
  for (LinkId l = 0; l < links_.size(); ++l) {
    links_[l].front = make(Kind::Front, {});
    actions_[links_[l].front].from = l;
  }
}

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

void Engine::compute(VNode node, double work, Completion done) {
  const ActionId id = make(Kind::Compute, done);
  Action& a = actions_[id];
  a.from = node;
  a.remaining = work;
  list_add(nodes_.at(node).running, a.at_from, id);
  reshare_cpu(node);
}

void Engine::transfer(VNode from, VNode to, double bytes, Completion done, Lane lane) {
  assert(from != to);
  ++transfers_;
  bytes_ += bytes;
  if (model_.network.fifo) {
    Connection& c = connections_[std::uint64_t{from} << 32 | to];
    if (c.busy) {  // behind the message in progress on this pair, and the waiting ones it may not pass
      c.waiting.push({bytes, now_, done}, lane);
      return;
    }
    c.busy = true;
  }
  start_transfer(from, to, bytes, model_.network.latency, done);
}

void Engine::start_transfer(VNode from, VNode to, double bytes, double latency, Completion done) {
  const ActionId id = make(Kind::Latency, done);
  Action& a = actions_[id];
  a.from = from;
  a.to = to;
  a.remaining = bytes;
  a.finish = now_ + latency;
  heap_place(id);
  ++nodes_.at(from).sending;
  ++nodes_.at(to).receiving;
  if (model_.network.cpu_per_send > 0) reshare_cpu(from);
  if (model_.network.cpu_per_receive > 0) reshare_cpu(to);
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
  if (a.kind == Kind::Latency && a.remaining > 0)
    flow_starts(id);
  else if (a.kind == Kind::Front)
    end(links_[a.from].bound.front());  // the link's first flow
  else
    end(id);
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
      list_remove(nodes_[from].running, a.at_from);
      free(id);
      reshare_cpu(from);
      break;
    case Kind::Flow:
    case Kind::Latency: {
      if (a.kind == Kind::Flow) flow_ends(id);
      free(id);
      --nodes_[from].sending;
      --nodes_[to].receiving;
      if (model_.network.cpu_per_send > 0) reshare_cpu(from);
      if (model_.network.cpu_per_receive > 0) reshare_cpu(to);
      if (model_.network.fifo) {  // the next message on the pair; its latency ran while it waited
        Connection& c = connections_[std::uint64_t{from} << 32 | to];
        if (c.waiting.empty()) {
          c.busy = false;
        } else {
          const Connection::Message next = c.waiting.front();
          c.waiting.pop_front();
          start_transfer(from, to, next.bytes, std::max(0.0, next.sent + model_.network.latency - now_), next.done);
        }
      }
      break;
    }
    case Kind::Timer: free(id); break;
    case Kind::Front: break;  // never ends: step() ends its flow instead
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

void Engine::reshare_cpu(VNode v) {
  Node& n = nodes_[v];
  const double cores = n.cores;
  const bool per_link = model_.network.cpu_per_link;
  const double sending = per_link ? std::min(1.0, static_cast<double>(n.sending)) : n.sending;
  const double receiving = per_link ? std::min(1.0, static_cast<double>(n.receiving)) : n.receiving;
  const double comm = std::min(cores, model_.network.cpu_per_send * sending + model_.network.cpu_per_receive * receiving);
  const double available = cores - comm;
  const double k = static_cast<double>(n.running.size());
  const double rate = k > 0 ? n.speed * std::min(1.0, available / k) : 0.0;
  for (ActionId id : n.running) set_rate(id, rate);
  usage_.set(v, Usage::StepCores, now_, std::min(k, available));
  usage_.set(v, Usage::CommCores, now_, comm);
}

// --- network ---
//
// A flow goes at the rate of its bottleneck, the link it is bound to; every flow bound to a link goes
// at that link's rate, so the link keeps one clock (bytes each of them has moved) and one event (its
// first flow to end), and a change of its rate costs O(1) whatever the number of its flows. Only the
// flows whose bottleneck moves to their other link are touched.

void Engine::flow_starts(ActionId id) {
  Action& a = actions_[id];
  a.kind = Kind::Flow;
  const LinkId out = out_link(a.from), in = in_link(a.to);
  advance(out);
  advance(in);
  Link &o = links_[out], &i = links_[in];
  list_add(o.flows, a.at_from, id);
  list_add(i.flows, a.at_to, id);
  set_multi(out, id, i.flows.size() >= 2);  // first: a flow is near only once it is multi
  set_multi(in, id, o.flows.size() >= 2);
  recount(out, o.flows.size() - 1);
  recount(in, i.flows.size() - 1);
  set_near(out, id, i.flows.size() >= kNear);
  set_near(in, id, o.flows.size() >= kNear);
  reshare_network(out, in, id);
}

void Engine::flow_ends(ActionId id) {
  const Action& a = actions_[id];
  const LinkId out = out_link(a.from), in = in_link(a.to);
  advance(out);
  advance(in);
  unbind(id);
  list_leave(out, id);
  list_leave(in, id);
  reshare_network(out, in, kNone);
}

// The two links' flow counts changed (`joined` is the flow that joined both, if one did).
void Engine::reshare_network(LinkId out, LinkId in, ActionId joined) {
  if (model_.network.sharing == Sharing::Equal)
    reshare_equal(out, in, joined);
  else
    reshare_maxmin(out, in);
  settle_links();
}

void Engine::advance(LinkId l) {
  Link& link = links_[l];
  link.clock = clock_now(link);
  link.clock_at = now_;
  if (link.dirty) return;
  link.dirty = true;
  dirty_.push_back(l);
}

std::uint32_t& Engine::position(ActionId flow, LinkId l) noexcept {
  Action& a = actions_[flow];
  return l == out_link(a.from) ? a.at_from : a.at_to;
}

// Each region stays whole: the hole moves to the end of the region it is in, then of the next one.
void Engine::list_leave(LinkId l, ActionId id) {
  Link& link = links_[l];
  std::vector<ActionId>& flows = link.flows;
  std::uint32_t at = position(id, l);
  auto fill_from = [&](std::uint32_t from) {
    if (from != at) {  // the hole holds a stale copy of what moved: never re-place it
      flows[at] = flows[from];
      position(flows[at], l) = at;
    }
    at = from;
  };
  if (at < link.near) fill_from(--link.near);
  if (at < link.multi) fill_from(--link.multi);
  fill_from(static_cast<std::uint32_t>(flows.size() - 1));
  flows.pop_back();
  recount(l, flows.size() + 1);
}

// A flow enters or leaves the region [0, end) of its link's list by trading places with the flow at
// the region's end.
void Engine::place(LinkId l, ActionId id, std::uint32_t Link::*end, bool inside) {
  Link& link = links_[l];
  std::uint32_t& boundary = link.*end;
  const std::uint32_t at = position(id, l);
  if (inside == (at < boundary)) return;
  const std::uint32_t to = inside ? boundary++ : --boundary;
  const ActionId other = link.flows[to];
  std::swap(link.flows[at], link.flows[to]);
  position(other, l) = at;
  position(id, l) = to;
}

void Engine::recount(LinkId l, std::size_t before) {
  const std::vector<ActionId>& flows = links_[l].flows;
  const std::size_t after = flows.size();
  if ((after >= 2) != (before >= 2))
    for (ActionId f : flows) set_multi(partner(actions_[f], l), f, after >= 2);
  if ((after >= kNear) != (before >= kNear))
    for (ActionId f : flows) set_near(partner(actions_[f], l), f, after >= kNear);
}

void Engine::bind(ActionId id, LinkId l) {
  Action& a = actions_[id];
  Link& link = links_[l];
  a.bound = l;
  a.since = now_;
  a.vsince = link.clock;
  a.vfinish = link.clock + a.remaining;
  heap_insert(link.bound, id, by_vfinish(), bound_at());
}

// The flow leaves its link with what it has left in `remaining`; its other link carried the same
// bytes meanwhile, recorded as spread evenly over that time.
void Engine::unbind(ActionId id) {
  Action& a = actions_[id];
  Link& link = links_[a.bound];
  advance(a.bound);
  const LinkId other = partner(a, a.bound);
  usage_.spread(other / 2, other % 2 ? Usage::LinkIn : Usage::LinkOut, a.since, now_,
                (link.clock - a.vsince) / model_.network.bandwidth);
  a.remaining = std::max(0.0, a.vfinish - link.clock);
  heap_remove(link.bound, a.bound_at, by_vfinish(), bound_at());
  a.bound = kNone;
}

void Engine::rebind(ActionId id, LinkId l) {
  if (actions_[id].bound == l) return;
  if (actions_[id].bound != kNone) unbind(id);
  advance(l);
  bind(id, l);
}

// Each of a link's n flows gets bandwidth / n; a flow goes at the smaller of its two shares (ties:
// its outgoing link). Only the two links' shares changed, so only their flows can change bottleneck,
// and on a busy link only those whose other link is about as busy.
void Engine::reshare_equal(LinkId out, LinkId in, ActionId joined) {
  const double b = model_.network.bandwidth;
  for (LinkId l : {out, in}) {
    Link& link = links_[l];
    link.rate = link.flows.empty() ? 0.0 : b / static_cast<double>(link.flows.size());
  }
  auto bottleneck = [&](const Action& f) {
    const LinkId o = out_link(f.from), i = in_link(f.to);
    return links_[o].rate <= links_[i].rate ? o : i;
  };
  if (joined != kNone) rebind(joined, bottleneck(actions_[joined]));
  for (LinkId l : {out, in}) {
    const Link& link = links_[l];
    const std::size_t n = link.flows.size(), candidates = n <= kNear + 2 ? n : link.near;
    for (std::size_t k = 0; k < candidates; ++k) {
      const ActionId f = link.flows[k];
      rebind(f, bottleneck(actions_[f]));
    }
  }
}

// Progressive filling over the flows connected to the two links that changed: the link with the
// smallest fair share fixes the rate of its flows, which then use that much of their other link.
// Each flow is bound to the link that fixed its rate. A flow alone on one of its links (a leaf) is
// fixed by the other, which counts it but never searches it: a master's link shared by a thousand
// workers is not searched flow by flow. Only a changed link with at most two flows can make flows
// leaves or not: those are rebound at the end.
void Engine::reshare_maxmin(LinkId out, LinkId in) {
  ++epoch_;
  fills_.clear();
  component_.clear();
  visit(out);
  visit(in);
  for (LinkId c : {out, in})
    if (links_[c].flows.size() <= 2)
      for (ActionId f : links_[c].flows) visit(partner(actions_[f], c));
  auto searched = [&](LinkId l) {  // the flows of `l` that are no leaves: [0, multi), or none
    const Link& link = links_[l];
    return link.flows.size() >= 2 ? std::span<const ActionId>(link.flows.data(), link.multi)
                                  : std::span<const ActionId>();
  };
  for (std::size_t i = 0; i < fills_.size(); ++i) {
    const LinkId l = fills_[i].link;
    for (ActionId f : searched(l)) {
      Action& a = actions_[f];
      if (a.mark == epoch_) continue;
      a.mark = epoch_;
      a.local = static_cast<std::uint32_t>(component_.size());
      component_.push_back(f);
      visit(partner(a, l));
    }
  }
  frozen_by_.assign(component_.size(), kNone);
  levels_.clear();
  const auto later = std::greater<>();
  for (std::uint32_t i = 0; i < fills_.size(); ++i)
    if (fills_[i].unfrozen) levels_.emplace_back(fills_[i].capacity / fills_[i].unfrozen, i);
  std::make_heap(levels_.begin(), levels_.end(), later);
  while (!levels_.empty()) {
    std::pop_heap(levels_.begin(), levels_.end(), later);
    const auto [level, fi] = levels_.back();
    levels_.pop_back();
    Fill& fill = fills_[fi];
    if (fill.unfrozen == 0 || level != fill.capacity / fill.unfrozen) continue;  // stale
    for (ActionId f : searched(fill.link)) {
      const Action& a = actions_[f];
      if (frozen_by_[a.local] != kNone) continue;
      frozen_by_[a.local] = fill.link;
      Fill& other = fills_[links_[partner(a, fill.link)].local];
      other.capacity = std::max(0.0, other.capacity - level);
      if (--other.unfrozen > 0) {
        levels_.emplace_back(other.capacity / other.unfrozen, static_cast<std::uint32_t>(&other - fills_.data()));
        std::push_heap(levels_.begin(), levels_.end(), later);
      }
    }
    fill.unfrozen = 0;
    links_[fill.link].rate = level;
  }
  for (std::size_t i = 0; i < component_.size(); ++i) rebind(component_[i], frozen_by_[i]);
  for (LinkId c : {out, in})
    if (links_[c].flows.size() <= 2)
      for (ActionId f : links_[c].flows)
        if (leaf(actions_[f])) rebind(f, leaf_side(actions_[f]));
}

void Engine::visit(LinkId l) {
  Link& link = links_[l];
  if (link.mark == epoch_) return;
  link.mark = epoch_;
  link.local = static_cast<std::uint32_t>(fills_.size());
  fills_.push_back(Fill{l, model_.network.bandwidth, static_cast<std::uint32_t>(link.flows.size())});
  advance(l);
  link.rate = 0;  // until it fixes the rate of some flow
}

// Each changed link: its usage from now on (its bound flows; the others' bytes are recorded when they
// leave), and when its first bound flow ends.
void Engine::settle_links() {
  const double b = model_.network.bandwidth;
  for (LinkId l : dirty_) {
    Link& link = links_[l];
    link.dirty = false;
    usage_.set(l / 2, l % 2 ? Usage::LinkIn : Usage::LinkOut, now_,
               static_cast<double>(link.bound.size()) * link.rate / b);
    Action& front = actions_[link.front];
    if (link.bound.empty() || link.rate <= 0) {
      if (link.bound.empty()) link.clock = 0;  // keeps the clock's numbers small
      if (front.heap_at != kNone) heap_erase(link.front);
      continue;
    }
    const Action& first = actions_[link.bound.front()];
    front.finish = now_ + std::max(0.0, first.vfinish - link.clock) / link.rate;
    front.seq = first.seq;
    heap_place(link.front);
  }
  dirty_.clear();
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

void Engine::heap_place(ActionId id) {
  if (actions_[id].heap_at == kNone) {
    heap_insert(heap_, id, by_finish(), heap_at());
  } else {
    sift_up(heap_, actions_[id].heap_at, by_finish(), heap_at());
    sift_down(heap_, actions_[id].heap_at, by_finish(), heap_at());
  }
}

void Engine::heap_erase(ActionId id) { heap_remove(heap_, actions_[id].heap_at, by_finish(), heap_at()); }

}  // namespace dps::sim
