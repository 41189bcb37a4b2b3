// Strands' default worker count: the CPUs this process may use.
#include "dps/kernel/strands.hpp"

#include <sched.h>

namespace dps::detail {

unsigned usable_cpus() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return std::max(1u, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
}

}  // namespace dps::detail
