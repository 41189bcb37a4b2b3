// dps::compute: run a computation, or, under partial direct execution (Schaeli, Gerlach & Hersch, "A simulator for
// adaptive parallel applications", §4, §7), only charge its estimated duration to the simulated clock.
//
//   dps::compute(std::chrono::microseconds(850), [&] { dgemm(a, b, c); });   // real: runs dgemm
//   double x = dps::compute(2e-3, [&] { return norm(v); });                  // PDEXEC: returns 0.0
//
// When the function is skipped its result is value-initialized, so use it only where the flow of the
// application does not depend on the values (the simulator only needs the flow). A simulator that
// measures then reuses (Schaeli et al., §7) times the first calls of each call site with each estimate and
// charges their mean for the later ones.
//
// Where the flow does depend on the values (a bound that prunes a search), the computation runs for
// real in every backend; under partial direct execution dps::charge adds what a model says it costs,
// or dps::measured what it took here (work the model does not cover):
//
//   auto ran = frontier.run(search, budget);                   // always for real
//   dps::charge(cost_per_tree * ran.trees);
//   dps::measured([&] { improve(tour); });
#pragma once

#include <chrono>
#include <cstdint>
#include <type_traits>
#include <utility>

namespace dps {

// How the backend wants one dps::compute call run.
enum class ComputePlan : std::uint8_t {
  Run,      // for real
  Measure,  // for real, its thread CPU time reported to the backend
  Skip,     // not at all: the backend charged a duration instead
};

namespace detail {
ComputePlan plan_compute(const void* site, double estimate);  // asks the current thread's backend
void computed(const void* site, double estimate, double cpu_seconds);
double thread_cpu_seconds() noexcept;
}  // namespace detail

// Under partial direct execution, charges the calling operation `seconds` of computation; elsewhere
// nothing (a real run takes the time it takes, direct execution measures it).
void charge(double seconds);

// Runs `fn`; under partial direct execution charges the thread CPU time it took, as direct execution
// would have.
template <class F>
auto measured(F&& fn) -> std::invoke_result_t<F&> {
  const double start = detail::thread_cpu_seconds();
  if constexpr (std::is_void_v<std::invoke_result_t<F&>>) {
    fn();
    charge(detail::thread_cpu_seconds() - start);
  } else {
    auto result = fn();
    charge(detail::thread_cpu_seconds() - start);
    return result;
  }
}

template <class F>
auto compute(double estimate_seconds, F&& fn) -> std::invoke_result_t<F&> {
  using R = std::invoke_result_t<F&>;
  static char site;  // one per call site (each lambda is a type of its own); mutable, so never merged
  switch (detail::plan_compute(&site, estimate_seconds)) {
    case ComputePlan::Skip:
      if constexpr (!std::is_void_v<R>)
        return R{};
      else
        return;
    case ComputePlan::Measure: {
      const double start = detail::thread_cpu_seconds();
      if constexpr (std::is_void_v<R>) {
        fn();
        detail::computed(&site, estimate_seconds, detail::thread_cpu_seconds() - start);
        return;
      } else {
        R result = fn();
        detail::computed(&site, estimate_seconds, detail::thread_cpu_seconds() - start);
        return result;
      }
    }
    case ComputePlan::Run: break;
  }
  return std::forward<F>(fn)();
}

template <class Rep, class Period, class F>
auto compute(std::chrono::duration<Rep, Period> estimate, F&& fn) {
  return compute(std::chrono::duration<double>(estimate).count(), std::forward<F>(fn));
}

}  // namespace dps
