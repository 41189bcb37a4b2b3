// Determinants: the order in which threads handled their data objects, as a data object carries it
// to its receiver (causal message logging: Alvisi & Marzullo, "Message logging: pessimistic,
// optimistic, causal, and optimal"). A thread rebuilt after its node failed
// handles again, in that order, what it handled since its checkpoint, as far as the survivors know
// it: what they received from it depends on no other order (causal_log.hpp).
//
//   Determinants d;
//   d.runs.push_back({owner, 12, {{sender, identity}}});  // owner's 13th object came from sender
//   d.stable.emplace_back(owner, 10);                     // its held checkpoint covers its first 10
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace dps::detail {

// An object a thread handled: its sender (0: the caller) and its identity (recovery_log.hpp). Or the
// end of a merge's or stream's input frame, as its operation saw it: where that came among the
// objects matters as much as their order (a stream's outputs may go to this thread again, and what
// it does with them must find the state the end left).
struct Determinant {
  static constexpr std::uint64_t kEndOfInput = ~std::uint64_t{0};  // `from` of an end; `identity`: the frame

  std::uint64_t from = 0;
  std::uint64_t identity = 0;
  bool operator==(const Determinant&) const = default;
  static Determinant end_of_input(std::uint64_t frame) noexcept { return {kEndOfInput, frame}; }
  bool ends_input() const noexcept { return from == kEndOfInput; }

  template <class Archive>
  void serialize(Archive& a) {
    a(from, identity);
  }
};

struct Determinants {
  // `entries` are what `owner` handled as its objects number `first`, `first` + 1, ... (counted
  // over its life, checkpoints included).
  struct Run {
    std::uint64_t owner = 0;
    std::uint64_t first = 0;
    std::vector<Determinant> entries;
  };
  std::vector<Run> runs;
  // By owner: how many of its objects its last held checkpoint covers (no rebuild needs them).
  std::vector<std::pair<std::uint64_t, std::uint64_t>> stable;

  bool empty() const noexcept { return runs.empty() && stable.empty(); }
  std::size_t bytes() const noexcept {  // on the wire
    std::size_t n = 8 + stable.size() * 16;
    for (const Run& r : runs) n += 20 + r.entries.size() * 16;
    return n;
  }
};

}  // namespace dps::detail
