// Fault tolerance, a thread's side (docs/fault-tolerance.md): it checkpoints between operations to
// another node, keeps what it sent until the receiver's checkpoint covers it, and, rebuilt from a
// checkpoint after its node failed, handles again what it is sent again in its first order (Gerlach &
// Hersch, "Fault-tolerant parallel applications with Dynamic Parallel Schedules"). The runtime's
// side, which plans and coordinates a recovery: runtime_recovery.cpp.
#include "dps/kernel/runtime.hpp"
#include "dps/kernel/thread.hpp"
#include "dps/kernel/threads_core.hpp"

#include "dps/errors.hpp"

#include <algorithm>

namespace dps {

void Thread::keep_records() {
  recovery_ = std::make_unique<Recovery>();
  if (!collection_.backups()) recovery_->no_backup = " keeps no backup (its collection was made with Backups::None)";
}

// One that is not sends only final objects, and what it handled is covered at once: it never runs again.
bool Thread::rebuildable() const noexcept { return node() != 0 && !recovery_->no_backup; }

void Thread::send_data(Thread& to, Envelope* e) {
  if (recovery_) {
    Recovery& r = *recovery_;
    r.outbox.send(*e, uid_, to.uid(), rebuildable() ? r.taken : Stamp::kFinal, r.committed, ++r.clock);
    e->determinants = r.log.news_for(to.uid());
  }
  runtime_.send(node(), to, e);
}

void Thread::send_result(Envelope* e) {
  if (recovery_) {
    Recovery& r = *recovery_;
    r.outbox.send(*e, uid_, 0, rebuildable() ? r.taken : Stamp::kFinal, r.committed, ++r.clock);
  }
  runtime_.finish_call(node(), e);
}

// Handled again after its node failed, in its first order: one that waits for its frame's grant (its
// merge's owner is asked again) holds the next back, or they would reach their operations first.
void Thread::deliver_in_order(Envelope* e, bool scripted) {
  Recovery& r = *recovery_;
  (scripted ? r.released : r.ordered).erase(e);
  r.delivering = true;
  if (admit(e, scripted)) on_data(e);
  r.delivering = false;
}

void Thread::unpark(FrameId frame) {
  if (!recovery_ || recovery_->parked != frame) return;
  Recovery& r = *recovery_;
  r.parked = 0;
  for (auto it = r.held.rbegin(); it != r.held.rend(); ++it) {  // before what came since
    (*it)->next = pending_;
    pending_ = *it;
  }
  r.held.clear();
}

void Thread::log_delivery(const Envelope& e) {
  if (!recovery_ || !e.stamp.link || !rebuildable()) return;
  Recovery& r = *recovery_;
  r.log.record(uid_, r.determined++, {e.stamp.from, detail::identity(e)});
}

bool Thread::admit(Envelope* e, bool scripted) {
  detail::Inbox& inbox = recovery_->inbox;
  const Stamp stamp = e->stamp;
  Recovery& r = *recovery_;
  const detail::Inbox::Verdict verdict = inbox.admit(e, scripted);
  if (verdict == detail::Inbox::Verdict::Early) return false;
  if (Envelope* next = inbox.next(stamp)) {  // it waited for this one: handled next
    next->next = pending_;
    pending_ = next;
  }
  if (e->determinants) r.log.learn(*e->determinants);
  if (stamp.link && !rebuildable()) r.uncovered.emplace_back(stamp.from, stamp.incarnation());
  if (verdict == detail::Inbox::Verdict::Handle) {
    r.clock = std::max(r.clock, stamp.time);
    ++r.handled;
    return true;
  }
  // Sent again by a rebuilt sender: its home may have been rebuilt and posted it again, counting on a
  // credit: it gets one, and learns it was dropped. A second copy of one it handled credits nothing:
  // the first did, and a home that counted it dropped could end a frame whose merge has not run.
  if (verdict == detail::Inbox::Verdict::Again && !e->frames.empty()) {
    const Frame& top = e->frames.top();
    runtime_.control(*this, top.home, Message::Credit, e->call, top.id, 0, 1, /*dropped=*/true);
  }
  delete e;
  return false;
}

void Thread::cover_now() {
  Recovery& r = *recovery_;
  if (!rebuildable()) said_done(Stamp::kFinal);  // its merges are never run again
  std::sort(r.uncovered.begin(), r.uncovered.end());
  r.uncovered.erase(std::unique(r.uncovered.begin(), r.uncovered.end()), r.uncovered.end());
  const auto& handled = r.inbox.record().handled;
  for (const auto& [from, incarnation] : r.uncovered) {
    const auto it = handled.find({from, incarnation});
    if (it != handled.end()) runtime_.cover(node(), uid_, from, incarnation, it->second);
  }
  r.uncovered.clear();
}

// Between two operations, once an interval passed since the last one, or it handled the operations
// asked for. That one need not be held yet: its Stored may wait behind the objects queued for the
// thread. The interval is at least kCostToInterval times what the last one took, so checkpoints
// never take more than 1/kCostToInterval of a thread's time, however large its state: while a large
// image travels, the thread may wait for its peers long enough that any fixed interval would pass
// after each operation. A count of operations is the user's explicit choice: it is kept.
bool Thread::checkpoint_due() const {
  constexpr double kCostToInterval = 20;
  const Recovery& r = *recovery_;
  if (!rebuildable() || life_ != Life::Active || migration_ || !checkpointable()) return false;
  if (r.last < 0) return true;
  if (r.handled == 0) return false;  // nothing new worth a checkpoint
  if (const std::uint64_t every = runtime_.checkpoint_operations(); every > 0 && r.handled >= every) return true;
  return runtime_.now() - r.last >= std::max(runtime_.checkpoint_interval(), kCostToInterval * r.cost);
}

void Thread::checkpoint() {
  Recovery& r = *recovery_;
  const double start = runtime_.now();
  std::shared_ptr<detail::Checkpoint> image(new detail::Checkpoint, [spare = r.spare](detail::Checkpoint* c) {
    {
      std::lock_guard lock(spare->mu);
      spare->buffer = std::move(c->state);
    }
    delete c;
  });
  if (state_) {
    std::lock_guard lock(r.spare->mu);
    image->state = std::move(r.spare->buffer);
  }
  try {
    if (state_) state_->save(image->state);
  } catch (...) {
    r.no_backup = " cannot be checkpointed (its state type has no cereal serialize())";
    said_done(Stamp::kFinal);
    return;
  }
  r.handled = 0;
  image->epoch = ++r.taken;
  record_in(*image);
  r.covering.emplace(image->epoch, image->inbox.handled);
  r.determined_at.emplace(image->epoch, r.determined);
  runtime_.backend().keep_backup(*this, std::move(image));
  // The interval runs from its end: a checkpoint that costs more than the interval still leaves the
  // interval's work between two.
  r.last = runtime_.now();
  r.cost = r.last - start;
  if (TraceSink* sink = runtime_.tracer())
    sink->step({node(), uid_, collection_.name(), "checkpoint", 0, start, r.last});
}

void Thread::record_in(detail::Checkpoint& image) const {
  const Recovery& r = *recovery_;
  image.thread = uid_;
  image.outbox = r.outbox;
  image.inbox = r.inbox.record();
  image.clock = r.clock;
  image.frames_opened = r.frames_opened;
  for (const auto& [id, home] : homes_)  // closed: their merges' owners have not said Done yet
    image.frames.push_back({id, home.call, home.posted, home.owner, home.forwarders, home.window > 0});
  for (const auto& [epoch, dones] : r.dones) image.dones.insert(image.dones.end(), dones.begin(), dones.end());
  image.determined = r.determined;
  image.log = r.log;
}

// Its link numbers, what it handled and its checkpoints' count go on where it arrives: its receivers
// would otherwise drop what it sends there as sent before. The checkpoint it leaves with protects it
// while it travels and until its new node's first checkpoint is held (the old one may be held there).
detail::MovingRecords Thread::records_to_move(std::string state) {
  Recovery& r = *recovery_;
  const double start = runtime_.now();
  if (!r.uncovered.empty()) cover_now();
  detail::MovingRecords moving;
  detail::Checkpoint& image = *moving.checkpoint;
  image.state = std::move(state);
  moving.new_checkpoint = !r.no_backup;
  image.epoch = moving.new_checkpoint ? ++r.taken : r.taken;
  record_in(image);
  if (moving.new_checkpoint) {
    r.covering.emplace(image.epoch, image.inbox.handled);
    r.determined_at.emplace(image.epoch, r.determined);
    r.handled = 0;
    if (TraceSink* sink = runtime_.tracer())
      sink->step({node(), uid_, collection_.name(), "checkpoint", 0, start, runtime_.now()});
  }
  moving.committed = r.committed;
  moving.covering = r.covering;
  moving.dones = r.dones;
  moving.determined = r.determined_at;
  return moving;
}

void Thread::records_sent(const detail::MovingRecords& records) {
  if (records.new_checkpoint) runtime_.backend().keep_backup(*this, records.checkpoint);
  if (runtime_.hosts(*this)) return;  // it stayed
  Recovery& r = *recovery_;
  for (Envelope* e : r.inbox.take_early()) runtime_.enqueue(*this, e);  // forwarded, after its image
  r.outbox = {};
  r.inbox.restore({});
  r.covering.clear();
  r.dones.clear();
  r.determined_at.clear();
  r.log = {};
}

void Thread::relocate(NodeId node, detail::MovingRecords&& records) {
  detail::Checkpoint& image = *records.checkpoint;
  Recovery& r = *recovery_;
  r.outbox = std::move(image.outbox);
  r.inbox.restore(image.inbox);
  r.clock = image.clock;
  r.frames_opened = image.frames_opened;
  r.taken = image.epoch;
  r.committed = records.committed;
  r.covering = std::move(records.covering);
  r.dones = std::move(records.dones);
  r.determined_at = std::move(records.determined);
  r.determined = image.determined;
  r.log = std::move(image.log);
  r.log.forget_told();
  r.handled = 0;
  relocate(node, image.state);  // hosted here once its records are in place
}

void Thread::first_checkpoint(std::string state) {
  auto image = std::make_shared<detail::Checkpoint>();
  image->thread = uid_;
  image->epoch = 1;  // as checkpoint() numbers the first
  image->state = std::move(state);
  runtime_.backend().keep_backup(*this, std::move(image));
}

void Thread::on_stored(std::uint32_t epoch) {
  Recovery& r = *recovery_;
  const auto it = r.covering.find(epoch);
  if (it == r.covering.end() || epoch <= r.committed) return;  // an earlier life's, or one held after it
  r.committed = epoch;
  for (const auto& [key, number] : it->second) runtime_.cover(node(), uid_, key.first, key.second, number);
  r.covering.erase(r.covering.begin(), std::next(it));
  if (const auto d = r.determined_at.find(epoch); d != r.determined_at.end()) {
    r.log.stable(uid_, d->second);  // the news spreads with what it sends
    r.determined_at.erase(r.determined_at.begin(), std::next(d));
  }
  said_done(epoch);  // the merges it ran before are never run again
}

void Thread::on_covered(std::uint64_t receiver, std::uint32_t incarnation, std::uint64_t number) {
  recovery_->outbox.covered(receiver, incarnation, number);
}

// Its copies for `receiver`; rebuilt (0), its copies for all, and to each other thread rebuilt with it
// (`rebuilt`) a Rejoin too.
void Thread::on_resend(std::uint64_t receiver, const std::vector<std::uint64_t>& rebuilt) {
  std::vector<std::pair<std::uint64_t, Envelope*>> copies = recovery_->outbox.copies(receiver);
  if (receiver == 0) {
    said_done(recovery_->committed);  // its checkpoint is held
    for (std::uint64_t r : rebuilt) {
      std::vector<std::pair<std::uint64_t, Envelope*>> theirs;
      for (const auto& copy : copies)
        if (copy.first == r) theirs.push_back(copy);
      if (r != uid_) rejoin(r, theirs, /*rebuilt_too=*/true);
    }
  } else {
    // Rebuilt, it lost what it was told; what it told this thread, still queued here (sent before
    // its node failed), it learns now: its order is what it handles again.
    detail::CausalLog& log = recovery_->log;
    log.forget_told(receiver);
    for (const Envelope* e = pending_; e; e = e->next)
      if (e->kind == Message::Data && e->determinants) log.learn(*e->determinants);
    recovery_->inbox.for_each_early([&](const Envelope& e) {
      if (e.determinants) log.learn(*e.determinants);
    });
    rejoin(receiver, copies, /*rebuilt_too=*/false);
  }
  for (auto [to, e] : copies) {
    e->stamp.earlier_life = e->stamp.incarnation() < recovery_->outbox.incarnation();
    if (to == 0) {
      runtime_.finish_call(node(), e);
    } else if (Thread* t = runtime_.thread(to)) {
      runtime_.send(node(), *t, e);
    } else {
      delete e;  // gone: its call ended
    }
  }
}

void Thread::restore(const detail::Checkpoint& checkpoint, NodeId node, std::uint32_t incarnation) {
  std::unique_lock standing_in(standing_in_);  // its strand may be forwarding what reached it here
  const std::vector<Envelope*> requests = wipe();
  if (migration_) {
    migration_->done(std::make_exception_ptr(NodeFailure(node_.load(), "it failed before " + name() + " could migrate")));
    migration_.reset();
  }
  if (state_)
    state_->load(checkpoint.state);
  else
    state_ = detail::make_state(collection_.state_type(), &checkpoint.state);
  Recovery& r = *recovery_;
  r.clock = checkpoint.clock;
  r.replaying = true;
  r.resent.clear();
  r.log = checkpoint.log;
  r.log.forget_told();
  r.determined = checkpoint.determined;
  r.determined_at.clear();
  r.script.restart(checkpoint.determined);
  r.released.clear();
  r.ordered.clear();
  r.parked = 0;
  r.held.clear();
  r.copies_run.clear();
  r.outbox = checkpoint.outbox;
  r.outbox.restart(incarnation, checkpoint.epoch);
  r.inbox.restore(checkpoint.inbox);
  r.taken = r.committed = checkpoint.epoch;
  r.covering.clear();
  r.uncovered.clear();
  r.frames_opened = checkpoint.frames_opened;
  r.dones.clear();
  if (!checkpoint.dones.empty()) r.dones[checkpoint.epoch] = checkpoint.dones;
  r.rejoining = true;
  r.registrations.clear();
  r.unopened.clear();
  r.heard.clear();
  r.owner_holds.clear();
  for (const detail::KeptFrame& f : checkpoint.frames) {
    detail::FrameHome& home = homes_[f.id];
    home.call = f.call;
    home.posted = f.posted;
    home.closed = true;
    home.owner = f.owner;
    home.forwarders = f.forwarders;
    home.window = f.credits ? 1 : 0;
  }
  r.last = -1;  // its backup is where it now runs: a new one at once
  node_.store(node, std::memory_order_release);
  standing_in.unlock();
  for (Envelope* e : requests) runtime_.enqueue(*this, e);
}

}  // namespace dps
