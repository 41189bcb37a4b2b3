// One LU run: the threads, the matrix, the factorization in segments between thread changes, the
// check. What `lu` and `lu-sim` do after reading their options, and what the tests call.
//
//   dps::Application app(argc, argv);
//   lu::Options o{.n = 2592, .r = 324, .variant = lu::Variant::Pipelined, .window = 8};
//   lu::Result result = lu::run(app, o.resolved(app.nodes()));
//   std::printf("%.3f GFLOP/s, residual %.3g\n", result.gflops, *result.residual);
#pragma once

#include "factorization.hpp"

#include <dps/dps.hpp>
#include <dps/resize_policy.hpp>

#include <map>
#include <optional>

namespace lu {

struct Options {
  int n = 2592;
  int r = 0;  // 0: chosen by resolved()
  Variant variant = Variant::Owner;
  int window = 0;           // flow control on a level's multiplication jobs; 0: none
  int sub_block = 0;        // each r×r product in r×s and s×r pieces over the multipliers; 0: one thread
  int multipliers = 0;      // 0: one per node
  int column_nodes = 0;     // column threads on the first this many nodes; 0: all
  std::map<int, int> changes{};  // after iteration I (1-based): multipliers added (> 0) or removed (< 0)
  // Asked after every iteration how many nodes to go on with (a multiplier on each; the columns stay
  // on the first column_nodes): the cluster simulator's scheduler, when it runs this job.
  dps::ResizePolicy* scheduler = nullptr;
  MatrixKind matrix = MatrixKind::Random;
  std::uint64_t seed = 1;
  bool check = true;        // gather the factors and compute the scaled residual
  bool keep_factors = false;  // hand the gathered factors back in Result (tests)

  // These options with the defaults filled in for `nodes` nodes; throws std::invalid_argument with a
  // one-line reason when they do not fit together.
  Options resolved(std::size_t nodes) const;
};

struct Result {
  double seconds = 0;  // the factorization, filling and checking excluded (simulated under lu-sim)
  double gflops = 0;   // 2n³/3 flops over seconds (restarted: 2m³/3, m the order left)
  std::size_t multipliers = 0;  // at the end
  std::optional<double> residual;  // none when skipped or nothing was computed (partial direct execution)
  std::optional<Factored> factors;
  std::optional<int> restarted_from;  // under --restart: the iterations the checkpoint had done
};

// Runs on node 0. Throws std::runtime_error naming the zero pivot of a singular matrix. With
// --checkpoint-dir, one call per iteration, written between them; --restart goes on from there (the
// same n, r, variant and matrix; the columns' data stays with its threads, on as many nodes as there are).
Result run(dps::Application& app, const Options& options);

}  // namespace lu
