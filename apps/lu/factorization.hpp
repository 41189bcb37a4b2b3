// The flow graph of block LU with partial pivoting (Schaeli, Gerlach & Hersch, "A simulator for adaptive parallel
// applications", §5.1, Fig. 6). The matrix lives in column threads, one r-wide column block each; multiplier threads
// multiply r×r blocks. Level l:
//
//   Factor (stream, column l)        LU of panel l as soon as its column is up to date (step 1), then
//                                    streams a Panel to every later column as it completes and a
//                                    row flip to every earlier one
//   Solve (leaf, column j)           row interchanges, then T12 = L11⁻¹·A12 (step 2)
//   Distribute (stream, column l)    a Job (L21 block i, T12 of column j) per block of the update
//   Multiply (leaf, multipliers)     L21_i·T12_j, or Fig. 8's graph over all of them (multiplication.hpp)
//   Subtract (leaf, column j)        B_ij -= L21_i·T12_j (step 3): column j is one block nearer ready
//
// then Factor of level l+1 again. Each level is a phase of the trace, "iteration l+1", from its
// panel's LU to its last subtraction (pipelined, they overlap).
//
// In the basic variant, Factor and Distribute wait for all their inputs before posting (a merge–split
// barrier); pipelined, they post as inputs arrive, so levels overlap. A segment of levels
// [first, last) is one graph call, between which threads may change.
//
// The owner variant (ours, not the paper's) keeps the multiplications with the data, as ScaLAPACK
// does: each node's columns lie side by side in one stripe thread, whose update of a level is one
// dlaswp, one dtrsm and one dgemm. The stripe of column l+1 gets the panel first for that column
// alone and factors panel l+1 right after, in the same step (lookahead); the relay of its node,
// urgent, shares it while the stripe updates its other columns.
//
//   Prepare (leaf, stripes) >> ShareFactor (stream, relay of column l) >> UpdateStripe (leaf, stripe p)
//     >> ShareFactor (level l+1) >> ... >> Close
//
//   auto call = lu::segment_graph(threads, {.first = 0, .last = K, .columns = K, .variant = lu::Variant::Owner});
//   app.graph(call).call(lu::Start{0, K, nodes}).get();
#pragma once

#include "kernels.hpp"
#include "multiplication.hpp"

#include <dps/dps.hpp>

#include <cereal/types/map.hpp>
#include <cereal/types/vector.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <vector>
#include <string>

namespace lu {

// What each column thread holds: its r-wide block of all n rows, and the pivots of its panel.
struct Column {
  int index = -1, n = 0, r = 0, nodes = 1;  // nodes: column j is on the (j % nodes)-th column node
  int sub_block = 0;              // s of its multiplication jobs by sub-blocks; 0: whole blocks
  dps::LargeArray<double> block;  // n×r, column major
  dps::LargeArray<int> pivots;    // r, 1-based relative to row index·r, once its panel is factored
  // Once factored, later levels' row interchanges apply to its L in level order, whatever order
  // they arrive in: those through `flipped` are applied, later ones wait.
  int flipped = -1;
  std::map<int, dps::LargeArray<int>> waiting_flips;
  template <class A>
  void serialize(A& a) {
    a(index, n, r, nodes, sub_block, block, pivots, flipped, waiting_flips);
  }
};
enum class MatrixKind : std::uint8_t { Random, ZeroColumn, ZeroRow };

// Builds column block `column` of the n×n matrix, the same in every process (entries from a hash of
// their position and the seed). A call of fill_graph takes one with any `column`: it fills them all.
struct Fill {
  int column = 0, n = 0, r = 0, nodes = 1, sub_block = 0;
  std::uint64_t seed = 1;
  MatrixKind kind = MatrixKind::Random;
  template <class A>
  void serialize(A& a) {
    a(column, n, r, nodes, sub_block, seed, kind);
  }
};
double entry(std::uint64_t seed, MatrixKind kind, int n, int row, int column);

// Column `column` is up to date once `of` of these arrived for it; `level` made it (-1: the start).
struct Ready {
  int column = 0, of = 1, level = -1;
  template <class A>
  void serialize(A& a) {
    a(column, of, level);
  }
};
// Level `level`'s pivots for column `column`, with L11 unless only its rows are to be flipped.
struct Panel {
  int level = 0, column = 0;
  bool flip_only = false;
  dps::LargeArray<int> pivots;
  dps::LargeArray<double> l11;  // r×r
  template <class A>
  void serialize(A& a) {
    a(level, column, flip_only, pivots, l11);
  }
};
struct Solved {
  int level = 0, column = 0;
  dps::LargeArray<double> t12;  // r×r; empty after a flip
  template <class A>
  void serialize(A& a) {
    a(level, column, t12);
  }
};

// ---- the owner variant ----

// Every column block of one node side by side: column j is local block k = j / nodes of the stripe
// of node j % nodes, so that a level's update of the node is one dgemm.
struct Stripe {
  int node = 0, nodes = 1, n = 0, r = 0, count = 0;  // count: its column blocks
  dps::LargeArray<double> blocks;  // n × count·r, column major
  dps::LargeArray<int> pivots;     // count·r: block k's panel pivots at k·r (1-based from its row j·r)
  int factored = -1;               // the last level whose panel it factored (the lookahead)
  // The later levels' pivots, for the row interchanges in the L of its factored blocks: applied all
  // at once, block by block, when the last level's have come (one pass over each block).
  std::map<int, dps::LargeArray<int>> flips;
  template <class A>
  void serialize(A& a) {
    a(node, nodes, n, r, count, blocks, pivots, factored, flips);
  }
};

// Level `level`'s factored panel (rows level·r to n of its column block) and pivots.
struct PanelData {
  int level = 0, rows = 0, r = 0;
  dps::LargeArray<double> lu;  // rows×r, column major: L11 and U11 on top, L21 below
  dps::LargeArray<int> pivots;
  template <class A>
  void serialize(A& a) {
    a(level, rows, r, lu, pivots);
  }
};

// Panel `level` for the stripe of `node`: its blocks [first, last) to update (none: only its pivots
// are kept); with `lookahead`, the one block [first, first + 1) is column level+1, whose panel the
// stripe factors at once after.
struct StripeShare {
  int node = 0, first = 0, last = 0;
  bool lookahead = false;
  std::shared_ptr<const PanelData> panel;
  template <class A>
  void save(A& a) const {
    a(node, first, last, lookahead, *panel);
  }
  template <class A>
  void load(A& a) {
    PanelData p;
    a(node, first, last, lookahead, p);
    panel = std::make_shared<const PanelData>(std::move(p));
  }
};
// What the stripe of `node` did with panel `level`: updated the blocks past the next column
// (`rest`), or the next column, then factored its panel (`next`, for the next level's Factor).
struct Progress {
  int node = 0, level = -1;
  bool rest = false;
  bool opening = false;          // a segment's start: no level of this call ends here
  int nodes = 1, columns = 0;    // of the factorization
  std::shared_ptr<const PanelData> next;  // panel level+1, or null
  template <class A>
  void save(A& a) const {
    const bool has = next != nullptr;
    a(node, level, rest, opening, nodes, columns, has);
    if (has) a(*next);
  }
  template <class A>
  void load(A& a) {
    bool has = false;
    a(node, level, rest, opening, nodes, columns, has);
    if (!has) return next.reset();
    PanelData p;
    a(p);
    next = std::make_shared<const PanelData>(std::move(p));
  }
};

struct Start {
  int first = 0, columns = 0;  // the segment's first level; the number of column blocks
  int nodes = 1;               // column j is on the (j % nodes)-th column node
  template <class A>
  void serialize(A& a) {
    a(first, columns, nodes);
  }
};
struct Finished {
  long messages = 0;  // what the closing merge collected
  template <class A>
  void serialize(A& a) {
    a(messages);
  }
};

enum class Variant : std::uint8_t {
  Basic,      // the graph of Schaeli et al. (§5.1) with merge–split barriers
  Pipelined,  // Schaeli et al., Fig. 6: streams
  Owner,      // each node's columns in one stripe, its trailing update one dgemm per level, pipelined
};
const char* name(Variant v);
Variant variant_named(const std::string& text);  // throws std::invalid_argument

struct SegmentPlan {
  int first = 0, last = 0;  // levels [first, last)
  int columns = 0;          // K = n / r
  Variant variant = Variant::Pipelined;
  int window = 0;     // flow control on Distribute's jobs; 0: none
  int sub_block = 0;  // multiplications by s×r and r×s pieces (Fig. 8); 0: one leaf per block
};

using Columns = dps::Threads<Column>;
using Master = dps::Threads<dps::Stateless>;
using Stripes = dps::Threads<Stripe>;

// The thread collections of a run. Owner variant: stripe p and relay p (which shares each panel) on
// the p-th column node; otherwise columns and multipliers.
struct Collections {
  Master master;
  Columns columns;
  Multipliers multipliers;
  Stripes stripes;
  dps::Threads<dps::Stateless> relays;
};

dps::Chain<Start, Finished> segment_graph(const Collections& threads, const SegmentPlan& plan);
// Fills every column (every stripe): a call of it returns when the matrix is in place.
dps::Chain<Fill, Finished> fill_graph(const Columns& columns, const Master& master);
dps::Chain<Fill, Finished> fill_graph(const Stripes& stripes, const Master& master);

// The factored matrix gathered on node 0, and the row interchanges as LAPACK's ipiv (1-based, global).
struct Factored {
  int n = 0;
  dps::LargeArray<double> lu;  // n×n, column major: L below the diagonal (unit), U on and above
  dps::LargeArray<int> pivots;
  template <class A>
  void serialize(A& a) {
    a(n, lu, pivots);
  }
};
dps::Chain<Start, Factored> gather_graph(const Columns& columns, const Master& master);
dps::Chain<Start, Factored> gather_graph(const Stripes& stripes, const Master& master);

}  // namespace lu
