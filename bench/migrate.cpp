// bench-migrate: a thread whose state holds 1 MiB, then 64 MiB, moved from node 0 to node 1 and back
// between two node processes over TCP loopback (the state serialized with cereal, its bulk as one
// binary block). Each leg is timed until the thread is usable where it went: out to node 1 until the
// migration's Future and then a small call run by the thread on node 1 return (the Future alone only
// says the image left node 0), back until the Future returns (it comes behind the image). After the
// timed runs a leaf on the thread checks the state's checksum and its process on each side; a lost or
// damaged state exits non-zero. A migration's figure is the median over round trips of their mean leg
// (the legs differ: each direction alone is in the JSON too). The last line is JSON with the medians.
//
//   bench-migrate --repeat 20 --big-repeat 5
#include "support.hpp"

#include <dps/cli.hpp>
#include <dps/dps.hpp>
#include <dps/large_array.hpp>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// The moved state: real bulk (a pattern, so damage shows) and a counter the leaves bump on each side.
struct Cargo {
  dps::LargeArray<std::uint64_t> words;  // serialized as cereal::binary_data: one block, no per-element work
  long visits = 0;
  template <class A>
  void serialize(A& a) {
    a(words, visits);
  }
};

std::uint64_t pattern(std::size_t i) {  // splitmix64: every word differs
  std::uint64_t z = i + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::uint64_t checksum(const dps::LargeArray<std::uint64_t>& w) {  // order-sensitive, so swaps show too
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t i = 0; i < w.size(); ++i) h = (h ^ w[i]) * 0x100000001b3ull;
  return h;
}

struct Probe {
  bool verify = false;  // false: the cheapest call that the thread must run (timing)
  template <class A>
  void serialize(A& a) {
    a(verify);
  }
};
struct Seen {
  std::int64_t pid = 0;
  std::uint32_t node = 0;
  std::uint64_t words = 0, sum = 0;
  long visits = 0;
  template <class A>
  void serialize(A& a) {
    a(pid, node, words, sum, visits);
  }
};

struct Check : dps::Leaf<Probe, Seen, Cargo> {
  Seen execute(const Probe& p) {
    Cargo& c = thread();
    Seen s{static_cast<std::int64_t>(::getpid()), node(), c.words.size(), 0, 0};
    if (p.verify) s.sum = checksum(c.words), s.visits = ++c.visits;
    return s;
  }
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Figures {
  double out_future, out_usable, back, leg, min_leg, max_leg;  // medians (leg: of round-trip means), extreme legs
};

}  // namespace

int main(int argc, char** argv) {
  return dps::run_main("bench-migrate", [&] {
    const auto application = two_node_application(argc, argv);
    dps::Application& app = *application;

    long repeat = 20, big_repeat = 5;
    dps::Cli cli("bench-migrate", "Migrates a thread with 1 MiB and 64 MiB of state between two node processes.");
    cli.option("--repeat", repeat, "round trips with 1 MiB (default 20)")
        .option("--big-repeat", big_repeat, "round trips with 64 MiB (default 5)");
    if (!cli.parse(app.args(), "")) return 0;
    if (repeat < 1 || big_repeat < 1) throw std::invalid_argument("--repeat and --big-repeat must be at least 1");

    const std::int64_t home_pid = ::getpid();
    auto measure = [&](const char* label, std::size_t bytes, long rounds) {
      const std::size_t n = bytes / sizeof(std::uint64_t);
      // Built on node 0 and kept there: a one-thread collection starts on node 0.
      auto cargo = app.threads<Cargo>(label, 1, [n](std::size_t) {
        Cargo c{dps::LargeArray<std::uint64_t>(n), 0};
        for (std::size_t i = 0; i < n; ++i) c.words[i] = pattern(i);
        return c;
      });
      std::uint64_t expected = 0;
      {
        dps::LargeArray<std::uint64_t> ref(n);
        for (std::size_t i = 0; i < n; ++i) ref[i] = pattern(i);
        expected = checksum(ref);
      }
      auto graph = app.graph(dps::op<Check>(cargo, dps::to(0)), std::string("check-") + label);
      if (cargo.node(0) != 0) cargo.migrate(0, 0).get();

      // Out and back once, checked: the state went to the other process and came home whole.
      auto check = [&](dps::NodeId where, long visits) {
        const Seen s = graph.call(Probe{true}).get();
        const bool away = where != 0;
        if (s.node != where || (s.pid != home_pid) != away || s.words != n || s.sum != expected || s.visits != visits)
          throw std::runtime_error(std::string(label) + ": state wrong on node " + std::to_string(where) +
                                   ": ran on node " + std::to_string(s.node) + " pid " + std::to_string(s.pid) + ", " +
                                   std::to_string(s.words) + " words, checksum " + std::to_string(s.sum) + " (want " +
                                   std::to_string(expected) + "), visits " + std::to_string(s.visits) + " (want " +
                                   std::to_string(visits) + ")");
      };
      auto round_trip = [&](std::vector<double>* out_future, std::vector<double>* out_usable,
                            std::vector<double>* back) {
        auto t0 = std::chrono::steady_clock::now();
        cargo.migrate(0, 1).get();
        const double f = ms_since(t0);
        graph.call(Probe{false}).get();  // runs on node 1: the thread is there and live
        const double u = ms_since(t0);
        t0 = std::chrono::steady_clock::now();
        cargo.migrate(0, 0).get();
        const double b = ms_since(t0);
        if (out_future) out_future->push_back(f), out_usable->push_back(u), back->push_back(b);
      };
      round_trip(nullptr, nullptr, nullptr);  // warm-up: connections, allocator, page faults

      std::vector<double> f, u, b, legs, means;
      for (long r = 0; r < rounds; ++r) {
        round_trip(&f, &u, &b);
        legs.push_back(u.back()), legs.push_back(b.back());
        means.push_back((u.back() + b.back()) / 2);
        std::printf("%s run %ld: to node 1 %.3f ms (Future %.3f ms), back %.3f ms\n", label, r + 1, u.back(), f.back(),
                    b.back());
        std::fflush(stdout);
      }

      // The checks after the timed runs: on node 1, then home again (the visit made on node 1 came back).
      cargo.migrate(0, 1).get();
      check(1, 1);
      cargo.migrate(0, 0).get();
      check(0, 2);
      const Cargo last = cargo.remove(0).get();
      if (last.words.size() != n || checksum(last.words) != expected || last.visits != 2)
        throw std::runtime_error(std::string(label) + ": state handed back wrong");
      std::printf("%s: state intact after %ld round trips (checksum and process checked on both nodes)\n", label,
                  rounds + 2);

      const Figures fig{median(f),
                        median(u),
                        median(b),
                        median(means),
                        *std::min_element(legs.begin(), legs.end()),
                        *std::max_element(legs.begin(), legs.end())};
      std::printf(
          "%s: median migration %.3f ms (to node 1 %.3f ms, Future alone %.3f ms; back %.3f ms), "
          "min %.3f max %.3f, %.0f MB/s\n",
          label, fig.leg, fig.out_usable, fig.out_future, fig.back, fig.min_leg, fig.max_leg,
          static_cast<double>(bytes) / (fig.leg * 1e3));
      std::fflush(stdout);
      return fig;
    };

    const Figures small = measure("1MiB", std::size_t{1} << 20, repeat);
    const Figures big = measure("64MiB", std::size_t{64} << 20, big_repeat);
    std::printf(
        "{\"migrate_1MiB_ms\": %.3f, \"migrate_64MiB_ms\": %.3f, \"goal_1MiB_ms\": 5, "
        "\"migrate_1MiB_out_ms\": %.3f, \"migrate_1MiB_back_ms\": %.3f, \"migrate_1MiB_future_ms\": %.3f, "
        "\"migrate_1MiB_min_ms\": %.3f, \"migrate_1MiB_max_ms\": %.3f, "
        "\"migrate_64MiB_out_ms\": %.3f, \"migrate_64MiB_back_ms\": %.3f, \"migrate_64MiB_future_ms\": %.3f, "
        "\"migrate_64MiB_min_ms\": %.3f, \"migrate_64MiB_max_ms\": %.3f, \"migrate_64MiB_MBps\": %.0f}\n",
        small.leg, big.leg, small.out_usable, small.back, small.out_future, small.min_leg, small.max_leg,
        big.out_usable, big.back, big.out_future, big.min_leg, big.max_leg,
        static_cast<double>(std::size_t{64} << 20) / (big.leg * 1e3));
    return 0;
  });
}
