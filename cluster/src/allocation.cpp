#include "dps/cluster/allocation.hpp"

#include "draws.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace dps::cluster {

namespace {

void check(const std::vector<bool>& idle, std::size_t count) {
  if (static_cast<std::size_t>(std::count(idle.begin(), idle.end(), true)) < count)
    throw std::logic_error("an allocation of " + std::to_string(count) + " nodes with fewer idle");
}

// Hops from the nearest of `held` to the side × side block at `corner` (0: one of them is in it).
int distance_to(const Mesh& mesh, const std::vector<Node>& held, Mesh::Point corner, int side) {
  int least = std::numeric_limits<int>::max();
  for (const Node n : held) {
    const Mesh::Point p = mesh.at(n);
    const int dx = std::max({0, corner.x - p.x, p.x - (corner.x + side - 1)});
    const int dy = std::max({0, corner.y - p.y, p.y - (corner.y + side - 1)});
    least = std::min(least, dx + dy);
  }
  return least;
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

bool MultipleBuddy::all_idle(const std::vector<bool>& idle, Mesh::Point corner, int side) const {
  if (corner.x + side > mesh_.width() || corner.y + side > mesh_.height()) return false;
  for (int y = corner.y; y < corner.y + side; ++y)
    for (int x = corner.x; x < corner.x + side; ++x)
      if (!idle[mesh_.node({x, y})]) return false;
  return true;
}

// For a growth, a block nearest the job's nodes first; then a block whose parent is no longer whole
// (already split) before one that would split a whole one; the lowest corner, row by row, among equals.
bool MultipleBuddy::block(const std::vector<bool>& idle, int level, const std::vector<Node>& held, Mesh::Point& corner) const {
  const int side = 1 << level;
  std::pair<int, int> best{std::numeric_limits<int>::max(), 0};  // (distance, 0: split parent, 1: whole)
  for (int y = 0; y + side <= mesh_.height(); y += side)
    for (int x = 0; x + side <= mesh_.width(); x += side) {
      if (!all_idle(idle, {x, y}, side)) continue;
      const Mesh::Point parent{x & ~((2 * side) - 1), y & ~((2 * side) - 1)};
      const std::pair<int, int> rank{held.empty() ? 0 : distance_to(mesh_, held, {x, y}, side), all_idle(idle, parent, 2 * side) ? 1 : 0};
      if (rank < best) best = rank, corner = {x, y};
      if (best == std::pair{0, 0}) return true;
    }
  return best.first != std::numeric_limits<int>::max();
}

std::vector<Node> MultipleBuddy::place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>& held) {
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
      Mesh::Point corner;
      if (!block(free, level, held, corner)) {  // none of this size: four of the next smaller each
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
  const Mesh::Point c = mesh_.at(center);
  return shells(idle, count, {c.x - w / 2, c.y - h / 2}, w, h);  // the lower-left corner: i − ⌈(w−1)/2⌉ is i − ⌊w/2⌋
}

std::pair<std::vector<Node>, std::size_t> MinimizeContention::shells(const std::vector<bool>& idle, std::size_t count, Mesh::Point corner,
                                                                      int w, int h) const {
  const int x0 = corner.x, y0 = corner.y;
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

std::vector<Node> MinimizeContention::place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>& held) {
  if (idle.size() != mesh_.size()) throw std::invalid_argument("MC's mesh has " + std::to_string(mesh_.size()) + " nodes, the cluster " +
                                                               std::to_string(idle.size()));
  check(idle, count);
  if (count == 0) return {};
  if (!held.empty()) {  // a growth: shell 0 is the rectangle that bounds the job's nodes
    Mesh::Point low = mesh_.at(held.front()), high = low;
    for (const Node n : held) {
      const Mesh::Point p = mesh_.at(n);
      low = {std::min(low.x, p.x), std::min(low.y, p.y)}, high = {std::max(high.x, p.x), std::max(high.y, p.y)};
    }
    return shells(idle, count, low, high.x - low.x + 1, high.y - low.y + 1).first;
  }
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

bool Allocator::fits(const std::vector<bool>& idle, std::size_t count) const {
  return static_cast<std::size_t>(std::count(idle.begin(), idle.end(), true)) >= count;
}

namespace {

// Busy nodes in any rectangle in O(1): busy[y][x] summed over [0, x) × [0, y).
class BusyCounts {
 public:
  BusyCounts(const Mesh& mesh, const std::vector<bool>& idle) : width_(mesh.width() + 1), sums_(static_cast<std::size_t>(width_) * static_cast<std::size_t>(mesh.height() + 1)) {
    for (int y = 0; y < mesh.height(); ++y)
      for (int x = 0; x < mesh.width(); ++x)
        at(x + 1, y + 1) = at(x, y + 1) + at(x + 1, y) - at(x, y) + (idle[mesh.node({x, y})] ? 0 : 1);
  }
  int in(int x, int y, int w, int h) const { return at(x + w, y + h) - at(x, y + h) - at(x + w, y) + at(x, y); }

 private:
  int& at(int x, int y) { return sums_[static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(x)]; }
  int at(int x, int y) const { return sums_[static_cast<std::size_t>(y) * static_cast<std::size_t>(width_) + static_cast<std::size_t>(x)]; }
  int width_;
  std::vector<int> sums_;
};

}  // namespace

bool Contiguous::pick(const std::vector<bool>& idle, std::size_t count, Rectangle& chosen) const {
  if (idle.size() != mesh_.size())
    throw std::invalid_argument(name() + "'s mesh has " + std::to_string(mesh_.size()) + " nodes, the cluster " + std::to_string(idle.size()));
  const int width = mesh_.width(), height = mesh_.height();
  const auto n = static_cast<int>(count);
  const auto [w, h] = MinimizeContention::shape(count);
  const BusyCounts busy(mesh_, idle);
  // The request's rectangle in either orientation; only when neither fits the mesh, whole columns or rows.
  for (const auto& candidates : {std::vector<std::pair<int, int>>{{w, h}, {h, w}},
                                 std::vector<std::pair<int, int>>{{(n + height - 1) / height, height}, {width, (n + width - 1) / width}}}) {
    std::vector<std::pair<int, int>> shapes;
    for (const auto& s : candidates)
      if (s.first <= width && s.second <= height && std::find(shapes.begin(), shapes.end(), s) == shapes.end()) shapes.push_back(s);
    if (shapes.empty()) continue;
    int best = -1;
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x)
        for (const auto& [sw, sh] : shapes) {
          if (x + sw > width || y + sh > height || busy.in(x, y, sw, sh) != 0) continue;
          if (fit_ == Fit::First) {
            chosen = {{x, y}, sw, sh};
            return true;
          }
          // Its border: the busy nodes around it, and the mesh's edges (each counted as a node).
          int touching = 0;
          for (const auto& [bx, by, bw, bh] : {std::array{x, y - 1, sw, 1}, {x, y + sh, sw, 1}, {x - 1, y, 1, sh}, {x + sw, y, 1, sh}}) {
            const bool outside = bx < 0 || by < 0 || bx + bw > width || by + bh > height;
            touching += outside ? bw * bh : busy.in(bx, by, bw, bh);
          }
          if (touching > best) best = touching, chosen = {{x, y}, sw, sh};
        }
    return best >= 0;
  }
  return false;
}

bool Contiguous::fits(const std::vector<bool>& idle, std::size_t count) const {
  Rectangle unused;
  return count == 0 || pick(idle, count, unused);
}

std::vector<Node> Contiguous::place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>& held) {
  check(idle, count);
  std::vector<Node> nodes;
  if (count == 0) return nodes;
  Rectangle r;
  if (pick(idle, count, r)) {
    for (int y = r.corner.y; y < r.corner.y + r.h; ++y)
      for (int x = r.corner.x; x < r.corner.x + r.w && nodes.size() < count; ++x) nodes.push_back(mesh_.node({x, y}));
    return nodes;
  }
  if (held.empty()) throw std::logic_error(name() + " was asked for " + std::to_string(count) + " nodes that fit no idle rectangle");
  // A growth with no rectangle left: the idle nodes nearest the job's (by the sum of distances).
  std::vector<std::pair<std::size_t, Node>> near;
  for (Node n = 0; n < idle.size(); ++n) {
    if (!idle[n]) continue;
    std::size_t d = 0;
    for (const Node h : held) d += static_cast<std::size_t>(mesh_.distance(n, h));
    near.emplace_back(d, n);
  }
  std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(count), near.end());
  for (std::size_t k = 0; k < count; ++k) nodes.push_back(near[k].second);
  return nodes;
}

std::vector<Node> Plas::place(const std::vector<bool>& idle, std::size_t count, const std::vector<Node>& held) {
  check(idle, count);
  const int width = mesh_.width(), height = mesh_.height(), middle = height / 2;
  // The running jobs' balance: their nodes above the middle I/O link minus those below.
  long balance = 0;
  for (Node n = 0; n < idle.size(); ++n)
    if (!idle[n]) balance += mesh_.at(n).y >= middle ? 1 : -1;
  // Each side's nodes in the order PLAS takes them: column by column from the west, nearest the middle first.
  std::vector<Node> above, below;
  for (int x = 0; x < width; ++x) {
    for (int y = middle; y < height; ++y) above.push_back(mesh_.node({x, y}));
    for (int y = middle - 1; y >= 0; --y) below.push_back(mesh_.node({x, y}));
  }
  std::vector<bool> free = idle;
  // A side's next node: its first idle one in PLAS's order, or for a growth the idle one nearest the
  // job's nodes (the first in that order among the nearest); side.size() when none is left.
  std::size_t first_above = 0, first_below = 0;  // nodes are only taken, so the first idle one only moves on
  auto next = [&](const std::vector<Node>& side, std::size_t& first) {
    while (first < side.size() && !free[side[first]]) ++first;
    if (held.empty()) return first;
    std::size_t pick = side.size();
    int nearest = std::numeric_limits<int>::max();
    for (std::size_t k = first; k < side.size(); ++k) {
      if (!free[side[k]]) continue;
      const int d = distance_to(mesh_, held, mesh_.at(side[k]), 1);
      if (d < nearest) nearest = d, pick = k;
    }
    return pick;
  };
  std::vector<Node> nodes;
  while (nodes.size() < count) {
    const std::size_t a = next(above, first_above), b = next(below, first_below);
    const bool has_above = a < above.size(), has_below = b < below.size();
    if (has_above && (balance <= 0 || !has_below)) {
      nodes.push_back(above[a]);
      ++balance;
    } else {
      nodes.push_back(below[b]);
      --balance;
    }
    free[nodes.back()] = false;
  }
  return nodes;
}

std::unique_ptr<Allocator> allocator_named(const std::string& option, const std::string& name, const Mesh* mesh,
                                           std::uint64_t seed) {
  if (name == "paging") return std::make_unique<Paging>();
  if (name == "random") return std::make_unique<RandomAllocation>(seed);
  static const std::vector<std::string> on_mesh{"first-fit", "best-fit", "mbs", "mc", "mc-elongated", "plas"};
  if (std::find(on_mesh.begin(), on_mesh.end(), name) == on_mesh.end())
    throw std::invalid_argument(option + " expects paging, random, first-fit, best-fit, mbs, mc, mc-elongated or plas, got '" + name + "'");
  if (!mesh) throw std::invalid_argument(option + " " + name + " places jobs on a mesh: give --mesh WIDTHxHEIGHT");
  if (name == "first-fit") return std::make_unique<Contiguous>(*mesh, Contiguous::Fit::First);
  if (name == "best-fit") return std::make_unique<Contiguous>(*mesh, Contiguous::Fit::Best);
  if (name == "mbs") return std::make_unique<MultipleBuddy>(*mesh);
  if (name == "plas") return std::make_unique<Plas>(*mesh);
  return std::make_unique<MinimizeContention>(*mesh, name == "mc" ? MinimizeContention::Shape::Square : MinimizeContention::Shape::Columns);
}

}  // namespace dps::cluster
