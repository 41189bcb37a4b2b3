// Connection: frames sent from several threads at once, through a socket that takes a little at a
// time, arrive whole and in each sender's order.
#include "dps/net/connection.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dps::net {
namespace {

// Frame body: sender, sequence number, then bytes that depend on both.
constexpr std::size_t kPrefix = 2 * sizeof(std::uint32_t);
std::byte filler(std::uint32_t sender, std::uint32_t seq, std::size_t i) {
  return static_cast<std::byte>((sender * 131 + seq * 31 + i) & 0xff);
}

struct Receiver : Connection::Handler {
  std::mutex mu;
  std::map<std::uint32_t, std::uint32_t> next;  // by sender: the sequence number expected
  std::size_t frames = 0;
  std::string error;
  void on_frame(Connection&, const FrameHeader& h, std::span<const std::byte> body) override {
    std::lock_guard lock(mu);
    std::uint32_t sender = 0, seq = 0;
    std::memcpy(&sender, body.data(), sizeof sender);
    std::memcpy(&seq, body.data() + sizeof sender, sizeof seq);
    if (sender != h.sender) error = "body of sender " + std::to_string(sender) + " in a frame of " + std::to_string(h.sender);
    if (seq != next[sender]++) error = "sender " + std::to_string(sender) + ": frame " + std::to_string(seq) + " out of order";
    for (std::size_t i = kPrefix; i < body.size() && error.empty(); ++i)
      if (body[i] != filler(sender, seq, i)) error = "frame " + std::to_string(seq) + " damaged at byte " + std::to_string(i);
    ++frames;
  }
  void on_closed(Connection&, const std::string& reason) override {
    std::lock_guard lock(mu);
    if (error.empty()) error = "closed: " + reason;
  }
};
struct Sender : Connection::Handler {
  void on_frame(Connection&, const FrameHeader&, std::span<const std::byte>) override {}
  void on_closed(Connection&, const std::string&) override {}
};

// A frame whose head holds the prefix and whose block is an external segment (as a LargeArray's).
Outgoing frame(std::uint32_t sender, std::uint32_t seq, std::size_t size) {
  Outgoing f;
  f.head.resize(kPrefix);
  std::memcpy(f.head.data(), &sender, sizeof sender);
  std::memcpy(f.head.data() + sizeof sender, &seq, sizeof seq);
  f.attached.resize(size - kPrefix);
  for (std::size_t i = kPrefix; i < size; ++i) f.attached[i - kPrefix] = static_cast<char>(filler(sender, seq, i));
  f.segments.push_back({nullptr, kPrefix});
  f.segments.push_back({reinterpret_cast<const std::byte*>(f.attached.data()), f.attached.size()});
  f.header.kind = FrameKind::Envelope;
  f.header.sender = sender;
  f.header.length = static_cast<std::uint32_t>(size);
  return f;
}

TEST(Connection, FramesFromManyThreadsThroughASmallSocketBufferArriveWholeAndInOrder) {
  asio::io_context io;
  asio::ip::tcp::acceptor acceptor(io, {asio::ip::address_v4::loopback(), 0});
  asio::ip::tcp::socket out(io), in(io);
  out.connect(acceptor.local_endpoint());
  acceptor.accept(in);
  // The senders outrun the receiver, which checks every byte: the socket fills, frames leave in
  // pieces, and the queue and the direct path take turns. (Small socket buffers would stall
  // loopback TCP itself, whose segments are 64 kB.)
  Sender sender_handler;
  Receiver receiver;
  auto sending = std::make_shared<Connection>(std::move(out), sender_handler, 1 << 24);
  auto receiving = std::make_shared<Connection>(std::move(in), receiver, 1 << 24);
  sending->authenticated = receiving->authenticated = true;
  sending->start();
  receiving->start();
  auto guard = asio::make_work_guard(io);
  std::thread network([&] { io.run(); });

  constexpr std::uint32_t kSenders = 4, kFrames = 1500;
  std::vector<std::thread> senders;
  for (std::uint32_t s = 0; s < kSenders; ++s)
    senders.emplace_back([&, s] {
      for (std::uint32_t k = 0; k < kFrames; ++k) sending->send(frame(s, k, kPrefix + 64 + (k * 7919 + s * 104729) % 40000));
    });
  for (auto& t : senders) t.join();
  for (int wait = 0; wait < 3000; ++wait) {  // at most 30 s
    {
      std::lock_guard lock(receiver.mu);
      if (receiver.frames == kSenders * kFrames || !receiver.error.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  {
    std::lock_guard lock(receiver.mu);
    EXPECT_EQ(receiver.error, "");
    EXPECT_EQ(receiver.frames, kSenders * kFrames);
  }
  sending->close("done");
  receiving->close("done");
  guard.reset();
  network.join();
}

}  // namespace
}  // namespace dps::net
