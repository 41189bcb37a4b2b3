// MemoryTrace: every event kept in memory, copied out under a lock.
#include "dps/trace.hpp"

namespace dps {

void MemoryTrace::step(const StepEvent& e) {
  std::lock_guard lock(mu_);
  steps_.push_back({e.node, e.thread, std::string(e.collection), std::string(e.operation), e.call, e.start, e.end});
}
void MemoryTrace::transfer(const TransferEvent& e) {
  std::lock_guard lock(mu_);
  transfers_.push_back(e);
}
void MemoryTrace::lifecycle(const LifecycleEvent& e) {
  std::lock_guard lock(mu_);
  changes_.push_back({e.kind, e.thread, std::string(e.collection), e.node, e.to, e.time});
}
void MemoryTrace::phase(const PhaseEvent& e) {
  std::lock_guard lock(mu_);
  phases_.push_back({std::string(e.name), e.begin, e.time});
}

std::vector<MemoryTrace::Step> MemoryTrace::steps() const {
  std::lock_guard lock(mu_);
  return steps_;
}
std::vector<TransferEvent> MemoryTrace::transfers() const {
  std::lock_guard lock(mu_);
  return transfers_;
}
std::vector<MemoryTrace::Change> MemoryTrace::changes() const {
  std::lock_guard lock(mu_);
  return changes_;
}
std::vector<MemoryTrace::Phase> MemoryTrace::phases() const {
  std::lock_guard lock(mu_);
  return phases_;
}

}  // namespace dps
