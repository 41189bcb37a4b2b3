// The stencil's operations and graphs.
#include "graphs.hpp"
#include "median.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace stencil {

namespace {

// Calls f(index in the buffer, index in the ring) for each ghost cell of `g`.
template <class F>
void each_ghost_cell(const Geometry& g, F f) {
  const std::size_t stride = g.stride(), last = g.rows + 1;
  std::size_t k = 0;
  for (std::size_t j = 0; j < stride; ++j) f(j, k++);
  for (std::size_t j = 0; j < stride; ++j) f(last * stride + j, k++);
  for (std::size_t i = 1; i < last; ++i) f(i * stride, k++);
  for (std::size_t i = 1; i < last; ++i) f(i * stride + g.cols + 1, k++);
}

std::size_t ghost_cells(const Geometry& g) { return 2 * g.stride() + 2 * g.rows; }

}  // namespace

dps::LargeArray<double> ghost_ring(const dps::LargeArray<double>& buffer, const Geometry& g) {
  if (buffer.size() == 0) return {};
  if (buffer.size() != g.elements())
    throw std::logic_error("stencil: a buffer of " + std::to_string(buffer.size()) + " elements for a block of " +
                           std::to_string(g.elements()));
  auto ring = dps::LargeArray<double>::uninitialized(ghost_cells(g));
  if (buffer.allocated() && ring.allocated())
    each_ghost_cell(g, [&](std::size_t at, std::size_t k) { ring[k] = buffer[at]; });
  return ring;
}

dps::LargeArray<double> with_ghost_ring(std::size_t elements, const dps::LargeArray<double>& ring, const Geometry& g) {
  if (elements == 0) return {};
  if (elements != g.elements() || ring.size() != ghost_cells(g))
    throw dps::WireError("stencil: a block image whose spare buffer does not match its geometry");
  auto buffer = dps::LargeArray<double>::uninitialized(elements);
  if (buffer.allocated() && ring.allocated())
    each_ghost_cell(g, [&](std::size_t at, std::size_t k) { buffer[at] = ring[k]; });
  return buffer;
}

namespace {

SweepCost sweep_cost;

std::string iteration(long t) { return "iteration " + std::to_string(t); }

// ---- setting blocks up ----

struct Shape {
  Geometry geometry;
  std::size_t interior = 0;
  long sweeps = 0;
  template <class A>
  void serialize(A& a) {
    a(geometry, interior, sweeps);
  }
};

struct Deal : dps::Split<Setups, Shape, Conductor> {
  dps::Step execute(Setups s) {
    for (std::size_t p = 0; p < s.threads; ++p) {
      // Threads past the layout's parts are about to leave: they release their storage.
      Geometry g = p < s.layout.parts() ? geometry_of(s.layout, p) : Geometry{.part = static_cast<int>(p)};
      co_await post(Shape{g, s.interior, s.sweeps});
    }
  }
};

// Ghost cells on the grid's edges hold its boundary values (the top row 1, the rest 0), in both buffers.
void set_boundary(dps::LargeArray<double>& a, const Geometry& g, std::size_t interior) {
  if (!a.allocated()) return;
  const std::size_t stride = g.stride(), last = g.rows + 1;
  if (g.first_row == 0) std::fill_n(a.data(), stride, boundary(0));
  if (g.first_row + g.rows == interior) std::fill_n(a.data() + last * stride, stride, boundary(interior + 1));
  for (std::size_t i = 1; i < last; ++i) {
    if (g.first_col == 0) a[i * stride] = boundary(g.first_row + i);
    if (g.first_col + g.cols == interior) a[i * stride + g.cols + 1] = boundary(g.first_row + i);
  }
}

struct Setup : dps::Leaf<Shape, long, Block> {
  long execute(const Shape& s) {
    Block& b = thread();
    b.geometry = s.geometry;
    b.sweeps = s.sweeps;
    if (s.geometry.rows == 0 && s.geometry.cols == 0) {  // leaving
      b.grid.data = {};
      b.spare = {};
      return 1;
    }
    const std::size_t elements = s.geometry.elements();
    if (b.grid.data.size() != elements) b.grid.data = dps::LargeArray<double>(elements);  // the start: zeros
    // The spare buffer's interior is swept into before it is read, and its ghost cells are set
    // below or deposited by the neighbours first: no need to zero it.
    if (b.spare.size() != elements) b.spare = dps::LargeArray<double>::uninitialized(elements);
    set_boundary(b.grid.data, b.geometry, s.interior);
    set_boundary(b.spare, b.geometry, s.interior);
    return 1;
  }
};

template <class State>
struct Count : dps::Merge<long, long, State> {
  dps::Step execute(long n) {
    while (auto more = co_await this->next()) n += *more;
    co_await this->post(n);
  }
};

// ---- iterations ----

struct Go {
  std::size_t part = 0;
  bool sweep = false, residual = false;
  template <class A>
  void serialize(A& a) {
    a(part, sweep, residual);
  }
};
enum class Side : std::uint8_t { Own, Top, Bottom, Left, Right };  // the ghost cells a halo fills
struct Halo {
  int to = 0;
  Side side = Side::Own;
  long version = 0;              // the sender's sweeps
  dps::LargeArray<double> values;
  double residual = 0;           // Own: the block's Σ(change²)
  template <class A>
  void serialize(A& a) {
    a(to, side, version, values, residual);
  }
};
struct Ack {
  double residual = 0;
  template <class A>
  void serialize(A& a) {
    a(residual);
  }
};

bool measures(const Segment& s, long iteration) { return s.residual_every > 0 && iteration % s.residual_every == 0; }

struct Open : dps::Split<Segment, Go, Conductor> {
  dps::Step execute(Segment s) {
    thread() = Conductor{s, 0, -1};
    for (std::size_t p = 0; p < s.parts; ++p) co_await post(Go{p, false, false});
  }
};

// Row (or column) `at` of a block's storage, `count` cells `step` apart from `first`, into a halo.
dps::LargeArray<double> edge(const dps::LargeArray<double>& a, std::size_t first, std::size_t count, std::size_t step) {
  auto values = dps::LargeArray<double>::uninitialized(count);
  if (a.allocated() && values.allocated())
    for (std::size_t k = 0; k < count; ++k) values[k] = a[first + k * step];
  return values;
}

// One sweep of part of a block (a no-op without data), charged under partial direct execution.
double sweep_part(Block& b, Span rows, Span cols, bool residual) {
  const double* in = b.grid.data.data();
  double* out = b.spare.data();
  const bool data = b.grid.data.allocated() && b.spare.allocated();
  const std::size_t stride = b.geometry.stride();
  return dps::compute(sweep_cost.at(rows.size(), cols.size()), [&] {
    if (!data || rows.size() == 0 || cols.size() == 0) return 0.0;
    if (residual) return sweep_with_residual(in, out, stride, rows, cols);
    sweep(in, out, stride, rows, cols);
    return 0.0;
  });
}

// Sweeps first the rows and columns its neighbours need, posts them, then sweeps the rest while they
// travel; the opening round only posts.
struct Exchange : dps::Split<Go, Halo, Block> {
  dps::Step execute(Go go) {
    Block& b = thread();
    const Geometry& g = b.geometry;
    const std::size_t stride = g.stride();
    double residual = 0;
    const bool sweeping = go.sweep && !g.empty();
    Span inner_rows{1, g.rows}, inner_cols{1, g.cols};
    if (sweeping) {
      inner_rows = {g.up >= 0 ? 2u : 1u, g.down >= 0 ? g.rows - 1 : g.rows};
      inner_cols = {g.left >= 0 ? 2u : 1u, g.right >= 0 ? g.cols - 1 : g.cols};
      if (g.up >= 0) residual += sweep_part(b, {1, 1}, {1, g.cols}, go.residual);
      if (g.down >= 0 && g.rows > 1) residual += sweep_part(b, {g.rows, g.rows}, {1, g.cols}, go.residual);
      if (g.left >= 0) residual += sweep_part(b, inner_rows, {1, 1}, go.residual);
      if (g.right >= 0 && g.cols > 1) residual += sweep_part(b, inner_rows, {g.cols, g.cols}, go.residual);
    }
    if (!g.empty()) {
      const long version = b.sweeps + (sweeping ? 1 : 0);
      const auto& a = sweeping ? b.spare : b.grid.data;  // the edges just swept, or the current ones
      if (g.up >= 0) {
        Halo h{g.up, Side::Bottom, version, edge(a, stride + 1, g.cols, 1), 0};
        co_await post(std::move(h));
      }
      if (g.down >= 0) {
        Halo h{g.down, Side::Top, version, edge(a, g.rows * stride + 1, g.cols, 1), 0};
        co_await post(std::move(h));
      }
      if (g.left >= 0) {
        Halo h{g.left, Side::Right, version, edge(a, stride + 1, g.rows, stride), 0};
        co_await post(std::move(h));
      }
      if (g.right >= 0) {
        Halo h{g.right, Side::Left, version, edge(a, stride + g.cols, g.rows, stride), 0};
        co_await post(std::move(h));
      }
    }
    if (go.sweep) {
      if (sweeping) residual += sweep_part(b, inner_rows, inner_cols, go.residual);
      std::swap(b.grid.data, b.spare);
      ++b.sweeps;
    }
    Halo own{g.part, Side::Own, b.sweeps, {}, residual};
    co_await post(std::move(own));
  }
};

struct Deposit : dps::Leaf<Halo, Ack, Block> {
  Ack execute(const Halo& h) {
    if (h.side == Side::Own) return {h.residual};
    Block& b = thread();
    const Geometry& g = b.geometry;
    if (h.version != b.sweeps && h.version != b.sweeps + 1)
      throw std::logic_error("block " + std::to_string(g.part) + " at version " + std::to_string(b.sweeps) +
                             " got a halo of version " + std::to_string(h.version));
    dps::LargeArray<double>& a = h.version == b.sweeps ? b.grid.data : b.spare;  // spare: its sweep fills the rest
    if (!a.allocated() || !h.values.allocated()) return {0};
    const std::size_t stride = g.stride();
    const auto put = [&](std::size_t first, std::size_t step) {
      for (std::size_t k = 0; k < h.values.size(); ++k) a[first + k * step] = h.values[k];
    };
    switch (h.side) {
      case Side::Top: put(1, 1); break;
      case Side::Bottom: put((g.rows + 1) * stride + 1, 1); break;
      case Side::Left: put(stride, stride); break;
      case Side::Right: put(stride + g.cols + 1, stride); break;
      case Side::Own: break;
    }
    return {0};
  }
};

struct Gathered : dps::Merge<Ack, Ack, Conductor> {
  dps::Step execute(Ack a) {
    while (auto more = co_await next()) a.residual += more->residual;
    co_await post(a);
  }
};

// The round just collected is complete: iteration `done` of the segment (none for the opening round)
// ends, with its residual if it was measured.
long complete(Conductor& c, double sum) {
  const long done = c.segment.first + c.started;
  if (c.started > 0 && measures(c.segment, done)) c.residual = std::sqrt(sum);
  return done;
}

// Collects a round; then starts the next iteration.
struct Next : dps::Stream<Ack, Go, Conductor> {
  dps::Step execute(Ack a) {
    while (auto more = co_await next()) a.residual += more->residual;
    Conductor& c = thread();
    const long done = complete(c, a.residual);
    if (c.started++ > 0) end_phase(iteration(done));
    begin_phase(iteration(done + 1));
    const bool residual = measures(c.segment, done + 1);
    for (std::size_t p = 0; p < c.segment.parts; ++p) co_await post(Go{p, true, residual});
  }
};

struct Close : dps::Merge<Ack, Swept, Conductor> {
  dps::Step execute(Ack a) {
    while (auto more = co_await next()) a.residual += more->residual;
    Conductor& c = thread();
    const long done = complete(c, a.residual);
    if (c.started > 0) end_phase(iteration(done));
    co_await post(Swept{c.residual});
  }
};

// ---- checksum and gathering ----

struct Each : dps::Split<long, long, Conductor> {
  dps::Step execute(long parts) {
    for (long p = 0; p < parts; ++p) co_await post(p);
  }
};

struct Sum : dps::Leaf<long, Checksum, Block> {
  Checksum execute(const long&) {
    const Block& b = thread();
    const Geometry& g = b.geometry;
    Checksum c;
    if (b.grid.data.allocated())
      for (std::size_t i = 1; i <= g.rows; ++i)
        for (std::size_t j = 1; j <= g.cols; ++j) c.add(b.grid.data[i * g.stride() + j]);
    return c;
  }
};

struct AddUp : dps::Merge<Checksum, Checksum, Conductor> {
  dps::Step execute(Checksum c) {
    while (auto more = co_await next()) c.add(*more);
    co_await post(c);
  }
};

struct Tile {
  Geometry geometry;
  dps::LargeArray<double> values;  // its interior, row major
  template <class A>
  void serialize(A& a) {
    a(geometry, values);
  }
};

struct Copy : dps::Leaf<long, Tile, Block> {
  Tile execute(const long&) {
    const Block& b = thread();
    const Geometry& g = b.geometry;
    Tile t{g, dps::LargeArray<double>::uninitialized(g.rows * g.cols)};
    if (t.values.allocated() && b.grid.data.allocated())
      for (std::size_t i = 0; i < g.rows; ++i)
        std::copy_n(b.grid.data.data() + (i + 1) * g.stride() + 1, g.cols, t.values.data() + i * g.cols);
    return t;
  }
};

struct Assemble : dps::Merge<Tile, Grid, Conductor> {
  static inline std::size_t n = 0;  // set by gather() on node 0, where this runs
  dps::Step execute(Tile first) {
    Grid grid{n, dps::LargeArray<double>(n * n)};
    for (std::size_t j = 0; j < n; ++j) grid.values[j] = boundary(0);
    const auto place = [&](const Tile& t) {
      const Geometry& g = t.geometry;
      for (std::size_t i = 0; i < g.rows && t.values.allocated(); ++i)
        std::copy_n(t.values.data() + i * g.cols, g.cols, grid.values.data() + (g.first_row + i + 1) * n + g.first_col + 1);
    };
    place(first);
    while (auto more = co_await next()) place(*more);
    co_await post(std::move(grid));
  }
};

struct ByPart {
  std::size_t operator()(const Shape& s, std::size_t) const { return static_cast<std::size_t>(s.geometry.part); }
  std::size_t operator()(const Go& g, std::size_t) const { return g.part; }
  std::size_t operator()(const long& p, std::size_t) const { return static_cast<std::size_t>(p); }
};
struct ByReceiver {
  std::size_t operator()(const Halo& h, std::size_t) const { return static_cast<std::size_t>(h.to); }
};

}  // namespace

void set_sweep_cost(SweepCost cost) { sweep_cost = cost; }

SweepCost SweepCost::measure(std::size_t rows, std::size_t cols) {
  // The median of five sweeps after one to warm up, of a block of that shape: whether it fits in the
  // caches decides the cost of a point; the median, what the application meets as the machine runs.
  std::vector<double> a((rows + 2) * (cols + 2)), b(a.size());  // not LargeArray: NOALLOC would leave it empty
  std::vector<double> times;
  for (int k = 0; k < 6; ++k) {
    const auto start = std::chrono::steady_clock::now();
    sweep(a.data(), b.data(), cols + 2, Span{1, rows}, Span{1, cols});
    if (k > 0) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    std::swap(a, b);
  }
  return {median(times) / static_cast<double>(std::max<std::size_t>(1, rows * cols))};
}

Graphs::Graphs(dps::Application& app, dps::Threads<Block> blocks, dps::Threads<Conductor> conductor)
    : app_(app),
      blocks_(blocks),
      conductor_(conductor),
      setup_(app.graph(dps::op<Deal>(conductor) >> dps::op<Setup>(blocks, ByPart{}).named("setup") >>
                           dps::op<Count<Conductor>>(conductor),
                       "setup")),
      checksum_(app.graph(dps::op<Each>(conductor) >> dps::op<Sum>(blocks, ByPart{}) >> dps::op<AddUp>(conductor), "checksum")),
      gather_(app.graph(dps::op<Each>(conductor) >> dps::op<Copy>(blocks, ByPart{}) >> dps::op<Assemble>(conductor), "gather")) {}

void Graphs::setup(const dps::Layout& layout, std::size_t interior, long sweeps) {
  const std::size_t threads = blocks_.size();
  const long set = setup_.call(Setups{layout, interior, threads, sweeps}).get();
  if (set != static_cast<long>(threads)) throw std::logic_error("not every block was set up");
}

Swept Graphs::iterate(const Segment& segment) {
  auto graph = iterations_.find(segment.count);
  if (graph == iterations_.end()) {
    auto round = dps::op<Exchange>(blocks_, ByPart{}) >> dps::op<Deposit>(blocks_, ByReceiver{}) >>
                 dps::op<Gathered>(conductor_);
    auto chain = dps::op<Open>(conductor_) >> round;
    for (long k = 0; k < segment.count; ++k) chain = chain >> dps::op<Next>(conductor_) >> round;
    graph = iterations_.emplace(segment.count, app_.graph(chain >> dps::op<Close>(conductor_), "jacobi")).first;
  }
  return graph->second.call(segment).get();
}

double Graphs::checksum(std::size_t parts) { return checksum_.call(static_cast<long>(parts)).get().value(); }

Grid Graphs::gather(std::size_t parts, std::size_t n) {
  Assemble::n = n;
  return gather_.call(static_cast<long>(parts)).get();
}

}  // namespace stencil
