// Tours: length, check, nearest neighbour, 2-opt and Or-opt.
#include "tour.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

namespace tsp {

long tour_length(const Instance& in, const Tour& tour) {
  long length = 0;
  for (std::size_t k = 0; k < tour.size(); ++k) length += in.distance(tour[k], tour[(k + 1) % tour.size()]);
  return length;
}

void check_tour(const Instance& in, const Tour& tour) {
  if (tour.size() != static_cast<std::size_t>(in.n))
    throw std::logic_error("the tour has " + std::to_string(tour.size()) + " cities, the instance " + std::to_string(in.n));
  std::vector<bool> seen(tour.size());
  for (int city : tour) {
    if (city < 0 || city >= in.n || seen[static_cast<std::size_t>(city)])
      throw std::logic_error("the tour visits city " + std::to_string(city) + " twice or it is not a city");
    seen[static_cast<std::size_t>(city)] = true;
  }
}

Tour nearest_neighbour(const Instance& in, int start) {
  Tour tour{start};
  std::vector<bool> visited(static_cast<std::size_t>(in.n));
  visited[static_cast<std::size_t>(start)] = true;
  for (int k = 1; k < in.n; ++k) {
    int best = -1;
    for (int c = 0; c < in.n; ++c)
      if (!visited[static_cast<std::size_t>(c)] && (best < 0 || in.distance(tour.back(), c) < in.distance(tour.back(), best)))
        best = c;
    visited[static_cast<std::size_t>(best)] = true;
    tour.push_back(best);
  }
  return tour;
}

namespace {

// Reverses tour[i..j] if that shortens it: edges (i-1, i) and (j, j+1) become (i-1, j) and (i, j+1).
bool two_opt(const Instance& in, Tour& t) {
  const int n = in.n;
  const auto at = [&](int k) { return t[static_cast<std::size_t>((k + n) % n)]; };
  for (int i = 1; i < n; ++i)
    for (int j = i + 1; j < n; ++j) {
      const int a = at(i - 1), b = at(i), c = at(j), d = at(j + 1);
      if (a == c || b == d) continue;
      if (in.distance(a, c) + in.distance(b, d) < in.distance(a, b) + in.distance(c, d)) {
        std::reverse(t.begin() + i, t.begin() + j + 1);
        return true;
      }
    }
  return false;
}

// Moves the segment tour[i..i+len-1] between two other neighbours, as it is or reversed.
bool or_opt(const Instance& in, Tour& t) {
  const int n = in.n;
  for (int len = 1; len <= 3 && len + 2 <= n; ++len)
    for (int i = 0; i < n; ++i) {
      // The segment s..e, preceded by p and followed by q.
      const auto city = [&](int k) { return t[static_cast<std::size_t>(((k % n) + n) % n)]; };
      const int p = city(i - 1), s = city(i), e = city(i + len - 1), q = city(i + len);
      const long removed = in.distance(p, s) + in.distance(e, q) - in.distance(p, q);
      for (int k = i + len; k < i + n - 1; ++k) {  // insert between city(k) and city(k + 1), outside the segment
        const int x = city(k), y = city(k + 1);
        const long forward = in.distance(x, s) + in.distance(e, y) - in.distance(x, y);
        const long backward = in.distance(x, e) + in.distance(s, y) - in.distance(x, y);
        if (std::min(forward, backward) >= removed) continue;
        Tour moved;
        moved.reserve(t.size());
        for (int m = i + len; m <= k; ++m) moved.push_back(city(m));  // q .. x
        for (int m = 0; m < len; ++m) moved.push_back(city(forward < backward ? i + m : i + len - 1 - m));
        for (int m = k + 1; m < i + n; ++m) moved.push_back(city(m));  // y .. p
        t = std::move(moved);
        return true;
      }
    }
  return false;
}

}  // namespace

void improve(const Instance& in, Tour& tour) {
  while (two_opt(in, tour) || or_opt(in, tour)) {
  }
}

Tour initial_tour(const Instance& in, int starts) {
  Tour best;
  long best_length = 0;
  for (int s = 0; s < std::min(starts, in.n); ++s) {
    Tour t = nearest_neighbour(in, s * in.n / std::min(starts, in.n));
    improve(in, t);
    if (const long length = tour_length(in, t); best.empty() || length < best_length) best = std::move(t), best_length = length;
  }
  return best;
}

void iterated_local_search(const Instance& in, Tour& tour, int kicks, unsigned seed) {
  long length = tour_length(in, tour);
  std::mt19937 random(seed);
  std::uniform_int_distribution<int> at(1, in.n - 1);
  for (int k = 0; k < kicks && in.n >= 8; ++k) {
    int cut[3] = {at(random), at(random), at(random)};
    std::sort(cut, cut + 3);
    if (cut[0] == cut[1] || cut[1] == cut[2]) continue;
    // The double bridge: A B C D becomes A D C B.
    Tour t(tour.begin(), tour.begin() + cut[0]);
    t.insert(t.end(), tour.begin() + cut[2], tour.end());
    t.insert(t.end(), tour.begin() + cut[1], tour.begin() + cut[2]);
    t.insert(t.end(), tour.begin() + cut[0], tour.begin() + cut[1]);
    improve(in, t);
    if (const long l = tour_length(in, t); l <= length) tour = std::move(t), length = l;
  }
}

}  // namespace tsp
