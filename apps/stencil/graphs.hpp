// The flow graphs of the stencil. The grid's interior lives in block threads (one Block each); a
// conductor on node 0 paces the iterations. An iteration is one split–merge round:
//
//   Next (stream, conductor)    the previous iteration is complete: a Go to every block
//   Exchange (split, block)     sweeps its block (Jacobi: into its spare buffer, then swaps), then
//                               posts its edge rows and columns to its neighbours, and a note to itself
//   Deposit (leaf, neighbour)   writes them into its ghost cells: of its current buffer if it has
//                               swept as far, else of its spare one, which its own sweep will fill
//   Gathered (merge, conductor) the block's halos are all in place
//
// so an iteration's halos travel straight between neighbours, overlapping the other blocks' sweeps,
// and the conductor sees one message per block. A call runs a segment of iterations, first one round
// without sweeping that fills every ghost cell (after the start or a redistribution), and returns the
// last residual measured. Between calls the job may resize: dps::Redistribution moves the blocks'
// `grid`, then Setup gives every block its new geometry.
//
//   stencil::Graphs g(app, blocks, conductor);
//   g.setup(layout, 0);
//   stencil::Swept s = g.iterate({.first = 0, .count = 50, .parts = 4, .residual_every = 10});
#pragma once

#include "decomposition.hpp"
#include "sweep.hpp"

#include <dps/dps.hpp>
#include <dps/redistribution.hpp>

#include <map>
#include <vector>

namespace stencil {

// The ghost cells of a buffer of `g`'s elements (its first and last rows, then its first and last
// columns between them), and a buffer of `elements` whose ghost cells are those of `ring`.
dps::LargeArray<double> ghost_ring(const dps::LargeArray<double>& buffer, const Geometry& g);
dps::LargeArray<double> with_ghost_ring(std::size_t elements, const dps::LargeArray<double>& ring, const Geometry& g);

struct Block {
  Geometry geometry;
  dps::Part<double> grid;         // the current values, margin of one ghost cell; what redistribution moves
  dps::LargeArray<double> spare;  // the other buffer of the sweep
  long sweeps = 0;                // the version of `grid`
  // An image of the block (a checkpoint, a migration) carries of `spare` its ghost cells only: its
  // interior is swept into before it is read, but a neighbour's next halo may be in its ghost cells.
  template <class A>
  void save(A& a) const {
    a(geometry, grid, sweeps, spare.size(), ghost_ring(spare, geometry));
  }
  template <class A>
  void load(A& a) {
    std::size_t elements = 0;
    dps::LargeArray<double> ring;
    a(geometry, grid, sweeps, elements, ring);
    spare = with_ghost_ring(elements, ring, geometry);
  }
};

struct Segment {
  long first = 0, count = 0;  // iterations first + 1 .. first + count
  std::size_t parts = 0;
  long residual_every = 0;    // measure the residual after iterations that are multiples of it (0: never)
  template <class A>
  void serialize(A& a) {
    a(first, count, parts, residual_every);
  }
};
struct Swept {
  double residual = -1;  // √Σ(change²) of the last iteration measured; -1: none
  template <class A>
  void serialize(A& a) {
    a(residual);
  }
};

// Every block takes its geometry in a layout, at version `sweeps`.
struct Setups {
  dps::Layout layout;
  std::size_t interior = 0, threads = 0;
  long sweeps = 0;
  template <class A>
  void serialize(A& a) {
    a(layout, interior, threads, sweeps);
  }
};

// The conductor's state: the segment under way.
struct Conductor {
  Segment segment;
  long started = 0;  // iterations of the segment begun
  double residual = -1;
  template <class A>
  void serialize(A& a) {
    a(segment, started, residual);
  }
};

// The whole n × n grid, boundaries included, row major (tests and --gather).
struct Grid {
  std::size_t n = 0;
  dps::LargeArray<double> values;
  template <class A>
  void serialize(A& a) {
    a(n, values);
  }
};

// What a sweep costs, charged under partial direct execution: the time per point measured on this
// machine for blocks of one shape (one process-wide model, as LU's kernels).
struct SweepCost {
  double per_point = 0;  // seconds
  double at(std::size_t rows, std::size_t cols) const { return per_point * static_cast<double>(rows * cols); }
  static SweepCost measure(std::size_t rows, std::size_t cols);
};
void set_sweep_cost(SweepCost cost);

class Graphs {
 public:
  Graphs(dps::Application& app, dps::Threads<Block> blocks, dps::Threads<Conductor> conductor);

  // Every block of `layout` (of the grid's interior) takes its geometry, at version `sweeps`: its
  // storage allocated at the start, boundary ghosts set. Threads past the layout's parts release
  // their storage (they are about to be removed, and a removed thread's state is handed back).
  void setup(const dps::Layout& layout, std::size_t interior, long sweeps);
  Swept iterate(const Segment& segment);
  double checksum(std::size_t parts);  // the sum of the interior (decomposition-independent)
  Grid gather(std::size_t parts, std::size_t n);

 private:
  dps::Application& app_;
  dps::Threads<Block> blocks_;
  dps::Threads<Conductor> conductor_;
  dps::Graph<Setups, long> setup_;
  dps::Graph<long, Checksum> checksum_;
  dps::Graph<long, Grid> gather_;
  std::map<long, dps::Graph<Segment, Swept>> iterations_;  // by count
};

}  // namespace stencil
