// Thread collections: a named, resizable set of DPS threads sharing one state type. Routes pick a
// thread by index among the collection's current threads.
//
//   auto workers = app.threads<Worker>("workers", 4);        // on nodes 0,1,2,3 (round robin)
//   workers.add();                                            // a fifth thread, used by routes at once
//   Worker w = workers.remove(0).get();                       // drained, then its state handed back
//   workers.migrate(1, 2).get();                              // state serialized (cereal) to node 2
//   Worker copy = workers.snapshot(1).get();                  // a copy, taken between two operations
#pragma once

#include "dps/future.hpp"
#include "dps/ids.hpp"
#include "dps/thread_state.hpp"

#include <cstddef>
#include <exception>
#include <functional>
#include <string>
#include <type_traits>
#include <utility>

namespace dps {

class ThreadsCore;  // the kernel's collection

// Under --fault-tolerance a collection's threads are checkpointed to other nodes (Kept), or not (None:
// nothing is paid for them, and losing one fails the calls, naming its node). Without the option,
// nothing is kept either way.
//
//   auto cache = app.threads<Table>("cache", 4, dps::Backups::None);
enum class Backups : bool { Kept, None };

namespace detail {
// What a collection's handle asks the kernel (threads.cpp).
const std::string& collection_name(const ThreadsCore& c) noexcept;
std::size_t collection_size(const ThreadsCore& c) noexcept;
NodeId thread_node(const ThreadsCore& c, std::size_t index);  // throws std::out_of_range naming the collection
void add_threads(ThreadsCore& c, std::size_t count);          // on nodes chosen round robin
void add_thread_on(ThreadsCore& c, NodeId node);
Backend* driver_of(const ThreadsCore& c) noexcept;  // what waits on the collection's futures
// Takes the thread at `index` out of the collection and retires it; hand_back gets its final state
// (or the error that lost it, e.g. when it lives in another process and its state cannot travel).
void remove_thread(ThreadsCore& c, std::size_t index, bool state_travels, HandBack hand_back);
Future<void> migrate_thread(ThreadsCore& c, std::size_t index, NodeId node);
// The image of the thread at `index`, taken at its next rest, to `image_back` (or the error that kept it).
void snapshot_thread(ThreadsCore& c, std::size_t index, ImageBack image_back);
}  // namespace detail

template <class State>
class Threads {
 public:
  Threads() = default;
  explicit Threads(ThreadsCore& core) : core_(&core) {}

  const std::string& name() const { return detail::collection_name(*core_); }
  std::size_t size() const { return detail::collection_size(*core_); }
  NodeId node(std::size_t index) const { return detail::thread_node(*core_, index); }
  ThreadsCore& core() const { return *core_; }

  // Adds threads on nodes chosen round robin, or on a given node.
  void add(std::size_t count = 1) { detail::add_threads(*core_, count); }
  void add_on(NodeId node) { detail::add_thread_on(*core_, node); }

  // Removes the thread at `index` from the collection at once (routes stop choosing it and later
  // indices shift down); it finishes what was queued and running, and its state is handed back.
  Future<State> remove(std::size_t index) {
    Promise<State> promise(detail::driver_of(*core_));
    detail::remove_thread(*core_, index, detail::serializable_state<State>,
                          [promise](detail::StateBox* box, std::exception_ptr error) mutable {
                            if (box)
                              promise.set(std::move(*static_cast<State*>(box->get())));
                            else
                              promise.fail(std::move(error));
                          });
    return promise.future();
  }

  // A copy of the state of the thread at `index`, taken between two of its operations (as a migration
  // would), wherever it runs; the thread goes on.
  Future<State> snapshot(std::size_t index) const {
    static_assert(detail::serializable_state<State>,
                  "dps: a copy of a thread's state needs a cereal serialize() on it");
    static_assert(std::is_default_constructible_v<State>,
                  "dps: a copy of a thread's state is loaded into a default State");
    Promise<State> promise(detail::driver_of(*core_));
    detail::snapshot_thread(*core_, index, [promise](std::string image, std::exception_ptr error) mutable {
      if (error) return promise.fail(std::move(error));
      try {
        promise.set(decoded<State>(image));
      } catch (...) {
        promise.fail(std::current_exception());
      }
    });
    return promise.future();
  }

  // Moves the thread at `index`, with its state, to `node`; done once nothing runs on it.
  Future<void> migrate(std::size_t index, NodeId node) {
    static_assert(detail::serializable_state<State>, "dps: migrating a thread needs a cereal serialize() on its state");
    return detail::migrate_thread(*core_, index, node);
  }

 private:
  ThreadsCore* core_ = nullptr;
};

}  // namespace dps
