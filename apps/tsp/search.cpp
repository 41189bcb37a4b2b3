// The exact search: subproblems, their expansion, a worker's frontier.
#include "search.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace tsp {

namespace {

// The constraints of a subproblem, rebuilt from its decisions; false when they leave no tour.
bool constraints_of(const Subproblem& s, Constraints& c) {
  for (const Decision& d : s.decisions)
    if (!(d.required ? c.require(d.u, d.v) : c.forbid(d.u, d.v))) return false;
  return true;
}

}  // namespace

std::tuple<Subproblem, SearchSettings, long> Search::root(const Instance& instance, SearchOptions options) {
  const int n = instance.n;
  Subproblem root{{}, std::vector<double>(static_cast<std::size_t>(n)), 0};
  const Bound b = held_karp(instance, Constraints(n), root.penalties,
                            {.iterations = options.root_iterations > 0 ? options.root_iterations : std::max(300, 10 * n)});
  root.bound = b.value;
  return {std::move(root), {options.node_iterations > 0 ? options.node_iterations : std::max(30, n / 2), b.first_step}, b.trees};
}

Search::Expansion Search::expand(const Subproblem& s, long upper_bound) const {
  Constraints c(instance_.n);
  if (Bound{.value = s.bound}.prunes(upper_bound) || !constraints_of(s, c)) return {.pruned = true};
  std::vector<double> pi = s.penalties;  // the root's are already the root bound's
  const Bound b = held_karp(instance_, c, pi,
                            {.iterations = settings_.node_iterations, .first_step = settings_.first_step, .upper_bound = upper_bound});
  if (b.prunes(upper_bound)) return {.pruned = true, .trees = b.trees};
  if (!b.tour.empty()) return {.tour = b.tour, .trees = b.trees};
  if (b.branch.u < 0) throw std::logic_error("a 1-tree that is not a tour has no free edge to branch on");
  Expansion e{.trees = b.trees};
  for (const bool required : {true, false}) {  // the forbidden child last: it is taken first
    Subproblem child{s.decisions, pi, b.value};
    child.decisions.push_back({static_cast<std::int16_t>(b.branch.u), static_cast<std::int16_t>(b.branch.v), required});
    e.children.push_back(std::move(child));
  }
  return e;
}

Frontier::Ran Frontier::run(const Search& search, long trees, long& best, Tour& tour) {
  Ran ran;
  while (ran.trees < trees && !open_.empty()) {
    const Ran one = step(search, best, tour);
    ran.expanded += one.expanded, ran.trees += one.trees, ran.branched += one.branched;
  }
  return ran;
}

Frontier::Ran Frontier::step(const Search& search, long& best, Tour& tour) {
  if (open_.empty()) return {};
  Subproblem s = std::move(open_.back());
  open_.pop_back();
  Search::Expansion e = search.expand(s, best);
  if (!e.tour.empty()) {
    best = tour_length(search.instance(), e.tour);
    tour = std::move(e.tour);
  }
  const long branched = e.children.empty() ? 0 : 1;
  for (Subproblem& child : e.children) open_.push_back(std::move(child));
  return {1, e.trees, branched};
}

std::vector<Subproblem> Frontier::give(std::size_t count) {
  std::vector<Subproblem> given;
  for (; count > 0 && !open_.empty(); --count) {
    given.push_back(std::move(open_.front()));
    open_.pop_front();
  }
  return given;
}

std::vector<Subproblem> Frontier::take_all() { return give(open_.size()); }

Solution solve_serial(const Instance& instance, SearchOptions options) {
  Solution s;
  s.length = std::numeric_limits<long>::max();
  if (options.first_tour) {
    s.tour = initial_tour(instance);
    iterated_local_search(instance, s.tour, 10 * instance.n, 1);
    s.length = tour_length(instance, s.tour);
  }
  auto [root, settings, trees] = Search::root(instance, options);
  const Search search(instance, settings);
  Frontier f;
  f.push(std::move(root));
  while (!f.empty()) s.nodes += f.run(search, 1L << 30, s.length, s.tour).expanded;
  return s;
}

}  // namespace tsp
