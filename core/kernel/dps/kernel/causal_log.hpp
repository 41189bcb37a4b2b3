// CausalLog: what a thread knows of the order in which threads (itself included) handled their data
// objects since their last held checkpoints. Every data object it sends carries what its receiver
// has not been told yet, so a thread's order is known, after its node failed, to every survivor
// that received anything that depends on it; its rebuild gathers it from them (Rejoin) and handles
// again in that order (the causal protocols of Alvisi & Marzullo, "Message logging: pessimistic,
// optimistic, causal, and optimal"). Orders a held checkpoint covers are dropped as the news of it
// spreads.
//
//   detail::CausalLog log;
//   log.record(self, n, {sender, identity});  // it handled its object number n
//   e.determinants = log.news_for(receiver);  // carried by what it sends
//   log.learn(*e.determinants);               // ... and learnt where it is handled
//   log.stable(self, 40);                     // its held checkpoint covers its first 40
#pragma once

#include "dps/kernel/determinants.hpp"

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <unordered_map>

namespace dps::detail {

class CausalLog {
 public:
  // `owner` handled `d` as its object number `index` (known already, or a gap before it: ignored).
  void record(std::uint64_t owner, std::uint64_t index, const Determinant& d);
  void learn(const Determinants& news, std::uint64_t but = ~std::uint64_t{0});  // but that owner's
  void stable(std::uint64_t owner, std::uint64_t count);
  // What `to` was not told yet (nullptr: nothing), its own order included or not: `to` knows its
  // own unless it was rebuilt.
  std::unique_ptr<Determinants> news_for(std::uint64_t to, bool its_own = false);
  // `to` was rebuilt: what it was told is lost.
  void forget_told(std::uint64_t to) { told_.erase(to); }
  void forget_told() { told_.clear(); }  // this thread was: what it told, it does not know
  std::size_t entries() const noexcept;

  template <class Archive>
  void serialize(Archive& a) {  // in a checkpoint (net/); what it told goes: told again after a rebuild
    a(known_);
  }

  struct Known {
    std::uint64_t first = 0;  // the index of entries.front()
    std::uint64_t stable = 0;
    std::deque<Determinant> entries;

    template <class Archive>
    void serialize(Archive& a) {
      a(first, stable, entries);
    }
  };

 private:
  struct Told {
    std::uint64_t upto = 0, stable = 0;
  };
  std::map<std::uint64_t, Known> known_;                                             // by owner
  std::unordered_map<std::uint64_t, std::unordered_map<std::uint64_t, Told>> told_;  // by receiver, by owner
};

// What a rebuilt thread handles again, in order, from the orders its survivors told it of.
class ReplayScript {
 public:
  void restart(std::uint64_t first) {
    next_ = first;
    known_.clear();
  }
  void learn(const Determinants& news, std::uint64_t owner);
  const Determinant* front() const;  // nullptr: the order known ends here
  bool names(const Determinant& d) const;  // later than its front
  void pop() { known_.erase(next_++); }
  void clear() { known_.clear(); }

 private:
  std::uint64_t next_ = 0;
  std::map<std::uint64_t, Determinant> known_;
};

}  // namespace dps::detail
