// dps-place: where an allocation strategy puts an application's nodes on a mesh (Mache, "Parallel I/O- and
// Communication-Sensitive Scheduling on High-Performance Parallel Computers"), as the router list a mesh model's
// "routers" takes, so that a simulated run is placed by a strategy. Prints one line: [r0, r1, ...], node v on router
// r_v (y * width + x).
//
//   lu-sim --model mesh.json --set "network.topology.routers=$(dps-place --mesh 16x16 --nodes 16 --allocation mc)"
//   dps-place --mesh 16x16 --nodes 16 --allocation mc --busy 0,1,2,3,16,17   # around another job's nodes
#include <dps/cli.hpp>
#include <dps/cluster/allocation.hpp>
#include <dps/mesh.hpp>

#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>

int main(int argc, char** argv) {
  return dps::run_main("dps-place", [&] {
    std::string mesh_text, allocation = "mc", busy;
    long nodes = 0, seed = 1;
    dps::Cli cli("dps-place", "Places an application's nodes on a mesh by an allocation strategy; prints the model's \"routers\".");
    cli.option("--mesh", mesh_text, "WxH  the mesh")
        .option("--nodes", nodes, "how many nodes to place")
        .option("--allocation", allocation, "paging, random, first-fit, best-fit, mbs, mc (default), mc-elongated or plas")
        .option("--busy", busy, "R,R,...  routers other jobs hold (default: none)")
        .option("--seed", seed, "random's seed (default 1)");
    if (!cli.parse(argc, argv)) return 0;
    if (mesh_text.empty()) throw std::invalid_argument("--mesh is missing (--help says more)");
    const dps::Mesh mesh = dps::Mesh::parse("--mesh", mesh_text);
    std::vector<bool> idle(mesh.size(), true);
    std::stringstream list(busy);
    for (std::string item; std::getline(list, item, ',');) {
      std::size_t end = 0;
      long router = -1;
      try {
        router = std::stol(item, &end);
      } catch (const std::logic_error&) {
      }
      if (end != item.size() || router < 0 || static_cast<std::size_t>(router) >= mesh.size())
        throw std::invalid_argument("--busy expects routers from 0 to " + std::to_string(mesh.size() - 1) + ", got '" + item + "'");
      idle[static_cast<std::size_t>(router)] = false;
    }
    std::size_t free = 0;
    for (const bool i : idle) free += i;
    if (nodes < 1 || static_cast<std::size_t>(nodes) > free)
      throw std::invalid_argument("--nodes expects 1 to " + std::to_string(free) + " (the idle routers), got " + std::to_string(nodes));
    auto strategy = dps::cluster::allocator_named("--allocation", allocation, &mesh, static_cast<std::uint64_t>(seed));
    if (!strategy->fits(idle, static_cast<std::size_t>(nodes)))
      throw std::runtime_error(allocation + " finds no idle rectangle of " + std::to_string(nodes) + " nodes");
    const auto placed = strategy->place(idle, static_cast<std::size_t>(nodes), {});
    std::string out = "[";
    for (std::size_t k = 0; k < placed.size(); ++k) out += (k ? ", " : "") + std::to_string(placed[k]);
    std::printf("%s]\n", out.c_str());
    return 0;
  });
}
