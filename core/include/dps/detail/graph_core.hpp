// The type-erased form of a graph the kernel runs: a chain of vertices, each an operation bound to a
// thread collection and a route. Built and checked by dps::Graph (every merge and stream closes the
// frame of a producer before it); immutable afterwards and kept alive by the runtime.
#pragma once

#include "dps/detail/registry.hpp"
#include "dps/payload.hpp"
#include "dps/priority.hpp"
#include "dps/route.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <typeinfo>
#include <vector>

namespace dps {

class Thread;
class Activity;
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

struct GraphCore {
  static constexpr std::uint32_t kSink = UINT32_MAX;  // "vertex" that completes the call

  std::uint32_t id = 0;  // the same in every process of the application
  std::string name;
  std::vector<std::shared_ptr<const VertexSpec>> vertices;

  std::uint32_t next(std::uint32_t v) const noexcept { return v + 1 < vertices.size() ? v + 1 : kSink; }
  const VertexSpec& operator[](std::uint32_t v) const noexcept { return *vertices[v]; }
};

}  // namespace dps
