// Thread: one DPS thread, the kernel object behind an element of a thread collection. It holds the
// user state and a mailbox, and runs as a serial strand: one atomic step at a time, on whatever OS
// thread its backend gives it. While one of its operations is suspended (waiting for input or
// credit), its other operations run. It is also the place of the split-frame protocol's records.
//
// Users never touch it directly: they see their state through `thread()` inside an operation, and
// manage threads through dps::Threads<State>. Backends call run().
#pragma once

#include "dps/kernel/activity.hpp"
#include "dps/kernel/cluster_link.hpp"
#include "dps/kernel/envelope_cache.hpp"
#include "dps/kernel/frames.hpp"
#include "dps/kernel/mailbox.hpp"
#include "dps/kernel/recovery_log.hpp"
#include "dps/thread_state.hpp"
#include "dps/kernel/envelope.hpp"
#include "dps/future.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace dps {

class Runtime;
class ThreadsCore;

class Thread {
 public:
  Thread(Runtime& runtime, ThreadsCore& collection, std::uint64_t uid, NodeId node,
         std::unique_ptr<detail::StateBox> state);
  ~Thread();
  Thread(const Thread&) = delete;
  Thread& operator=(const Thread&) = delete;

  Runtime& runtime() const noexcept { return runtime_; }
  ThreadsCore& collection() const noexcept { return collection_; }
  std::uint64_t uid() const noexcept { return uid_; }
  NodeId node() const noexcept { return node_.load(std::memory_order_acquire); }
  std::string name() const;  // "workers[2]", or "workers#7 (removed)"
  void* state() noexcept { return state_->get(); }

  // Backend side: run up to `budget` atomic steps (a message handled, or one resumption of a suspended
  // operation); true if work remains (schedule again). A simulator runs one step at a time. A thread
  // hosted by another process only forwards what reaches it. It also stops, with work left, after a
  // step that left `urgent` non-zero: urgent threads wait for the OS thread.
  bool run(std::size_t budget, const std::atomic<std::size_t>* urgent = nullptr);
  // Backend side: the thread now lives on `node` with the state `image` (after a migration).
  void relocate(NodeId node, const std::string& image);
  // Backend side: the thread left this process for `node` (its image was sent there).
  void depart(NodeId node);
  // Under fault tolerance, a thread that moves between processes takes its records along (recovery.cpp):
  //   auto records = t.records_to_move(state);   // as it leaves, with its state's image
  //   ... send them, then t.depart(to) ...
  //   t.records_sent(records);                   // whether it left or stayed
  //   there: t.relocate(node, std::move(records));
  bool keeps_records() const noexcept { return recovery_ != nullptr; }
  detail::MovingRecords records_to_move(std::string state);  // a new checkpoint, unless it keeps no backup
  // The new checkpoint is kept: here if it left (until its new node's first is held), by its buddy if
  // it stayed. Having left, what waited in its inbox follows it, and its records here go.
  void records_sent(const detail::MovingRecords& records);
  void relocate(NodeId node, detail::MovingRecords&& records);
  // Backend side: frames whose objects this thread forwards to their merge (they move with it).
  struct Forwarder {
    FrameId frame;
    CallId call;
    std::uint64_t owner;
  };
  std::vector<Forwarder> forwarders() const;
  void forward_frame(const Forwarder& f);

  // Backend side: how long its runs take, as the strands that run it saw. A backend may run a thread
  // whose last run was quick on the OS thread that delivers its message (no thread switch); never
  // one that ever ran long (a step that blocks the delivering thread delays every other message).
  enum class Pace : std::uint8_t { Unknown, Quick, Slow, Heavy };  // Heavy is for good
  Pace pace() const noexcept { return pace_.load(std::memory_order_relaxed); }
  void blocked() noexcept { pace_.store(Pace::Heavy, std::memory_order_relaxed); }  // it waited for a future
  void ran_for(double seconds) noexcept {
    constexpr double kQuick = 200e-6, kHeavy = 10e-3;
    if (pace() != Pace::Heavy)
      pace_.store(seconds > kHeavy ? Pace::Heavy : seconds > kQuick ? Pace::Slow : Pace::Quick, std::memory_order_relaxed);
  }

  // Envelope blocks freed while this thread ran, reused by its next allocations.
  detail::EnvelopeCache& envelope_cache() noexcept { return envelope_cache_; }
  void release_cached_envelopes() noexcept;  // on its strand, once it left this node (context.cpp)

  // Fault tolerance (recovery.cpp; recovery_log.hpp): on when the runtime's is, for the thread's life.
  void keep_records();
  // Whether its node's loss rebuilds it: not on node 0 (whose loss is fatal), nor without a backup.
  bool rebuildable() const noexcept;
  // Runtime side, after its node failed: the thread runs on `node` from `checkpoint` as `incarnation`;
  // what it held besides is dropped (its senders send it again).
  void restore(const detail::Checkpoint& checkpoint, NodeId node, std::uint32_t incarnation);
  // Its first checkpoint, before it ran (its state as created).
  void checkpoint();
  // Node 0, adding it on another node: the first checkpoint that node takes, from `state` as node 0
  // created it, kept by node 0 until another node holds one (its node may fail before sending it).
  void first_checkpoint(std::string state);
  // Backend side: its last checkpoint was lost with the node that held it; a new one when it next runs.
  void backup_lost() noexcept {
    if (recovery_) recovery_->last = -1;
  }

 private:
  friend class Runtime;
  friend bool detail::post_now(Activity&, Payload&);
  friend void detail::post_later(Activity&, Payload&);
  friend bool detail::input_ready(Activity&);
  friend void detail::wait_input(Activity&);
  friend Envelope* detail::take_input(Activity&);
  friend bool detail::nothing_waiting(Activity&);
  friend void detail::yield_to_waiting(Activity&);

  enum class Life : std::uint8_t { Active, Retiring, Retired };

  // thread.cpp: the strand, data dispatch, leaves, lifecycle
  bool forward();
  void handle(Envelope* e);
  void on_data(Envelope* e);
  void run_leaf(Envelope* e);
  void emit(Envelope* e, const std::string& poster);  // route to e->vertex and send, or complete the call
  void start_producer(Envelope* e);
  void reroute(Envelope* e);
  void fail(CallId call, const std::string& operation, const std::string& reason);
  void fail(const Activity& a, const std::string& reason);
  void on_abort(CallId call);
  void on_retire(Envelope* e);
  void on_snapshot(Envelope* e);
  void on_migrate(Envelope* e);
  void settle();  // finish a pending retirement or migration once nothing runs here; say when it is gone
  std::string saved_image(std::exception_ptr& error) const;  // the state's image, or why it could not be saved
  bool quiescent() const noexcept;
  bool checkpointable() const noexcept;  // as quiescent, but frames it homes may await their owner's Done
  // activity.cpp: operation instances
  Activity* create(const GraphCore& g, std::uint32_t vertex, CallId call);
  void make_ready(Activity& a);
  void resume(Activity& a);
  void finish(Activity& a);
  void destroy(Activity& a);
  void post(Activity& a, Payload&& value);
  void send_output(Activity& a, Payload&& value);
  bool has_credit(const Activity& a) const;
  // frames.cpp: the split-frame protocol
  void open_frame(Activity& producer, const FrameStack& base, std::uint64_t seq);
  void close_frame(Activity& producer);
  void on_consumer_input(Envelope* e);
  void pass_on(std::uint64_t owner, Envelope* e);
  void accept(detail::FrameSlot& slot, FrameId frame, Envelope* e);
  void finish_slot(FrameId frame, detail::FrameSlot& slot);
  void consumed(detail::FrameSlot& slot, FrameId frame);
  void on_control(Message kind, FrameId frame, std::uint64_t peer, std::int64_t count, bool credit);
  void on_register(FrameId frame, std::uint64_t registrant);
  void on_grant(FrameId frame, std::uint64_t owner, std::int64_t count, bool credit);
  void on_close(FrameId frame, std::int64_t count);
  void on_credit(FrameId frame, std::int64_t count, bool dropped);
  void on_done(FrameId frame);
  void on_release(FrameId frame);
  bool overfull(const detail::FrameSlot& slot);  // a merge got more than its producer posted: its call fails
  // frames.cpp, under fault tolerance
  FrameId frame_id();
  bool not_opened_yet(FrameId frame) const noexcept;
  bool ended_before(FrameId frame, const detail::FrameHome& home) const;
  void end_frames_ended_before();
  void on_rejoin(const Envelope& e, std::vector<detail::FrameClaim> claims);
  void replay_when_complete();
  bool take_scripted(std::vector<Envelope*>& order);
  // The end of a merge's or stream's input, where it came among the objects it handled: recorded,
  // and rebuilt, seen at the same place (its script's) or, if the script does not name it, at once.
  bool input_ends(const Activity& a) const;
  void input_ended(const Activity& a);
  bool end_in_turn();  // its script's front is an end: false while it waits for it
  void claim(detail::FrameHome& home, FrameId frame, const detail::FrameClaim& c);
  void reopened(FrameId frame, detail::FrameHome& home);
  // Tell thread `rebuilt` that it was sent `copies` again, and which slots of its frames this one holds.
  void rejoin(std::uint64_t rebuilt, const std::vector<std::pair<std::uint64_t, Envelope*>>& copies, bool rebuilt_too);
  void said_done(std::uint32_t held);  // Done for the merges that checkpoint `held` ran
  void hasten_done();                  // to retire or migrate: Done for the merges it ran, and asked of other owners
  void trace_step(const VertexSpec& spec, CallId call, double start);
  // recovery.cpp: fault tolerance
  void send_data(Thread& to, Envelope* e);  // to another thread, stamped and kept under fault tolerance
  void send_result(Envelope* e);
  bool admit(Envelope* e, bool scripted = false);  // false: it waits for its turn, or was handled before (dropped)
  void log_delivery(const Envelope& e);            // the order its operations are handed their objects in
  void deliver_in_order(Envelope* e, bool scripted);  // what its replay hands over, one after the other
  void unpark(FrameId frame);                         // its frame's owner is named: what waited goes on
  bool checkpoint_due() const;
  void record_in(detail::Checkpoint& image) const;  // its records, besides its state and epoch
  void on_stored(std::uint32_t epoch);
  void on_covered(std::uint64_t receiver, std::uint32_t incarnation, std::uint64_t number);
  void on_resend(std::uint64_t receiver, const std::vector<std::uint64_t>& rebuilt);
  void cover_now();  // on node 0, which never fails: what it handled is covered at once
  void resend_first();
  std::vector<Envelope*> wipe();  // its kernel records, as if just created; returns the runtime's requests it held

  Runtime& runtime_;
  ThreadsCore& collection_;
  const std::uint64_t uid_;
  std::atomic<NodeId> node_;
  std::atomic<Pace> pace_{Pace::Unknown};
  // A stand-in's strand forwards what reaches it while the network thread may rebuild the thread
  // here (restore): one at a time.
  std::mutex standing_in_;
  std::unique_ptr<detail::StateBox> state_;

  detail::Mailbox mailbox_;
  detail::EnvelopeCache envelope_cache_;
  Envelope* pending_ = nullptr;  // taken from the mailbox, not yet handled
  std::atomic<bool> resend_due_{false};  // a Resend waits in the mailbox: it goes first
  std::deque<Activity*> ready_;
  std::deque<Activity*> yielded_;  // they go on once the messages waiting when they yielded are handled
  bool drain_ = false;             // an activity yielded: take the mailbox before resuming it
  std::unordered_set<Activity*> activities_;
  std::unordered_map<FrameId, detail::FrameHome> homes_;
  std::unordered_map<FrameId, detail::FrameSlot> slots_;
  std::unordered_set<CallId> aborted_;
  std::uint64_t failures_seen_ = 0;  // runtime.failures() when aborted_ was last brought up to date

  Life life_ = Life::Active;
  bool gone_ = false;  // retired with nothing left: the runtime frees it once no one can reach it
  ClusterLink::HandBack hand_back_;  // retirement: receives the final state
  struct Move {
    NodeId to;
    ClusterLink::Done done;
  };
  std::optional<Move> migration_;
  std::vector<ClusterLink::ImageBack> snapshots_;  // asked for, given at its next rest

  struct Recovery {
    detail::Outbox outbox;
    detail::Inbox inbox;
    std::uint32_t taken = 0, committed = 0;  // checkpoints, and the last one another node holds
    double last = -1;                         // when it took the last one (< 0: take one when it can)
    double cost = 0;                          // what the last one took, in seconds
    // The last one's state buffer, once no one holds it (sent): its pages are in, where a fresh
    // buffer would fault each in.
    std::shared_ptr<detail::SpareBuffer> spare = std::make_shared<detail::SpareBuffer>();
    std::uint64_t handled = 0;                // data objects it handled since (0: none worth another)
    std::uint64_t clock = 0;                  // Lamport's: data it sends is later than all it handled
    // The order in which it and others handled their objects, as it knows it (causal logging), and
    // how many it handled in its life; by epoch, how many the checkpoints on their way cover.
    detail::CausalLog log;
    std::uint64_t determined = 0;
    std::map<std::uint32_t, std::uint64_t> determined_at;
    // Rebuilt, it handles again what it is sent again in its senders' clocks' order (a causal order,
    // as it first handled them): the data that comes waits until every sender said how many copies
    // it sent again, and they all came.
    // What it handled first, as far as the survivors know, it handles again in that order (its
    // script), before the rest of its copies.
    bool replaying = false;
    bool replay_untraced = false;  // its copies came: traced as replayed at its next rest, once it handled them
    std::vector<Envelope*> replay;
    detail::ReplayScript script;
    std::unordered_set<const Envelope*> released;                 // by its script: handled as they come
    std::unordered_set<const Envelope*> ordered;                  // the rest, in its senders' clocks' order
    // One of them that waits for its frame's grant holds back the others until it is handed on: they
    // reach their operations in the order they are handled in.
    FrameId parked = 0;
    std::vector<Envelope*> held;
    bool delivering = false;
    std::unordered_map<std::uint64_t, std::uint64_t> copies_run;  // by sender: copies its script let through
    struct Resent {
      std::uint64_t last = 0, count = 0;  // links up to `last` are copies; `count` of them
    };
    std::unordered_map<std::uint64_t, Resent> resent;  // by sender
    // By epoch, the links the checkpoints on their way cover; those handled on node 0 not yet said covered.
    std::map<std::uint32_t, std::map<std::pair<std::uint64_t, std::uint32_t>, std::uint64_t>> covering;
    std::vector<std::pair<std::uint64_t, std::uint32_t>> uncovered;
    const char* no_backup = nullptr;  // why it is never checkpointed nor rebuilt (its loss fails the calls)
    // The split-frame protocol (frames.cpp): frame ids are its uid and a count, the same when it runs
    // again; a merge it ended is said Done once a checkpoint after it is held (by epoch; 0: since the
    // last one).
    std::uint32_t frames_opened = 0;
    std::map<std::uint32_t, std::vector<detail::FrameDone>> dones;
    // Rebuilt, it answers registrations once every survivor said which slots of its frames it holds;
    // what concerns frames it has not opened again yet waits for them.
    bool rejoining = false;
    std::vector<std::pair<FrameId, std::uint64_t>> registrations;  // waiting for the survivors
    struct Unopened {
      std::vector<detail::FrameClaim> claims;
      std::vector<std::uint64_t> registrants;
      bool done = false;
    };
    std::map<FrameId, Unopened> unopened;
    std::unordered_set<std::uint64_t> heard;  // survivors that rejoined
    std::unordered_set<FrameId> owner_holds;  // frames whose owner claimed them or registered since
  };
  std::unique_ptr<Recovery> recovery_;
};

}  // namespace dps
