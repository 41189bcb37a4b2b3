// Per-OS-thread execution context, and the small allocation and waiting hooks of the public headers.
#include "dps/kernel/context.hpp"
#include "dps/backend.hpp"
#include "dps/compute.hpp"
#include "dps/kernel/envelope.hpp"
#include "dps/future.hpp"
#include "dps/operation.hpp"
#include "dps/kernel/runtime.hpp"
#include "dps/kernel/thread.hpp"

#include <tbb/scalable_allocator.h>

#include <ctime>
#include <new>
#include <stdexcept>

namespace dps {

namespace detail {

bool payload_allocation_enabled() noexcept {
  Runtime* rt = current().runtime;
  return rt == nullptr || !rt->simulation() || rt->simulation()->allocates_payloads();
}

ComputePlan plan_compute(const void* site, double estimate) {
  const Context& c = current();
  if (!c.runtime || !c.thread || !c.runtime->simulation()) return ComputePlan::Run;  // main's code, or for real
  return c.runtime->simulation()->plan_compute(*c.thread, site, estimate);
}

void computed(const void* site, double estimate, double cpu_seconds) {
  const Context& c = current();
  if (c.runtime && c.thread && c.runtime->simulation())
    c.runtime->simulation()->computed(*c.thread, site, estimate, cpu_seconds);
}

}  // namespace detail

void charge(double seconds) {
  const detail::Context& c = detail::current();
  if (!c.runtime || !c.thread) return;
  if (SimulationHooks* sim = c.runtime->simulation(); sim && sim->models_compute()) sim->charge(*c.thread, seconds);
}

namespace detail {

double thread_cpu_seconds() noexcept {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// An operation that waits for a future makes its thread one that never runs on a borrowed OS thread
// (where nothing may block); if it runs on one right now, waiting would never end.
static void check_may_wait(bool ready) {
  Thread* t = current().thread;
  if (ready || !t) return;
  t->blocked();
  if (on_borrowed_thread())
    throw std::logic_error("an operation on " + t->name() +
                           " waits for a future on the network thread, which would never deliver it: from now on "
                           "this thread runs on the workers, where waiting works");
}

// Under simulation the world runs only while someone waits: the waiter drives it.
static SimulationHooks* simulation_of(Backend* driver) noexcept { return driver ? driver->simulation() : nullptr; }

void FutureStateBase::wait() {
  check_may_wait(ready());
  if (SimulationHooks* sim = simulation_of(driver_)) return sim->drive_until([this] { return ready(); });
  std::unique_lock lock(mu_);
  cv_.wait(lock, [this] { return ready_; });
}

bool FutureStateBase::wait_for(std::chrono::nanoseconds timeout) {
  check_may_wait(ready());
  if (SimulationHooks* sim = simulation_of(driver_)) {
    sim->drive_until([this] { return ready(); });
    return true;
  }
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return ready_; });
}

}  // namespace detail

// Envelopes and coroutine frames are allocated on one OS thread and freed on another all the time:
// a scalable allocator keeps that off the global heap lock.
namespace {
// Both hold max-aligned members (payload storage, coroutine frames); scalable_malloc only promises 8.
// ThreadSanitizer does not see tbbmalloc reuse memory across threads: its builds use the system heap.
void* allocate(std::size_t bytes) {
#if defined(__SANITIZE_THREAD__)
  return ::operator new (bytes, std::align_val_t{alignof(std::max_align_t)});
#else
  if (void* p = scalable_aligned_malloc(bytes, alignof(std::max_align_t))) return p;
  throw std::bad_alloc();
#endif
}
void release(void* p) noexcept {
#if defined(__SANITIZE_THREAD__)
  ::operator delete (p, std::align_val_t{alignof(std::max_align_t)});
#else
  scalable_aligned_free(p);
#endif
}
}  // namespace

// On a strand, envelopes come from and go back to its thread's cache first.
void* Envelope::operator new(std::size_t bytes) {
  if (Thread* t = detail::current().thread)
    if (void* p = t->envelope_cache().pop()) return p;
  return allocate(bytes);
}
void Envelope::operator delete(void* p) noexcept {
  if (Thread* t = detail::current().thread)
    if (t->envelope_cache().push(p)) return;
  release(p);
}

// A thread that retired or moved away runs little here any more: the blocks it kept go back.
void Thread::release_cached_envelopes() noexcept {
  while (void* p = envelope_cache_.pop()) release(p);
}

void* Step::promise_type::operator new(std::size_t bytes) { return allocate(bytes); }
void Step::promise_type::operator delete(void* p) noexcept { release(p); }

}  // namespace dps
