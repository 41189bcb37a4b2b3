// Priority: how soon a DPS thread that an operation's input wakes runs. An urgent one runs before the
// threads of its node that already wait for a worker (the critical path of a computation, as oneTBB's
// node priorities); it neither overtakes its own thread's earlier messages nor preempts a step.
//
//   dps::op<Factor>(columns, dps::to(level)).urgent()   // LU's panel before the queued updates
#pragma once

#include <cstdint>

namespace dps {

enum class Priority : std::uint8_t { Normal, Urgent };

}  // namespace dps
