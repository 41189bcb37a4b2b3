// The block products of the LU graph of Schaeli, Gerlach & Hersch ("A simulator for adaptive parallel applications",
// §5), L21_i·T12_j, on the multiplier threads: either one leaf per r×r product, or the paper's parallel sub-block
// multiplication (Fig. 8), which stands where that leaf stands. With sub-blocks of size s, a job's coordinator (the
// multiplier it reached)
//
//   ScatterColumns (split)      keeps L21, sends T12's r×s column pieces to the multipliers after it
//   StorePiece (leaf, holder)   stores them
//   SendRows (stream)           once a holder has all its pieces, sends it each s×r row piece of L21
//   MultiplyRows (leaf, holder) multiplies a row piece with every column piece the holder stores
//   AssembleProduct (merge)     puts the s×s blocks together into the r×r product
//
//   auto chain = distribute >> lu::multiplication(multipliers, s) >> subtract;  // s = 0: one leaf
#pragma once

#include <dps/dps.hpp>

#include <cereal/types/map.hpp>
#include <compare>
#include <map>

namespace lu {

// The block B(row, column) that level `level` updates.
struct BlockId {
  int level = 0, row = 0, column = 0;
  auto operator<=>(const BlockId&) const = default;
  template <class A>
  void serialize(A& a) {
    a(level, row, column);
  }
};

struct Job {
  BlockId block;
  int r = 0, s = 0;  // s: the sub-block size, when multiplied by sub-blocks
  dps::LargeArray<double> l21, t12;  // r×r each
  template <class A>
  void serialize(A& a) {
    a(block, r, s, l21, t12);
  }
};
struct Product {
  BlockId block;
  dps::LargeArray<double> data;  // r×r: L21·T12
  template <class A>
  void serialize(A& a) {
    a(block, data);
  }
};

struct Multiplier {
  long jobs = 0;  // how many products (or row pieces) it multiplied
  // Sub-block multiplication: L21 of the jobs it coordinates, until their row pieces are sent...
  std::map<BlockId, dps::LargeArray<double>> l21;
  // ...and the column pieces of T12 it holds: pieces first, first + stride, ..., side by side.
  struct Held {
    int first = 0, stride = 1, pieces = 0, rows_left = 0;
    dps::LargeArray<double> columns;  // r × (s·pieces)
    template <class A>
    void serialize(A& a) {
      a(first, stride, pieces, rows_left, columns);
    }
  };
  std::map<BlockId, Held> held;
  template <class A>
  void serialize(A& a) {
    a(jobs, l21, held);
  }
};
using Multipliers = dps::Threads<Multiplier>;

// The products of a level's jobs: one leaf each when sub_block is 0, else Fig. 8's graph with
// s = sub_block (a divisor of the jobs' r).
dps::Chain<Job, Product> multiplication(const Multipliers& multipliers, int sub_block);

}  // namespace lu
