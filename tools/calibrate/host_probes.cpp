// What calibrate measures inside one node process, of the host it runs on (host_probes.hpp).
#include "host_probes.hpp"

#include "median.hpp"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace calibrate {

double clock_seconds(clockid_t clock) {
  timespec ts{};
  ::clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

std::uint64_t host_key() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  struct stat ns{};
  const std::uint64_t inode = ::stat("/proc/self/ns/net", &ns) == 0 ? ns.st_ino : 0;
  return std::hash<std::string>{}(name) ^ (inode * 0x9e3779b97f4a7c15ULL);
}

double loop(long iterations) {
  const double h = 1.0 / static_cast<double>(iterations);
  double sum = 0;
  for (long i = 0; i < iterations; ++i) {
    const double x = (static_cast<double>(i) + 0.5) * h;
    sum += 4.0 / (1.0 + x * x);
  }
  return sum * h;
}

unsigned usable_cores(long iterations) {
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cpus = ::sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  if (cpus <= 1) return 1;
  std::vector<double> cpu(static_cast<std::size_t>(cpus));
  const double wall = clock_seconds(CLOCK_MONOTONIC);
  {
    std::vector<std::jthread> threads;
    for (double& used : cpu)
      threads.emplace_back([&used, iterations] {
        volatile double sum = loop(iterations);
        (void)sum;
        used = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
      });
  }
  double total = 0;
  for (double used : cpu) total += used;
  const double parallel = total / (clock_seconds(CLOCK_MONOTONIC) - wall);
  return static_cast<unsigned>(std::clamp(std::lround(parallel), 1L, static_cast<long>(cpus)));
}

Quota find_quota(double seconds) {
  std::vector<double> starts, lengths;
  const double begin = clock_seconds(CLOCK_MONOTONIC);
  for (double last = begin, now = begin; now - begin < seconds; last = now) {
    now = clock_seconds(CLOCK_MONOTONIC);
    if (now - last > 100e-6) {
      starts.push_back(last);
      lengths.push_back(now - last);
    }
  }
  if (starts.size() < 8) return {};
  // From the first stall's start to the last's: whole periods, each with one stall.
  const double span = starts.back() - starts.front();
  double stalled = 0;
  for (std::size_t i = 0; i + 1 < lengths.size(); ++i) stalled += lengths[i];
  const double share = 1 - stalled / span;
  if (share > 0.9 || share <= 0) return {};
  return {span / static_cast<double>(starts.size() - 1), share};
}

double first_touch_per_byte(std::size_t bytes) {
  constexpr int kRounds = 9;
  const std::vector<char> from(bytes, 1);
  std::vector<char> warm(bytes, 0);
  std::vector<double> fresh_s, warm_s;
  for (int round = 0; round < kRounds; ++round) {
    double start = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
    void* fresh = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (fresh == MAP_FAILED) throw std::runtime_error("cannot map " + std::to_string(bytes) + " bytes");
    std::memcpy(fresh, from.data(), bytes);
    ::munmap(fresh, bytes);
    fresh_s.push_back(clock_seconds(CLOCK_THREAD_CPUTIME_ID) - start);
    start = clock_seconds(CLOCK_THREAD_CPUTIME_ID);
    std::memcpy(warm.data(), from.data(), bytes);
    warm_s.push_back(clock_seconds(CLOCK_THREAD_CPUTIME_ID) - start);
  }
  return std::max(0.0, median(fresh_s) - median(warm_s)) / static_cast<double>(bytes);
}

namespace {

struct Run {
  double start, end;
  int thread;
};

// `threads` busy threads held to this process's first CPU for `seconds`: their runs (no gap over
// 5 us between two clock readings), in time order. Empty when the threads cannot be held to it.
std::vector<Run> busy_runs(int threads, double seconds) {
  cpu_set_t allowed, one;
  CPU_ZERO(&allowed);
  CPU_ZERO(&one);
  if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) return {};
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &allowed)) {
      CPU_SET(cpu, &one);
      break;
    }
  std::vector<std::vector<Run>> runs(static_cast<std::size_t>(threads));
  std::atomic<bool> held{true};
  const double begin = clock_seconds(CLOCK_MONOTONIC);
  {
    std::vector<std::jthread> busy;
    for (int t = 0; t < threads; ++t)
      busy.emplace_back([&, t] {
        if (::pthread_setaffinity_np(::pthread_self(), sizeof one, &one) != 0) held = false;
        auto& mine = runs[static_cast<std::size_t>(t)];
        double start = clock_seconds(CLOCK_MONOTONIC), last = start;
        for (double now = start; now - begin < seconds; last = now) {
          now = clock_seconds(CLOCK_MONOTONIC);
          if (now - last > 5e-6) {
            mine.push_back({start, last, t});
            start = now;
          }
        }
        mine.push_back({start, last, t});
      });
  }
  if (!held) return {};
  std::vector<Run> all;
  for (const auto& mine : runs) all.insert(all.end(), mine.begin(), mine.end());
  std::sort(all.begin(), all.end(), [](const Run& a, const Run& b) { return a.start < b.start; });
  return all;
}

}  // namespace

Slicing time_slicing(double seconds) {
  const std::vector<Run> lone = busy_runs(1, seconds), two = busy_runs(2, seconds);
  if (lone.empty() || two.empty()) return {};
  std::vector<double> turns, switches, interruptions;
  double turn_start = two.front().start;
  for (std::size_t i = 1; i < two.size(); ++i) {
    if (two[i].start < two[i - 1].end) return {};       // they ran at once: not one CPU after all
    if (two[i].thread == two[i - 1].thread) continue;  // the same turn, interrupted
    switches.push_back(two[i].start - two[i - 1].end);
    if (turn_start > two.front().start) turns.push_back(two[i - 1].end - turn_start);  // a whole turn
    turn_start = two[i].start;
  }
  if (turns.size() < 4) return {};  // the threads did not take turns
  for (std::size_t i = 1; i < lone.size(); ++i) interruptions.push_back(lone[i].start - lone[i - 1].end);
  // A switch comes with the timer's interrupt, which a lone thread pays too: the lone thread's gaps,
  // when they come at least once a turn. Rarer ones are something else; the timer's then costs
  // less than the 5 us a gap must last to be seen.
  const bool timer_seen = static_cast<double>(interruptions.size()) >= static_cast<double>(turns.size()) / 2;
  const double timer = timer_seen ? median(interruptions) : 0.0;
  return {median(turns), std::max(0.0, median(switches) - timer)};
}

}  // namespace calibrate
