// bench-checkpoint: what a checkpoint of a large thread state costs under --fault-tolerance, against
// copying the same bytes once over the link. Three node processes: a thread on node 1 holds --mib
// MiB (256 by default); after each operation it runs it checkpoints (--checkpoint-ops 1) to its
// buddy, node 2. A checkpoint is timed from the operation's call until node 0 records that node 2
// holds it (node 0 only reads its table: it holds no image). The link's figure is the same bytes
// copied once over TCP on loopback between two warm buffers (plain sockets: what the link allows);
// beside it, the same bytes sent from node 0 to a leaf on node 1 as one DPS object (the call's time,
// the receiver's fresh buffer included). Medians of --repeat of each, interleaved, after one of each
// to warm up.
//
//   bench-checkpoint                              # 2 node processes on loopback
//   bench-checkpoint --hostfile hosts --link-mbit 1000   # nodes 1 and 2 on the file's second and
//                                                  # third slots; the link's figure: bytes at its rate
//
// The last line is JSON: checkpoint_s, copy_s, object_copy_s and checkpoint_ratio (checkpoint_s /
// copy_s, Goal <= 1.5).
#include "support.hpp"

#include <dps/cli.hpp>
#include <dps/dps.hpp>
#include <dps/kernel/runtime.hpp>  // node 0's table of who holds which checkpoint
#include <dps/kernel/thread.hpp>
#include <dps/kernel/threads_core.hpp>
#include <dps/large_array.hpp>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Held {
  dps::LargeArray<std::uint64_t> words;
  long operations = 0;
  template <class A>
  void serialize(A& a) {
    a(words, operations);
  }
};

struct Grow : dps::Leaf<long, long, Held> {  // fills the state where the thread runs
  long execute(const long& words) {
    Held& h = thread();
    h.words = dps::LargeArray<std::uint64_t>(static_cast<std::size_t>(words));
    for (std::size_t i = 0; i < h.words.size(); ++i) h.words[i] = i * 0x9e3779b97f4a7c15ull;
    return ++h.operations;
  }
};
struct Touch : dps::Leaf<long, long, Held> {  // one word changed: the checkpoint is the whole state
  long execute(const long& k) {
    Held& h = thread();
    h.words[static_cast<std::size_t>(k) % h.words.size()] ^= 1;
    return ++h.operations;
  }
};

struct Cargo {
  dps::LargeArray<std::uint64_t> words;
  template <class A>
  void serialize(A& a) {
    a(words);
  }
};
struct Receive : dps::Leaf<Cargo, long> {
  long execute(const Cargo& c) { return static_cast<long>(c.words.size()); }
};

// `bytes` from one warm buffer to another over TCP on loopback, once: seconds.
double raw_copy(std::vector<char>& from, std::vector<char>& to) {
  const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in at{};
  at.sin_family = AF_INET;
  at.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof at;
  if (listener < 0 || ::bind(listener, reinterpret_cast<sockaddr*>(&at), sizeof at) != 0 ||
      ::listen(listener, 1) != 0 || ::getsockname(listener, reinterpret_cast<sockaddr*>(&at), &length) != 0)
    throw std::runtime_error("no loopback socket to copy over");
  const auto t0 = std::chrono::steady_clock::now();
  std::thread sender([&] {
    const int s = ::socket(AF_INET, SOCK_STREAM, 0);
    if (::connect(s, reinterpret_cast<sockaddr*>(&at), sizeof at) == 0)
      for (std::size_t sent = 0; sent < from.size();) {
        const ssize_t n = ::send(s, from.data() + sent, from.size() - sent, 0);
        if (n <= 0) break;
        sent += static_cast<std::size_t>(n);
      }
    ::close(s);
  });
  const int r = ::accept(listener, nullptr, nullptr);
  std::size_t got = 0;
  while (r >= 0 && got < to.size()) {
    const ssize_t n = ::recv(r, to.data() + got, to.size() - got, 0);
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sender.join();
  ::close(r);
  ::close(listener);
  if (got != to.size()) throw std::runtime_error("the loopback copy came short");
  return took;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  return dps::run_main("bench-checkpoint", [&] {
    std::vector<std::string> words{argv[0], "--fault-tolerance", "--checkpoint-ops", "1"};
    for (int i = 1; i < argc; ++i) words.emplace_back(argv[i]);
    std::vector<char*> args;
    for (auto& w : words) args.push_back(w.data());
    const auto application = node_application(static_cast<int>(args.size()), args.data(), 3);
    dps::Application& app = *application;

    long mib = 256, repeat = 5;
    double link_mbit = 0;
    dps::Cli cli("bench-checkpoint", "A large thread state's checkpoint against a copy of it over the link.");
    cli.option("--mib", mib, "MiB of state (default 256)")
        .option("--repeat", repeat, "measurements of each (default 5)")
        .option("--link-mbit", link_mbit,
                "R  the hosts' link rate: the copy's figure is the bytes at R Mbit/s (default: "
                "measured on loopback)");
    if (!cli.parse(app.args(), "")) return 0;
    if (mib < 1 || repeat < 1) throw std::invalid_argument("--mib and --repeat must be at least 1");
    if (link_mbit < 0) throw std::invalid_argument("--link-mbit must be positive");
    const long count = mib << 17;  // 8-byte words

    auto held = app.threads<Held>("held", 0);
    held.add_on(1);
    auto sink = app.threads<dps::Stateless>("sink", 0);
    sink.add_on(1);
    auto grow = app.graph(dps::op<Grow>(held), "grow");
    auto touch = app.graph(dps::op<Touch>(held), "touch");
    auto ship = app.graph(dps::op<Receive>(sink), "ship");

    dps::Runtime& runtime = app.runtime();
    std::uint64_t uid = 0;
    {
      dps::detail::EpochGuard guard;
      uid = held.core().at(0).uid();
    }
    // The call, then until node 0 records that node 2 holds a checkpoint newer than `before` (5 min
    // at most). Node 0's own copy of the thread's first one, recorded late on a loaded machine, is
    // not the one timed.
    const auto checkpointed = [&](auto&& call) {
      const std::uint32_t before = runtime.backend().backup(uid, false).epoch;
      const auto t0 = std::chrono::steady_clock::now();
      call();
      for (;;) {
        const dps::Backend::Backup held = runtime.backend().backup(uid, false);
        if (held.epoch > before && held.node == 2) break;
        if (seconds_since(t0) > 300)
          throw std::runtime_error("node 2 held no new checkpoint of the thread in 5 minutes (node " +
                                   std::to_string(held.node) + " holds epoch " + std::to_string(held.epoch) + ")");
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
      return seconds_since(t0);
    };
    const auto copied = [&] {
      Cargo c{dps::LargeArray<std::uint64_t>(static_cast<std::size_t>(count))};
      for (std::size_t i = 0; i < c.words.size(); ++i) c.words[i] = i;
      const auto t0 = std::chrono::steady_clock::now();
      if (ship.call(std::move(c)).get() != count) throw std::runtime_error("the copy arrived short");
      return seconds_since(t0);
    };

    const double first = checkpointed([&] { grow.call(count).get(); });
    std::printf("first checkpoint (the state grown to %ld MiB on node 1): %.3f s\n", mib, first);
    std::vector<char> from(static_cast<std::size_t>(mib) << 20, 'x'), to(from.size(), 'y');
    copied(), raw_copy(from, to);  // warm-up
    std::vector<double> checkpoint, copy, object_copy;
    for (long r = 0; r < repeat; ++r) {
      checkpoint.push_back(checkpointed([&] { touch.call(r).get(); }));
      copy.push_back(link_mbit > 0 ? static_cast<double>(from.size()) * 8 / (link_mbit * 1e6) : raw_copy(from, to));
      object_copy.push_back(copied());
      std::printf("run %ld: checkpoint %.3f s, copy over the link %.3f s (as a DPS object %.3f s)\n", r + 1,
                  checkpoint.back(), copy.back(), object_copy.back());
      std::fflush(stdout);
    }
    const double c = median(checkpoint), l = median(copy);
    std::printf(
        "{\"mib\": %ld, \"link\": \"%s\", \"checkpoint_s\": %.4f, \"copy_s\": %.4f, \"object_copy_s\": %.4f, "
        "\"checkpoint_ratio\": %.3f, \"goal\": 1.5}\n",
        mib, link_mbit > 0 ? (std::to_string(static_cast<long>(link_mbit)) + " Mbit/s").c_str() : "loopback", c, l,
        median(object_copy), c / l);
    return 0;
  });
}
