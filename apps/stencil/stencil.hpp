// One stencil run: the block threads, the iterations in segments between resize points, the resizes
// (threads and the nodes they need, the grid redistributed), the checksum. What `stencil` and
// `stencil-sim` do after reading their options, and what the tests call.
//
//   dps::Application app(argc, argv);
//   stencil::Options o{.n = 4096, .iterations = 200, .resizes = {{50, 4}, {100, 2}}};
//   stencil::Result r = stencil::run(app, o.resolved(app.nodes()));
//   std::printf("%.0f MLUPS, checksum %.10e\n", r.mlups, r.checksum);
#pragma once

#include "decomposition.hpp"
#include "graphs.hpp"

#include <dps/dps.hpp>
#include <dps/resize_policy.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stencil {

// Equal shares; shares in proportion to the nodes' speeds; or Weissman's general solution, each
// thread's iteration x_i + y_i·A_i equal, x_i its halo messages and y_i its row's sweep (strips).
enum class Partition { Equal, Speed, Model };
Partition partition_named(const std::string& text);  // throws std::invalid_argument
const char* name(Partition p);

struct Options {
  long n = 4096;           // the grid, boundaries included
  long iterations = 200;
  Decomposition decomposition = Decomposition::Strips;
  long threads = 0;        // block threads at the start; 0: per_node on each node
  long per_node = 1;       // block threads a node holds (a resize adds or removes nodes to match)
  std::map<long, long> resizes{};  // after iteration I: P block threads
  dps::ResizePolicy* policy = nullptr;  // asked at every resize point instead (resize_every)
  long resize_every = 0;
  Partition partition = Partition::Equal;
  std::map<dps::NodeId, double> speeds{};  // --speeds, --cluster; otherwise the backend's (the simulator's model)
  double latency = 0, bandwidth = 0;       // the network (--cluster), for Partition::Model
  double per_point = 0;                    // a sweep's seconds per point at speed 1, for Partition::Model
  double tolerance = 0;     // stop once the residual is below it (0: run every iteration)
  long check_every = 0;     // measure the residual every this many iterations (0: with a tolerance, 10)
  bool keep_grid = false;   // gather the grid into Result (tests)

  // The options with defaults filled in for `nodes` nodes; throws std::invalid_argument with a
  // one-line reason when they do not fit together.
  Options resolved(std::size_t nodes) const;
};

struct Resize {
  long iteration = 0;
  std::size_t from = 0, to = 0;   // block threads
  double seconds = 0;             // the whole resize: nodes started or stopped, threads, redistribution, setup
  double redistribution_s = 0;    // the redistribution alone (simulated times under stencil-sim)
  std::size_t moved_bytes = 0;    // bytes that changed nodes
  std::size_t busiest_bytes = 0;  // what the busiest node sent or received: the least a network can take
};

struct Result {
  double seconds = 0;    // the iterations and resizes (simulated under stencil-sim)
  double mlups = 0;      // (n − 2)² × iterations / seconds / 10⁶
  long iterations = 0;   // done (fewer when the tolerance was reached)
  long restarted_from = -1;            // --restart: the iterations its checkpoint had done; -1: none
  std::size_t threads = 0, nodes = 0;  // at the end
  double checksum = 0;   // the sum of the interior; 0 without data (NOALLOC)
  double residual = -1;  // the last measured; -1: none
  std::vector<Resize> resizes;
  std::vector<double> iteration_seconds;  // the mean iteration time of each segment between resize points
  std::vector<std::size_t> rows;          // at the start: each strip's rows (blocks: each grid row's)
  std::optional<Grid> grid;
};

// Runs on node 0.
Result run(dps::Application& app, const Options& options);

}  // namespace stencil
