// Applications: options from the command line, and several applications in one process.
#include "scratch.hpp"
#include "support.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace dps::test {
namespace {

TEST(Application, ReadsItsOptionsAndLeavesTheRest) {
  std::vector<std::string> words{"prog", "--n", "64", "--nodes", "3", "--local", "--workers", "1", "--verbose"};
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  Application app(static_cast<int>(argv.size()), argv.data());
  EXPECT_EQ(app.nodes(), 3u);
  EXPECT_EQ(app.args(), (std::vector<std::string>{"--n", "64", "--verbose"}));
}

TEST(Application, BadOptionsGiveOneLineReasons) {
  for (const auto& [words, reason] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"p", "--nodes", "0"}, "--nodes expects a positive integer, got '0'"},
           {{"p", "--nodes", "x4"}, "--nodes expects a positive integer, got 'x4'"},
           {{"p", "--workers"}, "--workers expects a value"}}) {
    try {
      std::vector<std::string> copy = words;
      std::vector<char*> argv;
      for (auto& w : copy) argv.push_back(w.data());
      Application app(static_cast<int>(argv.size()), argv.data());
      ADD_FAILURE() << "accepted " << words[1];
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), reason);
    }
  }
}

std::unique_ptr<Application> with(std::vector<std::string> words) {
  words.insert(words.begin(), "prog");
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return std::make_unique<Application>(static_cast<int>(argv.size()), argv.data());
}

// A run written between calls goes on, in another application, with every thread's state and the
// driver's progress; a program that makes its threads before asking is refused.
TEST(Application, ADiskCheckpointRestoresEveryThreadAndTheProgress) {
  const Scratch scratch;
  const std::string dir = (scratch.dir / "ckpt").string();
  std::vector<long> seen;
  {
    auto app = with({"--local", "--nodes", "2", "--checkpoint-dir", dir, "--checkpoint-every", "1e-9"});
    EXPECT_FALSE(app->restarted<long>());
    auto master = app->threads<Stateless>("master", 1);
    auto workers = app->threads<Counter>("workers", 3);
    auto graph = app->graph(op<Pieces<>>(master) >> op<AddRange<Counter>>(workers) >> op<SumPartials<>>(master));
    EXPECT_FALSE(app->checkpoint(long{0}));  // the first point: the run as it begins, not written
    EXPECT_FALSE(std::filesystem::exists(dir + "/checkpoint.dps"));
    EXPECT_EQ(graph.call(Range{0, 1000}).get().sum, triangle(1000));
    for (std::size_t i = 0; i < 3; ++i) seen.push_back(workers.snapshot(i).get().seen);
    EXPECT_TRUE(app->checkpoint(long{41}));
    EXPECT_TRUE(std::filesystem::exists(dir + "/checkpoint.dps"));
    EXPECT_FALSE(std::filesystem::exists(dir + "/checkpoint.dps.tmp"));
    graph.call(Range{0, 1000}).get();  // after the checkpoint: not in it
  }
  {
    auto app = with({"--local", "--nodes", "3", "--restart", dir});
    ASSERT_EQ(app->restarted<long>(), std::optional<long>(41));
    auto workers = app->threads<Counter>("workers", 4);  // a fourth beyond the checkpoint's: made anew
    for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(workers.snapshot(i).get().seen, seen[i]) << "thread " << i;
    EXPECT_EQ(workers.snapshot(3).get().seen, 0);
    EXPECT_THROW(app->threads<Partial>("master", 1), std::invalid_argument);  // it held another type
  }
  auto app = with({"--local", "--nodes", "2", "--restart", dir});
  EXPECT_THROW(app->threads<Counter>("workers", 3), std::invalid_argument);  // made before restarted()
}

TEST(Application, SeveralApplicationsInOneProcess) {
  Application a(ApplicationOptions{.nodes = 2, .workers = 1});
  Application b(ApplicationOptions{.nodes = 3, .workers = 2});
  auto ma = a.threads<Stateless>("master", 1);
  auto wa = a.threads<Counter>("workers", 2);
  auto mb = b.threads<Stateless>("master", 1);
  auto wb = b.threads<Counter>("workers", 3);
  auto ga = a.graph(op<Pieces<>>(ma) >> op<AddRange<Counter>>(wa) >> op<SumPartials<>>(ma));
  auto gb = b.graph(op<Pieces<>>(mb) >> op<AddRange<Counter>>(wb) >> op<SumPartials<>>(mb));
  std::vector<Future<Partial>> fa, fb;
  for (long c = 1; c <= 100; ++c) {
    fa.push_back(ga.call(Range{0, c * 10}));
    fb.push_back(gb.call(Range{0, c * 20}));
  }
  long leaves_a = 0, leaves_b = 0;
  for (long c = 1; c <= 100; ++c) {
    EXPECT_EQ(fa[c - 1].get().sum, triangle(c * 10));
    EXPECT_EQ(fb[c - 1].get().sum, triangle(c * 20));
    leaves_a += c;
    leaves_b += 2 * c;
  }
  long seen_a = 0, seen_b = 0;
  while (wa.size()) seen_a += wa.remove(0).get().seen;
  while (wb.size()) seen_b += wb.remove(0).get().seen;
  EXPECT_EQ(seen_a, leaves_a) << "each application ran its own work on its own threads";
  EXPECT_EQ(seen_b, leaves_b);
}

}  // namespace
}  // namespace dps::test
