// LocalBackend: N nodes inside one process. DPS threads are strands on one TBB arena of W OS threads;
// a "node" is a label that placement, migration and traces use. Envelopes between nodes are moved,
// as between threads of one node, and traced as transfers. The backend for tests, for developing a
// graph on a laptop, and the reference the TCP and simulated backends are compared with.
//
//   dps::LocalBackend backend(/*nodes=*/4, /*workers=*/2);
#pragma once

#include "dps/backend.hpp"

#include <cstddef>
#include <memory>

namespace dps {

class LocalBackend final : public Backend {
 public:
  explicit LocalBackend(std::size_t nodes, std::size_t workers = 0);  // workers 0: one per core
  ~LocalBackend() override;

  std::string_view name() const override { return "local"; }
  void attach(Runtime& runtime) override;
  std::vector<NodeId> nodes() const override;
  NodeId local_node() const override { return 0; }
  NodeId add_node() override;
  void remove_node(NodeId node) override;
  void schedule(Thread& thread, Priority priority) override;
  void send(NodeId from, Thread& to, Envelope* e) override;
  bool migrate(Thread& thread, NodeId to, std::string state, std::function<void(std::exception_ptr)> arrived) override;
  void quiesce() override;
  double now() const override;
  std::size_t workers() const noexcept override;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace dps
