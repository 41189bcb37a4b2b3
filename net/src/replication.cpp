// Replication: envelopes across processes, node 0's structure in every process, threads that
// retire or move between processes, and calls that end away from node 0.
#include "replication.hpp"

#include "checkpoint_image.hpp"

#include "dps/errors.hpp"
#include "dps/graph.hpp"
#include "dps/net/codec.hpp"
#include "dps/kernel/thread.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace dps::net {

namespace {

// A directive naming a type this executable does not have: the processes run different programs.
[[noreturn]] void unknown(const char* what, const std::string& key) {
  throw std::runtime_error(std::string("unknown ") + what + " '" + detail::demangle(key.c_str()) +
                           "': every node must run the same executable");
}

std::exception_ptr rebuild(const CallFailure& f) {
  if (f.operation) return std::make_exception_ptr(OperationError(f.op, f.thread, f.node, f.reason));
  if (f.lost) return std::make_exception_ptr(NodeFailure(f.node, f.reason));
  return std::make_exception_ptr(Error(f.message));
}

}  // namespace

Replication::Replication(NodeProcess& process, const TcpOptions& options, Transport& transport, Membership& membership,
                         RemoteTraces& traces, Backups& backups)
    : process_(process),
      options_(options),
      transport_(transport),
      membership_(membership),
      traces_(traces),
      backups_(backups) {}

// ---------------------------------------------------------------------------------------------
// Envelopes

void Replication::send(Thread& to, Envelope* e) {
  const NodeId me = process_.me;
  Runtime* kernel = process_.kernel;
  NodeId node = to.node();
  if (node == me) return kernel->enqueue(to, e);  // it arrived here meanwhile
  Outgoing f;
  f.lane = lane_of(e->kind);
  f.envelope.reset(e);
  f.head.reserve(128);
  WireWriter out(f.head);
  try {
    encode(*e, to, out);
    f.segments = out.segments();
    const std::size_t size = out.size();
    if (size > options_.max_frame)
      throw std::length_error("an object of " + std::to_string(size) + " bytes exceeds the frame limit of " +
                              std::to_string(options_.max_frame));
    f.header.length = static_cast<std::uint32_t>(size);
    f.header.sender = me;
    // Traced by the node that receives it (on_envelope). Refused: `node` left after `to` moved
    // away from it, and the network thread, which sealed the connection, learnt where `to` went first.
    while (!transport_.offer(node, f)) {
      if (to.node() == node && kernel->fault_tolerant() && !transport_.peer(node))
        return;  // it failed: its sender sends it again where `to` is rebuilt (Runtime::resend)
      if (to.node() == node) throw NodeFailure(node, transport_.peer(node) ? "it left" : "no connection to it");
      node = to.node();
      if (node == me) return kernel->enqueue(to, f.envelope.release());
    }
  } catch (...) {  // data or control, its call cannot go on without it
    if (e->call) kernel->fail_call(e->call, std::current_exception());
  }
}

void Replication::on_envelope(const FrameHeader& header, double received, std::span<const std::byte> body,
                              WireBuffer* buffer) {
  Runtime* rt = process_.attached();
  if (!rt) return;
  // A transfer from its first byte sent to its last byte read, traced before the message is
  // delivered, which can end the run and its tracing (a run's last transfer went missing when its
  // sender traced it after handing it over). The two clocks agree within half the aligning ping's
  // round trip: a start after the end is that error, and taken as the end.
  if (TraceSink* sink = rt->tracer()) {
    const double start = std::isfinite(header.sent) && header.sent <= received ? header.sent : received;
    sink->transfer({header.sender, process_.me, header.length, start, received});
  }
  deliver(*rt, body, buffer);
}

void Replication::deliver(Runtime& rt, std::span<const std::byte> body, WireBuffer* buffer) {
  try {
    detail::EpochGuard guard;
    const Decoded d = decode(rt, body, buffer);
    if (d.to)
      rt.enqueue(*d.to, d.envelope);
    else
      rt.redirect(process_.me, d.envelope);
  } catch (const NotYetKnown& k) {
    parked_[k.key].emplace_back(body.begin(), body.end());
  }
}

void Replication::unpark(Runtime& rt, std::uint64_t key) {
  auto it = parked_.find(key);
  if (it == parked_.end()) return;
  std::vector<std::vector<std::byte>> frames = std::move(it->second);
  parked_.erase(it);
  for (const auto& body : frames) deliver(rt, body);
}

// ---------------------------------------------------------------------------------------------
// The structure, from node 0

void Replication::collection_created(const ThreadsCore& c) {
  membership_.broadcast(CollectionCreated{c.id(), c.name(), c.state_type().key, c.backups()});
}

// A node lost meanwhile is skipped, unless it is the one the thread is added on.
void Replication::thread_added(const Thread& t, std::string image) {
  for (NodeId n : membership_.others()) {
    ThreadAdded d{t.collection().id(), t.uid(), t.node(), false, {}};
    if (n != t.node()) {
      membership_.send_unless_lost(n, d);
      continue;
    }
    if (!image.empty()) {
      d.has_image = true;
      d.image = image;
    }
    transport_.send_directive(n, d);
  }
}

void Replication::thread_dropped(const Thread& t) { membership_.broadcast(ThreadDropped{t.uid()}); }

void Replication::thread_gone(std::uint64_t uid) {
  // From a strand, maybe while the application ends: nothing here may throw.
  if (process_.me != 0) return transport_.tell(0, ThreadGone{uid});
  membership_.tell_all(ThreadGone{uid});
  process_.kernel->forget(uid);
}

void Replication::graph_created(const GraphCore& g) { membership_.broadcast(graph_image(g)); }

GraphCreated graph_image(const GraphCore& g) {
  GraphCreated d{g.id, g.name, {}};
  for (const auto& v : g.vertices) {
    if (v->route.kind == detail::RouteFn::Kind::Custom && !v->route.type)
      throw GraphError("the route of operation '" + v->name +
                       "' captures state, so the other node processes cannot rebuild it: use a lambda without "
                       "captures, or a route type with a cereal serialize()");
    d.vertices.push_back({v->type->key, v->name, v->threads->id(), v->window, static_cast<std::uint8_t>(v->priority),
                          static_cast<std::uint8_t>(v->route.kind), v->route.fixed,
                          v->route.type ? v->route.type->key : std::string(), v->route.image});
  }
  return d;
}

// Threads by age, so every collection's table comes out in node 0's order.
void Replication::send_structure(NodeId to) {
  Runtime& runtime = *process_.runtime;
  for (const ThreadsCore* c : runtime.collections())
    transport_.send_directive(to, CollectionCreated{c->id(), c->name(), c->state_type().key, c->backups()});
  detail::EpochGuard guard;
  const std::vector<Thread*> threads = runtime.threads();
  for (const Thread* t : threads)
    transport_.send_directive(to, ThreadAdded{t->collection().id(), t->uid(), t->node(), false, {}});
  for (const Thread* t : threads)
    if (t->collection().index_of(*t) < 0) transport_.send_directive(to, ThreadDropped{t->uid()});
  for (const GraphCore* g : runtime.graphs()) transport_.send_directive(to, graph_image(*g));
  if (runtime.tracer()) traces_.announce(true, {to});
}

void Replication::apply(CollectionCreated& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  const detail::StateType* type = detail::Registry<detail::StateType>::find(d.state_type);
  if (!type) unknown("thread state type", d.state_type);
  ThreadsCore& c = rt.make_collection(
      d.name, [](std::size_t) -> std::unique_ptr<detail::StateBox> { return nullptr; }, *type, true,
      d.backups ? dps::Backups::Kept : dps::Backups::None);
  if (c.id() != d.id) throw std::runtime_error("collection ids diverged");
}

void Replication::apply(ThreadAdded& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  ThreadsCore* c = rt.collection(d.collection);
  if (!c) throw WireError("thread of unknown collection " + std::to_string(d.collection));
  std::unique_ptr<detail::StateBox> state;
  if (d.node == process_.me) state = detail::make_state(c->state_type(), d.has_image ? &d.image : nullptr);
  c->insert(d.uid, d.node, std::move(state));
  unpark(rt, d.uid);
}

void Replication::apply(ThreadDropped& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  if (Thread* t = rt.thread(d.uid)) t->collection().drop(*t);
}

void Replication::apply(ThreadGone& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  if (process_.me != 0 && in.sender != 0) throw WireError("thread gone, not from node 0");
  if (process_.me == 0) membership_.tell_all(d);
  rt.forget(d.uid);
}

void Replication::apply(GraphCreated& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  VertexList vertices;
  for (const VertexImage& v : d.vertices) {
    auto spec = std::make_shared<VertexSpec>();
    spec->type = detail::Registry<detail::OpType>::find(v.op_type);
    if (!spec->type) unknown("operation", v.op_type);
    spec->name = v.name;
    spec->threads = rt.collection(v.collection);
    if (!spec->threads) throw WireError("vertex on unknown collection " + std::to_string(v.collection));
    spec->window = v.window;
    if (v.priority > static_cast<std::uint8_t>(Priority::Urgent)) throw WireError("unknown priority");
    spec->priority = static_cast<Priority>(v.priority);
    if (v.route_kind > static_cast<std::uint8_t>(detail::RouteFn::Kind::Custom)) throw WireError("unknown route kind");
    spec->route.kind = static_cast<detail::RouteFn::Kind>(v.route_kind);
    spec->route.fixed = static_cast<std::size_t>(v.route_fixed);
    if (spec->route.kind == detail::RouteFn::Kind::Custom) {
      const detail::RouteType* route = detail::Registry<detail::RouteType>::find(v.route_type);
      if (!route) unknown("route", v.route_type);
      WireReader image(std::as_bytes(std::span(v.route_image.data(), v.route_image.size())));
      route->load(spec->route, image);
    }
    vertices.push_back(std::move(spec));
  }
  auto graph = rt.adopt(detail::build_graph(d.name, vertices));
  if (graph->id != d.id) throw std::runtime_error("graph ids diverged");
  unpark(rt, d.id | kGraphKey);
}

// ---------------------------------------------------------------------------------------------
// Threads that retire or move

void Replication::retire(Thread& t, HandBack hand_back) {
  ask_for_state(t, {.hand_back = std::move(hand_back), .type = &t.collection().state_type(), .answers = t.node()},
                true);
}

void Replication::snapshot(Thread& t, ImageBack image_back) {
  ask_for_state(t, {.image_back = std::move(image_back), .answers = t.node()}, false);
}

// Its host answers with StateReturned; a host that cannot be asked fails the request at once.
void Replication::ask_for_state(Thread& t, Retirement r, bool retire) {
  const std::uint64_t request = next_request_.fetch_add(1) + 1;
  {
    std::lock_guard lock(process_.mu);
    retirements_[request] = std::move(r);
  }
  try {
    transport_.send_directive(t.node(), StateRequest{t.uid(), request, retire});
  } catch (...) {
    take(retirements_, request).fail(std::current_exception());
  }
}

void Replication::migrate(Thread& t, NodeId to, Done done) {
  const std::uint64_t request = next_request_.fetch_add(1) + 1;
  {
    std::lock_guard lock(process_.mu);
    migrations_[request] = {.done = std::move(done), .answers = t.node()};
  }
  try {
    transport_.send_directive(t.node(), MigrateRequest{t.uid(), request, to});
  } catch (...) {
    if (Done failed = take(migrations_, request).done) failed(std::current_exception());
  }
}

// The image goes first, then whatever reaches the thread here follows it over the same connection,
// so it arrives after the image.
bool Replication::send_thread(Thread& t, NodeId to, std::string state, Done arrived) {
  const std::uint64_t request = next_request_.fetch_add(1) + 1;
  ThreadImage image{t.uid(), request, {}, t.keeps_records()};
  for (const Thread::Forwarder& f : t.forwarders()) image.forwarders.push_back({f.frame, f.call, f.owner});
  {
    std::lock_guard lock(process_.mu);
    migrations_[request] = {.done = std::move(arrived), .answers = to, .departed = false};
  }
  std::shared_ptr<detail::MovingRecords> records;
  if (image.records) records = std::make_shared<detail::MovingRecords>(t.records_to_move(std::move(state)));
  std::unique_lock departing(departing_);  // `to` reported lost after ThreadMoved, if it left
  try {
    if (records) {
      std::vector<std::byte> head;
      WireWriter block(head);  // the state is sent from the records, which the frame keeps until written
      write_moving_records(block, *records);
      transport_.send_directive(to, image, block, head, records);
    } else {
      transport_.send_directive(to, image, std::move(state));
    }
  } catch (...) {
    // It stays here. Unless the loss of `to` already said so, say why.
    if (records) t.records_sent(*records);
    if (Done done = take(migrations_, request).done) done(std::current_exception());
    return false;
  }
  t.depart(to);
  for (NodeId n : membership_.others(to)) transport_.tell(n, ThreadMoved{t.uid(), to});
  departing.unlock();
  if (records) t.records_sent(*records);  // after ThreadMoved: node 0 then tells it Stored where it went
  let_go(request);  // an answer that came already completes now: node() says `to`
  return true;
}

void Replication::fail_requests_to(NodeId node, const std::string& reason) {
  { std::lock_guard departed(departing_); }  // a thread leaving for it now has said so (Runtime::unsettled)
  const auto gone = std::make_exception_ptr(NodeFailure(node, reason));
  for (Migration& m : take_answerable_by(migrations_, node)) m.done(gone);
  for (Retirement& r : take_answerable_by(retirements_, node)) r.fail(gone);
}

ClusterLink::Done Replication::answer_migration(std::uint64_t request, const std::string& error) {
  std::lock_guard lock(process_.mu);
  auto it = migrations_.find(request);
  if (it == migrations_.end()) return {};
  if (!it->second.departed) {
    it->second.answered = true;
    it->second.error = error;
    return {};
  }
  Done done = std::move(it->second.done);
  migrations_.erase(it);
  return done;
}

void Replication::let_go(std::uint64_t request) {
  Done done;
  std::string error;
  {
    std::lock_guard lock(process_.mu);
    auto it = migrations_.find(request);
    if (it == migrations_.end()) return;
    it->second.departed = true;
    if (!it->second.answered) return;
    done = std::move(it->second.done);
    error = std::move(it->second.error);
    migrations_.erase(it);
  }
  done(error.empty() ? nullptr : std::make_exception_ptr(Error(error)));
}

template <class Request>
Request Replication::take(std::unordered_map<std::uint64_t, Request>& requests, std::uint64_t request) {
  std::lock_guard lock(process_.mu);
  auto it = requests.find(request);
  if (it == requests.end()) return {};
  Request r = std::move(it->second);
  requests.erase(it);
  return r;
}

template <class Request>
std::vector<Request> Replication::take_answerable_by(std::unordered_map<std::uint64_t, Request>& requests,
                                                     NodeId node) {
  std::vector<Request> out;
  std::lock_guard lock(process_.mu);
  std::erase_if(requests, [&](auto& r) {
    if (r.second.answers != node) return false;
    out.push_back(std::move(r.second));
    return true;
  });
  return out;
}

void Replication::apply(StateRequest& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  const NodeId sender = in.sender;
  Thread* t = rt.thread(d.uid);
  if (!t && rt.gone(d.uid))
    return transport_.tell(sender, StateReturned{d.request, {}, "the thread was removed already"});
  if (!t) throw WireError("state request for an unknown thread");
  if (!d.retire)
    return rt.snapshot(*t, [this, sender, request = d.request](std::string image, std::exception_ptr error) {
      transport_.tell(sender, StateReturned{request, std::move(image), error ? describe(error) : std::string()});
    });
  rt.retire(*t, [this, sender, request = d.request](detail::StateBox* box, std::exception_ptr error) {
    StateReturned reply{request, {}, {}};
    try {
      if (!box) std::rethrow_exception(error);
      reply.image = box->save();
    } catch (...) {
      reply.error = describe(std::current_exception());
    }
    transport_.tell(sender, reply);
  });
}

void Replication::apply(StateReturned& d, Incoming& in, Runtime&) {
  in.nothing_follows();
  Retirement r = take(retirements_, d.request);
  if (r.image_back)
    return r.image_back(std::move(d.image), d.error.empty() ? nullptr : std::make_exception_ptr(Error(d.error)));
  if (!r.hand_back) return;  // its node's loss answered it already
  if (!d.error.empty()) return r.hand_back(nullptr, std::make_exception_ptr(Error(d.error)));
  if (!r.type->make_default) return r.hand_back(nullptr, nullptr);  // the requester cannot hold it (and knew so)
  auto box = detail::make_state(*r.type, d.image.empty() ? nullptr : &d.image);
  r.hand_back(box.get(), nullptr);
}

void Replication::apply(MigrateRequest& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  const NodeId sender = in.sender;
  Thread* t = rt.thread(d.uid);
  if (!t && rt.gone(d.uid)) return transport_.tell(sender, MigrateDone{d.request, "the thread was removed"});
  if (!t) throw WireError("migration of unknown thread");
  rt.migrate(*t, d.to, [this, sender, request = d.request](std::exception_ptr error) {
    transport_.tell(sender, MigrateDone{request, error ? describe(error) : std::string()});
  });
}

void Replication::apply(MigrateDone& d, Incoming& in, Runtime&) {
  in.nothing_follows();
  // None left: its node's loss answered it already.
  if (Done done = answer_migration(d.request, d.error))
    done(d.error.empty() ? nullptr : std::make_exception_ptr(Error(d.error)));
}

void Replication::apply(ThreadImage& d, Incoming& in, Runtime& rt) {
  Thread* t = rt.thread(d.uid);
  if (!t) throw WireError("image of unknown thread");
  for (const Forward& f : d.forwarders) {
    if (!rt.thread(f.owner) && !rt.gone(f.owner)) throw WireError("forwarder to unknown thread");
    t->forward_frame({f.frame, f.call, f.owner});
  }
  if (d.records != t->keeps_records())
    throw WireError(d.records ? "records of a thread that keeps none" : "a thread without its records");
  // It runs here from now on. Records are decoded from the frame where it lies, not a copy of it.
  if (d.records) {
    const std::string_view image = in.rest.get_string_view();
    in.nothing_follows();
    t->relocate(process_.me, load_moving_records(rt, image));
  } else {
    const std::string image = in.rest.get_string();
    in.nothing_follows();
    t->relocate(process_.me, image);
  }
  transport_.tell(in.sender, MigrateDone{d.request, {}});
}

void Replication::apply(ThreadMoved& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  Thread* t = rt.thread(d.uid);
  if (!t) return;
  t->depart(d.node);
  // Node 0 declared the node it moved to failed before it heard of the move: the thread was lost
  // with it, unseen by that recovery. A recovery of its own rebuilds it (or fails the calls, saying why).
  const std::vector<NodeId> live = membership_.nodes();
  if (process_.me == 0 && rt.fault_tolerant() && std::find(live.begin(), live.end(), d.node) == live.end())
    rt.moved_to_failed(d.node, "it failed as " + t->name() + " moved to it");
}

// ---------------------------------------------------------------------------------------------
// Calls that end away from node 0

void Replication::call_completed(Envelope* result) {
  const std::unique_ptr<Envelope> e(result);
  const Stamp& s = e->stamp;
  try {
    transport_.send_directive(
        0, CallResult{e->graph->id, e->call, {s.from, s.link, s.epoch, s.committed, s.base, s.time}}, &e->payload);
  } catch (const NodeFailure&) {       // node 0 is gone: this process is leaving
  } catch (const std::exception&) {    // the result cannot travel: the call fails with why
    call_failed(e->call, std::current_exception());
  }
}

void Replication::call_failed(CallId call, std::exception_ptr error) {
  if (process_.me == 0) return membership_.tell_all(CallAbort{call});  // a node that cannot hear it is gone
  CallFailure f{call, false, {}, {}, {}, describe(error), 0};
  try {
    std::rethrow_exception(error);
  } catch (const OperationError& e) {
    f.operation = true;
    f.op = e.operation;
    f.thread = e.thread;
    f.reason = e.reason;
    f.node = e.node;
  } catch (const NodeFailure& e) {
    f.lost = true;
    f.node = e.node;
    f.reason = e.reason;
  } catch (...) {
  }
  transport_.tell(0, f);
}

void Replication::apply(CallResult& d, Incoming& in, Runtime& rt) {
  const GraphCore* graph = rt.graph(d.graph);
  if (!graph || graph->vertices.empty()) throw WireError("result of unknown graph");
  auto e = std::make_unique<Envelope>();
  e->graph = graph;
  e->vertex = GraphCore::kSink;
  e->call = d.call;
  e->stamp = {d.stamp.from, d.stamp.link, d.stamp.epoch, d.stamp.committed, d.stamp.base, d.stamp.time};
  e->payload = graph->vertices.back()->type->load_output(in.rest);
  in.nothing_follows();
  rt.deliver_result(e.release());
}

void Replication::apply(CallFailure& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  rt.fail_call(d.call, rebuild(d));
}

void Replication::apply(CallAbort& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  rt.abort_call(d.call);
}

// ---------------------------------------------------------------------------------------------
// Traces (remote_trace.hpp)

// Returns once the network thread no longer delivers to the previous sink (it may be destroyed)
// and, when tracing starts, once every node traces: a message between two other nodes is traced by
// its receiver, which must not hear of tracing after the message. A node answers the flush after it
// applied Tracing, which came before on the same connection.
void Replication::tracing(bool on) {
  traces_.announce(on, membership_.others());
  if (on) collect_trace();
  transport_.on_network([] {});
}

void Replication::collect_trace() { traces_.collect(membership_.others()); }

}  // namespace dps::net
