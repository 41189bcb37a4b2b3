// Fault tolerance, the runtime's side (docs/fault-tolerance.md): results delivered once, and when a
// node fails, node 0 plans which threads are rebuilt where from their checkpoints, every process
// rebuilds its part, and each thread sends the rebuilt ones again what their checkpoints do not cover
// (Gerlach & Hersch, "Fault-tolerant parallel applications with Dynamic Parallel Schedules"). A
// thread's side: recovery.cpp.
#include "dps/kernel/runtime.hpp"
#include "dps/kernel/thread.hpp"
#include "dps/kernel/threads_core.hpp"

#include "dps/errors.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <optional>
#include <stdexcept>
#include <unordered_set>

namespace dps {

void Runtime::fault_tolerance(double interval, std::uint64_t operations) {
  if (!(interval > 0)) throw std::invalid_argument("the checkpoint interval must be positive");
  if (!threads().empty()) throw std::logic_error("fault tolerance is turned on before the threads are created");
  if (!backend_.keeps_backups())
    throw std::invalid_argument("the " + std::string(backend_.name()) +
                                " backend keeps no backups: no fault tolerance");
  checkpoint_interval_ = interval;
  checkpoint_operations_ = operations;
}

void Runtime::cover(NodeId at, std::uint64_t receiver, std::uint64_t sender, std::uint32_t incarnation,
                    std::uint64_t number) {
  if (sender == 0) {  // a call's input: the caller keeps it (in node 0's process)
    std::lock_guard lock(recovery_mu_);
    return inputs_.covered(receiver, incarnation, number);
  }
  Thread* to = thread(sender);
  if (!to) return;
  if (sender == receiver) return to->on_covered(receiver, incarnation, number);  // on its own strand
  auto* e = new Envelope;
  e->kind = Message::Covered;
  e->peer = receiver;
  e->frame = incarnation;
  e->count = static_cast<std::int64_t>(number);
  send(at, *to, e);
}

// A graph's output reached the caller: under fault tolerance, once, in each sender's order.
void Runtime::deliver_result(Envelope* e) {
  if (!coordinates()) return link_->call_completed(e);
  if (!e->stamp.link) {
    complete_call(e->call, std::move(e->payload));
    delete e;
    return;
  }
  std::vector<Envelope*> results;
  std::vector<Stamp> handled;
  {
    std::lock_guard lock(recovery_mu_);
    for (Envelope* next = e; next;) {
      const Stamp stamp = next->stamp;
      caller_clock_ = std::max(caller_clock_, stamp.time);
      const detail::Inbox::Verdict verdict = results_.admit(next);
      if (verdict == detail::Inbox::Verdict::Early) break;
      if (verdict == detail::Inbox::Verdict::Handle)
        results.push_back(next);
      else
        delete next;
      handled.push_back(stamp);
      next = results_.next(stamp);
    }
  }
  for (const Stamp& s : handled) cover(0, 0, s.from, s.incarnation(), s.number());  // node 0 never fails
  for (Envelope* r : results) {
    complete_call(r->call, std::move(r->payload));
    delete r;
  }
}

bool Runtime::node_failed(NodeId node, const std::string& reason) {
  std::lock_guard failures(failures_mu_);
  lifecycle(Lifecycle::NodeFailed, nullptr, node);
  if (!fault_tolerant()) return fail_calls(std::make_exception_ptr(NodeFailure(node, reason))), false;
  std::vector<NodeId> waiting;  // failures that waited for this node to say what it moved
  {
    std::lock_guard lock(recovery_mu_);
    for (const auto& [failed, why] : unplanned_) waiting.push_back(failed);
    for (NodeId failed : waiting) reported_lost_[failed].insert(node);  // it will say nothing more
  }
  for (NodeId failed : waiting) settled(failed);  // planned first: this failure came during its recovery
  {
    std::lock_guard lock(recovery_mu_);
    if (unsettled(node)) return unplanned_.emplace(node, reason), true;
  }
  return plan_recovery(node, reason);
}

// A thread migrating to `failed` may have left its node for it: planned without it, the threads
// rebuilt would wait for ever for its Rejoin. Its node tells node 0 it moved (ThreadMoved) before it
// reports `failed` lost (Replication::send_thread and TcpBackend's on_lost exclude each other).
bool Runtime::unsettled(NodeId failed) const {
  const auto reported = reported_lost_.find(failed);
  return std::any_of(moving_.begin(), moving_.end(), [&](const Moving& m) {
    return m.to == failed && m.from != 0 && (reported == reported_lost_.end() || !reported->second.contains(m.from));
  });
}

void Runtime::settled(NodeId failed) {
  std::lock_guard failures(failures_mu_);
  std::string reason;
  {
    std::lock_guard lock(recovery_mu_);
    const auto it = unplanned_.find(failed);
    if (it == unplanned_.end() || unsettled(failed)) return;
    reason = std::move(it->second);
    unplanned_.erase(it);
    reported_lost_.erase(failed);
  }
  plan_recovery(failed, reason);
}

ClusterLink::Done Runtime::moving(const Thread& thread, NodeId to, ClusterLink::Done done) {
  {
    std::lock_guard lock(recovery_mu_);
    moving_.push_back({thread.uid(), thread.node(), to});
  }
  return [this, uid = thread.uid(), to, done = std::move(done)](std::exception_ptr error) {
    {
      std::lock_guard lock(recovery_mu_);
      const auto it =
          std::find_if(moving_.begin(), moving_.end(), [&](const Moving& m) { return m.thread == uid && m.to == to; });
      if (it != moving_.end()) moving_.erase(it);
    }
    settled(to);
    done(error);
  };
}

void Runtime::peer_lost(NodeId reporter, NodeId node) {
  {
    std::lock_guard lock(recovery_mu_);
    reported_lost_[node].insert(reporter);
  }
  settled(node);
}

bool Runtime::plan_recovery(NodeId node, const std::string& reason) {
  std::optional<NodeId> earlier;  // a failure whose rebuilt threads still replay
  {
    std::lock_guard lock(recovery_mu_);
    if (!replaying_.empty()) earlier = replaying_.begin()->second;
  }
  if (earlier)  // the copies its threads were sending again are lost with them
    return fail_calls(std::make_exception_ptr(
               NodeFailure(node, reason + "; it failed while threads rebuilt after node " + std::to_string(*earlier) +
                                     " failed were still being sent again what they had received"))),
           false;
  std::vector<detail::Rebuilt> plan;
  for (Thread* t : threads()) {
    if (t->node() != node || gone(t->uid())) continue;
    const Backend::Backup backup = backend_.backup(t->uid(), false);
    bool held_by_leaving = false;
    {
      std::lock_guard lock(recovery_mu_);
      held_by_leaving = leaving_.contains(backup.node);
    }
    if (t->recovery_->no_backup || backup.epoch == 0 || held_by_leaving) {
      const std::string why =
          t->recovery_->no_backup ? t->recovery_->no_backup
          : held_by_leaving ? " had its backup on node " + std::to_string(backup.node) + ", which was being removed"
                            : " had no backup on another node";
      return fail_calls(std::make_exception_ptr(NodeFailure(node, reason + "; " + t->name() + why))), false;
    }
    plan.push_back({t->uid(), backup.node, ++incarnations_[t->uid()]});
  }
  rebuild(node, plan);
  if (link_)
    link_->recover(node, plan);  // the others rebuild too, then everyone sends again (resend)
  else
    resend(plan);
  return true;
}

void Runtime::rebuild(NodeId node, const std::vector<detail::Rebuilt>& plan) {
  recovered_.store(true, std::memory_order_release);
  std::vector<Thread*> here;  // rebuilt in this process
  for (const detail::Rebuilt& r : plan) {
    Thread* t = thread(r.thread);
    if (!t || !backend_.hosts(r.at)) continue;  // the others learn where it is once all rebuilt
    const Backend::Backup backup = backend_.backup(r.thread, true);
    if (!backup.checkpoint) throw std::logic_error(t->name() + " has no checkpoint where it is rebuilt");
    t->restore(*backup.checkpoint, r.at, r.incarnation);
    lifecycle(Lifecycle::ThreadRestored, t, node, r.at);
    here.push_back(t);
  }
  // A rebuilt thread waits for every other thread to tell it what it sent again and which slots
  // of its frames it holds (Rejoin), the caller (0) and the other rebuilt threads included.
  std::unordered_set<std::uint64_t> everyone{0};
  for (Thread* t : threads())
    if (!gone(t->uid())) everyone.insert(t->uid());
  std::lock_guard lock(recovery_mu_);
  if (coordinates())  // node 0 knows when each has handled again what it was sent (replayed)
    for (const detail::Rebuilt& r : plan) {
      replaying_.emplace(r.thread, node);
      rebuilt_from_[node].push_back(r.thread);
    }
  for (Thread* t : here) {
    std::unordered_set<std::uint64_t>& awaited = rejoining_[t->uid()] = everyone;
    awaited.erase(t->uid());
  }
}

// Once every process rebuilt: the rebuilt threads are where they were rebuilt, and each thread sends
// them again what they have not covered. What was sent to them before is lost, as in the failure.
void Runtime::resend(const std::vector<detail::Rebuilt>& plan) {
  std::vector<std::uint64_t> rebuilt;
  for (const detail::Rebuilt& r : plan) {
    Thread* t = thread(r.thread);
    if (!t) continue;
    if (!backend_.hosts(r.at)) t->depart(r.at);
    rebuilt.push_back(r.thread);
  }
  for (Thread* t : threads()) {
    if (!hosts(*t) || gone(t->uid())) continue;
    if (std::find(rebuilt.begin(), rebuilt.end(), t->uid()) != rebuilt.end()) {
      auto* e = new Envelope;
      e->kind = Message::Resend;
      e->payload = Payload::local(rebuilt);
      enqueue(*t, e);
      continue;
    }
    for (std::uint64_t r : rebuilt) {
      auto* e = new Envelope;
      e->kind = Message::Resend;
      e->peer = r;
      enqueue(*t, e);
    }
    t->resend_due_.store(true, std::memory_order_relaxed);
  }
  if (!coordinates()) return;
  for (std::uint64_t uid : rebuilt) {
    Thread& r = *thread(uid);
    std::vector<std::pair<std::uint64_t, Envelope*>> inputs;
    {
      std::lock_guard lock(recovery_mu_);
      inputs = inputs_.copies(uid);
    }
    Envelope* rejoin = detail::rejoin_message(0, inputs, {}, false);  // the caller's
    for (auto [to, e] : inputs) send(0, r, e);
    if (hosts(r))
      enqueue(r, rejoin);
    else
      send(0, r, rejoin);  // after the copies, on the same connection
  }
}

void Runtime::replayed(std::uint64_t rebuilt) {
  if (!coordinates()) return link_->replayed(rebuilt);  // node 0 tracks the replays
  NodeId failed = 0;
  std::vector<std::uint64_t> threads;
  std::vector<std::pair<NodeId, std::string>> late;
  {
    std::lock_guard lock(recovery_mu_);
    const auto it = replaying_.find(rebuilt);
    if (it == replaying_.end()) return;
    failed = it->second;
    replaying_.erase(it);
    if (std::any_of(replaying_.begin(), replaying_.end(), [&](const auto& r) { return r.second == failed; })) return;
    threads = std::move(rebuilt_from_[failed]);
    rebuilt_from_.erase(failed);
    if (replaying_.empty()) late.swap(late_);
  }
  all_replayed_.notify_all();
  if (on_recovered_) on_recovered_(failed, std::move(threads));
  std::lock_guard failures(failures_mu_);
  for (const auto& [node, reason] : late) plan_recovery(node, reason);
}

void Runtime::leaving(NodeId node) {
  {
    std::lock_guard failures(failures_mu_);  // a recovery being planned now: planned first
    std::lock_guard lock(recovery_mu_);
    leaving_.insert(node);
  }
  if (simulation_) return;  // one event loop: the recoveries planned before are in place
  // Where a thread rebuilt before will be is known everywhere once it replayed.
  std::unique_lock lock(recovery_mu_);
  if (!all_replayed_.wait_for(lock, std::chrono::seconds(10), [&] { return replaying_.empty(); })) {
    leaving_.erase(node);
    throw NodeFailure(replaying_.begin()->second,
                      "its threads, rebuilt, had not handled again what they were sent "
                      "10 s later: node " +
                          std::to_string(node) + " could not be removed");
  }
}

void Runtime::left(NodeId node) {
  std::lock_guard lock(recovery_mu_);
  leaving_.erase(node);
}

void Runtime::moved_to_failed(NodeId node, const std::string& reason) {
  std::lock_guard failures(failures_mu_);  // a failure being planned now has its threads replaying after
  {
    std::lock_guard lock(recovery_mu_);
    if (unplanned_.contains(node)) return;  // planned once it settles, with this thread
    if (!replaying_.empty()) {
      late_.emplace_back(node, reason);
      return;
    }
  }
  plan_recovery(node, reason);
}

bool Runtime::rejoined(std::uint64_t rebuilt, std::uint64_t survivor) {
  std::lock_guard lock(recovery_mu_);
  const auto it = rejoining_.find(rebuilt);
  if (it == rejoining_.end()) return true;
  it->second.erase(survivor);
  if (!it->second.empty()) return false;
  rejoining_.erase(it);
  return true;
}

}  // namespace dps
