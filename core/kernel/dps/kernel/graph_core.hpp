// The type-erased form of a graph the kernel runs: a chain of vertices, each an operation bound to a
// thread collection and a route. Built and checked by dps::Graph (every merge and stream closes the
// frame of a producer before it); immutable afterwards and kept alive by the runtime.
#pragma once

#include "dps/vertex.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dps {

struct GraphCore {
  static constexpr std::uint32_t kSink = UINT32_MAX;  // "vertex" that completes the call

  std::uint32_t id = 0;  // the same in every process of the application
  std::string name;
  VertexList vertices;

  std::uint32_t next(std::uint32_t v) const noexcept { return v + 1 < vertices.size() ? v + 1 : kSink; }
  const VertexSpec& operator[](std::uint32_t v) const noexcept { return *vertices[v]; }
};

namespace detail {
std::shared_ptr<GraphCore> build_graph(std::string name, const VertexList& vertices);  // throws GraphError
}  // namespace detail

}  // namespace dps
