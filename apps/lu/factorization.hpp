// The flow graph of block LU with partial pivoting (seed 004 §5.1, Fig. 6). The matrix lives in
// column threads, one r-wide column block each; multiplier threads multiply r×r blocks. Level l:
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
// The owner variant (ours, not the paper's) keeps the multiplications with the data, as ScaLAPACK
// does. Factor shares the factored panel with one relay thread per node, which hands it to the
// node's columns; each column's own thread does the interchanges, the triangular solve and its
// whole trailing update in one dgemm. The panel crosses the network once per node, and column l+1
// gets it first, alone, so that panel l+1 is factored while the other columns update (lookahead).
//
//   Factor (stream, column l) >> Dispatch (split, relay p) >> UpdateColumn (leaf, column j)
//     >> Gather (merge, relay p) >> Factor (level l+1) ... In the basic variant, Factor and Distribute wait for all their
// inputs before posting (a merge–split barrier); pipelined, they post as inputs arrive, so levels
// overlap. A segment of levels [first, last) is one graph call, between which threads may change.
//
//   auto call = lu::segment_graph(app, columns, multipliers, master, {.first = 0, .last = K, ...});
//   app.graph(call).call(lu::Start{0, K}).get();
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
// `node` is the index of its relay (owner variant).
struct Ready {
  int column = 0, of = 1, level = -1, node = 0;
  template <class A>
  void serialize(A& a) {
    a(column, of, level, node);
  }
};
// Owner variant: the columns of relay `node` up to date after level `level`.
struct NodeReady {
  int node = 0, level = -1;
  std::vector<int> columns;
  template <class A>
  void serialize(A& a) {
    a(node, level, columns);
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
// Level `level`'s factored panel (rows level·r to n of its column block) and pivots, shared by the
// columns of one node; each node receiving it over the network gets its own copy.
struct PanelData {
  int level = 0, rows = 0, r = 0;
  dps::LargeArray<double> lu;  // rows×r, column major: L11 and U11 on top, L21 below
  dps::LargeArray<int> pivots;
  template <class A>
  void serialize(A& a) {
    a(level, rows, r, lu, pivots);
  }
};
// The panel for relay `node`: its later columns to update, its earlier ones to flip.
struct Share {
  int node = 0;
  std::vector<int> later, earlier;
  std::shared_ptr<const PanelData> panel;
  template <class A>
  void save(A& a) const {
    a(node, later, earlier, *panel);
  }
  template <class A>
  void load(A& a) {
    PanelData p;
    a(node, later, earlier, p);
    panel = std::make_shared<const PanelData>(std::move(p));
  }
};
// One column's part of a Share; on the relay's node, so the panel is not copied.
struct Update {
  int column = 0;
  bool flip_only = false;  // an earlier column: its rows interchanged, nothing else
  std::shared_ptr<const PanelData> panel;
  template <class A>
  void save(A& a) const {
    a(column, flip_only, *panel);
  }
  template <class A>
  void load(A& a) {
    PanelData p;
    a(column, flip_only, p);
    panel = std::make_shared<const PanelData>(std::move(p));
  }
};

struct Start {
  int first = 0, columns = 0;  // the segment's first level; the number of column blocks
  int nodes = 1;               // column j is on relay j % nodes's node
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
  Basic,      // seed 004's graph with merge–split barriers
  Pipelined,  // seed 004 Fig. 6: streams
  Owner,      // the trailing update by each column's owner, pipelined
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

// The thread collections of a run: relay p is on the node of columns j with j % (relays) == p.
struct Collections {
  Master master;
  Columns columns;
  Multipliers multipliers;
  dps::Threads<dps::Stateless> relays;
};

dps::Chain<Start, Finished> segment_graph(const Collections& threads, const SegmentPlan& plan);
// Fills every column: a call of it returns when the matrix is in place.
dps::Chain<Fill, Finished> fill_graph(const Columns& columns, const Master& master);

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

}  // namespace lu
