// Backups: fault tolerance across node processes (docs/fault-tolerance.md). A thread's checkpoints
// go to the next live node on another host, its buddy, which holds the latest and tells node 0; node
// 0 records who holds what, then answers the thread with Stored (and a node that held an earlier one
// drops it). Node 0 holds a thread's first checkpoint itself until another node holds one, so a node
// may fail as soon as its threads are added. When a node
// fails, node 0 decides where each of its threads is rebuilt (Runtime::node_failed); every process
// rebuilds (Rebuild), and once all did, every process sends again what the rebuilt threads had not
// covered (Resend).
//
//   Backups backups(process, transport, membership);
//   backups.keep(thread, checkpoint);       // Backend::keep_backup, from the thread's strand
//   backups.backup(uid);                    // Backend::backup: node 0's table, or what this node holds
//   backups.lost(node);                     // the node failed: what it held is gone
//   backups.recover(failed, plan);          // node 0 (ClusterLink::recover)
#pragma once

#include "incoming.hpp"
#include "membership.hpp"
#include "node_process.hpp"
#include "transport.hpp"

#include "dps/backend.hpp"
#include "dps/kernel/recovery_log.hpp"
#include "dps/net/protocol.hpp"

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace dps::net {

class Backups {
 public:
  using Handles = DirectiveKinds<BackupKept, BackupHeld, BackupDropped, Rebuild, Rebuilt, Resend, Replayed>;

  Backups(NodeProcess& process, Transport& transport, Membership& membership);

  void keep(Thread& thread, std::shared_ptr<const detail::Checkpoint> checkpoint);
  Backend::Backup backup(std::uint64_t uid, bool with_checkpoint) const;
  // A node failed: node 0 forgets what it held; the threads here whose checkpoints it held make new
  // ones. Idempotent.
  void lost(NodeId node);

  void recover(NodeId failed, const std::vector<detail::Rebuilt>& plan);  // node 0
  void replayed(std::uint64_t uid);                                       // the others

  template <class D>
  void handle(D& d, Incoming& in) {
    if (Runtime* rt = process_.attached()) apply(d, in, *rt);
  }

 private:
  NodeId buddy_of(NodeId me) const;
  void apply(BackupKept& d, Incoming& in, Runtime& rt);
  void apply(BackupHeld& d, Incoming& in, Runtime& rt);
  void apply(BackupDropped& d, Incoming& in, Runtime& rt);
  void apply(Rebuild& d, Incoming& in, Runtime& rt);
  void apply(Rebuilt& d, Incoming& in, Runtime& rt);
  void apply(Resend& d, Incoming& in, Runtime& rt);
  void apply(Replayed& d, Incoming& in, Runtime& rt);

  using Version = std::pair<std::uint32_t, std::uint32_t>;            // a checkpoint's (incarnation, epoch)
  bool store(std::uint64_t uid, Version version, std::string_view image);  // false: a later one is kept
  void held_here(Runtime& rt, std::uint64_t uid, Version version);         // node 0 records it
  // Node 0: `holder` holds this checkpoint of thread `uid`; the thread hears Stored.
  void recorded(Runtime& rt, std::uint64_t uid, Version version, NodeId holder);
  // Once rebuilt, what was held of the threads' earlier lives goes.
  void forget_earlier_lives(const std::vector<detail::Rebuilt>& plan);
  void resend(Runtime& rt, NodeId failed);  // node 0, once every process rebuilt
  std::optional<std::vector<detail::Rebuilt>> take_plan(NodeId failed);  // none: done already

  NodeProcess& process_;
  Transport& transport_;
  Membership& membership_;

  mutable std::mutex mu_;
  struct Kept {
    Version version;
    std::string image;  // checkpoint_image()
  };
  struct Held {
    NodeId node = 0;
    Version version;
  };
  std::unordered_map<std::uint64_t, Kept> kept_;              // held here, by thread
  std::unordered_map<std::uint64_t, Held> table_;             // node 0: who holds each thread's latest
  std::unordered_map<std::uint64_t, NodeId> sent_to_;         // threads here: where their checkpoints went
  struct Recovering {
    std::vector<detail::Rebuilt> plan;
    std::set<NodeId> awaited;  // node 0: the processes that have not rebuilt yet
  };
  std::map<NodeId, Recovering> recovering_;  // by failed node
};

}  // namespace dps::net
