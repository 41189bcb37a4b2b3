// run(): threads, filling, segments, checking.
#include "lu.hpp"

#include "check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace lu {

Options Options::resolved(std::size_t nodes) const {
  Options o = *this;
  const auto why = [&](const std::string& reason) { return std::invalid_argument(reason); };
  if (o.n < 2) throw why("--n must be 2 or more, got " + std::to_string(o.n));
  if (o.r == 0) {
    // About 8 column blocks per node (lookahead and balance), but 128 to 512 wide (dgemm's
    // efficiency, the number of messages): the divisor of n nearest that, measured best with
    // bench-lu (n = 4096 on 2 nodes: 256). The owner variant's update of a level is one dgemm as
    // wide as its node's blocks whatever r: narrower blocks shorten its critical path (12 per node,
    // 96 to 512 wide; n = 2592 and 4096 on 2 nodes: 108 and 128).
    const bool owner = o.variant == Variant::Owner;
    const double target = std::clamp(static_cast<double>(o.n) / ((owner ? 12.0 : 8.0) * static_cast<double>(nodes)),
                                     owner ? 96.0 : 128.0, 512.0);
    for (int r = 1; r <= o.n / 2; ++r)
      if (o.n % r == 0 && (o.r == 0 || std::abs(r - target) < std::abs(o.r - target))) o.r = r;
    if (o.r == 0) throw why("--n " + std::to_string(o.n) + " has no block size dividing it in two or more; give --r");
  }
  if (o.r < 1 || o.n % o.r != 0 || o.n / o.r < 2)
    throw why("--r must divide --n into two blocks or more, got n = " + std::to_string(o.n) + ", r = " + std::to_string(o.r));
  if (o.window < 0) throw why("--window expects 0 or more, got " + std::to_string(o.window));
  if (o.sub_block < 0 || (o.sub_block > 0 && o.r % o.sub_block != 0))
    throw why("--sub-block must divide --r, got r = " + std::to_string(o.r) + ", sub-block = " + std::to_string(o.sub_block));
  if (o.sub_block > 0 && o.variant == Variant::Owner)
    throw why("--sub-block splits the multiplication jobs of the basic and pipelined variants; owner has none");
  if (o.multipliers < 0) throw why("--multipliers expects 0 or more, got " + std::to_string(o.multipliers));
  if (o.column_nodes < 0 || o.column_nodes > static_cast<int>(nodes))
    throw why("--column-nodes expects 0 to " + std::to_string(nodes) + ", got " + std::to_string(o.column_nodes));
  if (o.multipliers == 0) o.multipliers = static_cast<int>(nodes);
  const int iterations = o.n / o.r;
  int threads = o.multipliers;
  for (const auto& [after, change] : o.changes) {
    if (after < 1 || after >= iterations)
      throw why("threads change after iterations 1 to " + std::to_string(iterations - 1) + ", not " + std::to_string(after));
    threads += change;
    if (threads < 1) throw why("after iteration " + std::to_string(after) + " no multiplication thread would be left");
  }
  return o;
}

namespace {

// The scheduler's answer: nodes added with a multiplier each, or the last nodes emptied of their
// multipliers and removed. The columns stay where they are, on the first `column_nodes`.
void resize(dps::Application& app, dps::Threads<Multiplier>& multipliers, int column_nodes, std::size_t target) {
  if (target < static_cast<std::size_t>(column_nodes))
    throw std::invalid_argument("the columns live on the first " + std::to_string(column_nodes) + " nodes: lu cannot shrink to " +
                                std::to_string(target));
  while (app.nodes() < target) multipliers.add_on(app.add_node());
  while (app.nodes() > target) {
    const dps::NodeId last = app.node_ids().back();
    for (std::size_t i = multipliers.size(); i-- > 0;)
      if (multipliers.node(i) == last) multipliers.remove(i).get();
    app.remove_node(last);
  }
}

// What a restart needs besides the threads' states (--checkpoint-dir, --restart): the iterations
// done, the problem they belong to, and where its columns are.
struct RestartPoint {
  int done = 0;  // iterations factored
  int n = 0, r = 0;
  Variant variant = Variant::Owner;
  MatrixKind matrix = MatrixKind::Random;
  std::uint64_t seed = 0;
  int nodes = 0;  // column j is held by the (j % nodes)-th column node's thread (owner) or by thread j
  int multipliers = 0;
  template <class A>
  void serialize(A& a) {
    a(done, n, r, variant, matrix, seed, nodes, multipliers);
  }
};

std::string problem(int n, int r, Variant variant, std::uint64_t seed) {
  return "n = " + std::to_string(n) + ", r = " + std::to_string(r) + ", " + name(variant) + ", seed " +
         std::to_string(seed);
}

// The checkpoint's problem must be this run's: its data are in the restored threads.
void check_same_problem(const RestartPoint& p, const Options& o) {
  if (p.n != o.n || p.r != o.r || p.variant != o.variant || p.seed != o.seed || p.matrix != o.matrix)
    throw std::invalid_argument("--restart: the checkpoint factors " + problem(p.n, p.r, p.variant, p.seed) +
                                (p.matrix != o.matrix ? " (another --matrix)" : "") + ", not " +
                                problem(o.n, o.r, o.variant, o.seed) + ": give its options");
}

}  // namespace

Result run(dps::Application& app, const Options& o) {
  const int K = o.n / o.r;
  const std::optional<RestartPoint> restarted = app.restarted<RestartPoint>();  // before the collections
  if (restarted) check_same_problem(*restarted, o);
  const auto ids = app.node_ids();
  // Column j on the (j % nodes)-th of the column nodes; in the owner variant, a relay on each. A
  // restart on fewer nodes puts several column nodes' threads on one.
  const int nodes =
      restarted ? restarted->nodes : std::min(K, o.column_nodes > 0 ? o.column_nodes : static_cast<int>(ids.size()));
  const auto column_node = [&](int p) { return ids[static_cast<std::size_t>(p) % ids.size()]; };
  const bool owner = o.variant == Variant::Owner;
  Collections t{app.threads<dps::Stateless>("master", 1),
                app.threads<Column>("columns", 0),
                app.threads<Multiplier>("multipliers",
                                        static_cast<std::size_t>(restarted ? restarted->multipliers : o.multipliers)),
                {},
                {}};
  if (owner) {  // a stripe and a relay on each column node
    t.stripes = app.threads<Stripe>("stripes", 0);
    t.relays = app.threads<dps::Stateless>("relays", 0);
    for (int p = 0; p < nodes; ++p) {
      t.stripes.add_on(column_node(p));
      t.relays.add_on(column_node(p));
    }
  } else {
    for (int j = 0; j < K; ++j) t.columns.add_on(column_node(j % nodes));
  }
  if (!restarted) {  // a restart's columns hold their data
    const Fill fill{0, o.n, o.r, nodes, o.sub_block, o.seed, o.matrix};
    const long filled = owner ? app.graph(fill_graph(t.stripes, t.master), "fill").call(fill).get().messages
                              : app.graph(fill_graph(t.columns, t.master), "fill").call(fill).get().messages;
    if (filled != (owner ? nodes : K)) throw std::logic_error("not every column was filled");
  }

  // One call per segment of iterations between thread changes (the operations mark each iteration
  // as a phase of the trace); under a scheduler, or written to disk, one per iteration.
  Result result;
  const int from = restarted ? restarted->done : 0;
  if (restarted) result.restarted_from = from;
  const bool per_iteration = o.scheduler || app.checkpoints_to_disk();
  const double start = app.now();
  auto change = o.changes.upper_bound(from);  // those after earlier iterations are in the checkpoint's threads
  for (int first = from; first < K;) {
    app.checkpoint(
        RestartPoint{first, o.n, o.r, o.variant, o.matrix, o.seed, nodes, static_cast<int>(t.multipliers.size())});
    const int next_change = change == o.changes.end() ? K : change->first;
    const int last = per_iteration ? first + 1 : next_change;
    const SegmentPlan plan{first, last, K, o.variant, o.window, o.sub_block};
    const double began = app.now();
    app.graph(segment_graph(t, plan), "lu").call(Start{first, K, nodes}).get();
    if (last == K) break;
    if (o.scheduler) {
      const std::size_t target =
          o.scheduler->decide({.iteration = last, .size = app.nodes(), .iteration_seconds = app.now() - began});
      resize(app, t.multipliers, nodes, target);
    } else if (last == next_change) {
      if (change->second > 0) t.multipliers.add(static_cast<std::size_t>(change->second));
      for (int k = 0; k < -change->second; ++k) t.multipliers.remove(t.multipliers.size() - 1).get();
      ++change;
    }
    first = last;
  }
  result.seconds = app.now() - start;
  const double order = o.n - from * o.r;  // restarted: what was left to factor
  result.gflops = 2.0 / 3.0 * std::pow(order, 3) / result.seconds / 1e9;
  result.multipliers = t.multipliers.size();

  if (o.check && app.allocates_payloads() && !app.models_compute()) {
    Factored f = owner ? app.graph(gather_graph(t.stripes, t.master), "gather").call(Start{0, K, nodes}).get()
                       : app.graph(gather_graph(t.columns, t.master), "gather").call(Start{0, K, nodes}).get();
    result.residual = scaled_residual(f, o.seed, o.matrix);
    if (o.keep_factors) result.factors = std::move(f);
  }
  return result;
}

}  // namespace lu
