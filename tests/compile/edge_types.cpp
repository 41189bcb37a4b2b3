// Compiled by CTest twice: as is, `>>` joins a leaf producing Partial to one expecting Range and must
// not compile ("edge type mismatch"); with DPS_EDGES_MATCH the types agree and it compiles.
#include <dps/dps.hpp>

struct Range {
  long first, last;
  template <class A>
  void serialize(A& a) {
    a(first, last);
  }
};
struct Partial {
  long sum;
  template <class A>
  void serialize(A& a) {
    a(sum);
  }
};
struct Sum : dps::Leaf<Range, Partial> {
  Partial execute(const Range& r) { return {r.last - r.first}; }
};
struct Again : dps::Leaf<Partial, Range> {
  Range execute(const Partial& p) { return {0, p.sum}; }
};

int main() {
  dps::Application app;
  auto workers = app.threads<dps::Stateless>("workers", 1);
#ifdef DPS_EDGES_MATCH
  auto g = app.graph(dps::op<Sum>(workers) >> dps::op<Again>(workers) >> dps::op<Sum>(workers));
#else
  auto g = app.graph(dps::op<Sum>(workers) >> dps::op<Sum>(workers));
#endif
  return static_cast<int>(g.call(Range{0, 1}).get().sum);
}
