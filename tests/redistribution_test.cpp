// Redistribution (dps/redistribution.hpp): every plan between the layouts of 1 to 8 parts, in each kind
// of layout, lands every element exactly once where the new layout says, in steps where no part sends
// or receives two messages; ReSHAPE's 2×2 → 3×4 example; the flow graph moving real parts, growing and
// shrinking the collection, on in-process nodes and in the simulator.
#include <dps/dps.hpp>
#include <dps/redistribution.hpp>
#include <dps/sim/sim_backend.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace {

using dps::Distribution;
using dps::Layout;

constexpr std::size_t kRows = 37, kCols = 23;  // not multiples of anything used below

// The nearly-square grid of p parts: rows × cols, rows ≥ cols.
std::pair<std::size_t, std::size_t> grid_of(std::size_t p) {
  std::size_t cols = 1;
  for (std::size_t c = 1; c * c <= p; ++c)
    if (p % c == 0) cols = c;
  return {p / cols, cols};
}

struct Kind {
  std::string name;
  std::function<Layout(std::size_t parts)> layout;
};

std::vector<Kind> kinds() {
  return {
      {"1-D block", [](std::size_t p) { return Layout(Distribution::even(kRows, p), Distribution::whole(kCols)); }},
      {"1-D uneven block",
       [](std::size_t p) {  // part i holds i + 1 shares: some hold none when there are few rows per share
         std::vector<std::size_t> counts(p);
         std::size_t shares = p * (p + 1) / 2, left = kRows;
         for (std::size_t i = 0; i < p; ++i) left -= counts[i] = kRows * (i + 1) / shares;
         counts.back() += left;
         return Layout(Distribution::blocks(counts), Distribution::whole(kCols), 1);
       }},
      {"1-D block-cyclic", [](std::size_t p) { return Layout(Distribution::cyclic(kRows, 3, p), Distribution::whole(kCols)); }},
      {"2-D block-cyclic",
       [](std::size_t p) {
         const auto [r, c] = grid_of(p);
         return Layout(Distribution::cyclic(kRows, 2, r), Distribution::cyclic(kCols, 3, c), 2);
       }},
  };
}

// The parts of `layout` filled with each element's global index, margins with -1.
std::vector<std::vector<double>> filled(const Layout& layout) {
  std::vector<std::vector<double>> parts(layout.parts());
  for (std::size_t p = 0; p < parts.size(); ++p) parts[p].assign(layout.elements(p), -1);
  const std::size_t rows = layout.rows().extent(), cols = layout.cols().extent();
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t j = 0; j < cols; ++j) {
      const auto at = layout.locate(i, j);
      parts[at.part][layout.offset(at.part, at.row, at.col)] = static_cast<double>(i * cols + j);
    }
  return parts;
}

// Applies the plan's transfers, counting the writes of each element of the new parts.
void expect_lands_once(const dps::RedistributionPlan& plan, const std::string& what) {
  const auto before = filled(plan.from), expected = filled(plan.to);
  std::vector<std::vector<double>> after(plan.to.parts());
  std::vector<std::vector<int>> writes(plan.to.parts());
  for (std::size_t q = 0; q < after.size(); ++q) {
    after[q].assign(plan.to.elements(q), -1);
    writes[q].assign(plan.to.elements(q), 0);
  }
  for (const dps::Transfer& t : plan.transfers) {
    std::size_t elements = 0;
    for (const dps::Rect& r : t.rects)
      for (std::size_t i = 0; i < r.rows; ++i)
        for (std::size_t j = 0; j < r.cols; ++j) {
          const std::size_t to = plan.to.offset(t.to, r.to_row + i, r.to_col + j);
          after[t.to][to] = before[t.from][plan.from.offset(t.from, r.from_row + i, r.from_col + j)];
          ++writes[t.to][to];
          ++elements;
        }
    ASSERT_EQ(elements, t.elements) << what;
  }
  for (std::size_t q = 0; q < after.size(); ++q)
    for (std::size_t k = 0; k < after[q].size(); ++k) {
      ASSERT_EQ(after[q][k], expected[q][k]) << what << ": part " << q << ", element " << k;
      ASSERT_EQ(writes[q][k], expected[q][k] < 0 ? 0 : 1) << what << ": part " << q << ", element " << k;
    }
}

// Every transfer in exactly one step; no part sends or receives twice in a step; copies first; as
// many steps as the busiest part has messages.
void expect_contention_free(const dps::RedistributionPlan& plan, const std::string& what) {
  std::vector<int> scheduled(plan.transfers.size(), 0);
  std::vector<std::size_t> sends(plan.from.parts()), receives(plan.to.parts());
  for (const dps::Transfer& t : plan.transfers)
    if (t.from != t.to) ++sends[t.from], ++receives[t.to];
  const std::size_t busiest = std::max(*std::max_element(sends.begin(), sends.end()),
                                       *std::max_element(receives.begin(), receives.end()));
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    std::vector<int> sent(plan.from.parts()), received(plan.to.parts());
    for (std::uint32_t index : plan.steps[s]) {
      const dps::Transfer& t = plan.transfers.at(index);
      ++scheduled[index];
      if (t.from == t.to) {
        EXPECT_EQ(s, 0u) << what << ": a copy within part " << t.from << " after the first step";
        continue;
      }
      EXPECT_EQ(++sent[t.from], 1) << what << ": part " << t.from << " sends twice in step " << s;
      EXPECT_EQ(++received[t.to], 1) << what << ": part " << t.to << " receives twice in step " << s;
    }
  }
  for (std::size_t e = 0; e < scheduled.size(); ++e) EXPECT_EQ(scheduled[e], 1) << what << ": transfer " << e;
  EXPECT_EQ(plan.steps.size(), std::max<std::size_t>(busiest, 1)) << what;
}

TEST(Redistribution, EveryElementLandsOnceForEveryPairOfPartCountsUpToEight) {
  for (const Kind& kind : kinds())
    for (std::size_t p = 1; p <= 8; ++p)
      for (std::size_t q = 1; q <= 8; ++q) {
        const std::string what = kind.name + " " + std::to_string(p) + " -> " + std::to_string(q);
        const auto plan = dps::plan_redistribution(kind.layout(p), kind.layout(q));
        expect_lands_once(plan, what);
        expect_contention_free(plan, what);
        if (HasFatalFailure()) return;
      }
}

TEST(Redistribution, ReshapesTwoByTwoToThreeByFourExample) {
  // ReSHAPE (Sudarsan, "ReSHAPE: A Framework for Dynamic Resizing of Parallel Applications", ch. 3): N = 12 blocks of
  // NB = 4 a side, 2×2 processors to 3×4. Superblock R = 6, C = 4; each message holds the blocks at one position of
  // every superblock: N²/(R·C) = 6 blocks; each of the 4 sources has R·C/P = 6, one of them to itself: here a copy in
  // the first step, so 5 steps move the other 5, one each.
  constexpr std::size_t nb = 4, n = 12 * nb;
  const Layout from(Distribution::cyclic(n, nb, 2), Distribution::cyclic(n, nb, 2));
  const Layout to(Distribution::cyclic(n, nb, 3), Distribution::cyclic(n, nb, 4));
  const auto plan = dps::plan_redistribution(from, to);
  EXPECT_EQ(plan.row_period, 6 * nb);
  EXPECT_EQ(plan.col_period, 4 * nb);
  EXPECT_EQ(plan.transfers.size(), 24u);
  for (const auto& t : plan.transfers) {
    EXPECT_EQ(t.elements, 6 * nb * nb);
    // ReSHAPE's owners: Pc·(x % Pr) + (y % Pc) before, Qc·(x % Qr) + (y % Qc) after, for block (x, y).
    const auto& r = t.rects.front();
    const std::size_t x = (r.from_row / nb) * 2 + t.from / 2, y = (r.from_col / nb) * 2 + t.from % 2;
    EXPECT_EQ(t.from, 2 * (x % 2) + y % 2);
    EXPECT_EQ(t.to, 4 * (x % 3) + y % 4);
  }
  EXPECT_EQ(plan.steps.size(), 5u);
  expect_contention_free(plan, "2x2 -> 3x4");
  Layout square(Distribution::cyclic(n, nb, 2), Distribution::cyclic(n, nb, 2));
  EXPECT_EQ(square.locate(5 * nb, 3 * nb).part, 2u * (5 % 2) + 3 % 2);
}

TEST(Redistribution, RefusesArraysOfDifferentShapes) {
  try {
    dps::plan_redistribution(Layout(Distribution::even(10, 2), Distribution::whole(4)),
                             Layout(Distribution::even(11, 2), Distribution::whole(4)));
    FAIL() << "planned";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "dps::plan_redistribution: a 10 x 4 array cannot become 11 x 4");
  }
}

// ---- the flow graph ----

struct Holder {
  dps::Part<double> grid;
  template <class A>
  void serialize(A& a) {
    a(grid);
  }
};

struct Load : dps::Split<int, int> {
  dps::Step execute(int parts) {
    for (int p = 0; p < parts; ++p) co_await post(p);
  }
};

// Builds part p of a layout the holder learns from a global (one layout per test).
inline Layout current;
struct Fill : dps::Leaf<int, int, Holder> {
  int execute(const int& p) {
    auto parts = filled(current);
    thread().grid.data = dps::LargeArray<double>(parts[static_cast<std::size_t>(p)].size());
    std::copy(parts[p].begin(), parts[p].end(), thread().grid.data.data());
    return 1;
  }
};
struct Check : dps::Leaf<int, int, Holder> {
  int execute(const int& p) {
    const auto parts = filled(current);
    const auto& got = thread().grid.data;
    if (got.size() != parts[p].size()) return 0;
    for (std::size_t k = 0; k < got.size(); ++k)
      if (parts[p][k] >= 0 && got[k] != parts[p][k]) return 0;  // margins are the application's
    return 1;
  }
};
struct Count : dps::Merge<int, int> {
  dps::Step execute(int n) {
    while (auto more = co_await next()) n += *more;
    co_await post(n);
  }
};
struct Place {
  std::size_t operator()(const int& p, std::size_t) const { return static_cast<std::size_t>(p); }
};

void move_parts(dps::Application& app, const std::function<Layout(std::size_t)>& layout, std::vector<std::size_t> sizes) {
  auto holders = app.threads<Holder>("holders", sizes.front());
  auto master = app.threads<dps::Stateless>("master", 1);
  auto fill = app.graph(dps::op<Load>(master) >> dps::op<Fill>(holders, Place{}) >> dps::op<Count>(master));
  auto check = app.graph(dps::op<Load>(master) >> dps::op<Check>(holders, Place{}) >> dps::op<Count>(master));
  dps::Redistribution<&Holder::grid> redistribute(app, holders);
  std::size_t size = sizes.front();
  current = layout(size);
  ASSERT_EQ(fill.call(static_cast<int>(size)).get(), static_cast<int>(size));
  for (std::size_t next : std::vector<std::size_t>(sizes.begin() + 1, sizes.end())) {
    if (next > size) holders.add(next - size);
    const Layout from = current;
    current = layout(next);
    const dps::Redistributed moved = redistribute.run(from, current).get();
    EXPECT_EQ(moved.steps, dps::plan_redistribution(from, current).steps.size());
    for (; size > next; --size) EXPECT_EQ(holders.remove(size - 1).get().grid.data.size(), 0u);
    size = next;
    EXPECT_EQ(check.call(static_cast<int>(next)).get(), static_cast<int>(next)) << size << " parts";
  }
}

Layout two_d(std::size_t p) {
  const auto [r, c] = grid_of(p);
  return Layout(Distribution::cyclic(kRows, 2, r), Distribution::cyclic(kCols, 3, c), 1);
}

TEST(Redistribution, GraphMovesPartsAsTheCollectionGrowsAndShrinksOnInProcessNodes) {
  dps::Application app(dps::ApplicationOptions{.nodes = 3});
  move_parts(app, two_d, {2, 5, 3, 8, 1});
}

TEST(Redistribution, GraphCutsMessagesOfMoreThanAMegabyteIntoPieces) {
  // 2000 rows of 300 doubles: 1 -> 2 parts moves 2.4 MB from part 0 to part 1, in three pieces.
  dps::Application app(dps::ApplicationOptions{.nodes = 2});
  const auto strips = [](std::size_t p) { return Layout(Distribution::even(2000, p), Distribution::whole(300)); };
  move_parts(app, strips, {1, 2, 1, 3});
}

TEST(Redistribution, GraphMovesPartsAsTheCollectionGrowsAndShrinksInTheSimulator) {
  dps::sim::ClusterModel model;
  model.groups = {dps::sim::NodeGroup{"nodes", 3, 1, 1.0}};
  dps::Application app(std::make_unique<dps::sim::SimBackend>(model, dps::sim::SimOptions{.nodes = 3}));
  const double start = app.now();
  move_parts(app, two_d, {2, 5, 3, 8, 1});
  EXPECT_GT(app.now(), start);  // the transfers took simulated time
}

}  // namespace
