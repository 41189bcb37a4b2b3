// Heterogeneous partitioning (dps/partition.hpp) against Weissman's published STEN partitions (seed
// 003, Table: N = 1024 on 6 SGI / 8 Sparc2 / 5 IPC is 110/34/18 rows per processor, N = 2048 on 6/8/6
// is 178/95/36), and the general solution with fixed costs.
#include <dps/partition.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace {

// `counts` of each of the three clusters' processors, each paying `cost` per row (ms per instruction
// of the 5N-instruction row update: the N factor is common, so it cancels).
std::vector<double> costs(std::vector<int> counts, std::vector<double> cost) {
  std::vector<double> per_row;
  for (std::size_t c = 0; c < counts.size(); ++c) per_row.insert(per_row.end(), counts[c], cost[c]);
  return per_row;
}

void expect_within_a_row(const std::vector<std::size_t>& rows, std::vector<int> counts, std::vector<int> published,
                         std::size_t n) {
  EXPECT_EQ(std::accumulate(rows.begin(), rows.end(), std::size_t{0}), n) << "every row somewhere";
  std::size_t i = 0;
  for (std::size_t c = 0; c < counts.size(); ++c)
    for (int k = 0; k < counts[c]; ++k, ++i)
      EXPECT_LE(std::abs(static_cast<long>(rows[i]) - published[c]), 1) << "processor " << k << " of cluster " << c + 1;
}

TEST(Partition, ReproducesWeissmansStenPartitionsWithinOneRow) {
  const auto small = costs({6, 8, 5}, {.0001, .000319, .0006});  // N < 1024 costs, as his table used
  const std::vector<double> none(small.size(), 0);
  const auto rows_1024 = dps::partition_by_cost(1024, none, small);
  expect_within_a_row(rows_1024, {6, 8, 5}, {110, 34, 18}, 1024);
  // 109.6 / 34.4 / 18.3 round to 110 / 34 / 18, which leave 2 rows: the first two SGIs take them.
  EXPECT_EQ(rows_1024[0], 111u);
  EXPECT_EQ(rows_1024[1], 111u);
  EXPECT_EQ(rows_1024[2], 110u);

  const auto large = costs({6, 8, 6}, {.00015, .00028, .00072});
  const std::vector<double> speeds = [&] {
    std::vector<double> s;
    for (double y : large) s.push_back(1 / y);
    return s;
  }();
  const auto rows_2048 = dps::partition_by_speed(2048, speeds);
  expect_within_a_row(rows_2048, {6, 8, 6}, {178, 95, 36}, 2048);
  // 177.5 / 95.1 / 37.0 round to 178 / 95 / 37, two rows too many: the first two SGIs give one back.
  EXPECT_EQ(rows_2048[0], 177u);
  EXPECT_EQ(rows_2048[2], 178u);
  EXPECT_EQ(rows_2048[19], 37u);
}

TEST(Partition, BalancesFixedCostsAndDropsAPartTheyOutweigh) {
  // 0.5 + 1·A0 = 0 + 1·A1, A0 + A1 = 10: A = 4.75, 5.25, rounded to 5, 5.
  EXPECT_EQ(dps::partition_by_cost(10, std::vector<double>{0.5, 0}, std::vector<double>{1, 1}),
            (std::vector<std::size_t>{5, 5}));
  // 2 + 1·A0 = 0 + 2·A1 with 10 units: A0 = 6, A1 = 4, exactly.
  EXPECT_EQ(dps::partition_by_cost(10, std::vector<double>{2, 0}, std::vector<double>{1, 2}),
            (std::vector<std::size_t>{6, 4}));
  // A fixed cost of 100 against an iteration of 10: that part gets nothing.
  EXPECT_EQ(dps::partition_by_cost(10, std::vector<double>{100, 0, 0}, std::vector<double>{1, 1, 1}),
            (std::vector<std::size_t>{0, 5, 5}));
  EXPECT_EQ(dps::partition_by_speed(7, std::vector<double>{1, 1, 1}), (std::vector<std::size_t>{3, 2, 2}));
}

TEST(Partition, RefusesSpeedsThatAreNotPositive) {
  EXPECT_THROW(dps::partition_by_speed(10, std::vector<double>{1, 0}), std::invalid_argument);
  EXPECT_THROW(dps::partition_by_speed(10, std::vector<double>{}), std::invalid_argument);
  EXPECT_THROW(dps::partition_by_cost(10, std::vector<double>{-1}, std::vector<double>{1}), std::invalid_argument);
}

}  // namespace
