// Connection: frames sent from several threads at once, through a socket that takes a little at a
// time, arrive whole and in each sender's order; urgent frames pass only the bulk still queued; each
// frame carries when it started to leave, and is handed up with when its last byte came.
#include "dps/net/connection.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace dps::net {
namespace {

// Frame body: sender, sequence number, then bytes that depend on both.
constexpr std::size_t kPrefix = 2 * sizeof(std::uint32_t);
std::byte filler(std::uint32_t sender, std::uint32_t seq, std::size_t i) {
  return static_cast<std::byte>((sender * 131 + seq * 31 + i) & 0xff);
}

double seconds() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

// Both ends of a link read the same clock, as node processes read node 0's.
struct Clocked : Connection::Handler {
  double now() const noexcept override { return seconds(); }
};

struct Receiver : Clocked {
  std::mutex mu;
  std::map<std::uint32_t, std::uint32_t> next;  // by sender: the sequence number expected
  std::size_t frames = 0;
  std::string error;
  void on_frame(Connection&, const FrameHeader& h, std::span<const std::byte> body) override {
    std::lock_guard lock(mu);
    std::uint32_t sender = 0, seq = 0;
    std::memcpy(&sender, body.data(), sizeof sender);
    std::memcpy(&seq, body.data() + sizeof sender, sizeof seq);
    if (sender != h.sender)
      error = "body of sender " + std::to_string(sender) + " in a frame of " + std::to_string(h.sender);
    if (seq != next[sender]++)
      error = "sender " + std::to_string(sender) + ": frame " + std::to_string(seq) + " out of order";
    for (std::size_t i = kPrefix; i < body.size() && error.empty(); ++i)
      if (body[i] != filler(sender, seq, i))
        error = "frame " + std::to_string(seq) + " damaged at byte " + std::to_string(i);
    ++frames;
  }
  void on_closed(Connection&, const std::string& reason) override {
    std::lock_guard lock(mu);
    if (error.empty()) error = "closed: " + reason;
  }
};
struct Sender : Clocked {
  void on_frame(Connection&, const FrameHeader&, std::span<const std::byte>) override {}
  void on_closed(Connection&, const std::string&) override {}
};

// A frame whose head holds the prefix and whose block is an external segment (as a LargeArray's).
Outgoing frame(std::uint32_t sender, std::uint32_t seq, std::size_t size) {
  Outgoing f;
  f.head.resize(kPrefix);
  std::memcpy(f.head.data(), &sender, sizeof sender);
  std::memcpy(f.head.data() + sizeof sender, &seq, sizeof seq);
  auto block = std::make_shared<std::string>(size - kPrefix, '\0');
  for (std::size_t i = kPrefix; i < size; ++i) (*block)[i - kPrefix] = static_cast<char>(filler(sender, seq, i));
  f.segments.push_back({nullptr, kPrefix});
  f.segments.push_back({reinterpret_cast<const std::byte*>(block->data()), block->size()});
  f.attached = std::move(block);
  f.header.kind = FrameKind::Envelope;
  f.header.sender = sender;
  f.header.length = static_cast<std::uint32_t>(size);
  return f;
}

// Two connections at the ends of a loopback socket, each served by a network thread of its own (as
// in two processes); the receiving end reads once start_receiving() is called.
struct Loopback {
  Loopback(Connection::Handler& sender, Connection::Handler& receiver) {
    asio::ip::tcp::acceptor acceptor(io, {asio::ip::address_v4::loopback(), 0});
    asio::ip::tcp::socket out(io), in(reading_io);
    out.connect(acceptor.local_endpoint());
    acceptor.accept(in);
    sending = std::make_shared<Connection>(std::move(out), sender, 1 << 24);
    receiving = std::make_shared<Connection>(std::move(in), receiver, 1 << 24);
    sending->authenticated = receiving->authenticated = true;
    sending->start();
    network = std::thread([this] { io.run(); });
    reading_network = std::thread([this] { reading_io.run(); });
  }
  ~Loopback() {
    sending->close("done");
    receiving->close("done");
    guard.reset();
    reading_guard.reset();
    network.join();
    reading_network.join();
  }
  void start_receiving() {
    asio::post(reading_io, [this] { receiving->start(); });
  }
  // Waits at most 30 s for `done()`, read under `mu`.
  template <class Done>
  static void wait(std::mutex& mu, Done done) {
    for (int k = 0; k < 3000; ++k) {
      {
        std::lock_guard lock(mu);
        if (done()) return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

  asio::io_context io, reading_io;
  asio::executor_work_guard<asio::io_context::executor_type> guard = asio::make_work_guard(io),
                                                             reading_guard = asio::make_work_guard(reading_io);
  std::shared_ptr<Connection> sending, receiving;
  std::thread network, reading_network;
};

TEST(Connection, FramesFromManyThreadsThroughASmallSocketBufferArriveWholeAndInOrder) {
  // The senders outrun the receiver, which checks every byte: the socket fills, frames leave in
  // pieces, and the queue and the direct path take turns. (Small socket buffers would stall
  // loopback TCP itself, whose segments are 64 kB.)
  Sender sender_handler;
  Receiver receiver;
  Loopback link(sender_handler, receiver);
  link.start_receiving();

  constexpr std::uint32_t kSenders = 4, kFrames = 1500;
  std::vector<std::thread> senders;
  for (std::uint32_t s = 0; s < kSenders; ++s)
    senders.emplace_back([&, s] {
      for (std::uint32_t k = 0; k < kFrames; ++k)
        link.sending->send(frame(s, k, kPrefix + 64 + (k * 7919 + s * 104729) % 40000));
    });
  for (auto& t : senders) t.join();
  Loopback::wait(receiver.mu, [&] { return receiver.frames == kSenders * kFrames || !receiver.error.empty(); });
  {
    std::lock_guard lock(receiver.mu);
    EXPECT_EQ(receiver.error, "");
    EXPECT_EQ(receiver.frames, kSenders * kFrames);
  }
}

// Records the order frames arrive in, as (sender, sequence number).
struct Arrivals : Clocked {
  std::mutex mu;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> order;
  void on_frame(Connection&, const FrameHeader&, std::span<const std::byte> body) override {
    std::uint32_t sender = 0, seq = 0;
    std::memcpy(&sender, body.data(), sizeof sender);
    std::memcpy(&seq, body.data() + sizeof sender, sizeof seq);
    std::lock_guard lock(mu);
    order.emplace_back(sender, seq);
  }
  void on_closed(Connection&, const std::string&) override {}
  std::size_t place(std::uint32_t sender, std::uint32_t seq) {
    return static_cast<std::size_t>(std::find(order.begin(), order.end(), std::pair{sender, seq}) - order.begin());
  }
};

// The receiver reads nothing until everything is queued, so the socket's buffers fill and frames
// wait in the connection's queue: bulk B (26 MB, more than loopback buffers hold), ordered O, bulk C,
// then urgent U0 and U1. The urgent frames pass C only: they arrive after every B and O, before C,
// in their own order; the other frames arrive in the order they were sent.
TEST(Connection, UrgentFramesPassQueuedBulkFramesButNotOrderedOnes) {
  Sender sender_handler;
  Arrivals arrivals;
  Loopback link(sender_handler, arrivals);

  enum : std::uint32_t { B, O, C, U };
  constexpr std::uint32_t kBulk = 400, kLater = 10;
  auto send = [&](std::uint32_t kind, std::uint32_t seq, Lane lane) {
    Outgoing f = frame(kind, seq, 64 * 1024);
    f.lane = lane;
    link.sending->send(std::move(f));
  };
  for (std::uint32_t k = 0; k < kBulk; ++k) send(B, k, Lane::bulk);
  send(O, 0, Lane::ordered);
  for (std::uint32_t k = 0; k < kLater; ++k) send(C, k, Lane::bulk);
  send(U, 0, Lane::urgent);
  send(U, 1, Lane::urgent);
  link.start_receiving();

  constexpr std::size_t kAll = kBulk + 1 + kLater + 2;
  Loopback::wait(arrivals.mu, [&] { return arrivals.order.size() == kAll; });
  std::lock_guard lock(arrivals.mu);
  ASSERT_EQ(arrivals.order.size(), kAll);
  EXPECT_EQ(arrivals.place(B, kBulk - 1), kBulk - 1) << "bulk before the ordered frame kept its order";
  EXPECT_EQ(arrivals.place(O, 0), kBulk) << "the ordered frame is passed by nothing";
  EXPECT_EQ(arrivals.place(U, 0), kBulk + 1) << "urgent: after the ordered frame, before the bulk behind it";
  EXPECT_EQ(arrivals.place(U, 1), kBulk + 2) << "urgent frames keep their order";
  for (std::uint32_t k = 0; k < kLater; ++k) EXPECT_EQ(arrivals.place(C, k), kBulk + 3 + k);
}

// One thread sends bulk frames, another urgent ones, through a socket that takes a little at a time:
// urgent frames keep going in just behind batches being written, and every frame still arrives
// whole, each lane in its own order.
TEST(Connection, UrgentFramesPassingBatchesInFlightLeaveThemWhole) {
  Sender sender_handler;
  Receiver receiver;
  Loopback link(sender_handler, receiver);

  // The bulk fills the socket and the queue at once; the urgent frames trickle in while the
  // receiver, started meanwhile, drains them.
  constexpr std::uint32_t kFrames = 3000;
  auto lane = [&](std::uint32_t sender, Lane kind, std::size_t largest, std::chrono::microseconds pause) {
    for (std::uint32_t k = 0; k < kFrames; ++k) {
      Outgoing f = frame(sender, k, kPrefix + 64 + (k * 7919) % largest);  // sizes differ, so headers do
      f.lane = kind;
      link.sending->send(std::move(f));
      std::this_thread::sleep_for(pause);
    }
  };
  std::thread bulk(lane, 0, Lane::bulk, 60000, std::chrono::microseconds(0));
  std::thread urgent(lane, 1, Lane::urgent, 200, std::chrono::microseconds(100));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  link.start_receiving();
  bulk.join();
  urgent.join();
  Loopback::wait(receiver.mu, [&] { return receiver.frames == 2 * kFrames || !receiver.error.empty(); });
  {
    std::lock_guard lock(receiver.mu);
    EXPECT_EQ(receiver.error, "");
    EXPECT_EQ(receiver.frames, 2 * kFrames);
  }
}

// While the sending end's network thread is busy (a long step runs on it), frames queued behind a
// large one still leave when another thread pumps, as the heartbeat thread does: a node's liveness
// does not wait for its network thread.
TEST(Connection, QueuedFramesLeaveWhenPumpedWhileTheNetworkThreadIsBusy) {
  Sender sender_handler;
  Receiver receiver;
  Loopback link(sender_handler, receiver);
  link.start_receiving();
  std::promise<void> step_ends;
  asio::post(link.io, [busy = step_ends.get_future().share()] { busy.wait(); });

  constexpr std::uint32_t kFrames = 8;  // of 4 MiB: far more than the socket's buffers hold
  for (std::uint32_t k = 0; k < kFrames; ++k) link.sending->send(frame(0, k, 4 << 20));
  for (int k = 0; k < 3000; ++k) {
    {
      std::lock_guard lock(receiver.mu);
      if (receiver.frames == kFrames || !receiver.error.empty()) break;
    }
    link.sending->pump();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  {
    std::lock_guard lock(receiver.mu);
    EXPECT_EQ(receiver.error, "");
    EXPECT_EQ(receiver.frames, kFrames) << "the frames waited for the network thread";
  }
  step_ends.set_value();
}

// A frame's stamp is when it starts to leave, not when it was sent: the receiver reads nothing at
// first, so large frames fill the socket and a small one sent after them waits in the queue until
// the receiver starts. Each arrives with when its last byte was read.
struct Stamps : Clocked {
  std::mutex mu;
  std::vector<std::pair<double, double>> frames;  // (sent, received), in arrival order
  std::string closed;
  void on_frame(Connection& from, const FrameHeader& h, std::span<const std::byte>) override {
    std::lock_guard lock(mu);
    frames.emplace_back(h.sent, from.received());
  }
  void on_closed(Connection&, const std::string& reason) override {
    std::lock_guard lock(mu);
    closed = reason;
  }
};

TEST(Connection, FramesAreStampedWhenTheyStartToLeaveAndWhenTheirLastByteIsRead) {
  Sender sender_handler;
  Stamps stamps;
  Loopback link(sender_handler, stamps);
  constexpr std::uint32_t kLarge = 3;  // of 12 MiB: more than loopback's socket buffers hold
  const double before = seconds();
  for (std::uint32_t k = 0; k < kLarge; ++k) link.sending->send(frame(0, k, 12 << 20));
  const double queued = seconds();
  link.sending->send(frame(0, kLarge, 64));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double reading = seconds();
  link.start_receiving();
  Loopback::wait(stamps.mu, [&] { return stamps.frames.size() == kLarge + 1 || !stamps.closed.empty(); });
  std::lock_guard lock(stamps.mu);
  ASSERT_EQ(stamps.frames.size(), kLarge + 1) << stamps.closed;
  const auto [first_sent, first_received] = stamps.frames.front();
  const auto [small_sent, small_received] = stamps.frames.back();
  EXPECT_GE(first_sent, before);
  EXPECT_LE(first_sent, queued) << "the first frame started to leave as it was sent";
  EXPECT_GE(small_sent, reading) << "the small one when the socket took it, once the receiver read";
  EXPECT_GE(first_received, reading);
  EXPECT_GE(small_received, small_sent);
  EXPECT_GE(small_received, stamps.frames[kLarge - 1].second);
}

}  // namespace
}  // namespace dps::net
