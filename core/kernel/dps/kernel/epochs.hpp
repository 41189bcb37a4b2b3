// Epochs: safe memory reclamation for the kernel's lock-free readers (routes read a collection's
// table, the network thread looks threads up by uid). A reader holds an EpochGuard while it uses what
// it read; whatever was unlinked meanwhile goes to a Graveyard, which frees it once every guard that
// could have seen it has closed (epoch-based reclamation: an object buried in epoch e is freed once
// the global epoch reached e + 2, and the epoch only advances when no open guard announces an older one).
//
//   { detail::EpochGuard guard;  Thread* t = table[i];  runtime.enqueue(*t, e); }   // a reader
//   graveyard.bury([old = std::move(old_table)] { return true; });                     // a writer
//   graveyard.collect();    // frees what no reader can hold any more
//
// Guards nest (only the outermost announces) and cost one fence; they are taken per strand run, per
// received frame and per API call, not per message.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <utility>

namespace dps::detail {

class EpochGuard {
 public:
  EpochGuard() noexcept;
  ~EpochGuard();
  EpochGuard(const EpochGuard&) = delete;
  EpochGuard& operator=(const EpochGuard&) = delete;
};

// What lock-free readers may still hold. `ready` owns the object (its captures): it runs once no guard
// that saw the object is open, and returns true when the object can go (its captures are then
// destroyed) or false to be asked again after a further grace period (something else still uses it).
class Graveyard {
 public:
  Graveyard() = default;
  Graveyard(const Graveyard&) = delete;
  Graveyard& operator=(const Graveyard&) = delete;
  ~Graveyard() = default;  // frees the rest: its owner made sure no reader remains

  void bury(std::function<bool()> ready);
  void collect();
  std::size_t size() const;

 private:
  struct Grave {
    std::uint64_t epoch;
    std::function<bool()> ready;
  };
  mutable std::mutex mu_;
  std::deque<Grave> graves_;  // by epoch
};

}  // namespace dps::detail
