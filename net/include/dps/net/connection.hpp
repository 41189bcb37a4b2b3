// Connection: one TCP connection between two node processes, carrying frames (frame.hpp) both ways.
// Its read path (Reader, net/src/connection_reader.cpp) runs on the network thread and hands each
// complete frame to the Handler. Its write path (Writer, net/src/connection_writer.cpp) runs on any
// thread: when nothing is queued the sender writes to the socket itself (no thread switch on the
// latency path); otherwise the frame joins a queue, written with gathered non-blocking writes
// whenever the socket takes more: by the network thread, which waits for that, or by any thread that
// pumps (the heartbeats, so that a network thread busy with a long step silences nobody). Frames
// leave in the order they were sent, but for urgent ones, which pass the bulk frames still queued
// (dps/lane.hpp); large blocks go from the objects that hold them (no copy). Each frame is stamped
// with the handler's clock as its first byte goes to the socket (FrameHeader::sent), and each frame
// received with the time its last byte was read (received()): a transfer's two ends.
//
//   auto c = std::make_shared<Connection>(std::move(socket), handler, limits);
//   c->start();                                      // reading begins
//   c->send(std::move(frame));                       // from any thread
//   c->pump();                                       // from any thread: write what waits, if it can
//   c->seal(std::move(last));                        // `last` is the final frame this end sends
#pragma once

#include "dps/kernel/envelope.hpp"
#include "dps/net/frame.hpp"
#include "dps/wire_archive.hpp"

#include <asio.hpp>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace dps::net {

// A frame on its way out. Its external segments point into `envelope` or `attached`, which live
// until the frame is written.
struct Outgoing {
  FrameHeader header;
  std::vector<std::byte> head;
  std::vector<WireWriter::Segment> segments;
  std::unique_ptr<Envelope> envelope;
  std::shared_ptr<const void> attached;  // what a directive's large blocks lie in (a thread's image, its checkpoint)
  Lane lane = Lane::ordered;

  std::size_t size() const noexcept { return FrameHeader::kSize + header.length; }
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    // On the network thread. `body` is valid during the call only.
    virtual void on_frame(Connection& from, const FrameHeader& header, std::span<const std::byte> body) = 0;
    // On the network thread, once: the connection is gone (`reason` says why).
    virtual void on_closed(Connection& connection, const std::string& reason) = 0;
    // Any thread: the clock frames are stamped with, sent and received (one read per write or read).
    virtual double now() const noexcept = 0;
  };

  static constexpr std::size_t kMaxHandshakeBody = 4096;  // the limit before authentication

  Connection(asio::ip::tcp::socket socket, Handler& handler, std::size_t max_body);
  ~Connection();

  void start();
  // Queues `frame` or writes it (a closed connection drops it: its loss is reported by on_closed).
  // False once the connection is sealed: `frame` is still the caller's, to send elsewhere.
  bool send(Outgoing&& frame);
  // Sends `last` and refuses every later frame: the peer learns from `last` that nothing follows.
  void seal(Outgoing&& last);
  // Writes what is queued as far as the socket takes it now, on the calling thread.
  void pump();
  // Closes the connection (from any thread); the handler hears of it with `reason`.
  void close(std::string reason);
  // Closes it once what is queued has been written (an orderly end: nothing sent is lost).
  void finish(std::string reason);

  std::uint32_t peer = UINT32_MAX;  // the node at the other end, once it said so
  bool authenticated = false;       // network thread only
  // Liveness, network thread: when bytes last arrived (a large frame arriving counts as it goes).
  std::chrono::steady_clock::time_point heard = std::chrono::steady_clock::now();
  // Whether anything was sent since the last call: heartbeats fill silences only.
  bool spoke() noexcept { return writer_.spoke(); }

  // During on_frame: the buffer the frame was read into when it was large enough to be read apart
  // (a large array may take it over, WireReader::adopt); null otherwise.
  WireBuffer* frame_buffer() noexcept { return reader_.frame_buffer(); }
  // During on_frame: when the frame's last byte was read, on the handler's clock.
  double received() const noexcept { return reader_.received(); }

  std::string remote() const;       // "address:port"
  asio::ip::tcp::socket& socket() noexcept { return socket_; }

 private:
  // The read path, on the network thread only: the bytes the socket gives cut into frames, each
  // handed to the handler as it completes; a large frame read into a buffer of its own.
  class Reader {
   public:
    explicit Reader(Connection& connection) : c_(connection) {}
    void start();
    void release();  // the connection closed: its buffers go (the backend keeps closed connections)
    WireBuffer* frame_buffer() noexcept { return apart_ ? &*apart_ : nullptr; }
    double received() const noexcept { return received_; }

   private:
    void read_more();
    void parse();
    void read_apart(const FrameHeader& h);  // a large frame: into a buffer of its own
    void read_rest();
    void deliver_apart();

    Connection& c_;
    std::vector<std::byte> in_;
    std::size_t begin_ = 0, end_ = 0;
    double received_ = 0;       // when the bytes being parsed were read
    std::uint64_t frames_ = 0;  // received, and the last one's header: what a bad frame follows
    FrameHeader last_{};
    std::optional<WireBuffer> apart_;  // the large frame being read apart, and how much of it came
    FrameHeader apart_header_{};
    std::size_t apart_have_ = 0;
    std::chrono::steady_clock::duration apart_spun_{};  // spent waiting for its bytes without sleeping
  };

  // The write path, from any thread: a frame goes to the socket from the sender's thread when
  // nothing waits, else joins the queue, which gathered non-blocking writes empty whenever the
  // socket takes more (the network thread waits for that; pump() writes from the calling thread).
  class Writer {
   public:
    explicit Writer(Connection& connection) : c_(connection) {}
    bool send(Outgoing&& frame, bool last);
    void pump();
    void finish(std::string reason);
    // The connection closed: nothing more is written. What waited is taken out, to be dropped.
    void close(std::deque<Outgoing>& queued, std::deque<Outgoing>& unwritten);
    bool spoke() noexcept { return spoke_.exchange(false, std::memory_order_relaxed); }

   private:
    // Under mu_: writes batch_ and queue_ as far as the socket takes them; written frames go to
    // `done` (released outside the lock). False when the socket is full; a failure leaves its
    // reason in `error`.
    bool flush(std::vector<Outgoing>& done, std::string& error);
    void await_writable();  // network thread: flushes once the socket takes more

    Connection& c_;
    std::mutex mu_;
    LaneQueue<Outgoing> queue_;   // waiting
    std::deque<Outgoing> batch_;  // taken from the queue to be written: urgent frames no longer pass them
    std::size_t sent_ = 0;        // bytes of batch_.front() already written
    bool writing_ = false;        // frames wait for the socket: senders queue, the network thread awaits it
    bool closed_ = false;
    bool sealed_ = false;         // this end sends nothing more
    std::string finishing_;       // network thread: close with this reason once the queue is written
    std::atomic<bool> spoke_{false};
  };

  void fail(const std::string& reason);  // network thread: the connection closes, once

  asio::ip::tcp::socket socket_;
  Handler& handler_;
  const std::size_t max_body_;
  std::string remote_;
  std::atomic<bool> reported_{false};
  Reader reader_{*this};
  Writer writer_{*this};
};

}  // namespace dps::net
