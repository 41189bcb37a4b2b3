// Operation instances on their thread: creation, resumption, posting, input, and the end of each.
#include "dps/kernel/activity.hpp"

#include "dps/kernel/context.hpp"
#include "dps/errors.hpp"
#include "dps/kernel/runtime.hpp"
#include "dps/kernel/thread.hpp"

#include <algorithm>

namespace dps {

Activity* Activity::make(const detail::OpType& type) {
  const std::size_t align = std::max(alignof(Activity), type.body_align);
  const std::size_t offset = (sizeof(Activity) + type.body_align - 1) / type.body_align * type.body_align;
  void* block = ::operator new(offset + type.body_size, std::align_val_t{align});
  auto* a = new (block) Activity(std::align_val_t{align});
  try {
    a->body_ = type.make_body(static_cast<std::byte*>(block) + offset);
  } catch (...) {
    ::operator delete(block, std::align_val_t{align});
    throw;
  }
  return a;
}

void Activity::free(Activity* a) noexcept {
  const std::align_val_t align = a->align_;
  a->body_->~Body();
  a->~Activity();
  ::operator delete(static_cast<void*>(a), align);
}

Activity* Thread::create(const GraphCore& g, std::uint32_t vertex, CallId call) {
  Activity* a = Activity::make(*g[vertex].type);
  a->thread = this;
  a->graph = &g;
  a->vertex = vertex;
  a->call = call;
  activities_.insert(a);
  return a;
}

void Thread::make_ready(Activity& a) {
  if (a.state == Activity::State::Ready) return;
  a.state = Activity::State::Ready;
  ready_.push_back(&a);
}

void Thread::resume(Activity& a) {
  a.state = Activity::State::Running;
  const double start = runtime_.tracer() ? runtime_.now() : 0.0;
  {
    detail::ContextScope scope({&runtime_, this, &a});
    a.handle.resume();
  }
  trace_step(a.spec(), a.call, start);
  if (a.handle.done()) finish(a);
}

void Thread::finish(Activity& a) {
  a.state = Activity::State::Finished;
  if (std::exception_ptr error = a.error()) {
    fail(a, describe(error));
    return destroy(a);
  }
  switch (a.kind()) {
    case OpKind::Merge:
      if (a.posted != 1) {
        fail(a, a.posted == 0 ? "the merge finished without posting its result" : "a merge posts exactly one object");
        return destroy(a);
      }
      send_output(a, std::move(a.held));
      break;
    case OpKind::Split:
    case OpKind::Stream: close_frame(a); break;
    case OpKind::Leaf: break;
  }
  detail::FrameSlot* slot = a.slot;
  const FrameId in_frame = a.in_frame;
  destroy(a);
  if (slot && slot->complete()) finish_slot(in_frame, *slot);
}

void Thread::destroy(Activity& a) {
  if (a.state == Activity::State::Ready) std::erase(ready_, &a);
  if (a.state == Activity::State::Yielded) std::erase(yielded_, &a);
  activities_.erase(&a);
  for (Envelope* e : a.inputs) delete e;
  if (a.slot && a.slot->consumer == &a) a.slot->consumer = nullptr;
  if (a.out_frame) {
    auto it = homes_.find(a.out_frame);
    if (it != homes_.end() && it->second.producer == &a) it->second.producer = nullptr;
  }
  Activity::free(&a);
}

// A merge's single output leaves when the merge ends, once it is sure there is exactly one.
void Thread::post(Activity& a, Payload&& value) {
  if (a.kind() == OpKind::Merge) {
    if (a.posted++ == 0) a.held = std::move(value);
    return;
  }
  send_output(a, std::move(value));
}

void Thread::send_output(Activity& a, Payload&& value) {
  const VertexSpec& spec = a.spec();
  auto* e = new Envelope;
  e->graph = a.graph;
  e->call = a.call;
  e->vertex = a.graph->next(a.vertex);
  e->frames = a.out_frames;
  e->seq = spec.kind() == OpKind::Merge ? a.out_seq : a.posted;
  e->payload = std::move(value);
  ++a.posted;
  if (a.home) {
    ++a.home->posted;
    if (a.home->window) ++a.home->in_flight;
  }
  emit(e, spec.name);
}

bool Thread::has_credit(const Activity& a) const {
  return !a.home || a.home->window == 0 || a.home->in_flight < a.home->window;
}

namespace detail {

bool post_now(Activity& a, Payload& value) {
  Thread& t = *a.thread;
  if (t.runtime_.steps_yield() || !t.has_credit(a)) return false;
  t.post(a, std::move(value));
  return true;
}

void post_later(Activity& a, Payload& value) {
  Thread& t = *a.thread;
  if (t.has_credit(a)) {  // only a step boundary: post, and continue when the backend says so
    t.post(a, std::move(value));
    t.make_ready(a);
  } else {  // the frame's window is full: on_credit posts it
    a.held = std::move(value);
    a.state = Activity::State::WaitCredit;
  }
}

bool input_ready(Activity& a) {
  if (a.thread->runtime_.steps_yield()) return false;
  return !a.inputs.empty() || a.thread->input_ends(a);
}

void wait_input(Activity& a) {
  if (!a.inputs.empty() || a.thread->input_ends(a))
    a.thread->make_ready(a);
  else
    a.state = Activity::State::WaitInput;
}

bool nothing_waiting(Activity& a) {
  const Thread& t = *a.thread;
  return !t.runtime_.steps_yield() && !t.pending_ && !t.mailbox_.has_mail();
}

void yield_to_waiting(Activity& a) {
  Thread& t = *a.thread;
  a.state = Activity::State::Yielded;
  t.yielded_.push_back(&a);
  t.drain_ = true;
}

Payload& payload_of(Envelope& e) noexcept { return e.payload; }
void free_envelope(Envelope* e) noexcept { delete e; }

Envelope* take_input(Activity& a) {
  if (a.inputs.empty()) {
    a.thread->input_ended(a);
    return nullptr;
  }
  Envelope* e = a.inputs.front();
  a.inputs.pop_front();
  a.thread->consumed(*a.slot, a.in_frame);
  return e;
}

}  // namespace detail
}  // namespace dps
