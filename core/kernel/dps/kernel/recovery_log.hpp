// What a thread records so that, when its node fails, it can be rebuilt on another node from its last
// checkpoint and go on as if nothing had happened (backup threads: Gerlach & Hersch, "Fault-tolerant
// parallel applications with Dynamic Parallel Schedules"; docs/fault-tolerance.md):
//  - its Outbox stamps every data object it sends with its uid and the next number on the link to
//    the receiver, and keeps a copy until the receiver's checkpoint covers it; a rebuilt receiver is
//    sent the copies again;
//  - its Inbox handles each sender's objects once and in link order (early ones wait), and drops the
//    objects a rebuilt sender sends again by their identity until the sender's checkpoints make them
//    final;
//  - a Checkpoint is its state, outbox and inbox between two operations, held by another node.
//
//   detail::Outbox out;
//   out.send(*e, sender.uid(), receiver.uid(), taken, committed);   // stamps and keeps
//   out.covered(receiver.uid(), incarnation, number);               // the receiver's checkpoint holds them
#pragma once

#include "dps/kernel/causal_log.hpp"
#include "dps/kernel/envelope.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dps::detail {

// A data object sent to another thread, as its receiver would get it again.
struct KeptObject {
  Stamp stamp;
  const GraphCore* graph = nullptr;
  std::uint32_t vertex = 0;
  CallId call = 0;
  std::uint64_t seq = 0;
  FrameStack frames;
  // A copy of the payload (Payload::clone), never changed: a checkpoint shares it with the outbox.
  std::shared_ptr<const Payload> payload;

  Envelope* envelope() const;  // a new envelope that carries another copy
};

class Outbox {
 public:
  // Stamps `e`, from thread `from` to thread `to` (0: the caller), and keeps a copy of it.
  void send(Envelope& e, std::uint64_t from, std::uint64_t to, std::uint32_t epoch, std::uint32_t committed,
            std::uint64_t time);
  // `to`'s checkpoint holds what it received of `incarnation` up to link `number`: the copies go.
  void covered(std::uint64_t to, std::uint32_t incarnation, std::uint64_t number);
  // New envelopes with what it keeps for `to` (for every receiver when 0), in link order.
  std::vector<std::pair<std::uint64_t, Envelope*>> copies(std::uint64_t to) const;
  // Rebuilt as `incarnation` from checkpoint `base`: links are numbered afresh, so nothing it sends
  // now passes for earlier objects.
  void restart(std::uint32_t incarnation, std::uint32_t base);
  std::uint32_t incarnation() const noexcept { return incarnation_; }
  std::size_t kept() const noexcept;
  std::size_t bytes() const noexcept;  // of the copies

  template <class Archive>
  void serialize(Archive& a) {  // a checkpoint's image between processes (net/)
    a(incarnation_, base_, numbered_, kept_);
  }

 private:
  std::uint32_t incarnation_ = 0, base_ = 0;
  std::unordered_map<std::uint64_t, std::uint64_t> numbered_;  // by receiver: last number of this incarnation
  std::map<std::uint64_t, std::deque<KeptObject>> kept_;       // by receiver, in link order
};

class Inbox {
 public:
  // What a checkpoint records of it.
  struct Record {
    std::map<std::pair<std::uint64_t, std::uint32_t>, std::uint64_t> handled;  // (sender, incarnation) -> number
    // ... and numbers past it handled out of their link's order (a replay's script said so).
    std::map<std::pair<std::uint64_t, std::uint32_t>, std::set<std::uint64_t>> ahead;
    // Identities of objects from senders that may send them again (rebuilt from an older checkpoint),
    // with the sender's incarnation and epoch when it last sent them. A rebuilt sender sends again what
    // it sent after the checkpoint it was rebuilt from, under its new incarnation.
    struct Sent {
      std::uint32_t incarnation, epoch;
      bool operator==(const Sent&) const = default;
    };
    struct Seen {
      std::unordered_map<std::uint64_t, Sent> ids;
      std::deque<std::pair<Sent, std::uint64_t>> order;  // as they came
      std::map<std::uint32_t, std::uint32_t> bases;      // by incarnation: the checkpoint it was rebuilt from
    };
    std::unordered_map<std::uint64_t, Seen> seen;
  };
  // Duplicate: a number of its link handled before (one life of its sender sent it twice: a copy and
  // the object itself); Again: an object a rebuilt sender sent again (its own copy of what its earlier
  // life sent, or the same object sent anew), handled before from its earlier life.
  enum class Verdict : std::uint8_t { Handle, Early, Duplicate, Again };

  Inbox() = default;
  Inbox(const Inbox&) = delete;
  Inbox& operator=(const Inbox&) = delete;
  ~Inbox() { clear_early(); }

  // Handle: `e` is next on its link (its successor may wait: next()), or `out_of_turn`; Early: the
  // inbox holds it until its turn; Duplicate: handled before, the caller drops it. Unstamped objects
  // are handled.
  Verdict admit(Envelope* e, bool out_of_turn = false);
  Envelope* next(const Stamp& handled);  // the object that waited for `handled`, if any
  const Record& record() const noexcept { return record_; }
  void restore(const Record& record);  // what waited goes: its senders send it again
  std::vector<Envelope*> take_early();  // what waits, to follow its thread to another process
  template <class F>
  void for_each_early(F&& f) const {
    for (const auto& [key, e] : early_) f(static_cast<const Envelope&>(*e));
  }

 private:
  void clear_early();

  Record record_;
  std::map<std::pair<std::uint64_t, std::uint64_t>, Envelope*> early_;  // (sender, link)
  std::unordered_map<std::uint64_t, std::uint32_t> latest_;            // by sender: its latest incarnation
};

// The split-frame protocol under recovery (frames.cpp). A frame's home keeps it, closed, until its
// merge's owner holds a checkpoint taken after the merge ended (so a rebuilt owner can always run it
// again); a checkpoint holds those frames, and the Done messages its owner still owes.
struct KeptFrame {
  FrameId id = 0;
  CallId call = 0;
  std::int64_t posted = 0;
  std::uint64_t owner = 0;
  std::vector<std::uint64_t> forwarders;
  bool credits = false;  // its producer had a window
};
struct FrameDone {
  std::uint64_t home = 0;
  CallId call = 0;
  FrameId frame = 0;
};
// What a thread that survived tells a rebuilt one of the frames that one is the home of: it holds
// a slot of `frame`, owned by `owner` (itself: it runs the merge; 0: it awaits the home's grant).
struct FrameClaim {
  FrameId frame = 0;
  std::uint64_t holder = 0;
  std::uint64_t owner = 0;
};

// Where a thread of a failed node is rebuilt (node 0 decides, every process rebuilds: Runtime::rebuild).
struct Rebuilt {
  std::uint64_t thread = 0;
  NodeId at = 0;  // the node that holds its checkpoint
  std::uint32_t incarnation = 0;
};

// A thread at a point between two operations, as another node holds it.
struct Checkpoint {
  std::uint64_t thread = 0;
  std::uint32_t epoch = 0;  // the thread's checkpoints so far, this one included
  std::string state;        // StateBox::save(), empty for a stateless thread
  Outbox outbox;
  Inbox::Record inbox;
  std::uint64_t clock = 0;          // its Lamport clock
  std::uint32_t frames_opened = 0;  // frame ids are the thread's uid and this count: the same when run again
  std::vector<KeptFrame> frames;
  std::vector<FrameDone> dones;
  std::uint64_t determined = 0;  // the data objects it handled in its life
  CausalLog log;

  std::size_t bytes() const noexcept;  // what travels to the node that holds it
};

// A thread's records as they go with it to another process when it migrates (net/): a checkpoint
// that is not yet held (a new one, unless it keeps no backup: then its records as they are), the
// last one held, what those on their way cover, and the Done messages they release.
struct MovingRecords {
  std::shared_ptr<Checkpoint> checkpoint = std::make_shared<Checkpoint>();
  bool new_checkpoint = false;  // the node it leaves holds it until a later one is held
  std::uint32_t committed = 0;
  std::map<std::uint32_t, std::map<std::pair<std::uint64_t, std::uint32_t>, std::uint64_t>> covering;
  std::map<std::uint32_t, std::vector<FrameDone>> dones;
  std::map<std::uint32_t, std::uint64_t> determined;  // by epoch: the objects they cover
};

// The buffer of a thread's last checkpoint's state, handed back by whoever let the checkpoint go last
// (the frame that sent it, on the network thread): the next state is written over pages already in.
struct SpareBuffer {
  std::mutex mu;
  std::string buffer;
};

// What thread `from` (0: the caller) tells a rebuilt thread after sending it `copies` again (Message::Rejoin).
Envelope* rejoin_message(std::uint64_t from, const std::vector<std::pair<std::uint64_t, Envelope*>>& copies,
                         std::vector<FrameClaim> claims, bool rebuilt_too);

// The identity of a data object: the same when a rebuilt thread sends it again.
std::uint64_t identity(const Envelope& e) noexcept;

}  // namespace dps::detail
