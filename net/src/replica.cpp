// TcpBackend, replication: node 0's structure mirrored in every process, threads that retire or
// move between processes, and calls whose ends happen away from node 0 (the ClusterLink half).
#include "tcp_backend_impl.hpp"


#include "dps/errors.hpp"
#include "dps/graph.hpp"
#include "dps/net/codec.hpp"
#include "dps/kernel/thread.hpp"

#include <cmath>
#include <stdexcept>
#include <type_traits>

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

Runtime* TcpBackend::Impl::attached() {
  std::unique_lock lock(mu);
  changed.wait(lock, [&] { return runtime != nullptr || stopped; });
  return runtime;
}

void TcpBackend::Impl::on_envelope(const FrameHeader& header, double received, std::span<const std::byte> body,
                                   WireBuffer* buffer) {
  Runtime* rt = attached();
  if (!rt) return;
  // A transfer from its first byte sent to its last byte read, traced before the message is
  // delivered, which can end the run and its tracing (a run's last transfer went missing when its
  // sender traced it after handing it over). The two clocks agree within half the aligning ping's
  // round trip: a start after the end is that error, and taken as the end.
  if (TraceSink* sink = rt->tracer()) {
    const double start = std::isfinite(header.sent) && header.sent <= received ? header.sent : received;
    sink->transfer({header.sender, me, header.length, start, received});
  }
  deliver(*rt, body, buffer);
}

void TcpBackend::Impl::deliver(Runtime& rt, std::span<const std::byte> body, WireBuffer* buffer) {
  try {
    detail::EpochGuard guard;
    const Decoded d = decode(rt, body, buffer);
    if (d.to)
      rt.enqueue(*d.to, d.envelope);
    else
      rt.redirect(me, d.envelope);
  } catch (const NotYetKnown& k) {
    parked[k.key].emplace_back(body.begin(), body.end());
  }
}

void TcpBackend::Impl::unpark(Runtime& rt, std::uint64_t key) {
  auto it = parked.find(key);
  if (it == parked.end()) return;
  std::vector<std::vector<std::byte>> frames = std::move(it->second);
  parked.erase(it);
  for (const auto& body : frames) deliver(rt, body);
}

void TcpBackend::Impl::on_directive(Connection& from, std::span<const std::byte> body) {
  detail::EpochGuard guard;  // the threads directives look up stay while they are used
  WireReader in(body, from.frame_buffer());
  Directive d;
  in(d);
  apply(from, d, in);
}

void TcpBackend::Impl::apply(Connection& from, Directive& directive, WireReader& rest) {
  const NodeId sender = from.peer;
  auto done_with = [&] {
    if (!rest.done()) throw WireError(std::to_string(rest.remaining()) + " bytes after the directive");
  };
  std::visit(
      [&](auto& d) {
        using D = std::decay_t<decltype(d)>;
        // --- membership and time ---
        if constexpr (std::is_same_v<D, Join>) {
          done_with();
          if (me != 0 || d.self.node != sender) throw WireError("unexpected join");
          {
            std::lock_guard lock(mu);
            joined[sender] = d;
          }
          changed.notify_all();
        } else if constexpr (std::is_same_v<D, Members>) {
          done_with();
          {
            std::lock_guard lock(mu);
            members = d;
            for (const Endpoint& e : d.nodes) live.insert(e.node);
          }
          changed.notify_all();
        } else if constexpr (std::is_same_v<D, Leaving>) {
          done_with();
          if (sender != 0 || d.node != me) throw WireError("unexpected leaving");
          remote_trace.flush();
          std::set<NodeId> told;
          for (NodeId n : others()) {
            Outgoing departing = directive_frame(Departing{});
            if (offer(n, departing)) told.insert(n);
          }
          {
            std::lock_guard lock(mu);
            unsealed = std::move(told);
            ending = unsealed->empty();
          }
          changed.notify_all();
        } else if constexpr (std::is_same_v<D, Departing>) {
          done_with();
          {
            std::lock_guard lock(mu);
            live.erase(sender);
            departed.insert(sender);
          }
          changed.notify_all();
          from.seal(directive_frame(Sealed{}));
        } else if constexpr (std::is_same_v<D, Sealed>) {
          done_with();
          sealed_by(sender);
        } else if constexpr (std::is_same_v<D, Ready>) {
          done_with();
          {
            std::lock_guard lock(mu);
            ready.insert(sender);
          }
          changed.notify_all();
        } else if constexpr (std::is_same_v<D, ClockPing>) {
          done_with();
          tell(sender, ClockPong{d.sent, now()});
        } else if constexpr (std::is_same_v<D, ClockPong>) {
          done_with();
          {
            std::lock_guard lock(mu);
            clock_replies.push_back(d.here);
          }
          changed.notify_all();
        } else if constexpr (std::is_same_v<D, ClockOffset>) {
          done_with();
          clock_offset.store(d.offset, std::memory_order_relaxed);
        } else if constexpr (std::is_same_v<D, TraceFlush>) {
          done_with();
          remote_trace.flush();
          tell(0, TraceFlushed{d.request});
        } else if constexpr (std::is_same_v<D, TraceFlushed>) {
          done_with();
          {
            std::lock_guard lock(mu);
            if (auto it = trace_flushes.find(d.request); it != trace_flushes.end()) it->second.insert(sender);
          }
          changed.notify_all();
        } else if constexpr (std::is_same_v<D, Shutdown>) {
          done_with();
          remote_trace.flush();  // before the connections close
          {
            std::lock_guard lock(mu);
            ending = true;
            orderly = true;
          }
          changed.notify_all();
        } else if constexpr (std::is_same_v<D, Goodbye>) {
          done_with();
          std::lock_guard lock(mu);
          departed.insert(sender);  // its connection closes next, on purpose
        } else if constexpr (std::is_same_v<D, PeerLost>) {
          done_with();
          if (me != 0) throw WireError("unexpected peer lost");
          const std::string reason = "node " + std::to_string(sender) + " lost its connection to it: " + d.reason;
          if (Runtime* rt = attached()) rt->fail_calls(std::make_exception_ptr(NodeFailure(d.node, reason)));
        } else {
          // --- the kernel's structure and work: needs the runtime ---
          Runtime* rt = attached();
          if (!rt) return;
          if constexpr (std::is_same_v<D, CollectionCreated>) {
            done_with();
            const detail::StateType* type = detail::Registry<detail::StateType>::find(d.state_type);
            if (!type) unknown("thread state type", d.state_type);
            ThreadsCore& c = rt->make_collection(
                d.name, [](std::size_t) -> std::unique_ptr<detail::StateBox> { return nullptr; }, *type, true);
            if (c.id() != d.id) throw std::runtime_error("collection ids diverged");
          } else if constexpr (std::is_same_v<D, ThreadAdded>) {
            done_with();
            ThreadsCore* c = rt->collection(d.collection);
            if (!c) throw WireError("thread of unknown collection " + std::to_string(d.collection));
            std::unique_ptr<detail::StateBox> state;
            if (d.node == me) state = detail::make_state(c->state_type(), d.has_image ? &d.image : nullptr);
            c->insert(d.uid, d.node, std::move(state));
            unpark(*rt, d.uid);
          } else if constexpr (std::is_same_v<D, ThreadDropped>) {
            done_with();
            if (Thread* t = rt->thread(d.uid)) t->collection().drop(*t);
          } else if constexpr (std::is_same_v<D, ThreadGone>) {
            done_with();
            if (me != 0 && sender != 0) throw WireError("thread gone, not from node 0");
            if (me == 0) tell_all(d);
            rt->forget(d.uid);
          } else if constexpr (std::is_same_v<D, GraphCreated>) {
            done_with();
            VertexList vertices;
            for (const VertexImage& v : d.vertices) {
              auto spec = std::make_shared<VertexSpec>();
              spec->type = detail::Registry<detail::OpType>::find(v.op_type);
              if (!spec->type) unknown("operation", v.op_type);
              spec->name = v.name;
              spec->threads = rt->collection(v.collection);
              if (!spec->threads) throw WireError("vertex on unknown collection " + std::to_string(v.collection));
              spec->window = v.window;
              if (v.priority > static_cast<std::uint8_t>(Priority::Urgent)) throw WireError("unknown priority");
              spec->priority = static_cast<Priority>(v.priority);
              if (v.route_kind > static_cast<std::uint8_t>(detail::RouteFn::Kind::Custom))
                throw WireError("unknown route kind");
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
            auto graph = rt->adopt(detail::build_graph(d.name, vertices));
            if (graph->id != d.id) throw std::runtime_error("graph ids diverged");
            unpark(*rt, d.id | kGraphKey);
          }
          // --- threads leaving or moving ---
          else if constexpr (std::is_same_v<D, RetireRequest>) {
            done_with();
            Thread* t = rt->thread(d.uid);
            if (!t && rt->gone(d.uid)) return tell(sender, StateReturned{d.request, {}, "the thread was removed already"});
            if (!t) throw WireError("retire of unknown thread");
            rt->retire(*t, [this, sender, request = d.request](detail::StateBox* box, std::exception_ptr error) {
              StateReturned reply{request, {}, {}};
              try {
                if (!box) std::rethrow_exception(error);
                reply.image = box->save();
              } catch (...) {
                reply.error = describe(std::current_exception());
              }
              tell(sender, reply);
            });
          } else if constexpr (std::is_same_v<D, StateReturned>) {
            done_with();
            Retirement r = take(retirements, d.request);
            if (!r.hand_back) return;  // its node's loss answered it already
            if (!d.error.empty()) return r.hand_back(nullptr, std::make_exception_ptr(Error(d.error)));
            if (!r.type->make_default) return r.hand_back(nullptr, nullptr);  // the requester cannot hold it (and knew so)
            auto box = detail::make_state(*r.type, d.image.empty() ? nullptr : &d.image);
            r.hand_back(box.get(), nullptr);
          } else if constexpr (std::is_same_v<D, MigrateRequest>) {
            done_with();
            Thread* t = rt->thread(d.uid);
            if (!t && rt->gone(d.uid)) return tell(sender, MigrateDone{d.request, "the thread was removed"});
            if (!t) throw WireError("migration of unknown thread");
            rt->migrate(*t, d.to, [this, sender, request = d.request](std::exception_ptr error) {
              tell(sender, MigrateDone{request, error ? describe(error) : std::string()});
            });
          } else if constexpr (std::is_same_v<D, MigrateDone>) {
            done_with();
            // None left: its node's loss answered it already.
            if (Done done = answer_migration(d.request, d.error)) done(d.error.empty() ? nullptr : std::make_exception_ptr(Error(d.error)));
          } else if constexpr (std::is_same_v<D, ThreadImage>) {
            Thread* t = rt->thread(d.uid);
            if (!t) throw WireError("image of unknown thread");
            for (const Forward& f : d.forwarders) {
              if (!rt->thread(f.owner) && !rt->gone(f.owner)) throw WireError("forwarder to unknown thread");
              t->forward_frame({f.frame, f.call, f.owner});
            }
            std::string image;
            rest(image);
            done_with();
            t->relocate(me, image);  // it runs here from now on
            tell(sender, MigrateDone{d.request, {}});
          } else if constexpr (std::is_same_v<D, ThreadMoved>) {
            done_with();
            if (Thread* t = rt->thread(d.uid)) t->depart(d.node);
          }
          // --- calls ---
          else if constexpr (std::is_same_v<D, CallResult>) {
            const GraphCore* graph = rt->graph(d.graph);
            if (!graph || graph->vertices.empty()) throw WireError("result of unknown graph");
            Payload result = graph->vertices.back()->type->load_output(rest);
            done_with();
            rt->complete_call(*graph, d.call, std::move(result));
          } else if constexpr (std::is_same_v<D, CallFailure>) {
            done_with();
            rt->fail_call(d.call, rebuild(d));
          } else if constexpr (std::is_same_v<D, CallAbort>) {
            done_with();
            rt->abort_call(d.call);
          }
          // --- traces ---
          else if constexpr (std::is_same_v<D, Tracing>) {
            done_with();
            if (me == 0) throw WireError("node 0 was told to trace");
            rt->trace_to(d.on ? &remote_trace : nullptr);
            if (!d.on) remote_trace.flush();
          } else if constexpr (std::is_same_v<D, TraceBatch>) {
            done_with();
            if (me != 0) throw WireError("trace events for a node other than 0");
            TraceSink* sink = rt->tracer();
            if (!sink) return;  // tracing stopped meanwhile
            for (const TraceStep& e : d.steps)
              sink->step({e.node, e.thread, e.collection, e.operation, e.call, e.start, e.end});
            for (const TraceTransfer& e : d.transfers) sink->transfer({e.from, e.to, e.bytes, e.start, e.end});
            for (const TraceChange& e : d.changes) {
              if (e.kind > static_cast<std::uint8_t>(Lifecycle::NodeRemoved)) throw WireError("unknown lifecycle event");
              sink->lifecycle({static_cast<Lifecycle>(e.kind), e.thread, e.collection, e.node, e.to, e.time});
            }
            for (const TracePhase& e : d.phases) sink->phase({e.name, e.begin, e.time});
          }
        }
      },
      directive);
}

// A process that joins late gets the structure as the directives that built it, in their order:
// threads by age, so every collection's table comes out in node 0's order.
void TcpBackend::Impl::send_structure(NodeId to) {
  for (const ThreadsCore* c : runtime->collections())
    send_directive(to, CollectionCreated{c->id(), c->name(), c->state_type().key});
  detail::EpochGuard guard;
  const std::vector<Thread*> threads = runtime->threads();
  for (const Thread* t : threads) send_directive(to, ThreadAdded{t->collection().id(), t->uid(), t->node(), false, {}});
  for (const Thread* t : threads)
    if (t->collection().index_of(*t) < 0) send_directive(to, ThreadDropped{t->uid()});
  for (const GraphCore* g : runtime->graphs()) send_directive(to, graph_image(*g));
  if (runtime->tracer()) send_directive(to, Tracing{true});
}

// ---------------------------------------------------------------------------------------------
// Requests under way

TcpBackend::Done TcpBackend::Impl::answer_migration(std::uint64_t request, const std::string& error) {
  std::lock_guard lock(mu);
  auto it = migrations.find(request);
  if (it == migrations.end()) return {};
  if (!it->second.departed) {
    it->second.answered = true;
    it->second.error = error;
    return {};
  }
  Done done = std::move(it->second.done);
  migrations.erase(it);
  return done;
}

void TcpBackend::Impl::let_go(std::uint64_t request) {
  Done done;
  std::string error;
  {
    std::lock_guard lock(mu);
    auto it = migrations.find(request);
    if (it == migrations.end()) return;
    it->second.departed = true;
    if (!it->second.answered) return;
    done = std::move(it->second.done);
    error = std::move(it->second.error);
    migrations.erase(it);
  }
  done(error.empty() ? nullptr : std::make_exception_ptr(Error(error)));
}

// ---------------------------------------------------------------------------------------------
// ClusterLink

void TcpBackend::collection_created(const ThreadsCore& c) {
  impl_->broadcast(CollectionCreated{c.id(), c.name(), c.state_type().key});
}

void TcpBackend::thread_added(const Thread& t, std::string image) {
  for (NodeId n : impl_->others()) {
    ThreadAdded d{t.collection().id(), t.uid(), t.node(), false, {}};
    if (n == t.node() && !image.empty()) {
      d.has_image = true;
      d.image = image;
    }
    impl_->send_directive(n, d);
  }
}

void TcpBackend::thread_dropped(const Thread& t) { impl_->broadcast(ThreadDropped{t.uid()}); }

void TcpBackend::thread_gone(std::uint64_t uid) {
  // From a strand, maybe while the application ends: nothing here may throw.
  if (impl_->me != 0) return impl_->tell(0, ThreadGone{uid});
  impl_->tell_all(ThreadGone{uid});
  impl_->kernel->forget(uid);
}

void TcpBackend::graph_created(const GraphCore& g) { impl_->broadcast(graph_image(g)); }

GraphCreated graph_image(const GraphCore& g) {
  GraphCreated d{g.id, g.name, {}};
  for (const auto& v : g.vertices) {
    if (v->route.kind == detail::RouteFn::Kind::Custom && !v->route.type)
      throw GraphError("the route of operation '" + v->name +
                       "' captures state, so the other node processes cannot rebuild it: use a lambda without "
                       "captures, or a route type with a cereal serialize()");
    d.vertices.push_back({v->type->key, v->name, v->threads->id(), v->window, static_cast<std::uint8_t>(v->priority),
                          static_cast<std::uint8_t>(v->route.kind),
                          v->route.fixed, v->route.type ? v->route.type->key : std::string(), v->route.image});
  }
  return d;
}

void TcpBackend::retire(Thread& t, HandBack hand_back) {
  const std::uint64_t request = impl_->next_request.fetch_add(1) + 1;
  {
    std::lock_guard lock(impl_->mu);
    impl_->retirements[request] = {std::move(hand_back), &t.collection().state_type(), t.node()};
  }
  try {
    impl_->send_directive(t.node(), RetireRequest{t.uid(), request});
  } catch (...) {
    if (Impl::Retirement r = impl_->take(impl_->retirements, request); r.hand_back) r.hand_back(nullptr, std::current_exception());
  }
}

void TcpBackend::migrate(Thread& t, NodeId to, Done done) {
  const std::uint64_t request = impl_->next_request.fetch_add(1) + 1;
  {
    std::lock_guard lock(impl_->mu);
    impl_->migrations[request] = {.done = std::move(done), .answers = t.node()};
  }
  try {
    impl_->send_directive(t.node(), MigrateRequest{t.uid(), request, to});
  } catch (...) {
    if (Done failed = impl_->take(impl_->migrations, request).done) failed(std::current_exception());
  }
}

// On the thread's host, from its strand: the image goes first, then whatever reaches the thread
// here follows it over the same connection, so it arrives after the image.
bool TcpBackend::migrate(Thread& t, NodeId to, std::string state, std::function<void(std::exception_ptr)> arrived) {
  const std::uint64_t request = impl_->next_request.fetch_add(1) + 1;
  ThreadImage image{t.uid(), request, {}};
  for (const Thread::Forwarder& f : t.forwarders()) image.forwarders.push_back({f.frame, f.call, f.owner});
  {
    std::lock_guard lock(impl_->mu);
    impl_->migrations[request] = {.done = std::move(arrived), .answers = to, .departed = false};
  }
  try {
    impl_->send_directive(to, image, std::move(state));
  } catch (...) {
    // It stays here. Unless the loss of `to` already said so, say why.
    if (Done done = impl_->take(impl_->migrations, request).done) done(std::current_exception());
    return false;
  }
  t.depart(to);
  for (NodeId n : impl_->others(to)) impl_->tell(n, ThreadMoved{t.uid(), to});
  impl_->let_go(request);  // an answer that came already completes now: node() says `to`
  return true;
}

void TcpBackend::call_completed(const GraphCore& g, CallId call, Payload&& result) {
  try {
    impl_->send_directive(0, CallResult{g.id, call}, &result);
  } catch (const NodeFailure&) {  // node 0 is gone: this process is leaving
  } catch (const std::exception& e) {  // the result cannot travel: the call fails with why
    call_failed(call, std::current_exception());
  }
}

void TcpBackend::call_failed(CallId call, std::exception_ptr error) {
  if (impl_->me == 0) return impl_->tell_all(CallAbort{call});  // a node that cannot hear it is gone
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
  impl_->tell(0, f);
}

// Returns once the network thread no longer delivers to the previous sink (it may be destroyed)
// and, when tracing starts, once every node traces: a message between two other nodes is traced by
// its receiver, which must not hear of tracing after the message. A node answers the flush after it
// applied Tracing, which came before on the same connection.
void TcpBackend::tracing(bool on) {
  impl_->broadcast(Tracing{on});
  if (on) collect_trace();
  impl_->on_network([] {});
}

// Each node sends its last batch, then answers on the same connection: once every node answered
// (or is gone), its events are in the sink.
void TcpBackend::collect_trace() {
  Impl& i = *impl_;
  const std::uint64_t request = i.next_request.fetch_add(1) + 1;
  const std::vector<NodeId> nodes = i.others();
  {
    std::lock_guard lock(i.mu);
    i.trace_flushes[request];
  }
  for (NodeId n : nodes) {
    try {
      i.send_directive(n, TraceFlush{request});
    } catch (const std::exception&) {  // gone: nothing more comes from it
    }
  }
  try {
    i.wait_for(
        [&] {
          const auto& answered = i.trace_flushes[request];
          return std::all_of(nodes.begin(), nodes.end(), [&](NodeId n) { return answered.contains(n) || !i.peer(n); });
        },
        "the other nodes' trace events", 10);
  } catch (...) {
    std::lock_guard lock(i.mu);
    i.trace_flushes.erase(request);
    throw;
  }
  std::lock_guard lock(i.mu);
  i.trace_flushes.erase(request);
}

}  // namespace dps::net
