// The command-line conventions every DPS program shares (dps/cli.hpp): options, counts, whole
// numbers and resize points, each bad value refused with a one-line reason.
#include <dps/cli.hpp>

#include <gtest/gtest.h>

#include <map>
#include <stdexcept>
#include <string>

namespace {

std::string error_of(const auto& call) {
  try {
    call();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "no error";
}

TEST(Cli, ResizePointsAreStepsAndCounts) {
  EXPECT_EQ(dps::resize_points("--resize", "50:4,100:2", "ITERATION:THREADS"), (std::map<long, long>{{50, 4}, {100, 2}}));
  EXPECT_TRUE(dps::resize_points("--resize", "", "ITERATION:THREADS").empty());
  EXPECT_EQ(error_of([] { dps::resize_points("--resize", "50:4,50:2", "ROUND:THREADS"); }), "--resize names round 50 twice");
  EXPECT_EQ(error_of([] { dps::resize_points("--resize", "50", "ITERATION:THREADS"); }),
            "--resize expects ITERATION:THREADS[,...], got '50'");
  EXPECT_EQ(error_of([] { dps::resize_points("--resize", "5:x", "ITERATION:THREADS"); }), "--resize expects whole numbers, got 'x'");
}

TEST(Cli, WholeNumbersAndCountsRefuseTheRest) {
  EXPECT_EQ(dps::whole_number("--speeds", "-3"), -3);
  EXPECT_EQ(error_of([] { dps::whole_number("--speeds", "3.5"); }), "--speeds expects whole numbers, got '3.5'");
  EXPECT_EQ(error_of([] { dps::whole_number("--speeds", ""); }), "--speeds expects whole numbers, got ''");
  EXPECT_EQ(dps::positive_count("--nodes", "4"), 4u);
  EXPECT_EQ(error_of([] { dps::positive_count("--nodes", "0"); }), "--nodes expects a positive integer, got '0'");
}

TEST(Cli, OptionsAreParsedAndUnknownOnesRefused) {
  long n = 0;
  double x = 0;
  bool flag = false;
  std::string s;
  dps::Cli cli("prog", "A test.");
  cli.option("--n", n, "a count").option("--x", x, "a number").option("--s", s, "a word").flag("--flag", flag, "a flag");
  EXPECT_TRUE(cli.parse({"--n", "7", "--x", "2.5", "--s", "w", "--flag"}));
  EXPECT_EQ(n, 7);
  EXPECT_EQ(x, 2.5);
  EXPECT_EQ(s, "w");
  EXPECT_TRUE(flag);
  EXPECT_FALSE(cli.parse({"--help"}));
  EXPECT_THROW(cli.parse({"--nope"}), std::invalid_argument);
  EXPECT_THROW(cli.parse({"--n", "seven"}), std::invalid_argument);
}

}  // namespace
