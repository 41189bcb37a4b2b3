// Lane: how a message may pass others on the way between two nodes. Messages leave in the order they
// were sent, except that an urgent one passes the bulk ones still waiting: never one already on its
// way, nor an ordered or an urgent one. The split-frame handshake (Register, Grant) is urgent: a
// merge waits on it, and it must not wait behind the megabytes of jobs a split has queued.
// LaneQueue keeps that order for the messages waiting on one connection, real or simulated.
//
//   LaneQueue<Outgoing> waiting;
//   waiting.push(std::move(frame), lane_of(envelope.kind));   // net/connection.cpp
//   engine.transfer(0, 1, bytes, done, Lane::urgent);          // sim/engine.hpp
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <utility>

namespace dps {

enum class Lane : std::uint8_t {
  ordered,  // passes nothing and is never passed
  bulk,     // an urgent message may pass it while it waits
  urgent,   // passes the bulk messages waiting before it
};

// The messages waiting on a connection, in the order they leave. Urgent ones are inserted, so
// nothing may point into it.
template <class T>
class LaneQueue {
 public:
  void push(T item, Lane lane) {
    if (lane == Lane::urgent) {
      items_.insert(items_.begin() + static_cast<std::ptrdiff_t>(pinned_), std::move(item));
      ++pinned_;  // urgent messages keep their order among themselves
      return;
    }
    items_.push_back(std::move(item));
    if (lane == Lane::ordered) pinned_ = items_.size();
  }
  bool empty() const noexcept { return items_.empty(); }
  T& front() noexcept { return items_.front(); }
  void pop_front() {
    items_.pop_front();
    if (pinned_ > 0) --pinned_;
  }
  // Everything waiting, which leaves the queue empty.
  std::deque<T> take() {
    pinned_ = 0;
    return std::exchange(items_, {});
  }

 private:
  std::deque<T> items_;
  std::size_t pinned_ = 0;  // the first items, which urgent ones do not pass
};

}  // namespace dps
