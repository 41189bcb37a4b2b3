// Connection's write path, from any thread: direct writes when nothing waits, else gathered
// non-blocking writes of the queue whenever the socket takes more.
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

constexpr std::size_t kMaxIov = 64;              // frames' segments gathered into one batch
constexpr std::size_t kMaxIovPerCall = IOV_MAX;  // a frame of many segments goes in several calls
// A batch taken from the queue cannot be passed: an urgent frame waits for at most this much bulk.
constexpr std::size_t kMaxBatch = 256 * 1024;

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

bool Connection::Writer::send(Outgoing&& frame, bool last) {
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
  frame.header.sent = c_.handler_.now();
  const std::size_t total = gather(frame, 0, iov);
  std::string error;
  const std::size_t n = write_some(c_.socket_.native_handle(), iov, error);
  if (n == total) return true;  // the usual case: written at once
  if (!error.empty()) {
    lock.unlock();
    c_.close(error);
    return true;
  }
  sent_ = n;
  writing_ = true;
  batch_.push_back(std::move(frame));
  lock.unlock();
  asio::post(c_.socket_.get_executor(), [self = c_.shared_from_this()] { self->writer_.await_writable(); });
  return true;
}

bool Connection::Writer::flush(std::vector<Outgoing>& done, std::string& error) {
  thread_local std::vector<iovec> iov;
  for (;;) {
    // The batch: what a write left unfinished, then waiting frames up to the limits.
    std::size_t bytes = 0, iovs = 0;
    for (const Outgoing& f : batch_) {
      bytes += f.size();
      iovs += 1 + f.segments.size();
    }
    const double now = queue_.empty() ? 0 : c_.handler_.now();  // when what joins the batch starts to leave
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
    const std::size_t n = write_some(c_.socket_.native_handle(), iov, error);
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

void Connection::Writer::await_writable() {
  c_.socket_.async_wait(asio::ip::tcp::socket::wait_write, [self = c_.shared_from_this()](const asio::error_code& ec) {
    if (ec == asio::error::operation_aborted) return;
    if (ec) return self->fail("send failed: " + ec.message());
    Writer& w = self->writer_;
    std::vector<Outgoing> done;
    std::string error;
    bool more;
    {
      std::lock_guard lock(w.mu_);
      if (w.closed_) return;
      more = !w.flush(done, error);
      // Decided under the same lock as the senders' check: once writing_ is false, they write directly.
      if (!more) w.writing_ = false;
    }
    done.clear();  // released outside the lock
    if (!error.empty()) return self->fail(error);
    if (more) return w.await_writable();
    if (!w.finishing_.empty()) self->fail(w.finishing_);
  });
}

void Connection::Writer::pump() {
  std::vector<Outgoing> done;
  std::string error;
  {
    std::lock_guard lock(mu_);
    if (closed_ || !writing_) return;
    flush(done, error);  // writing_ stays: the network thread's wait ends it
  }
  done.clear();
  if (!error.empty()) c_.close(error);
}

void Connection::Writer::finish(std::string reason) {
  asio::post(c_.socket_.get_executor(), [self = c_.shared_from_this(), reason = std::move(reason)]() mutable {
    Writer& w = self->writer_;
    bool idle;
    {
      std::lock_guard lock(w.mu_);
      idle = !w.writing_;
    }
    if (idle) return self->fail(reason);
    w.finishing_ = std::move(reason);
  });
}

void Connection::Writer::close(std::deque<Outgoing>& queued, std::deque<Outgoing>& unwritten) {
  std::lock_guard lock(mu_);
  closed_ = true;
  queued = queue_.take();
  unwritten.swap(batch_);
}

}  // namespace dps::net
