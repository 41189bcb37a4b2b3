// The block products: one leaf, or the parallel sub-block multiplication of Schaeli, Gerlach & Hersch ("A simulator for
// adaptive parallel applications", Fig. 8).
#include "multiplication.hpp"

#include "kernels.hpp"
#include "submatrix.hpp"

#include <cstring>
#include <optional>
#include <stdexcept>
#include <string>

namespace lu {

namespace {

struct Multiply : dps::Leaf<Job, Product, Multiplier> {
  Product execute(const Job& j) {
    Product p{j.block, dps::LargeArray<double>(j.l21.size())};
    kernels().multiply(j.r, j.r, j.r, j.l21.data(), j.r, j.t12.data(), j.r, p.data.data(), j.r);
    ++thread().jobs;
    return p;
  }
};

// ---- Fig. 8 ----

// Where a job's pieces go: column piece p of T12 to thread (coordinator + 1 + p) mod threads, so a
// holder gets pieces first, first + stride, ... (`pieces` of them).
struct Pieces {
  int coordinator = 0, threads = 1, r = 0, s = 0;
  int count() const { return r / s; }
  int holder(int piece) const { return (coordinator + 1 + piece) % threads; }
  int first(int holder) const { return ((holder - coordinator - 1) % threads + threads) % threads; }
  int held_by(int holder) const {
    const int f = first(holder);
    return f < count() ? (count() - 1 - f) / threads + 1 : 0;
  }
  template <class A>
  void serialize(A& a) {
    a(coordinator, threads, r, s);
  }
};

struct ColumnPiece {  // column piece `piece` of T12: r×s
  BlockId block;
  Pieces plan;
  int piece = 0;
  dps::LargeArray<double> data;
  template <class A>
  void serialize(A& a) {
    a(block, plan, piece, data);
  }
};
struct Stored {  // `holder` stored one of its column pieces
  BlockId block;
  Pieces plan;
  int holder = 0;
  template <class A>
  void serialize(A& a) {
    a(block, plan, holder);
  }
};
struct RowPiece {  // row piece `row` of L21 (s×r), for `holder`
  BlockId block;
  Pieces plan;
  int holder = 0, row = 0;
  dps::LargeArray<double> data;
  template <class A>
  void serialize(A& a) {
    a(block, plan, holder, row, data);
  }
};
struct RowProducts {  // the s×s blocks of the product at row piece `row` and `holder`'s column pieces
  BlockId block;
  Pieces plan;
  int holder = 0, row = 0;
  dps::LargeArray<double> data;  // s × (s·pieces held)
  template <class A>
  void serialize(A& a) {
    a(block, plan, holder, row, data);
  }
};

// On the coordinator (the thread the job reached): keeps L21, scatters T12's column pieces.
struct ScatterColumns : dps::Split<Job, ColumnPiece, Multiplier> {
  dps::Step execute(Job job) {
    if (job.s < 1 || job.r % job.s != 0)
      throw std::logic_error("sub-block size " + std::to_string(job.s) + " does not divide r = " + std::to_string(job.r));
    const Pieces plan{static_cast<int>(thread_index()), static_cast<int>(collection_size()), job.r, job.s};
    thread().l21.insert_or_assign(job.block, std::move(job.l21));
    for (int p = 0; p < plan.count(); ++p) {
      ColumnPiece piece{job.block, plan, p, submatrix(job.t12, job.r, 0, p * job.s, job.r, job.s)};
      co_await post(std::move(piece));
    }
  }
};

struct StorePiece : dps::Leaf<ColumnPiece, Stored, Multiplier> {
  Stored execute(const ColumnPiece& x) {
    const int holder = x.plan.holder(x.piece);
    Multiplier::Held& held = thread().held[x.block];
    if (held.pieces == 0) {
      held.pieces = x.plan.held_by(holder);
      held.rows_left = x.plan.count();
      held.columns = dps::LargeArray<double>(x.data.size() * static_cast<std::size_t>(held.pieces));
    }
    const std::size_t slot = static_cast<std::size_t>(x.piece / x.plan.threads);
    if (held.columns.allocated() && x.data.allocated())
      std::memcpy(held.columns.data() + slot * x.data.size(), x.data.data(), sizeof(double) * x.data.size());
    return {x.block, x.plan, holder};
  }
};

// On the coordinator: every row piece of L21 to each holder as soon as it holds all its pieces.
struct SendRows : dps::Stream<Stored, RowPiece, Multiplier> {
  dps::Step execute(Stored first) {
    const Pieces plan = first.plan;
    auto kept = thread().l21.extract(first.block);  // from now on only this execution needs it
    if (kept.empty()) throw std::logic_error("sub-block multiplication: L21 of the block was not kept");
    const dps::LargeArray<double> l21 = std::move(kept.mapped());
    std::map<int, int> stored;  // pieces stored, by holder
    for (std::optional<Stored> x = std::move(first); x;) {
      if (++stored[x->holder] == plan.held_by(x->holder))
        for (int row = 0; row < plan.count(); ++row) {
          RowPiece piece{x->block, plan, x->holder, row, submatrix(l21, plan.r, row * plan.s, 0, plan.s, plan.r)};
          co_await post(std::move(piece));
        }
      x = co_await next();
    }
  }
};

struct MultiplyRows : dps::Leaf<RowPiece, RowProducts, Multiplier> {
  RowProducts execute(const RowPiece& x) {
    Multiplier& m = thread();
    auto held = m.held.find(x.block);
    if (held == m.held.end()) throw std::logic_error("sub-block multiplication: a row piece before its column pieces");
    const int s = x.plan.s, width = s * held->second.pieces;
    RowProducts out{x.block, x.plan, x.holder, x.row, dps::LargeArray<double>(static_cast<std::size_t>(s) * width)};
    kernels().multiply(s, width, x.plan.r, x.data.data(), s, held->second.columns.data(), x.plan.r, out.data.data(), s);
    ++m.jobs;
    if (--held->second.rows_left == 0) m.held.erase(held);
    return out;
  }
};

struct AssembleProduct : dps::Merge<RowProducts, Product, Multiplier> {
  dps::Step execute(RowProducts first) {
    const Pieces plan = first.plan;
    const int r = plan.r, s = plan.s;
    Product product{first.block, dps::LargeArray<double>(static_cast<std::size_t>(r) * r)};
    const auto place = [&](const RowProducts& x) {
      if (!product.data.allocated() || !x.data.allocated()) return;
      const int f = plan.first(x.holder);
      for (int k = 0; f + k * plan.threads < plan.count(); ++k)
        for (int j = 0; j < s; ++j)  // column j of the s×s block at (row piece, column piece f + k·threads)
          std::memcpy(product.data.data() + static_cast<std::size_t>((f + k * plan.threads) * s + j) * r + x.row * s,
                      x.data.data() + static_cast<std::size_t>(k * s + j) * s, sizeof(double) * s);
    };
    place(first);
    while (auto x = co_await next()) place(*x);
    co_await post(std::move(product));
  }
};

}  // namespace

dps::Chain<Job, Product> multiplication(const Multipliers& multipliers, int sub_block) {
  if (sub_block == 0) return dps::op<Multiply>(multipliers).named("multiply");
  // Routes by thread index: the pieces' plan was made with the collection's current size.
  const auto to_holder = [](const ColumnPiece& x, std::size_t) { return static_cast<std::size_t>(x.plan.holder(x.piece)); };
  const auto back = [](const Stored& x, std::size_t) { return static_cast<std::size_t>(x.plan.coordinator); };
  const auto to_rows_holder = [](const RowPiece& x, std::size_t) { return static_cast<std::size_t>(x.holder); };
  const auto assemble = [](const RowProducts& x, std::size_t) { return static_cast<std::size_t>(x.plan.coordinator); };
  return dps::op<ScatterColumns>(multipliers).named("scatter") >> dps::op<StorePiece>(multipliers, to_holder).named("store") >>
         dps::op<SendRows>(multipliers, back).named("send rows") >>
         dps::op<MultiplyRows>(multipliers, to_rows_holder).named("multiply") >>
         dps::op<AssembleProduct>(multipliers, assemble).named("assemble");
}

}  // namespace lu
