// demo: the main job until LU takes over. Integrates 4 / (1 + x^2) over [0, 1) (= pi) on a flow graph
// spread over the nodes, then grows the worker collection by one node and integrates again.
#include "result_line.hpp"

#include <dps/cli.hpp>
#include <dps/dps.hpp>

#include <cmath>
#include <cstdio>
#include <numbers>

namespace {

struct Interval {
  long first, last, total;  // intervals [first, last) of `total`
  template <class A>
  void serialize(A& a) {
    a(first, last, total);
  }
};
struct Area {
  double sum;
  long pieces;
  template <class A>
  void serialize(A& a) {
    a(sum, pieces);
  }
};
struct Worker {
  long pieces = 0;  // how much this thread computed
  template <class A>
  void serialize(A& a) {
    a(pieces);
  }
};

struct Cut : dps::Split<Interval, Interval> {
  static inline long chunk = 1'000'000;
  dps::Step execute(Interval r) {
    for (long i = r.first; i < r.last; i += chunk) co_await post(Interval{i, std::min(i + chunk, r.last), r.total});
  }
};
struct Integrate : dps::Leaf<Interval, Area, Worker> {
  static inline double seconds_per_interval = 1.7e-9;  // what partial direct execution charges (measured here)
  Area execute(const Interval& r) {
    const double h = 1.0 / static_cast<double>(r.total);
    const double s = dps::compute(seconds_per_interval * static_cast<double>(r.last - r.first), [&] {
      double sum = 0;
      for (long i = r.first; i < r.last; ++i) {
        const double x = (static_cast<double>(i) + 0.5) * h;
        sum += 4.0 / (1.0 + x * x);
      }
      return sum;
    });
    ++thread().pieces;
    return {s * h, 1};
  }
};
struct Gather : dps::Merge<Area, Area> {
  dps::Step execute(Area a) {
    while (auto b = co_await next()) a.sum += b->sum, a.pieces += b->pieces;
    co_await post(a);
  }
};

}  // namespace

int main(int argc, char** argv) {
  return dps::run_main(apps::kProgram, [&] {
    dps::Application app(argc, argv);
    long intervals = 200'000'000;
    dps::Cli cli(apps::kProgram,
                 "Integrates 4/(1+x^2) on [0,1) with a split-leaf-merge graph over the nodes, "
                 "then adds a node and a worker and runs again.");
    cli.option("--intervals", intervals, "number of intervals (default 200000000)")
        .option("--chunk", Cut::chunk, "intervals per leaf (default 1000000)");
    if (!cli.parse(app.args(), dps::Application::options_help())) return 0;

    auto master = app.threads<dps::Stateless>("master", 1);
    auto workers = app.threads<Worker>("workers", app.nodes());
    auto graph = app.graph(dps::op<Cut>(master).window(64) >> dps::op<Integrate>(workers) >> dps::op<Gather>(master));

    auto timed = [&] {  // app.now(): the simulated clock in a simulation
      auto phase = app.phase("run on " + std::to_string(app.nodes()) + " nodes");  // in the trace (--trace)
      const double t0 = app.now();
      const Area a = graph.call(Interval{0, intervals, intervals}).get();
      return std::pair{a, app.now() - t0};
    };
    const auto [first, t1] = timed();
    std::printf("%zu nodes, %zu workers: pi ~ %.12f in %.3f s (%ld leaves)\n", app.nodes(), workers.size(), first.sum,
                t1, first.pieces);
    workers.add_on(app.add_node());  // malleability: one more node and thread, used by the next call
    const auto [second, t2] = timed();
    std::printf("%zu nodes, %zu workers: pi ~ %.12f in %.3f s (%ld leaves)\n", app.nodes(), workers.size(), second.sum,
                t2, second.pieces);
    long per_worker_min = first.pieces + second.pieces, total = 0;
    while (workers.size() > 0) {
      const long p = workers.remove(0).get().pieces;
      per_worker_min = std::min(per_worker_min, p);
      total += p;
    }
    const double error = std::fabs(second.sum - std::numbers::pi);
    // "time_s" in demo-sim too: the calls' times by app.now(), simulated there.
    const std::string line = apps::ResultLine()
                                 .add("nodes", app.nodes())
                                 .add("intervals", intervals)
                                 .add("pi", second.sum, "%.15f")
                                 .add("error", error, "%.3e")
                                 .add("time_s", t1, "%.4f")
                                 .add("time_grown_s", t2, "%.4f")
                                 .add("leaves", total)
                                 .add("min_leaves_per_worker", per_worker_min)
                                 .json();
    std::printf("%s\n", line.c_str());
    const bool skipped = second.sum == 0;  // partial direct execution skips the integrals: nothing to check
    return skipped || error < 1e-6 ? 0 : 1;
  });
}
