// Strands: the OS threads that run DPS threads for the backends of real runs, as the worker policy
// says (worker_policy.hpp): a DPS thread with work is run for a budget of steps, then requeued, so
// that all of them progress; an urgent one goes before those waiting. The threads are a TBB arena of
// its own, or plain threads under ThreadSanitizer, which cannot see inside uninstrumented TBB.
//
//   detail::Strands strands(2);
//   strands.schedule(thread);     // thread.run(budget) until it has no more work
//   strands.schedule(thread, Priority::Urgent);  // before the threads already waiting
//   strands.run_here(thread);     // a few steps on this OS thread first (a quick thread)
//   strands.quiesce();            // until nothing is scheduled or running
#pragma once

#include "dps/kernel/context.hpp"
#include "dps/kernel/epochs.hpp"
#include "dps/kernel/worker_policy.hpp"
#include "dps/priority.hpp"
#include "dps/kernel/thread.hpp"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace dps::detail {

// The CPUs this process may run on (its affinity: taskset, a cpuset), at least 1: the workers it
// needs. A process pinned to one CPU of a large machine that ran one per CPU would spend its CPU on
// idle workers' spinning.
unsigned usable_cpus() noexcept;

#if !defined(__SANITIZE_THREAD__)
// Runs strands on a TBB arena of its own.
class Executor {
 public:
  explicit Executor(std::size_t workers)
      // TBB keeps hardware_concurrency - 1 workers by default; the arena needs all of its own.
      : parallelism_(tbb::global_control::max_allowed_parallelism, workers + 1), arena_(static_cast<int>(workers), 0) {}
  template <class F>
  void enqueue(F&& f) {
    arena_.enqueue(std::forward<F>(f));
  }

 private:
  tbb::global_control parallelism_;
  tbb::task_arena arena_;
};
#else
// ThreadSanitizer cannot see the synchronization inside (uninstrumented) TBB, so sanitizer builds run
// strands on plain threads: the kernel it checks is the same.
class Executor {
 public:
  explicit Executor(std::size_t workers) {
    for (std::size_t i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }
  ~Executor() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
  }
  void enqueue(std::function<void()> f) {
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::move(f));
    }
    cv_.notify_one();
  }

 private:
  void work() {
    for (;;) {
      std::function<void()> task;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return stop_ || !tasks_.empty(); });
        if (tasks_.empty()) return;
        task = std::move(tasks_.front());
        tasks_.pop_front();
      }
      task();
    }
  }
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()> > tasks_;
  bool stop_ = false;
  std::vector<std::thread> threads_;
};
#endif

class Strands {
 public:
  explicit Strands(std::size_t workers) : workers_(workers ? workers : usable_cpus()), executor_(workers_) {}

  Strands(const Strands&) = delete;
  Strands& operator=(const Strands&) = delete;
  ~Strands() { quiesce(); }  // no task of the executor may outlive what it points to

  std::size_t workers() const noexcept { return workers_; }

  void schedule(Thread& t, Priority priority = Priority::Normal) {
    if (priority == Priority::Normal) return enqueue(t);
    active_.fetch_add(1);
    {
      std::lock_guard lock(urgent_mu_);
      urgent_.push_back(&t);
      urgent_waiting_.fetch_add(1, std::memory_order_relaxed);
    }
    executor_.enqueue([this] {  // a worker free or finishing a run takes it, unless a task before did
      run_urgent();
      leave();
    });
  }

  // Runs a quick thread on the calling OS thread for a few steps (no thread switch between a
  // message's arrival and its handling), then on the strands if it has more; false when it
  // scheduled it as usual instead (not quick, or called from inside such a run).
  bool run_here(Thread& t, Priority priority = Priority::Normal) {
    bool& borrowed = on_borrowed_thread();
    if (!worker_policy::runs_inline(t, borrowed)) {
      schedule(t, priority);
      return false;
    }
    active_.fetch_add(1);
    borrowed = true;
    struct Done {
      Strands& strands;
      bool& borrowed;
      ~Done() {
        borrowed = false;
        strands.leave();
      }
    } done{*this, borrowed};
    run(t, worker_policy::budget(worker_policy::Turn::Inline));
    return true;
  }

  void quiesce() {
    for (std::int64_t n = active_.load(); n != 0; n = active_.load()) active_.wait(n);
  }

 private:
  void run(Thread& t, std::size_t budget = worker_policy::budget(worker_policy::Turn::Worker)) {
    EpochGuard guard;  // what its steps route to, and `t` itself, stay until the run ends
    const auto start = std::chrono::steady_clock::now();
    const bool more = t.run(budget, &urgent_waiting_);
    t.ran_for(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (more) enqueue(t);
  }

  // Every task that runs a thread first runs the urgent ones waiting: they overtake the queue's order
  // without a second queue in the executor. Their own tasks then find nothing left.
  void enqueue(Thread& t) {
    active_.fetch_add(1);
    executor_.enqueue([this, &t] {
      run_urgent();
      run(t);
      leave();
    });
  }
  // A task's (or an inline run's) last touch of this object: once the count is zero, quiesce() may
  // return and the strands be destroyed. (Waking the waiter needs only the address, not the object.)
  void leave() {
    if (active_.fetch_sub(1) == 1) active_.notify_all();
  }
  void run_urgent() {
    while (urgent_waiting_.load(std::memory_order_relaxed) > 0) {  // a hint: the lock decides
      Thread* t = nullptr;
      {
        std::lock_guard lock(urgent_mu_);
        if (urgent_.empty()) return;
        t = urgent_.front();
        urgent_.pop_front();
        urgent_waiting_.fetch_sub(1, std::memory_order_relaxed);
      }
      run(*t);
    }
  }

  std::size_t workers_;
  std::mutex urgent_mu_;  // rare: only urgent operations' inputs take it
  std::deque<Thread*> urgent_;
  std::atomic<std::size_t> urgent_waiting_{0};
  // Tasks given to the executor and not yet finished, and inline runs: not threads, since an urgent
  // thread's task may find it run by a task before it, and must still not outlive the strands.
  std::atomic<std::int64_t> active_{0};
  Executor executor_;  // last: destroyed first (plain threads are joined before the rest goes)
};

}  // namespace dps::detail
