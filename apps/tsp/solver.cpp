// The parallel search's operations and graph.
#include "solver.hpp"
#include "median.hpp"

#include <dps/packed_nodes.hpp>

#include <cereal/types/optional.hpp>

#include <algorithm>
#include <chrono>
#include <deque>
#include <iterator>
#include <stdexcept>
#include <string>
#include <tuple>
#include <limits>
#include <optional>

namespace tsp {

namespace {

TreeCost charged_cost;

struct Work {
  std::size_t worker = 0, workers = 0;
  long best = 0, budget = 0;
  bool share = true;
  SearchSettings settings;
  std::vector<Subproblem> given;
  std::size_t give = 0;  // subproblems to hand back for the pool
  template <class A>
  void serialize(A& a) {
    a(worker, workers, best, budget, share, settings, given, give);
  }
};
struct Report {
  std::size_t worker = 0;
  long best = 0;
  Tour tour{};  // when shorter than the best it was given
  long expanded = 0, branched = 0, trees = 0, shared = 0;
  std::size_t open = 0;
  std::vector<Subproblem> donated{};
  template <class A>
  void serialize(A& a) {
    a(worker, best, tour, expanded, branched, trees, shared, open, donated);
  }
};
// What a worker's round posts: the length of each shorter tour it finds, for every other worker, at
// once; at the end its report, for itself. Each note passes the worker it is for, who learns the bound.
struct Note {
  std::size_t from = 0, to = 0;
  long bound = 0;
  std::optional<Report> report;
  template <class A>
  void serialize(A& a) {
    a(from, to, bound, report);
  }
};

// Takes a round's reports in worker order (the search must not depend on their arrival): the best
// tour, what each worker has left, the pool refilled.
void take(Conductor& c, std::vector<Report>& reports) {
  std::sort(reports.begin(), reports.end(), [](const Report& a, const Report& b) { return a.worker < b.worker; });
  for (Report& r : reports) {
    if (r.best < c.progress.best) c.progress.best = r.best, c.progress.tour = std::move(r.tour);
    c.progress.expanded += r.expanded;
    c.progress.branched += r.branched;
    c.progress.trees += r.trees;
    c.progress.shared += r.shared;
    if (r.worker < c.open.size()) c.open[r.worker] = r.open;
    for (Subproblem& s : r.donated) c.pool.push_back(std::move(s));
  }
}

// The next round. Workers with little work are topped up to kShare subproblems from the pool, the
// shallowest first (some are pruned at once: one would often leave a worker idle a whole round); if the pool
// holds fewer than two per worker, each worker given nothing gives back up to half of its own (two at most).
constexpr std::size_t kShare = 4;
std::vector<Work> plan(Conductor& c) {
  const std::size_t workers = c.segment.workers;
  // Little work left (the end of a search): shorter rounds, so that a worker that runs out waits less.
  std::size_t left = c.pool.size();
  for (std::size_t open : c.open) left += open;
  const long budget = left < kShare * workers ? std::max(1L, c.segment.budget / 4) : c.segment.budget;
  std::vector<Work> round(workers);
  for (std::size_t w = 0; w < workers; ++w)
    round[w] = {w, workers, c.progress.best, budget, c.segment.share, c.segment.settings, {}, 0};
  std::size_t next = 0;
  for (std::size_t share = 0; share < kShare; ++share)
    for (std::size_t w = 0; w < workers && next < c.pool.size(); ++w)
      if (c.open[w] == share) {
        round[w].given.push_back(std::move(c.pool[next++]));
        c.open[w] = share + 1;
      }
  c.pool.erase(c.pool.begin(), c.pool.begin() + static_cast<std::ptrdiff_t>(next));
  if (c.pool.size() < 2 * workers)
    for (std::size_t w = 0; w < workers; ++w)
      if (round[w].given.empty()) round[w].give = std::min(c.open[w] / 2, kShare / 2);
  return round;
}

std::string round_name(const Conductor& c) { return "round " + std::to_string(c.segment.first_round + c.round + 1); }

struct Open : dps::Split<Segment, Work, Conductor> {
  dps::Step execute(Segment s) {
    Conductor& c = thread();
    for (Subproblem& h : s.handed) c.pool.push_back(std::move(h));
    c.progress = {.best = s.best, .tour = std::move(s.tour)};  // main passes the best known
    s.handed.clear();
    c.segment = std::move(s);
    c.round = 0;
    begin_phase(round_name(c));
    c.open.assign(c.segment.workers, 0);  // unknown after a resize: whoever has work keeps it
    for (Work& w : plan(c)) co_await post(std::move(w));
  }
};

struct Expand : dps::Split<Work, Note, Worker> {
  dps::Step execute(Work w) {
    Worker& me = thread();  // a thread with a running operation neither moves nor leaves
    for (Subproblem& s : w.given) me.frontier.push(std::move(s));
    me.bound = std::min(me.bound, w.best);
    Report r{.worker = w.worker, .best = w.best};
    const Search search(me.instance, w.settings);
    while (r.trees < w.budget && !me.frontier.empty()) {
      long best = w.share ? me.bound : r.best;
      const Frontier::Ran ran = me.frontier.step(search, best, r.tour);  // for real: it steers the search
      dps::charge(charged_cost.of(ran.trees, me.instance.n));
      r.expanded += ran.expanded, r.branched += ran.branched, r.trees += ran.trees;
      if (best < me.bound) {  // a tour of its own
        r.best = me.bound = best;
        for (std::size_t to = 0; w.share && to < w.workers; ++to)
          if (to != w.worker) {
            Note bound{w.worker, to, best, std::nullopt};
            co_await post(std::move(bound));
            ++r.shared;
          }
      }
      if (w.share) co_await yield();  // the bounds the others found come in here
    }
    r.donated = me.frontier.give(w.give);
    r.open = me.frontier.size();
    Note last{w.worker, w.worker, r.best, std::move(r)};  // named: GCC 12 mishandles an aggregate built inside co_await (README)
    co_await post(std::move(last));
  }
};

struct Deliver : dps::Leaf<Note, Note, Worker> {
  Note execute(Note n) {
    thread().bound = std::min(thread().bound, n.bound);
    return n;
  }
};

// The round's notes all delivered (none is left in flight when the conductor plans): its report.
struct Hand : dps::Merge<Note, Report, Worker> {
  dps::Step execute(Note first) {
    std::optional<Report> report = std::move(first.report);
    while (auto more = co_await next())
      if (more->report) report = std::move(more->report);
    co_await post(std::move(*report));
  }
};

struct Kick {
  std::size_t worker = 0;
  Tour tour;
  int kicks = 0;
  template <class A>
  void serialize(A& a) {
    a(worker, tour, kicks);
  }
};
struct Found {
  std::size_t worker = 0;
  Tour tour;
  long length = 0;
  template <class A>
  void serialize(A& a) {
    a(worker, tour, length);
  }
};

// The root's bound and a first tour, which every worker then improves. Under partial direct
// execution the bound is charged by the model, as the workers' are; the tour heuristics by what they
// took here (they are not modelled).
struct Prepare : dps::Split<Begin, Kick, Conductor> {
  dps::Step execute(Begin b) {
    begin_phase("start");
    const Tour tour = dps::measured([&] { return initial_tour(b.instance); });
    Start& s = thread().start;
    auto [root, settings, trees] = Search::root(b.instance);
    dps::charge(charged_cost.of(trees, b.instance.n));
    s = {.root_bound = root.bound, .settings = settings, .open = {std::move(root)}};
    const int each = b.cold ? 0 : static_cast<int>((static_cast<std::size_t>(b.kicks) + b.workers - 1) / b.workers);
    thread().begin = std::move(b);
    for (std::size_t w = 0; w < thread().begin.workers; ++w) {
      Kick k{w, tour, each};  // named: GCC 12 mishandles an aggregate built inside co_await (README)
      co_await post(std::move(k));
    }
  }
};

struct Improve : dps::Leaf<Kick, Found, Worker> {
  Found execute(Kick k) {
    dps::measured([&] { iterated_local_search(thread().instance, k.tour, k.kicks, static_cast<unsigned>(k.worker) + 1); });
    const long length = tour_length(thread().instance, k.tour);
    return {k.worker, std::move(k.tour), length};
  }
};

// The root split breadth first until every worker can have two subproblems, so that none waits for
// work at the start (at most four per worker expanded: a root whose subtree is small stays whole).
void split(const Begin& b, Start& s) {
  const Search search(b.instance, s.settings);
  std::deque<Subproblem> open(std::make_move_iterator(s.open.begin()), std::make_move_iterator(s.open.end()));
  long trees = 0;
  while (!open.empty() && open.size() < 2 * b.workers && s.expanded < 4 * static_cast<long>(b.workers)) {
    Search::Expansion e = search.expand(open.front(), s.length);
    open.pop_front();
    ++s.expanded;
    s.branched += e.children.empty() ? 0 : 1;
    trees += e.trees;
    if (!e.tour.empty()) s.length = tour_length(b.instance, e.tour), s.tour = std::move(e.tour);
    for (Subproblem& child : e.children) open.push_back(std::move(child));
  }
  dps::charge(charged_cost.of(trees, b.instance.n));
  s.open.assign(std::make_move_iterator(open.begin()), std::make_move_iterator(open.end()));
}

// The shortest tour the workers found (the lowest worker's of equal ones: the same whatever the timing).
struct Best : dps::Merge<Found, Start, Conductor> {
  dps::Step execute(Found best) {
    while (auto more = co_await next())
      if (more->length < best.length || (more->length == best.length && more->worker < best.worker)) best = std::move(*more);
    Conductor& c = thread();
    Start s = std::move(c.start);
    s.length = c.begin.cold ? std::numeric_limits<long>::max() : best.length;
    if (!c.begin.cold) s.tour = std::move(best.tour);
    split(c.begin, s);
    c.begin = {};
    end_phase("start");
    co_await post(std::move(s));
  }
};

struct Next : dps::Stream<Report, Work, Conductor> {
  dps::Step execute(Report first) {
    std::vector<Report> reports{std::move(first)};
    while (auto more = co_await next()) reports.push_back(std::move(*more));
    Conductor& c = thread();
    take(c, reports);
    end_phase(round_name(c));
    ++c.round;
    begin_phase(round_name(c));
    for (Work& w : plan(c)) co_await post(std::move(w));
  }
};

struct Close : dps::Merge<Report, Progress, Conductor> {
  dps::Step execute(Report first) {
    std::vector<Report> reports{std::move(first)};
    while (auto more = co_await next()) reports.push_back(std::move(*more));
    Conductor& c = thread();
    take(c, reports);
    end_phase(round_name(c));
    c.progress.open = c.pool.size();
    for (std::size_t open : c.open) c.progress.open += open;
    Progress p = c.progress;
    co_await post(std::move(p));
  }
};

struct ByWorker {
  std::size_t operator()(const Work& w, std::size_t) const { return w.worker; }
  std::size_t operator()(const Kick& k, std::size_t) const { return k.worker; }
  std::size_t operator()(const Note& n, std::size_t) const { return n.from; }
};
struct ToAddressee {
  std::size_t operator()(const Note& n, std::size_t) const { return n.to; }
};

}  // namespace

void set_tree_cost(TreeCost cost) { charged_cost = cost; }
TreeCost tree_cost() { return charged_cost; }

TreeCost TreeCost::measure(const Instance& instance) {
  // A sample of the search itself, not of the root's unconstrained first steps (which cost some 20 %
  // more a tree): subproblems expanded depth first from the bounded root, as a worker does, for about
  // 30 ms; the median of three samples (what the search meets as the machine runs, not its best).
  using Clock = std::chrono::steady_clock;
  const Tour first = initial_tour(instance);
  auto [root, settings, root_trees] = Search::root(instance);
  const Search search(instance, settings);
  std::vector<double> samples;
  for (int k = 0; k < 3; ++k) {
    Frontier frontier;
    frontier.push(root);
    long length = tour_length(instance, first), trees = 0;
    Tour tour = first;
    const auto start = Clock::now();
    double seconds = 0;
    while (seconds < 0.03 && !frontier.empty()) {
      trees += frontier.step(search, length, tour).trees;
      seconds = std::chrono::duration<double>(Clock::now() - start).count();
    }
    if (trees > 0) samples.push_back(seconds / static_cast<double>(trees));
  }
  const double typical = samples.empty() ? 0 : median(samples);  // a root that is the whole search: nothing to charge but its own
  return {typical / (static_cast<double>(instance.n) * instance.n)};
}

Solver::Solver(dps::Application& app, dps::Threads<Worker> workers, dps::Threads<Conductor> conductor)
    : app_(app),
      workers_(workers),
      conductor_(conductor),
      start_(app.graph(dps::op<Prepare>(conductor) >> dps::op<Improve>(workers, ByWorker{}) >> dps::op<Best>(conductor), "start")) {}

Start Solver::start(const Instance& instance, int kicks, bool cold) {
  return start_.call(Begin{instance, workers_.size(), kicks, cold}).get();
}

Progress Solver::run(const Segment& segment) {
  auto graph = graphs_.find(segment.rounds);
  if (graph == graphs_.end()) {
    const auto round = dps::op<Expand>(workers_, ByWorker{}) >> dps::op<Deliver>(workers_, ToAddressee{}) >>
                       dps::op<Hand>(workers_, ByWorker{});
    auto chain = dps::op<Open>(conductor_) >> round;
    for (long k = 1; k < segment.rounds; ++k) chain = chain >> dps::op<Next>(conductor_) >> round;
    graph = graphs_.emplace(segment.rounds, app_.graph(chain >> dps::op<Close>(conductor_), "search")).first;
  }
  return graph->second.call(segment).get();
}

namespace {

// What a restart needs besides the threads' states (--checkpoint-dir, --restart): the search so far
// and the next segment's start (the best tour, the workers, what removed ones handed on).
struct RestartPoint {
  std::string instance;
  int cities = 0;
  bool cold = false;
  long rounds = 0, explored = 0, branched = 0, shared = 0, first_tour = 0;
  double root_bound = 0;
  Segment segment;
  template <class A>
  void serialize(A& a) {
    a(instance, cities, cold, rounds, explored, branched, shared, first_tour, root_bound, segment);
  }
};

}  // namespace

Result solve(dps::Application& app, const Instance& instance, const SolveOptions& o) {
  // About 15 ms of bounds per round: a 1-tree costs some 4 ns per city² here.
  const long n = instance.n;
  const long budget = o.budget > 0 ? o.budget : std::max(1L, 4'000'000L / (n * n));
  if (o.policy && !o.resizes.empty()) throw std::invalid_argument("--resize and --policy both decide the resizes: give one");
  const std::optional<RestartPoint> restarted = app.restarted<RestartPoint>();  // before the collections
  if (restarted &&
      (restarted->instance != instance.name || restarted->cities != instance.n || restarted->cold != o.cold))
    throw std::invalid_argument("--restart: the checkpoint searches " + restarted->instance +
                                (restarted->cold ? " cold" : "") + ", not " + instance.name + (o.cold ? " cold" : "") +
                                ": give its instance and options");
  auto workers = app.threads<Worker>("workers", 0, [&](std::size_t) { return Worker{instance, {}}; });
  auto conductor = app.threads<Conductor>("conductor", 0);
  conductor.add_on(app.local_node());
  dps::PackedNodes nodes(app, o.per_node);
  const auto place = [&](std::size_t threads) {  // nodes added as the threads need them
    nodes.reserve(threads);
    for (std::size_t i = workers.size(); i < threads; ++i) workers.add_on(nodes.node_of(i));
  };
  place(restarted ? restarted->segment.workers : o.threads);
  Solver solver(app, workers, conductor);
  const double began = app.now();
  Result r;
  Segment segment;
  if (restarted) {  // its workers' frontiers are in their restored states
    const RestartPoint& p = *restarted;
    r = {.tour = p.segment.tour,
         .length = p.segment.best,
         .explored = p.explored,
         .rounds = p.rounds,
         .first_tour = p.first_tour,
         .shared = p.shared,
         .branched = p.branched,
         .root_bound = p.root_bound,
         .restarted_from = p.rounds};
    segment = p.segment;
  } else {
    const Start start = solver.start(instance, o.kicks > 0 ? o.kicks : 10 * instance.n, o.cold);
    r = {.tour = start.tour,
         .length = start.length,
         .explored = start.expanded,
         .first_tour = o.cold ? 0 : start.length,
         .branched = start.branched,
         .root_bound = start.root_bound};
    segment = {o.rounds, 0, budget, o.threads, !o.reproducible, start.settings, start.length, start.tour, start.open};
  }
  double handover = 0;  // the last resize's, in seconds
  const auto resize = [&](std::size_t target) {  // removed workers hand their frontiers to the next segment
    const double resize_began = app.now();
    place(target);
    while (workers.size() > target)
      for (Subproblem& s : workers.remove(workers.size() - 1).get().frontier.take_all())
        segment.handed.push_back(std::move(s));
    nodes.release(workers.size());
    handover = app.now() - resize_began;
    r.resizes.push_back({r.rounds, target, segment.handed.size(), nodes.nodes().size()});
    segment.workers = target;
  };
  if (restarted && o.threads != segment.workers) resize(o.threads);  // restarted on another number of nodes
  for (;;) {
    app.checkpoint(RestartPoint{instance.name, instance.n, o.cold, r.rounds, r.explored, r.branched, r.shared,
                                r.first_tour, r.root_bound, segment});
    const auto point = o.resizes.upper_bound(r.rounds);
    segment.rounds = point == o.resizes.end() ? o.rounds : std::min(o.rounds, point->first - r.rounds);
    segment.first_round = r.rounds;
    const double segment_began = app.now();
    const Progress p = solver.run(segment);
    r.rounds += segment.rounds;
    r.explored += p.expanded;
    r.branched += p.branched;
    r.shared += p.shared;
    segment.best = p.best, segment.tour = p.tour, segment.handed.clear();
    if (p.open == 0) break;
    std::size_t target = segment.workers;
    if (const auto at = o.resizes.find(r.rounds); at != o.resizes.end())
      target = at->second;
    else if (o.policy)
      target = o.policy->decide({.iteration = r.rounds,
                                 .size = segment.workers,
                                 .iteration_seconds = (app.now() - segment_began) * static_cast<double>(budget) /
                                                      static_cast<double>(std::max(1L, p.trees)),
                                 .redistribution_seconds = handover});
    if (target == segment.workers) continue;
    if (target == 0) throw std::logic_error("the resize policy left the search no worker");
    resize(target);
  }
  r.seconds = app.now() - began;
  r.tour = segment.tour, r.length = segment.best;
  check_tour(instance, r.tour);
  if (tour_length(instance, r.tour) != r.length) throw std::logic_error("the tour's length is not the one reported");
  return r;
}

}  // namespace tsp
