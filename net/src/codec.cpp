// Envelope frames: fixed fields, the frame stack, then the payload.
#include "dps/net/codec.hpp"

#include "dps/kernel/recovery_log.hpp"
#include "dps/kernel/thread.hpp"

#include <memory>
#include <string>
#include <vector>

namespace dps::net {

namespace {

// A thread an envelope names: one this process knows, or knew (gone).
std::uint64_t named_thread(const Runtime& runtime, std::uint64_t uid) {
  if (uid == 0) throw WireError("thread uid 0");
  if (!runtime.thread(uid) && !runtime.gone(uid)) throw NotYetKnown(uid);
  return uid;
}

// A data object's stamp under fault tolerance (flag 2: a copy from its sender's earlier life); one
// byte without.
void put_stamp(const Stamp& s, WireWriter& out) {
  out.put(static_cast<std::uint8_t>(s.link == 0 ? 0 : s.earlier_life ? 2 : 1));
  if (!s.link) return;
  out.put(s.from);
  out.put(s.link);
  out.put(s.epoch);
  out.put(s.committed);
  out.put(s.base);
  out.put(s.time);
}

Stamp get_stamp(WireReader& in) {
  Stamp s;
  const auto stamped = in.get<std::uint8_t>();
  if (stamped > 2) throw WireError("a stamp flag of " + std::to_string(stamped));
  if (!stamped) return s;
  s.earlier_life = stamped == 2;
  s.from = in.get<std::uint64_t>();
  s.link = in.get<std::uint64_t>();
  s.epoch = in.get<std::uint32_t>();
  s.committed = in.get<std::uint32_t>();
  s.base = in.get<std::uint32_t>();
  s.time = in.get<std::uint64_t>();
  if (!s.link) throw WireError("a stamp without a link");
  return s;
}

// Orders of handling under fault tolerance (causal_log.hpp); one byte without.
void put_determinants(const detail::Determinants* d, WireWriter& out) {
  out.put(static_cast<std::uint8_t>(d != nullptr));
  if (!d) return;
  out.put(static_cast<std::uint32_t>(d->runs.size()));
  for (const detail::Determinants::Run& run : d->runs) {
    out.put(run.owner);
    out.put(run.first);
    out.put(static_cast<std::uint32_t>(run.entries.size()));
    for (const detail::Determinant& e : run.entries) {
      out.put(e.from);
      out.put(e.identity);
    }
  }
  out.put(static_cast<std::uint32_t>(d->stable.size()));
  for (const auto& [owner, count] : d->stable) {
    out.put(owner);
    out.put(count);
  }
}

std::uint32_t count_of(WireReader& in, std::size_t each, const char* what) {
  const auto n = in.get<std::uint32_t>();
  if (n > in.remaining() / each)
    throw WireError(std::to_string(n) + " " + what + " in " + std::to_string(in.remaining()) + " bytes");
  return n;
}

std::unique_ptr<detail::Determinants> get_determinants(WireReader& in) {
  const auto flag = in.get<std::uint8_t>();
  if (flag > 1) throw WireError("a determinants flag of " + std::to_string(flag));
  if (!flag) return nullptr;
  auto d = std::make_unique<detail::Determinants>();
  d->runs.resize(count_of(in, 20, "runs of determinants"));
  for (detail::Determinants::Run& run : d->runs) {
    run.owner = in.get<std::uint64_t>();
    run.first = in.get<std::uint64_t>();
    run.entries.resize(count_of(in, 16, "determinants"));
    for (detail::Determinant& e : run.entries) {
      e.from = in.get<std::uint64_t>();
      e.identity = in.get<std::uint64_t>();
    }
  }
  d->stable.resize(count_of(in, 16, "stable counts"));
  for (auto& [owner, count] : d->stable) {
    owner = in.get<std::uint64_t>();
    count = in.get<std::uint64_t>();
  }
  return d;
}

}  // namespace

void encode(const Envelope& e, const Thread& to, WireWriter& out) {
  out.put(to.uid());
  out.put(e.kind);
  if (e.kind == Message::Data) {
    out.put(e.graph->id);
    out.put(e.vertex);
    out.put(e.call);
    out.put(e.seq);
    out.put(e.frames.size());
    for (std::uint32_t i = 0; i < e.frames.size(); ++i) {
      out.put(e.frames[i].id);
      out.put(e.frames[i].home);
      out.put(e.frames[i].parent_seq);
    }
    put_stamp(e.stamp, out);
    put_determinants(e.determinants.get(), out);
    e.payload.save(out);
  } else {
    out.put(e.call);  // a node that cannot pass it on fails the call
    out.put(e.frame);
    out.put(e.peer);
    out.put(e.count);
    out.put(static_cast<std::uint8_t>(e.credit));
    if (e.kind == Message::Rejoin) {
      out.put(e.seq);
      const auto& claims = e.payload.get<std::vector<detail::FrameClaim>>();
      out.put(static_cast<std::uint32_t>(claims.size()));
      for (const detail::FrameClaim& c : claims) {
        out.put(c.frame);
        out.put(c.holder);
        out.put(c.owner);
      }
      put_determinants(e.determinants.get(), out);
    }
  }
}

Decoded decode(const Runtime& runtime, std::span<const std::byte> body, WireBuffer* buffer) {
  WireReader in(body, buffer);
  const std::uint64_t to = named_thread(runtime, in.get<std::uint64_t>());
  auto e = std::make_unique<Envelope>();
  e->kind = in.get<Message>();
  switch (e->kind) {
    case Message::Data: {
      const auto graph_id = in.get<std::uint32_t>();
      const GraphCore* graph = runtime.graph(graph_id);
      e->vertex = in.get<std::uint32_t>();
      e->call = in.get<CallId>();
      e->seq = in.get<std::uint64_t>();
      const auto depth = in.get<std::uint32_t>();
      if (depth > in.remaining() / 24) throw WireError("frame stack of " + std::to_string(depth) + " is too deep");
      for (std::uint32_t i = 0; i < depth; ++i) {
        Frame f;
        f.id = in.get<FrameId>();
        f.home = named_thread(runtime, in.get<std::uint64_t>());
        f.parent_seq = in.get<std::uint64_t>();
        e->frames.push(f);
      }
      if (!graph) throw NotYetKnown(graph_id | kGraphKey);
      if (e->vertex >= graph->vertices.size())
        throw WireError("vertex " + std::to_string(e->vertex) + " of graph " + std::to_string(graph_id) + " (" +
                        std::to_string(graph->vertices.size()) + " vertices)");
      e->graph = graph;
      e->stamp = get_stamp(in);
      e->determinants = get_determinants(in);
      e->payload = (*graph)[e->vertex].type->load_input(in);
      break;
    }
    case Message::Covered:
    case Message::Stored:
    case Message::CheckpointNow:
    case Message::Rejoin:
    case Message::Register:
    case Message::Grant:
    case Message::Close:
    case Message::Credit:
    case Message::Done:
    case Message::Release: {
      e->call = in.get<CallId>();
      e->frame = in.get<FrameId>();
      const auto peer = in.get<std::uint64_t>();
      e->peer = peer ? named_thread(runtime, peer) : 0;
      e->count = in.get<std::int64_t>();
      const auto credit = in.get<std::uint8_t>();
      if (credit > 1) throw WireError("a credit flag of " + std::to_string(credit));
      e->credit = credit != 0;
      if (e->kind == Message::Rejoin) {
        e->seq = in.get<std::uint64_t>();
        std::vector<detail::FrameClaim> claims(count_of(in, 24, "frame claims"));
        for (detail::FrameClaim& c : claims) {
          c.frame = in.get<FrameId>();
          c.holder = in.get<std::uint64_t>();
          c.owner = in.get<std::uint64_t>();
        }
        e->payload = Payload::local(std::move(claims));
        e->determinants = get_determinants(in);
      }
      break;
    }
    default: throw WireError("envelope kind " + std::to_string(static_cast<int>(e->kind)) + " never crosses processes");
  }
  if (!in.done()) throw WireError(std::to_string(in.remaining()) + " bytes after the envelope");
  return {runtime.thread(to), e.release()};
}

}  // namespace dps::net
