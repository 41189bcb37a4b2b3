// RemoteTraces: tracing turned on and off, batches of events, and their collection by node 0.
#include "remote_trace.hpp"

#include "dps/kernel/runtime.hpp"

#include <algorithm>
#include <exception>

namespace dps::net {

RemoteTraces::RemoteTraces(NodeProcess& process, Transport& transport)
    : process_(process), transport_(transport), sink_([this](TraceBatch&& batch) {
        try {
          transport_.send_directive(0, batch);
        } catch (const std::exception&) {  // node 0 is gone: nobody to trace for
        }
      }) {}

void RemoteTraces::announce(bool on, const std::vector<NodeId>& nodes) {
  for (NodeId n : nodes) transport_.send_directive(n, Tracing{on});
}

// Each node sends its last batch, then answers on the same connection: once every node answered
// (or is gone), its events are in the sink.
void RemoteTraces::collect(const std::vector<NodeId>& nodes) {
  const std::uint64_t request = next_request_.fetch_add(1) + 1;
  {
    std::lock_guard lock(process_.mu);
    flushes_[request];
  }
  for (NodeId n : nodes) {
    try {
      transport_.send_directive(n, TraceFlush{request});
    } catch (const std::exception&) {  // gone: nothing more comes from it
    }
  }
  try {
    process_.wait_for(
        [&] {
          const auto& answered = flushes_[request];
          return std::all_of(nodes.begin(), nodes.end(),
                             [&](NodeId n) { return answered.contains(n) || !transport_.peer(n); });
        },
        "the other nodes' trace events", 10);
  } catch (...) {
    std::lock_guard lock(process_.mu);
    flushes_.erase(request);
    throw;
  }
  std::lock_guard lock(process_.mu);
  flushes_.erase(request);
}

void RemoteTraces::handle(Tracing& d, Incoming& in) {
  Runtime* rt = process_.attached();
  if (!rt) return;
  in.nothing_follows();
  if (process_.me == 0) throw WireError("node 0 was told to trace");
  rt->trace_to(d.on ? &sink_ : nullptr);
  if (!d.on) sink_.flush();
}

void RemoteTraces::handle(TraceBatch& d, Incoming& in) {
  Runtime* rt = process_.attached();
  if (!rt) return;
  in.nothing_follows();
  if (process_.me != 0) throw WireError("trace events for a node other than 0");
  TraceSink* sink = rt->tracer();
  if (!sink) return;  // tracing stopped meanwhile
  for (const TraceStep& e : d.steps) sink->step({e.node, e.thread, e.collection, e.operation, e.call, e.start, e.end});
  for (const TraceTransfer& e : d.transfers) sink->transfer({e.from, e.to, e.bytes, e.start, e.end});
  for (const TraceChange& e : d.changes) {
    if (e.kind > static_cast<std::uint8_t>(Lifecycle::ThreadReplayed)) throw WireError("unknown lifecycle event");
    sink->lifecycle({static_cast<Lifecycle>(e.kind), e.thread, e.collection, e.node, e.to, e.time});
  }
  for (const TracePhase& e : d.phases) sink->phase({e.name, e.begin, e.time});
}

void RemoteTraces::handle(TraceFlush& d, Incoming& in) {
  in.nothing_follows();
  sink_.flush();
  transport_.tell(0, TraceFlushed{d.request});
}

void RemoteTraces::handle(TraceFlushed& d, Incoming& in) {
  in.nothing_follows();
  {
    std::lock_guard lock(process_.mu);
    if (auto it = flushes_.find(d.request); it != flushes_.end()) it->second.insert(in.sender);
  }
  process_.changed.notify_all();
}

}  // namespace dps::net
