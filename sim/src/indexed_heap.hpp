// Indexed binary heaps of ids: `before` orders them, `position` is where each one sits (~0u: not in
// the heap), so an id can be moved or removed in O(log n). The engine keeps its events this way, and a
// network model the flows bound to each link.
#pragma once

#include <cstdint>
#include <vector>

namespace dps::sim::heap {

template <class Before, class Position>
void sift_up(std::vector<std::uint32_t>& heap, std::uint32_t i, Before before, Position position) {
  const std::uint32_t id = heap[i];
  while (i > 0) {
    const std::uint32_t parent = (i - 1) / 2;
    if (!before(id, heap[parent])) break;
    heap[i] = heap[parent];
    position(heap[i]) = i;
    i = parent;
  }
  heap[i] = id;
  position(id) = i;
}

template <class Before, class Position>
void sift_down(std::vector<std::uint32_t>& heap, std::uint32_t i, Before before, Position position) {
  const std::uint32_t id = heap[i];
  const auto n = static_cast<std::uint32_t>(heap.size());
  for (;;) {
    std::uint32_t child = 2 * i + 1;
    if (child >= n) break;
    if (child + 1 < n && before(heap[child + 1], heap[child])) ++child;
    if (!before(heap[child], id)) break;
    heap[i] = heap[child];
    position(heap[i]) = i;
    i = child;
  }
  heap[i] = id;
  position(id) = i;
}

template <class Before, class Position>
void insert(std::vector<std::uint32_t>& heap, std::uint32_t id, Before before, Position position) {
  position(id) = static_cast<std::uint32_t>(heap.size());
  heap.push_back(id);
  sift_up(heap, position(id), before, position);
}

template <class Before, class Position>
void remove(std::vector<std::uint32_t>& heap, std::uint32_t at, Before before, Position position) {
  position(heap[at]) = ~0u;
  const std::uint32_t last = heap.back();
  heap.pop_back();
  if (at == heap.size()) return;
  heap[at] = last;
  position(last) = at;
  sift_up(heap, at, before, position);
  sift_down(heap, position(last), before, position);
}

// Inserts `id`, or moves it after its key changed.
template <class Before, class Position>
void place(std::vector<std::uint32_t>& heap, std::uint32_t id, Before before, Position position) {
  if (position(id) == ~0u) return insert(heap, id, before, position);
  sift_up(heap, position(id), before, position);
  sift_down(heap, position(id), before, position);
}

}  // namespace dps::sim::heap
