// NodeProcess: the clock, the log, and the runtime the backend's parts serve.
#include "node_process.hpp"

#include <cstdio>
#include <iostream>

namespace dps::net {

std::string seconds_text(double s) {
  char text[32];
  std::snprintf(text, sizeof text, "%g s", s);
  return text;
}

double NodeProcess::now() const noexcept {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count() +
         clock_offset_.load(std::memory_order_relaxed);
}

void NodeProcess::log(const std::string& line) const {
  std::cerr << "dps: node " + std::to_string(me) + ": " + line + "\n" << std::flush;
}

void NodeProcess::attach(Runtime& rt) {
  {
    std::lock_guard lock(mu);
    runtime = &rt;
    kernel = &rt;
  }
  changed.notify_all();
}

void NodeProcess::detach() {
  {
    std::lock_guard lock(mu);
    runtime = nullptr;
    stopped = true;
  }
  changed.notify_all();  // a network thread that awaits the runtime (attached()) gets none
}

Runtime* NodeProcess::attached() {
  std::unique_lock lock(mu);
  changed.wait(lock, [&] { return runtime != nullptr || stopped; });
  return runtime;
}

}  // namespace dps::net
