// What a partition needs to know about the cluster, read from a cluster model file (the JSON that
// `calibrate` writes and the simulator reads): each node's group and speed, in the file's group
// order, and the network's latency and bandwidth.
//
//   stencil::ClusterFile c = stencil::ClusterFile::load("cluster.json");
//   double s = c.nodes.at(3).speed;
#pragma once

#include <string>
#include <vector>

namespace stencil {

struct ClusterFile {
  struct Node {
    std::string group;
    double speed = 1;
  };
  std::vector<Node> nodes;              // node k of a run is nodes[k]
  double latency = 0, bandwidth = 0;    // seconds; bytes per second
  std::vector<std::string> groups() const;

  // Throws std::invalid_argument naming the file and what is wrong with it.
  static ClusterFile load(const std::string& path);
};

}  // namespace stencil
