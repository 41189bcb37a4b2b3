// Churn: a collection of Counter threads and the application's nodes changing while calls run, from
// an OS thread of its own. Every `thread_every` one of the threads is added, removed or migrated;
// every `node_every` a node is added, or the oldest but node 0 removed, keeping between `min_nodes`
// and `max_nodes`. Removed threads hand their state back: seen() adds them up, so that with the
// states still in the collection every object can be counted exactly once.
//
//   Churn churn(*app, workers, {.thread_every = std::chrono::milliseconds(3)});
//   ... calls through a graph whose leaves count into `workers` ...
//   churn.stop();
//   EXPECT_EQ(churn.error(), "");
//   EXPECT_EQ(churn.seen() + seen_by(workers), objects);
#pragma once

#include "processes.hpp"
#include "support.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <random>
#include <string>
#include <thread>

namespace dps::test {

struct ChurnOptions {
  std::chrono::milliseconds thread_every{5};
  std::chrono::milliseconds node_every{300};
  std::size_t min_threads = 2, max_threads = 12;
  std::size_t min_nodes = 3, max_nodes = 5;
  unsigned seed = 1;
};

class Churn {
 public:
  Churn(Application& app, Threads<Counter>& workers, ChurnOptions options)
      : app_(app), workers_(workers), options_(options), random_(options.seed), thread_([this] { run(); }) {}
  ~Churn() { stop(); }

  void stop() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  long seen() const { return seen_; }  // by the threads removed (after stop())
  std::string error() const { return error_; }
  long added = 0, removed = 0, migrated = 0, nodes_added = 0, nodes_removed = 0;

 private:
  void run() {
    try {
      auto next_node_change = std::chrono::steady_clock::now() + options_.node_every;
      std::unique_lock lock(mu_);
      while (!wake_.wait_for(lock, options_.thread_every, [&] { return stopping_; })) {
        lock.unlock();
        if (std::chrono::steady_clock::now() >= next_node_change) {
          change_nodes();
          next_node_change = std::chrono::steady_clock::now() + options_.node_every;
        } else {
          change_threads();
        }
        lock.lock();
      }
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  }

  NodeId any_node() {
    const std::vector<NodeId> nodes = app_.node_ids();
    return nodes[std::uniform_int_distribution<std::size_t>(0, nodes.size() - 1)(random_)];
  }

  void change_threads() {
    const std::size_t size = workers_.size();
    switch (std::uniform_int_distribution<int>(0, 2)(random_)) {
      case 0:
        if (size < options_.max_threads) {
          workers_.add_on(any_node());
          ++added;
          return;
        }
        [[fallthrough]];
      case 1:
        if (size > options_.min_threads) {
          const std::size_t i = std::uniform_int_distribution<std::size_t>(0, size - 1)(random_);
          seen_ += within(workers_.remove(i), "the state of a removed thread").seen;
          ++removed;
          return;
        }
        [[fallthrough]];
      default: {
        const std::size_t i = std::uniform_int_distribution<std::size_t>(0, size - 1)(random_);
        within(workers_.migrate(i, any_node()), "a migration");
        ++migrated;
      }
    }
  }

  void change_nodes() {
    const std::vector<NodeId> nodes = app_.node_ids();
    const bool add = nodes.size() < options_.max_nodes && (nodes.size() <= options_.min_nodes || nodes_added <= nodes_removed);
    if (add) {
      workers_.add_on(app_.add_node());
      ++nodes_added;
      ++added;
    } else {
      app_.remove_node(nodes[1]);  // the oldest but node 0; its threads move away first
      ++nodes_removed;
    }
  }

  Application& app_;
  Threads<Counter>& workers_;
  const ChurnOptions options_;
  std::mt19937 random_;
  long seen_ = 0;
  std::string error_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;  // last: it starts once the rest is there
};

}  // namespace dps::test
