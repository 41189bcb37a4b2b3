// Connection: framed reads on the network thread; direct or queued gathered writes.
#include "dps/net/connection.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <string>
#include <vector>

namespace dps::net {

namespace {

constexpr std::size_t kReadChunk = 256 * 1024;
constexpr std::size_t kMaxIov = 64;             // frames' segments gathered into one batch
constexpr std::size_t kMaxIovPerCall = IOV_MAX;  // a frame of many segments goes in several calls
// A batch taken from the queue cannot be passed: an urgent frame waits for at most this much bulk.
constexpr std::size_t kMaxBatch = 256 * 1024;
constexpr std::size_t kKeepBuffer = 16 << 20;  // receive buffers up to this size are reused
// A frame this large is read into a buffer of its own, which a large array can take over (no copy).
constexpr std::size_t kReadApart = 64 * 1024;
constexpr auto kKeepReading = std::chrono::microseconds(50);
constexpr auto kReadBurst = std::chrono::microseconds(1000);

// The iovecs of `f` from byte `skip` on; returns how many bytes they hold.
std::size_t gather(const Outgoing& f, std::size_t skip, std::vector<iovec>& iov) {
  std::size_t total = 0;
  auto add = [&](const void* p, std::size_t n) {
    if (skip >= n) {
      skip -= n;
      return;
    }
    iov.push_back({const_cast<void*>(p), n - skip});
    iov.back().iov_base = static_cast<char*>(iov.back().iov_base) + skip;
    total += n - skip;
    skip = 0;
  };
  add(&f.header, sizeof f.header);
  std::size_t at = 0;
  for (const auto& s : f.segments) {
    if (s.external) {
      add(s.external, s.size);
    } else {
      add(f.head.data() + at, s.size);
      at += s.size;
    }
  }
  return total;
}

// Writes `iov` without blocking: the bytes the socket took (0 when it is full); a failure leaves its
// reason in `error`.
std::size_t write_some(int socket, const std::vector<iovec>& iov, std::string& error) {
  msghdr msg{};
  msg.msg_iov = const_cast<iovec*>(iov.data());
  msg.msg_iovlen = std::min(iov.size(), kMaxIovPerCall);
  const ssize_t n = ::sendmsg(socket, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
  if (n >= 0) return static_cast<std::size_t>(n);
  if (errno != EAGAIN && errno != EWOULDBLOCK) error = std::string("send failed: ") + std::strerror(errno);
  return 0;
}

}  // namespace

Connection::Connection(asio::ip::tcp::socket socket, Handler& handler, std::size_t max_body)
    : socket_(std::move(socket)), handler_(handler), max_body_(max_body) {
  asio::error_code ec;
  socket_.set_option(asio::ip::tcp::no_delay(true), ec);
  auto ep = socket_.remote_endpoint(ec);
  remote_ = ec ? "?" : ep.address().to_string() + ":" + std::to_string(ep.port());
}

Connection::~Connection() = default;

std::string Connection::remote() const { return remote_; }

void Connection::start() {
  in_.resize(kReadChunk);
  read_more();
}

void Connection::read_more() {
  if (in_.size() - end_ < kReadChunk / 4) {
    // Room to read: move what is left to the front, or grow.
    if (begin_ > 0) {
      std::memmove(in_.data(), in_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (in_.size() - end_ < kReadChunk / 4) in_.resize(in_.size() + kReadChunk);
  }
  socket_.async_read_some(asio::buffer(in_.data() + end_, in_.size() - end_),
                          [self = shared_from_this()](const asio::error_code& ec, std::size_t n) {
                            if (ec) return self->fail(ec == asio::error::eof ? "closed by peer" : ec.message());
                            self->end_ += n;
                            self->heard = std::chrono::steady_clock::now();
                            self->received_ = self->handler_.now();  // every frame parse() finds ends here
                            self->parse();
                          });
}

void Connection::parse() {
  while (end_ - begin_ >= FrameHeader::kSize) {
    FrameHeader h;
    std::memcpy(&h, in_.data() + begin_, sizeof h);
    // Before authentication only the handshake's small frames: a stranger's header must not make
    // this process allocate a large buffer.
    if (auto reason = h.check(authenticated ? max_body_ : kMaxHandshakeBody)) {
      if (frames_ > 0)
        *reason += " (frame " + std::to_string(frames_ + 1) + ", after one of kind " +
                   std::to_string(static_cast<int>(last_.kind)) + " and " + std::to_string(last_.length) + " bytes)";
      return fail(*reason);
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
    handler_.on_frame(*this, h, std::span<const std::byte>(in_.data() + begin_ + FrameHeader::kSize, h.length));
    if (reported_.load(std::memory_order_relaxed)) return;  // the handler closed us
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

void Connection::read_apart(const FrameHeader& h) {
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
void Connection::read_rest() {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  auto last = start;
  while (apart_have_ < apart_->size() && apart_spun_ + (last - start) < kReadBurst) {
    const ssize_t n = ::recv(socket_.native_handle(), apart_->data() + apart_have_, apart_->size() - apart_have_,
                             MSG_DONTWAIT);
    if (n > 0) {
      apart_have_ += static_cast<std::size_t>(n);
      last = clock::now();
      heard = last;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && clock::now() - last < kKeepReading) continue;
    break;  // nothing for a while, the end, or an error: the asynchronous read says which
  }
  apart_spun_ += clock::now() - start;
  if (apart_have_ == apart_->size()) return deliver_apart();
  socket_.async_read_some(asio::buffer(apart_->data() + apart_have_, apart_->size() - apart_have_),
                          [self = shared_from_this()](const asio::error_code& ec, std::size_t n) {
                            if (ec) return self->fail(ec == asio::error::eof ? "closed by peer" : ec.message());
                            self->heard = std::chrono::steady_clock::now();
                            self->apart_have_ += n;
                            if (self->apart_have_ < self->apart_->size()) return self->read_rest();
                            self->deliver_apart();
                          });
}

void Connection::deliver_apart() {
  received_ = handler_.now();  // its last byte was just read
  ++frames_;
  last_ = apart_header_;
  handler_.on_frame(*this, apart_header_, std::span<const std::byte>(apart_->data(), apart_->size()));
  apart_.reset();  // freed, unless a large array took it over
  if (reported_.load(std::memory_order_relaxed)) return;  // the handler closed us
  read_more();
}

bool Connection::send(Outgoing&& frame) { return deliver(std::move(frame), false); }

void Connection::seal(Outgoing&& last) { (void)deliver(std::move(last), true); }

bool Connection::deliver(Outgoing&& frame, bool last) {
  if (!spoke_.load(std::memory_order_relaxed)) spoke_.store(true, std::memory_order_relaxed);
  std::unique_lock lock(mu_);
  if (sealed_) return false;
  sealed_ = last;
  if (closed_) return true;
  if (writing_) {
    const Lane lane = frame.lane;
    queue_.push(std::move(frame), lane);
    return true;
  }
  thread_local std::vector<iovec> iov;  // no allocation per send
  iov.clear();
  frame.header.sent = handler_.now();
  const std::size_t total = gather(frame, 0, iov);
  std::string error;
  const std::size_t n = write_some(socket_.native_handle(), iov, error);
  if (n == total) return true;  // the usual case: written at once
  if (!error.empty()) {
    lock.unlock();
    close(error);
    return true;
  }
  sent_ = n;
  writing_ = true;
  batch_.push_back(std::move(frame));
  lock.unlock();
  asio::post(socket_.get_executor(), [self = shared_from_this()] { self->await_writable(); });
  return true;
}

bool Connection::flush(std::vector<Outgoing>& done, std::string& error) {
  thread_local std::vector<iovec> iov;
  for (;;) {
    // The batch: what a write left unfinished, then waiting frames up to the limits.
    std::size_t bytes = 0, iovs = 0;
    for (const Outgoing& f : batch_) {
      bytes += f.size();
      iovs += 1 + f.segments.size();
    }
    const double now = queue_.empty() ? 0 : handler_.now();  // when what joins the batch starts to leave
    while (!queue_.empty() && iovs < kMaxIov && bytes < kMaxBatch) {
      bytes += queue_.front().size();
      iovs += 1 + queue_.front().segments.size();
      queue_.front().header.sent = now;
      batch_.push_back(std::move(queue_.front()));
      queue_.pop_front();
    }
    if (batch_.empty()) return true;
    iov.clear();
    std::size_t skip = sent_, total = 0;
    for (const Outgoing& f : batch_) {
      total += gather(f, skip, iov);
      skip = 0;
    }
    const std::size_t n = write_some(socket_.native_handle(), iov, error);
    if (!error.empty()) return false;
    // Whole frames written leave the batch; the next one may be part written.
    std::size_t left = sent_ + n;
    while (!batch_.empty() && left >= batch_.front().size()) {
      left -= batch_.front().size();
      done.push_back(std::move(batch_.front()));
      batch_.pop_front();
    }
    sent_ = left;
    if (n < total) return false;  // the socket is full
  }
}

void Connection::await_writable() {
  socket_.async_wait(asio::ip::tcp::socket::wait_write, [self = shared_from_this()](const asio::error_code& ec) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) return self->fail("send failed: " + ec.message());
    std::vector<Outgoing> done;
    std::string error;
    bool more;
    {
      std::lock_guard lock(self->mu_);
      if (self->closed_) return;
      more = !self->flush(done, error);
      // Decided under the same lock as the senders' check: once writing_ is false, they write directly.
      if (!more) self->writing_ = false;
    }
    done.clear();  // released outside the lock
    if (!error.empty()) return self->fail(error);
    if (more) return self->await_writable();
    if (!self->finishing_.empty()) self->fail(self->finishing_);
  });
}

void Connection::pump() {
  std::vector<Outgoing> done;
  std::string error;
  {
    std::lock_guard lock(mu_);
    if (closed_ || !writing_) return;
    flush(done, error);  // writing_ stays: the network thread's wait ends it
  }
  done.clear();
  if (!error.empty()) close(error);
}

void Connection::finish(std::string reason) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), reason = std::move(reason)]() mutable {
    bool idle;
    {
      std::lock_guard lock(self->mu_);
      idle = !self->writing_;
    }
    if (idle) return self->fail(reason);
    self->finishing_ = std::move(reason);
  });
}

void Connection::close(std::string reason) {
  asio::post(socket_.get_executor(), [self = shared_from_this(), reason = std::move(reason)] { self->fail(reason); });
}

void Connection::fail(const std::string& reason) {
  if (reported_.exchange(true)) return;
  std::deque<Outgoing> dropped, unwritten;
  {
    std::lock_guard lock(mu_);
    closed_ = true;
    dropped = queue_.take();
    unwritten.swap(batch_);
  }
  asio::error_code ec;
  socket_.shutdown(asio::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  std::vector<std::byte>().swap(in_);  // the backend keeps closed connections: not their buffers
  begin_ = end_ = 0;
  apart_.reset();
  handler_.on_closed(*this, reason);
}

}  // namespace dps::net
