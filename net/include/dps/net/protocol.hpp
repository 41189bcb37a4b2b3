// The directives node processes exchange besides envelopes: joining, the clock, replicating the
// structure node 0 owns (collections, threads, graphs), moving threads, and the outcome of calls.
// One Directive per Directive frame, encoded with cereal (WireWriter / WireReader).
#pragma once

#include <cereal/types/string.hpp>
#include <cereal/types/variant.hpp>
#include <cereal/types/vector.hpp>

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace dps::net {

#define DPS_FIELDS(...) \
  template <class A>    \
  void serialize(A& a) { a(__VA_ARGS__); }

struct Endpoint {
  std::uint32_t node = 0;
  std::string host;
  std::uint16_t port = 0;
  DPS_FIELDS(node, host, port)
};

// --- membership and time ---
struct Join {  // a new process to node 0, once authenticated: where others reach it
  Endpoint self;
  std::int64_t pid = 0;
  std::uint32_t cores = 0;  // of its host
  DPS_FIELDS(self, pid, cores)
};
struct Members {  // node 0 to all: the processes of the application (connect to those below you)
  std::vector<Endpoint> nodes;
  DPS_FIELDS(nodes)
};
// Removing a node, once its threads have moved away: node 0 tells it Leaving; it tells every other
// node Departing, after the ThreadMoved of its threads, so they know where its threads are now; each
// seals its connection to it with Sealed (frames that would follow go to the threads' new nodes);
// once all sealed, it forwards what reached it meanwhile and closes. Nothing in flight is lost.
struct Leaving {  // node 0 to `node`: leave
  std::uint32_t node = 0;
  DPS_FIELDS(node)
};
struct Departing {  // the leaving node to every other: it leaves (it did not fail)
  template <class A>
  void serialize(A&) {}
};
struct Sealed {  // the answer to Departing: the last frame the leaving node gets from the sender
  template <class A>
  void serialize(A&) {}
};
struct Ready {  // a process to node 0: connected to every member
  std::uint32_t node = 0;
  DPS_FIELDS(node)
};
struct ClockPing {
  double sent = 0;  // node 0's clock
  DPS_FIELDS(sent)
};
struct ClockPong {
  double sent = 0, here = 0;  // node 0's clock when pinged, the replier's when it replied
  DPS_FIELDS(sent, here)
};
struct ClockOffset {  // add to your clock to read node 0's
  double offset = 0;
  DPS_FIELDS(offset)
};
struct Shutdown {
  std::string reason;  // empty: the application ended normally
  DPS_FIELDS(reason)
};
struct Goodbye {  // the last frame on a connection its sender closes because the application ended
  template <class A>
  void serialize(A&) {}
};
struct PeerLost {  // a node to node 0: its connection to `node` failed (node 0 fails the calls)
  std::uint32_t node = 0;
  std::string reason;
  DPS_FIELDS(node, reason)
};

// --- structure, from node 0 ---
struct CollectionCreated {
  std::uint32_t id = 0;
  std::string name, state_type;
  bool backups = true;  // under fault tolerance, its threads are checkpointed (dps::Backups)
  DPS_FIELDS(id, name, state_type, backups)
};
struct ThreadAdded {
  std::uint32_t collection = 0;
  std::uint64_t uid = 0;
  std::uint32_t node = 0;
  bool has_image = false;
  std::string image;  // the state made on node 0, for the host; empty for the others
  DPS_FIELDS(collection, uid, node, has_image, image)
};
struct ThreadDropped {
  std::uint64_t uid = 0;
  DPS_FIELDS(uid)
};
struct ThreadGone {  // host -> node 0 -> every process: forget it (Runtime::forget)
  std::uint64_t uid = 0;
  DPS_FIELDS(uid)
};
struct VertexImage {
  std::string op_type, name;
  std::uint32_t collection = 0, window = 0;
  std::uint8_t priority = 0;  // dps::Priority
  std::uint8_t route_kind = 0;
  std::uint64_t route_fixed = 0;
  std::string route_type, route_image;
  DPS_FIELDS(op_type, name, collection, window, priority, route_kind, route_fixed, route_type, route_image)
};
struct GraphCreated {
  std::uint32_t id = 0;
  std::string name;
  std::vector<VertexImage> vertices;
  DPS_FIELDS(id, name, vertices)
};

// --- threads that move or leave ---
struct StateRequest {  // to a thread's host
  std::uint64_t uid = 0, request = 0;
  bool retire = true;  // false: a snapshot, the thread stays
  DPS_FIELDS(uid, request, retire)
};
struct StateReturned {  // the retired thread's final state, or its snapshot, to the requester
  std::uint64_t request = 0;
  std::string image;
  std::string error;  // why the state could not travel (image empty)
  DPS_FIELDS(request, image, error)
};
struct MigrateRequest {
  std::uint64_t uid = 0, request = 0;
  std::uint32_t to = 0;
  DPS_FIELDS(uid, request, to)
};
struct MigrateDone {  // to the requester; error empty on success
  std::uint64_t request = 0;
  std::string error;
  DPS_FIELDS(request, error)
};
struct Forward {
  std::uint64_t frame = 0, call = 0, owner = 0;
  DPS_FIELDS(frame, call, owner)
};
struct ThreadImage {  // old host to new host: the thread, then its mail follows; MigrateDone answers
  std::uint64_t uid = 0, request = 0;
  std::vector<Forward> forwarders;
  bool records = false;  // under fault tolerance: the image is its records (Thread::records_to_move)
  DPS_FIELDS(uid, request, forwarders, records)
};  // the state's image follows the directive in the frame
struct ThreadMoved {  // old host to everyone else
  std::uint64_t uid = 0;
  std::uint32_t node = 0;
  DPS_FIELDS(uid, node)
};

// --- calls ---
struct WireStamp {  // Stamp (recovery_log.hpp): a data object's place in its sender's records
  std::uint64_t from = 0, link = 0;
  std::uint32_t epoch = 0, committed = 0, base = 0;
  std::uint64_t time = 0;
  DPS_FIELDS(from, link, epoch, committed, base, time)
};
struct CallResult {  // to node 0; the graph's output follows the directive in the frame
  std::uint32_t graph = 0;
  std::uint64_t call = 0;
  WireStamp stamp;
  DPS_FIELDS(graph, call, stamp)
};
struct CallFailure {  // to node 0
  std::uint64_t call = 0;
  bool operation = false;  // an OperationError: the fields below are set
  std::string op, thread, reason, message;
  std::uint32_t node = 0;
  bool lost = false;  // a NodeFailure: `node` and `reason` are set
  DPS_FIELDS(call, operation, op, thread, reason, message, node, lost)
};
struct CallAbort {  // node 0 to all
  std::uint64_t call = 0;
  DPS_FIELDS(call)
};

// --- fault tolerance (docs/fault-tolerance.md) ---
// A thread's host sends each of its checkpoints to the next live node, which holds it, answers the
// thread with Stored and tells node 0. When a node fails, node 0 tells every process where its
// threads are rebuilt (Rebuild); once all rebuilt (Rebuilt), everyone sends again (Resend).
struct BackupKept {  // host -> holder; the checkpoint's image follows the directive in the frame
  std::uint64_t uid = 0;
  std::uint32_t incarnation = 0;  // the thread's life that took it
  std::uint32_t epoch = 0;
  DPS_FIELDS(uid, incarnation, epoch)
};
struct BackupHeld {  // holder -> node 0
  std::uint64_t uid = 0;
  std::uint32_t incarnation = 0;
  std::uint32_t epoch = 0;
  DPS_FIELDS(uid, incarnation, epoch)
};
struct BackupDropped {  // node 0 -> a former holder: a later checkpoint of the thread is held elsewhere
  std::uint64_t uid = 0;
  std::uint32_t incarnation = 0;
  std::uint32_t epoch = 0;
  DPS_FIELDS(uid, incarnation, epoch)
};
struct RebuiltThread {
  std::uint64_t uid = 0;
  std::uint32_t at = 0, incarnation = 0;
  DPS_FIELDS(uid, at, incarnation)
};
struct Rebuild {  // node 0 -> all
  std::uint32_t failed = 0;
  std::vector<RebuiltThread> threads;
  DPS_FIELDS(failed, threads)
};
struct Rebuilt {  // -> node 0
  std::uint32_t failed = 0;
  DPS_FIELDS(failed)
};
struct Resend {  // node 0 -> all
  std::uint32_t failed = 0;
  DPS_FIELDS(failed)
};
struct Replayed {  // a rebuilt thread's host -> node 0: it handled again all it was sent again
  std::uint64_t uid = 0;
  DPS_FIELDS(uid)
};

// --- traces: every node's events reach node 0's sink, on node 0's clock ---
struct Tracing {  // node 0 to all: record (or stop recording) events for node 0
  bool on = false;
  DPS_FIELDS(on)
};
struct TraceStep {
  std::uint32_t node = 0;
  std::uint64_t thread = 0;
  std::string collection, operation;
  std::uint64_t call = 0;
  double start = 0, end = 0;
  DPS_FIELDS(node, thread, collection, operation, call, start, end)
};
struct TraceTransfer {
  std::uint32_t from = 0, to = 0;
  std::uint64_t bytes = 0;
  double start = 0, end = 0;
  DPS_FIELDS(from, to, bytes, start, end)
};
struct TraceChange {
  std::uint8_t kind = 0;
  std::uint64_t thread = 0;
  std::string collection;
  std::uint32_t node = 0, to = 0;
  double time = 0;
  DPS_FIELDS(kind, thread, collection, node, to, time)
};
struct TracePhase {
  std::string name;
  bool begin = true;
  double time = 0;
  DPS_FIELDS(name, begin, time)
};
struct TraceBatch {  // to node 0: events recorded since the last batch
  std::vector<TraceStep> steps;
  std::vector<TraceTransfer> transfers;
  std::vector<TraceChange> changes;
  std::vector<TracePhase> phases;  // those operations mark
  DPS_FIELDS(steps, transfers, changes, phases)
};
struct TraceFlush {  // node 0 to all: send what you recorded, then answer
  std::uint64_t request = 0;
  DPS_FIELDS(request)
};
struct TraceFlushed {  // to node 0, after the last batch
  std::uint64_t request = 0;
  DPS_FIELDS(request)
};

#undef DPS_FIELDS

using Directive = std::variant<Join, Members, Leaving, Departing, Sealed, Ready, ClockPing, ClockPong, ClockOffset,
                               Shutdown, CollectionCreated, ThreadAdded, ThreadDropped, GraphCreated, StateRequest,
                               StateReturned, MigrateRequest, MigrateDone, ThreadImage, ThreadMoved, CallResult,
                               CallFailure, CallAbort, Tracing, TraceBatch, TraceFlush, TraceFlushed, Goodbye, PeerLost,
                               ThreadGone, BackupKept, BackupHeld, Rebuild, Rebuilt, Resend, Replayed, BackupDropped>;

}  // namespace dps::net
