// The decoders of received frames, fed one input at a time, each checked against what it promises.
#include "decoder_input.hpp"

#include <dps/net/connection.hpp>
#include <dps/kernel/thread.hpp>

#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <functional>
#include <system_error>

namespace dps::fuzz {

namespace {

// The graph the envelopes travel: never called, it only gives each vertex its input type.
struct Cut : Split<Job, Piece> {
  Step execute(Job) { co_return; }
};
struct Weigh : Leaf<Piece, Sum> {
  Sum execute(const Piece&) { return {}; }
};
struct Gather : Merge<Sum, Sum> {
  Step execute(Sum) { co_return; }
};

std::vector<std::byte> flatten(const std::vector<std::byte>& head, const std::vector<WireWriter::Segment>& segments) {
  std::vector<std::byte> out;
  std::size_t at = 0;
  for (const auto& s : segments) {
    const std::byte* from = s.external ? s.external : head.data() + at;
    if (!s.external) at += s.size;
    out.insert(out.end(), from, from + s.size);
  }
  return out;
}

std::vector<std::byte> encoded(const Envelope& e, const Thread& to) {
  std::vector<std::byte> head;
  WireWriter out(head);  // blocks of 16 KiB and more stay external, as when sending
  net::encode(e, to, out);
  return flatten(head, out.segments());
}

// A directive and what follows it in its frame: a call's result, or a migrated thread's image.
std::vector<std::byte> encoded(const net::Directive& d, const Payload* result = nullptr,
                               const std::string* image = nullptr) {
  std::vector<std::byte> bytes;
  WireWriter out(bytes, SIZE_MAX);
  out(d);
  if (result) result->save(out);
  if (image) out(*image);
  return bytes;
}

}  // namespace

std::string hex(std::span<const std::byte> bytes, std::size_t at_most) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  for (std::size_t i = 0; i < std::min(bytes.size(), at_most); ++i) {
    const auto b = std::to_integer<unsigned>(bytes[i]);
    s += digits[b >> 4];
    s += digits[b & 15];
  }
  if (bytes.size() > at_most) s += "...";
  return s;
}

namespace {

// Collects what a Connection hands up.
struct Recorder final : net::Connection::Handler {
  std::vector<std::vector<std::byte>> frames;  // header and body, as they came
  std::vector<std::string> closes;
  void on_frame(net::Connection&, const net::FrameHeader& h, std::span<const std::byte> body) override {
    auto& f = frames.emplace_back(net::FrameHeader::kSize);
    std::memcpy(f.data(), &h, sizeof h);
    f.insert(f.end(), body.begin(), body.end());
  }
  void on_closed(net::Connection&, const std::string& reason) override { closes.push_back(reason); }
  double now() const noexcept override { return 0; }
};

}  // namespace

DecoderTargets::DecoderTargets()
    : app_(ApplicationOptions{.nodes = 2, .workers = 1}),
      runtime_(&app_.runtime()),
      master_(app_.threads<Stateless>("master", 1)),
      workers_(app_.threads<Stateless>("workers", 2)) {
  app_.graph(op<Cut>(master_) >> op<Weigh>(workers_) >> op<Gather>(master_), "fuzzed");
  graph_ = app_.runtime().graphs().back();
}

DecoderTargets::~DecoderTargets() = default;

std::vector<std::byte> DecoderTargets::frame(net::FrameKind kind, std::span<const std::byte> body) {
  net::FrameHeader h{.kind = kind, .length = static_cast<std::uint32_t>(body.size()), .sender = 1};
  std::vector<std::byte> out(net::FrameHeader::kSize + body.size());
  std::memcpy(out.data(), &h, sizeof h);
  std::ranges::copy(body, out.begin() + net::FrameHeader::kSize);
  return out;
}

std::vector<Seed> DecoderTargets::seeds() const {
  using net::FrameKind;
  std::vector<Seed> out;
  Thread& master = master_.core().at(0);
  Thread& w0 = workers_.core().at(0);
  Thread& w1 = workers_.core().at(1);

  auto data = [&](std::string name, Thread& to, std::uint32_t vertex, Payload payload, std::vector<Frame> frames) {
    auto e = std::make_shared<Envelope>();
    e->kind = Message::Data;
    e->graph = graph_;
    e->vertex = vertex;
    e->call = 0x0100000000000007;
    e->seq = 5;
    for (const Frame& f : frames) e->frames.push(f);
    e->payload = std::move(payload);
    out.push_back({std::move(name), frame(FrameKind::Envelope, encoded(*e, to)), e, &to});
  };
  std::vector<double> big(3000);  // 24 KB: sent from the object itself, as a separate segment
  for (std::size_t i = 0; i < big.size(); ++i) big[i] = 0.5 * static_cast<double>(i);
  data("data-job", master, 0, Payload::of(Job{"lu", {1.0, -2.5, 1e300}, true, {}}), {});
  data("data-job-large", master, 0, Payload::of(Job{"big", big, false, {}}), {});
  data("data-piece-int", w0, 1, Payload::of(Piece{0, 10, std::int32_t{42}, {}}), {{11, master.uid(), 0}});
  data("data-piece-string", w1, 1, Payload::of(Piece{-3, 1 << 20, std::string("tag"), {}}), {{12, master.uid(), 3}});
  data("data-sum-note", master, 2, Payload::of(Sum{6.25, {1, 2, 3}, std::string("note"), {}}),
       {{1, master.uid(), 0}, {2, w0.uid(), 1}, {3, w1.uid(), 2}, {4, master.uid(), 3}});  // deeper than the inline stack
  data("data-sum", master, 2, Payload::of(Sum{-1.0, {}, std::nullopt, {}}), {{7, master.uid(), 0}, {8, w0.uid(), 9}});
  {  // under fault tolerance: stamped, with orders of handling its receiver was not told yet
    auto e = std::make_shared<Envelope>();
    e->graph = graph_;
    e->vertex = 1;
    e->call = 0x0100000000000007;
    e->frames.push({13, master.uid(), 1});
    e->payload = Payload::of(Piece{1, 2, std::int32_t{3}, {}});
    e->stamp = {master.uid(), std::uint64_t{2} << Stamp::kIncarnationShift | 17, 3, 2, 1, 99, /*earlier_life=*/true};
    e->determinants = std::make_unique<detail::Determinants>(detail::Determinants{
        {{w1.uid(), 40, {{master.uid(), 0x1234}, {0, 0xfeed}}}, {master.uid(), 0, {}}}, {{w1.uid(), 38}}});
    out.push_back({"data-piece-stamped", frame(FrameKind::Envelope, encoded(*e, w0)), e, &w0});
  }

  auto control = [&](std::string name, Thread& to, Message kind, std::uint64_t peer, std::int64_t count, bool credit) {
    auto e = std::make_shared<Envelope>();
    e->kind = kind;
    e->call = 0x0100000000000009;
    e->frame = 0x0200000000000003;
    e->peer = peer;
    e->count = count;
    e->credit = credit;
    out.push_back({std::move(name), frame(FrameKind::Envelope, encoded(*e, to)), e, &to});
  };
  control("control-register", master, Message::Register, w0.uid(), 0, false);
  control("control-grant", w0, Message::Grant, master.uid(), -1, true);
  control("control-close", w1, Message::Close, 0, 7, false);
  control("control-credit", master, Message::Credit, w1.uid(), 3, false);
  control("control-done", master, Message::Done, w0.uid(), 0, false);
  control("control-release", w0, Message::Release, 0, 0, false);

  auto directive = [&](std::string name, const net::Directive& d, const Payload* result = nullptr,
                       const std::string* image = nullptr) {
    out.push_back({std::move(name), frame(FrameKind::Directive, encoded(d, result, image)), nullptr, nullptr});
  };
  using namespace net;
  directive("join", Join{{2, "node-2.cluster", 40123}, 31337});
  directive("members", Members{{{0, "a", 1}, {1, "bb", 2}, {2, "ccc", 65535}}});
  directive("leaving", Leaving{2});
  directive("ready", Ready{1});
  directive("clock-ping", ClockPing{12.5});
  directive("clock-pong", ClockPong{12.5, 13.75});
  directive("clock-offset", ClockOffset{-0.001});
  directive("shutdown", Shutdown{"node 3 failed"});
  directive("goodbye", Goodbye{});
  directive("peer-lost", PeerLost{3, "silent for 3 s"});
  directive("collection-created", CollectionCreated{4, "workers", "dps::fuzz::Sum"});
  directive("thread-added", ThreadAdded{4, 99, 1, true, std::string(40, 'x')});
  directive("thread-dropped", ThreadDropped{99});
  directive("thread-gone", ThreadGone{99});
  directive("graph-created",
            GraphCreated{2, "g", {{"Cut", "cut", 1, 4, 1, 0, 0, "", ""}, {"Weigh", "w", 2, 0, 0, 2, 7, "R", "img"}}});
  directive("retire-request", StateRequest{99, 5, true});
  directive("snapshot-request", StateRequest{99, 7, false});
  directive("state-returned", StateReturned{5, "state", {}});
  directive("state-lost", StateReturned{6, {}, "it could not travel"});
  directive("migrate-request", MigrateRequest{99, 6, 1});
  directive("migrate-done", MigrateDone{6, "no room"});
  const std::string image = "the thread's state";
  directive("thread-image", ThreadImage{99, 6, {{1, 2, 3}, {4, 5, 6}}}, nullptr, &image);
  directive("thread-moved", ThreadMoved{99, 2});
  const Payload result = Payload::of(Sum{55.0, {10, 45}, std::nullopt, {}});
  directive("call-result", CallResult{graph_->id, 8, {}}, &result);
  directive("call-failure", CallFailure{8, true, "weigh", "workers[1]", "threw", "boom", 1});
  directive("call-failure-lost", CallFailure{9, false, {}, {}, "no connection to it", {}, 2, true});
  directive("call-abort", CallAbort{8});
  directive("tracing", Tracing{true});
  directive("trace-batch", TraceBatch{{{1, 99, "workers", "weigh", 8, 0.5, 0.75}},
                                      {{0, 1, 4096, 0.5, 0.625}},
                                      {{2, 99, "workers", 1, 0, 0.25}},
                                      {{"iteration 1", true, 0.5}}});
  directive("trace-flush", TraceFlush{3});
  directive("trace-flushed", TraceFlushed{3});

  out.push_back({"heartbeat", frame(FrameKind::Heartbeat, {}), nullptr, nullptr});
  std::vector<std::byte> hello(4 + 32, std::byte{7});
  out.push_back({"hello", frame(FrameKind::Hello, hello), nullptr, nullptr});
  return out;
}

void DecoderTargets::write_corpus(const std::filesystem::path& dir) const {
  std::filesystem::create_directories(dir);
  for (const Seed& s : seeds()) {
    std::ofstream f(dir / s.name, std::ios::binary);
    f.write(reinterpret_cast<const char*>(s.frame.data()), static_cast<std::streamsize>(s.frame.size()));
  }
}

Outcome DecoderTargets::feed(std::span<const std::byte> input, bool stream, std::size_t piece, bool authenticated) {
  using net::FrameHeader;
  Outcome out;
  const long alive = Alive::count.load();
  if (input.size() >= FrameHeader::kSize) {
    FrameHeader h;
    std::memcpy(&h, input.data(), sizeof h);
    const auto reason = h.check(kMaxBody);
    const auto kind = static_cast<std::uint16_t>(h.kind);
    const bool acceptable = h.magic == FrameHeader::kMagic && h.version == FrameHeader::kVersion && kind >= 1 &&
                            kind <= net::kLastFrameKind && h.length <= kMaxBody;
    if (reason.has_value() == acceptable || (reason && reason->empty()))
      throw Mismatch("FrameHeader::check of " + hex(input.first(FrameHeader::kSize)) + ": " +
                     (reason ? "\"" + *reason + "\"" : "accepted"));
    out.header_ok = acceptable;
  }
  const auto body = input.size() >= FrameHeader::kSize ? input.subspan(FrameHeader::kSize) : input;
  out.directive = directive(body);
  out.envelope = envelope(body);
  if (Alive::count.load() != alive)
    throw Mismatch("decoding " + hex(body) + " left " + std::to_string(Alive::count.load() - alive) +
                   " objects behind");
  if (stream) this->stream(input, piece, authenticated, out);
  return out;
}

Result DecoderTargets::directive(std::span<const std::byte> body) const {
  net::Directive d;
  Payload result;
  std::optional<std::string> image;
  try {
    WireReader in(body);
    in(d);
    // As the backend reads them: a call's result (typed by the graph's last vertex) or a migrated
    // thread's image follows the directive.
    if (const auto* r = std::get_if<net::CallResult>(&d)) {
      const GraphCore* graph = runtime().graph(r->graph);
      if (!graph || graph->vertices.empty()) throw WireError("result of unknown graph");
      result = graph->vertices.back()->type->load_output(in);
    } else if (std::holds_alternative<net::ThreadImage>(d)) {
      in(image.emplace());
    }
    if (!in.done()) throw WireError("bytes after the directive");
  } catch (const WireError&) {
    return Result::Refused;
  }
  // Accepted: it says exactly what its bytes say, no more and no less.
  if (!std::ranges::equal(encoded(d, result.empty() ? nullptr : &result, image ? &*image : nullptr), body))
    throw Mismatch("directive " + hex(body) + " (alternative " + std::to_string(d.index()) +
                   ") re-encodes differently");
  return Result::Decoded;
}

Result DecoderTargets::envelope(std::span<const std::byte> body) const {
  net::Decoded d;
  try {
    d = net::decode(runtime(), body);
  } catch (const net::NotYetKnown&) {
    return Result::NotYetKnown;
  } catch (const WireError&) {
    return Result::Refused;
  }
  std::unique_ptr<Envelope> envelope(d.envelope);  // the receiver owns it
  std::vector<std::byte> expected(body.begin(), body.end());
  // The credit flag is the one field read leniently (any non-zero byte is true).
  if (envelope->kind != Message::Data) expected.back() = std::byte{expected.back() != std::byte{0}};
  if (encoded(*envelope, *d.to) != expected) throw Mismatch("envelope " + hex(body) + " re-encodes differently");
  return Result::Decoded;
}

void DecoderTargets::stream(std::span<const std::byte> input, std::size_t piece, bool authenticated, Outcome& out) {
  using net::FrameHeader;
  // What the Connection must do: hand up every complete frame before the first bad header, then
  // close with that header's reason, or as the peer closed when the bytes ran out.
  const std::size_t limit = authenticated ? kMaxBody : net::Connection::kMaxHandshakeBody;
  std::vector<std::span<const std::byte>> frames;
  std::string reason = "closed by peer";
  for (std::size_t at = 0; input.size() - at >= FrameHeader::kSize;) {
    FrameHeader h;
    std::memcpy(&h, input.data() + at, sizeof h);
    if (auto bad = h.check(limit)) {
      reason = *bad;
      break;
    }
    if (input.size() - at - FrameHeader::kSize < h.length) break;
    frames.push_back(input.subspan(at, FrameHeader::kSize + h.length));
    at += FrameHeader::kSize + h.length;
  }

  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw std::system_error(errno, std::generic_category(), "socketpair");
  asio::ip::tcp::socket reading(io_), writing(io_);
  reading.assign(asio::ip::tcp::v4(), fds[0]);  // a stream socket is all Connection needs
  writing.assign(asio::ip::tcp::v4(), fds[1]);
  Recorder recorder;
  auto connection = std::make_shared<net::Connection>(std::move(reading), recorder, kMaxBody);
  connection->authenticated = authenticated;
  connection->start();
  std::size_t written = 0;
  std::function<void()> write_next = [&] {
    if (written == input.size()) {
      asio::error_code ec;
      writing.shutdown(asio::socket_base::shutdown_send, ec);
      return;
    }
    const std::size_t n = std::min(std::max<std::size_t>(piece, 1), input.size() - written);
    asio::async_write(writing, asio::buffer(input.data() + written, n),
                      [&, n](const asio::error_code& ec, std::size_t) {
                        if (ec) return;  // the connection closed first
                        written += n;
                        write_next();
                      });
  };
  write_next();
  io_.restart();
  io_.run_for(std::chrono::seconds(10));

  std::string wrong;
  if (recorder.closes.size() != 1)
    wrong = "closed " + std::to_string(recorder.closes.size()) + " times (a hang?)";
  else if (recorder.closes[0].rfind(reason, 0) != 0)  // the connection may add which frame it was
    wrong = "closed with \"" + recorder.closes[0] + "\", expected \"" + reason + "\"";
  else if (recorder.frames.size() != frames.size())
    wrong =
        "delivered " + std::to_string(recorder.frames.size()) + " frames, expected " + std::to_string(frames.size());
  for (std::size_t i = 0; wrong.empty() && i < frames.size(); ++i)
    if (!std::ranges::equal(recorder.frames[i], frames[i])) wrong = "frame " + std::to_string(i) + " altered";
  if (recorder.closes.empty()) {  // release the connection before leaving
    connection->close("test over");
    asio::error_code ec;
    writing.close(ec);
    io_.restart();
    io_.run_for(std::chrono::seconds(1));
  }
  if (!wrong.empty()) throw Mismatch("stream " + hex(input) + ": " + wrong);
  out.stream_frames = recorder.frames.size();
  out.stream_reason = recorder.closes[0];
}

}  // namespace dps::fuzz
