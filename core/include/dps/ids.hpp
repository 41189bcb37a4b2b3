// The ids the API hands out: nodes of the cluster, calls of a graph, and the split frames a call opens.
//
//   for (dps::NodeId node : app.node_ids()) std::cout << node << " has " << app.cores(node) << " cores\n";
#pragma once

#include <cstdint>

namespace dps {

using NodeId = std::uint32_t;
using CallId = std::uint64_t;
using FrameId = std::uint64_t;

}  // namespace dps
