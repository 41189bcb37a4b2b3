// The trace file (docs/trace-format.md): what is written is read back to the nanosecond, 10^6
// events take under 40 bytes each, a run that crashes leaves its flushed blocks readable, and a
// damaged or foreign file gives a TraceError naming the byte, never a crash. --trace writes one, with
// a real run's transfers timed from their first byte sent to their last byte read.
#include "measuring.hpp"
#include "processes.hpp"
#include "support.hpp"

#include <dps/trace/reader.hpp>
#include <dps/trace/writer.hpp>
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace dps::test {
namespace {

using trace::Change;

std::string contents(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void cut(const std::filesystem::path& p, std::size_t bytes) { std::filesystem::resize_file(p, bytes); }

// Times of a busy run: increasing with jitter, some events recorded after later ones started.
struct Workload {
  std::mt19937_64 rng{42};
  double now = 0;
  double next_time() {
    now += std::uniform_real_distribution<double>(0, 200e-6)(rng);
    return std::max(0.0, now - std::uniform_real_distribution<double>(0, 50e-6)(rng));
  }
  double length() { return std::exponential_distribution<double>(1 / 1e-3)(rng); }
  std::uint64_t pick(std::uint64_t n) { return std::uniform_int_distribution<std::uint64_t>(0, n - 1)(rng); }
};

// Every kind of record, with fields drawn at random, written and kept.
trace::Trace write_sample(const std::filesystem::path& path, int events, bool close = true) {
  trace::TraceWriter out(path);
  trace::Trace kept;
  auto name = [&](const std::string& s) {
    const trace::NameId id = out.name(s);
    if (id == kept.names.size()) kept.names.push_back(s);
    return id;
  };
  Workload w;
  const std::string operations[] = {"split", "multiply", "merge", "stream", "lu::Panel"};
  for (int i = 0; i < events; ++i) {
    const double t = w.next_time();
    switch (w.pick(10)) {
      case 0: {
        trace::Transfer x{static_cast<std::uint32_t>(w.pick(8)), static_cast<std::uint32_t>(w.pick(8)),
                          w.pick(1ull << 40), t, t + w.length()};
        out.write(x);
        kept.transfers.push_back(x);
        break;
      }
      case 1: {
        trace::Lifecycle c{static_cast<Change>(w.pick(5)), w.pick(100), name("workers"),
                           static_cast<std::uint32_t>(w.pick(8)), static_cast<std::uint32_t>(w.pick(8)), t};
        out.write(c);
        kept.changes.push_back(c);
        break;
      }
      case 2: {
        trace::Phase p{name("iteration " + std::to_string(w.pick(4))), w.pick(2) == 0, t};
        out.write(p);
        kept.phases.push_back(p);
        break;
      }
      case 3: {
        trace::Counter c{name(w.pick(2) ? "queued jobs" : "utilization"), static_cast<double>(w.pick(1000)) / 7, t};
        out.write(c);
        kept.counters.push_back(c);
        break;
      }
      default: {
        trace::Step s{static_cast<std::uint32_t>(w.pick(8)), 1 + w.pick(64), name(w.pick(2) ? "workers" : "master"),
                      name(operations[w.pick(5)]), 1 + w.pick(1000), t, t + w.length()};
        out.write(s);
        kept.steps.push_back(s);
      }
    }
  }
  out.info("clock", "simulated");
  kept.info.push_back({name("clock"), name("simulated")});
  if (close) out.close();
  return kept;
}

void expect_time(double read, double written) { EXPECT_NEAR(read, written, 0.51e-9); }

TEST(TraceFile, EveryRecordReadsBackAsWrittenToTheNanosecond) {
  Scratch dir;
  const auto path = dir.dir / "sample.dpstrace";
  const trace::Trace kept = write_sample(path, 20000);
  const trace::Trace t = trace::read(path);
  EXPECT_TRUE(t.damage.empty());
  EXPECT_EQ(t.names, kept.names);
  ASSERT_EQ(t.steps.size(), kept.steps.size());
  ASSERT_EQ(t.transfers.size(), kept.transfers.size());
  ASSERT_EQ(t.changes.size(), kept.changes.size());
  ASSERT_EQ(t.phases.size(), kept.phases.size());
  ASSERT_GT(t.steps.size(), 10000u);
  ASSERT_GT(t.transfers.size(), 1000u);
  for (std::size_t i = 0; i < t.steps.size(); ++i) {
    const auto &a = t.steps[i], &b = kept.steps[i];
    EXPECT_EQ(std::tie(a.node, a.thread, a.collection, a.operation, a.call),
              std::tie(b.node, b.thread, b.collection, b.operation, b.call));
    expect_time(a.start, b.start);
    expect_time(a.end, b.end);
  }
  for (std::size_t i = 0; i < t.transfers.size(); ++i) {
    const auto &a = t.transfers[i], &b = kept.transfers[i];
    EXPECT_EQ(std::tie(a.from, a.to, a.bytes), std::tie(b.from, b.to, b.bytes));
    expect_time(a.start, b.start);
    expect_time(a.end, b.end);
  }
  for (std::size_t i = 0; i < t.changes.size(); ++i) {
    const auto &a = t.changes[i], &b = kept.changes[i];
    EXPECT_EQ(std::tie(a.kind, a.thread, a.collection, a.node, a.to), std::tie(b.kind, b.thread, b.collection, b.node, b.to));
    expect_time(a.time, b.time);
  }
  for (std::size_t i = 0; i < t.phases.size(); ++i) {
    EXPECT_EQ(t.phases[i].name, kept.phases[i].name);
    EXPECT_EQ(t.phases[i].begin, kept.phases[i].begin);
    expect_time(t.phases[i].time, kept.phases[i].time);
  }
  ASSERT_EQ(t.counters.size(), kept.counters.size());
  ASSERT_GT(t.counters.size(), 1000u);
  for (std::size_t i = 0; i < t.counters.size(); ++i) {
    EXPECT_EQ(t.counters[i].name, kept.counters[i].name);
    EXPECT_EQ(t.counters[i].value, kept.counters[i].value) << "bit for bit";
    expect_time(t.counters[i].time, kept.counters[i].time);
  }
  EXPECT_EQ(t.info_value("clock"), "simulated");
  EXPECT_EQ(t.info_value("absent"), "");
}

TEST(TraceFile, AMillionEventsTakeUnderFortyBytesEach) {
  Scratch dir;
  const auto path = dir.dir / "million.dpstrace";
  write_sample(path, 1'000'000);
  const double per_event = static_cast<double>(std::filesystem::file_size(path)) / 1e6;
  EXPECT_LT(per_event, 40.0);
  std::printf("%.1f bytes per event\n", per_event);
  EXPECT_EQ(trace::read(path).events(), 1'000'000u);
}

// A child process writes blocks, then dies before closing: its flushed blocks are the trace.
TEST(TraceFile, ARunThatCrashesLeavesEveryFlushedBlockReadable) {
  Scratch dir;
  const auto path = dir.dir / "crashed.dpstrace";
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    trace::TraceWriter out(path);
    const trace::NameId op = out.name("op"), threads = out.name("workers");
    for (int i = 0; i < 3000; ++i) {
      out.write(trace::Step{0, 1, threads, op, 1, i * 1e-3, i * 1e-3 + 5e-4});
      if (i == 999 || i == 1999) out.flush();
    }
    ::_exit(0);  // as a crash would: no destructor, no close, the last 1000 unflushed
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  try {
    trace::read(path);
    ADD_FAILURE() << "an unfinished trace was taken for a complete one";
  } catch (const trace::TraceError& e) {
    EXPECT_EQ(e.offset, std::filesystem::file_size(path));
    EXPECT_NE(std::string(e.what()).find("the run did not finish: 2000 events before it"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(path.string() + ": byte ", 0), 0u) << e.what();
  }
  const trace::Trace t = trace::read(path, trace::Partial::accept);
  ASSERT_EQ(t.steps.size(), 2000u);
  EXPECT_DOUBLE_EQ(t.steps.back().start, 1.999);
  EXPECT_NE(t.damage.find("end mark"), std::string::npos) << t.damage;
}

TEST(TraceFile, AFileCutInsideABlockGivesTheBlocksBeforeIt) {
  Scratch dir;
  const auto path = dir.dir / "cut.dpstrace";
  write_sample(path, 50000);  // several 64 KiB blocks
  const std::string whole = contents(path);
  const trace::Trace all = trace::read(path);
  cut(path, whole.size() - 1000);  // into the last block
  try {
    trace::read(path);
    ADD_FAILURE() << "a cut file was read";
  } catch (const trace::TraceError& e) {
    EXPECT_NE(e.reason.find("the block needs"), std::string::npos) << e.what();
    EXPECT_LT(e.offset, whole.size() - 1000);
  }
  const trace::Trace t = trace::read(path, trace::Partial::accept);
  EXPECT_GT(t.events(), 0u);
  EXPECT_LT(t.events(), all.events());
}

TEST(TraceFile, ForeignDamagedAndNewerFilesAreRejectedNamingTheByte) {
  Scratch dir;
  const auto path = dir.dir / "t.dpstrace";
  write_sample(path, 2000);
  const std::string good = contents(path);
  auto error_of = [](const std::string& bytes) -> trace::TraceError {
    try {
      trace::parse(bytes, trace::Partial::accept);
    } catch (const trace::TraceError& e) {
      return e;
    }
    ADD_FAILURE() << "accepted";
    return trace::TraceError(~0ull, "");
  };
  EXPECT_EQ(error_of("{\"traceEvents\": []}").offset, 0u);
  EXPECT_EQ(error_of("").offset, 0u);
  std::string older = good;  // version 1 had no counters: a version-2 reader reads it
  older[8] = 1;
  EXPECT_NO_THROW(trace::parse(older, trace::Partial::reject));
  std::string newer = good;
  newer[8] = 3;
  const auto version = error_of(newer);
  EXPECT_EQ(version.offset, 8u);
  EXPECT_EQ(version.reason, "trace format version 3, this reader knows versions 1 to 2");
  std::string flipped = good;
  flipped[100] ^= 0x40;  // inside the first block's records
  const auto checksum = error_of(flipped);
  EXPECT_EQ(checksum.offset, 16u) << "the first block begins after the 16-byte file header";
  EXPECT_NE(checksum.reason.find("checksum"), std::string::npos);
  std::string trailing = good + "x";
  EXPECT_EQ(error_of(trailing).offset, good.size());
}

// Mutated and cut files: each is read, or rejected with a TraceError; nothing else happens (under
// ASan in CI: no read out of bounds).
TEST(TraceFile, RandomDamageIsAlwaysATraceErrorOrATrace) {
  Scratch dir;
  const auto path = dir.dir / "t.dpstrace";
  write_sample(path, 3000);
  const std::string good = contents(path);
  std::mt19937 rng(7);
  int rejected = 0;
  for (int i = 0; i < 3000; ++i) {
    std::string bytes = good;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < edits; ++k) bytes[rng() % bytes.size()] = static_cast<char>(rng());
    if (rng() % 2) bytes.resize(rng() % bytes.size());
    try {
      trace::parse(bytes, rng() % 2 ? trace::Partial::accept : trace::Partial::reject);
    } catch (const trace::TraceError& e) {
      EXPECT_LE(e.offset, bytes.size());
      ++rejected;
    }
  }
  EXPECT_GT(rejected, 2000);
}

// --trace on the command line: node 0 writes every node's events, and the end mark.
TEST(TraceFile, TheTraceOptionWritesTheRunsEventsOnEveryNode) {
  Scratch dir;
  const auto path = dir.dir / "run.dpstrace";
  {
    auto app = in_processes({"--nodes", "3", "--trace", path.string()});
    auto master = app->threads<Stateless>("master", 1);
    auto workers = app->threads<Counter>("workers", 3);
    auto graph = app->graph(op<Pieces<>>(master) >> op<AddRange<Counter>>(workers) >> op<SumPartials<>>(master));
    auto phase = app->phase("sum");
    EXPECT_EQ(graph.call(Range{0, 600}).get().sum, triangle(600));
    phase.end();
  }
  const trace::Trace t = trace::read(path);
  long adds = 0;
  std::set<std::uint32_t> nodes;
  for (const auto& s : t.steps)
    if (t.names[s.operation].find("AddRange") != std::string::npos) ++adds, nodes.insert(s.node);
  EXPECT_EQ(adds, 60) << "600 numbers in pieces of 10";
  EXPECT_EQ(nodes, (std::set<std::uint32_t>{0, 1, 2}));
  EXPECT_GE(t.transfers.size(), 2u * 40u) << "pieces to nodes 1 and 2 and their partials back";
  ASSERT_EQ(t.phases.size(), 2u);
  EXPECT_LT(t.phases[0].time, t.phases[1].time);
  EXPECT_EQ(t.info_value("backend"), "tcp");
  EXPECT_EQ(t.info_value("nodes"), "3");
  EXPECT_NE(t.info_value("command").find("--trace"), std::string::npos);
}

// A load for the worker on node `node`; the worker answers with its size.
struct Load {
  std::size_t node = 0;
  LargeArray<char> bytes;
  template <class A>
  void serialize(A& a) {
    a(node, bytes);
  }
};
struct Carry : Split<Load, Load> {
  Step execute(Load l) { co_await post(std::move(l)); }
};
struct Weigh : Leaf<Load, Partial> {
  Partial execute(const Load& l) { return {static_cast<long>(l.bytes.size()), 1}; }
};

// The span of the phase named `name`: its begin and end times.
std::pair<double, double> phase_span(const trace::Trace& t, const std::string& name) {
  std::pair<double, double> span{-1, -1};
  for (const trace::Phase& p : t.phases)
    if (t.names[p.name] == name) (p.begin ? span.first : span.second) = p.time;
  return span;
}

// Over TCP a transfer lasts from its first byte sent to its last byte read (it used to be an instant):
// 4 MiB to node 1 take time, inside the phase that sent them, and in a build that measures, longer
// than the small loads before them typically take.
TEST(TraceFile, RealTransfersLastFromTheirFirstByteSentToTheirLastByteRead) {
  Scratch dir;
  const auto path = dir.dir / "run.dpstrace";
  constexpr std::size_t kLarge = 4 << 20, kSmall = 64, kSmalls = 20;
  {
    auto app = in_processes({"--nodes", "2", "--trace", path.string()});
    auto master = app->threads<Stateless>("master", 1);
    auto workers = app->threads<Stateless>("workers", 2);  // worker i on node i
    auto graph = app->graph(op<Carry>(master) >> op<Weigh>(workers, [](const Load& l) { return l.node; }) >>
                            op<SumPartials<>>(master));
    auto small = app->phase("small");
    for (std::size_t k = 0; k < kSmalls; ++k)
      EXPECT_EQ(graph.call(Load{1, LargeArray<char>(kSmall)}).get().sum, static_cast<long>(kSmall));
    small.end();
    auto large = app->phase("large");
    EXPECT_EQ(graph.call(Load{1, LargeArray<char>(kLarge)}).get().sum, static_cast<long>(kLarge));
    large.end();
  }
  const trace::Trace t = trace::read(path);
  const auto [begin, end] = phase_span(t, "large");
  ASSERT_LT(begin, end);
  constexpr double kAligned = 0.002;  // node 1's clock agrees with node 0's within the ping's round trip
  std::vector<trace::Transfer> large;
  std::vector<double> smaller;  // 0->1: the small loads and the frame protocol's messages
  for (const trace::Transfer& x : t.transfers) {
    EXPECT_LE(x.start, x.end) << x.from << "->" << x.to << ", " << x.bytes << " bytes";
    if (x.bytes >= kLarge)
      large.push_back(x);
    else if (x.from == 0 && x.to == 1)
      smaller.push_back(x.end - x.start);
  }
  ASSERT_EQ(large.size(), 1u);
  EXPECT_EQ(large[0].from, 0u);
  EXPECT_EQ(large[0].to, 1u);
  const double lasted = large[0].end - large[0].start;
  EXPECT_GT(lasted, 0) << "a real transfer is not an instant";
  EXPECT_GE(large[0].start, begin - kAligned);
  EXPECT_LE(large[0].end, end + kAligned);
  ASSERT_GE(smaller.size(), kSmalls);
  std::nth_element(smaller.begin(), smaller.begin() + static_cast<std::ptrdiff_t>(smaller.size() / 2), smaller.end());
  const double median = smaller[smaller.size() / 2];
  std::printf("4 MiB to node 1 in %.6f s; the median smaller transfer 0->1 in %.6f s\n", lasted, median);
  if (kMeasures) {
    EXPECT_GT(lasted, median);
  }
}

}  // namespace
}  // namespace dps::test
