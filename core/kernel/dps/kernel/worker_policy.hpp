// The worker policy: how the OS threads of a node share it among its DPS threads. The runtime's
// strands follow it (strands.hpp, Thread::run), and the simulator follows it step by step
// (sim/src/sim_steps.cpp), so that a prediction runs the threads in the order a real run does.
//   - A thread with work waits in line for a worker. One woken by an urgent operation's input waits
//     ahead of the others, behind the urgent ones already waiting.
//   - A thread keeps its worker for a turn: until it has no work left, has run kBudget steps, or an
//     urgent thread waits. With work left, it goes to the back of the line.
//   - A quick thread woken by a message from another node takes its turn inline, on the thread that
//     received the message (no switch between the message's arrival and its handling), unless that
//     thread runs one already. An inline turn ends as a worker's does, after kInlineBudget steps at
//     most, so that the receiving thread soon reads the network again; with work left, the thread
//     then waits in line as any other.
#pragma once

#include "dps/kernel/thread.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace dps::detail::worker_policy {

enum class Turn : std::uint8_t { Worker, Inline };  // where a thread takes its turn

inline constexpr std::size_t kBudget = 512;      // steps of a turn on a worker
inline constexpr std::size_t kInlineBudget = 8;  // steps of an inline turn

constexpr std::size_t budget(Turn turn) noexcept { return turn == Turn::Worker ? kBudget : kInlineBudget; }

// Whether the thread that a message from another node woke takes its turn inline, on the thread that
// received it (`receiver_busy`: that thread runs another's turn already).
inline bool runs_inline(const Thread& t, bool receiver_busy) noexcept {
  return !receiver_busy && t.pace() == Thread::Pace::Quick;
}

// Whether a turn ends after its `steps`-th step though the thread has work left: its budget is spent,
// or an urgent thread waits for a worker.
constexpr bool turn_ends(std::size_t steps, std::size_t budget, bool urgent_waiting) noexcept {
  return steps >= budget || urgent_waiting;
}

// Where a thread joins the line of those waiting for a worker: urgent, after the urgent ones there;
// otherwise at the end.
template <class Line, class IsUrgent>
auto place(Line& line, bool urgent, IsUrgent is_urgent) {
  return urgent ? std::find_if(line.begin(), line.end(), [&](const auto& x) { return !is_urgent(x); }) : line.end();
}

}  // namespace dps::detail::worker_policy
