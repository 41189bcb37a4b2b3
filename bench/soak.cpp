// bench-soak: nothing lost under load. Objects go through split -> leaf -> merge on 4 node processes,
// first steady, then while threads are added, removed and migrated every few milliseconds and nodes
// added and removed every few hundred (tests/churn.hpp, which the churn test runs for 3 s in CI).
// Every object is counted exactly once by the leaves (their states come back when threads are
// removed), no call may take over 30 s, and node 0's memory is sampled after a warm-up, halfway and at
// the end: resident, heap in use, and resident once the allocators gave back their free caches. A leak
// shows as growth; the threads node 0 still keeps and its graveyard (reclamation lagging behind) are
// printed too. A lost or doubled object exits non-zero.
//
//   bench-soak --objects 1000000 --thread-every 3 --node-every 300
#include "churn.hpp"
#include "support.hpp"

#include <dps/cli.hpp>
#include <dps/dps.hpp>
#include <dps/kernel/runtime.hpp>  // the graveyard, to see that nothing is kept

#include <malloc.h>
#include <tbb/scalable_allocator.h>

#include <chrono>
#include <cstdio>
#include <deque>
#include <fstream>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>

namespace {

using namespace dps::test;

double resident_mb() {  // this process's
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stod(line.substr(6)) / 1024;
  return 0;
}

// Resident memory once the allocators returned the free memory they cache: what the process holds.
double trimmed_mb() {
  scalable_allocation_command(TBBMALLOC_CLEAN_ALL_BUFFERS, nullptr);
  malloc_trim(0);
  return resident_mb();
}

double heap_mb() {  // what the system heap has handed out and not got back (RSS also counts what it keeps)
  const struct mallinfo2 m = mallinfo2();
  return static_cast<double>(m.uordblks + m.hblkhd) / (1024 * 1024);
}

constexpr long kPerCall = 1000, kInFlight = 4;

// Runs calls of kPerCall objects, kInFlight at a time, until `objects` went through; checks each
// result; returns the seconds it took. `halfway` runs once when half the objects are done.
double pump(dps::Graph<Range, Partial>& graph, long objects, const std::function<void()>& halfway = {}) {
  const Range range{0, kPerCall * Pieces<>::step};
  std::deque<dps::Future<Partial>> running;
  long sent = 0, done = 0;
  const auto start = std::chrono::steady_clock::now();
  auto finish_one = [&] {
    const Partial p = within(std::move(running.front()), "a call (" + std::to_string(done) + " objects done)");
    running.pop_front();
    if (p.sum != triangle(range.last) || p.count != kPerCall)
      throw std::runtime_error("a call summed " + std::to_string(p.count) + " objects to " + std::to_string(p.sum));
    done += kPerCall;
    if (halfway && done >= objects / 2 && done - kPerCall < objects / 2) halfway();
  };
  for (; sent < objects; sent += kPerCall) {
    running.push_back(graph.call(range));
    if (static_cast<long>(running.size()) == kInFlight) finish_one();
  }
  while (!running.empty()) finish_one();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  return dps::run_main("bench-soak", [&] {
    auto app = node_application(argc, argv, 4);
    long objects = 1'000'000, thread_every = 3, node_every = 300;
    dps::Cli cli("bench-soak", "Counts objects through a graph on 4 node processes, steady and under churn.");
    cli.option("--objects", objects, "objects in each phase (default 1000000)")
        .option("--thread-every", thread_every, "milliseconds between thread changes (default 3)")
        .option("--node-every", node_every, "milliseconds between node changes (default 300)");
    if (!cli.parse(app->args(), "")) return 0;
    if (objects < kPerCall || thread_every < 1 || node_every < 1)
      throw std::invalid_argument("--objects must be at least 1000, the periods at least 1 ms");
    objects -= objects % kPerCall;

    auto master = app->threads<dps::Stateless>("master", 1);
    auto workers = app->threads<Counter>("workers", 8);
    auto graph = app->graph(dps::op<Pieces<>>(master).window(64) >> dps::op<AddRange<Counter>>(workers) >>
                            dps::op<SumPartials<>>(master));

    const double steady_s = pump(graph, objects);
    std::printf("steady: %ld objects in %.2f s\n", objects, steady_s);

    double warm_mb = 0;
    std::optional<Churn> churn;
    churn.emplace(*app, workers,
                  ChurnOptions{.thread_every = std::chrono::milliseconds(thread_every),
                               .node_every = std::chrono::milliseconds(node_every)});
    warm_mb = resident_mb();  // after the steady phase: the buffers and caches are warm
    const double warm_heap_mb = heap_mb(), warm_trimmed_mb = trimmed_mb();
    double half_mb = 0, half_heap_mb = 0;
    const double churn_s = pump(graph, objects, [&] { half_mb = resident_mb(), half_heap_mb = heap_mb(); });
    churn->stop();
    const double end_mb = resident_mb(), end_heap_mb = heap_mb(), end_trimmed_mb = trimmed_mb();
    dps::Runtime& rt = app->runtime();
    rt.graveyard().collect();
    const std::size_t kept = rt.threads().size(), graves = rt.graveyard().size();
    if (!churn->error().empty()) throw std::runtime_error("the churn failed: " + churn->error());
    std::printf("churn: %ld objects in %.2f s; %ld threads added, %ld removed, %ld migrated; %ld nodes added, %ld removed\n",
                objects, churn_s, churn->added, churn->removed, churn->migrated, churn->nodes_added,
                churn->nodes_removed);

    long seen = churn->seen();
    while (workers.size()) seen += within(workers.remove(0), "the state of a worker").seen;
    if (seen != 2 * objects)
      throw std::runtime_error("the leaves counted " + std::to_string(seen) + " objects, not " +
                               std::to_string(2 * objects));
    std::printf("every object counted exactly once (%ld)\n", seen);
    std::printf(
        "{\"objects\": %ld, \"nodes\": 4, \"steady_rate\": %.0f, \"churn_rate\": %.0f, \"churn_over_steady\": %.3f, "
        "\"threads_added\": %ld, \"threads_removed\": %ld, \"threads_migrated\": %ld, \"nodes_added\": %ld, "
        "\"nodes_removed\": %ld, \"counted_once\": true, \"rss_mb_warm\": %.1f, \"rss_mb_half\": %.1f, "
        "\"rss_mb_end\": %.1f, \"heap_mb_warm\": %.2f, \"heap_mb_half\": %.2f, \"heap_mb_end\": %.2f, "
        "\"trimmed_mb_warm\": %.1f, \"trimmed_mb_end\": %.1f, \"threads_kept\": %zu, \"graves\": %zu}\n",
        objects, objects / steady_s, objects / churn_s, steady_s / churn_s, churn->added, churn->removed,
        churn->migrated, churn->nodes_added, churn->nodes_removed, warm_mb, half_mb, end_mb, warm_heap_mb, half_heap_mb,
        end_heap_mb, warm_trimmed_mb, end_trimmed_mb, kept, graves);
    return 0;
  });
}
