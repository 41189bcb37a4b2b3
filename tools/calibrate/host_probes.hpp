// What calibrate measures inside one node process, of the host it runs on: no DPS here, only the
// machine (its clocks, CPUs, quota and memory). main.cpp asks each node for these through its probes.
//
//   const double cpu = calibrate::clock_seconds(CLOCK_THREAD_CPUTIME_ID);
//   const unsigned cores = calibrate::usable_cores(iterations);   // a quota of half a core: 1
//   const calibrate::Quota q = calibrate::find_quota(0.5);         // {0, 0}: none seen
#pragma once

#include <time.h>

#include <cstddef>
#include <cstdint>

namespace calibrate {

double clock_seconds(clockid_t clock);

// This process's machine: the host name and the network namespace (the namespaced hosts of
// scripts/netns-cluster share a host name).
std::uint64_t host_key();

// The demo's integral: floating-point work that stays in registers, `iterations` steps of it.
double loop(long iterations);

// The cores this process gets: the loop on every CPU it may run on at once, as CPU seconds per wall
// second. That counts a cgroup quota too (whose files a network namespace's /sys does not show).
unsigned usable_cores(long iterations);

// A CPU quota (a cgroup's cpu.max, a container's CPU limit) under a core shows as stalls while a
// thread keeps busy: the host runs, is throttled, runs again. The kernel checks the budget at its
// timer tick, so the runs last a tick or more and the pattern is coarser than the quota's period
// (at HZ = 250 a quarter of a core per 4 ms runs 4 ms and stalls 12): what the model needs is the
// pattern seen, its mean period (stall to stall) and the share of it the thread runs. {0, 0} when
// there are few stalls (other processes preempt a thread too) or they take under a tenth of the time.
struct Quota {
  double period = 0, share = 0;
};
Quota find_quota(double seconds);

// What a received byte costs beyond moving it when it lands in memory the process has not used (an
// application keeps what it receives, so its large messages land in fresh pages): a copy into
// freshly mapped pages, their unmapping included, less the same copy into pages already touched;
// CPU seconds per byte, the median of several rounds.
double first_touch_per_byte(std::size_t bytes);

// Time slicing: two busy threads held to one CPU take turns. `slice`: the median turn; `switch_cost`:
// the median gap from one's turn to the other's, less the median gap a lone busy thread sees (the
// timer's interrupt, which every thread pays and the node's speed counts). Each is measured
// `seconds`; {0, 0} when the threads cannot be held to one CPU or do not take turns. Medians, so
// that a CPU quota's stalls do not count.
struct Slicing {
  double slice = 0, switch_cost = 0;
};
Slicing time_slicing(double seconds);

}  // namespace calibrate
