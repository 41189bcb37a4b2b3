// Checkpoints cross processes as cereal images. The objects an outbox keeps name their graph by id;
// loading looks it up in the runtime that will rebuild the thread.
#include "checkpoint_image.hpp"

#include "dps/kernel/graph_core.hpp"
#include "dps/wire_archive.hpp"

#include <cereal/types/deque.hpp>
#include <cereal/types/map.hpp>
#include <cereal/types/set.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/unordered_map.hpp>
#include <cereal/types/utility.hpp>
#include <cereal/types/vector.hpp>

namespace dps {

template <class A>
void serialize(A& a, Stamp& s) {
  a(s.from, s.link, s.epoch, s.committed, s.base, s.time);
}

template <class A>
void save(A& a, const FrameStack& frames) {
  a(frames.size());
  for (std::uint32_t i = 0; i < frames.size(); ++i) a(frames[i].id, frames[i].home, frames[i].parent_seq);
}

template <class A>
void load(A& a, FrameStack& frames) {
  std::uint32_t depth = 0;
  a(depth);
  for (std::uint32_t i = 0; i < depth; ++i) {
    Frame f;
    a(f.id, f.home, f.parent_seq);
    frames.push(f);
  }
}

namespace detail {

namespace {
thread_local const Runtime* loading = nullptr;  // the runtime whose graphs a loading image names
}

// The payload follows its fields, in its type's wire format (the graph and vertex name the type).
void save(WireWriter& a, const KeptObject& k) {
  a(k.stamp, k.graph->id, k.vertex, k.call, k.seq, k.frames);
  k.payload->save(a);
}

void load(WireReader& a, KeptObject& k) {
  std::uint32_t graph = 0;
  a(k.stamp, graph, k.vertex, k.call, k.seq, k.frames);
  k.graph = loading->graph(graph);
  if (!k.graph) throw WireError("a checkpoint names unknown graph " + std::to_string(graph));
  const GraphCore& g = *k.graph;
  const bool result = k.vertex == GraphCore::kSink;
  if (!result && k.vertex >= g.vertices.size())
    throw WireError("a checkpoint names vertex " + std::to_string(k.vertex) + " of a graph of " +
                    std::to_string(g.vertices.size()));
  const OpType& type = *g[result ? static_cast<std::uint32_t>(g.vertices.size() - 1) : k.vertex].type;
  k.payload = std::make_shared<const Payload>(result ? type.load_output(a) : type.load_input(a));
}

template <class A>
void serialize(A& a, Inbox::Record::Sent& s) {
  a(s.incarnation, s.epoch);
}

template <class A>
void serialize(A& a, Inbox::Record::Seen& s) {
  a(s.ids, s.order, s.bases);
}

template <class A>
void serialize(A& a, Inbox::Record& r) {
  a(r.handled, r.ahead, r.seen);
}

template <class A>
void serialize(A& a, KeptFrame& f) {
  a(f.id, f.call, f.posted, f.owner, f.forwarders, f.credits);
}

template <class A>
void serialize(A& a, FrameDone& d) {
  a(d.home, d.call, d.frame);
}

template <class A>
void serialize(A& a, Checkpoint& c) {
  a(c.thread, c.epoch, c.state, c.outbox, c.inbox, c.clock, c.frames_opened, c.frames, c.dones, c.determined, c.log);
}

template <class A>
void save(A& a, const MovingRecords& m) {
  a(*m.checkpoint, m.new_checkpoint, m.committed, m.covering, m.dones, m.determined);
}

template <class A>
void load(A& a, MovingRecords& m) {
  a(*m.checkpoint, m.new_checkpoint, m.committed, m.covering, m.dones, m.determined);
}

}  // namespace detail

namespace net {

namespace {

// Loads `image` into `into`, with the runtime whose graphs its kept objects name.
template <class T>
void load_image(const Runtime& runtime, std::string_view image, T& into, const char* what) {
  detail::loading = &runtime;
  try {
    WireReader in(std::as_bytes(std::span(image.data(), image.size())));
    in(into);
    if (!in.done()) throw WireError(std::to_string(in.remaining()) + " bytes after " + what);
  } catch (...) {
    detail::loading = nullptr;
    throw;
  }
  detail::loading = nullptr;
}

}  // namespace

std::string checkpoint_image(const detail::Checkpoint& checkpoint) { return encoded(checkpoint); }

void write_checkpoint(WireWriter& out, const detail::Checkpoint& checkpoint) {
  out(const_cast<detail::Checkpoint&>(checkpoint));  // cereal's serialize takes it non-const; it only reads
}

std::shared_ptr<const detail::Checkpoint> load_checkpoint(const Runtime& runtime, std::string_view image) {
  auto checkpoint = std::make_shared<detail::Checkpoint>();
  load_image(runtime, image, *checkpoint, "a checkpoint");
  return checkpoint;
}

void write_moving_records(WireWriter& out, const detail::MovingRecords& records) { out(records); }

detail::MovingRecords load_moving_records(const Runtime& runtime, std::string_view image) {
  detail::MovingRecords records;
  load_image(runtime, image, records, "a thread's records");
  return records;
}

std::pair<std::uint64_t, std::uint32_t> checkpoint_header(std::string_view image) {
  WireReader in(std::as_bytes(std::span(image.data(), image.size())));
  const auto thread = in.get<std::uint64_t>();  // Checkpoint's first two fields (serialize above)
  return {thread, in.get<std::uint32_t>()};
}

}  // namespace net
}  // namespace dps
