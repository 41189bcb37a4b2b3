// An outside project: includes the installed headers and links dps::dps.
#include <dps/dps.hpp>

#include <cstdio>

struct N {
  long v;
  template <class A>
  void serialize(A& a) {
    a(v);
  }
};
struct Fan : dps::Split<N, N> {
  dps::Step execute(N n) {
    for (long i = 0; i < n.v; ++i) co_await post(N{i});
  }
};
struct Id : dps::Leaf<N, N> {
  N execute(const N& n) { return n; }
};
struct Sum : dps::Merge<N, N> {
  dps::Step execute(N n) {
    while (auto m = co_await next()) n.v += m->v;
    co_await post(n);
  }
};

int main() {
  dps::Application app(dps::ApplicationOptions{.nodes = 2, .workers = 2});
  auto workers = app.threads<dps::Stateless>("workers", 2);
  auto graph = app.graph(dps::op<Fan>(workers) >> dps::op<Id>(workers) >> dps::op<Sum>(workers));
  std::printf("consumer: %ld\n", graph.call(N{100}).get().v);
}
