// Lane: how a message may pass others on the way between two nodes. Messages leave in the order they
// were sent, except that an urgent one passes the bulk ones still waiting: never one already on its
// way, nor an ordered or an urgent one. The split-frame handshake (Register, Grant) is urgent: a
// merge waits on it, and it must not wait behind the megabytes of jobs a split has queued.
//
//   Outgoing f;  f.lane = lane_of(envelope.kind);   // a real connection (net/connection.hpp)
//   engine.transfer(0, 1, bytes, done, Lane::urgent);  // a simulated one (sim/engine.hpp)
#pragma once

#include <cstdint>

namespace dps {

enum class Lane : std::uint8_t {
  ordered,  // passes nothing and is never passed
  bulk,     // an urgent message may pass it while it waits
  urgent,   // passes the bulk messages waiting before it
};

}  // namespace dps
