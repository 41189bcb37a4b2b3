// An outside project: includes only <dps/dps.hpp> and links dps::dps (node processes over TCP), or,
// built again with DPS_SIM, dps::sim (the same program in the simulator).
#include <dps/dps.hpp>

#include <cstdio>
#include <exception>

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
  N execute(const N& n) {
    dps::compute(1e-3, [] {});  // under partial direct execution: 1 ms charged
    return n;
  }
};
struct Sum : dps::Merge<N, N> {
  dps::Step execute(N n) {
    while (auto m = co_await next()) n.v += m->v;
    co_await post(n);
  }
};

int main(int argc, char** argv) try {
  dps::Application app(argc, argv);
  auto master = app.threads<dps::Stateless>("master", 1);
  auto workers = app.threads<dps::Stateless>("workers", app.nodes());
  auto graph = app.graph(dps::op<Fan>(master) >> dps::op<Id>(workers) >> dps::op<Sum>(master));
  const long sum = graph.call(N{100}).get().v;
  std::printf("consumer: %ld on %zu nodes, %s\n", sum, app.nodes(), app.simulated() ? "simulated" : "real");
} catch (const std::exception& e) {
  std::fprintf(stderr, "consumer: %s\n", e.what());
  return 1;
}
