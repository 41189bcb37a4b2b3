// The operations of block LU and the graphs they make.
#include "factorization.hpp"

#include "submatrix.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

namespace lu {

namespace {

std::size_t column_route(int column) { return static_cast<std::size_t>(column); }

// Column c's block from row level·r down, or null without data (NOALLOC: the kernels are skipped).
double* rows_at(Column& c, int level) {
  return c.block.allocated() ? c.block.data() + static_cast<std::size_t>(level) * c.r : nullptr;
}

std::string iteration(int level) { return "iteration " + std::to_string(level + 1); }

}  // namespace

const char* name(Variant v) {
  switch (v) {
    case Variant::Basic: return "basic";
    case Variant::Pipelined: return "pipelined";
    case Variant::Owner: return "owner";
  }
  return "?";
}

Variant variant_named(const std::string& text) {
  for (Variant v : {Variant::Basic, Variant::Pipelined, Variant::Owner})
    if (text == name(v)) return v;
  throw std::invalid_argument("--variant expects basic, pipelined or owner, got '" + text + "'");
}

double entry(std::uint64_t seed, MatrixKind kind, int n, int row, int column) {
  if ((kind == MatrixKind::ZeroColumn && column == n / 2) || (kind == MatrixKind::ZeroRow && row == n / 2)) return 0;
  // splitmix64 of the position: every process builds the same matrix without sending it.
  std::uint64_t z = seed * 0x9e3779b97f4a7c15ull + static_cast<std::uint64_t>(column) * static_cast<std::uint64_t>(n) +
                    static_cast<std::uint64_t>(row);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53 - 0.5;
}

namespace {

// ---- filling and gathering ----

struct Scatter : dps::Split<Fill, Fill> {
  dps::Step execute(Fill f) {
    for (int j = 0; j < f.n / f.r; ++j) co_await post(Fill{j, f.n, f.r, f.nodes, f.sub_block, f.seed, f.kind});
  }
};

// Column block `block` of the matrix into `to` (n×r, leading dimension n).
void fill_block(double* to, const Fill& f, int block) {
  for (int j = 0; j < f.r; ++j)
    for (int i = 0; i < f.n; ++i) to[static_cast<std::size_t>(j) * f.n + i] = entry(f.seed, f.kind, f.n, i, block * f.r + j);
}

struct Generate : dps::Leaf<Fill, Ready, Column> {
  Ready execute(const Fill& f) {
    Column& c = thread();
    c.index = f.column;
    c.n = f.n;
    c.r = f.r;
    c.nodes = f.nodes;
    c.sub_block = f.sub_block;
    c.flipped = f.column;  // its own panel's interchanges: dgetrf applies them
    c.block = dps::LargeArray<double>::uninitialized(static_cast<std::size_t>(f.n) * f.r);  // filled below
    c.pivots = dps::LargeArray<int>(static_cast<std::size_t>(f.r));
    if (c.block.allocated()) fill_block(c.block.data(), f, f.column);
    return {f.column, 1};
  }
};

// Closes a call: counts what it collected; the last level's end ends its iteration.
template <class In>
struct Close : dps::Merge<In, Finished> {
  dps::Step execute(In first) {
    long count = 1;
    while (auto more = co_await this->next()) ++count;
    if (first.level >= 0) this->end_phase(iteration(first.level));
    co_await this->post(Finished{count});
  }
};

// Ready for each column from the segment's first level on: the start of a call on the columns.
struct Begin : dps::Split<Start, Ready> {
  dps::Step execute(Start s) {
    for (int j = s.first; j < s.columns; ++j) co_await post(Ready{j, 1});
  }
};

struct ColumnCopy {
  int index = 0, n = 0, r = 0;
  dps::LargeArray<double> block;
  dps::LargeArray<int> pivots;
  template <class A>
  void serialize(A& a) {
    a(index, n, r, block, pivots);
  }
};

struct Fetch : dps::Leaf<Ready, ColumnCopy, Column> {
  ColumnCopy execute(const Ready&) {
    const Column& c = thread();
    return {c.index, c.n, c.r, c.block, c.pivots};
  }
};

struct Assemble : dps::Merge<ColumnCopy, Factored> {
  dps::Step execute(ColumnCopy first) {
    const int n = first.n;
    Factored f{n, dps::LargeArray<double>(static_cast<std::size_t>(n) * n), dps::LargeArray<int>(n)};
    auto place = [&](const ColumnCopy& c) {
      const std::size_t offset = static_cast<std::size_t>(c.index) * c.r * n;
      if (f.lu.allocated() && c.block.allocated()) std::copy_n(c.block.data(), c.block.size(), f.lu.data() + offset);
      for (int t = 0; t < c.r && f.pivots.allocated() && c.pivots.allocated(); ++t)
        f.pivots[static_cast<std::size_t>(c.index * c.r + t)] = c.index * c.r + c.pivots[t];
    };
    place(first);
    while (auto c = co_await next()) place(*c);
    co_await post(std::move(f));
  }
};

// ---- one level of the factorization ----

// Level `level`'s row interchanges in the L of the factored column c, in level order: one that
// arrives before an earlier level's waits for it.
void flip(Column& c, int level, const dps::LargeArray<int>& pivots) {
  if (level != c.flipped + 1) {
    c.waiting_flips.emplace(level, pivots);
    return;
  }
  const auto apply = [&](int at, const dps::LargeArray<int>& p) {
    kernels().swap(c.r, rows_at(c, at), c.n, p.data(), c.r);
    c.flipped = at;
  };
  apply(level, pivots);
  for (auto next = c.waiting_flips.find(c.flipped + 1); next != c.waiting_flips.end();
       next = c.waiting_flips.find(c.flipped + 1)) {
    apply(next->first, next->second);
    c.waiting_flips.erase(next);
  }
}

// Step 1 on column c: LU of panel `level` in place (its pivots in c.pivots); throws on a zero pivot.
void factor_panel(Column& c, int level) {
  const std::size_t top = static_cast<std::size_t>(level) * c.r;
  const int singular = kernels().factor(c.n - level * c.r, c.r, rows_at(c, level), c.n, c.pivots.data());
  if (singular)
    throw std::runtime_error("the matrix is singular: U(" + std::to_string(top + singular) + "," +
                             std::to_string(top + singular) + ") is exactly zero");
}

// The Factor of Schaeli, Gerlach & Hersch ("A simulator for adaptive parallel applications", §5.1): LU of panel `level`
// as soon as its column is up to date; then a Panel with L11 for every later column as it becomes up to date, and the
// pivots for every earlier one (all at the end when not pipelined).
template <bool kPipelined>
struct Factor : dps::Stream<Ready, Panel, Column> {
  dps::Step execute(Ready first) {
    Column& c = thread();
    const int level = c.index, columns = c.n / c.r, r = c.r;
    std::vector<int> arrived(static_cast<std::size_t>(columns), 0);
    std::vector<int> ready;  // columns up to date, in the order they became so
    const auto arrive = [&](const Ready& x) {
      if (x.of > 0 && ++arrived[static_cast<std::size_t>(x.column)] == x.of) ready.push_back(x.column);
    };
    arrive(first);
    const auto previous_done = [&] {  // every update of the previous level is in: it ends
      if (first.level >= 0) end_phase(iteration(first.level));
    };
    if constexpr (!kPipelined) {
      while (auto x = co_await next()) arrive(*x);
      previous_done();
    }
    bool factored = false, more = kPipelined;
    std::size_t sent = 0;
    for (;;) {
      if (!factored && std::find(ready.begin(), ready.end(), level) != ready.end()) {
        begin_phase(iteration(level));
        factor_panel(c, level);
        factored = true;
        for (int j = 0; j < level; ++j) {  // row interchanges in the earlier columns' L
          Panel flip{level, j, true, c.pivots, {}};
          co_await post(std::move(flip));
        }
      }
      while (factored && sent < ready.size()) {
        const int j = ready[sent++];
        if (j == level) continue;
        Panel panel{level, j, false, c.pivots, submatrix(c.block, c.n, level * r, 0, r, r)};
        co_await post(std::move(panel));
      }
      if (!more) break;
      auto x = co_await next();
      if (!x) {
        more = false;
        previous_done();
        continue;
      }
      arrive(*x);
    }
  }
};

struct Solve : dps::Leaf<Panel, Solved, Column> {
  Solved execute(const Panel& p) {
    Column& c = thread();
    const int r = c.r;
    if (p.flip_only) {
      flip(c, p.level, p.pivots);
      return {p.level, p.column, {}};
    }
    double* top = rows_at(c, p.level);
    kernels().swap(r, top, c.n, p.pivots.data(), r);
    kernels().solve(r, r, p.l11.data(), r, top, c.n);
    return {p.level, p.column, submatrix(c.block, c.n, p.level * r, 0, r, r)};
  }
};

template <bool kPipelined>
struct Distribute : dps::Stream<Solved, Job, Column> {
  dps::Step execute(Solved first) {
    Column& c = thread();
    const int level = c.index, columns = c.n / c.r, r = c.r;
    // L21's r×r blocks, copied once from the panel: each job takes a copy.
    std::vector<dps::LargeArray<double>> l21;
    for (int i = level + 1; i < columns; ++i) l21.push_back(submatrix(c.block, c.n, i * r, 0, r, r));
    std::vector<Solved> waiting;
    waiting.push_back(std::move(first));
    if constexpr (!kPipelined)
      while (auto s = co_await next()) waiting.push_back(std::move(*s));
    for (;;) {
      for (Solved& s : waiting) {
        if (s.t12.size() == 0) continue;  // a flip: nothing to multiply
        for (int i = level + 1; i < columns; ++i) {
          // The last job takes T12 itself: it is not needed after it.
          dps::LargeArray<double> t12 = i + 1 < columns ? copy_of(s.t12, r) : std::move(s.t12);
          Job job{{level, i, s.column}, r, c.sub_block, copy_of(l21[static_cast<std::size_t>(i - level - 1)], r), std::move(t12)};
          co_await post(std::move(job));
        }
      }
      waiting.clear();
      if constexpr (!kPipelined) break;
      auto s = co_await next();
      if (!s) break;
      waiting.push_back(std::move(*s));
    }
  }
};

struct Subtract : dps::Leaf<Product, Ready, Column> {
  Ready execute(const Product& p) {
    Column& c = thread();
    double* target = rows_at(c, p.block.row);
    kernels().subtract(c.r, p.data.data(), target, c.n);
    return {p.block.column, c.n / c.r - p.block.level - 1, p.block.level};
  }
};

// ---- the owner variant: a stripe of columns per node ----

// Node p's column blocks of K: p, p + nodes, ...; the first of them past column j.
int blocks_of(int node, int nodes, int columns) { return (columns - node + nodes - 1) / nodes; }
int first_after(int node, int nodes, int column) { return column < node ? 0 : (column - node) / nodes + 1; }
std::size_t node_route(int node) { return static_cast<std::size_t>(node); }

// Block k of the stripe from row level·r down, or null without data (NOALLOC).
double* stripe_rows(Stripe& s, int k, int level) {
  return s.blocks.allocated()
             ? s.blocks.data() + static_cast<std::size_t>(k) * s.r * s.n + static_cast<std::size_t>(level) * s.r
             : nullptr;
}

// Panel `level` (a block of this stripe) as it stands, to share.
std::shared_ptr<const PanelData> panel_of(const Stripe& s, int level) {
  const int k = level / s.nodes;
  auto p = std::make_shared<PanelData>();
  p->level = level;
  p->rows = s.n - level * s.r;
  p->r = s.r;
  p->lu = submatrix(s.blocks, s.n, level * s.r, k * s.r, p->rows, s.r);
  p->pivots = dps::LargeArray<int>(static_cast<std::size_t>(s.r));
  if (p->pivots.allocated() && s.pivots.allocated())
    std::copy_n(s.pivots.data() + static_cast<std::size_t>(k) * s.r, s.r, p->pivots.data());
  return p;
}

// Step 1 on the stripe: LU of panel `level` in place; throws on a zero pivot.
void factor_panel(Stripe& s, int level) {
  const int k = level / s.nodes;
  int* ipiv = s.pivots.allocated() ? s.pivots.data() + static_cast<std::size_t>(k) * s.r : nullptr;
  const int singular = kernels().factor(s.n - level * s.r, s.r, stripe_rows(s, k, level), s.n, ipiv);
  if (singular) {
    const long top = static_cast<long>(level) * s.r + singular;
    throw std::runtime_error("the matrix is singular: U(" + std::to_string(top) + "," + std::to_string(top) +
                             ") is exactly zero");
  }
  s.factored = level;
}

// Level `level`'s pivots, for the interchanges in the L of the stripe's earlier blocks. Once every
// level's have come, each block takes its own in one dlaswp: one pass over it, not one per level.
void keep_pivots(Stripe& s, int level, const dps::LargeArray<int>& pivots) {
  if (level <= s.node) return;  // no block of this stripe is factored yet
  s.flips.emplace(level, pivots);
  const int columns = s.n / s.r;
  if (static_cast<int>(s.flips.size()) < columns - 1 - s.node) return;
  std::vector<int> ipiv;  // relative to the first row it applies to, 1-based
  for (int k = 0; k < s.count; ++k) {
    const int j = s.node + k * s.nodes;
    if (j >= columns - 1) break;
    const int rows = (columns - 1 - j) * s.r;
    if (s.blocks.allocated()) {
      ipiv.resize(static_cast<std::size_t>(rows));
      for (int at = j + 1; at < columns; ++at) {
        const dps::LargeArray<int>& p = s.flips.at(at);
        for (int t = 0; t < s.r; ++t)
          ipiv[static_cast<std::size_t>((at - j - 1) * s.r + t)] = (at - j - 1) * s.r + p[static_cast<std::size_t>(t)];
      }
    }
    kernels().swap(s.r, stripe_rows(s, k, j + 1), s.n, ipiv.data(), rows);
  }
  s.flips.clear();
}

// The start of a segment: every stripe is up to date; the one of its first panel factors it, unless
// the previous segment's lookahead did.
struct Prepare : dps::Leaf<Progress, Progress, Stripe> {
  Progress execute(Progress x) {
    Stripe& s = thread();
    const int first = x.level + 1;
    if (first % s.nodes == s.node) {
      if (s.factored < first) factor_panel(s, first);
      x.next = panel_of(s, first);
    }
    return x;
  }
};

// Level l, on the relay of column l's node, urgent: once panel l is factored (it comes with the
// lookahead's Progress), a StripeShare for each stripe whose later blocks are up to date; the
// stripe of column l+1 gets that block first and alone. Stripes with no later block get the pivots.
struct ShareFactor : dps::Stream<Progress, StripeShare> {
  dps::Step execute(Progress first) {
    const int level = first.level + 1, nodes = first.nodes, columns = first.columns;
    std::vector<char> ready(static_cast<std::size_t>(nodes), 0), served(ready);
    std::shared_ptr<const PanelData> panel;
    const auto arrive = [&](Progress& x) {
      if (x.next) panel = std::move(x.next);
      if (x.rest) ready[static_cast<std::size_t>(x.node)] = 1;
    };
    arrive(first);
    bool begun = false;
    for (bool more = true;;) {
      if (panel) {
        if (!begun) begin_phase(iteration(level));
        begun = true;
        for (int q = 0; q < nodes; ++q) {
          const auto at = static_cast<std::size_t>(q);
          const int from = first_after(q, nodes, level), count = blocks_of(q, nodes, columns);
          if (served[at] || (from < count && !ready[at])) continue;
          served[at] = 1;
          int rest = from;
          if (from < count && (level + 1) % nodes == q) {
            StripeShare next{q, from, from + 1, true, panel};
            co_await post(std::move(next));
            rest = from + 1;
          }
          if (rest < count || from == count) {
            StripeShare others{q, rest, count, false, panel};
            co_await post(std::move(others));
          }
        }
      }
      if (!more) break;
      auto x = co_await next();
      if (!x) {
        if (!first.opening) end_phase(iteration(first.level));
        more = false;
        continue;
      }
      arrive(*x);
    }
  }
};

// Steps 2 and 3 on a stripe's blocks [first, last): interchanges, T12 = L11⁻¹·A12 and B -= L21·T12,
// one call each; for the lookahead block, then the LU of its panel (step 1 of the next level).
struct UpdateStripe : dps::Leaf<StripeShare, Progress, Stripe> {
  Progress execute(const StripeShare& x) {
    Stripe& s = thread();
    const PanelData& p = *x.panel;
    const int r = s.r, width = (x.last - x.first) * r, below = p.rows - r;
    Progress out{s.node, p.level, !x.lookahead, false, s.nodes, s.n / s.r, nullptr};
    if (width > 0) {
      double* top = stripe_rows(s, x.first, p.level);
      kernels().swap(width, top, s.n, p.pivots.data(), r);
      kernels().solve(r, width, p.lu.data(), p.rows, top, s.n);
      const double* l21 = p.lu.allocated() ? p.lu.data() + r : nullptr;
      if (below > 0) kernels().update(below, width, r, l21, p.rows, top, s.n, top ? top + r : nullptr, s.n);
    }
    if (x.lookahead) {
      factor_panel(s, p.level + 1);
      out.next = panel_of(s, p.level + 1);
    }
    keep_pivots(s, p.level, p.pivots);
    return out;
  }
};

struct BeginStripes : dps::Split<Start, Progress> {
  dps::Step execute(Start s) {
    for (int q = 0; q < s.nodes; ++q) {
      Progress x{q, s.first - 1, true, true, s.nodes, s.columns, nullptr};
      co_await post(std::move(x));
    }
  }
};

struct ScatterStripes : dps::Split<Fill, Fill> {
  dps::Step execute(Fill f) {
    for (int q = 0; q < f.nodes; ++q) co_await post(Fill{q, f.n, f.r, f.nodes, f.sub_block, f.seed, f.kind});
  }
};

struct GenerateStripe : dps::Leaf<Fill, Ready, Stripe> {
  Ready execute(const Fill& f) {
    Stripe& s = thread();
    s.node = f.column;
    s.nodes = f.nodes;
    s.n = f.n;
    s.r = f.r;
    s.count = blocks_of(s.node, s.nodes, f.n / f.r);
    s.factored = -1;
    s.flips.clear();
    s.blocks = dps::LargeArray<double>::uninitialized(static_cast<std::size_t>(f.n) * f.r * s.count);  // filled below
    s.pivots = dps::LargeArray<int>(static_cast<std::size_t>(f.r) * s.count);
    for (int k = 0; k < s.count && s.blocks.allocated(); ++k)
      fill_block(s.blocks.data() + static_cast<std::size_t>(k) * f.r * f.n, f, s.node + k * s.nodes);
    return {s.node, 1};
  }
};

struct StripeCopy {
  int node = 0, nodes = 1, n = 0, r = 0, count = 0;
  dps::LargeArray<double> blocks;
  dps::LargeArray<int> pivots;
  template <class A>
  void serialize(A& a) {
    a(node, nodes, n, r, count, blocks, pivots);
  }
};

struct FetchStripe : dps::Leaf<Progress, StripeCopy, Stripe> {
  StripeCopy execute(const Progress&) {
    const Stripe& s = thread();
    return {s.node, s.nodes, s.n, s.r, s.count, s.blocks, s.pivots};
  }
};

struct AssembleStripes : dps::Merge<StripeCopy, Factored> {
  dps::Step execute(StripeCopy first) {
    const int n = first.n;
    Factored f{n, dps::LargeArray<double>(static_cast<std::size_t>(n) * n), dps::LargeArray<int>(n)};
    auto place = [&](const StripeCopy& s) {
      for (int k = 0; k < s.count; ++k) {
        const int j = s.node + k * s.nodes;
        if (f.lu.allocated() && s.blocks.allocated())
          std::copy_n(s.blocks.data() + static_cast<std::size_t>(k) * s.r * n, static_cast<std::size_t>(s.r) * n,
                      f.lu.data() + static_cast<std::size_t>(j) * s.r * n);
        for (int t = 0; t < s.r && f.pivots.allocated() && s.pivots.allocated(); ++t)
          f.pivots[static_cast<std::size_t>(j * s.r + t)] = j * s.r + s.pivots[static_cast<std::size_t>(k * s.r + t)];
      }
    };
    place(first);
    while (auto s = co_await next()) place(*s);
    co_await post(std::move(f));
  }
};

// The graph of Schaeli et al. (§5.1): Factor >> Solve >> Distribute >> Multiply >> Subtract per level.
template <bool kPipelined>
dps::Chain<Start, Finished> blocks_segment(const Collections& t, const SegmentPlan& plan) {
  const auto to_solve = [](const Panel& p, std::size_t) { return column_route(p.column); };
  const auto to_subtract = [](const Product& p, std::size_t) { return column_route(p.block.column); };
  dps::Chain<Start, Ready> chain = dps::op<Begin>(t.master, dps::to(0));
  for (int level = plan.first; level < plan.last; ++level) {
    const auto at_panel = dps::to(static_cast<std::size_t>(level));
    const auto factor = dps::op<Factor<kPipelined>>(t.columns, at_panel).named("lu");
    const auto solve = dps::op<Solve>(t.columns, to_solve).named("trsm");
    if (level == plan.columns - 1)  // the last panel: only row interchanges follow
      return chain >> factor >> solve >> dps::op<Close<Solved>>(t.master, dps::to(0));
    auto distribute = dps::op<Distribute<kPipelined>>(t.columns, at_panel).named("distribute");
    if (plan.window > 0) distribute = distribute.window(static_cast<std::uint32_t>(plan.window));
    chain = chain >> factor >> solve >> distribute >> multiplication(t.multipliers, plan.sub_block) >>
            dps::op<Subtract>(t.columns, to_subtract).named("subtract");
  }
  return chain >> dps::op<Close<Ready>>(t.master, dps::to(0));
}

// The owner variant: Prepare, then ShareFactor >> UpdateStripe per level. ShareFactor is the
// critical path: urgent, it runs before the updates waiting on its node.
dps::Chain<Start, Finished> owner_segment(const Collections& t, const SegmentPlan& plan) {
  const auto to_stripe = [](const Progress& x, std::size_t) { return node_route(x.node); };
  const auto share_to_stripe = [](const StripeShare& x, std::size_t) { return node_route(x.node); };
  dps::Chain<Start, Progress> chain =
      dps::op<BeginStripes>(t.master, dps::to(0)) >> dps::op<Prepare>(t.stripes, to_stripe).named("prepare");
  const auto nodes = t.relays.size();
  for (int level = plan.first; level < plan.last; ++level) {
    auto factor = dps::op<ShareFactor>(t.relays, dps::to(static_cast<std::size_t>(level) % nodes)).named("lu").urgent();
    if (plan.window > 0) factor = factor.window(static_cast<std::uint32_t>(plan.window));
    chain = chain >> factor >> dps::op<UpdateStripe>(t.stripes, share_to_stripe).named("update");
  }
  return chain >> dps::op<Close<Progress>>(t.master, dps::to(0));
}

}  // namespace

dps::Chain<Start, Finished> segment_graph(const Collections& threads, const SegmentPlan& plan) {
  if (plan.first < 0 || plan.first >= plan.last || plan.last > plan.columns)
    throw std::invalid_argument("a segment of levels [" + std::to_string(plan.first) + ", " + std::to_string(plan.last) +
                                ") of " + std::to_string(plan.columns));
  switch (plan.variant) {
    case Variant::Basic: return blocks_segment<false>(threads, plan);
    case Variant::Pipelined: return blocks_segment<true>(threads, plan);
    case Variant::Owner: return owner_segment(threads, plan);
  }
  throw std::logic_error("unknown LU variant");
}

dps::Chain<Fill, Finished> fill_graph(const Columns& columns, const Master& master) {
  const auto to_column = [](const Fill& f, std::size_t) { return column_route(f.column); };
  return dps::op<Scatter>(master, dps::to(0)) >> dps::op<Generate>(columns, to_column).named("generate") >>
         dps::op<Close<Ready>>(master, dps::to(0));
}

dps::Chain<Fill, Finished> fill_graph(const Stripes& stripes, const Master& master) {
  const auto to_stripe = [](const Fill& f, std::size_t) { return node_route(f.column); };
  return dps::op<ScatterStripes>(master, dps::to(0)) >> dps::op<GenerateStripe>(stripes, to_stripe).named("generate") >>
         dps::op<Close<Ready>>(master, dps::to(0));
}

dps::Chain<Start, Factored> gather_graph(const Stripes& stripes, const Master& master) {
  const auto to_stripe = [](const Progress& x, std::size_t) { return node_route(x.node); };
  return dps::op<BeginStripes>(master, dps::to(0)) >> dps::op<FetchStripe>(stripes, to_stripe).named("gather") >>
         dps::op<AssembleStripes>(master, dps::to(0));
}

dps::Chain<Start, Factored> gather_graph(const Columns& columns, const Master& master) {
  const auto to_column = [](const Ready& x, std::size_t) { return column_route(x.column); };
  return dps::op<Begin>(master, dps::to(0)) >> dps::op<Fetch>(columns, to_column).named("gather") >>
         dps::op<Assemble>(master, dps::to(0));
}

}  // namespace lu
