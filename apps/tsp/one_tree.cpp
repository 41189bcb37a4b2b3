// Held–Karp bounds: constraints with propagation, minimum 1-trees, Volgenant–Jonker subgradient steps.
#include "one_tree.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tsp {

Constraints::Constraints(int n)
    : n_(n),
      state_(static_cast<std::size_t>(n) * static_cast<std::size_t>(n), State::Free),
      required_(static_cast<std::size_t>(n)),
      open_(static_cast<std::size_t>(n), n - 1),
      end_(static_cast<std::size_t>(n)),
      size_(static_cast<std::size_t>(n), 1) {
  for (int c = 0; c < n; ++c) {
    state_[index(c, c)] = State::Forbidden;
    end_[static_cast<std::size_t>(c)] = c;
  }
}

bool Constraints::require(int u, int v) {
  if (u == v) return false;
  if (at(u, v) != State::Free) return at(u, v) == State::Required;
  const auto U = static_cast<std::size_t>(u), V = static_cast<std::size_t>(v);
  if (required_[U] == 2 || required_[V] == 2) return false;
  // u and v end paths of required edges (a city with fewer than two ends one): joining them either
  // closes a cycle, a whole tour or too early, or makes one path of their far ends a and b.
  const int a = end_[U], b = end_[V];
  const bool closes = a == v;
  if (closes && (size_[U] != n_ || required_edges_ != n_ - 1)) return false;
  set(u, v, State::Required);
  ++required_[U], ++required_[V], ++required_edges_;
  if (!closes) {
    const int cities = size_[U] + size_[V];
    end_[static_cast<std::size_t>(a)] = b, end_[static_cast<std::size_t>(b)] = a;
    size_[static_cast<std::size_t>(a)] = size_[static_cast<std::size_t>(b)] = cities;
    if (cities > 2 && cities < n_ && !forbid(a, b)) return false;  // the edge that would close it early
  }
  return settle(u) && settle(v);
}

bool Constraints::forbid(int u, int v) {
  if (u == v || at(u, v) == State::Forbidden) return true;
  if (at(u, v) == State::Required) return false;
  set(u, v, State::Forbidden);
  --open_[static_cast<std::size_t>(u)], --open_[static_cast<std::size_t>(v)];
  return settle(u) && settle(v);
}

bool Constraints::settle(int city) {
  const auto c = static_cast<std::size_t>(city);
  if (open_[c] < 2) return false;
  if (required_[c] == 2 && open_[c] > 2) {
    for (int w = 0; w < n_; ++w)
      if (at(city, w) == State::Free && !forbid(city, w)) return false;
  } else if (open_[c] == 2 && required_[c] < 2) {
    for (int w = 0; w < n_; ++w)
      if (at(city, w) == State::Free && !require(city, w)) return false;
  }
  return true;
}

bool Bound::prunes(long upper_bound) const {
  return !feasible || std::ceil(value - 1e-6) >= static_cast<double>(upper_bound);
}

namespace {

struct OneTree {
  bool spans = true;
  double cost = 0;  // under the penalties
  std::vector<int> degree{};
  std::vector<Edge> edges{};
};

// The minimum 1-tree holding every required edge and no forbidden one: Prim's tree over cities
// 1..n-1, required edges before any free one, then city 0's required edges and its cheapest free ones.
OneTree one_tree(const Instance& in, const Constraints& c, const std::vector<double>& pi) {
  using State = Constraints::State;
  const int n = in.n;
  const auto N = static_cast<std::size_t>(n);
  OneTree t;
  t.degree.assign(N, 0);
  t.edges.reserve(N);
  const auto weight = [&](int u, int v) { return in.distance(u, v) + pi[static_cast<std::size_t>(u)] + pi[static_cast<std::size_t>(v)]; };
  constexpr int kNone = 2;  // tiers: 0 required, 1 free, 2 no edge
  std::vector<int> tier(N, kNone), from(N, -1);
  std::vector<double> key(N, std::numeric_limits<double>::infinity());
  std::vector<bool> done(N);
  const auto offer = [&](int v, int u) {
    const State s = c.at(u, v);
    if (s == State::Forbidden) return;
    const int k = s == State::Required ? 0 : 1;
    const double w = weight(u, v);
    const auto V = static_cast<std::size_t>(v);
    if (k < tier[V] || (k == tier[V] && w < key[V])) tier[V] = k, key[V] = w, from[V] = u;
  };
  const auto join = [&](int u, int v, double w) {
    t.edges.push_back({u, v});
    ++t.degree[static_cast<std::size_t>(u)], ++t.degree[static_cast<std::size_t>(v)];
    t.cost += w;
  };
  done[1] = true;
  for (int v = 2; v < n; ++v) offer(v, 1);
  for (int added = 1; added < n - 1; ++added) {
    int next = -1;
    for (int v = 2; v < n; ++v) {
      const auto V = static_cast<std::size_t>(v);
      if (done[V] || tier[V] == kNone) continue;
      if (next < 0 || tier[V] < tier[static_cast<std::size_t>(next)] ||
          (tier[V] == tier[static_cast<std::size_t>(next)] && key[V] < key[static_cast<std::size_t>(next)]))
        next = v;
    }
    if (next < 0) return {.spans = false};
    done[static_cast<std::size_t>(next)] = true;
    join(from[static_cast<std::size_t>(next)], next, key[static_cast<std::size_t>(next)]);
    for (int v = 2; v < n; ++v)
      if (!done[static_cast<std::size_t>(v)]) offer(v, next);
  }
  // City 0: its required edges, then its cheapest free ones, two in all.
  std::vector<int> free;
  for (int v = 1; v < n; ++v) {
    if (c.at(0, v) == State::Required) join(0, v, weight(0, v));
    else if (c.at(0, v) == State::Free) free.push_back(v);
  }
  std::sort(free.begin(), free.end(), [&](int a, int b) { return weight(0, a) < weight(0, b); });
  for (std::size_t k = 0; t.degree[0] < 2 && k < free.size(); ++k) join(0, free[k], weight(0, free[k]));
  if (t.degree[0] != 2) return {.spans = false};
  return t;
}

// The cycle a 1-tree whose every city has degree 2 is, from city 0.
Tour cycle_of(const OneTree& t, int n) {
  std::vector<std::vector<int>> next(static_cast<std::size_t>(n));
  for (const Edge& e : t.edges) next[static_cast<std::size_t>(e.u)].push_back(e.v), next[static_cast<std::size_t>(e.v)].push_back(e.u);
  Tour tour{0};
  for (int previous = -1, at = 0; static_cast<int>(tour.size()) < n;) {
    const auto& two = next[static_cast<std::size_t>(at)];
    const int to = two[0] != previous ? two[0] : two[1];
    previous = at, at = to;
    tour.push_back(at);
  }
  return tour;
}

// Volgenant and Jonker's step at step k of m: it falls with a constant second difference from the
// first step to 0 at step m, the first fall three times the last.
double step_at(double first, int k, int m) {
  if (m < 3) return first;
  const double a = k - 1, span = 2.0 * (m - 1) * (m - 2);
  return first * (1 - (3.0 * m - 5) * a / span + a * a / span);
}

}  // namespace

Bound held_karp(const Instance& in, const Constraints& c, std::vector<double>& pi, const BoundOptions& options) {
  const auto N = static_cast<std::size_t>(in.n);
  Bound best{.value = -std::numeric_limits<double>::infinity()};
  OneTree best_tree;
  std::vector<double> best_pi = pi;
  std::vector<int> last(N);
  double first = options.first_step;
  const int m = std::max(1, options.iterations);
  for (int k = 1; k <= m; ++k) {
    OneTree t = one_tree(in, c, pi);
    ++best.trees;
    if (!t.spans) return {.feasible = false, .trees = best.trees};
    double sum = 0;
    for (double p : pi) sum += p;
    const double value = t.cost - 2 * sum;
    if (std::all_of(t.degree.begin(), t.degree.end(), [](int d) { return d == 2; })) {
      best.tour = cycle_of(t, in.n);
      best.value = static_cast<double>(tour_length(in, best.tour));  // = value, exactly
      best.branch = {-1, -1};
      return best;
    }
    const bool better = value > best.value;
    if (better) best.value = value, best_pi = pi;
    if (options.upper_bound > 0 && best.prunes(options.upper_bound)) {
      pi = best_pi;
      return best;  // no branch: the node is done
    }
    if (first <= 0) first = 0.1 * std::abs(value) / in.n;
    const double step = step_at(first, k, m);
    for (std::size_t i = 0; i < N; ++i) {  // towards degree 2: dearer where above, cheaper where below
      const int g = t.degree[i] - 2;
      pi[i] += step * (k == 1 ? g : 0.7 * g + 0.3 * last[i]);
      last[i] = g;
    }
    if (better) best_tree = std::move(t);
  }
  best.first_step = first;
  pi = best_pi;
  // Branch on a free edge of the best 1-tree at its city of highest degree: the one of largest weight.
  int city = 0;
  for (std::size_t i = 1; i < N; ++i)
    if (best_tree.degree[i] > best_tree.degree[static_cast<std::size_t>(city)]) city = static_cast<int>(i);
  double heaviest = -std::numeric_limits<double>::infinity();
  for (const Edge& e : best_tree.edges) {
    if ((e.u != city && e.v != city) || c.at(e.u, e.v) != Constraints::State::Free) continue;
    const double w = in.distance(e.u, e.v) + pi[static_cast<std::size_t>(e.u)] + pi[static_cast<std::size_t>(e.v)];
    if (w > heaviest) heaviest = w, best.branch = e;
  }
  return best;
}

}  // namespace tsp
