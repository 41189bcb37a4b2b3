// Building a graph: every merge and stream must close the frame of a split (or stream) before it.
#include "dps/graph.hpp"

#include "dps/kernel/graph_core.hpp"
#include "dps/kernel/runtime.hpp"

#include <dps/trace/names.hpp>

#include <cxxabi.h>

#include <cstdlib>
#include <memory>

namespace dps {

const char* to_string(OpKind kind) noexcept {
  switch (kind) {
    case OpKind::Split: return "split";
    case OpKind::Leaf: return "leaf";
    case OpKind::Merge: return "merge";
    case OpKind::Stream: return "stream";
  }
  return "?";
}

namespace detail {

std::string demangle(const char* mangled) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(mangled, nullptr, nullptr, &status), std::free);
  return status == 0 && name ? std::string(name.get()) : std::string(mangled);
}

std::string operation_name(const std::type_info& type) { return trace::short_name(demangle(type.name())); }

std::shared_ptr<GraphCore> build_graph(std::string name, const VertexList& vertices) {
  auto graph = std::make_shared<GraphCore>();
  graph->name = std::move(name);
  graph->vertices = vertices;
  std::vector<std::uint32_t> open;  // producers whose frames are not closed yet
  auto where = [&](std::uint32_t v) {
    return std::string(to_string(vertices[v]->kind())) + " '" + vertices[v]->name + "' in graph '" + graph->name + "'";
  };
  for (std::uint32_t v = 0; v < vertices.size(); ++v) {
    switch (vertices[v]->kind()) {
      case OpKind::Leaf: break;
      case OpKind::Split: open.push_back(v); break;
      case OpKind::Merge:
      case OpKind::Stream:
        if (open.empty()) throw GraphError(where(v) + " has no split before it whose frame it could close");
        open.pop_back();
        if (vertices[v]->kind() == OpKind::Stream) open.push_back(v);
        break;
    }
  }
  if (!open.empty()) throw GraphError(where(open.back()) + " has no merge after it to collect its outputs");
  return graph;
}

std::shared_ptr<const GraphCore> make_graph(Runtime& runtime, std::string name, const VertexList& vertices) {
  return runtime.adopt(build_graph(std::move(name), vertices));
}

const VertexList& vertices_of(const GraphCore& graph) noexcept { return graph.vertices; }
const std::string& name_of(const GraphCore& graph) noexcept { return graph.name; }
Backend* driver_of(const Runtime& runtime) noexcept { return &runtime.backend(); }

void start_call(Runtime& runtime, std::shared_ptr<const GraphCore> graph, Payload input, std::unique_ptr<CallBase> call) {
  runtime.start_call(std::move(graph), std::move(input), std::move(call));
}

}  // namespace detail
}  // namespace dps
