// The DPS thread as a strand: its message loop, leaves, and its lifecycle (retirement, migration).
#include "dps/kernel/thread.hpp"

#include "dps/kernel/context.hpp"
#include "dps/kernel/worker_policy.hpp"
#include "dps/errors.hpp"
#include "dps/kernel/runtime.hpp"
#include "dps/kernel/threads_core.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <vector>

namespace dps {

Thread::Thread(Runtime& runtime, ThreadsCore& collection, std::uint64_t uid, NodeId node,
               std::unique_ptr<detail::StateBox> state)
    : runtime_(runtime), collection_(collection), uid_(uid), node_(node), state_(std::move(state)) {}

Thread::~Thread() {
  for (Envelope* e : wipe()) delete e;
  release_cached_envelopes();  // a gone thread that rerouted messages cached their blocks again
}

// Its kernel records go, as when it is destroyed or rebuilt from a checkpoint; the runtime's requests
// it held (retire, migrate, abort) are returned, still to do.
std::vector<Envelope*> Thread::wipe() {
  for (Activity* a : activities_) {
    for (Envelope* e : a->inputs) delete e;
    Activity::free(a);
  }
  activities_.clear();
  for (auto& [frame, slot] : slots_)
    for (Envelope* e : slot.waiting) delete e;
  slots_.clear();
  homes_.clear();
  if (recovery_) {
    for (Envelope* e : recovery_->replay) delete e;
    for (Envelope* e : recovery_->held) delete e;
    recovery_->replay.clear();
    recovery_->released.clear();
    recovery_->ordered.clear();
    recovery_->held.clear();
    recovery_->parked = 0;
  }
  ready_.clear();
  yielded_.clear();
  drain_ = false;
  std::vector<Envelope*> requests;  // retirement, migration, aborted calls: still to do
  for (Envelope* e : {std::exchange(pending_, nullptr), mailbox_.take()}) {
    while (e) {
      Envelope* next = std::exchange(e->next, nullptr);
      if (e->kind == Message::Retire || e->kind == Message::Migrate || e->kind == Message::Snapshot ||
          e->kind == Message::Abort)
        requests.push_back(e);
      else
        delete e;
      e = next;
    }
  }
  mailbox_.try_idle();  // nothing runs it: the next message schedules it where it is rebuilt
  return requests;
}

std::string Thread::name() const {
  std::ptrdiff_t index = collection_.index_of(*this);
  if (index >= 0) return collection_.name() + "[" + std::to_string(index) + "]";
  return collection_.name() + "#" + std::to_string(uid_) + " (removed)";
}

bool Thread::run(std::size_t budget, const std::atomic<std::size_t>* urgent) {
  if (!runtime_.hosts(*this)) return forward();
  detail::ContextScope scope({&runtime_, this, nullptr});
  // A turn of the worker policy: until no work is left, or the step that spends the budget or finds
  // an urgent thread waiting.
  for (std::size_t steps = 1;; ++steps) {
    if (recovery_ && resend_due_.load(std::memory_order_relaxed)) resend_first();
    if (recovery_ && checkpoint_due()) {
      checkpoint();  // a step of its own, between two operations
    } else if (!ready_.empty()) {  // operations woken by the last message go first: pipelining
      Activity* a = ready_.front();
      ready_.pop_front();
      resume(*a);
    } else {
      if (!pending_ && (yielded_.empty() || std::exchange(drain_, false))) pending_ = mailbox_.take();
      if (pending_) {
        handle(std::exchange(pending_, pending_->next));
      } else if (!yielded_.empty()) {  // what waited when it yielded is handled
        Activity* a = yielded_.front();
        yielded_.pop_front();
        resume(*a);
      } else {
        if (recovery_ && (!recovery_->uncovered.empty() || (!rebuildable() && !recovery_->dones.empty()))) cover_now();
        if (recovery_ && std::exchange(recovery_->replay_untraced, false))  // it handled its copies: recovered
          runtime_.lifecycle(Lifecycle::ThreadReplayed, this, node());
        if (mailbox_.try_idle()) return false;
        --steps;  // something arrived meanwhile: take it
        continue;
      }
    }
    if (life_ != Life::Active || migration_ || !snapshots_.empty()) {
      settle();
      if (!runtime_.hosts(*this)) return forward();
    }
    const bool urgent_waiting = urgent && urgent->load(std::memory_order_relaxed) > 0;
    if (detail::worker_policy::turn_ends(steps, budget, urgent_waiting)) return true;
  }
}

// A node failed: what this thread is asked to send again goes before what it has queued, so that the
// rebuilt threads, which wait for it, do not wait for that too.
void Thread::resend_first() {
  resend_due_.store(false, std::memory_order_relaxed);
  Envelope* first = nullptr;
  Envelope** first_end = &first;
  Envelope** rest_end = &pending_;
  while (*rest_end) rest_end = &(*rest_end)->next;
  for (Envelope* e = mailbox_.take(); e;) {
    Envelope* next = std::exchange(e->next, nullptr);
    Envelope**& end = e->kind == Message::Resend ? first_end : rest_end;
    *end = e;
    end = &e->next;
    e = next;
  }
  *first_end = pending_;
  pending_ = first;
}

// This thread lives in another process: what reaches this stand-in follows it there.
bool Thread::forward() {
  std::lock_guard lock(standing_in_);
  for (Envelope* e : {std::exchange(pending_, nullptr), mailbox_.take()}) {
    while (e) {
      Envelope* next = std::exchange(e->next, nullptr);
      switch (e->kind) {
        case Message::Abort: delete e; break;  // the host hears of failed calls itself
        case Message::Retire: runtime_.retire(*this, e->payload.take<ClusterLink::HandBack>()), delete e; break;
        case Message::Migrate:
          runtime_.migrate(*this, static_cast<NodeId>(e->count), e->payload.take<ClusterLink::Done>()), delete e;
          break;
        case Message::Snapshot: runtime_.snapshot(*this, e->payload.take<ClusterLink::ImageBack>()), delete e; break;
        default: runtime_.backend().send(runtime_.backend().local_node(), *this, e); break;
      }
      e = next;
    }
  }
  return !mailbox_.try_idle();
}

void Thread::relocate(NodeId node, const std::string& image) {
  if (state_)
    state_->load(image);
  else  // a stand-in receiving the thread
    state_ = detail::make_state(collection_.state_type(), &image);
  if (recovery_) recovery_->last = -1;  // its backup may be where it now runs: a new one at once
  node_.store(node, std::memory_order_release);  // last: hosted here, its strand may run it at once
}

void Thread::depart(NodeId node) {
  node_.store(node, std::memory_order_release);
  state_.reset();
}

std::vector<Thread::Forwarder> Thread::forwarders() const {
  std::vector<Forwarder> out;
  for (const auto& [frame, slot] : slots_)
    if (slot.role == detail::FrameSlot::Role::Forwarder) out.push_back({frame, slot.call, slot.owner});
  return out;
}

void Thread::handle(Envelope* e) {
  switch (e->kind) {
    case Message::Data:
      if (recovery_ && recovery_->parked) return recovery_->held.push_back(e);
      if (recovery_ && recovery_->released.contains(e)) {  // its replay's script's turn
        deliver_in_order(e, /*scripted=*/true);
        return replay_when_complete();  // the script's next batch, once this one is handled
      }
      if (recovery_ && recovery_->ordered.contains(e)) return deliver_in_order(e, /*scripted=*/false);
      if (recovery_ && recovery_->replaying) {  // it waits for its turn in the replay
        recovery_->replay.push_back(e);
        return replay_when_complete();
      }
      if (recovery_ && !admit(e)) return;
      on_data(e);
      return;
    case Message::Stored: on_stored(static_cast<std::uint32_t>(e->count)); break;
    case Message::Covered: on_covered(e->peer, static_cast<std::uint32_t>(e->frame), static_cast<std::uint64_t>(e->count)); break;
    case Message::Resend:
      on_resend(e->peer, e->peer ? std::vector<std::uint64_t>{} : e->payload.take<std::vector<std::uint64_t>>());
      break;
    case Message::CheckpointNow: backup_lost(); break;  // as if it had none: a new one when it can
    case Message::Rejoin: on_rejoin(*e, e->payload.take<std::vector<detail::FrameClaim>>()); break;
    case Message::Abort: on_abort(e->call); break;
    case Message::Retire: on_retire(e); break;
    case Message::Migrate: on_migrate(e); break;
    case Message::Snapshot: on_snapshot(e); break;
    default: on_control(e->kind, e->frame, e->peer, e->count, e->credit); break;
  }
  delete e;
}

void Thread::on_data(Envelope* e) {
  if (const std::uint64_t failures = runtime_.failures(); failures != failures_seen_) {
    failures_seen_ = failures;  // a call failed: its Abort may be far behind in the mailbox
    aborted_ = runtime_.failed_calls();
  }
  if (!aborted_.empty() && aborted_.contains(e->call)) {
    delete e;
    return;
  }
  switch ((*e->graph)[e->vertex].kind()) {
    case OpKind::Leaf:
      log_delivery(*e);
      if (life_ != Life::Active) return reroute(e);
      return run_leaf(e);
    case OpKind::Split:
      log_delivery(*e);
      if (life_ != Life::Active) return reroute(e);
      return start_producer(e);
    case OpKind::Merge:
    case OpKind::Stream: return on_consumer_input(e);
  }
}

void Thread::run_leaf(Envelope* e) {
  const VertexSpec& spec = (*e->graph)[e->vertex];
  const double start = runtime_.tracer() ? runtime_.now() : 0.0;
  try {
    spec.type->run_leaf(*this, e->payload);
  } catch (...) {
    fail(e->call, spec.name, describe(std::current_exception()));
    delete e;
    return;
  }
  trace_step(spec, e->call, start);
  e->vertex = e->graph->next(e->vertex);  // the envelope travels on with the leaf's output
  emit(e, spec.name);
}

void Thread::emit(Envelope* e, const std::string& poster) {
  if (e->vertex == GraphCore::kSink) return send_result(e);
  Thread* to = nullptr;
  try {
    to = &runtime_.route(*e->graph, e->vertex, *e);
  } catch (...) {
    fail(e->call, poster, describe(std::current_exception()));
    delete e;
    return;
  }
  send_data(*to, e);
}

void Thread::start_producer(Envelope* e) {
  Activity* a = create(*e->graph, e->vertex, e->call);
  open_frame(*a, e->frames, e->seq);
  a->start(std::move(e->payload));
  delete e;
  make_ready(*a);
}

// A removed thread gives work it has not started to the threads now in its collection.
void Thread::reroute(Envelope* e) { emit(e, (*e->graph)[e->vertex].name); }

void Thread::trace_step(const VertexSpec& spec, CallId call, double start) {
  if (TraceSink* sink = runtime_.tracer())
    sink->step({node(), uid_, collection_.name(), spec.name, call, start, runtime_.now()});
}

void Thread::fail(CallId call, const std::string& operation, const std::string& reason) {
  runtime_.fail_call(call, std::make_exception_ptr(OperationError(operation, name(), node(), reason)));
}

void Thread::fail(const Activity& a, const std::string& reason) { fail(a.call, a.spec().name, reason); }

void Thread::on_abort(CallId call) {
  aborted_.insert(call);
  std::vector<Activity*> doomed;
  for (Activity* a : activities_)
    if (a->call == call) doomed.push_back(a);
  for (Activity* a : doomed) destroy(*a);
  std::erase_if(homes_, [call](const auto& entry) { return entry.second.call == call; });
  std::erase_if(slots_, [call](auto& entry) {
    if (entry.second.call != call) return false;
    for (Envelope* e : entry.second.waiting) delete e;
    return true;
  });
  if (recovery_ && recovery_->parked && !slots_.contains(recovery_->parked)) unpark(recovery_->parked);
}

void Thread::on_retire(Envelope* e) {
  hand_back_ = e->payload.take<ClusterLink::HandBack>();
  life_ = Life::Retiring;
}

void Thread::on_migrate(Envelope* e) {
  if (life_ != Life::Active) {  // asked before its removal, which came first
    e->payload.take<ClusterLink::Done>()(std::make_exception_ptr(std::logic_error(name() + " was removed before it could migrate")));
    return;
  }
  migration_.emplace(Move{static_cast<NodeId>(e->count), e->payload.take<ClusterLink::Done>()});
}

void Thread::on_snapshot(Envelope* e) {
  auto image_back = e->payload.take<ClusterLink::ImageBack>();
  if (life_ == Life::Retired)
    return image_back({},
                      std::make_exception_ptr(std::logic_error(name() + " was removed before its state was taken")));
  snapshots_.push_back(std::move(image_back));
}

bool Thread::quiescent() const noexcept {
  if (recovery_ && (recovery_->replaying || recovery_->rejoining)) return false;  // rebuilt, it waits for its copies
  return homes_.empty() && checkpointable();
}

bool Thread::checkpointable() const noexcept {  // a home with a producer has an activity
  if (!activities_.empty()) return false;
  return std::none_of(slots_.begin(), slots_.end(),
                      [](const auto& entry) { return entry.second.role != detail::FrameSlot::Role::Forwarder; });
}

std::string Thread::saved_image(std::exception_ptr& error) const {
  try {
    return state_->save();
  } catch (...) {
    error = std::current_exception();
    return {};
  }
}

// Operation instances cannot move (their coroutine frames live here), so a thread migrates or
// retires between them; messages keep being processed meanwhile.
void Thread::settle() {
  if (recovery_ && life_ != Life::Active) said_done(Stamp::kFinal);  // leaving, it never checkpoints again
  if (!quiescent()) {
    if (recovery_ && checkpointable()) hasten_done();  // only frames whose merges' owners owe Done
    return;
  }
  for (ClusterLink::ImageBack& image_back : std::exchange(snapshots_, {})) {
    std::exception_ptr error;
    std::string image = saved_image(error);
    image_back(std::move(image), std::move(error));
  }
  if (migration_) {
    Move move = std::move(*migration_);
    migration_.reset();
    const NodeId from = node();
    if (move.to != from) {
      std::exception_ptr error;
      std::string image = saved_image(error);
      if (error) return move.done(std::move(error));
      // The backend calls done once the thread arrived, or with why it did not leave.
      if (!runtime_.backend().migrate(*this, move.to, std::move(image), std::move(move.done))) return;
      runtime_.lifecycle(Lifecycle::ThreadMigrated, this, from, move.to);
      release_cached_envelopes();
      // Removed before it left: where it arrives retires it, after its image (same connection).
      if (life_ == Life::Retiring) {
        life_ = Life::Active;
        runtime_.retire(*this, std::exchange(hand_back_, nullptr));
      }
      return;
    } else {
      move.done(nullptr);
    }
  }
  if (life_ == Life::Retiring) {
    life_ = Life::Retired;
    runtime_.lifecycle(Lifecycle::ThreadRemoved, this, node());
    std::exchange(hand_back_, nullptr)(state_.get(), nullptr);
    // What still reaches it is rerouted until it is gone: nothing it held is needed.
    state_.reset();
    release_cached_envelopes();
    std::unordered_set<CallId>().swap(aborted_);
  }
  // Its forwarders wait for their frames' Release: until then the frames' homes name it.
  if (life_ == Life::Retired && slots_.empty() && !gone_) {
    gone_ = true;
    runtime_.thread_gone(*this);
  }
}

// What operations ask about the thread they run on (operation.hpp).
void* detail::thread_state(Thread& t) noexcept { return t.state(); }
NodeId detail::thread_node(const Thread& t) noexcept { return t.node(); }
std::ptrdiff_t detail::thread_index(const Thread& t) noexcept { return t.collection().index_of(t); }
std::size_t detail::collection_size(const Thread& t) noexcept { return t.collection().size(); }
void detail::mark_phase(Thread& t, std::string_view name, bool begin) {
  Runtime& runtime = t.runtime();
  if (TraceSink* sink = runtime.tracer()) sink->phase({name, begin, runtime.now()});
}

}  // namespace dps
