// The split-frame protocol (see detail/frames.hpp): homes count and give credit, the first thread to
// register for a frame owns its merge, other receivers forward to it.
#include "dps/kernel/frames.hpp"

#include "dps/kernel/runtime.hpp"
#include "dps/kernel/thread.hpp"

namespace dps {

using Role = detail::FrameSlot::Role;

void Thread::open_frame(Activity& producer, const FrameStack& base, std::uint64_t seq) {
  if (recovery_) recovery_->framed[recovery_->taken].insert(producer.call);
  const FrameId id = runtime_.new_frame();
  producer.out_frame = id;
  producer.out_frames = base;
  producer.out_frames.push(Frame{id, uid_, seq});
  detail::FrameHome& home = homes_[id];
  home.producer = &producer;
  home.call = producer.call;
  home.window = producer.spec().window;
  producer.home = &home;
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
  if (home.owner) runtime_.control(*this, home.owner, Message::Close, home.call, id, 0, home.posted);
}

void Thread::forward_frame(const Forwarder& f) {
  if (recovery_) recovery_->framed[recovery_->taken].insert(f.call);
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
    if (recovery_) recovery_->framed[recovery_->taken].insert(e->call);
    slot.call = e->call;
    slot.home = top.home;
    slot.waiting.push_back(e);
    runtime_.control(*this, top.home, Message::Register, slot.call, id, uid_);
    return;
  }
  switch (slot.role) {
    case Role::Pending: slot.waiting.push_back(e); return;
    case Role::Forwarder: return pass_on(slot.owner, e);
    case Role::Owner: accept(slot, id, e); return;
  }
}

void Thread::accept(detail::FrameSlot& slot, FrameId frame, Envelope* e) {
  ++slot.received;
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
  const std::uint64_t home = slot.home;
  const CallId call = slot.call;
  slots_.erase(frame);
  runtime_.control(*this, home, Message::Done, call, frame);
}

void Thread::on_control(Message kind, FrameId frame, std::uint64_t peer, std::int64_t count, bool credit) {
  switch (kind) {
    case Message::Register: return on_register(frame, peer);
    case Message::Grant: return on_grant(frame, peer, count, credit);
    case Message::Close: return on_close(frame, count);
    case Message::Credit: return on_credit(frame, count);
    case Message::Done: return on_done(frame);
    case Message::Release: slots_.erase(frame); return;
    default: return;
  }
}

void Thread::on_register(FrameId frame, std::uint64_t registrant) {
  auto it = homes_.find(frame);
  if (it == homes_.end()) return;  // its call failed
  detail::FrameHome& home = it->second;
  if (!home.owner)
    home.owner = registrant;
  else if (registrant != home.owner)
    home.forwarders.push_back(registrant);
  runtime_.control(*this, registrant, Message::Grant, home.call, frame, home.owner, home.closed ? home.posted : -1,
                   home.window > 0);
}

void Thread::on_grant(FrameId frame, std::uint64_t owner, std::int64_t count, bool credit) {
  auto it = slots_.find(frame);
  if (it == slots_.end()) return;
  detail::FrameSlot& slot = it->second;
  std::vector<Envelope*> waiting = std::move(slot.waiting);
  slot.waiting.clear();
  if (owner == uid_) {
    slot.role = Role::Owner;
    slot.expected = count;
    slot.credits = credit;
    for (Envelope* e : waiting) accept(slot, frame, e);
  } else {
    slot.role = Role::Forwarder;
    slot.owner = owner;
    for (Envelope* e : waiting) pass_on(owner, e);
  }
}

void Thread::on_close(FrameId frame, std::int64_t count) {
  auto it = slots_.find(frame);
  if (it == slots_.end()) return;
  detail::FrameSlot& slot = it->second;
  slot.expected = count;
  if (!slot.complete()) return;
  if (slot.consumer) {
    if (slot.consumer->state == Activity::State::WaitInput) make_ready(*slot.consumer);
  } else if (slot.started) {
    finish_slot(frame, slot);
  }
}

void Thread::on_credit(FrameId frame, std::int64_t count) {
  auto it = homes_.find(frame);
  if (it == homes_.end()) return;
  detail::FrameHome& home = it->second;
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
  if (it == homes_.end()) return;
  std::vector<std::uint64_t> forwarders = std::move(it->second.forwarders);
  const CallId call = it->second.call;
  homes_.erase(it);
  for (std::uint64_t t : forwarders) runtime_.control(*this, t, Message::Release, call, frame);
}

}  // namespace dps
