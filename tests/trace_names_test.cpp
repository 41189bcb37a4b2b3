// Operation names as a user says them: every qualifier dropped (namespaces, anonymous ones, those of
// template arguments, a template's own when a nested class follows), nothing else touched; old
// traces' qualified names shortened on their steps alone.
#include <dps/trace/names.hpp>
#include <gtest/gtest.h>

namespace dps::trace {
namespace {

TEST(TraceNames, QualifiersAreDroppedWhereverTheyAre) {
  EXPECT_EQ(short_name("lu::(anonymous namespace)::AssembleStripes"), "AssembleStripes");
  EXPECT_EQ(short_name("(anonymous namespace)::Cut"), "Cut");
  EXPECT_EQ(short_name("a::b::c::Deep"), "Deep");
  EXPECT_EQ(short_name("::Global"), "Global");
  EXPECT_EQ(short_name("ns::Foo<int>"), "Foo<int>");
  EXPECT_EQ(short_name("dps::test::SumPartials<dps::test::(anonymous namespace)::Partial>"), "SumPartials<Partial>");
  EXPECT_EQ(short_name("ns::Foo<std::vector<ns2::Bar, std::allocator<ns2::Bar> > >"),
            "Foo<vector<Bar, allocator<Bar> > >");
  EXPECT_EQ(short_name("ns::Pair<a::X, (anonymous namespace)::Y>"), "Pair<X, Y>");
  EXPECT_EQ(short_name("ns::Outer<a::B<int> >::Inner"), "Inner") << "a template's arguments are part of its qualifier";
  EXPECT_EQ(short_name("ns::Call<void (*)(ns::A, int)>"), "Call<void (*)(A, int)>");
  EXPECT_EQ(short_name("ns::Fixed<3ul>"), "Fixed<3ul>");
}

TEST(TraceNames, NamesWithoutQualifiersStayAsTheyAre) {
  for (const char* name : {"gather", "iteration 1", "", "Foo<int>", "with (parentheses)", "trsm"})
    EXPECT_EQ(short_name(name), name);
  EXPECT_EQ(short_name("ends::"), "ends::") << "nothing left: the name as it was";
}

TEST(TraceNames, AnOldTracesOperationsAreShortenedOnTheirStepsAlone) {
  Trace t;
  t.names = {"a::workers", "lu::(anonymous namespace)::Scatter", "x::Foo", "y::Foo", "gather", "Scatter", "p::phase"};
  t.steps.push_back({0, 1, 0, 1, 1, 0, 1});
  t.steps.push_back({0, 1, 0, 2, 1, 1, 2});
  t.steps.push_back({0, 1, 0, 3, 1, 2, 3});
  t.steps.push_back({0, 1, 0, 4, 1, 3, 4});
  t.phases.push_back({6, true, 0});
  shorten_operation_names(t);
  EXPECT_EQ(t.steps[0].operation, 5u) << "'Scatter' is a name already";
  EXPECT_EQ(t.names[t.steps[1].operation], "Foo");
  EXPECT_EQ(t.steps[1].operation, t.steps[2].operation) << "x::Foo and y::Foo are both said Foo";
  EXPECT_EQ(t.steps[3].operation, 4u);
  EXPECT_EQ(t.names.size(), 8u) << "one name added, Foo";
  EXPECT_EQ(t.names[t.steps[0].collection], "a::workers") << "collections keep their names";
  EXPECT_EQ(t.names[t.phases[0].name], "p::phase") << "so do phases";
}

}  // namespace
}  // namespace dps::trace
