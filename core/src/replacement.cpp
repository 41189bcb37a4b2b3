#include "replacement.hpp"

#include "dps/application.hpp"
#include "dps/kernel/epochs.hpp"
#include "dps/kernel/runtime.hpp"
#include "dps/kernel/thread.hpp"

#include <cstdio>
#include <exception>

namespace dps::detail {

Replacement::Replacement(Application& app) : app_(app), worker_([this] { run(); }) {}

void Replacement::request(NodeId failed, std::vector<std::uint64_t> threads) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    requests_.emplace_back(failed, std::move(threads));
  }
  wake_.notify_one();
}

void Replacement::stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (worker_.joinable()) worker_.join();
}

void Replacement::run() {
  std::unique_lock lock(mu_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !requests_.empty(); });
    if (stopping_) return;
    auto [failed, threads] = std::move(requests_.front());
    requests_.pop_front();
    lock.unlock();
    replace(failed, threads);
    lock.lock();
  }
}

// A thread removed or moved meanwhile is left where it is; a failure now (of the new node too) is
// recovered from like any other.
void Replacement::replace(NodeId failed, const std::vector<std::uint64_t>& threads) {
  NodeId fresh = 0;
  try {
    fresh = app_.add_node();
  } catch (const std::exception& e) {
    std::fprintf(stderr,
                 "dps: --replace: no node started in place of node %u (%s): its threads stay where they were rebuilt\n",
                 failed, e.what());
    return;
  }
  Runtime& runtime = app_.runtime();
  std::vector<Future<void>> moves;
  {
    EpochGuard guard;
    for (std::uint64_t uid : threads)
      if (Thread* t = runtime.thread(uid); t && t->collection().index_of(*t) >= 0)
        moves.push_back(runtime.migrate(*t, fresh));
  }
  std::size_t moved = 0;
  for (Future<void>& move : moves) {
    try {
      move.get();
      ++moved;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "dps: --replace: a thread of node %u stays where it was rebuilt: %s\n", failed, e.what());
    }
  }
  std::fprintf(stderr, "dps: node %u replaces node %u: %zu thread(s) moved there\n", fresh, failed, moved);
}

}  // namespace dps::detail
