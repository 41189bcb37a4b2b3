// Seeded draws that are the same on every machine: the standard distributions differ between
// libraries, and a seed must give the same workload and the same random placement everywhere.
#pragma once

#include <cmath>
#include <cstddef>
#include <random>

namespace dps::cluster::draws {

inline double uniform(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }  // [0, 1)
inline std::size_t below(std::mt19937_64& rng, std::size_t n) {  // [0, n)
  return static_cast<std::size_t>(uniform(rng) * static_cast<double>(n));
}
inline double exponential(std::mt19937_64& rng, double mean) { return -mean * std::log1p(-uniform(rng)); }

}  // namespace dps::cluster::draws
