// Nodes killed in a simulated run (--fail NODE@SECONDS): their steps and messages are lost, their
// threads rebuilt from the checkpoints their buddies hold (SimBackend::Impl, sim_backend_impl.hpp).
#include "sim_backend_impl.hpp"

namespace dps::sim {

NodeId SimBackend::Impl::buddy(NodeId node) const {
  auto it = std::upper_bound(live.begin(), live.end(), node);
  if (it == live.end()) it = live.begin();
  return *it;
}

void SimBackend::Impl::send_checkpoint(NodeId from, std::uint64_t uid,
                                       std::shared_ptr<const detail::Checkpoint> checkpoint) {
  if (dead[from]) return;
  const NodeId holder = buddy(from);
  if (holder == from) return;  // no other node left to hold it
  const double bytes = static_cast<double>(checkpoint->bytes()) + engine->model().network.header_bytes;
  transfer(Delivery{
      Delivery::Kind::Checkpoint, from, holder, uid, nullptr, engine->now(), bytes, {}, std::move(checkpoint)});
}

void SimBackend::Impl::hold(std::uint64_t uid, std::shared_ptr<const detail::Checkpoint> checkpoint, NodeId holder) {
  if (const auto it = backups.find(uid); it != backups.end() && it->second.checkpoint->epoch > checkpoint->epoch)
    return;
  auto* e = new Envelope;
  e->kind = Message::Stored;
  e->count = checkpoint->epoch;
  backups[uid] = Backup{std::move(checkpoint), holder};
  deliver(holder, uid, e);
}

void SimBackend::Impl::lost(NodeId dest, Envelope* e) {
  if ((!runtime->fault_tolerant() || unrecovered[dest]) && e->kind == Message::Data)
    runtime->fail_call(e->call, std::make_exception_ptr(NodeFailure(dest, "it was killed (--fail)")));
  delete e;
}

void SimBackend::Impl::fail_node(NodeId node) {
  if (stopped || dead[node]) return;
  auto it = std::find(live.begin(), live.end(), node);
  if (it == live.end()) return;  // removed before
  live.erase(it);
  dead[node] = true;
  stats.node_left(node, engine->now());
  for (auto& [uid, s] : slots)
    if (s.thread && s.thread->node() == node && s.state != Slot::State::Moving) stop_thread(s);
  parked[node].clear();
  inline_turn[node] = nullptr;
  workers_used[node] = 0;
  // Threads whose checkpoints it held make new ones at once.
  std::erase_if(backups, [this, node](const auto& entry) {
    if (entry.second.node != node) return false;
    if (Thread* t = runtime->thread(entry.first); t && !dead[t->node()]) wake_to_checkpoint(*t);
    return true;
  });
  ++outstanding;  // the detection: the run waits for it
  engine->timer(engine->now() + engine->model().network.latency, {this, tag(kDetectionTag, node)});
}

void SimBackend::Impl::wake_to_checkpoint(Thread& t) {
  t.backup_lost();
  Slot& s = slot(t);
  s.thread = &t;
  s.wanted = true;
  kick(s);
}

void SimBackend::Impl::stop_thread(Slot& s) {
  if (s.state == Slot::State::Running) running[s.running] = 0;  // its computation ends unseen
  if (s.state == Slot::State::Ready) std::erase(ready, &s);
  for (const Effect& f : s.effects) {
    if (f.paid.bytes > 0) sent(vnode(s.node), f);
    delete f.e;
  }
  s.effects.clear();
  s.checkpoints.clear();
  s.step.reset();
  if (s.move) {  // decided by the step that was lost: the thread is rebuilt from its checkpoint instead
    std::exchange(s.move, std::nullopt)
        ->arrived(
            std::make_exception_ptr(NodeFailure(s.node, "it failed before " + s.thread->name() + " could migrate")));
  }
  s.state = Slot::State::Idle;
  s.runner = Slot::Runner::None;
  s.wanted = false;
}

}  // namespace dps::sim
