// Epoch-based reclamation (see detail/epochs.hpp): one record per OS thread that ever took a guard,
// reused when that thread ends, and one global epoch.
#include "dps/kernel/epochs.hpp"

namespace dps::detail {

namespace {

struct Record {
  std::atomic<std::uint64_t> announced{0};  // the epoch its open guard saw; 0 outside any guard
  std::atomic<bool> taken{true};
  Record* next = nullptr;
  unsigned depth = 0;  // its OS thread's nested guards
};

std::atomic<std::uint64_t> epoch{1};
std::atomic<Record*> records{nullptr};  // never shrinks: at most one per OS thread alive at once

Record* acquire_record() {
  for (Record* r = records.load(std::memory_order_acquire); r; r = r->next) {
    bool free = false;
    if (r->taken.compare_exchange_strong(free, true, std::memory_order_acquire)) return r;
  }
  auto* r = new Record;
  r->next = records.load(std::memory_order_relaxed);
  while (!records.compare_exchange_weak(r->next, r, std::memory_order_release, std::memory_order_relaxed)) {
  }
  return r;
}

struct Owned {
  Record* record = acquire_record();
  ~Owned() { record->taken.store(false, std::memory_order_release); }
};

Record& mine() {
  thread_local Owned owned;
  return *owned.record;
}

// The epoch moves on once every open guard announced the current one.
void advance() {
  std::uint64_t now = epoch.load();
  std::atomic_thread_fence(std::memory_order_seq_cst);
  for (Record* r = records.load(std::memory_order_acquire); r; r = r->next) {
    const std::uint64_t seen = r->announced.load(std::memory_order_acquire);
    if (seen != 0 && seen != now) return;
  }
  epoch.compare_exchange_strong(now, now + 1);
}

}  // namespace

EpochGuard::EpochGuard() noexcept {
  Record& r = mine();
  if (r.depth++ > 0) return;
  // release: what this thread's earlier guards read happens before a reclaimer seeing this value.
  r.announced.store(epoch.load(), std::memory_order_release);
  // The announcement is visible before this thread reads any pointer a writer may unlink.
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

EpochGuard::~EpochGuard() {
  Record& r = mine();
  if (--r.depth == 0) r.announced.store(0, std::memory_order_release);
}

void Graveyard::bury(std::function<bool()> ready) {
  std::atomic_thread_fence(std::memory_order_seq_cst);  // the unlink is visible before the epoch is read
  const std::uint64_t now = epoch.load();
  std::lock_guard lock(mu_);
  graves_.push_back({now, std::move(ready)});
}

void Graveyard::collect() {
  advance();
  advance();
  const std::uint64_t now = epoch.load();
  std::deque<Grave> due;
  {
    std::lock_guard lock(mu_);
    while (!graves_.empty() && graves_.front().epoch + 2 <= now) {
      due.push_back(std::move(graves_.front()));
      graves_.pop_front();
    }
  }
  for (Grave& g : due)
    if (!g.ready()) bury(std::move(g.ready));
}

std::size_t Graveyard::size() const {
  std::lock_guard lock(mu_);
  return graves_.size();
}

}  // namespace dps::detail
