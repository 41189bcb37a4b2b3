// LocalBackend: strands on a TBB arena; nodes are labels.
#include "dps/local_backend.hpp"

#include "dps/runtime.hpp"
#include "dps/thread.hpp"

#include <tbb/global_control.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace dps {

namespace {

constexpr std::size_t kBudget = 512;  // messages a strand handles before it lets others run

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

}  // namespace

struct LocalBackend::Impl {
  Impl(std::size_t node_count, std::size_t worker_count)
      : workers(worker_count ? worker_count : std::max(1u, std::thread::hardware_concurrency())),
        executor(workers),
        start(std::chrono::steady_clock::now()) {
    if (node_count == 0) throw std::invalid_argument("an application needs at least one node");
    for (std::size_t n = 0; n < node_count; ++n) live.push_back(static_cast<NodeId>(n));
    next_node = static_cast<NodeId>(node_count);
  }

  void run(Thread& t) {
    if (t.run(kBudget)) {
      executor.enqueue([this, &t] { run(t); });
      return;
    }
    if (active.fetch_sub(1) == 1 && quiescing.load()) active.notify_all();
  }

  std::size_t workers;
  Executor executor;
  std::chrono::steady_clock::time_point start;
  Runtime* runtime = nullptr;
  mutable std::mutex mu;
  std::vector<NodeId> live;
  NodeId next_node = 0;
  std::atomic<std::int64_t> active{0};  // threads scheduled or running
  std::atomic<bool> quiescing{false};
};

LocalBackend::LocalBackend(std::size_t nodes, std::size_t workers) : impl_(std::make_unique<Impl>(nodes, workers)) {}

LocalBackend::~LocalBackend() { quiesce(); }

void LocalBackend::attach(Runtime& runtime) { impl_->runtime = &runtime; }

std::vector<NodeId> LocalBackend::nodes() const {
  std::lock_guard lock(impl_->mu);
  return impl_->live;
}

NodeId LocalBackend::add_node() {
  std::lock_guard lock(impl_->mu);
  impl_->live.push_back(impl_->next_node);
  return impl_->next_node++;
}

void LocalBackend::remove_node(NodeId node) {
  if (node == local_node()) throw std::invalid_argument("node 0 coordinates the application and cannot be removed");
  std::lock_guard lock(impl_->mu);
  auto it = std::find(impl_->live.begin(), impl_->live.end(), node);
  if (it == impl_->live.end()) throw std::invalid_argument("no node " + std::to_string(node));
  impl_->live.erase(it);
}

void LocalBackend::schedule(Thread& thread) {
  impl_->active.fetch_add(1);
  impl_->executor.enqueue([impl = impl_.get(), &thread] { impl->run(thread); });
}

void LocalBackend::send(NodeId from, Thread& to, Envelope* e) {
  if (TraceSink* sink = impl_->runtime->tracer()) {
    const double t = now();
    sink->transfer({from, to.node(), e->kind == Message::Data ? e->payload.wire_size() : sizeof(Envelope), t, t});
  }
  impl_->runtime->enqueue(to, e);
}

void LocalBackend::migrate(Thread& thread, NodeId to, std::string state) { thread.relocate(to, state); }

void LocalBackend::quiesce() {
  impl_->quiescing.store(true);
  for (std::int64_t n = impl_->active.load(); n != 0; n = impl_->active.load()) impl_->active.wait(n);
  impl_->quiescing.store(false);
}

double LocalBackend::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - impl_->start).count();
}

std::size_t LocalBackend::workers() const noexcept { return impl_->workers; }

}  // namespace dps
