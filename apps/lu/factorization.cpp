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

struct Generate : dps::Leaf<Fill, Ready, Column> {
  Ready execute(const Fill& f) {
    Column& c = thread();
    c.index = f.column;
    c.n = f.n;
    c.r = f.r;
    c.nodes = f.nodes;
    c.sub_block = f.sub_block;
    c.flipped = f.column;  // its own panel's interchanges: dgetrf applies them
    c.block = dps::LargeArray<double>(static_cast<std::size_t>(f.n) * f.r);
    c.pivots = dps::LargeArray<int>(static_cast<std::size_t>(f.r));
    if (c.block.allocated())
      for (int j = 0; j < f.r; ++j)
        for (int i = 0; i < f.n; ++i)
          c.block[static_cast<std::size_t>(j) * f.n + i] = entry(f.seed, f.kind, f.n, i, f.column * f.r + j);
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

// Seed 004's Factor: LU of panel `level` as soon as its column is up to date; then a Panel with
// L11 for every later column as it becomes up to date, and the pivots for every earlier one (all
// at the end when not pipelined).
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

// ---- the owner variant ----

struct BeginNodes : dps::Split<Start, NodeReady> {
  dps::Step execute(Start s) {
    for (int p = 0; p < s.nodes; ++p) {
      NodeReady ready{p, -1, {}};
      for (int j = s.first; j < s.columns; ++j)
        if (j % s.nodes == p) ready.columns.push_back(j);
      if (!ready.columns.empty()) co_await post(std::move(ready));
    }
  }
};

// The factored panel `level` of column c, to share.
std::shared_ptr<PanelData> make_panel(const Column& c, int level) {
  auto panel = std::make_shared<PanelData>();
  PanelData& p = *panel;
  p.level = level;
  p.rows = c.n - level * c.r;
  p.r = c.r;
  p.lu = submatrix(c.block, c.n, level * c.r, 0, p.rows, c.r);
  p.pivots = c.pivots;
  return panel;
}

// LU of panel `level` once its column is up to date; then, per relay, a Share of the panel with
// that node's later columns as they become up to date (column level+1 first and alone: it gates
// the next level) and the node's earlier columns to interchange rows in: with the first other
// later columns, or at once when it has none.
struct FactorShares : dps::Stream<NodeReady, Share, Column> {
  dps::Step execute(NodeReady first) {
    Column& c = thread();
    const int level = c.index, columns = c.n / c.r, nodes = c.nodes, previous = first.level;
    std::vector<NodeReady> waiting;  // up to date, not yet shared
    waiting.push_back(std::move(first));
    std::vector<bool> flipped(static_cast<std::size_t>(nodes), false);
    const auto earlier = [&](int p) {  // the node's columns before the panel, the first time asked
      std::vector<int> out;
      if (!flipped[static_cast<std::size_t>(p)])
        for (int j = p; j < level; j += nodes) out.push_back(j);
      flipped[static_cast<std::size_t>(p)] = true;
      return out;
    };
    std::shared_ptr<PanelData> panel;
    for (bool more = true;;) {
      const auto has_panel = [&](const NodeReady& x) {
        return std::find(x.columns.begin(), x.columns.end(), level) != x.columns.end();
      };
      if (!panel && std::any_of(waiting.begin(), waiting.end(), has_panel)) {
        begin_phase(iteration(level));
        factor_panel(c, level);
        panel = make_panel(c, level);
        for (int p = 0; p < nodes; ++p) {  // nodes with no later column past level+1: interchanges now
          bool rest = false;
          for (int j = level + 2; j < columns && !rest; ++j) rest = j % nodes == p;
          if (rest) continue;
          Share flips{p, {}, earlier(p), panel};
          if (!flips.earlier.empty()) co_await post(std::move(flips));
        }
      }
      if (panel) {
        for (const NodeReady& x : waiting) {
          std::vector<int> later;
          for (const int j : x.columns)
            if (j == level + 1) {
              Share next{x.node, {j}, {}, panel};
              co_await post(std::move(next));
            } else if (j > level) {
              later.push_back(j);
            }
          if (!later.empty()) {
            Share rest{x.node, std::move(later), earlier(x.node), panel};
            co_await post(std::move(rest));
          }
        }
        waiting.clear();
      }
      if (!more) break;
      auto x = co_await next();
      if (!x) {
        if (previous >= 0) end_phase(iteration(previous));
        more = false;
        continue;
      }
      waiting.push_back(std::move(*x));
    }
  }
};

// On relay p: the Share's columns, each an Update (they are on this node: the panel is not copied).
struct Dispatch : dps::Split<Share, Update> {
  dps::Step execute(Share s) {
    for (const int j : s.later) {
      Update u{j, false, s.panel};  // named first: GCC 12 destroys an owning temporary in co_await twice
      co_await post(std::move(u));
    }
    for (const int j : s.earlier) {
      Update u{j, true, s.panel};
      co_await post(std::move(u));
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
    kernels().solve(r, p.l11.data(), r, top, c.n);
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

// The owner variant's row interchanges in the L of the factored column c: kept until every later
// level's have come, then applied in one pass over the block (one dlaswp, where one per level would
// read the whole block each time; they are needed only by the factors gathered at the end).
void flip_at_end(Column& c, int level, const dps::LargeArray<int>& pivots) {
  c.waiting_flips.emplace(level, pivots);
  const int levels = c.n / c.r, first = c.flipped + 1;
  if (static_cast<int>(c.waiting_flips.size()) < levels - first) return;
  const int rows = (levels - first) * c.r;
  std::vector<int> ipiv;  // relative to row first·r, 1-based
  if (c.block.allocated()) {
    ipiv.resize(static_cast<std::size_t>(rows));
    for (const auto& [at, p] : c.waiting_flips)
      for (int k = 0; k < c.r; ++k) ipiv[static_cast<std::size_t>((at - first) * c.r + k)] = (at - first) * c.r + p[k];
  }
  kernels().swap(c.r, rows_at(c, first), c.n, ipiv.data(), rows);
  c.flipped = levels - 1;
  c.waiting_flips.clear();
}

// Steps 2 and 3 on column j: interchanges, T12 = L11⁻¹·A12, B -= L21·T12 in one dgemm.
struct UpdateColumn : dps::Leaf<Update, Ready, Column> {
  Ready execute(const Update& u) {
    Column& c = thread();
    const PanelData& p = *u.panel;
    const int r = c.r, below = p.rows - r, node = c.index % c.nodes;
    if (u.flip_only) {
      flip_at_end(c, p.level, p.pivots);
      return {u.column, 0, p.level, node};  // counts for nothing: the column is done
    }
    double* top = rows_at(c, p.level);
    kernels().swap(r, top, c.n, p.pivots.data(), r);
    kernels().solve(r, p.lu.data(), p.rows, top, c.n);
    const double* l21 = p.lu.allocated() ? p.lu.data() + r : nullptr;
    if (below > 0) kernels().update(below, r, l21, p.rows, top, c.n, top ? top + r : nullptr, c.n);
    return {u.column, 1, p.level, node};
  }
};

// On relay p: the node's columns a Share updated, as one NodeReady.
struct Gather : dps::Merge<Ready, NodeReady> {
  dps::Step execute(Ready first) {
    NodeReady out{first.node, first.level, {}};
    const auto add = [&](const Ready& x) {
      if (x.of > 0) out.columns.push_back(x.column);
    };
    add(first);
    while (auto x = co_await next()) add(*x);
    co_await post(std::move(out));
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

// Seed 004's graph: Factor >> Solve >> Distribute >> Multiply >> Subtract per level.
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

// The owner variant: Factor >> Dispatch >> UpdateColumn >> Gather per level. Factor and Gather are
// the critical path (lookahead): urgent, they run before the updates waiting on their node, which
// would otherwise hold the next panel back until the whole level's updates there were done.
dps::Chain<Start, Finished> owner_segment(const Collections& t, const SegmentPlan& plan) {
  const auto to_relay = [](const Share& s, std::size_t) { return static_cast<std::size_t>(s.node); };
  const auto to_column = [](const Update& u, std::size_t) { return column_route(u.column); };
  const auto back_to_relay = [](const Ready& x, std::size_t) { return static_cast<std::size_t>(x.node); };
  dps::Chain<Start, NodeReady> chain = dps::op<BeginNodes>(t.master, dps::to(0));
  for (int level = plan.first; level < plan.last; ++level) {
    auto factor = dps::op<FactorShares>(t.columns, dps::to(static_cast<std::size_t>(level))).named("lu").urgent();
    if (plan.window > 0) factor = factor.window(static_cast<std::uint32_t>(plan.window));
    chain = chain >> factor >> dps::op<Dispatch>(t.relays, to_relay).named("dispatch") >>
            dps::op<UpdateColumn>(t.columns, to_column).named("update") >>
            dps::op<Gather>(t.relays, back_to_relay).named("gather").urgent();
  }
  return chain >> dps::op<Close<NodeReady>>(t.master, dps::to(0));
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

dps::Chain<Start, Factored> gather_graph(const Columns& columns, const Master& master) {
  const auto to_column = [](const Ready& x, std::size_t) { return column_route(x.column); };
  return dps::op<Begin>(master, dps::to(0)) >> dps::op<Fetch>(columns, to_column).named("gather") >>
         dps::op<Assemble>(master, dps::to(0));
}

}  // namespace lu
