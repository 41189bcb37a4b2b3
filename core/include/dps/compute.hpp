// dps::compute: run a computation, or, under partial direct execution (seed 004 §4, §7), only charge
// its estimated duration to the simulated clock.
//
//   dps::compute(std::chrono::microseconds(850), [&] { dgemm(a, b, c); });   // real: runs dgemm
//   double x = dps::compute(2e-3, [&] { return norm(v); });                  // PDEXEC: returns 0.0
//
// When the function is skipped its result is value-initialized, so use it only where the flow of the
// application does not depend on the values (the simulator only needs the flow).
#pragma once

#include <chrono>
#include <type_traits>
#include <utility>

namespace dps {

namespace detail {
bool compute_is_modelled() noexcept;  // the current thread runs in a PDEXEC simulation
void charge_current(double seconds);  // adds modelled time to the current atomic step
}  // namespace detail

template <class F>
auto compute(double estimate_seconds, F&& fn) -> std::invoke_result_t<F&> {
  using R = std::invoke_result_t<F&>;
  if (detail::compute_is_modelled()) {
    detail::charge_current(estimate_seconds);
    if constexpr (!std::is_void_v<R>)
      return R{};
    else
      return;
  }
  return std::forward<F>(fn)();
}

template <class Rep, class Period, class F>
auto compute(std::chrono::duration<Rep, Period> estimate, F&& fn) {
  return compute(std::chrono::duration<double>(estimate).count(), std::forward<F>(fn));
}

}  // namespace dps
