// VertexSpec: one vertex of a flow graph as dps::op builds it: an operation type bound to a thread
// collection and a route, with its flow-control window and priority. Graphs are chains of them.
//
//   dps::op<Cut>(master).window(64)   // a VertexSpec whose window is 64
#pragma once

#include "dps/priority.hpp"
#include "dps/route.hpp"
#include "dps/type_registry.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dps {

class ThreadsCore;

const char* to_string(OpKind kind) noexcept;

struct VertexSpec {
  const detail::OpType* type = nullptr;
  std::string name;
  ThreadsCore* threads = nullptr;
  detail::RouteFn route;
  std::uint32_t window = 0;  // split and stream: objects of one frame in flight at most (0: unlimited)
  Priority priority = Priority::Normal;  // of the threads its inputs wake

  OpKind kind() const noexcept { return type->kind; }
};

using VertexList = std::vector<std::shared_ptr<const VertexSpec>>;

}  // namespace dps
