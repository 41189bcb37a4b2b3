#include "dps/cluster/allocation.hpp"

#include "draws.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace dps::cluster {

namespace {

void check(const std::vector<bool>& idle, std::size_t count) {
  if (static_cast<std::size_t>(std::count(idle.begin(), idle.end(), true)) < count)
    throw std::logic_error("an allocation of " + std::to_string(count) + " nodes with fewer idle");
}

}  // namespace

std::vector<Node> Paging::place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>&) {
  check(idle, count);
  std::vector<Node> nodes;
  for (Node n = 0; nodes.size() < count; ++n)
    if (idle[n]) nodes.push_back(n);
  return nodes;
}

std::vector<Node> RandomAllocation::place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>&) {
  check(idle, count);
  std::vector<Node> free;
  for (Node n = 0; n < idle.size(); ++n)
    if (idle[n]) free.push_back(n);
  for (std::size_t i = 0; i < count; ++i) std::swap(free[i], free[i + draws::below(random_, free.size() - i)]);  // partial Fisher–Yates
  free.resize(count);
  return free;
}

bool MultipleBuddy::all_idle(const std::vector<bool>& idle, sim::Mesh::Point corner, int side) const {
  if (corner.x + side > mesh_.width() || corner.y + side > mesh_.height()) return false;
  for (int y = corner.y; y < corner.y + side; ++y)
    for (int x = corner.x; x < corner.x + side; ++x)
      if (!idle[mesh_.node({x, y})]) return false;
  return true;
}

// A block whose parent is no longer whole (already split) before one that would split a whole one;
// the lowest corner, row by row, among equals.
bool MultipleBuddy::block(const std::vector<bool>& idle, int level, sim::Mesh::Point& corner) const {
  const int side = 1 << level;
  bool found = false;
  for (int y = 0; y + side <= mesh_.height(); y += side)
    for (int x = 0; x + side <= mesh_.width(); x += side) {
      if (!all_idle(idle, {x, y}, side)) continue;
      const sim::Mesh::Point parent{x & ~((2 * side) - 1), y & ~((2 * side) - 1)};
      if (!all_idle(idle, parent, 2 * side)) {
        corner = {x, y};
        return true;
      }
      if (!found) corner = {x, y}, found = true;
    }
  return found;
}

std::vector<Node> MultipleBuddy::place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>&) {
  check(idle, count);
  int top = 0;
  while ((2 << top) <= std::min(mesh_.width(), mesh_.height())) ++top;
  std::vector<std::size_t> need(static_cast<std::size_t>(top) + 1);
  std::size_t left = count;
  for (int level = top; level >= 0; --level) {  // base-4 digits; the top level takes what is above it
    const std::size_t size = std::size_t{1} << (2 * level);
    need[static_cast<std::size_t>(level)] = left / size;
    left %= size;
  }
  std::vector<bool> free = idle;
  std::vector<Node> nodes;
  for (int level = top; level >= 0; --level) {
    const int side = 1 << level;
    for (std::size_t& wanted = need[static_cast<std::size_t>(level)]; wanted > 0; --wanted) {
      sim::Mesh::Point corner;
      if (!block(free, level, corner)) {  // none of this size: four of the next smaller each
        if (level == 0) throw std::logic_error("MBS found no idle node for a request the idle nodes hold");
        need[static_cast<std::size_t>(level - 1)] += 4 * wanted;
        break;
      }
      for (int y = corner.y; y < corner.y + side; ++y)
        for (int x = corner.x; x < corner.x + side; ++x) {
          nodes.push_back(mesh_.node({x, y}));
          free[nodes.back()] = false;
        }
    }
  }
  return nodes;
}

std::pair<int, int> MinimizeContention::shape(std::size_t count) {
  const int w = static_cast<int>(std::ceil(std::sqrt(static_cast<double>(count))));
  return {w, static_cast<int>((count + static_cast<std::size_t>(w) - 1) / static_cast<std::size_t>(w))};
}

std::pair<std::vector<Node>, std::size_t> MinimizeContention::around(const std::vector<bool>& idle, std::size_t count, Node center,
                                                                      int w, int h) const {
  const sim::Mesh::Point c = mesh_.at(center);
  const int x0 = c.x - w / 2, y0 = c.y - h / 2;  // the lower-left corner: i − ⌈(w−1)/2⌉ is i − ⌊w/2⌋
  std::vector<Node> taken;
  std::size_t cost = 0;
  auto take = [&](int x, int y, std::size_t shell) {
    if (taken.size() == count || x < 0 || y < 0 || x >= mesh_.width() || y >= mesh_.height()) return;
    const Node n = mesh_.node({x, y});
    if (!idle[n]) return;
    taken.push_back(n);
    cost += shell;
  };
  for (int y = y0; y < y0 + h; ++y)
    for (int x = x0; x < x0 + w; ++x) take(x, y, 0);
  const int reach = std::max(mesh_.width(), mesh_.height());
  for (int s = 1; taken.size() < count && s <= reach + std::max(w, h); ++s) {
    const int left = x0 - s, right = x0 + w - 1 + s, bottom = y0 - s, top = y0 + h - 1 + s;
    const auto shell = static_cast<std::size_t>(s);
    auto rows = [&] {  // the bottom and top sides, corners excluded
      for (int x = left + 1; x < right; ++x) take(x, bottom, shell), take(x, top, shell);
    };
    auto columns = [&] {
      for (int y = bottom + 1; y < top; ++y) take(left, y, shell), take(right, y, shell);
    };
    if (right - left <= top - bottom) rows(), columns();  // the shorter sides first
    else columns(), rows();
    for (const auto& [x, y] : {std::pair{left, bottom}, {right, bottom}, {left, top}, {right, top}}) take(x, y, shell);
  }
  return {std::move(taken), cost};
}

std::vector<Node> MinimizeContention::place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>&) {
  if (idle.size() != mesh_.size()) throw std::invalid_argument("MC's mesh has " + std::to_string(mesh_.size()) + " nodes, the cluster " +
                                                               std::to_string(idle.size()));
  check(idle, count);
  if (count == 0) return {};
  std::vector<std::pair<int, int>> orientations;
  if (shape_ == Shape::Columns) {
    orientations.emplace_back(std::max(1, static_cast<int>(count) / mesh_.height()), mesh_.height());
  } else {
    const auto [w, h] = shape(count);
    orientations.emplace_back(w, h);
    if (w != h) orientations.emplace_back(h, w);
  }
  std::vector<Node> best;
  std::size_t least = std::numeric_limits<std::size_t>::max();
  for (const auto& [cw, ch] : orientations) {
    for (Node n = 0; n < idle.size(); ++n) {
      if (!idle[n]) continue;
      auto [nodes, cost] = around(idle, count, n, cw, ch);
      if (nodes.size() == count && cost < least) least = cost, best = std::move(nodes);
      if (least == 0) return best;
    }
  }
  return best;
}

}  // namespace dps::cluster
