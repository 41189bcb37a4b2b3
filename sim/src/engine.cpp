// Engine: actions, their rates under the sharing models, and the event heap.
#include "dps/sim/engine.hpp"

#include <algorithm>
#include <cassert>
#include <functional>
#include <string>

namespace dps::sim {

Engine::Engine(ClusterModel model) : model_(std::move(model)) {
  for (const NodeGroup& g : model_.groups)
    for (std::size_t i = 0; i < g.count; ++i) {
      Node n;
      n.cores = g.cores;
      n.speed = g.speed;
      nodes_.push_back(std::move(n));
    }
  usage_.resize(nodes_.size());
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

void Engine::transfer(VNode from, VNode to, double bytes, Completion done) {
  assert(from != to);
  ++transfers_;
  bytes_ += bytes;
  const ActionId id = make(Kind::Latency, done);
  Action& a = actions_[id];
  a.from = from;
  a.to = to;
  a.remaining = bytes;
  a.finish = now_ + model_.network.latency;
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
  if (a.kind == Kind::Latency && a.remaining > 0) {
    flow_starts(id);
    return true;
  }
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
      list_remove(nodes_[from].running, a.at_from, true);
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
      break;
    }
    case Kind::Timer: free(id); break;
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
  if (a.kind == Kind::Flow) {
    nodes_[a.from].out_rate += rate - a.rate;
    nodes_[a.to].in_rate += rate - a.rate;
    touch(a.from);
    touch(a.to);
  }
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
  const double comm = std::min(cores, model_.network.cpu_per_send * n.sending +
                                          model_.network.cpu_per_receive * n.receiving);
  const double available = cores - comm;
  const double k = static_cast<double>(n.running.size());
  const double rate = k > 0 ? n.speed * std::min(1.0, available / k) : 0.0;
  for (ActionId id : n.running) set_rate(id, rate);
  usage_.set(v, Usage::StepCores, now_, std::min(k, available));
  usage_.set(v, Usage::CommCores, now_, comm);
}

// --- network ---

void Engine::flow_starts(ActionId id) {
  Action& a = actions_[id];
  a.kind = Kind::Flow;
  a.updated = now_;
  a.rate = 0;
  a.finish = kNever;
  list_add(nodes_[a.from].out, a.at_from, id);
  list_add(nodes_[a.to].in, a.at_to, id);
  const VNode from = a.from, to = a.to;
  reshare_network(from, to);
}

void Engine::flow_ends(ActionId id) {
  Action& a = actions_[id];
  Node &src = nodes_[a.from], &dst = nodes_[a.to];
  list_remove(src.out, a.at_from, true);
  list_remove(dst.in, a.at_to, false);
  src.out_rate = src.out.empty() ? 0.0 : src.out_rate - a.rate;
  dst.in_rate = dst.in.empty() ? 0.0 : dst.in_rate - a.rate;
  touch(a.from);
  touch(a.to);
  reshare_network(a.from, a.to);
}

void Engine::reshare_network(VNode from, VNode to) {
  if (model_.network.sharing == Sharing::Equal)
    reshare_equal(from, to);
  else
    reshare_maxmin(from, to);
  record_links();
}

// Each of a link's n flows gets bandwidth / n; a flow goes at the smaller of its two shares. Only the
// flows of the two links that changed can change.
void Engine::reshare_equal(VNode from, VNode to) {
  const double b = model_.network.bandwidth;
  auto share = [&](ActionId f) {
    const Action& a = actions_[f];
    return std::min(b / static_cast<double>(nodes_[a.from].out.size()), b / static_cast<double>(nodes_[a.to].in.size()));
  };
  for (ActionId f : nodes_[from].out) set_rate(f, share(f));
  for (ActionId f : nodes_[to].in) set_rate(f, share(f));
}

// Progressive filling over the flows connected to the two links that changed: the link with the
// smallest fair share fixes the rate of its flows, which then use that much of their other link.
void Engine::reshare_maxmin(VNode from, VNode to) {
  ++epoch_;
  links_.clear();
  component_.clear();
  visit(from, true);
  visit(to, false);
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const Link link = links_[i];
    for (ActionId f : link.out ? nodes_[link.node].out : nodes_[link.node].in) {
      Action& a = actions_[f];
      if (a.mark == epoch_) continue;
      a.mark = epoch_;
      a.local = static_cast<std::uint32_t>(component_.size());
      component_.push_back(f);
      if (link.out)
        visit(a.to, false);
      else
        visit(a.from, true);
    }
  }
  rates_.assign(component_.size(), 0.0);
  frozen_.assign(component_.size(), 0);
  levels_.clear();
  const auto later = std::greater<>();
  for (std::uint32_t i = 0; i < links_.size(); ++i)
    if (links_[i].unfrozen) levels_.emplace_back(links_[i].capacity / links_[i].unfrozen, i);
  std::make_heap(levels_.begin(), levels_.end(), later);
  while (!levels_.empty()) {
    std::pop_heap(levels_.begin(), levels_.end(), later);
    const auto [level, li] = levels_.back();
    levels_.pop_back();
    Link& link = links_[li];
    if (link.unfrozen == 0 || level != link.capacity / link.unfrozen) continue;  // stale
    for (ActionId f : link.out ? nodes_[link.node].out : nodes_[link.node].in) {
      const Action& a = actions_[f];
      if (frozen_[a.local]) continue;
      frozen_[a.local] = 1;
      rates_[a.local] = level;
      Link& other = links_[link.out ? nodes_[a.to].local_in : nodes_[a.from].local_out];
      other.capacity = std::max(0.0, other.capacity - level);
      if (--other.unfrozen > 0) {
        const auto oi = static_cast<std::uint32_t>(&other - links_.data());
        levels_.emplace_back(other.capacity / other.unfrozen, oi);
        std::push_heap(levels_.begin(), levels_.end(), later);
      }
    }
    link.unfrozen = 0;
  }
  for (std::size_t i = 0; i < component_.size(); ++i) set_rate(component_[i], rates_[i]);
}

void Engine::visit(VNode v, bool out) {
  Node& n = nodes_[v];
  std::uint32_t& mark = out ? n.mark_out : n.mark_in;
  if (mark == epoch_) return;
  mark = epoch_;
  (out ? n.local_out : n.local_in) = static_cast<std::uint32_t>(links_.size());
  const auto flows = static_cast<std::uint32_t>((out ? n.out : n.in).size());
  links_.push_back(Link{v, out, model_.network.bandwidth, flows});
}

void Engine::touch(VNode v) {
  if (nodes_[v].dirty) return;
  nodes_[v].dirty = true;
  touched_.push_back(v);
}

void Engine::record_links() {
  const double b = model_.network.bandwidth;
  for (VNode v : touched_) {
    Node& n = nodes_[v];
    n.dirty = false;
    usage_.set(v, Usage::LinkOut, now_, std::max(0.0, n.out_rate) / b);
    usage_.set(v, Usage::LinkIn, now_, std::max(0.0, n.in_rate) / b);
  }
  touched_.clear();
}

// --- lists with O(1) removal: each action remembers its position ---

void Engine::list_add(std::vector<ActionId>& list, std::uint32_t& at, ActionId id) {
  at = static_cast<std::uint32_t>(list.size());
  list.push_back(id);
}

void Engine::list_remove(std::vector<ActionId>& list, std::uint32_t at, bool from_side) {
  const ActionId moved = list.back();
  list[at] = moved;
  list.pop_back();
  if (at < list.size()) (from_side ? actions_[moved].at_from : actions_[moved].at_to) = at;
}

// --- the event heap ---

void Engine::heap_place(ActionId id) {
  Action& a = actions_[id];
  if (a.heap_at == kNone) {
    a.heap_at = static_cast<std::uint32_t>(heap_.size());
    heap_.push_back(id);
    sift_up(a.heap_at);
  } else {
    sift_up(a.heap_at);
    sift_down(actions_[id].heap_at);
  }
}

void Engine::heap_erase(ActionId id) {
  const std::uint32_t i = actions_[id].heap_at;
  actions_[id].heap_at = kNone;
  const ActionId last = heap_.back();
  heap_.pop_back();
  if (i == heap_.size()) return;
  heap_[i] = last;
  actions_[last].heap_at = i;
  sift_up(i);
  sift_down(actions_[last].heap_at);
}

void Engine::sift_up(std::uint32_t i) {
  const ActionId id = heap_[i];
  while (i > 0) {
    const std::uint32_t parent = (i - 1) / 2;
    if (!earlier(id, heap_[parent])) break;
    heap_[i] = heap_[parent];
    actions_[heap_[i]].heap_at = i;
    i = parent;
  }
  heap_[i] = id;
  actions_[id].heap_at = i;
}

void Engine::sift_down(std::uint32_t i) {
  const ActionId id = heap_[i];
  const auto n = static_cast<std::uint32_t>(heap_.size());
  for (;;) {
    std::uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(heap_[child + 1], heap_[child])) ++child;
    if (!earlier(heap_[child], id)) break;
    heap_[i] = heap_[child];
    actions_[heap_[i]].heap_at = i;
    i = child;
  }
  heap_[i] = id;
  actions_[id].heap_at = i;
}

}  // namespace dps::sim
