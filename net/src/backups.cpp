#include "backups.hpp"

#include "checkpoint_image.hpp"

#include "dps/errors.hpp"
#include "dps/kernel/runtime.hpp"
#include "dps/kernel/thread.hpp"

#include <algorithm>
#include <optional>
#include <string>

namespace dps::net {

namespace {

std::vector<RebuiltThread> wire(const std::vector<detail::Rebuilt>& plan) {
  std::vector<RebuiltThread> out;
  for (const detail::Rebuilt& r : plan) out.push_back({r.thread, r.at, r.incarnation});
  return out;
}

}  // namespace

Backups::Backups(NodeProcess& process, Transport& transport, Membership& membership)
    : process_(process), transport_(transport), membership_(membership) {}

// --- checkpoints ---

// The next live node after `me` on another host, so that a host lost whole loses no thread with its
// backup; the next live node when every one shares the host; `me` when it is alone.
NodeId Backups::buddy_of(NodeId me) const {
  std::vector<NodeId> ring = membership_.nodes();
  const auto after = std::upper_bound(ring.begin(), ring.end(), me);
  std::rotate(ring.begin(), after, ring.end());
  // Nor one whose connection is gone: lost, though the membership may not have heard it yet.
  std::erase_if(ring, [&](NodeId n) { return n == me || !transport_.peer(n); });
  if (ring.empty()) return me;
  const std::string host = membership_.host_of(me);
  for (NodeId n : ring)
    if (membership_.host_of(n) != host) return n;
  return ring.front();
}

void Backups::keep(Thread& thread, std::shared_ptr<const detail::Checkpoint> checkpoint) {
  const NodeId me = process_.me;
  Runtime& rt = *process_.kernel;
  const Version version{checkpoint->outbox.incarnation(), checkpoint->epoch};
  // Held here: node 0's copy of a thread's first checkpoint (Thread::first_checkpoint), or the one a
  // thread left this node with (Thread::records_to_move).
  if (!rt.hosts(thread)) {
    if (store(thread.uid(), version, checkpoint_image(*checkpoint))) held_here(rt, thread.uid(), version);
    return;
  }
  const NodeId buddy = buddy_of(me);
  if (buddy == me) return;  // no other node left to hold it
  {
    std::lock_guard lock(mu_);
    sent_to_[thread.uid()] = buddy;
  }
  std::vector<std::byte> head;
  WireWriter image(head);  // the state is sent from the checkpoint, which the frame keeps until written
  write_checkpoint(image, *checkpoint);
  try {
    transport_.send_directive(buddy, BackupKept{thread.uid(), version.first, version.second}, image, head,
                              std::move(checkpoint));
  } catch (const NodeFailure&) {  // the buddy is gone: lost() has the thread checkpoint to the next one
  }
}

// Written over the last one's buffer, whose pages are in (a fresh one would fault each in).
bool Backups::store(std::uint64_t uid, Version version, std::string_view image) {
  std::lock_guard lock(mu_);
  Kept& latest = kept_[uid];
  if (latest.version > version) return false;
  latest.version = version;
  detail::reserve_large(latest.image, image.size());
  latest.image.append(image);
  return true;
}

void Backups::apply(BackupKept& d, Incoming& in, Runtime& rt) {
  const std::string_view image = in.rest.get_string_view();
  in.nothing_follows();
  // Kept as it came, and loaded only to rebuild the thread: the network thread that read it has
  // other nodes' messages to read.
  if (checkpoint_header(image) != std::pair{d.uid, d.epoch})
    throw WireError("a checkpoint that is not the one announced");
  const Version version{d.incarnation, d.epoch};
  if (store(d.uid, version, image)) held_here(rt, d.uid, version);
}

void Backups::held_here(Runtime& rt, std::uint64_t uid, Version version) {
  if (process_.me == 0)
    recorded(rt, uid, version, 0);
  else
    transport_.tell(0, BackupHeld{uid, version.first, version.second});
}

void Backups::apply(BackupHeld& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  if (process_.me != 0) throw WireError("backup held, told to node " + std::to_string(process_.me));
  recorded(rt, d.uid, {d.incarnation, d.epoch}, in.sender);
}

// Node 0 knows who holds a checkpoint before its thread hears Stored, and so before the thread's
// senders drop what it covers: a failure finds the checkpoint where node 0 says.
// The node that held the last one drops it: a rebuild never asks it (its buddy changed: the thread
// migrated, was rebuilt, or its buddy failed), and a state's copy is as large as the state.
void Backups::recorded(Runtime& rt, std::uint64_t uid, Version version, NodeId holder) {
  NodeId former = 0;
  {
    std::lock_guard lock(mu_);
    Held& h = table_[uid];
    if (version < h.version) return;  // an earlier one, or an earlier life's
    if (h.node != holder) former = h.node;
    h = {holder, version};
    if (holder != process_.me) kept_.erase(uid);  // what node 0 held of it is older
  }
  if (former != 0) transport_.tell(former, BackupDropped{uid, version.first, version.second});
  Thread* t = rt.thread(uid);
  if (!t) return;  // gone meanwhile
  auto* e = new Envelope;
  e->kind = Message::Stored;
  e->count = version.second;
  rt.send(process_.me, *t, e);
}

void Backups::apply(BackupDropped& d, Incoming& in, Runtime&) {
  in.nothing_follows();
  std::lock_guard lock(mu_);
  if (const auto it = kept_.find(d.uid); it != kept_.end() && it->second.version < Version{d.incarnation, d.epoch})
    kept_.erase(it);
}

// Decoded under the lock rather than copied out of it: a rebuild asks once, and a store meanwhile
// waits (a copy of a large image into fresh pages costs more than the wait).
Backend::Backup Backups::backup(std::uint64_t uid, bool with_checkpoint) const {
  Backend::Backup b;
  std::lock_guard lock(mu_);
  const auto here = kept_.find(uid);
  if (process_.me == 0) {
    const auto it = table_.find(uid);
    if (it == table_.end()) return {};
    b = {nullptr, it->second.node, it->second.version.second};
  } else if (here != kept_.end()) {
    b = {nullptr, process_.me, here->second.version.second};
  } else {
    return {};
  }
  if (with_checkpoint && b.node == process_.me && here != kept_.end())
    b.checkpoint = load_checkpoint(*process_.kernel, here->second.image);
  return b;
}

void Backups::lost(NodeId node) {
  std::vector<std::uint64_t> orphans;  // threads here whose checkpoints it held
  {
    std::lock_guard lock(mu_);
    std::erase_if(table_, [node](const auto& entry) { return entry.second.node == node; });
    for (auto it = sent_to_.begin(); it != sent_to_.end();) {
      if (it->second == node) {
        orphans.push_back(it->first);
        it = sent_to_.erase(it);
      } else {
        ++it;
      }
    }
  }
  Runtime* rt = nullptr;
  {
    std::lock_guard lock(process_.mu);
    rt = process_.runtime;
  }
  if (!rt) return;
  for (std::uint64_t uid : orphans) {
    Thread* t = rt->thread(uid);
    if (!t || !rt->hosts(*t)) continue;
    auto* e = new Envelope;
    e->kind = Message::CheckpointNow;  // on its strand: a new checkpoint when it can
    rt->enqueue(*t, e);
  }
}

// --- recovery ---

void Backups::recover(NodeId failed, const std::vector<detail::Rebuilt>& plan) {
  Runtime& rt = *process_.kernel;
  const std::vector<NodeId> others = membership_.others(failed);
  {
    std::lock_guard lock(mu_);
    recovering_[failed] = {plan, {others.begin(), others.end()}};
  }
  forget_earlier_lives(plan);
  membership_.tell_all(Rebuild{failed, wire(plan)});
  if (others.empty()) resend(rt, failed);
}

void Backups::apply(Rebuild& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  if (in.sender != 0) throw WireError("rebuild, not from node 0");
  std::vector<detail::Rebuilt> plan;
  for (const RebuiltThread& r : d.threads) {
    if (!rt.thread(r.uid) && !rt.gone(r.uid)) throw WireError("rebuild of unknown thread " + std::to_string(r.uid));
    plan.push_back({r.uid, r.at, r.incarnation});
  }
  membership_.failed(d.failed);
  // Declared failed, it may only hang (SIGSTOP): woken, it must reach no one here.
  if (Connection* c = transport_.peer(d.failed)) c->close("node 0 declared it failed");
  lost(d.failed);
  rt.rebuild(d.failed, plan);
  forget_earlier_lives(plan);
  {
    std::lock_guard lock(mu_);
    recovering_[d.failed] = {plan, {}};
  }
  transport_.tell(0, Rebuilt{d.failed});
}

void Backups::apply(Rebuilt& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  bool all = false;
  {
    std::lock_guard lock(mu_);
    const auto it = recovering_.find(d.failed);
    if (it == recovering_.end()) return;
    it->second.awaited.erase(in.sender);
    all = it->second.awaited.empty();
  }
  if (all) resend(rt, d.failed);
}

void Backups::forget_earlier_lives(const std::vector<detail::Rebuilt>& plan) {
  std::lock_guard lock(mu_);
  for (const detail::Rebuilt& r : plan) {
    kept_.erase(r.thread);
    // Node 0: none of the new life yet. An earlier life's checkpoint held elsewhere and told late is
    // older than any of the new life's.
    if (process_.me == 0) table_[r.thread] = {r.at, {r.incarnation, 0}};
  }
}

std::optional<std::vector<detail::Rebuilt>> Backups::take_plan(NodeId failed) {
  std::lock_guard lock(mu_);
  const auto it = recovering_.find(failed);
  if (it == recovering_.end()) return std::nullopt;
  std::vector<detail::Rebuilt> plan = std::move(it->second.plan);
  recovering_.erase(it);
  return plan;
}

void Backups::resend(Runtime& rt, NodeId failed) {
  const auto plan = take_plan(failed);
  if (!plan) return;
  membership_.tell_all(Resend{failed});
  rt.resend(*plan);
}

void Backups::apply(Resend& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  if (in.sender != 0) throw WireError("resend, not from node 0");
  if (const auto plan = take_plan(d.failed)) rt.resend(*plan);
}

void Backups::replayed(std::uint64_t uid) { transport_.tell(0, Replayed{uid}); }

void Backups::apply(Replayed& d, Incoming& in, Runtime& rt) {
  in.nothing_follows();
  if (process_.me != 0) throw WireError("replayed, told to node " + std::to_string(process_.me));
  rt.replayed(d.uid);
}

}  // namespace dps::net
