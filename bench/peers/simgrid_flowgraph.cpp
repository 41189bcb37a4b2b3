// Peer: SimGrid s4u simulation of the DPS "split -> leaves on worker nodes -> merge" flow graph, configured to the
// plain model of DPS's own simulator, so that the two simulated times can be cross-checked.
//
// Platform: a star of 1+N single-core hosts. Host 0 runs the master (split and merge); hosts 1..N
// run one serial worker each. Every host has its own split-duplex link (bandwidth B, latency L/2), so a route
// (source UP + destination DOWN) has latency L and each direction of each host has bandwidth B.
// Model: latency L without bandwidth use, then max-min fair sharing; a computation of C flops takes C/speed.
//
// Semantics: message i goes to worker i mod N; the master posts it (zero time, eager, non-blocking) under DPS's
// flow control (see master() below); W = 0 is unbounded. A worker takes its
// messages in arrival order, computes C flops on each, and sends a result of R bytes to the merger, eagerly and
// without blocking. The merger takes results in arrival order; the time of the last one is the simulated time.
//
// Run: simgrid_flowgraph [--workers N] [--messages M] [--bytes S] [--result-bytes R] [--flops C] [--window W]
//                        [--latency L] [--bandwidth B] [--speeds s1,s2,...]
// The last line of stdout is one JSON object: simulated_s, messages, workers, wall_s, msgs_per_s.
#include <simgrid/s4u.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace {

struct Params {
  long workers       = 8;
  long messages      = 100000;
  double bytes       = 1000;
  double result      = 1000;
  double flops       = 1e6;
  long window        = -1;  // -1: default to the number of workers
  double latency     = 1e-4;
  double bandwidth   = 1.25e8;
  std::vector<double> speeds{1.0};
};

[[noreturn]] void fail(const std::string& msg)
{
  std::fprintf(stderr, "simgrid_flowgraph: %s\n", msg.c_str());
  std::exit(2);
}

double to_number(const std::string& opt, const std::string& s)
{
  char* end = nullptr;
  double v  = std::strtod(s.c_str(), &end);
  if (s.empty() || *end != '\0' || !std::isfinite(v))
    fail("bad value for " + opt + ": '" + s + "'");
  return v;
}

// Counts and byte sizes: non-negative integers (1e6 notation accepted), exactly representable.
double to_count(const std::string& opt, const std::string& s, double min)
{
  double v = to_number(opt, s);
  if (v < min || v != std::floor(v) || v > 9007199254740992.0)
    fail(opt + " must be an integer >= " + std::to_string(static_cast<long>(min)) + ", got '" + s + "'");
  return v;
}

Params parse(int argc, char** argv)
{
  Params p;
  for (int i = 1; i < argc; i++) {
    std::string opt = argv[i];
    std::string val;
    if (auto eq = opt.find('='); opt.rfind("--", 0) == 0 && eq != std::string::npos) {
      val = opt.substr(eq + 1);
      opt = opt.substr(0, eq);
    } else if (i + 1 < argc) {
      val = argv[++i];
    } else {
      fail("missing value for " + opt);
    }
    if (opt == "--workers")
      p.workers = static_cast<long>(to_count(opt, val, 1));
    else if (opt == "--messages")
      p.messages = static_cast<long>(to_count(opt, val, 1));
    else if (opt == "--bytes")
      p.bytes = to_count(opt, val, 0);
    else if (opt == "--result-bytes")
      p.result = to_count(opt, val, 0);
    else if (opt == "--window")
      p.window = static_cast<long>(to_count(opt, val, 0));
    else if (opt == "--flops") {
      p.flops = to_number(opt, val);
      if (p.flops < 0)
        fail("--flops must be >= 0");
    } else if (opt == "--latency") {
      p.latency = to_number(opt, val);
      if (p.latency < 0)
        fail("--latency must be >= 0");
    } else if (opt == "--bandwidth") {
      p.bandwidth = to_number(opt, val);
      if (p.bandwidth <= 0)
        fail("--bandwidth must be > 0");
    } else if (opt == "--speeds") {
      p.speeds.clear();
      size_t start = 0;
      for (;;) {
        size_t comma = val.find(',', start);
        double v     = to_number(opt, val.substr(start, comma - start));
        if (v <= 0)
          fail("--speeds entries must be > 0");
        p.speeds.push_back(v);
        if (comma == std::string::npos)
          break;
        start = comma + 1;
      }
    } else {
      fail("unknown option '" + opt + "'");
    }
  }
  if (p.window < 0)
    p.window = p.workers;
  return p;
}

Params P;
char token;                   // payloads carry no data: only their simulated size matters
double last_merge = 0;        // simulated time of the last result received

// Messages for worker w: the i < M with i mod N == w.
long share(long w) { return P.messages / P.workers + (w < P.messages % P.workers ? 1 : 0); }

sg4::Mailbox* work_box(long w) { return sg4::Mailbox::by_name("work" + std::to_string(w)); }
sg4::Mailbox* result_box(long w) { return sg4::Mailbox::by_name("result" + std::to_string(w)); }

void worker(long w)
{
  auto* in         = work_box(w);
  auto* out        = result_box(w);
  const auto bytes = static_cast<uint64_t>(P.result);
  // Messages to one worker share a route and a size, so they arrive in posting order: get() order is arrival order.
  for (long k = share(w); k > 0; k--) {
    in->get<void>();
    sg4::this_actor::execute(P.flops);
    out->put_init(&token, bytes)->detach();
  }
}

// The master is one serial DPS thread running both the split and the merge, with DPS's flow control:
// at most W messages in flight (posted, result not yet merged); a producer blocked on a full window
// resumes when fewer than W - W/4 are in flight, and then posts until the window is full again, before
// the next result is merged (a woken operation runs before the thread's next message).
void master()
{
  const auto bytes = static_cast<uint64_t>(P.bytes);
  long posted = 0, in_flight = 0;
  bool blocked = false;
  auto post_while_credit = [&] {
    while (posted < P.messages && (P.window == 0 || in_flight < P.window)) {
      work_box(posted % P.workers)->put_init(&token, bytes)->detach();  // detached: zero time, eager
      ++posted;
      ++in_flight;
    }
    blocked = posted < P.messages;
  };
  post_while_credit();

  // One result mailbox per worker: within a worker results arrive in order, across workers wait_any picks
  // whichever arrives first, so merging (and the window release) follows arrival order.
  std::vector<sg4::CommPtr> pending;
  std::vector<long> owner;
  std::vector<long> left(P.workers);
  std::vector<void*> slot(P.workers);
  for (long w = 0; w < P.workers; w++) {
    left[w] = share(w);
    if (left[w] > 0) {
      pending.push_back(result_box(w)->get_async<void>(&slot[w]));
      owner.push_back(w);
    }
  }
  for (long got = 0; got < P.messages; got++) {
    auto k = static_cast<size_t>(sg4::Comm::wait_any(pending));
    long w = owner[k];
    --in_flight;
    if (blocked && in_flight < P.window - P.window / 4)
      post_while_credit();
    if (--left[w] > 0) {
      pending[k] = result_box(w)->get_async<void>(&slot[w]);
    } else {
      pending.erase(pending.begin() + static_cast<long>(k));
      owner.erase(owner.begin() + static_cast<long>(k));
    }
  }
  last_merge = sg4::Engine::get_clock();
}

}  // namespace

int main(int argc, char** argv)
{
  sg4::Engine e(&argc, argv);  // consumes --cfg=/--log= options first
  P = parse(argc, argv);

  // CM02 with its corrective factors neutralised: latency x1, bandwidth x1, sharing penalty = route latency only
  // (weight-S 0). TCP-gamma 0 removes the window bound gamma/(2L); crosstraffic 0 stops a flow from also using 5%
  // of the reverse links.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/latency-factor", 1.0);
  sg4::Engine::set_config("network/bandwidth-factor", 1.0);
  sg4::Engine::set_config("network/weight-S", 0.0);
  sg4::Engine::set_config("network/TCP-gamma", 0.0);
  sg4::Engine::set_config("network/crosstraffic", false);

  auto* zone = sg4::create_star_zone("star");
  std::vector<sg4::Host*> hosts;
  for (long i = 0; i <= P.workers; i++) {
    double speed = i == 0 ? 1.0 : P.speeds[static_cast<size_t>(i - 1) % P.speeds.size()];
    auto* h      = zone->create_host("h" + std::to_string(i), speed * 1e9);
    auto* l      = zone->create_split_duplex_link("l" + std::to_string(i), P.bandwidth)->set_latency(P.latency / 2);
    // Symmetrical: leaving the host uses the UP half, arriving uses the DOWN half.
    zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {{l, sg4::LinkInRoute::Direction::UP}}, true);
    hosts.push_back(h);
  }
  zone->seal();

  // Permanent receivers make every transfer start when posted, not when the receiver asks for it.
  auto merge = sg4::Actor::create("master", hosts[0], master);
  for (long w = 0; w < P.workers; w++) {
    auto wk = sg4::Actor::create("worker" + std::to_string(w), hosts[static_cast<size_t>(w + 1)], worker, w);
    work_box(w)->set_receiver(wk);
    result_box(w)->set_receiver(merge);
  }

  auto t0 = std::chrono::steady_clock::now();
  e.run();
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::printf("{\"simulated_s\": %.9f, \"messages\": %ld, \"workers\": %ld, \"wall_s\": %.6f, \"msgs_per_s\": %.1f}\n",
              last_merge, P.messages, P.workers, wall, P.messages / wall);
  return 0;
}
