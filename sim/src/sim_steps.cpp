// Threads and their steps in the simulator: a thread runs one step at a time, on a worker or inline on its
// node's network thread, as the worker policy says; a step's computation takes simulated time, and what
// it sent leaves when it ends (SimBackend::Impl, sim_backend_impl.hpp).
#include "sim_backend_impl.hpp"

namespace dps::sim {

bool SimBackend::Impl::forget(const Thread& t) {
  auto it = slots.find(t.uid());
  if (it == slots.end()) return true;
  const Slot& s = it->second;
  if (&s == current || s.state != Slot::State::Idle || s.runner != Slot::Runner::None || s.move || !s.effects.empty() ||
      !s.checkpoints.empty())
    return false;
  slots.erase(it);
  return true;
}

void SimBackend::Impl::schedule(Thread& t, Priority priority) {
  Slot& s = slot(t);
  s.thread = &t;
  s.wanted = true;
  s.urgent = priority == Priority::Urgent;
  // A quick thread that a message from another node wakes takes its turn on the network thread that
  // received it, if that thread runs none already: no worker needed.
  const NodeId node = t.node();
  if (arriving && s.state == Slot::State::Idle && s.runner == Slot::Runner::None &&
      worker_policy::runs_inline(t, inline_turn[node] != nullptr))
    take_network(s, node);
  kick(s);
}

void SimBackend::Impl::kick(Slot& s) {
  if (!s.wanted || s.state != Slot::State::Idle || stopped || dead[s.thread->node()]) return;  // (until rebuilt)
  // An urgent thread parks at once, ahead of the others: the worker that the step which woke it
  // frees next passes to it.
  if (s.urgent && s.runner == Slot::Runner::None && !take_worker(s)) return;
  s.state = Slot::State::Ready;
  ready.push_back(&s);
}

void SimBackend::Impl::run_ready() {
  while (!ready.empty()) {
    Slot& s = *ready.front();
    ready.pop_front();
    s.state = Slot::State::Idle;
    if (!s.wanted || stopped) {
      release_runner(s);
      continue;
    }
    if (s.runner != Slot::Runner::None || take_worker(s)) execute(s);
  }
}

bool SimBackend::Impl::take_worker(Slot& s) {
  const NodeId node = s.thread->node();
  const unsigned limit = engine->workers(vnode(node));
  if (limit > 0 && workers_used[node] >= limit) {
    s.state = Slot::State::Parked;
    std::deque<Slot*>& waiting = parked[node];
    waiting.insert(worker_policy::place(waiting, s.urgent, [](const Slot* x) { return x->urgent; }), &s);
    return false;
  }
  ++workers_used[node];
  hold_worker(s, node);
  return true;
}

void SimBackend::Impl::hold_worker(Slot& s, NodeId node) {
  s.runner = Slot::Runner::Worker;
  s.worker_node = node;
  s.streak = 0;
}

void SimBackend::Impl::take_network(Slot& s, NodeId node) {
  s.runner = Slot::Runner::Network;
  s.node = node;
  s.streak = 0;
  s.handed = 0;
  inline_turn[node] = &s;
}

void SimBackend::Impl::release_network(Slot& s) {
  s.runner = Slot::Runner::None;
  inline_turn[s.node] = nullptr;
}

void SimBackend::Impl::release_runner(Slot& s) {
  if (s.runner == Slot::Runner::Worker) release_worker(s);
  if (s.runner == Slot::Runner::Network) release_network(s);
}

void SimBackend::Impl::release_worker(Slot& s) {
  s.runner = Slot::Runner::None;
  std::deque<Slot*>& waiting = parked[s.worker_node];
  if (waiting.empty()) {
    --workers_used[s.worker_node];
    return;
  }
  Slot& next = *waiting.front();  // the worker passes to the first in line
  waiting.pop_front();
  next.state = Slot::State::Idle;
  hold_worker(next, s.worker_node);
  kick(next);
  if (next.state != Slot::State::Ready) release_worker(next);  // no longer runnable: the next one in line
}

void SimBackend::Impl::end_turn(Slot& s) {
  const bool more = s.state == Slot::State::Ready;
  switch (s.runner) {
    case Slot::Runner::None: break;
    case Slot::Runner::Worker:
      if (!more || worker_policy::turn_ends(++s.streak, worker_policy::kBudget, urgent_parked(s.worker_node)))
        release_worker(s);
      break;
    case Slot::Runner::Network:
      if (!more || s.thread->pace() != Thread::Pace::Quick ||
          worker_policy::turn_ends(++s.streak, worker_policy::kInlineBudget + s.handed, urgent_parked(s.node)))
        release_network(s);
      break;
  }
}

void SimBackend::Impl::execute(Slot& s) {
  Thread& t = *s.thread;
  s.state = Slot::State::Running;
  s.urgent = false;  // it got a worker: later waits are ordinary
  s.node = t.node();
  s.start = engine->now();
  s.work = 0;
  s.step.reset();
  current = &s;
  const bool direct = !options.pdexec;
  const double cpu = direct ? detail::thread_cpu_seconds() : 0.0;
  bool more = false;
  try {
    detail::EpochGuard guard;
    more = t.run(1);
  } catch (...) {
    current = nullptr;
    s.state = Slot::State::Idle;
    throw;
  }
  if (direct) s.work += detail::thread_cpu_seconds() - cpu;
  charge_sending(s);
  current = nullptr;
  s.wanted = more;
  ++stats.steps;
  if (s.work > 0) {
    ++outstanding;
    s.running = take_index(running, free_running, t.uid());
    engine->compute(vnode(s.node), s.work, {this, tag(kStepTag, s.running)});
  } else {
    finish(s);
  }
}

void SimBackend::Impl::charge_sending(Slot& s) {
  const NetworkModel& net = engine->model().network;
  const VNode from = vnode(s.node);
  const double per_byte = net.send_buffer > 0 ? net.cpu_per_send / net.bandwidth * engine->speed(from) : 0.0;
  if (net.cpu_per_message == 0 && net.cpu_per_local_message == 0 && per_byte == 0) return;
  for (Effect& f : s.effects) {
    const auto dest = destination(f.to);
    if (!dest) continue;
    const VNode to = vnode(*dest);
    if (to == from) {
      s.work += net.cpu_per_local_message;
      continue;
    }
    f.paid.message = true;
    f.paid_to = to;
    s.work += net.cpu_per_message;
    if (per_byte == 0) continue;
    Copied& copied = copying[std::uint64_t{from} << 32 | to];
    f.paid.bytes = std::clamp(net.send_buffer - engine->unsent(from, to) - copied.bytes, 0.0, wire_bytes(*f.e));
    copied.bytes += f.paid.bytes;
    ++copied.messages;
    s.work += f.paid.bytes * per_byte;
  }
}

void SimBackend::Impl::sent(VNode from, const Effect& f) {
  const auto at = copying.find(std::uint64_t{from} << 32 | f.paid_to);
  if (at == copying.end()) return;
  at->second.bytes -= f.paid.bytes;
  if (--at->second.messages == 0) copying.erase(at);  // no drift left
}

double SimBackend::Impl::wire_bytes(const Envelope& e) const {
  return (e.kind == Message::Data ? static_cast<double>(e.payload.wire_size())
                                  : static_cast<double>(kControlWireBytes)) +
         (e.determinants ? static_cast<double>(e.determinants->bytes()) : 0.0) + engine->model().network.header_bytes;
}

void SimBackend::Impl::finish(Slot& s) {
  s.state = Slot::State::Idle;
  s.thread->ran_for(engine->now() - s.start);  // its pace, as the strands judge it
  if (s.step) {
    ++stats.ops;
    if (user) {
      StepEvent e = *s.step;
      e.start = s.start;
      e.end = engine->now();
      user->step(e);
    }
    s.step.reset();
  }
  for (const Effect& f : s.effects) {
    if (f.paid.bytes > 0) sent(vnode(s.node), f);
    deliver(s.node, f.to, f.e, f.paid, f.paid_to);
  }
  s.effects.clear();
  for (auto& c : s.checkpoints) send_checkpoint(s.node, s.thread->uid(), std::move(c));
  s.checkpoints.clear();
  if (s.move) start_move(s);
  kick(s);
  end_turn(s);
}

}  // namespace dps::sim
