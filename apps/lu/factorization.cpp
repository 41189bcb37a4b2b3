// The operations of block LU and the graphs they make.
#include "factorization.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <vector>

namespace lu {

namespace {

Kernels process_kernels{KernelTimes{}};  // zero estimates: only a simulation needs measured ones

// Copies the r×r block at `from` (leading dimension ld) into a new contiguous array; under NOALLOC
// (no data) the array is sized but empty.
dps::LargeArray<double> copy_block(const dps::LargeArray<double>& source, std::size_t offset, int ld, int r) {
  dps::LargeArray<double> block(static_cast<std::size_t>(r) * r);
  if (block.allocated() && source.allocated())
    for (int j = 0; j < r; ++j)
      std::memcpy(block.data() + static_cast<std::size_t>(j) * r, source.data() + offset + static_cast<std::size_t>(j) * ld,
                  sizeof(double) * r);
  return block;
}

std::size_t column_route(int column) { return static_cast<std::size_t>(column); }

std::string iteration(int level) { return "iteration " + std::to_string(level + 1); }

}  // namespace

const Kernels& kernels() { return process_kernels; }

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
void set_kernels(const Kernels& k) { process_kernels = k; }

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
    for (int j = 0; j < f.n / f.r; ++j) co_await post(Fill{j, f.n, f.r, f.seed, f.kind});
  }
};

struct Generate : dps::Leaf<Fill, Ready, Column> {
  Ready execute(const Fill& f) {
    Column& c = thread();
    c.index = f.column;
    c.n = f.n;
    c.r = f.r;
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

struct Ask : dps::Split<Start, Ready> {
  dps::Step execute(Start s) {
    for (int j = 0; j < s.columns; ++j) co_await post(Ready{j, 1});
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

struct Begin : dps::Split<Start, Ready> {
  dps::Step execute(Start s) {
    for (int j = s.first; j < s.columns; ++j) co_await post(Ready{j, 1});
  }
};

// What Factor posts, per variant: a Panel with L11 for seed 004's graph, an Update sharing the
// whole factored panel for the owner variant. Made once the panel is factored.
struct ToSolve {
  using Out = Panel;
  ToSolve(const Column& c, int level) : c_(c), level_(level) {}
  Panel flip(int j) const { return {level_, j, true, c_.pivots, {}}; }
  Panel later(int j) const {
    return {level_, j, false, c_.pivots, copy_block(c_.block, static_cast<std::size_t>(level_) * c_.r, c_.n, c_.r)};
  }

 private:
  const Column& c_;
  int level_;
};

struct ToUpdate {
  using Out = Update;
  ToUpdate(const Column& c, int level) : panel_(std::make_shared<PanelData>()) {
    PanelData& p = *panel_;
    p.level = level;
    p.rows = c.n - level * c.r;
    p.r = c.r;
    p.lu = dps::LargeArray<double>(static_cast<std::size_t>(p.rows) * c.r);
    p.pivots = c.pivots;
    if (p.lu.allocated() && c.block.allocated())
      for (int j = 0; j < c.r; ++j)
        std::memcpy(p.lu.data() + static_cast<std::size_t>(j) * p.rows,
                    c.block.data() + static_cast<std::size_t>(j) * c.n + static_cast<std::size_t>(level) * c.r,
                    sizeof(double) * static_cast<std::size_t>(p.rows));
  }
  Update flip(int j) const { return {panel_->level, j, true, panel_}; }
  Update later(int j) const { return {panel_->level, j, false, panel_}; }

 private:
  std::shared_ptr<PanelData> panel_;
};

// LU of panel `level` as soon as its column is up to date; then what follows it for every earlier
// column at once and every later one as it becomes up to date (all at the end when not pipelined).
template <bool kPipelined, class Posts>
struct Factor : dps::Stream<Ready, typename Posts::Out, Column> {
  dps::Step execute(Ready first) {
    Column& c = this->thread();
    const int level = c.index, columns = c.n / c.r, r = c.r;
    std::vector<int> arrived(static_cast<std::size_t>(columns), 0);
    std::vector<int> ready;  // later columns up to date, in the order they became so
    const auto arrive = [&](const Ready& x) {
      if (x.of > 0 && ++arrived[static_cast<std::size_t>(x.column)] == x.of) ready.push_back(x.column);
    };
    arrive(first);
    const auto previous_done = [&] {  // every update of the previous level is in: it ends
      if (first.level >= 0) this->end_phase(iteration(first.level));
    };
    if constexpr (!kPipelined) {
      while (auto x = co_await this->next()) arrive(*x);
      previous_done();
    }
    std::optional<Posts> posts;
    bool more = kPipelined;
    std::size_t sent = 0;
    for (;;) {
      if (!posts && std::find(ready.begin(), ready.end(), level) != ready.end()) {
        const std::size_t top = static_cast<std::size_t>(level) * r;
        this->begin_phase(iteration(level));
        const int singular = c.block.allocated()
                                 ? kernels().factor(c.n - level * r, r, c.block.data() + top, c.n, c.pivots.data())
                                 : kernels().factor(c.n - level * r, r, nullptr, c.n, nullptr);
        if (singular)
          throw std::runtime_error("the matrix is singular: U(" + std::to_string(top + singular) + "," +
                                   std::to_string(top + singular) + ") is exactly zero");
        posts.emplace(c, level);
        for (int j = 0; j < level; ++j) {  // row interchanges in the earlier columns' L
          auto flip = posts->flip(j);
          co_await this->post(std::move(flip));
        }
      }
      while (posts && sent < ready.size()) {
        const int j = ready[sent++];
        if (j == level) continue;
        auto later = posts->later(j);
        co_await this->post(std::move(later));
      }
      if (!more) break;
      auto x = co_await this->next();
      if (!x) {
        more = false;
        previous_done();
        continue;
      }
      arrive(*x);
    }
  }
};

// The owner variant's step 2 and 3 on column j: interchanges, T12 = L11⁻¹·A12, B -= L21·T12.
struct UpdateColumn : dps::Leaf<Update, Ready, Column> {
  Ready execute(const Update& u) {
    Column& c = thread();
    const PanelData& p = *u.panel;
    const int r = c.r, below = p.rows - r;
    const bool data = c.block.allocated() && p.lu.allocated();
    double* top = data ? c.block.data() + static_cast<std::size_t>(p.level) * r : nullptr;
    kernels().swap(r, top, c.n, p.pivots.data(), r);
    if (u.flip_only) return {u.column, 0, p.level};  // counts for nothing: the column is done
    kernels().solve(r, p.lu.data(), p.rows, top, c.n);
    if (below > 0)
      kernels().update(below, r, data ? p.lu.data() + r : nullptr, p.rows, top, c.n, data ? top + r : nullptr, c.n);
    return {u.column, 1, p.level};
  }
};

struct Solve : dps::Leaf<Panel, Solved, Column> {
  Solved execute(const Panel& p) {
    Column& c = thread();
    const int r = c.r;
    double* top = c.block.allocated() ? c.block.data() + static_cast<std::size_t>(p.level) * r : nullptr;
    kernels().swap(r, top, c.n, p.pivots.data(), r);
    if (p.flip_only) return {p.level, p.column, {}};
    kernels().solve(r, p.l11.data(), r, top, c.n);
    return {p.level, p.column, copy_block(c.block, static_cast<std::size_t>(p.level) * r, c.n, r)};
  }
};

template <bool kPipelined>
struct Distribute : dps::Stream<Solved, Job, Column> {
  dps::Step execute(Solved first) {
    Column& c = thread();
    const int level = c.index, columns = c.n / c.r, r = c.r;
    // L21's r×r blocks, copied once from the panel: each job takes a copy.
    std::vector<dps::LargeArray<double>> l21;
    for (int i = level + 1; i < columns; ++i) l21.push_back(copy_block(c.block, static_cast<std::size_t>(i) * r, c.n, r));
    std::vector<Solved> waiting;
    waiting.push_back(std::move(first));
    if constexpr (!kPipelined)
      while (auto s = co_await next()) waiting.push_back(std::move(*s));
    for (;;) {
      for (Solved& s : waiting) {
        if (s.t12.size() == 0) continue;  // a flip: nothing to multiply
        for (int i = level + 1; i < columns; ++i) {
          Job job{level, i, s.column, r, l21[static_cast<std::size_t>(i - level - 1)], s.t12};
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

struct Multiply : dps::Leaf<Job, Product, Multiplier> {
  Product execute(const Job& j) {
    Product p{j.level, j.row, j.column, dps::LargeArray<double>(j.l21.size())};
    kernels().multiply(j.r, j.l21.data(), j.t12.data(), p.block.data());
    ++thread().jobs;
    return p;
  }
};

struct Subtract : dps::Leaf<Product, Ready, Column> {
  Ready execute(const Product& p) {
    Column& c = thread();
    double* target = c.block.allocated() ? c.block.data() + static_cast<std::size_t>(p.row) * c.r : nullptr;
    kernels().subtract(c.r, p.block.data(), target, c.n);
    return {p.column, c.n / c.r - p.level - 1, p.level};
  }
};

// Seed 004's graph: Factor >> Solve >> Distribute >> Multiply >> Subtract per level.
template <bool kPipelined>
dps::Chain<Start, Finished> blocks_segment(const Columns& columns, const Multipliers& multipliers, const Master& master,
                                           const SegmentPlan& plan) {
  const auto to_solve = [](const Panel& p, std::size_t) { return column_route(p.column); };
  const auto to_subtract = [](const Product& p, std::size_t) { return column_route(p.column); };
  dps::Chain<Start, Ready> chain = dps::op<Begin>(master, dps::to(0));
  for (int level = plan.first; level < plan.last; ++level) {
    const auto at_panel = dps::to(static_cast<std::size_t>(level));
    const auto factor = dps::op<Factor<kPipelined, ToSolve>>(columns, at_panel).named("lu");
    const auto solve = dps::op<Solve>(columns, to_solve).named("trsm");
    if (level == plan.columns - 1)  // the last panel: only row interchanges follow
      return chain >> factor >> solve >> dps::op<Close<Solved>>(master, dps::to(0));
    auto distribute = dps::op<Distribute<kPipelined>>(columns, at_panel).named("distribute");
    if (plan.window > 0) distribute = distribute.window(static_cast<std::uint32_t>(plan.window));
    chain = chain >> factor >> solve >> distribute >> dps::op<Multiply>(multipliers).named("multiply") >>
            dps::op<Subtract>(columns, to_subtract).named("subtract");
  }
  return chain >> dps::op<Close<Ready>>(master, dps::to(0));
}

// The owner variant: Factor >> Update per level.
dps::Chain<Start, Finished> owner_segment(const Columns& columns, const Master& master, const SegmentPlan& plan) {
  const auto to_update = [](const Update& u, std::size_t) { return column_route(u.column); };
  dps::Chain<Start, Ready> chain = dps::op<Begin>(master, dps::to(0));
  for (int level = plan.first; level < plan.last; ++level) {
    auto factor = dps::op<Factor<true, ToUpdate>>(columns, dps::to(static_cast<std::size_t>(level))).named("lu");
    if (plan.window > 0) factor = factor.window(static_cast<std::uint32_t>(plan.window));
    chain = chain >> factor >> dps::op<UpdateColumn>(columns, to_update).named("update");
  }
  return chain >> dps::op<Close<Ready>>(master, dps::to(0));
}

}  // namespace

dps::Chain<Start, Finished> segment_graph(const Columns& columns, const Multipliers& multipliers, const Master& master,
                                          const SegmentPlan& plan) {
  if (plan.first < 0 || plan.first >= plan.last || plan.last > plan.columns)
    throw std::invalid_argument("a segment of levels [" + std::to_string(plan.first) + ", " + std::to_string(plan.last) +
                                ") of " + std::to_string(plan.columns));
  switch (plan.variant) {
    case Variant::Basic: return blocks_segment<false>(columns, multipliers, master, plan);
    case Variant::Pipelined: return blocks_segment<true>(columns, multipliers, master, plan);
    case Variant::Owner: return owner_segment(columns, master, plan);
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
  return dps::op<Ask>(master, dps::to(0)) >> dps::op<Fetch>(columns, to_column).named("gather") >>
         dps::op<Assemble>(master, dps::to(0));
}

}  // namespace lu
