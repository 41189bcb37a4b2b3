// The split-frame protocol (see detail/frames.hpp): homes count and give credit, the first thread to
// register for a frame owns its merge, other receivers forward to it.
#include "dps/kernel/frames.hpp"

#include "dps/kernel/runtime.hpp"
#include "dps/kernel/thread.hpp"

#include <algorithm>
#include <tuple>
#include <unordered_map>
#include <utility>

namespace dps {

using Role = detail::FrameSlot::Role;

void Thread::open_frame(Activity& producer, const FrameStack& base, std::uint64_t seq) {
  const FrameId id = recovery_ ? frame_id() : runtime_.new_frame();
  producer.out_frame = id;
  producer.out_frames = base;
  producer.out_frames.push(Frame{id, uid_, seq});
  detail::FrameHome& home = homes_[id];
  home.producer = &producer;
  home.call = producer.call;
  home.window = producer.spec().window;
  producer.home = &home;
  if (recovery_ && !recovery_->unopened.empty()) reopened(id, home);
}

void Thread::close_frame(Activity& producer) {
  detail::FrameHome& home = *producer.home;
  const FrameId id = producer.out_frame;
  home.closed = true;
  home.producer = nullptr;
  if (home.posted == 0) {
    fail(producer, "it posted no object, so its merge can never run");
    homes_.erase(id);
    return;
  }
  if (home.done || ended_before(id, home)) return on_done(id);  // run again, its merge had ended: nothing waits
  if (home.owner) runtime_.control(*this, home.owner, Message::Close, home.call, id, 0, home.posted);
}

void Thread::forward_frame(const Forwarder& f) {
  detail::FrameSlot& slot = slots_[f.frame];
  slot.role = Role::Forwarder;
  slot.call = f.call;
  slot.owner = f.owner;
}

// A forwarder's objects go to the frame's owner; gone, it took its failed call with it.
void Thread::pass_on(std::uint64_t owner, Envelope* e) {
  if (Thread* to = runtime_.thread(owner))
    send_data(*to, e);
  else
    delete e;
}

void Thread::on_consumer_input(Envelope* e) {
  const Frame& top = e->frames.top();
  const FrameId id = top.id;
  auto [it, fresh] = slots_.try_emplace(id);
  detail::FrameSlot& slot = it->second;
  if (fresh) {
    if (life_ != Life::Active) {  // a removed thread starts no new merge
      slots_.erase(it);
      return reroute(e);
    }
    slot.call = e->call;
    slot.home = top.home;
    slot.waiting.push_back(e);
    if (recovery_ && recovery_->delivering) recovery_->parked = id;
    runtime_.control(*this, top.home, Message::Register, slot.call, id, uid_);
    return;
  }
  if (slot.role == Role::Pending) return slot.waiting.push_back(e);
  log_delivery(*e);
  if (slot.role == Role::Forwarder) return pass_on(slot.owner, e);
  accept(slot, id, e);
}

void Thread::accept(detail::FrameSlot& slot, FrameId frame, Envelope* e) {
  ++slot.received;
  if (recovery_ && overfull(slot)) {
    delete e;
    return;
  }
  if (!slot.started) {  // the first object starts the merge (or stream) instance
    slot.started = true;
    Activity* a = create(*e->graph, e->vertex, e->call);
    a->in_frame = frame;
    a->slot = &slot;
    slot.consumer = a;
    const std::uint64_t parent_seq = e->frames.top().parent_seq;
    FrameStack base = std::move(e->frames);
    base.pop();
    if (a->kind() == OpKind::Stream) {
      open_frame(*a, base, parent_seq);
    } else {
      a->out_frames = std::move(base);
      a->out_seq = parent_seq;
    }
    a->start(std::move(e->payload));
    delete e;
    make_ready(*a);  // before the credit, which may wake the producer: the first input is seen first
    consumed(slot, frame);
    return;
  }
  if (!slot.consumer) {  // the instance ended early: the rest of its frame is dropped
    delete e;
    consumed(slot, frame);
    if (slot.complete()) finish_slot(frame, slot);
    return;
  }
  Activity& a = *slot.consumer;
  a.inputs.push_back(e);
  if (a.state == Activity::State::WaitInput) make_ready(a);
}

void Thread::consumed(detail::FrameSlot& slot, FrameId frame) {
  if (slot.credits) runtime_.control(*this, slot.home, Message::Credit, slot.call, frame, 0, 1);
}

void Thread::finish_slot(FrameId frame, detail::FrameSlot& slot) {
  const detail::FrameDone done{slot.home, slot.call, frame};
  slots_.erase(frame);
  // Under fault tolerance the home keeps the frame until a checkpoint taken after the merge is held:
  // rebuilt from an earlier one, this thread runs the merge again and registers again.
  if (recovery_ && rebuildable()) return recovery_->dones[recovery_->taken + 1].push_back(done);
  runtime_.control(*this, done.home, Message::Done, done.call, done.frame);
}

void Thread::on_control(Message kind, FrameId frame, std::uint64_t peer, std::int64_t count, bool credit) {
  switch (kind) {
    case Message::Register: return on_register(frame, peer);
    case Message::Grant: return on_grant(frame, peer, count, credit);
    case Message::Close: return on_close(frame, count);
    case Message::Credit: return on_credit(frame, count, credit);
    case Message::Done: return on_done(frame);
    case Message::Release: return on_release(frame);
    default: return;
  }
}

void Thread::on_register(FrameId frame, std::uint64_t registrant) {
  if (recovery_ && recovery_->rejoining) {
    recovery_->registrations.emplace_back(frame, registrant);
    return;
  }
  auto it = homes_.find(frame);
  if (it == homes_.end()) {
    if (!recovery_) return;  // its call failed
    if (not_opened_yet(frame)) return recovery_->unopened[frame].registrants.push_back(registrant);
    // Its merge ended (or its call failed): what a rebuilt registrant got of it again is dropped.
    return runtime_.control(*this, registrant, Message::Release, 0, frame);
  }
  detail::FrameHome& home = it->second;
  if (!home.owner) {
    home.owner = registrant;
    if (recovery_) recovery_->owner_holds.insert(frame);
  } else if (registrant != home.owner && std::ranges::find(home.forwarders, registrant) == home.forwarders.end())
    home.forwarders.push_back(registrant);
  runtime_.control(*this, registrant, Message::Grant, home.call, frame, home.owner, home.closed ? home.posted : -1,
                   home.window > 0);
}

void Thread::on_grant(FrameId frame, std::uint64_t owner, std::int64_t count, bool credit) {
  auto it = slots_.find(frame);
  if (it == slots_.end() || it->second.role != Role::Pending) return;  // a second answer, after a rebuild
  detail::FrameSlot& slot = it->second;
  std::vector<Envelope*> waiting = std::move(slot.waiting);
  slot.waiting.clear();
  if (owner == uid_) {
    slot.role = Role::Owner;
    slot.expected = count;
    slot.credits = credit;
    for (Envelope* e : waiting) log_delivery(*e), accept(slot, frame, e);
  } else {
    slot.role = Role::Forwarder;
    slot.owner = owner;
    for (Envelope* e : waiting) log_delivery(*e), pass_on(owner, e);
  }
  unpark(frame);
}

void Thread::on_close(FrameId frame, std::int64_t count) {
  auto it = slots_.find(frame);
  if (it == slots_.end()) return;
  detail::FrameSlot& slot = it->second;
  slot.expected = count;
  if (recovery_ && overfull(slot)) return;
  if (!slot.complete()) return;
  if (slot.consumer) {
    if (slot.consumer->state == Activity::State::WaitInput && input_ends(*slot.consumer)) make_ready(*slot.consumer);
  } else if (slot.started) {
    finish_slot(frame, slot);
  }
}

void Thread::on_credit(FrameId frame, std::int64_t count, bool dropped) {
  auto it = homes_.find(frame);
  if (it == homes_.end()) return;
  detail::FrameHome& home = it->second;
  if (dropped) {
    home.dropped += count;
    if (ended_before(frame, home)) return on_done(frame);
  }
  home.in_flight -= count;
  // A waiting producer wakes once a quarter of its window is free, not for every credit: it then posts
  // a batch before it waits again, instead of one object per suspension.
  Activity* producer = home.producer;
  const std::int64_t wake_below = home.window - home.window / 4;
  if (producer && producer->state == Activity::State::WaitCredit && home.in_flight < wake_below) {
    post(*producer, std::move(producer->held));
    make_ready(*producer);
  }
}

void Thread::on_done(FrameId frame) {
  auto it = homes_.find(frame);
  if (it == homes_.end()) {
    if (not_opened_yet(frame)) recovery_->unopened[frame].done = true;
    return;
  }
  if (it->second.producer) {  // rebuilt, it runs the producer again: the frame ends with it
    it->second.done = true;
    return;
  }
  std::vector<std::uint64_t> forwarders = std::move(it->second.forwarders);
  const CallId call = it->second.call;
  homes_.erase(it);
  for (std::uint64_t t : forwarders) runtime_.control(*this, t, Message::Release, call, frame);
}

// A producer run again after a node failed that posts fewer objects than it did at first (it is not
// deterministic) would leave its merge waiting forever: the call fails instead.
bool Thread::overfull(const detail::FrameSlot& slot) {
  if (slot.expected < 0 || slot.received <= slot.expected) return false;
  fail(slot.call, slot.consumer ? slot.consumer->spec().name : "merge",
       "the producer of its frame, run again after a node failed, posted " + std::to_string(slot.expected) +
           " objects, fewer than reached it: an operation is not deterministic (docs/fault-tolerance.md)");
  return true;
}

void Thread::on_release(FrameId frame) {
  auto it = slots_.find(frame);
  if (it == slots_.end() || it->second.role == Role::Owner) return;  // an owner ends with its merge
  for (Envelope* e : it->second.waiting) delete e;
  slots_.erase(it);
  unpark(frame);
}

// --- under fault tolerance: a rebuilt home and the survivors' slots of its frames ---

FrameId Thread::frame_id() { return FrameId{uid_} << 32 | ++recovery_->frames_opened; }

bool Thread::not_opened_yet(FrameId frame) const noexcept {
  return recovery_ && frame >> 32 == uid_ && (frame & 0xffffffffu) > recovery_->frames_opened;
}

void Thread::rejoin(std::uint64_t rebuilt, const std::vector<std::pair<std::uint64_t, Envelope*>>& copies,
                    bool rebuilt_too) {
  Thread* to = runtime_.thread(rebuilt);
  if (!to) return;
  std::vector<detail::FrameClaim> claims;
  for (const auto& [frame, slot] : slots_) {
    if (slot.home != rebuilt) continue;
    const std::uint64_t owner = slot.role == Role::Owner ? uid_ : slot.role == Role::Forwarder ? slot.owner : 0;
    claims.push_back({frame, uid_, owner});
  }
  for (const auto& [epoch, dones] : recovery_->dones)  // merges it ran that its home waits to hear of
    for (const detail::FrameDone& d : dones)
      if (d.home == rebuilt) claims.push_back({d.frame, uid_, uid_});
  Envelope* e = detail::rejoin_message(uid_, copies, std::move(claims), rebuilt_too);
  e->determinants = recovery_->log.news_for(rebuilt, /*its_own=*/true);
  runtime_.send(node(), *to, e);
}

void Thread::on_rejoin(const Envelope& e, std::vector<detail::FrameClaim> claims) {
  Recovery& r = *recovery_;
  const std::uint64_t survivor = e.peer;    // 0: the caller
  if (!e.credit) r.heard.insert(survivor);  // not rebuilt too: what it holds, it survived with
  r.resent[survivor] = {e.seq, static_cast<std::uint64_t>(e.count)};
  if (e.determinants) {  // its own order goes to its script; it knows it again as it handles them
    r.script.learn(*e.determinants, uid_);
    r.log.learn(*e.determinants, uid_);
  }
  for (const detail::FrameClaim& c : claims) {
    if (c.owner == c.holder) r.owner_holds.insert(c.frame);
    if (auto it = homes_.find(c.frame); it != homes_.end())
      claim(it->second, c.frame, c);
    else if (not_opened_yet(c.frame))
      r.unopened[c.frame].claims.push_back(c);
    else if (c.owner != c.holder)  // ended: the holder forgets it
      runtime_.control(*this, c.holder, Message::Release, 0, c.frame);
  }
  if (!r.rejoining || !runtime_.rejoined(uid_, survivor)) return;
  r.rejoining = false;  // every survivor answered: the first registrant of a frame no one owns owns it
  for (auto [frame, registrant] : std::exchange(r.registrations, {})) on_register(frame, registrant);
  end_frames_ended_before();
  replay_when_complete();
}

// Once every survivor rejoined: what it handled first, as far as they know, in that order (its
// script), each as it comes; then, once every sender's copies came, the rest of them in their
// senders' clocks' order (a causal order), then what came besides, as it came. What its script
// names from a survivor that sent all its copies never comes: the rest follows the clocks.
void Thread::replay_when_complete() {
  Recovery& r = *recovery_;
  if (!r.replaying || r.rejoining || !r.released.empty()) return;  // one batch of its script at a time
  const auto copy = [&r](const Envelope* e) {
    const auto it = r.resent.find(e->stamp.from);
    return it != r.resent.end() && e->stamp.link != 0 && e->stamp.link <= it->second.last;
  };
  std::vector<Envelope*> order;
  do {
    while (take_scripted(order)) r.script.pop();
  } while (order.empty() && end_in_turn());
  r.released.insert(order.begin(), order.end());
  for (const Envelope* e : order)
    if (copy(e)) ++r.copies_run[e->stamp.from];
  std::unordered_map<std::uint64_t, std::uint64_t> arrived = r.copies_run;
  for (const Envelope* e : r.replay)
    if (copy(e)) ++arrived[e->stamp.from];
  bool complete = true;
  for (const auto& [from, sent] : r.resent) complete = complete && arrived[from] >= sent.count;
  const detail::Determinant* next = r.script.front();
  if (next && complete && next->from != uid_ && !next->ends_input() &&
      (r.heard.contains(next->from) || !r.resent.contains(next->from)))
    r.script.clear();
  if (complete && !r.script.front()) {
    r.replaying = false;
    r.replay_untraced = true;
    runtime_.replayed(uid_);
    const auto copies_end = std::stable_partition(r.replay.begin(), r.replay.end(), copy);
    std::stable_sort(r.replay.begin(), copies_end, [](const Envelope* a, const Envelope* b) {
      return std::tie(a->stamp.time, a->stamp.from, a->stamp.link) <
             std::tie(b->stamp.time, b->stamp.from, b->stamp.link);
    });
    r.ordered.insert(r.replay.begin(), r.replay.end());
    order.insert(order.end(), r.replay.begin(), r.replay.end());
    r.replay.clear();
  }
  for (auto it = order.rbegin(); it != order.rend(); ++it) {  // handled before what it took from its mailbox
    (*it)->next = pending_;
    pending_ = *it;
  }
}

// Moves its script's next object to `order` if it came (false if not). A rebuilt sender may number
// its links in another order than it first did: the script's order goes first.
bool Thread::take_scripted(std::vector<Envelope*>& order) {
  Recovery& r = *recovery_;
  const detail::Determinant* next = r.script.front();
  if (!next) return false;
  const auto it = std::find_if(r.replay.begin(), r.replay.end(), [&](const Envelope* e) {
    return e->stamp.from == next->from && detail::identity(*e) == next->identity;
  });
  if (it == r.replay.end()) return false;
  order.push_back(*it);
  r.replay.erase(it);
  return true;
}

bool Thread::input_ends(const Activity& a) const {
  if (!a.slot->complete()) return false;
  if (!recovery_ || !recovery_->replaying) return true;
  const Recovery& r = *recovery_;
  const detail::Determinant end = detail::Determinant::end_of_input(a.in_frame);
  const detail::Determinant* next = r.script.front();
  if (next && *next == end) return r.released.empty();  // once what its script names before it is handled
  return !r.script.names(end);
}

void Thread::input_ended(const Activity& a) {
  if (!recovery_) return;
  Recovery& r = *recovery_;
  const detail::Determinant end = detail::Determinant::end_of_input(a.in_frame);
  if (rebuildable()) r.log.record(uid_, r.determined++, end);
  const detail::Determinant* next = r.script.front();
  if (!next || *next != end) return;
  r.script.pop();
  replay_when_complete();
}

// Its script's next is the end of a frame's input: its operation, waiting, sees it now; ended
// without reading it, or not run here this time, it is passed (true).
bool Thread::end_in_turn() {
  Recovery& r = *recovery_;
  const detail::Determinant* next = r.script.front();
  if (!next || !next->ends_input()) return false;
  const auto it = slots_.find(next->identity);
  const detail::FrameSlot* slot = it != slots_.end() ? &it->second : nullptr;
  if (slot && (slot->role == Role::Pending || (slot->role == Role::Owner && (!slot->started || slot->consumer)))) {
    Activity* a = slot->consumer;
    if (a && a->state == Activity::State::WaitInput && input_ends(*a)) make_ready(*a);
    return false;
  }
  r.script.pop();
  return true;
}

// Rebuilt, a frame it closed that no one will finish: its owner survived and holds nothing of it (it
// said Done to this thread's earlier life), or no one owns it and every object it posted again was
// dropped by a receiver that had handled it. (An owner rebuilt with this thread that registers later
// is then released: docs/fault-tolerance.md, "Not yet".)
bool Thread::ended_before(FrameId frame, const detail::FrameHome& home) const {
  if (!recovery_ || recovery_->rejoining || !home.closed || home.producer) return false;
  if (home.owner) return recovery_->heard.contains(home.owner) && !recovery_->owner_holds.contains(frame);
  return home.dropped >= home.posted;
}

void Thread::end_frames_ended_before() {
  std::vector<FrameId> ended;
  for (const auto& [frame, home] : homes_)
    if (ended_before(frame, home)) ended.push_back(frame);
  for (FrameId frame : ended) on_done(frame);
}

// What a survivor holds of a frame this rebuilt thread is the home of. Owners and forwarders say who
// runs the merge; a slot awaiting its grant registers as if now, after them.
void Thread::claim(detail::FrameHome& home, FrameId frame, const detail::FrameClaim& c) {
  if (!c.owner) return on_register(frame, c.holder);
  if (!home.owner) home.owner = c.owner;
  if (c.holder != home.owner && std::ranges::find(home.forwarders, c.holder) == home.forwarders.end())
    home.forwarders.push_back(c.holder);
  if (c.holder == home.owner && home.closed)  // its Close may have been lost with the old home
    runtime_.control(*this, home.owner, Message::Close, home.call, frame, 0, home.posted);
}

// Rebuilt, it opened again a frame survivors hold slots of, or whose merge its owner said Done.
void Thread::reopened(FrameId frame, detail::FrameHome& home) {
  const auto it = recovery_->unopened.find(frame);
  if (it == recovery_->unopened.end()) return;
  Recovery::Unopened held = std::move(it->second);
  recovery_->unopened.erase(it);
  home.done = held.done;
  std::stable_partition(held.claims.begin(), held.claims.end(), [](const detail::FrameClaim& c) { return c.owner != 0; });
  for (const detail::FrameClaim& c : held.claims) claim(home, frame, c);
  for (std::uint64_t registrant : held.registrants) on_register(frame, registrant);
}

// Retiring or migrating, it cannot checkpoint: what it owes goes now (a failure while it leaves
// would then lose those merges' outputs), and the owners of its frames' merges checkpoint at once.
void Thread::hasten_done() {
  said_done(Stamp::kFinal);
  end_frames_ended_before();
  for (auto& [frame, home] : homes_) {
    if (home.hastened || !home.owner) continue;
    home.hastened = true;
    runtime_.control(*this, home.owner, Message::CheckpointNow, home.call, frame);
  }
}

void Thread::said_done(std::uint32_t held) {
  auto& dones = recovery_->dones;
  const auto end = dones.upper_bound(held);
  for (auto it = dones.begin(); it != end; ++it)
    for (const detail::FrameDone& d : it->second) runtime_.control(*this, d.home, Message::Done, d.call, d.frame);
  dones.erase(dones.begin(), end);
}

}  // namespace dps
