// run(): threads, segments, resizes, checksum.
#include "stencil.hpp"

#include <dps/packed_nodes.hpp>

#include <dps/partition.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

namespace stencil {

Partition partition_named(const std::string& text) {
  for (Partition p : {Partition::Equal, Partition::Speed, Partition::Model})
    if (text == name(p)) return p;
  throw std::invalid_argument("--partition expects equal, speed or model, got '" + text + "'");
}

const char* name(Partition p) {
  switch (p) {
    case Partition::Equal: return "equal";
    case Partition::Speed: return "speed";
    case Partition::Model: return "model";
  }
  return "?";
}

Options Options::resolved(std::size_t nodes) const {
  Options o = *this;
  const auto why = [](const std::string& reason) { return std::invalid_argument(reason); };
  if (o.n < 3) throw why("--n must be 3 or more, got " + std::to_string(o.n));
  if (o.iterations < 1) throw why("--iterations must be 1 or more, got " + std::to_string(o.iterations));
  if (o.per_node < 1) throw why("--per-node must be 1 or more, got " + std::to_string(o.per_node));
  if (o.threads < 0) throw why("--threads must be 1 or more, got " + std::to_string(o.threads));
  if (o.threads == 0) o.threads = o.per_node * static_cast<long>(nodes);
  const long interior = o.n - 2;
  const auto fits = [&](long threads, const std::string& when) {
    if (threads < 1) throw why(when + ": a job needs at least one block thread");
    const ProcessGrid g = process_grid(static_cast<std::size_t>(threads), o.decomposition);
    if (static_cast<long>(g.rows) > interior || static_cast<long>(g.cols) > interior)
      throw why(when + ": " + std::to_string(threads) + " block threads (" + std::to_string(g.rows) + " x " +
                std::to_string(g.cols) + ") need more than the " + std::to_string(interior) + " interior rows of --n " +
                std::to_string(o.n));
  };
  fits(o.threads, "at the start");
  for (const auto& [after, threads] : o.resizes) {
    if (after < 1 || after >= o.iterations)
      throw why("--resize: resize points are after iterations 1 to " + std::to_string(o.iterations - 1) + ", not " +
                std::to_string(after));
    fits(threads, "--resize " + std::to_string(after) + ":" + std::to_string(threads));
  }
  if (o.policy && !o.resizes.empty()) throw why("--resize and --policy both decide the resizes: give one");
  if (o.resize_every < 0) throw why("--resize-every must be 1 or more, got " + std::to_string(o.resize_every));
  if (o.policy && o.resize_every == 0) o.resize_every = std::max(1L, o.iterations / 10);
  if (o.tolerance < 0) throw why("--tolerance must be 0 or more");
  if (o.check_every < 0) throw why("--check-every must be 1 or more, got " + std::to_string(o.check_every));
  if (o.tolerance > 0 && o.check_every == 0) o.check_every = 10;
  for (const auto& [node, speed] : o.speeds)
    if (!(speed > 0)) throw why("--speeds: node " + std::to_string(node) + " needs a positive speed");
  if (o.partition == Partition::Model) {
    if (o.decomposition != Decomposition::Strips)
      throw why("--partition model balances rows (Weissman's row PDUs): it needs --decomposition strips");
    if (!(o.bandwidth > 0) || !(o.latency >= 0)) throw why("--partition model needs the network's figures: give --cluster FILE");
  }
  return o;
}

namespace {

constexpr long kLongestCall = 64;  // iterations per graph call at most (the graph is unrolled)

// What main needs to go on from a disk checkpoint (--checkpoint-dir, --restart); the blocks' grids
// are in their threads' states.
struct Progress {
  long done = 0;  // iterations
  std::size_t threads = 0;
  double residual = -1;
  template <class A>
  void serialize(A& a) {
    a(done, threads, residual);
  }
};

class Job {
 public:
  // `threads` blocks after `done` iterations: the start, or a restart whose blocks hold their grids.
  Job(dps::Application& app, const Options& o, std::size_t threads, long done)
      : app_(app),
        o_(o),
        interior_(static_cast<std::size_t>(o.n - 2)),
        nodes_(app, static_cast<std::size_t>(o.per_node)),
        blocks_(app.threads<Block>("blocks", 0)),
        conductor_(app.threads<Conductor>("conductor", 0)),
        graphs_(app, blocks_, conductor_),
        redistribute_(app, blocks_) {
    conductor_.add_on(app.local_node());
    place(threads);
    layout_ = layout_of(size());
    graphs_.setup(layout_, interior_, done);
  }

  std::size_t size() const { return blocks_.size(); }
  Graphs& graphs() { return graphs_; }
  const dps::Layout& layout() const { return layout_; }

  // Grows or shrinks to `threads` block threads after `done` iterations.
  Resize resize(std::size_t threads, long done) {
    Resize r{done, size(), threads, 0, 0, 0, 0};
    const double start = app_.now();
    const dps::Layout from = layout_;
    if (threads > size()) place(threads);
    layout_ = layout_of(threads);
    dps::RedistributionPlan plan = dps::plan_redistribution(from, layout_);
    std::map<dps::NodeId, std::size_t> sent, received;
    for (const dps::Transfer& t : plan.transfers)
      if (const dps::NodeId a = blocks_.node(t.from), b = blocks_.node(t.to); a != b) {
        r.moved_bytes += t.elements * sizeof(double);
        sent[a] += t.elements * sizeof(double);
        received[b] += t.elements * sizeof(double);
      }
    for (const auto* bytes : {&sent, &received})
      for (const auto& [node, count] : *bytes) r.busiest_bytes = std::max(r.busiest_bytes, count);
    const double moving = app_.now();
    redistribute_.run(std::move(plan)).get();
    r.redistribution_s = app_.now() - moving;
    graphs_.setup(layout_, interior_, done);
    while (size() > threads) blocks_.remove(size() - 1).get();
    nodes_.release(size());
    r.seconds = app_.now() - start;
    return r;
  }

 private:
  dps::NodeId node_of(std::size_t thread) const { return nodes_.node_of(thread); }

  // Block threads up to `threads`, nodes added as needed.
  void place(std::size_t threads) {
    nodes_.reserve(threads);
    for (std::size_t i = size(); i < threads; ++i) blocks_.add_on(node_of(i));
  }

  dps::Layout layout_of(std::size_t threads) const {
    std::vector<double> speeds;
    if (o_.partition != Partition::Equal)
      for (std::size_t i = 0; i < threads; ++i) speeds.push_back(speed(node_of(i)));
    if (o_.partition != Partition::Model) return layout_for(interior_, threads, o_.decomposition, speeds);
    // Weissman: a row costs y_i, the halos x_i (a message to each neighbour strip) an iteration.
    std::vector<double> fixed(threads), per_row(threads);
    const double halo = o_.latency + static_cast<double>(interior_ * sizeof(double)) / o_.bandwidth;
    for (std::size_t i = 0; i < threads; ++i) {
      fixed[i] = halo * static_cast<double>((i > 0) + (i + 1 < threads));
      per_row[i] = o_.per_point * static_cast<double>(interior_) / speeds[i];
    }
    return dps::Layout(dps::Distribution::blocks(dps::partition_by_cost(interior_, fixed, per_row)),
                       dps::Distribution::whole(interior_), 1);
  }

  double speed(dps::NodeId node) const {
    if (auto s = o_.speeds.find(node); s != o_.speeds.end()) return s->second;
    if (const double s = app_.speed(node); s > 0) return s;
    throw std::invalid_argument(std::string("--partition ") + name(o_.partition) + ": the speed of node " +
                                std::to_string(node) + " is unknown (give --speeds or --cluster, or a model to stencil-sim)");
  }

  dps::Application& app_;
  const Options& o_;
  std::size_t interior_;
  dps::PackedNodes nodes_;  // thread i on the (i / per_node)-th
  dps::Threads<Block> blocks_;
  dps::Threads<Conductor> conductor_;
  Graphs graphs_;
  dps::Redistribution<&Block::grid> redistribute_;
  dps::Layout layout_;
};

}  // namespace

Result run(dps::Application& app, const Options& o) {
  if (o.partition == Partition::Model && !(o.per_point > 0))
    throw std::logic_error("stencil::run: the model partition needs Options::per_point (SweepCost::measure)");
  const std::optional<Progress> restarted = app.restarted<Progress>();
  if (restarted && restarted->done > o.iterations)
    throw std::invalid_argument("--restart: the checkpoint is after " + std::to_string(restarted->done) +
                                " iterations, more than --iterations " + std::to_string(o.iterations));
  long done = restarted ? restarted->done : 0;
  Job job(app, o, restarted ? restarted->threads : static_cast<std::size_t>(o.threads), done);
  Result result;
  if (restarted) {
    result.restarted_from = done;
    result.residual = restarted->residual;
    if (job.size() != static_cast<std::size_t>(o.threads))
      result.resizes.push_back(job.resize(static_cast<std::size_t>(o.threads), done));
  }
  for (std::size_t k = 0; k < job.layout().rows().parts(); ++k) result.rows.push_back(job.layout().rows().count(k));
  const double start = app.now();
  double segment_start = start, redistribution = 0;
  long segment_first = done;
  const long first = done;
  while (done < o.iterations) {
    app.checkpoint(Progress{done, job.size(), result.residual});
    // The next stop: a resize point, a residual check, the end, or the longest call.
    long stop = std::min(o.iterations, done + kLongestCall);
    if (auto next = o.resizes.upper_bound(done); next != o.resizes.end()) stop = std::min(stop, next->first);
    if (o.resize_every > 0) stop = std::min(stop, (done / o.resize_every + 1) * o.resize_every);
    if (o.check_every > 0) stop = std::min(stop, (done / o.check_every + 1) * o.check_every);
    const Swept swept = job.graphs().iterate({done, stop - done, job.size(), o.check_every});
    done = stop;
    if (swept.residual >= 0) result.residual = swept.residual;
    if (o.tolerance > 0 && swept.residual >= 0 && swept.residual < o.tolerance) break;
    if (done >= o.iterations) break;
    const auto scheduled = o.resizes.find(done);
    if (scheduled == o.resizes.end() && !(o.resize_every > 0 && done % o.resize_every == 0)) continue;  // no resize point
    std::size_t target = scheduled != o.resizes.end() ? static_cast<std::size_t>(scheduled->second) : job.size();
    const double per_iteration = (app.now() - segment_start) / static_cast<double>(done - segment_first);
    if (o.policy) target = o.policy->decide({done, job.size(), per_iteration, redistribution});
    if (target == job.size()) continue;
    result.iteration_seconds.push_back(per_iteration);
    const Resize r = job.resize(target, done);
    redistribution = r.redistribution_s;
    result.resizes.push_back(r);
    segment_start = app.now();
    segment_first = done;
  }
  result.seconds = app.now() - start;
  if (done > segment_first) result.iteration_seconds.push_back((app.now() - segment_start) / static_cast<double>(done - segment_first));
  result.iterations = done;
  const double interior = static_cast<double>(o.n - 2);
  result.mlups = interior * interior * static_cast<double>(done - first) / result.seconds / 1e6;
  result.threads = job.size();
  result.nodes = app.nodes();
  if (app.allocates_payloads() && !app.models_compute()) {
    result.checksum = job.graphs().checksum(job.size());
    if (o.keep_grid) result.grid = job.graphs().gather(job.size(), static_cast<std::size_t>(o.n));
  }
  return result;
}

}  // namespace stencil
