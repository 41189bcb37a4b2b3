// What a placement does to a 2-D mesh (Mache, "Parallel I/O- and Communication-Sensitive Scheduling on High-Performance
// Parallel Computers"): link contention, the number of distinct sender–receiver pairs whose XY routes cross a link, its
// maximum and hotspot; the I/O bandwidth the network allows; and how dispersed a job's nodes are.
//
//   dps::Mesh mesh(17, 16);                          // I/O nodes in column 0, compute nodes east
//   std::vector<std::pair<dps::Mesh::Node, dps::Mesh::Node>> pairs = ...;  // who sends to whom
//   dps::cluster::Contention c = dps::cluster::link_contention(mesh, pairs);
//   double b_net = dps::cluster::network_bandwidth(16, 14, 380e6, c.max);   // B_NET = m·n·B_l / max
#pragma once

#include "dps/mesh.hpp"

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace dps::cluster {

struct Contention {
  std::vector<std::uint32_t> per_link;  // by link id (Mesh::Link)
  std::uint32_t max = 0;                // max_contention
  Mesh::Link hotspot = 0;          // the first link (by id) that carries it
  struct Peak {
    std::uint32_t max = 0;
    Mesh::Link hotspot = 0;
  };
  Peak peak() const noexcept { return {max, hotspot}; }
};
// `pairs` are (sender, receiver); repeated pairs count once.
Contention link_contention(const Mesh& mesh, std::vector<std::pair<Mesh::Node, Mesh::Node>> pairs);

// B_NET: what m I/O nodes and n compute nodes can move through links of `link_bandwidth` when the
// hotspot carries `max_contention` pairs (Mache: m·n·B_l / max_contention).
double network_bandwidth(std::size_t m, std::size_t n, double link_bandwidth, std::uint32_t max_contention);

// How spread out a job's nodes are (Mache's dispersal metrics).
struct Dispersal {
  std::size_t nodes_affected = 0;   // the area of the nodes' bounding rectangle
  std::size_t links_affected = 0;   // (max_x − min_x) · rows used + (max_y − min_y) · columns used
  double average_distance = 0;      // Σ distance / (j (j − 1)) over ordered pairs
  std::size_t summed_distance = 0;  // Σ distance over unordered pairs
  std::size_t distance_from_center = 0;  // min over its nodes l of Σ_m distance(l, m)
  int diameter = 0;                 // the largest distance
};
// Throws std::invalid_argument for no nodes.
Dispersal dispersal(const Mesh& mesh, const std::vector<Mesh::Node>& nodes);

// The contention of a job's own messages: every node of it sends to every other.
Contention all_to_all_contention(const Mesh& mesh, const std::vector<Mesh::Node>& nodes);

// A column of I/O nodes on the west edge of a mesh of compute nodes (Mache, ch. VII: 16 I/O nodes
// west of a 22 × 16 mesh): in the (width + 1) × height mesh that holds both, compute node v sits at
// (v mod width + 1, v / width) and I/O node t at (0, t).
class IoColumn {
 public:
  explicit IoColumn(const Mesh& compute) : compute_(compute), whole_(compute.width() + 1, compute.height()) {}
  const Mesh& compute() const noexcept { return compute_; }
  const Mesh& whole() const noexcept { return whole_; }  // compute and I/O nodes
  std::size_t io_nodes() const noexcept { return static_cast<std::size_t>(compute_.height()); }
  Mesh::Node io(std::size_t t) const { return whole_.node({0, static_cast<int>(t)}); }
  Mesh::Node of(Mesh::Node compute) const {
    const Mesh::Point p = compute_.at(compute);
    return whole_.node({p.x + 1, p.y});
  }

  // The nodes above the middle I/O link (rows height / 2 and up) minus those below: a job's balance,
  // or the system's for all running jobs' nodes (Mache, ch. VII).
  long balance(const std::vector<Mesh::Node>& nodes) const;
  // The contention of their write traffic (on whole()): every one of `nodes` sends to every I/O node.
  Contention write_contention(const std::vector<Mesh::Node>& nodes) const;

 private:
  Mesh compute_, whole_;
};

}  // namespace dps::cluster
