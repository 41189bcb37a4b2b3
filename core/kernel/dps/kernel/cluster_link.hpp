// ClusterLink: what the kernel of one process tells the kernels of the other processes of the same
// application. Null while every node lives in one process (LocalBackend, the simulator); the TCP
// backend implements it.
//
// Node 0 coordinates: it makes the calls and owns the structure (collections, threads, graphs);
// every other process keeps a replica of that structure, in which the threads it hosts have their
// state and a mailbox, and the others are stand-ins that forward what reaches them.
//
//   runtime.link(&my_link);   // by the backend, before anything runs
#pragma once

#include "dps/kernel/envelope.hpp"
#include "dps/kernel/recovery_log.hpp"
#include "dps/thread_state.hpp"

#include <exception>
#include <functional>
#include <string>
#include <vector>

namespace dps {

class Thread;
class ThreadsCore;
struct GraphCore;

class ClusterLink {
 public:
  // A retired thread's final state, or (null state) the error that lost it.
  using HandBack = detail::HandBack;
  using Done = std::function<void(std::exception_ptr)>;
  using ImageBack = detail::ImageBack;

  virtual ~ClusterLink() = default;

  // Node 0: a change of structure, to replicate everywhere in this order.
  virtual void collection_created(const ThreadsCore& collection) = 0;
  virtual void thread_added(const Thread& thread, std::string image) = 0;  // image empty: default state
  virtual void thread_dropped(const Thread& thread) = 0;                   // left its collection's table
  // From the host of a retired thread that nothing names any more: node 0 tells every process, after
  // the drop and any abort it sent before, and each forgets it (Runtime::forget).
  virtual void thread_gone(std::uint64_t uid) = 0;
  virtual void graph_created(const GraphCore& graph) = 0;

  // Retire or migrate a thread this process does not host: its host does it and answers.
  virtual void retire(Thread& thread, HandBack hand_back) = 0;
  virtual void migrate(Thread& thread, NodeId to, Done done) = 0;
  // The image of a thread this process does not host: its host takes it and answers.
  virtual void snapshot(Thread& thread, ImageBack image_back) = 0;

  // A call's result, with its stamp, reached the caller in a process other than node 0, which owns
  // the call (and drops duplicates by the stamp).
  virtual void call_completed(Envelope* result) = 0;
  // Node 0: a call failed, every process drops its work. Others: tell node 0.
  virtual void call_failed(CallId call, std::exception_ptr error) = 0;

  // Fault tolerance. Node 0: a node failed, and its threads are rebuilt as `plan` says (every other
  // process calls Runtime::rebuild). Others: rebuilt thread `thread` handled again all it was sent again.
  virtual void recover(NodeId failed, const std::vector<detail::Rebuilt>& plan) = 0;
  virtual void replayed(std::uint64_t thread) = 0;

  // Node 0: the other processes record trace events for node 0's sink from now on (or stop).
  virtual void tracing(bool on) = 0;
  // Node 0: returns once the events the other processes recorded so far have reached its sink.
  virtual void collect_trace() = 0;
};

}  // namespace dps
