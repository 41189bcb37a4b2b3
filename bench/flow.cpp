// bench-flow: split -> N tiny leaves spread over DPS threads -> merge, in one process, against oneTBB
// flow_graph doing the same work (a parallel function_node into a serial one) in the same run.
// Prints one line per repetition, then the medians as JSON on the last line.
#include "peer.hpp"
#include "support.hpp"

#include <tbb/flow_graph.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <dps/cli.hpp>
#include <dps/dps.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

struct Count {
  long first, last;
  template <class A>
  void serialize(A& a) {
    a(first, last);
  }
};
struct Value {
  long v;
  template <class A>
  void serialize(A& a) {
    a(v);
  }
};

struct Fan : dps::Split<Count, Value> {
  dps::Step execute(Count c) {
    for (long i = c.first; i < c.last; ++i) co_await post(Value{i});
  }
};
struct Twice : dps::Leaf<Value, Value> {
  Value execute(const Value& x) { return {x.v * 2}; }
};
struct Sum : dps::Merge<Value, Value> {
  dps::Step execute(Value x) {
    long s = x.v;
    while (auto y = co_await next()) s += y->v;
    co_await post(Value{s});
  }
};

double run_dps(long n, std::size_t threads, std::uint32_t window, std::size_t workers) {
  dps::Application app(dps::ApplicationOptions{.nodes = 1, .workers = workers});
  auto master = app.threads<dps::Stateless>("master", 1);
  auto leaves = app.threads<dps::Stateless>("leaves", threads);
  auto fan = dps::op<Fan>(master).window(window);
  auto graph = app.graph(fan >> dps::op<Twice>(leaves) >> dps::op<Sum>(master));
  graph.call(Count{0, 10'000}).get();  // warm-up: the arena starts its OS threads lazily
  const auto t0 = std::chrono::steady_clock::now();
  const long sum = graph.call(Count{0, n}).get().v;
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (sum != n * (n - 1)) throw std::runtime_error("dps: wrong sum " + std::to_string(sum));
  return n / s;
}

double run_tbb(long n) {
  using namespace tbb::flow;
  graph g;
  long sum = 0;
  function_node<long, long> leaf(g, unlimited, [](long x) { return x * 2; });
  function_node<long, continue_msg> merge(g, serial, [&](long x) {
    sum += x;
    return continue_msg();
  });
  make_edge(leaf, merge);
  for (long i = 0; i < 10'000; ++i) leaf.try_put(i);  // warm-up, as for ours
  g.wait_for_all();
  sum = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) leaf.try_put(i);
  g.wait_for_all();
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (sum != n * (n - 1)) throw std::runtime_error("tbb: wrong sum");
  return n / s;
}

}  // namespace

int main(int argc, char** argv) {
  return dps::run_main("bench-flow", [&] {
    long n = 2'000'000, threads = 2, window = 4096, repeat = 5, workers = 2;
    std::string side = "both";
    dps::Cli cli("bench-flow",
                 "Split -> N leaves on T DPS threads -> merge, against oneTBB flow_graph on the same work.");
    cli.option("--messages", n, "leaves per run (default 2000000)")
        .option("--threads", threads, "DPS threads running the leaves (default 2)")
        .option("--window", window, "flow-control window of the split (default 4096)")
        .option("--workers", workers, "OS threads of the DPS runtime (default 2)")
        .option("--repeat", repeat, "runs of each side; medians are reported (default 5)")
        .option("--side", side, "both, dps or tbb: run one side alone, for profiling (default both)");
    if (!cli.parse(argc, argv)) return 0;
    if (side != "both" && side != "dps" && side != "tbb") throw std::invalid_argument("--side is both, dps or tbb");
    if (n < 1 || threads < 1 || workers < 1 || repeat < 1)
      throw std::invalid_argument("--messages, --threads, --workers and --repeat must be positive");
    std::vector<double> ours, peer;
    for (long r = 0; r < repeat; ++r) {  // interleaved, so drift on a shared machine hits both alike
      if (side != "tbb")
        ours.push_back(run_dps(n, static_cast<std::size_t>(threads), static_cast<std::uint32_t>(window),
                               static_cast<std::size_t>(workers)));
      if (side != "dps") peer.push_back(run_tbb(n));
      std::printf("run %ld:", r + 1);
      if (side != "tbb") std::printf(" dps %.0f msg/s", ours.back());
      if (side != "dps") std::printf("%s tbb flow_graph %.0f msg/s", side == "both" ? "," : "", peer.back());
      std::printf("\n");
    }
    // A side --side left out is null, and so is the ratio.
    const auto m = ours.empty() ? std::nullopt : std::optional(median(ours));
    const auto p = peer.empty() ? std::nullopt : std::optional(median(peer));
    std::printf(
        "{\"messages\": %ld, \"threads\": %ld, \"window\": %ld, \"msgs_per_s\": %s, \"peer_msgs_per_s\": %s, "
        "\"ratio\": %s}\n",
        n, threads, window, number_or_null(m, "%.0f").c_str(), number_or_null(p, "%.0f").c_str(),
        number_or_null(m && p ? std::optional(*m / *p) : std::nullopt).c_str());
    return 0;
  });
}
