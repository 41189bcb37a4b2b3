#include "dps/mesh.hpp"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace dps {

Mesh::Mesh(int width, int height, bool torus) : width_(width), height_(height), torus_(torus) {
  const int least = torus ? 3 : 1;
  if (width < least || height < least)
    throw std::invalid_argument(std::string("a ") + (torus ? "torus" : "mesh") + " needs sides of at least " + std::to_string(least) +
                                ", got " + std::to_string(width) + "x" + std::to_string(height));
}

Mesh Mesh::parse(const std::string& option, const std::string& text) {
  const auto x = text.find('x');
  std::size_t end1 = 0, end2 = 0;
  try {
    if (x == std::string::npos) throw std::invalid_argument(text);
    const int width = std::stoi(text.substr(0, x), &end1), height = std::stoi(text.substr(x + 1), &end2);
    if (end1 != x || end2 != text.size() - x - 1 || width < 1 || height < 1) throw std::invalid_argument(text);
    return Mesh(width, height);
  } catch (const std::logic_error&) {
    throw std::invalid_argument(option + " expects WIDTHxHEIGHT, both positive, got '" + text + "'");
  }
}

Mesh::Point Mesh::at(Node node) const {
  if (node >= size()) throw std::out_of_range("node " + std::to_string(node) + " is outside the " + std::to_string(width_) + "x" +
                                              std::to_string(height_) + " mesh");
  return {static_cast<int>(node % static_cast<Node>(width_)), static_cast<int>(node / static_cast<Node>(width_))};
}

Mesh::Node Mesh::node(Point p) const {
  if (p.x < 0 || p.y < 0 || p.x >= width_ || p.y >= height_)
    throw std::out_of_range("(" + std::to_string(p.x) + ", " + std::to_string(p.y) + ") is outside the " + std::to_string(width_) +
                            "x" + std::to_string(height_) + " mesh");
  return static_cast<Node>(p.y * width_ + p.x);
}

Mesh::Node Mesh::to(Link l) const {
  Point p = at(from(l));
  switch (static_cast<Direction>(l % 4)) {
    case East: p.x = torus_ ? (p.x + 1) % width_ : p.x + 1; break;
    case West: p.x = torus_ ? (p.x + width_ - 1) % width_ : p.x - 1; break;
    case North: p.y = torus_ ? (p.y + 1) % height_ : p.y + 1; break;
    case South: p.y = torus_ ? (p.y + height_ - 1) % height_ : p.y - 1; break;
  }
  return node(p);
}

int Mesh::steps(int from, int to, int size, bool& forward) const {
  if (!torus_) {
    forward = to >= from;
    return std::abs(to - from);
  }
  const int ahead = ((to - from) % size + size) % size;
  forward = ahead <= size - ahead;
  return forward ? ahead : size - ahead;
}

int Mesh::distance(Node a, Node b) const {
  const Point p = at(a), q = at(b);
  bool forward = false;
  return steps(p.x, q.x, width_, forward) + steps(p.y, q.y, height_, forward);
}

void Mesh::route(Node a, Node b, std::vector<Link>& hops) const {
  const Point p = at(a), q = at(b);
  bool east = false, north = false;
  const int dx = steps(p.x, q.x, width_, east), dy = steps(p.y, q.y, height_, north);
  int x = p.x, y = p.y;
  for (int k = 0; k < dx; ++k) {
    hops.push_back(link(static_cast<Node>(y * width_ + x), east ? East : West));
    x = east ? (x + 1 == width_ ? 0 : x + 1) : (x == 0 ? width_ - 1 : x - 1);  // wraps on a torus only
  }
  for (int k = 0; k < dy; ++k) {
    hops.push_back(link(static_cast<Node>(y * width_ + x), north ? North : South));
    y = north ? (y + 1 == height_ ? 0 : y + 1) : (y == 0 ? height_ - 1 : y - 1);
  }
}

}  // namespace dps
