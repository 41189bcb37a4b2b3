// Replication: the kernel's structure, which node 0 owns, mirrored in every node process
// (collections, their thread tables, graphs with their routes), and the work that crosses processes:
// envelopes sent to and arriving from other nodes, threads that retire or move to another process,
// and calls that end away from node 0. It is the kernel's ClusterLink.
//
//   Replication replication(process, options, transport, membership, traces);
//   runtime.link(&replication);                  // the kernel tells it what changed
//   replication.send(thread, envelope);          // Backend::send
//   replication.on_envelope(...);                // network thread: a frame for a thread here
#pragma once

#include "backups.hpp"
#include "incoming.hpp"
#include "membership.hpp"
#include "node_process.hpp"
#include "remote_trace.hpp"
#include "transport.hpp"

#include "dps/kernel/cluster_link.hpp"
#include "dps/thread_state.hpp"
#include "dps/net/protocol.hpp"
#include "dps/net/tcp_backend.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace dps::net {

GraphCreated graph_image(const GraphCore& graph);  // throws GraphError if a route cannot travel

class Replication final : public ClusterLink {
 public:
  using Handles = DirectiveKinds<CollectionCreated, ThreadAdded, ThreadDropped, ThreadGone, GraphCreated, StateRequest,
                                 StateReturned, MigrateRequest, MigrateDone, ThreadImage, ThreadMoved, CallResult,
                                 CallFailure, CallAbort>;

  Replication(NodeProcess& process, const TcpOptions& options, Transport& transport, Membership& membership,
              RemoteTraces& traces, Backups& backups);

  // An envelope for a thread of another node (Backend::send); its call fails if it cannot go.
  void send(Thread& to, Envelope* e);
  // Network thread: an Envelope frame whose last byte was read at `received`, traced as a transfer,
  // then delivered (or kept until the thread or graph it names is known).
  void on_envelope(const FrameHeader& header, double received, std::span<const std::byte> body, WireBuffer* buffer);
  // On the thread's host, from its strand: the thread goes to `to` with its state (Backend::migrate).
  bool send_thread(Thread& thread, NodeId to, std::string state, Done arrived);
  // Node 0: a process that joins late gets the structure as the directives that built it.
  void send_structure(NodeId to);
  // `node` is gone: the retirements and migrations it was to answer for fail.
  void fail_requests_to(NodeId node, const std::string& reason);

  // Directives, once the runtime is attached (dropped after the backend stopped).
  template <class D>
  void handle(D& d, Incoming& in) {
    if (Runtime* rt = process_.attached()) apply(d, in, *rt);
  }

  // ClusterLink
  void collection_created(const ThreadsCore& collection) override;
  void thread_added(const Thread& thread, std::string image) override;
  void thread_dropped(const Thread& thread) override;
  void thread_gone(std::uint64_t uid) override;
  void graph_created(const GraphCore& graph) override;
  void retire(Thread& thread, HandBack hand_back) override;
  void migrate(Thread& thread, NodeId to, Done done) override;
  void snapshot(Thread& thread, ImageBack image_back) override;
  void call_completed(Envelope* result) override;
  void recover(NodeId failed, const std::vector<detail::Rebuilt>& plan) override { backups_.recover(failed, plan); }
  void replayed(std::uint64_t thread) override { backups_.replayed(thread); }
  void call_failed(CallId call, std::exception_ptr error) override;
  void tracing(bool on) override;
  void collect_trace() override;

 private:
  void deliver(Runtime& rt, std::span<const std::byte> body, WireBuffer* buffer = nullptr);
  void unpark(Runtime& rt, std::uint64_t key);

  void apply(CollectionCreated& d, Incoming& in, Runtime& rt);
  void apply(ThreadAdded& d, Incoming& in, Runtime& rt);
  void apply(ThreadDropped& d, Incoming& in, Runtime& rt);
  void apply(ThreadGone& d, Incoming& in, Runtime& rt);
  void apply(GraphCreated& d, Incoming& in, Runtime& rt);
  void apply(StateRequest& d, Incoming& in, Runtime& rt);
  void apply(StateReturned& d, Incoming& in, Runtime& rt);
  void apply(MigrateRequest& d, Incoming& in, Runtime& rt);
  void apply(MigrateDone& d, Incoming& in, Runtime& rt);
  void apply(ThreadImage& d, Incoming& in, Runtime& rt);
  void apply(ThreadMoved& d, Incoming& in, Runtime& rt);
  void apply(CallResult& d, Incoming& in, Runtime& rt);
  void apply(CallFailure& d, Incoming& in, Runtime& rt);
  void apply(CallAbort& d, Incoming& in, Runtime& rt);

  // Requests this process made to others (retire, snapshot, migrate), by id.
  struct Retirement {  // or a snapshot: image_back instead of hand_back
    HandBack hand_back = {};
    ImageBack image_back = {};
    const detail::StateType* type = nullptr;
    NodeId answers = 0;  // the thread's host (it failing fails the retirement)
    void fail(std::exception_ptr error) {  // no-op on a request answered already (default)
      if (image_back)
        image_back({}, std::move(error));
      else if (hand_back)
        hand_back(nullptr, std::move(error));
    }
  };
  struct Migration {
    Done done;
    NodeId answers = 0;      // the node whose MigrateDone completes it (it failing fails the migration)
    bool departed = true;    // false while the thread's host has sent its image but not yet let it go
    bool answered = false;   // MigrateDone came before that: it completes once the thread departed
    std::string error = {};  // of that early answer
  };
  // MigrateDone: the Done to call now, or empty (answered already, or kept until let_go()).
  Done answer_migration(std::uint64_t request, const std::string& error);
  void let_go(std::uint64_t request);  // the host let the thread go: an early answer completes
  void ask_for_state(Thread& t, Retirement r, bool retire);  // retire (true) or snapshot
  // The request `request` taken out of `requests`, or a default one when it was answered already.
  template <class Request>
  Request take(std::unordered_map<std::uint64_t, Request>& requests, std::uint64_t request);
  // The requests `node` was to answer, taken out (it is gone).
  template <class Request>
  std::vector<Request> take_answerable_by(std::unordered_map<std::uint64_t, Request>& requests, NodeId node);

  NodeProcess& process_;
  const TcpOptions& options_;
  Transport& transport_;
  Membership& membership_;
  RemoteTraces& traces_;
  Backups& backups_;

  std::atomic<std::uint64_t> next_request_{0};
  std::unordered_map<std::uint64_t, Retirement> retirements_;  // under process_.mu
  std::unordered_map<std::uint64_t, Migration> migrations_;    // under process_.mu
  // Held from a thread's image sent to its ThreadMoved told: a node lost meanwhile is reported after.
  std::mutex departing_;
  // Envelope frames naming a thread or graph whose directive has not arrived yet (network thread).
  std::unordered_map<std::uint64_t, std::vector<std::vector<std::byte>>> parked_;
};

}  // namespace dps::net
