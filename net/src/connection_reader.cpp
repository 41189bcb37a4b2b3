// Connection's read path, on the network thread: frames cut from what the socket gives, large ones
// read apart into a buffer of their own.
#include "dps/net/connection.hpp"

#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace dps::net {

namespace {

constexpr std::size_t kReadChunk = 256 * 1024;
constexpr std::size_t kKeepBuffer = 16 << 20;  // receive buffers up to this size are reused
// A frame this large is read into a buffer of its own, which a large array can take over (no copy).
constexpr std::size_t kReadApart = 64 * 1024;
constexpr auto kKeepReading = std::chrono::microseconds(50);
constexpr auto kReadBurst = std::chrono::microseconds(1000);

}  // namespace

void Connection::Reader::start() {
  in_.resize(kReadChunk);
  read_more();
}

void Connection::Reader::release() {
  std::vector<std::byte>().swap(in_);
  begin_ = end_ = 0;
  apart_.reset();
}

void Connection::Reader::read_more() {
  if (in_.size() - end_ < kReadChunk / 4) {
    // Room to read: move what is left to the front, or grow.
    if (begin_ > 0) {
      std::memmove(in_.data(), in_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (in_.size() - end_ < kReadChunk / 4) in_.resize(in_.size() + kReadChunk);
  }
  c_.socket_.async_read_some(asio::buffer(in_.data() + end_, in_.size() - end_),
                             [self = c_.shared_from_this()](const asio::error_code& ec, std::size_t n) {
                               if (ec) return self->fail(ec == asio::error::eof ? "closed by peer" : ec.message());
                               // Read before its writer failed it: what came is dropped with the buffer.
                               if (self->reported_.load(std::memory_order_relaxed)) return;
                               Reader& r = self->reader_;
                               r.end_ += n;
                               self->heard = std::chrono::steady_clock::now();
                               r.received_ = self->handler_.now();  // every frame parse() finds ends here
                               r.parse();
                             });
}

void Connection::Reader::parse() {
  while (end_ - begin_ >= FrameHeader::kSize) {
    FrameHeader h;
    std::memcpy(&h, in_.data() + begin_, sizeof h);
    // Before authentication only the handshake's small frames: a stranger's header must not make
    // this process allocate a large buffer.
    if (auto reason = h.check(c_.authenticated ? c_.max_body_ : kMaxHandshakeBody)) {
      if (frames_ > 0)
        *reason += " (frame " + std::to_string(frames_ + 1) + ", after one of kind " +
                   std::to_string(static_cast<int>(last_.kind)) + " and " + std::to_string(last_.length) + " bytes)";
      return c_.fail(*reason);
    }
    const std::size_t need = FrameHeader::kSize + h.length;
    if (end_ - begin_ < need && h.length >= kReadApart) return read_apart(h);
    if (end_ - begin_ < need) {
      if (in_.size() - begin_ < need) {  // make room for the whole frame
        std::memmove(in_.data(), in_.data() + begin_, end_ - begin_);
        end_ -= begin_;
        begin_ = 0;
        if (in_.size() < need + kReadChunk / 4) in_.resize(need + kReadChunk / 4);
      }
      break;
    }
    ++frames_;
    last_ = h;
    c_.handler_.on_frame(c_, h, std::span<const std::byte>(in_.data() + begin_ + FrameHeader::kSize, h.length));
    if (c_.reported_.load(std::memory_order_relaxed)) return;  // the handler closed us
    begin_ += need;
  }
  if (begin_ == end_) begin_ = end_ = 0;
  // A buffer grown for an exceptionally large frame is not kept once it is consumed.
  if (begin_ == 0 && end_ == 0 && in_.size() > kKeepBuffer) {
    in_.resize(kReadChunk);
    in_.shrink_to_fit();
  }
  read_more();
}

void Connection::Reader::read_apart(const FrameHeader& h) {
  apart_.emplace(h.length);
  apart_header_ = h;
  apart_have_ = end_ - begin_ - FrameHeader::kSize;  // the start of the body, already here
  apart_spun_ = {};
  std::memcpy(apart_->data(), in_.data() + begin_ + FrameHeader::kSize, apart_have_);
  begin_ = end_ = 0;
  read_rest();
}

// A large frame arrives in a burst: what is already here is taken at once, and the thread keeps
// taking what follows while it keeps coming (at most kKeepReading without a byte), rather than
// sleeping in epoll between the segments. It spins kReadBurst per frame at most, not per wake-up:
// a sender that writes slowly (its core shared with computing threads) would otherwise find its
// core's twin taken by this spinning reader for the whole transfer.
void Connection::Reader::read_rest() {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto last = start;
  while (apart_have_ < apart_->size() && apart_spun_ + (last - start) < kReadBurst) {
    const ssize_t n =
        ::recv(c_.socket_.native_handle(), apart_->data() + apart_have_, apart_->size() - apart_have_, MSG_DONTWAIT);
    if (n > 0) {
      apart_have_ += static_cast<std::size_t>(n);
      last = clock::now();
      c_.heard = last;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && clock::now() - last < kKeepReading) continue;
    break;  // nothing for a while, the end, or an error: the asynchronous read says which
  }
  apart_spun_ += clock::now() - start;
  if (apart_have_ == apart_->size()) return deliver_apart();
  c_.socket_.async_read_some(asio::buffer(apart_->data() + apart_have_, apart_->size() - apart_have_),
                             [self = c_.shared_from_this()](const asio::error_code& ec, std::size_t n) {
                               if (ec) return self->fail(ec == asio::error::eof ? "closed by peer" : ec.message());
                               if (self->reported_.load(std::memory_order_relaxed)) return;  // as in read_more
                               Reader& r = self->reader_;
                               self->heard = std::chrono::steady_clock::now();
                               r.apart_have_ += n;
                               if (r.apart_have_ < r.apart_->size()) return r.read_rest();
                               r.deliver_apart();
                             });
}

void Connection::Reader::deliver_apart() {
  received_ = c_.handler_.now();  // its last byte was just read
  ++frames_;
  last_ = apart_header_;
  c_.handler_.on_frame(c_, apart_header_, std::span<const std::byte>(apart_->data(), apart_->size()));
  apart_.reset();                                            // freed, unless a large array took it over
  if (c_.reported_.load(std::memory_order_relaxed)) return;  // the handler closed us
  read_more();
}

}  // namespace dps::net
