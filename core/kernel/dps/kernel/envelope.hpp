// Envelope: what travels between DPS threads. A data envelope carries one object to one vertex of a
// graph, with the stack of split frames it descends from; control envelopes carry the frame protocol
// (a merge registering with its split, frame close, flow-control credit) and thread management.
//
// Every envelope lives in exactly one place at a time (a mailbox, an operation's input queue, the
// wire), so a payload is moved from its producer to its consumer and never copied.
#pragma once

#include "dps/ids.hpp"
#include "dps/kernel/determinants.hpp"
#include "dps/kernel/lane.hpp"
#include "dps/payload.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>

namespace dps {

class Thread;
struct GraphCore;

// One execution of a split (or stream): the objects it posts carry this frame until the matching merge.
struct Frame {
  FrameId id = 0;
  std::uint64_t home = 0;        // uid of the thread running the producer; it keeps the frame's count and credit
  std::uint64_t parent_seq = 0;  // position of the producer's input in the enclosing frame
};

// A stack of frames, inline up to kInline deep (nesting deeper than that is rare and still works).
class FrameStack {
 public:
  static constexpr std::uint32_t kInline = 3;

  FrameStack() = default;
  FrameStack(const FrameStack& other) { assign(other); }
  FrameStack& operator=(const FrameStack& other) {
    if (this != &other) assign(other);
    return *this;
  }
  FrameStack(FrameStack&& other) noexcept
      : size_(other.size_), capacity_(other.capacity_), heap_(std::move(other.heap_)) {
    std::copy_n(other.inline_, kInline, inline_);
    other.size_ = 0;
    other.capacity_ = kInline;
  }
  FrameStack& operator=(FrameStack&& other) noexcept {
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, kInline);
    heap_ = std::move(other.heap_);
    std::copy_n(other.inline_, kInline, inline_);
    return *this;
  }

  bool empty() const noexcept { return size_ == 0; }
  std::uint32_t size() const noexcept { return size_; }
  const Frame& top() const noexcept { return data()[size_ - 1]; }
  const Frame& operator[](std::uint32_t i) const noexcept { return data()[i]; }
  void pop() noexcept { --size_; }
  void push(const Frame& f) {
    if (size_ == capacity_) grow();
    data()[size_++] = f;
  }

 private:
  Frame* data() noexcept { return heap_ ? heap_.get() : inline_; }
  const Frame* data() const noexcept { return heap_ ? heap_.get() : inline_; }
  void assign(const FrameStack& other) {
    size_ = 0;
    if (other.size_ > capacity_) {
      heap_.reset(new Frame[other.size_]);
      capacity_ = other.size_;
    }
    std::copy_n(other.data(), other.size_, data());
    size_ = other.size_;
  }
  void grow() {
    std::unique_ptr<Frame[]> bigger(new Frame[capacity_ * 2]);
    std::copy_n(data(), size_, bigger.get());
    heap_ = std::move(bigger);
    capacity_ *= 2;
  }

  std::uint32_t size_ = 0;
  std::uint32_t capacity_ = kInline;
  Frame inline_[kInline];
  std::unique_ptr<Frame[]> heap_;
};

enum class Message : std::uint8_t {
  Data,      // payload for `vertex` of `graph`
  Register,  // merge/stream side -> frame home: `peer` received objects of `frame`
  Grant,     // home -> registrant: `peer` owns `frame` (count = -1 while the producer still runs)
  Close,     // home -> owner: the producer of `frame` finished after posting `count` objects
  Credit,    // owner -> home: `count` objects of `frame` were consumed
  Done,      // owner -> home: the consumer of `frame` finished; no object of it remains anywhere
  Release,   // home -> forwarders: forget `frame`
  Abort,     // runtime -> every thread: `call` failed; drop its work
  Retire,    // runtime -> thread: it left its collection; drain and hand back the state
  Migrate,   // runtime -> thread: move to node `count` with its state
  Snapshot,  // runtime -> thread: its state's image to the payload's ImageBack at its next rest; it stays
  // Fault tolerance (recovery_log.hpp):
  Covered,        // receiver `peer` -> sender: its checkpoint covers incarnation `frame` up to link `count`
  Stored,         // backend -> thread: its checkpoint `count` is held by another node
  Resend,         // runtime -> thread: send again what it keeps for thread `peer` (0: it was rebuilt, as
                  // were the threads in the payload)
  Rejoin,         // thread `peer` -> a rebuilt thread: it sent `count` copies again, up to link `seq`; the
                  // slots it holds of frames homed there are the payload (FrameClaims)
  CheckpointNow,  // a frame's home -> its merge's owner: it waits for Done to retire or migrate
};

// What a control message (credit, frame registration...) counts on the wire, in traces and in the simulator.
constexpr std::size_t kControlWireBytes = 32;

// Between nodes, data may be passed by the split-frame handshake (lane.hpp). Nothing depends on a
// Register or Grant arriving after data sent before it: a slot takes data in every role, and a home
// answers Register for as long as its frame has objects anywhere.
constexpr Lane lane_of(Message kind) noexcept {
  switch (kind) {
    case Message::Data: return Lane::bulk;
    case Message::Register:
    case Message::Grant: return Lane::urgent;
    default: return Lane::ordered;
  }
}

// Under fault tolerance, a data object's sender and its number on the link from that sender
// (recovery_log.hpp); zero otherwise.
struct Stamp {
  std::uint64_t from = 0;       // the sending thread's uid (0: the caller, or no stamp)
  std::uint64_t link = 0;       // incarnation << 40 | number: one sender's objects to one receiver, in order
  std::uint32_t epoch = 0;      // the sender's checkpoints taken when it sent it (kFinal: never sent again)
  std::uint32_t committed = 0;  // ... and held by other nodes: what this incarnation sent before is final
  std::uint32_t base = 0;       // the checkpoint its incarnation was rebuilt from: what earlier ones sent
                                // before it is final
  std::uint64_t time = 0;       // the sender's Lamport clock: a rebuilt receiver handles again in its order
  bool earlier_life = false;    // a copy a rebuilt sender sends again of what it sent before its rebuild

  static constexpr std::uint32_t kFinal = ~std::uint32_t{0};
  static constexpr int kIncarnationShift = 40;
  std::uint32_t incarnation() const noexcept { return static_cast<std::uint32_t>(link >> kIncarnationShift); }
  std::uint64_t number() const noexcept { return link & ((std::uint64_t{1} << kIncarnationShift) - 1); }
};

struct Envelope final {  // final: thread caches recycle blocks of exactly this size
  static void* operator new(std::size_t bytes);
  static void operator delete(void* p) noexcept;

  Envelope* next = nullptr;  // mailbox link
  Message kind = Message::Data;
  std::uint32_t vertex = 0;
  const GraphCore* graph = nullptr;
  CallId call = 0;
  std::uint64_t seq = 0;  // position of this object in its innermost frame (routes use it)
  FrameStack frames;
  Payload payload;
  Stamp stamp;
  // Under fault tolerance, orders of handling the receiver was not told yet (data), or what the
  // sender knows of a rebuilt receiver's (Rejoin).
  std::unique_ptr<detail::Determinants> determinants;
  // control fields
  FrameId frame = 0;
  std::uint64_t peer = 0;  // a thread's uid (0: none)
  std::int64_t count = 0;
  bool credit = false;  // Grant: return a Credit for every consumed object; Credit: for a dropped duplicate;
                        // Rejoin: its sender was rebuilt too
};

}  // namespace dps
