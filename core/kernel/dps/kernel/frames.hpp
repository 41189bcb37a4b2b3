// The split-frame protocol's records (Schaeli, Gerlach & Hersch, "A simulator for adaptive parallel applications", §2:
// a merge gets exactly the objects of its split).
//
// The thread that runs a split (or stream) is the *home* of the frame it opens: it counts the posted
// objects, holds the flow-control credit and decides which thread owns the matching merge instance.
// A thread receiving objects of a frame registers with the home; the first registrant becomes the
// owner and runs the merge, later ones forward what they receive to it. So however a route spreads a
// frame's objects, one merge instance sees all of them, each exactly once.
#pragma once

#include "dps/kernel/envelope.hpp"

#include <cstdint>
#include <vector>

namespace dps {
class Activity;
}

namespace dps::detail {

// On the producer's thread.
struct FrameHome {
  Activity* producer = nullptr;  // null once the split or stream finished
  CallId call = 0;
  std::int64_t posted = 0;
  bool closed = false;  // producer finished: `posted` is final
  std::uint64_t owner = 0;  // thread uids, as the envelopes name them
  std::vector<std::uint64_t> forwarders;
  std::uint32_t window = 0;
  std::int64_t in_flight = 0;  // posted, not yet consumed by the merge
  bool done = false;           // fault tolerance: its merge ended before a rebuilt producer ran again
  bool hastened = false;       // ... its owner was asked to checkpoint now
  std::int64_t dropped = 0;    // ... objects run again that their receivers had handled already
};

// On a thread that received objects of the frame for a merge or stream.
struct FrameSlot {
  enum class Role : std::uint8_t { Pending, Owner, Forwarder } role = Role::Pending;
  CallId call = 0;
  std::uint64_t home = 0;        // thread uids
  std::uint64_t owner = 0;       // forwarder: where objects go
  Activity* consumer = nullptr;  // owner: the merge or stream instance (null before start and after end)
  bool started = false;
  bool credits = false;            // the home has a window: return credit per consumed object
  std::int64_t received = 0;       // objects that reached the owner
  std::int64_t expected = -1;      // known once the producer finished
  std::vector<Envelope*> waiting;  // pending: objects held until the home answers

  bool complete() const noexcept { return expected >= 0 && received == expected; }
};

}  // namespace dps::detail
