// Graphs are built at run time and compose: a graph stands where an operation stands.
#include "support.hpp"

#include <gtest/gtest.h>

namespace dps::test {
namespace {

struct Halves : Split<Range, Range> {
  Step execute(Range r) {
    const long mid = (r.first + r.last) / 2;
    co_await post(Range{r.first, mid});
    co_await post(Range{mid, r.last});
  }
};
struct Widen : Leaf<Partial, Range> {  // a partial result becomes the next range to sum
  Range execute(const Partial& p) { return {0, p.count * 10}; }
};

TEST(Graph, AGraphStandsWhereAnOperationStands) {
  Application app(ApplicationOptions{.nodes = 3, .workers = 2});
  auto master = app.threads<Stateless>("master", 1);
  auto workers = app.threads<Stateless>("workers", 3);
  auto inner = app.graph(op<Halves>(workers) >> op<AddRange<>>(workers) >> op<SumPartials<>>(workers), "inner");
  // inner replaces the leaf of an outer split-merge, like the sub-block multiplication of Schaeli, Gerlach & Hersch ("A
  // simulator for adaptive parallel applications", Fig. 8) replaces an operation.
  auto outer = app.graph(op<Pieces<>>(master) >> inner >> op<SumPartials<>>(master), "outer");
  const Partial p = outer.call(Range{0, 1000}).get();
  EXPECT_EQ(p.sum, triangle(1000));
  EXPECT_EQ(p.count, 2 * 1000 / Pieces<>::step) << "each outer piece went through the inner split into two leaves";
  EXPECT_EQ(inner.call(Range{0, 7}).get().sum, triangle(7)) << "the inner graph is still callable alone";
}

// Types in anonymous namespaces of two files share their mangled name: the second to register
// would run the first's code. It stops the program instead, naming the type.
TEST(GraphDeathTest, AnotherTypeUnderARegisteredOperationsNameStopsTheProgram) {
  const detail::OpType& halves = detail::op_type<Halves>();
  EXPECT_EQ(&detail::Registry<detail::OpType>::add(halves), &halves) << "the same type again is no clash";
  detail::OpType other = halves;
  other.type = &typeid(Widen);
  EXPECT_DEATH(detail::Registry<detail::OpType>::add(other), "^dps: two different types are named .*Widen.*; rename one\n");
}

TEST(Graph, BuiltAtRunTimeInALoop) {
  Application app(ApplicationOptions{.nodes = 2, .workers = 2});
  auto workers = app.threads<Stateless>("workers", 2);
  // Sum [0, 10), then [0, 10 * count) ... : the chain grows with a run-time parameter.
  Chain<Range, Partial> chain = op<AddRange<>>(workers);
  for (int level = 0; level < 4; ++level) chain = chain >> op<Widen>(workers) >> op<AddRange<>>(workers);
  auto graph = app.graph(chain);
  EXPECT_EQ(graph.call(Range{0, 10}).get().sum, triangle(10));
  EXPECT_EQ(graph.name(), "graph");
}

TEST(Graph, OperationNamesDefaultToTheirTypes) {
  auto workers = Threads<Stateless>();
  Application app(ApplicationOptions{.nodes = 1, .workers = 1});
  workers = app.threads<Stateless>("workers", 1);
  auto chain = op<AddRange<>>(workers);
  EXPECT_NE(chain.vertices()[0]->name.find("Add"), std::string::npos);
  EXPECT_EQ(op<AddRange<>>(workers).named("sum").vertices()[0]->name, "sum");
}

}  // namespace
}  // namespace dps::test
