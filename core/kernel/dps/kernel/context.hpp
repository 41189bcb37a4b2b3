// The execution context of the calling OS thread: which runtime, DPS thread and operation instance it is
// running. Set by the runtime around every atomic step (and by Application on the thread that built it),
// so free functions such as dps::compute and LargeArray can ask the right backend without globals.
#pragma once

namespace dps {
class Runtime;
class Thread;
class Activity;
}  // namespace dps

namespace dps::detail {

struct Context {
  Runtime* runtime = nullptr;
  Thread* thread = nullptr;
  Activity* activity = nullptr;
};

// Whether this OS thread runs a DPS thread it borrowed from a backend's own loop (the network
// thread of the TCP backend): what runs there must not block.
inline bool& on_borrowed_thread() noexcept {
  thread_local bool borrowed = false;
  return borrowed;
}

// Inline: it is read for every envelope allocated and every step resumed.
inline Context& current() noexcept {
  thread_local Context context;
  return context;
}

class ContextScope {
 public:
  explicit ContextScope(Context next) noexcept : saved_(current()) { current() = next; }
  ~ContextScope() { current() = saved_; }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  Context saved_;
};

}  // namespace dps::detail
