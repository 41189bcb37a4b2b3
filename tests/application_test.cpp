// Applications: options from the command line, and several applications in one process.
#include "support.hpp"

#include <gtest/gtest.h>

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
