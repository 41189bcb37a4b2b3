// Tours: their length, their check, and a good first one (nearest neighbour, 2-opt and Or-opt moves
// until none improves, then iterated local search), the upper bound the exact search starts from.
//
//   tsp::Tour t = tsp::initial_tour(instance);
//   long length = tsp::tour_length(instance, t);
#pragma once

#include "tsplib.hpp"

#include <vector>

namespace tsp {

using Tour = std::vector<int>;  // the cities in visiting order, each once

long tour_length(const Instance& instance, const Tour& tour);
// Throws std::logic_error unless `tour` visits every city of the instance exactly once.
void check_tour(const Instance& instance, const Tour& tour);

Tour nearest_neighbour(const Instance& instance, int start);
// 2-opt (reverse a segment) and Or-opt (move a segment of 1–3 cities, either way round) moves, first
// improvement, until neither finds one.
void improve(const Instance& instance, Tour& tour);
// The best of improved nearest-neighbour tours from up to `starts` first cities.
Tour initial_tour(const Instance& instance, int starts = 10);
// Iterated local search: `kicks` times, a double bridge (three cuts, the segments between reordered:
// what 2-opt and Or-opt cannot undo) then improve(); kept when no longer. The same seed, the same tour.
void iterated_local_search(const Instance& instance, Tour& tour, int kicks, unsigned seed);

}  // namespace tsp
