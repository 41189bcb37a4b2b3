// Allocator: which idle nodes a job gets when it starts or grows (Mache, "Parallel I/O- and Communication-Sensitive
// Scheduling on High-Performance Parallel Computers"). The cluster asks it every time. Contiguous strategies give a
// job's start one rectangle of the mesh, and may refuse while enough nodes are idle (fits()); the others never refuse:
//   - FirstFit and BestFit (contiguous): the request's rectangle, w = ⌈√count⌉ by h = ⌈count / w⌉ in
//     either orientation, or whole columns or rows when neither fits the mesh; its first `count`
//     nodes row by row. First Fit takes the first idle rectangle by its lower-left corner, row by
//     row; Best Fit the one whose border touches the most busy nodes and edges, the first on a tie.
//     A growth takes a rectangle too, else the idle nodes nearest the job's;
//   - Paging: the lowest-numbered idle nodes (row-major on a mesh): the cluster's default;
//   - RandomAllocation: idle nodes at random (seeded);
//   (these two have no notion of nearness: a growth follows the same rule as a start)
//   - MultipleBuddy (MBS): the request split into base-4 digits (6 = 4 + 1 + 1), each a square block
//     of 2^i × 2^i idle nodes aligned on its size; blocks already split go first, a larger block is
//     split only when none is left, and a size with no block at all passes its request down as four;
//     a growth takes, of each size, the block nearest the nodes the job holds;
//   - MinimizeContention (MC): for each idle node and both orientations of a w × h request, a
//     rectangle around it (shell 0) and the rings around that (shells 1, 2, ...), idle nodes taken
//     shell by shell (shorter sides, longer sides, corners); the cheapest by Σ shell numbers wins.
//     A growth takes the shells around the rectangle that bounds the nodes the job holds;
//     MC Elongated is MC whose shell 0 is ⌊count / height⌋ full columns (at least one): it fills whole
//     columns, for balance towards I/O nodes in a west column (Mache, Fig. 59; inside each shell
//     MC's order, as in the results the dissertation reports);
//   - Plas (Mache, Fig. 52): for I/O nodes in a column west of the mesh, each node taken on the
//     side of the middle I/O link (rows below height / 2, or the others) that the running jobs use
//     less, column by column from the west, middle-out: the system balance stays within one node.
//     A growth takes, on the side the balance picks, the idle node nearest the nodes the job holds.
//
//   dps::Mesh mesh(16, 16);
//   dps::cluster::MinimizeContention mc(mesh);
//   dps::cluster::Simulation simulation(workload, easy, {.allocator = &mc});
#pragma once

#include "dps/cluster/cluster.hpp"
#include "dps/mesh.hpp"

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace dps::cluster {

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual std::string name() const = 0;
  // `count` nodes among the idle ones (idle[node]; at least `count` are), for a job that already
  // holds `held` (empty when it starts).
  virtual std::vector<Node> place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>& held) = 0;
  // Whether place() would give a starting job `count` nodes now: whenever that many are idle, but for
  // contiguous strategies.
  virtual bool fits(const std::vector<bool>& idle, std::size_t count) const;
};

// The strategy a name gives ("paging", "random", "first-fit", "best-fit", "mbs", "mc", "mc-elongated",
// "plas"); all but paging and random need the mesh. Throws std::invalid_argument with one line naming
// `option` for an unknown name, or asking for --mesh when it is missing.
std::unique_ptr<Allocator> allocator_named(const std::string& option, const std::string& name, const Mesh* mesh,
                                           std::uint64_t seed = 1);

class Paging final : public Allocator {
 public:
  std::string name() const override { return "paging"; }
  std::vector<Node> place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>& held) override;
};

class RandomAllocation final : public Allocator {
 public:
  explicit RandomAllocation(std::uint64_t seed = 1) : random_(seed) {}
  std::string name() const override { return "random"; }
  std::vector<Node> place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>& held) override;

 private:
  std::mt19937_64 random_;
};

class MultipleBuddy final : public Allocator {
 public:
  explicit MultipleBuddy(Mesh mesh) : mesh_(mesh) {}
  std::string name() const override { return "mbs"; }
  std::vector<Node> place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>& held) override;

 private:
  // The idle aligned block of 2^level × 2^level to take next, by its lower-left corner (for a growth,
  // among the nearest to `held`); false when none.
  bool block(const std::vector<bool>& idle, int level, const std::vector<Node>& held, Mesh::Point& corner) const;
  bool all_idle(const std::vector<bool>& idle, Mesh::Point corner, int side) const;
  Mesh mesh_;
};

class MinimizeContention final : public Allocator {
 public:
  enum class Shape { Square, Columns };  // MC; MC Elongated
  explicit MinimizeContention(Mesh mesh, Shape shape = Shape::Square) : mesh_(mesh), shape_(shape) {}
  std::string name() const override { return shape_ == Shape::Columns ? "mc-elongated" : "mc"; }
  std::vector<Node> place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>& held) override;
  // The request's shape for `count` nodes: w = ⌈√count⌉ columns, h = ⌈count / w⌉ rows.
  static std::pair<int, int> shape(std::size_t count);
  // The nodes MC takes around `center` for a w × h request, and their cost (Σ shell numbers);
  // fewer than `count` nodes when the mesh has not enough idle ones.
  std::pair<std::vector<Node>, std::size_t> around(const std::vector<bool>& idle, std::size_t count, Node center, int w, int h) const;

 private:
  // The nodes taken shell by shell around the w × h rectangle whose lower-left corner is `corner`
  // (which may reach out of the mesh), and their cost.
  std::pair<std::vector<Node>, std::size_t> shells(const std::vector<bool>& idle, std::size_t count, Mesh::Point corner, int w,
                                                   int h) const;
  Mesh mesh_;
  Shape shape_;
};

class Contiguous final : public Allocator {
 public:
  enum class Fit { First, Best };
  explicit Contiguous(Mesh mesh, Fit fit) : mesh_(mesh), fit_(fit) {}
  std::string name() const override { return fit_ == Fit::First ? "first-fit" : "best-fit"; }
  std::vector<Node> place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>& held) override;
  bool fits(const std::vector<bool>& idle, std::size_t count) const override;

 private:
  struct Rectangle {
    Mesh::Point corner;
    int w = 0, h = 0;
  };
  // The idle rectangle the rule picks for `count` nodes; false when none is.
  bool pick(const std::vector<bool>& idle, std::size_t count, Rectangle& chosen) const;
  Mesh mesh_;
  Fit fit_;
};

class Plas final : public Allocator {
 public:
  explicit Plas(Mesh mesh) : mesh_(mesh) {}
  std::string name() const override { return "plas"; }
  std::vector<Node> place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>& held) override;

 private:
  Mesh mesh_;
};

}  // namespace dps::cluster
