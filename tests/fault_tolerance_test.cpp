// Fault tolerance in the simulator: a node killed mid-call (--fail), and the call completes with the
// result of a run without failure, every object counted once; what cannot be rebuilt fails clearly.
#include "support.hpp"

#include <dps/errors.hpp>
#include <dps/kernel/recovery_log.hpp>
#include <dps/sim/sim_backend.hpp>

#include <cereal/types/vector.hpp>
#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <memory>
#include <type_traits>
#include <vector>

namespace dps::test {
namespace {

using sim::ClusterModel;
using sim::SimBackend;
using sim::SimOptions;

ClusterModel cluster(std::size_t nodes) {
  ClusterModel m;
  m.groups = {sim::NodeGroup{"nodes", nodes, 1, 1.0}};
  m.network.latency = 1e-4;
  m.network.bandwidth = 1.25e8;
  return m;
}

// 10 ms of simulated work per piece; a Counter state counts the pieces its thread summed.
template <class State>
struct SlowAdd : Leaf<Range, Partial, State> {
  Partial execute(const Range& r) {
    if constexpr (std::is_same_v<State, Counter>) ++this->thread().seen;
    compute(0.01, [] {});
    long s = 0;
    for (long i = r.first; i < r.last; ++i) s += i;
    return {s, 1};
  }
};

// A second leaf on other threads: doubles the partial sum, and counts what it doubled.
template <class State>
struct Double : Leaf<Partial, Partial, State> {
  Partial execute(const Partial& p) {
    if constexpr (!std::is_same_v<State, Stateless>) ++this->thread().seen;
    compute(0.004, [] {});
    return {2 * p.sum, p.count};
  }
};

// A state worth a checkpoint's transfer: 1 MB, 8 ms on the model's network.
struct Heavy {
  long seen = 0;
  std::vector<double> ballast = std::vector<double>(125'000, 1.0);
  template <class A>
  void serialize(A& a) {
    a(seen, ballast);
  }
};

struct Outcome {
  Partial result;
  long seen = 0;  // pieces the workers' states counted
  double predicted = 0;
  std::size_t restored = 0;
  std::size_t replayed = 0;  // restored threads whose recovery ended, after their restoration
  std::size_t checkpoints = 0;
};

// 200 pieces over two workers on each of nodes 1-3; node 0 splits and merges.
template <class State = Stateless>
Outcome farm(std::vector<SimOptions::Failure> failures, double checkpoint_every, std::size_t nodes = 4,
             long last = 2000, std::uint64_t checkpoint_operations = 0, Backups backups = Backups::Kept) {
  MemoryTrace trace;  // outlives the application, which may still trace while it ends
  auto backend = std::make_unique<SimBackend>(cluster(nodes), SimOptions{.pdexec = true, .nodes = nodes, .failures = failures});
  Application app(std::move(backend));
  if (checkpoint_every > 0) app.runtime().fault_tolerance(checkpoint_every, checkpoint_operations);
  app.trace_to(&trace);
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<State>("workers", 0, backups);
  for (NodeId n = 1; n < nodes; ++n) workers.add_on(n), workers.add_on(n);
  auto graph = app.graph(op<Pieces<>>(master) >> op<SlowAdd<State>>(workers) >> op<SumPartials<>>(master));
  Outcome run;
  run.result = graph.call(Range{0, last}).get();
  run.predicted = app.now();
  if constexpr (std::is_same_v<State, Counter>)
    while (workers.size()) run.seen += workers.remove(0).get().seen;
  std::map<std::uint64_t, double> restored_at;
  for (const auto& c : trace.changes()) {
    if (c.kind == Lifecycle::ThreadRestored) ++run.restored, restored_at[c.thread] = c.time;
    if (c.kind == Lifecycle::ThreadReplayed && restored_at.contains(c.thread) && c.time >= restored_at[c.thread])
      ++run.replayed;
  }
  for (const auto& step : trace.steps()) run.checkpoints += step.operation == "checkpoint";
  return run;
}

TEST(FaultTolerance, StatelessLeavesOfAKilledNodeAreRebuiltAndTheCallCompletes) {
  const Outcome clean = farm({}, 0.05);
  EXPECT_EQ(clean.result.sum, triangle(2000));
  EXPECT_EQ(clean.result.count, 200);
  EXPECT_EQ(clean.restored, 0u);
  for (double at : {0.05, 0.2, 0.31}) {
    const Outcome run = farm({{2, at}}, 0.05);
    EXPECT_EQ(run.result.sum, triangle(2000)) << "node 2 killed at " << at << " s";
    EXPECT_EQ(run.result.count, 200) << "every piece once";
    EXPECT_EQ(run.restored, 2u) << "node 2's two workers";
    EXPECT_EQ(run.replayed, 2u) << "the call returns once both ran again what they had lost (traced)";
    EXPECT_GT(run.predicted, clean.predicted) << "the lost work is done again, by fewer nodes";
  }
}

TEST(FaultTolerance, StatefulLeavesCountEveryObjectOnce) {
  const Outcome clean = farm<Counter>({}, 0.05);
  EXPECT_EQ(clean.seen, 200);
  for (double at : {0.02, 0.1, 0.25}) {
    const Outcome run = farm<Counter>({{1, at}}, 0.05);
    EXPECT_EQ(run.result.sum, triangle(2000)) << "node 1 killed at " << at << " s";
    EXPECT_EQ(run.result.count, 200);
    EXPECT_EQ(run.seen, 200) << "the rebuilt states count each piece once";
  }
}

// --checkpoint-ops K: a worker checkpoints when added, then after each K pieces; with no interval in
// seconds, never for time's sake.
TEST(FaultTolerance, ACheckpointEveryKOperations) {
  constexpr double kNever = std::numeric_limits<double>::infinity();
  const std::size_t workers = 6;  // 200 pieces, 33 or 34 each
  EXPECT_EQ(farm<Counter>({}, kNever, 4, 2000, 0).checkpoints, workers) << "the first ones only";
  for (std::uint64_t k : {5u, 10u, 20u}) {
    const Outcome run = farm<Counter>({}, kNever, 4, 2000, k);
    EXPECT_EQ(run.seen, 200);
    EXPECT_GE(run.checkpoints, workers * (1 + 33 / k)) << "every " << k;
    EXPECT_LE(run.checkpoints, workers * (1 + 34 / k)) << "every " << k;
  }
  const Outcome killed = farm<Counter>({{2, 0.1}}, kNever, 4, 2000, 10);
  EXPECT_EQ(killed.result.sum, triangle(2000));
  EXPECT_EQ(killed.seen, 200) << "rebuilt from checkpoints taken by count";
  EXPECT_EQ(killed.restored, 2u);
}

TEST(FaultTolerance, TwoNodesLostOneAfterTheOther) {
  const Outcome run = farm<Counter>({{1, 0.1}, {3, 0.2}}, 0.03);
  EXPECT_EQ(run.result.sum, triangle(2000));
  EXPECT_EQ(run.result.count, 200);
  EXPECT_EQ(run.seen, 200);
  EXPECT_EQ(run.restored, 4u);
}

// Pieces through two leaves on different nodes, each thread counting: the second leaf's threads get
// again what a rebuilt first leaf sends again, and drop it by its identity. A window of 8 pieces.
Outcome chain(std::vector<SimOptions::Failure> failures) {
  MemoryTrace trace;
  auto backend = std::make_unique<SimBackend>(cluster(5), SimOptions{.pdexec = true, .nodes = 5, .failures = failures});
  Application app(std::move(backend));
  app.runtime().fault_tolerance(0.03);
  app.trace_to(&trace);
  auto master = app.threads<Stateless>("master", 1);
  auto adders = app.threads<Counter>("adders", 0);
  auto doublers = app.threads<Heavy>("doublers", 0);
  for (NodeId n = 1; n <= 2; ++n) adders.add_on(n), doublers.add_on(n + 2);
  auto graph = app.graph(op<Pieces<>>(master).window(8) >> op<SlowAdd<Counter>>(adders) >> op<Double<Heavy>>(doublers) >>
                         op<SumPartials<>>(master));
  Outcome run;
  run.result = graph.call(Range{0, 1000}).get();
  while (adders.size()) run.seen += adders.remove(0).get().seen;
  while (doublers.size()) run.seen += 1000 * doublers.remove(0).get().seen;
  for (const auto& c : trace.changes()) run.restored += c.kind == Lifecycle::ThreadRestored;
  return run;
}

TEST(FaultTolerance, ALeafAfterARebuiltLeafDropsWhatItHadAlready) {
  const Outcome clean = chain({});
  EXPECT_EQ(clean.result.sum, 2 * triangle(1000));
  EXPECT_EQ(clean.seen, 100 * 1000 + 100);
  for (NodeId node : {NodeId{1}, NodeId{3}}) {
    for (double at : {0.01, 0.07, 0.13, 0.21}) {
      const Outcome run = chain({{node, at}});
      EXPECT_EQ(run.result.sum, 2 * triangle(1000)) << "node " << node << " killed at " << at << " s";
      EXPECT_EQ(run.result.count, 100);
      EXPECT_EQ(run.seen, 100 * 1000 + 100) << "each leaf counted each piece once";
      EXPECT_EQ(run.restored, 1u);
    }
  }
}

// Killed at every moment of the run, checkpoints of 1 MB on their way included.
TEST(FaultTolerance, AKillAtAnyMomentLosesNothing) {
  for (NodeId node : {NodeId{1}, NodeId{3}}) {
    for (double at = 0.005; at < 0.55; at += 0.0173) {
      const Outcome run = chain({{node, at}});
      ASSERT_EQ(run.result.sum, 2 * triangle(1000)) << "node " << node << " killed at " << at << " s";
      ASSERT_EQ(run.seen, 100 * 1000 + 100) << "node " << node << " killed at " << at << " s";
    }
  }
  const Outcome both = chain({{1, 0.1}, {3, 0.2}});  // an adder's node, then a doubler's
  EXPECT_EQ(both.result.sum, 2 * triangle(1000));
  EXPECT_EQ(both.seen, 100 * 1000 + 100);
  EXPECT_EQ(both.restored, 2u);
}

TEST(FaultTolerance, WithoutItTheCallFailsNamingTheNode) {
  try {
    farm({{2, 0.1}}, 0);
    FAIL() << "the call completed without the work of node 2";
  } catch (const NodeFailure& e) {
    EXPECT_EQ(e.node, 2u);
  }
}

TEST(FaultTolerance, ANodeLostWithTheBackupsOfItsThreadsFailsTheCall) {
  // Node 1's checkpoints are held by node 2: both lost at once, its threads cannot be rebuilt.
  try {
    farm<Counter>({{1, 0.1}, {2, 0.1}}, 0.03);
    FAIL() << "the call completed without the work of nodes 1 and 2";
  } catch (const NodeFailure& e) {
    EXPECT_EQ(e.node, 1u);
    EXPECT_NE(std::string(e.what()).find("no backup"), std::string::npos) << e.what();
  }
}

// A collection made with Backups::None under --fault-tolerance: its threads are never checkpointed,
// the run costs what it costs without the option (but the objects' stamps), and losing
// one fails the call, saying why.
TEST(FaultTolerance, ACollectionWithoutBackupsIsNeverCheckpointedAndItsLossFailsTheCall) {
  const Outcome plain = farm<Heavy>({}, 0), kept = farm<Heavy>({}, 0.03);
  const Outcome none = farm<Heavy>({}, 0.03, 4, 2000, 0, Backups::None);
  EXPECT_EQ(none.result.sum, triangle(2000));
  EXPECT_EQ(none.result.count, 200);
  EXPECT_GT(kept.checkpoints, 0u);
  EXPECT_EQ(none.checkpoints, 0u);
  EXPECT_GT(kept.predicted, plain.predicted) << "the checkpoints of 1 MB states cost time";
  EXPECT_NEAR(none.predicted, plain.predicted, 1e-6 * plain.predicted) << "without backups, only the stamps are paid";
  try {
    farm<Counter>({{2, 0.1}}, 0.03, 4, 2000, 0, Backups::None);
    FAIL() << "the call completed without the work of node 2";
  } catch (const NodeFailure& e) {
    EXPECT_EQ(e.node, 2u);
    EXPECT_NE(std::string(e.what()).find("workers[2] keeps no backup (its collection was made with Backups::None)"),
              std::string::npos)
        << e.what();
  }
}

TEST(FaultTolerance, AfterALossThatCannotBeRebuiltLaterCallsFailToo) {
  MemoryTrace trace;
  auto backend = std::make_unique<SimBackend>(cluster(4), SimOptions{.pdexec = true, .nodes = 4, .failures = {{1, 0.1}, {2, 0.1}}});
  Application app(std::move(backend));
  app.runtime().fault_tolerance(0.03);
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Counter>("workers", 0);
  for (NodeId n = 1; n < 4; ++n) workers.add_on(n);
  auto graph = app.graph(op<Pieces<>>(master) >> op<SlowAdd<Counter>>(workers) >> op<SumPartials<>>(master));
  EXPECT_THROW(graph.call(Range{0, 2000}).get(), NodeFailure);
  EXPECT_THROW(graph.call(Range{0, 2000}).get(), NodeFailure) << "its pieces for the lost threads fail it, no hang";
}

// Splits and merges on the workers, inside the master's: 20 chunks of 100, each split in tenths
// (a window of 4) that leaves on every node sum and a merge on a worker adds up. A lost node's homes
// run their splits again and its merges run again; survivors tell them which slots they hold.
struct Chunks : Split<Range, Range> {
  Step execute(Range r) {
    for (long i = r.first; i < r.last; i += 100) co_await post(Range{i, std::min(i + 100, r.last)});
  }
};
struct Tenths : Split<Range, Range, Counter> {
  Step execute(Range r) {
    const long step = (r.last - r.first + 9) / 10;
    for (long i = r.first; i < r.last; i += step) co_await post(Range{i, std::min(i + step, r.last)});
  }
};

Outcome nested(std::vector<SimOptions::Failure> failures, double checkpoint_every) {
  MemoryTrace trace;
  auto backend = std::make_unique<SimBackend>(cluster(4), SimOptions{.pdexec = true, .nodes = 4, .failures = failures});
  Application app(std::move(backend));
  app.runtime().fault_tolerance(checkpoint_every);
  app.trace_to(&trace);
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Counter>("workers", 0);
  for (NodeId n = 1; n < 4; ++n) workers.add_on(n), workers.add_on(n);
  auto graph = app.graph(op<Chunks>(master) >> op<Tenths>(workers).window(4) >> op<SlowAdd<Counter>>(workers) >>
                         op<SumPartials<Counter>>(workers) >> op<SumPartials<>>(master));
  Outcome run;
  run.result = graph.call(Range{0, 2000}).get();
  run.predicted = app.now();
  while (workers.size()) run.seen += workers.remove(0).get().seen;
  for (const auto& c : trace.changes()) run.restored += c.kind == Lifecycle::ThreadRestored;
  return run;
}

TEST(FaultTolerance, SplitsAndMergesOfALostNodeRunAgainAndCountEachObjectOnce) {
  const Outcome clean = nested({}, 0.03);
  ASSERT_EQ(clean.result.sum, triangle(2000));
  ASSERT_EQ(clean.result.count, 200);
  ASSERT_EQ(clean.seen, 200);
  for (NodeId node : {NodeId{1}, NodeId{2}, NodeId{3}}) {
    for (double at = 0.004; at < clean.predicted; at += clean.predicted / 23) {
      for (double every : {0.03, 10.0}) {  // 10: no checkpoint after the first
        const Outcome run = nested({{node, at}}, every);
        ASSERT_EQ(run.result.sum, triangle(2000)) << "node " << node << " killed at " << at << " s, every " << every;
        ASSERT_EQ(run.result.count, 200) << "node " << node << " killed at " << at << " s, every " << every;
        ASSERT_EQ(run.seen, 200) << "node " << node << " killed at " << at << " s, every " << every;
        ASSERT_EQ(run.restored, 2u);
      }
    }
  }
  const Outcome both = nested({{1, 0.05}, {3, 0.15}}, 0.03);
  EXPECT_EQ(both.result.sum, triangle(2000));
  EXPECT_EQ(both.seen, 200);
  EXPECT_EQ(both.restored, 4u);
}

// Workers 0 and 2 (nodes 1 and 2) migrate to node 3 at 0.1 s, and node 3 is killed: before they
// leave (the migration fails: no such node), while they travel (it fails, naming the node: they
// stay where they were), or once they arrived (rebuilt with node 3's own workers). Every piece is
// counted once either way.
TEST(FaultTolerance, ThreadsMigratedToANodeKilledBeforeDuringOrAfterTheirMoveCountEveryPieceOnce) {
  struct Case {
    double kill_at;
    const char* migration_fails;  // null: the migrations end
    std::size_t restored;
  };
  for (const Case& c :
       {Case{0.1, "no such node", 2}, Case{0.1005, "failed while workers[", 2}, Case{0.3, nullptr, 4}}) {
    MemoryTrace trace;
    Application app(
        std::make_unique<SimBackend>(cluster(4), SimOptions{.pdexec = true, .nodes = 4, .failures = {{3, c.kill_at}}}));
    app.runtime().fault_tolerance(0.03);
    app.trace_to(&trace);
    auto master = app.threads<Stateless>("master", 1);
    auto workers = app.threads<Counter>("workers", 0);
    for (NodeId n = 1; n < 4; ++n) workers.add_on(n), workers.add_on(n);
    auto graph =
        app.graph(op<Pieces<>>(master).window(6) >> op<SlowAdd<Counter>>(workers) >> op<SumPartials<>>(master));
    auto call = graph.call(Range{0, 2000});
    app.sleep_until(0.1);
    std::vector<Future<void>> moves;
    moves.push_back(workers.migrate(0, 3));
    moves.push_back(workers.migrate(2, 3));
    const Partial result = call.get();
    EXPECT_EQ(result.sum, triangle(2000)) << "killed at " << c.kill_at;
    EXPECT_EQ(result.count, 200);
    for (Future<void>& move : moves) {
      try {
        move.get();
        EXPECT_FALSE(c.migration_fails) << "killed at " << c.kill_at;
      } catch (const std::exception& e) {
        ASSERT_TRUE(c.migration_fails) << e.what();
        EXPECT_NE(std::string(e.what()).find(c.migration_fails), std::string::npos) << e.what();
      }
    }
    std::size_t restored = 0;
    for (const auto& change : trace.changes()) restored += change.kind == Lifecycle::ThreadRestored;
    EXPECT_EQ(restored, c.restored) << "killed at " << c.kill_at;
    long seen = 0;
    while (workers.size()) seen += workers.remove(0).get().seen;
    EXPECT_EQ(seen, 200) << "killed at " << c.kill_at;
  }
}

TEST(FaultTolerance, BadFailuresAreRefused) {
  for (NodeId node : {NodeId{0}, NodeId{4}}) {
    EXPECT_THROW(SimBackend(cluster(4), SimOptions{.nodes = 4, .failures = {{node, 1.0}}}), std::invalid_argument)
        << "--fail " << node << "@1";
  }
  auto backend = std::make_unique<SimBackend>(cluster(4), SimOptions{.nodes = 4});
  Application app(std::move(backend));
  EXPECT_THROW(app.runtime().fault_tolerance(0), std::invalid_argument);
  app.threads<Stateless>("early", 1);
  EXPECT_THROW(app.runtime().fault_tolerance(1), std::logic_error) << "after threads exist";
  Application local(ApplicationOptions{.nodes = 2});
  EXPECT_THROW(local.runtime().fault_tolerance(1), std::invalid_argument) << "the local backend loses no node";
}

// Data object `i` of AddRange's graph, unsent: Range{i, i + 1}.
Envelope* range_object(const GraphCore* graph, int i) {
  auto* e = new Envelope;
  e->graph = graph;
  e->seq = static_cast<std::uint64_t>(i);
  e->payload = Payload::of(Range{i, i + 1});
  return e;
}

TEST(RecoveryLog, AnInboxHandlesEachSendersObjectsOnceAndInOrder) {
  Application app(ApplicationOptions{.nodes = 1});
  auto workers = app.threads<Stateless>("workers", 1);
  app.graph(op<AddRange<>>(workers));
  const GraphCore* graph = app.runtime().graphs().back();  // its input, a Range, is what the copies decode
  detail::Outbox out;
  detail::Inbox in;
  std::vector<Envelope*> sent;
  for (int i = 0; i < 4; ++i) {
    Envelope* e = range_object(graph, i);
    out.send(*e, 7, 9, Stamp::kFinal, 0, static_cast<std::uint64_t>(10 + i));
    sent.push_back(e);
  }
  EXPECT_EQ(out.kept(), 4u);
  EXPECT_EQ(in.admit(sent[1]), detail::Inbox::Verdict::Early);
  EXPECT_EQ(in.admit(sent[0]), detail::Inbox::Verdict::Handle);
  Envelope* next = in.next(sent[0]->stamp);
  ASSERT_EQ(next, sent[1]) << "the one that waited for it";
  EXPECT_EQ(in.admit(next), detail::Inbox::Verdict::Handle);
  auto copies = out.copies(9);
  ASSERT_EQ(copies.size(), 4u);
  EXPECT_EQ(copies[0].second->payload.get<Range>().first, 0);
  EXPECT_EQ(copies[3].second->stamp.time, 13u) << "a copy keeps its sender's clock";
  EXPECT_EQ(in.admit(copies[0].second), detail::Inbox::Verdict::Duplicate) << "sent again, handled before";
  for (auto& [to, e] : copies) delete e;
  out.covered(9, 0, 2);
  EXPECT_EQ(out.kept(), 2u) << "the copies the receiver's checkpoint covers go";
  out.restart(1, 0);
  Envelope* fresh = range_object(graph, 0);
  out.send(*fresh, 7, 9, Stamp::kFinal, 0, 1);
  EXPECT_EQ(fresh->stamp.incarnation(), 1u);
  EXPECT_EQ(fresh->stamp.number(), 1u) << "a rebuilt sender numbers afresh";
  EXPECT_EQ(in.admit(fresh), detail::Inbox::Verdict::Handle);

  // Handled from a sender's earlier life, an object its rebuild sends again is told apart from a
  // second copy: only the former credits its frame's home as dropped.
  detail::Outbox first_life, rebuilt;
  Envelope* before = range_object(graph, 5);
  first_life.send(*before, 8, 9, /*epoch=*/0, 0, 1);
  EXPECT_EQ(in.admit(before), detail::Inbox::Verdict::Handle);
  rebuilt.restart(1, 0);
  Envelope* again = range_object(graph, 5);
  rebuilt.send(*again, 8, 9, 0, 0, 2);
  EXPECT_EQ(in.admit(again), detail::Inbox::Verdict::Again);
  // So is its copy of what its first life sent, which the rebuilt sender marks as such when it sends
  // it again (a home rebuilt from a checkpoint counts on it to learn its frame's merge ran).
  Envelope* kept = first_life.copies(9).front().second;
  EXPECT_EQ(in.admit(kept), detail::Inbox::Verdict::Duplicate) << "sent twice by its first life";
  kept->stamp.earlier_life = true;
  EXPECT_EQ(in.admit(kept), detail::Inbox::Verdict::Again);
  for (Envelope* e : {sent[0], sent[1], sent[2], sent[3], fresh, before, again, kept}) delete e;
}

// A thread's log tells each receiver once what it was not told yet (its own order only if it was
// rebuilt), learns what others tell it as prefixes, and forgets what a held checkpoint covers.
TEST(RecoveryLog, ACausalLogTellsEachReceiverOnceWhatItDoesNotKnowAndForgetsWhatACheckpointCovers) {
  using detail::Determinant;
  detail::CausalLog a;
  a.record(7, 0, {1, 100});
  a.record(7, 1, {2, 200});
  a.record(7, 3, {3, 300});  // a gap: not known
  auto news = a.news_for(9);
  ASSERT_TRUE(news);
  ASSERT_EQ(news->runs.size(), 1u);
  EXPECT_EQ(news->runs[0].owner, 7u);
  EXPECT_EQ(news->runs[0].first, 0u);
  EXPECT_EQ(news->runs[0].entries, (std::vector<Determinant>{{1, 100}, {2, 200}}));
  EXPECT_FALSE(a.news_for(9)) << "told once";
  EXPECT_FALSE(a.news_for(7)) << "a thread knows its own order";
  EXPECT_TRUE(a.news_for(7, /*its_own=*/true)) << "unless it was rebuilt";
  a.record(7, 2, {3, 300});
  news = a.news_for(9);
  ASSERT_TRUE(news);
  EXPECT_EQ(news->runs[0].first, 2u) << "only what came since";
  a.forget_told(9);
  EXPECT_EQ(a.news_for(9)->runs[0].entries.size(), 3u) << "rebuilt, it is told again";

  detail::CausalLog b;  // what 9 learns: a prefix, however often and in whatever pieces it hears it
  b.learn(*news);       // 2 alone, after a gap: nothing
  EXPECT_EQ(b.entries(), 0u);
  detail::Determinants first{{{7, 0, {{1, 100}, {2, 200}}}}, {}};
  b.learn(first);
  b.learn(first);
  b.learn(*news);
  EXPECT_EQ(b.entries(), 3u);
  b.learn(detail::Determinants{{}, {{7, 2}}});  // 7's held checkpoint covers its first two
  EXPECT_EQ(b.entries(), 1u);
  a.stable(7, 3);
  detail::CausalLog c;
  c.learn(*a.news_for(10));
  EXPECT_EQ(c.entries(), 0u) << "what a held checkpoint covers is not told";
  c.learn(detail::Determinants{{{7, 1, {{2, 200}, {3, 300}, {4, 400}}}}, {}});
  EXPECT_EQ(c.entries(), 1u) << "only what the checkpoint does not cover is kept";

  detail::ReplayScript script;  // a thread rebuilt from the checkpoint of its first two
  script.restart(2);
  script.learn(first, 7);
  EXPECT_EQ(script.front(), nullptr) << "covered by its checkpoint";
  script.learn(detail::Determinants{{{8, 2, {{5, 500}}}, {7, 1, {{2, 200}, {3, 300}, {4, 400}}}}, {}}, 7);
  ASSERT_NE(script.front(), nullptr);
  EXPECT_EQ(*script.front(), (Determinant{3, 300})) << "its own order, from its checkpoint on";
  script.pop();
  EXPECT_EQ(*script.front(), (Determinant{4, 400}));
  script.pop();
  EXPECT_EQ(script.front(), nullptr);

  // The end of a merge's input (frame 42) is an entry like the objects: seen where it came.
  const Determinant end = Determinant::end_of_input(42);
  script.learn(detail::Determinants{{{7, 4, {end, {5, 500}}}}, {}}, 7);
  ASSERT_NE(script.front(), nullptr);
  EXPECT_TRUE(script.front()->ends_input());
  EXPECT_FALSE(script.names(end)) << "its front, not later";
  EXPECT_TRUE(script.names(Determinant{5, 500}));
  script.pop();
  EXPECT_EQ(*script.front(), (Determinant{5, 500}));
}

// A rebuilt sender may number its links in another order than it first did: an object its receiver's
// script names is handled out of its turn, and the numbers it skipped are handled as they come.
TEST(RecoveryLog, AnInboxHandlesAScriptedObjectOutOfItsTurnAndTheSkippedOnesAfter) {
  Application app(ApplicationOptions{.nodes = 1});
  auto workers = app.threads<Stateless>("workers", 1);
  app.graph(op<AddRange<>>(workers));
  const GraphCore* graph = app.runtime().graphs().back();
  detail::Outbox out;
  detail::Inbox in;
  std::vector<Envelope*> sent;
  for (int i = 0; i < 3; ++i) {
    Envelope* e = range_object(graph, i);
    out.send(*e, 7, 9, 1, 0, 1);
    sent.push_back(e);
  }
  EXPECT_EQ(in.admit(sent[2], /*out_of_turn=*/true), detail::Inbox::Verdict::Handle);
  EXPECT_EQ(in.admit(sent[2], true), detail::Inbox::Verdict::Duplicate);
  EXPECT_EQ(in.admit(sent[1]), detail::Inbox::Verdict::Early);
  EXPECT_EQ(in.admit(sent[0]), detail::Inbox::Verdict::Handle);
  EXPECT_EQ(in.next(sent[0]->stamp), sent[1]);
  EXPECT_EQ(in.admit(sent[1]), detail::Inbox::Verdict::Handle);
  EXPECT_EQ(in.next(sent[1]->stamp), nullptr) << "the one after it was handled already";
  EXPECT_EQ(in.record().handled.at({7, 0}), 3u) << "the numbers handled ahead close the gap";
  EXPECT_TRUE(in.record().ahead.empty());
  for (Envelope* e : sent) delete e;
}

}  // namespace
}  // namespace dps::test
