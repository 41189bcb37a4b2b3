// The runtime: registry of collections, threads, graphs and calls; routing and delivery.
#include "dps/kernel/runtime.hpp"

#include "dps/errors.hpp"

#include <algorithm>
#include <stdexcept>

namespace dps {

Runtime::Runtime(Backend& backend, double checkpoint_interval, std::uint64_t checkpoint_operations)
    : backend_(backend), simulation_(backend.simulation()), frame_base_(FrameId{backend.local_node()} << 44) {
  if (checkpoint_interval != 0) fault_tolerance(checkpoint_interval, checkpoint_operations);
  // The sink first: once attached, a backend's network thread may already be told to trace.
  tracer_.store(through_simulation(nullptr), std::memory_order_release);
  backend_.attach(*this);
}

Runtime::~Runtime() {
  backend_.stop();
  backend_.quiesce();
  std::unordered_map<CallId, std::unique_ptr<detail::CallBase>> unfinished;
  {
    std::lock_guard lock(calls_mu_);
    unfinished.swap(calls_);
  }
  for (auto& [id, call] : unfinished)
    call->fail(std::make_exception_ptr(ShutdownError("the application ended before the call completed")));
  std::lock_guard lock(mu_);
  threads_.clear();
}

bool Runtime::hosts(const Thread& thread) const { return backend_.hosts(thread.node()); }

ThreadsCore& Runtime::make_collection(std::string name, ThreadsCore::Factory factory, const detail::StateType& state,
                                      bool default_state, Backups backups) {
  ThreadsCore* core = nullptr;
  {
    std::lock_guard lock(mu_);
    const auto id = static_cast<std::uint32_t>(collections_.size());
    collections_.push_back(
        std::make_unique<ThreadsCore>(*this, id, std::move(name), std::move(factory), state, default_state, backups));
    core = collections_.back().get();
    by_collection_id_.grow_to_at_least(id + 1);
    by_collection_id_[id].store(core, std::memory_order_release);
  }
  if (link_ && coordinates()) link_->collection_created(*core);
  return *core;
}

Thread& Runtime::adopt(std::unique_ptr<Thread> thread) {
  std::lock_guard lock(mu_);
  thread->aborted_ = failed_;  // not started yet: it missed the Abort broadcasts so far
  const std::uint64_t uid = thread->uid();
  Thread& t = *(threads_[uid] = std::move(thread));
  by_uid_.grow_to_at_least(uid + 1);
  by_uid_[uid].store(&t, std::memory_order_release);
  if (fault_tolerant()) {
    t.keep_records();
    if (hosts(t) && t.rebuildable()) t.checkpoint();  // as created: a node may fail before it runs
  }
  return t;
}

void Runtime::thread_gone(Thread& thread) {
  if (link_)
    link_->thread_gone(thread.uid());  // node 0 tells every process, this one included
  else
    forget(thread.uid());
}

void Runtime::forget(std::uint64_t uid) {
  std::unique_ptr<Thread> owned;
  {
    std::lock_guard lock(mu_);
    auto it = threads_.find(uid);
    if (it == threads_.end()) {  // never heard of here (it joined late): still gone, not unknown
      by_uid_.grow_to_at_least(uid + 1);
      by_uid_[uid].store(gone_mark(), std::memory_order_release);
      return;
    }
    owned = std::move(it->second);
    threads_.erase(it);
    by_uid_[uid].store(gone_mark(), std::memory_order_release);
  }
  owned->collection().drop(*owned);  // if a replica still had it: node 0 dropped it long ago
  // First every reader that found it leaves; nothing new reaches it then. Once what still did has
  // drained (its mailbox idle), the run that drained it leaves too, and the backend forgets it.
  bool drained = false;
  graveyard_.bury([this, drained, thread = std::shared_ptr<Thread>(owned.release())]() mutable {
    if (!drained) {
      drained = thread->mailbox_.idle();
      return false;
    }
    return !simulation_ || simulation_->forget(*thread);
  });
  graveyard_.collect();
}

std::vector<ThreadsCore*> Runtime::collections() const {
  std::lock_guard lock(mu_);
  std::vector<ThreadsCore*> all;
  for (const auto& c : collections_) all.push_back(c.get());
  return all;
}

std::vector<const GraphCore*> Runtime::graphs() const {
  std::lock_guard lock(mu_);
  std::vector<const GraphCore*> all;
  for (const auto& g : graphs_) all.push_back(g.get());
  return all;
}

Thread* Runtime::thread(std::uint64_t uid) const noexcept {
  Thread* t = lookup(by_uid_, uid);
  return t == gone_mark() ? nullptr : t;
}
bool Runtime::gone(std::uint64_t uid) const noexcept { return lookup(by_uid_, uid) == gone_mark(); }
ThreadsCore* Runtime::collection(std::uint32_t id) const noexcept { return lookup(by_collection_id_, id); }
const GraphCore* Runtime::graph(std::uint32_t id) const noexcept { return lookup(by_graph_id_, id); }

std::vector<Thread*> Runtime::threads() const {
  std::lock_guard lock(mu_);
  std::vector<Thread*> all;
  all.reserve(threads_.size());
  for (const auto& [uid, t] : threads_) all.push_back(t.get());
  return all;
}

// A simulator puts its own sink in between: it times steps itself and keeps statistics.
TraceSink* Runtime::through_simulation(TraceSink* sink) { return simulation_ ? simulation_->trace_through(sink) : sink; }

void Runtime::trace_to(TraceSink* sink) {
  const bool relay = link_ && coordinates();
  if (relay && tracer()) link_->collect_trace();  // the old sink gets what is on its way
  tracer_.store(through_simulation(sink), std::memory_order_release);
  if (relay) link_->tracing(sink != nullptr);
}

void Runtime::lifecycle(Lifecycle kind, const Thread* thread, NodeId node, NodeId to) {
  if (TraceSink* sink = tracer()) {
    sink->lifecycle({kind, thread ? thread->uid() : 0,
                     thread ? std::string_view(thread->collection().name()) : std::string_view(), node, to, now()});
  }
}

void Runtime::retire(Thread& thread, ClusterLink::HandBack hand_back) {
  if (!hosts(thread)) return link_->retire(thread, std::move(hand_back));
  auto* e = new Envelope;
  e->kind = Message::Retire;
  e->payload = Payload::local(std::move(hand_back));
  enqueue(thread, e);
}

void Runtime::snapshot(Thread& thread, ClusterLink::ImageBack image_back) {
  if (!hosts(thread)) return link_->snapshot(thread, std::move(image_back));
  auto* e = new Envelope;
  e->kind = Message::Snapshot;
  e->payload = Payload::local(std::move(image_back));
  enqueue(thread, e);
}

Future<void> Runtime::migrate(Thread& thread, NodeId node) {
  Promise<void> promise(&backend_);
  const std::vector<NodeId> live = backend_.nodes();
  if (std::find(live.begin(), live.end(), node) == live.end()) {
    promise.fail(std::make_exception_ptr(std::invalid_argument("cannot migrate " + thread.name() + " to node " +
                                                               std::to_string(node) + ": no such node")));
    return promise.future();
  }
  migrate(thread, node, [promise](std::exception_ptr error) mutable {
    if (error)
      promise.fail(std::move(error));
    else
      promise.set();
  });
  return promise.future();
}

void Runtime::migrate(Thread& thread, NodeId node, ClusterLink::Done done) {
  if (link_ && coordinates() && fault_tolerant()) done = moving(thread, node, std::move(done));
  if (!hosts(thread)) return link_->migrate(thread, node, std::move(done));
  auto* e = new Envelope;
  e->kind = Message::Migrate;
  e->count = node;
  e->payload = Payload::local(std::move(done));
  enqueue(thread, e);
}

std::shared_ptr<const GraphCore> Runtime::adopt(std::shared_ptr<GraphCore> graph) {
  {
    std::lock_guard lock(mu_);
    graph->id = static_cast<std::uint32_t>(graphs_.size());
    graphs_.push_back(graph);
    by_graph_id_.grow_to_at_least(graph->id + 1);
    by_graph_id_[graph->id].store(graph.get(), std::memory_order_release);
  }
  if (link_ && coordinates()) link_->graph_created(*graph);
  return graph;
}

void Runtime::start_call(std::shared_ptr<const GraphCore> graph, Payload input,
                         std::unique_ptr<detail::CallBase> call) {
  const CallId id = next_call_.fetch_add(1, std::memory_order_relaxed) + 1;
  {
    std::lock_guard lock(calls_mu_);
    calls_.emplace(id, std::move(call));
  }
  auto* e = new Envelope;
  e->graph = graph.get();
  e->call = id;
  e->seq = id - 1;
  e->payload = std::move(input);
  detail::EpochGuard guard;  // the thread routed to stays until its mailbox has `e`
  Thread* to = nullptr;
  try {
    to = &route(*graph, 0, *e);
  } catch (...) {
    delete e;
    fail_call(id, std::current_exception());
    return;
  }
  if (fault_tolerant()) {  // kept until the checkpoint of the thread it goes to covers it
    std::lock_guard lock(recovery_mu_);
    inputs_.send(*e, 0, to->uid(), Stamp::kFinal, 0, ++caller_clock_);
  }
  send(backend_.local_node(), *to, e);
}

void Runtime::complete_call(CallId id, Payload&& result) {
  std::unique_ptr<detail::CallBase> call;
  {
    std::lock_guard lock(calls_mu_);
    auto it = calls_.find(id);
    if (it == calls_.end()) return;  // it failed meanwhile
    call = std::move(it->second);
    calls_.erase(it);
  }
  call->complete(std::move(result));
}

void Runtime::fail_call(CallId id, std::exception_ptr error) {
  if (!coordinates()) return link_->call_failed(id, std::move(error));
  std::unique_ptr<detail::CallBase> call;
  {
    std::lock_guard lock(calls_mu_);
    auto it = calls_.find(id);
    if (it == calls_.end()) return;  // already failed: the first error is the one reported
    call = std::move(it->second);
    calls_.erase(it);
  }
  call->fail(error);
  // The other processes first: a thread here that the abort lets retire may be gone soon, and node 0
  // says so after the abort on the same connections, so they drop the call's messages naming it.
  if (link_) link_->call_failed(id, error);
  abort_call(id);
}

// Every thread drops what it holds of the call; its other calls go on. Threads created later start
// with the call in their aborted set (same lock as adopt()).
void Runtime::abort_call(CallId id) {
  detail::EpochGuard guard;
  std::vector<Thread*> here;
  {
    std::lock_guard lock(mu_);
    failed_.insert(id);
    failures_.fetch_add(1, std::memory_order_release);
    for (const auto& [uid, t] : threads_)
      if (hosts(*t)) here.push_back(t.get());
  }
  for (Thread* t : here) {
    auto* e = new Envelope;
    e->kind = Message::Abort;
    e->call = id;
    enqueue(*t, e);
  }
}

std::unordered_set<CallId> Runtime::failed_calls() const {
  std::lock_guard lock(mu_);
  return failed_;
}

void Runtime::fail_calls(std::exception_ptr error) {
  std::vector<CallId> ids;
  {
    std::lock_guard lock(calls_mu_);
    for (const auto& [id, call] : calls_) ids.push_back(id);
  }
  for (CallId id : ids) fail_call(id, error);
}

std::size_t Runtime::calls_in_progress() const {
  std::lock_guard lock(calls_mu_);
  return calls_.size();
}

Thread& Runtime::route(const GraphCore& graph, std::uint32_t vertex, const Envelope& e) const {
  const VertexSpec& spec = graph[vertex];
  const auto table = spec.threads->table();
  if (table.empty())
    throw RouteError("collection '" + spec.threads->name() + "' of operation '" + spec.name + "' has no threads");
  const RouteInfo info{table.size(), e.seq, e.frames.empty() ? FrameId{0} : e.frames.top().id};
  const std::size_t index = spec.route(e.payload, info);
  if (index >= table.size())
    throw RouteError("the route of operation '" + spec.name + "' chose thread " + std::to_string(index) +
                     ", but collection '" + spec.threads->name() + "' has " + std::to_string(table.size()) +
                     " threads");
  return *table[index];
}

void Runtime::finish_call(NodeId from, Envelope* e) {
  if (simulation_ && simulation_->send_result(from, e)) return;
  deliver_result(e);
}

void Runtime::send(NodeId from, Thread& to, Envelope* e) {
  if (to.node() == from && !simulation_)
    enqueue(to, e);
  else
    backend_.send(from, to, e);
}

void Runtime::enqueue(Thread& to, Envelope* e) {
  if (!to.mailbox_.push(e)) return;  // it was scheduled already
  // Control messages are urgent: handled in an instant, they unblock the frames of other threads (a
  // merge waiting for its grant behind a node's long steps would stall the critical path).
  const bool urgent = e->kind != Message::Data || (e->graph && e->vertex != GraphCore::kSink &&
                                                   (*e->graph)[e->vertex].priority == Priority::Urgent);
  backend_.schedule(to, urgent ? Priority::Urgent : Priority::Normal);
}

void Runtime::control(Thread& from, std::uint64_t to_uid, Message kind, CallId call, FrameId frame, std::uint64_t peer,
                      std::int64_t count, bool credit) {
  if (to_uid == from.uid()) return from.on_control(kind, frame, peer, count, credit);
  Thread* to = thread(to_uid);
  if (!to) return;
  auto* e = new Envelope;
  e->kind = kind;
  e->call = call;
  e->frame = frame;
  e->peer = peer;
  e->count = count;
  e->credit = credit;
  send(from.node(), *to, e);
}

void Runtime::redirect(NodeId at, Envelope* e) {
  if (e->kind != Message::Data || e->vertex == GraphCore::kSink) {
    delete e;  // frame control for a gone thread: its call failed
    return;
  }
  Thread* to = nullptr;
  try {
    to = &route(*e->graph, e->vertex, *e);
  } catch (...) {
    fail_call(e->call, std::current_exception());
    delete e;
    return;
  }
  if (fault_tolerant()) {  // a new link: the caller keeps it, like an input (its sender's covers nothing)
    std::lock_guard lock(recovery_mu_);
    caller_clock_ = std::max(caller_clock_, e->stamp.time);  // it stays where its sender put it
    inputs_.send(*e, 0, to->uid(), Stamp::kFinal, 0, caller_clock_);
  }
  send(at, *to, e);
}

}  // namespace dps
