// Mesh: a 2-D mesh (or torus) of width × height nodes, node y·width + x at (x, y), with two
// unidirectional links between neighbours and deterministic dimension-ordered routing: X first,
// then Y (Mache, "Parallel I/O- and Communication-Sensitive Scheduling on High-Performance Parallel Computers"). On a
// torus a dimension is crossed the shorter way round, east or north on a tie. What the network model of a mesh routes
// over, and what placement metrics count links on.
//
//   dps::Mesh mesh(16, 16);
//   std::vector<dps::Mesh::Link> hops;
//   mesh.route(mesh.node({0, 0}), mesh.node({3, 2}), hops);   // 3 east, then 2 north: 5 links
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace dps {

class Mesh {
 public:
  using Node = std::uint32_t;
  using Link = std::uint32_t;  // 4 · node + direction: the link leaving the node that way
  enum Direction : std::uint8_t { East, West, North, South };
  struct Point {
    int x = 0, y = 0;
    bool operator==(const Point&) const = default;
  };

  // Throws std::invalid_argument when a side is below 1 (or, for a torus, below 3: a ring of two
  // would have two links between the same pair).
  Mesh(int width, int height, bool torus = false);
  // "16x8" given to `option` (--mesh): 16 wide, 8 high. Throws std::invalid_argument "OPTION expects
  // WIDTHxHEIGHT, both positive, got 'TEXT'".
  static Mesh parse(const std::string& option, const std::string& text);

  int width() const noexcept { return width_; }
  int height() const noexcept { return height_; }
  bool torus() const noexcept { return torus_; }
  std::size_t size() const noexcept { return static_cast<std::size_t>(width_) * static_cast<std::size_t>(height_); }
  std::size_t links() const noexcept { return 4 * size(); }  // ids, some of them edges to nowhere on a mesh

  Point at(Node node) const;   // throws std::out_of_range for a node outside the mesh
  Node node(Point p) const;    // ... for a point outside it
  Link link(Node from, Direction d) const { return 4 * from + d; }
  Node from(Link l) const { return l / 4; }
  Node to(Link l) const;       // the neighbour the link leads to

  int distance(Node a, Node b) const;  // hops of the route
  // The links of the route from a to b, in order, appended to `hops` (none when a == b).
  void route(Node a, Node b, std::vector<Link>& hops) const;

 private:
  int steps(int from, int to, int size, bool& forward) const;  // along one dimension
  int width_, height_;
  bool torus_;
};

}  // namespace dps
