// Envelopes, results and migrations between simulated nodes: each a transfer on the engine's network,
// delivered when it arrives, or sent again where its thread went meanwhile (SimBackend::Impl,
// sim_backend_impl.hpp).
#include "sim_backend_impl.hpp"

namespace dps::sim {

void SimBackend::Impl::send(NodeId from, std::uint64_t to, Envelope* e) {
  if (current)
    current->effects.push_back({to, e, {}});
  else
    deliver(from, to, e);
}

std::optional<NodeId> SimBackend::Impl::destination(std::uint64_t to) const {
  if (!to) return NodeId{0};
  const Thread* thread = runtime->thread(to);
  return thread ? std::optional<NodeId>(thread->node()) : std::nullopt;
}

void SimBackend::Impl::deliver(NodeId from, std::uint64_t to, Envelope* e, SenderPaid paid, VNode paid_to) {
  if (stopped) {
    delete e;
    return;
  }
  Thread* thread = to ? runtime->thread(to) : nullptr;
  if (to && !thread) return runtime->redirect(from, e);
  const NodeId dest = thread ? thread->node() : 0;
  if (dead[dest]) return lost(dest, e);
  if (vnode(from) == vnode(dest)) {
    ++stats.local_messages;
    if (thread)
      runtime->enqueue(*thread, e);
    else
      complete(e);
    return;
  }
  if (vnode(dest) != paid_to) paid = {};  // its thread moved since: written to another node
  transfer(Delivery{to ? Delivery::Kind::Envelope : Delivery::Kind::Result, from, dest, to, e, engine->now(),
                    wire_bytes(*e), paid});
}

void SimBackend::Impl::transfer(const Delivery& d) {
  const std::size_t index = take_index(deliveries, free_deliveries, d);
  ++outstanding;
  ++stats.messages;
  stats.bytes += d.bytes;
  const Lane lane = d.kind == Delivery::Kind::Envelope ? lane_of(d.e->kind) : Lane::ordered;
  engine->transfer(vnode(d.from), vnode(d.to_node), d.bytes, {this, tag(kDeliveryTag, index)}, lane, d.paid);
}

void SimBackend::Impl::arrive(std::size_t index) {
  Delivery d = std::move(deliveries[index]);
  deliveries[index].checkpoint.reset();
  free_deliveries.push_back(index);
  if (user) user->transfer({d.from, d.to_node, static_cast<std::uint64_t>(d.bytes), d.start, engine->now()});
  if ((dead[d.from] || dead[d.to_node]) && d.kind != Delivery::Kind::Migration) {  // lost with its node's sockets
    delete d.e;
    return;
  }
  switch (d.kind) {
    case Delivery::Kind::Envelope:
      if (stopped) {
        delete d.e;
      } else if (Thread* to = runtime->thread(d.to); !to) {
        runtime->redirect(d.to_node, d.e);  // gone meanwhile
      } else if (to->node() != d.to_node) {
        deliver(d.to_node, d.to, d.e);  // the thread moved on meanwhile: forwarded
      } else {
        // Read by the network thread that may run it inline: a step more for its turn (end_turn).
        if (Slot* s = inline_turn[d.to_node]; s && s->thread == to) ++s->handed;
        arriving = true;
        runtime->enqueue(*to, d.e);
        arriving = false;
      }
      break;
    case Delivery::Kind::Result:
      if (stopped)
        delete d.e;
      else
        complete(d.e);
      break;
    case Delivery::Kind::Migration: {
      Slot& s = slots.at(d.to);  // a moving thread stays until it arrived
      Move m = std::move(*s.move);
      s.move.reset();
      s.state = Slot::State::Idle;
      if (dead[d.from] || dead[d.to_node]) {  // it stays where it was, or was rebuilt from its checkpoint
        const NodeId failed = dead[d.from] ? d.from : d.to_node;
        m.arrived(std::make_exception_ptr(NodeFailure(failed, "it failed while " + s.thread->name() + " migrated")));
      } else {
        s.thread->relocate(m.to, m.state);
        // On node 0 it covered what it handled at once: a checkpoint from before it is no good.
        if (d.from == 0) backups.erase(d.to);
        if (runtime->fault_tolerant()) wake_to_checkpoint(*s.thread);
        m.arrived(nullptr);
      }
      kick(s);
      break;
    }
    case Delivery::Kind::Checkpoint: {
      Thread* t = runtime->thread(d.to);
      if (stopped || !t || dead[t->node()]) break;
      hold(d.to, std::move(d.checkpoint), d.to_node);
      break;
    }
  }
}

void SimBackend::Impl::start_move(Slot& s) {
  if (s.state != Slot::State::Idle)  // the kernel migrates a thread from its own step (Thread::settle)
    throw std::logic_error(s.thread->name() + " migrates while it waits to run a step");
  s.state = Slot::State::Moving;
  const double bytes = static_cast<double>(s.move->state.size()) + engine->model().network.header_bytes;
  transfer(Delivery{Delivery::Kind::Migration, s.node, s.move->to, s.thread->uid(), nullptr, engine->now(), bytes, {}});
}

}  // namespace dps::sim
